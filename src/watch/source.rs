//! The op stream: a thread reads standard input or a file (with `follow`,
//! a file still being appended to, as `tail -f` does) and hands over
//! fragments of whole lines, so that the checker never waits on a read and
//! a round can run on a timer.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::sync::mpsc::{sync_channel, Receiver};
use std::time::{Duration, Instant};

/// Where ops come from.
#[derive(Clone, Debug)]
pub enum Input {
    /// Standard input.
    Stdin,
    /// A file.
    File(PathBuf),
    /// Bytes already in memory (tests; peer formats converted to EDN).
    Bytes(Vec<u8>),
}

/// How to read.
#[derive(Debug, Default)]
pub struct SourceOptions {
    /// At end of file, wait for more (a growing file).
    pub follow: bool,
    /// With `follow`: end after this long without new bytes (`None`: never).
    pub idle_exit: Option<Duration>,
    /// Copy every byte read here (standard input, for the final re-check).
    pub spool: Option<std::fs::File>,
}

/// What the reader thread sends.
#[derive(Debug)]
pub enum Event {
    /// Whole lines (the last one ends in a newline).
    Data(Vec<u8>),
    /// End of input.
    End,
    /// A read error.
    Error(std::io::Error),
}

/// Bytes read at a time.
const BLOCK: usize = 1 << 20;

/// Starts the reader thread.
pub fn spawn(input: Input, mut opts: SourceOptions) -> std::io::Result<Receiver<Event>> {
    let mut reader: Box<dyn Read + Send> = match input {
        Input::Stdin => Box::new(std::io::stdin()),
        Input::File(p) => Box::new(std::fs::File::open(p)?),
        Input::Bytes(b) => Box::new(std::io::Cursor::new(b)),
    };
    // A few fragments in flight bound the memory when the checker is slower
    // than the input.
    let (tx, rx) = sync_channel(4);
    std::thread::spawn(move || {
        let mut carry: Vec<u8> = Vec::new();
        let mut buf = vec![0u8; BLOCK];
        let mut last_data = Instant::now();
        loop {
            let n = match reader.read(&mut buf) {
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    let _ = tx.send(Event::Error(e));
                    return;
                }
            };
            if n == 0 {
                if opts.follow && opts.idle_exit.is_none_or(|d| last_data.elapsed() < d) {
                    std::thread::sleep(Duration::from_millis(50));
                    continue;
                }
                if !carry.is_empty() {
                    carry.push(b'\n');
                    if tx.send(Event::Data(std::mem::take(&mut carry))).is_err() {
                        return;
                    }
                }
                let _ = tx.send(Event::End);
                return;
            }
            last_data = Instant::now();
            if let Some(s) = opts.spool.as_mut() {
                if let Err(e) = s.write_all(&buf[..n]) {
                    let _ = tx.send(Event::Error(e));
                    return;
                }
            }
            carry.extend_from_slice(&buf[..n]);
            if let Some(nl) = memchr::memrchr(b'\n', &carry) {
                let rest = carry.split_off(nl + 1);
                let whole = std::mem::replace(&mut carry, rest);
                if tx.send(Event::Data(whole)).is_err() {
                    return;
                }
            }
        }
    });
    Ok(rx)
}
