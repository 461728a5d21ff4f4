//! Readers for the history formats of other transactional checkers (Cobra,
//! dbcop, PolySI/Plume text), converted into the ordinary [`History`] of an
//! rw-register workload so every checker and report works unchanged.
//!
//! Each reader first decodes its format into sessions of [`PeerTxn`]s, then
//! [`build`] writes the equivalent Jepsen EDN (one op per line) and reads it
//! with the EDN reader. Going through text keeps one definition of op
//! semantics and lets reports re-read and print ops as for any EDN history;
//! the cost is small next to checking (see the report in the commit log).
//!
//! Conventions shared by all formats:
//! * Every transaction becomes an `:invoke`/completion pair with `:f :txn`;
//!   the completion is `:ok` (committed), `:fail` (aborted) or `:info`
//!   (never finished), and `:process` is the session.
//! * Reads of the initial state become `nil` (dbcop and the text format
//!   write the initial state as value 0; Cobra names it with a sentinel).
//! * Peer formats record no real time. Sessions are emitted round-robin
//!   (every session's *n*-th transaction is invoked, then all of them
//!   complete), so the real-time order in the converted history is an
//!   artefact: check `serializable` or `snapshot-isolation`, not the
//!   `strict-` models.

mod cobra;
mod dbcop;
mod text;

pub use cobra::{parse_cobra_logs, read_cobra_dir};
pub use dbcop::{parse_dbcop, read_dbcop};
pub use text::{parse_text, read_text};

use crate::error::{Error, InputError};
use crate::model::{History, SourceFormat};
use std::io::Write;
use std::path::Path;

/// A peer checker's history format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PeerFormat {
    /// dbcop's legacy `history.bincode` (Rust bincode v1).
    Dbcop,
    /// Cobra's directory of per-client binary `T<N>.log` files.
    Cobra,
    /// The `r(key,value,session,txn)` / `w(...)` text format.
    Text,
}

impl PeerFormat {
    /// The name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            PeerFormat::Dbcop => "dbcop",
            PeerFormat::Cobra => "cobra",
            PeerFormat::Text => "text",
        }
    }
}

/// How a transaction ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TxnOutcome {
    /// Committed: an `:ok` completion.
    Committed,
    /// Aborted: a `:fail` completion.
    Aborted,
    /// Never finished (a log ending inside it): an `:info` completion.
    Unknown,
}

/// One read or write of a peer transaction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PeerMop {
    /// A write (`[:w k v]`) rather than a read (`[:r k v]`).
    pub write: bool,
    /// The key.
    pub key: i64,
    /// The value; `None` (nil) for a read of the initial state.
    pub value: Option<i64>,
}

/// One transaction of a peer history.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PeerTxn {
    /// How it ended.
    pub outcome: TxnOutcome,
    /// Its reads and writes, in order.
    pub mops: Vec<PeerMop>,
}

/// A session (client): its `:process` number and transactions in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PeerSession {
    /// The `:process` its transactions get.
    pub process: i64,
    /// Its transactions, in session order.
    pub txns: Vec<PeerTxn>,
}

/// Reads a history in a peer format: a file for dbcop and text, a directory
/// of `T<N>.log` files for Cobra (a dbcop `hist-NNNNN` directory holding
/// `history.bincode` is accepted too).
pub fn read_peer(path: &Path, format: PeerFormat) -> Result<History, Error> {
    match format {
        PeerFormat::Dbcop => {
            let bincode = path.join("history.bincode");
            if path.is_dir() && bincode.is_file() {
                read_dbcop(&bincode)
            } else {
                read_dbcop(path)
            }
        }
        PeerFormat::Cobra => read_cobra_dir(path),
        PeerFormat::Text => read_text(path),
    }
}

/// The peer format a path holds, if any: a directory holding `T<N>.log`
/// files is a Cobra history; a file named `history.bincode` (or a directory
/// holding one) is dbcop; a file whose first non-empty line starts with
/// `r(` or `w(` is the text format.
pub fn detect(path: &Path) -> Option<PeerFormat> {
    if path.is_dir() {
        if path.join("history.bincode").is_file() {
            return Some(PeerFormat::Dbcop);
        }
        return cobra::has_logs(path).then_some(PeerFormat::Cobra);
    }
    if path.file_name().and_then(|n| n.to_str()) == Some("history.bincode") {
        return Some(PeerFormat::Dbcop);
    }
    text::looks_like_text(path).then_some(PeerFormat::Text)
}

/// Reads a whole file, naming it in the error.
fn read_bytes(path: &Path) -> Result<Vec<u8>, Error> {
    std::fs::read(path).map_err(|source| Error::Io {
        path: path.display().to_string(),
        source,
    })
}

/// An error in a binary input, at a byte offset (line 0: no lines).
fn binary_error(file: &str, offset: usize, message: String) -> InputError {
    InputError {
        file: file.to_string(),
        line: 0,
        column: 0,
        message: format!("at byte offset {offset}: {message}"),
    }
}

/// Converts sessions of peer transactions into a [`History`] named
/// `origin`, by writing the equivalent Jepsen EDN (see the module comment
/// for the conventions) and reading it back.
pub fn build(origin: &str, sessions: &[PeerSession]) -> Result<History, InputError> {
    let txns: usize = sessions.iter().map(|s| s.txns.len()).sum();
    let mops: usize = sessions
        .iter()
        .flat_map(|s| &s.txns)
        .map(|t| t.mops.len())
        .sum();
    let mut edn = Vec::with_capacity(txns * 2 * 64 + mops * 2 * 24);
    let rounds = sessions.iter().map(|s| s.txns.len()).max().unwrap_or(0);
    let mut index = 0u64;
    for round in 0..rounds {
        for completion in [false, true] {
            for s in sessions {
                let Some(t) = s.txns.get(round) else { continue };
                let op_type = match (completion, t.outcome) {
                    (false, _) => "invoke",
                    (true, TxnOutcome::Committed) => "ok",
                    (true, TxnOutcome::Aborted) => "fail",
                    (true, TxnOutcome::Unknown) => "info",
                };
                // Writing into a Vec cannot fail.
                let _ = write!(
                    edn,
                    "{{:index {index}, :type :{op_type}, :process {}, :f :txn, :value [",
                    s.process
                );
                for (i, m) in t.mops.iter().enumerate() {
                    let sep = if i == 0 { "" } else { " " };
                    let f = if m.write { "w" } else { "r" };
                    // Invocations do not know what their reads will see.
                    let _ = match m.value {
                        Some(v) if m.write || completion => {
                            write!(edn, "{sep}[:{f} {} {v}]", m.key)
                        }
                        _ => write!(edn, "{sep}[:{f} {} nil]", m.key),
                    };
                }
                edn.extend_from_slice(b"]}\n");
                index += 1;
            }
        }
    }
    crate::read::read_history_bytes(edn, origin, SourceFormat::Edn)
}

#[cfg(test)]
mod tests;
