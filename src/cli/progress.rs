//! The one-line progress display of `ellery check` over several
//! histories, on standard error (terminal output: the CLI's, not the
//! library's).

use std::io::{IsTerminal, Write};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

/// A one-line progress display on standard error, shown only when standard
/// error is a terminal.
pub struct Progress {
    total: usize,
    done: AtomicUsize,
    enabled: bool,
    started: Instant,
}

impl Progress {
    /// A progress display for `total` items; `quiet` turns it off.
    pub fn new(total: usize, quiet: bool) -> Progress {
        Progress {
            total,
            done: AtomicUsize::new(0),
            enabled: !quiet && total > 1 && std::io::stderr().is_terminal(),
            started: Instant::now(),
        }
    }

    /// Records one finished item.
    pub fn tick(&self, what: &Path) {
        let done = self.done.fetch_add(1, Ordering::Relaxed) + 1;
        if self.enabled {
            let mut e = std::io::stderr().lock();
            let name = what.display().to_string();
            let tail: String = name
                .chars()
                .rev()
                .take(60)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
            let _ = write!(
                e,
                "\r\x1b[2K[{done}/{}] {:.1} s {tail}",
                self.total,
                self.started.elapsed().as_secs_f64()
            );
            let _ = e.flush();
        }
    }

    /// Clears the progress line.
    pub fn finish(&self) {
        if self.enabled {
            let _ = write!(std::io::stderr().lock(), "\r\x1b[2K");
        }
    }
}
