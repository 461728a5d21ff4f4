//! Plots of strongly connected components and cycles, as Elle draws them:
//! one record node per transaction listing its micro-ops, one edge per
//! dependency, labelled and coloured by relationship. DOT is always
//! available; SVG and PNG come from graphviz's `dot` when it is installed.

use crate::edn::pr_str;
use crate::infer::{Step, StepKind};
use crate::model::{History, MopFn, OpType};
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

fn type_color(t: OpType) -> &'static str {
    match t {
        OpType::Ok => "#0058AD",
        OpType::Info => "#AC6E00",
        _ => "#A50053",
    }
}

fn step_label(kind: StepKind) -> (&'static str, &'static str) {
    match kind {
        StepKind::Ww => ("ww", "#C02700"),
        StepKind::Wr => ("wr", "#C000A5"),
        StepKind::Rw => ("rw", "#5B00C0"),
        StepKind::Realtime => ("rt", "#0050C0"),
        StepKind::Process => ("p", "#00C0C0"),
    }
}

/// Escapes the characters DOT record labels treat specially.
fn escape_record(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(c, '\\' | '|' | '{' | '}' | '"') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// A micro-op as Elle labels it: `a x 1`, `r y [1 2]`.
fn mop_label(h: &History, m: &crate::model::Mop) -> String {
    let crate::edn::Value::Vector(parts) = h.mop_value(m) else {
        return String::new();
    };
    let f = match m.f {
        MopFn::Append => "a".to_string(),
        MopFn::Read => "r".to_string(),
        MopFn::Write => "w".to_string(),
        MopFn::PredRead => "rp".to_string(),
        MopFn::PredWrite => "wp".to_string(),
        MopFn::Other(a) => match h.atom_value(a) {
            crate::edn::Value::Keyword(k) => k.rsplit('/').next().unwrap_or(&k).to_string(),
            other => pr_str(&other),
        },
    };
    format!("{f} {} {}", pr_str(&parts[1]), pr_str(&parts[2]))
}

fn mop_port(step: &Step, key: &str) -> Option<i64> {
    match step.data.get_kw(key) {
        Some(crate::edn::Value::Int(i)) => Some(*i),
        _ => None,
    }
}

/// The DOT source for the transactions `ops` (op positions), with every
/// dependency between them: `out(v)` lists v's successors, and
/// `explain(a, b)` says why `b` depends on `a`. `None` once the source
/// would exceed `max_bytes` (such plots are skipped, as Elle does).
pub fn dot_source(
    h: &History,
    ops: &[u32],
    out: &dyn Fn(u32) -> Vec<u32>,
    explain: &dyn Fn(u32, u32) -> Option<Step>,
    max_bytes: usize,
) -> Option<String> {
    let mut size = 0usize;
    let mut ops = ops.to_vec();
    ops.sort_unstable_by_key(|&o| h.ops[o as usize].index);
    ops.dedup();
    let name = |o: u32| format!("T{}", h.ops[o as usize].index);
    let mut lines = Vec::new();
    for &o in &ops {
        let op = &h.ops[o as usize];
        let label: Vec<String> = h
            .mops(op)
            .iter()
            .enumerate()
            .map(|(i, m)| format!("<f{i}> {}", escape_record(&mop_label(h, m))))
            .collect();
        let color = type_color(op.op_type);
        lines.push(format!(
            "{} [height=0.4,shape=record,label=\"{}\",color=\"{color}\",fontcolor=\"{color}\"]",
            name(o),
            label.join("|")
        ));
        size += lines.last().map_or(0, |l| l.len() + 1);
        if size > max_bytes {
            return None;
        }
    }
    for &a in &ops {
        let mut succ = out(a);
        succ.sort_unstable_by_key(|&b| h.ops[b as usize].index);
        for b in succ {
            if ops
                .binary_search_by_key(&h.ops[b as usize].index, |&o| h.ops[o as usize].index)
                .is_err()
            {
                continue;
            }
            let Some(step) = explain(a, b) else {
                continue;
            };
            let port = |n: String, i: Option<i64>| match i {
                Some(i) => format!("{n}:f{i}"),
                None => n,
            };
            let (label, color) = step_label(step.kind);
            lines.push(format!(
                "{} -> {} [label=\"{label}\",fontcolor=\"{color}\",color=\"{color}\"]",
                port(name(a), mop_port(&step, "a-mop-index")),
                port(name(b), mop_port(&step, "b-mop-index")),
            ));
            size += lines.last().map_or(0, |l| l.len() + 1);
            if size > max_bytes {
                return None;
            }
        }
    }
    Some(format!("digraph a_graph {{\n{}\n}}", lines.join("\n")))
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
    fn record_labels_escape_dot_specials() {
        assert_eq!(
            escape_record(r#"r x [1] {a|"b"}"#),
            r#"r x [1] \{a\|\"b\"\}"#
        );
    }

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
