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
    /// Whole lines already read into ops ([`parse_ahead`]).
    Piece(Box<Piece>),
}

/// A fragment of whole lines, read into ops: what [`super::Watcher::ingest`]
/// does first, done on another thread by [`parse_ahead`].
#[derive(Debug)]
pub struct Piece {
    /// Its newlines.
    pub lines: u64,
    /// Its ops and whether they carry `:index` (as
    /// [`crate::read::read_fragment`] returns them), or why not.
    pub read: Result<(crate::model::History, Option<bool>), crate::error::InputError>,
}

impl Piece {
    /// Reads `fragment` (whole lines) from `origin` in `format`.
    pub fn read(fragment: Vec<u8>, origin: &str, format: crate::model::Format) -> Piece {
        Piece {
            lines: memchr::memchr_iter(b'\n', &fragment).count() as u64,
            read: crate::read::read_fragment(fragment, origin, format),
        }
    }
}

/// Cuts the fragments from `rx` where `ellery watch` cuts them, a round's
/// worth of ops at a time (`round` ops a round, counted from the start),
/// and reads each into ops on a thread of its own, handing the pieces on in
/// order: the watcher's intake then only adds ops, while the next pieces
/// are read beside it (on the fenced 1M stream reading was a quarter of
/// the intake, which runs alone).
///
/// The cuts are the ones the watcher makes itself when it reads what it
/// is given (each piece ends at the line that fills the round), so every
/// piece, and every error in one, is what that reading would have met;
/// that holds only when rounds end by op count, not on a timer. After a
/// piece that does not read, nothing more is sent.
pub fn parse_ahead(
    rx: Receiver<Event>,
    round: u64,
    origin: String,
    format: crate::model::Format,
) -> Receiver<Event> {
    let round = round.max(1);
    let (tx, out) = sync_channel(2);
    std::thread::spawn(move || {
        let mut new_ops = 0u64;
        for ev in rx {
            let Event::Data(mut data) = ev else {
                if tx.send(ev).is_err() {
                    return;
                }
                continue;
            };
            while !data.is_empty() {
                let room = (round - new_ops) as usize;
                let rest = match memchr::memchr_iter(b'\n', &data).nth(room - 1) {
                    Some(cut) if cut + 1 < data.len() => data.split_off(cut + 1),
                    _ => Vec::new(),
                };
                let piece = Piece::read(std::mem::replace(&mut data, rest), &origin, format);
                let failed = match &piece.read {
                    Ok((h, _)) => {
                        new_ops += h.ops.len() as u64;
                        if new_ops >= round {
                            new_ops = 0;
                        }
                        false
                    }
                    Err(_) => true,
                };
                if tx.send(Event::Piece(Box::new(piece))).is_err() || failed {
                    return;
                }
            }
        }
    });
    out
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
