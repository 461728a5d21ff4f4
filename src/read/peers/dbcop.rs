//! dbcop's legacy `history.bincode`: Rust bincode v1 (little-endian, fixed
//! 8-byte integers and lengths, 1-byte booleans) of
//!
//! ```text
//! header: id, sessions, keys, transactions per session, events per transaction  (u64 each)
//! info, start, end: strings (u64 length + UTF-8)
//! sessions: u64 count, each a u64 count of transactions,
//!   each a u64 count of events {write: bool, key: u64, value: u64, success: bool}
//!   followed by the transaction's success: bool
//! ```
//!
//! Semantics (as dbcop and PolySI's loader use them): value 0 is the initial
//! state every key starts with, so reads of 0 become `nil` (unless 0 is
//! also written: [`super::zero_is_initial`]); an event with
//! `success = false` did not take effect and is dropped; a transaction with
//! `success = false` aborted and becomes a `:fail`. Sessions get `:process`
//! 1, 2, … (dbcop numbers them from 1; 0 is its initial-state session).

use super::{
    binary_error, build, read_bytes, zero_is_initial, PeerMop, PeerSession, PeerTxn, TxnOutcome,
};
use crate::error::{Error, InputError};
use crate::model::History;
use std::path::Path;

/// Reads a dbcop `history.bincode` file.
pub fn read_dbcop(path: &Path) -> Result<History, Error> {
    let bytes = read_bytes(path)?;
    Ok(parse_dbcop(&bytes, &path.display().to_string())?)
}

/// Parses the bytes of a dbcop `history.bincode`; `origin` names it in
/// errors.
pub fn parse_dbcop(bytes: &[u8], origin: &str) -> Result<History, InputError> {
    let mut r = Reader {
        bytes,
        at: 0,
        origin,
    };
    for field in [
        "the history id",
        "the session count",
        "the key count",
        "the transactions-per-session count",
        "the events-per-transaction count",
    ] {
        r.u64(field)?;
    }
    for field in ["the info string", "the start time", "the end time"] {
        r.string(field)?;
    }
    let n_sessions = r.count("the number of sessions", 8)?;
    let mut sessions = Vec::with_capacity(n_sessions);
    for s in 0..n_sessions {
        let n_txns = r.count("a session's number of transactions", 9)?;
        let mut txns = Vec::with_capacity(n_txns);
        for _ in 0..n_txns {
            // An event is 18 bytes.
            let n_events = r.count("a transaction's number of events", 18)?;
            let mut mops = Vec::with_capacity(n_events);
            for _ in 0..n_events {
                let write = r.bool("an event's is-write flag")?;
                let key = r.i64("an event's key")?;
                let value = r.i64("an event's value")?;
                if r.bool("an event's success flag")? {
                    mops.push(PeerMop {
                        write,
                        key,
                        value: Some(value),
                    });
                }
            }
            let outcome = if r.bool("a transaction's success flag")? {
                TxnOutcome::Committed
            } else {
                TxnOutcome::Aborted
            };
            txns.push(PeerTxn { outcome, mops });
        }
        sessions.push(PeerSession {
            process: s as i64 + 1,
            txns,
        });
    }
    if r.at != bytes.len() {
        return Err(r.error(format!(
            "expected the end of the history, found {} more bytes",
            bytes.len() - r.at
        )));
    }
    zero_is_initial(&mut sessions);
    build(origin, &sessions)
}

/// A cursor over bincode bytes that names what it expected when the input
/// runs out or is malformed.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
    origin: &'a str,
}

impl Reader<'_> {
    fn error(&self, message: String) -> InputError {
        binary_error(self.origin, self.at, message)
    }

    fn take(&mut self, n: usize, what: &str) -> Result<&[u8], InputError> {
        let left = self.bytes.len() - self.at;
        if left < n {
            return Err(self.error(format!(
                "expected {what} ({n} bytes), found {}",
                if left == 0 {
                    "the end of the file".to_string()
                } else {
                    format!("only {left} bytes before the end of the file")
                }
            )));
        }
        let s = &self.bytes[self.at..self.at + n];
        self.at += n;
        Ok(s)
    }

    fn u64(&mut self, what: &str) -> Result<u64, InputError> {
        let b = self.take(8, what)?;
        Ok(u64::from_le_bytes(b.try_into().expect("8 bytes")))
    }

    /// A key or value: dbcop's `usize`, which must fit an `i64`.
    fn i64(&mut self, what: &str) -> Result<i64, InputError> {
        let start = self.at;
        let v = self.u64(what)?;
        i64::try_from(v).map_err(|_| {
            binary_error(
                self.origin,
                start,
                format!("expected {what} below 2^63, found {v}"),
            )
        })
    }

    /// A length prefix, checked against the bytes left (each item takes at
    /// least `min_item_bytes`) so garbage cannot make us allocate wildly.
    fn count(&mut self, what: &str, min_item_bytes: usize) -> Result<usize, InputError> {
        let start = self.at;
        let n = self.u64(what)?;
        let left = (self.bytes.len() - self.at) as u64;
        if n > left / min_item_bytes as u64 {
            return Err(binary_error(
                self.origin,
                start,
                format!(
                    "expected {what}, found {n}, more than the {left} bytes left in the file can hold"
                ),
            ));
        }
        Ok(n as usize)
    }

    fn bool(&mut self, what: &str) -> Result<bool, InputError> {
        let b = self.take(1, what)?[0];
        match b {
            0 => Ok(false),
            1 => Ok(true),
            _ => {
                self.at -= 1;
                Err(self.error(format!("expected {what} (a byte 0 or 1), found {b}")))
            }
        }
    }

    fn string(&mut self, what: &str) -> Result<(), InputError> {
        let n = self.count(&format!("the length of {what}"), 1)?;
        let start = self.at;
        let s = self.take(n, what)?;
        if std::str::from_utf8(s).is_err() {
            return Err(binary_error(
                self.origin,
                start,
                format!("expected {what} in UTF-8, found invalid bytes"),
            ));
        }
        Ok(())
    }
}
