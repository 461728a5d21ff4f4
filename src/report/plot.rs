//! Plots of strongly connected components and cycles, as Elle draws them.
//! Their DOT sources are part of a check's outcome ([`crate::check::dot`]);
//! this module renders them: DOT is always available; SVG and PNG come from
//! graphviz's `dot` when it is installed.

pub use crate::check::dot::dot_source;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The file format of plots.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum PlotFormat {
    /// SVG through graphviz (Elle's default).
    #[default]
    Svg,
    /// PNG through graphviz.
    Png,
    /// The DOT source only.
    Dot,
}

/// How plots are rendered (Elle's `:plot-format`, `:plot-timeout`,
/// `:max-plot-bytes`).
#[derive(Clone, Copy, Debug)]
pub struct PlotOptions {
    /// Output format.
    pub format: PlotFormat,
    /// Time allowed to render one plot.
    pub timeout: Duration,
    /// Plots whose DOT source is larger are skipped.
    pub max_bytes: usize,
}

impl Default for PlotOptions {
    fn default() -> Self {
        PlotOptions {
            format: PlotFormat::Svg,
            timeout: Duration::from_millis(5000),
            max_bytes: 65536,
        }
    }
}

/// What happened to one plot.
#[derive(Debug, PartialEq, Eq)]
pub enum Rendered {
    /// Written to this file.
    Written(PathBuf),
    /// Skipped: its DOT source exceeds `max_bytes`.
    TooLarge,
    /// graphviz is not installed; the DOT source was written instead.
    NoGraphviz(PathBuf),
    /// graphviz failed or ran out of time; the DOT source was written.
    Failed(PathBuf, String),
}

/// Writes `dot` as `<stem>.svg`, `<stem>.png` or `<stem>.dot`.
pub fn render(dot: &str, stem: &Path, opts: &PlotOptions) -> std::io::Result<Rendered> {
    if dot.len() > opts.max_bytes {
        return Ok(Rendered::TooLarge);
    }
    if let Some(dir) = stem.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let dot_path = stem.with_extension("dot");
    let ext = match opts.format {
        PlotFormat::Dot => {
            std::fs::write(&dot_path, dot)?;
            return Ok(Rendered::Written(dot_path));
        }
        PlotFormat::Svg => "svg",
        PlotFormat::Png => "png",
    };
    let target = stem.with_extension(ext);
    let child = Command::new("dot")
        .arg(format!("-T{ext}"))
        .arg("-o")
        .arg(&target)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(_) => {
            std::fs::write(&dot_path, dot)?;
            return Ok(Rendered::NoGraphviz(dot_path));
        }
    };
    if let Some(mut stdin) = child.stdin.take() {
        // A graphviz that dies early closes its input; that shows up below.
        let _ = stdin.write_all(dot.as_bytes());
    }
    let deadline = Instant::now() + opts.timeout;
    loop {
        if let Some(status) = child.try_wait()? {
            if status.success() {
                return Ok(Rendered::Written(target));
            }
            std::fs::write(&dot_path, dot)?;
            return Ok(Rendered::Failed(
                dot_path,
                format!("dot exited with {status}"),
            ));
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            let _ = std::fs::remove_file(&target);
            std::fs::write(&dot_path, dot)?;
            return Ok(Rendered::Failed(
                dot_path,
                format!("rendering took longer than {} ms", opts.timeout.as_millis()),
            ));
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn oversized_plots_are_skipped() {
        let opts = PlotOptions {
            max_bytes: 3,
            ..PlotOptions::default()
        };
        let stem = std::env::temp_dir().join("ellery-plot-test-too-large");
        assert_eq!(
            render("digraph {}", &stem, &opts).expect("io"),
            Rendered::TooLarge
        );
    }
}
