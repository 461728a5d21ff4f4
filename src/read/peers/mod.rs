//! Readers for the history formats of other transactional checkers (Cobra,
//! dbcop, PolySI/Plume text), converted into the ordinary [`History`] of an
//! rw-register workload so every checker and report works unchanged.
//!
//! Each reader first decodes its format into sessions of [`PeerTxn`]s, then
//! [`build`] makes the history together with its equivalent Jepsen EDN text
//! (one op per line), which reports re-read to print ops.
//!
//! Conventions shared by all formats:
//! * Every transaction becomes an `:invoke`/completion pair with `:f :txn`;
//!   the completion is `:ok` (committed), `:fail` (aborted) or `:info`
//!   (never finished), and `:process` is the session.
//! * Reads of the initial state become `nil`. Cobra names the initial state
//!   with a sentinel; dbcop and the text format use value 0 (see
//!   [`zero_is_initial`]).
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

use super::{Builder, RawOp};
use crate::edn::Value;
use crate::error::{Error, InputError};
use crate::model::{
    Atom, Format, History, Interner, Mop, MopArg, MopFn, OpType, OpValue, SourceText, Span,
};
use std::path::Path;
use std::sync::Arc;

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
/// `history.bincode` is accepted too). EDN and JSON are not peer formats
/// (an error: [`crate::read::read_path`] reads every format).
pub fn read_peer(path: &Path, format: Format) -> Result<History, Error> {
    match format {
        Format::Edn | Format::Json => Err(Error::Usage(format!(
            "{}: {} is not a peer format",
            path.display(),
            format.name()
        ))),
        Format::Dbcop => {
            let bincode = path.join("history.bincode");
            if path.is_dir() && bincode.is_file() {
                read_dbcop(&bincode)
            } else {
                read_dbcop(path)
            }
        }
        Format::Cobra => read_cobra_dir(path),
        Format::Text => read_text(path),
    }
}

/// The peer format a path holds, if any: a directory holding `T<N>.log`
/// files is a Cobra history; a file named `history.bincode` (or a directory
/// holding one) is dbcop; a file whose first non-empty line starts with
/// `r(` or `w(` is the text format.
pub fn detect(path: &Path) -> Option<Format> {
    if path.is_dir() {
        if path.join("history.bincode").is_file() {
            return Some(Format::Dbcop);
        }
        return cobra::has_logs(path).then_some(Format::Cobra);
    }
    if path.file_name().and_then(|n| n.to_str()) == Some("history.bincode") {
        return Some(Format::Dbcop);
    }
    text::looks_like_text(path).then_some(Format::Text)
}

/// Turns reads of 0 into reads of the initial state (`nil`), as dbcop and
/// PolySI treat 0 as every key's initial value; except on keys some
/// transaction writes 0 to (an explicit initial transaction, say), where a
/// read of 0 may read that write and 0 stays an ordinary value.
pub fn zero_is_initial(sessions: &mut [PeerSession]) {
    let zero_written: hashbrown::HashSet<i64> = sessions
        .iter()
        .flat_map(|s| &s.txns)
        .flat_map(|t| &t.mops)
        .filter(|m| m.write && m.value == Some(0))
        .map(|m| m.key)
        .collect();
    for m in sessions
        .iter_mut()
        .flat_map(|s| &mut s.txns)
        .flat_map(|t| &mut t.mops)
    {
        if !m.write && m.value == Some(0) && !zero_written.contains(&m.key) {
            m.value = None;
        }
    }
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
        kind: Default::default(),
        file: file.to_string(),
        line: 0,
        column: 0,
        message: format!("at byte offset {offset}: {message}"),
    }
}

/// Converts sessions of peer transactions into a [`History`] named
/// `origin` (see the module comment for the conventions).
///
/// The history's source text is the equivalent Jepsen EDN, one op per line,
/// so reports print ops as for any EDN history; the model is built directly
/// alongside it, exactly as the EDN reader would build it from that text
/// (the tests check this), which halves the time of writing and re-parsing.
pub fn build(origin: &str, sessions: &[PeerSession]) -> Result<History, InputError> {
    let txns: usize = sessions.iter().map(|s| s.txns.len()).sum();
    let mops: usize = sessions
        .iter()
        .flat_map(|s| &s.txns)
        .map(|t| t.mops.len())
        .sum();
    let mut edn = Vec::with_capacity(txns * 2 * 64 + mops * 2 * 24);
    // (process, transaction, completion type or None for the invocation,
    // start and end of its text).
    let mut ops: Vec<(i64, &PeerTxn, Option<OpType>, usize, usize)> = Vec::with_capacity(2 * txns);
    let rounds = sessions.iter().map(|s| s.txns.len()).max().unwrap_or(0);
    for round in 0..rounds {
        for completion in [false, true] {
            for s in sessions {
                let Some(t) = s.txns.get(round) else { continue };
                let op_type = match (completion, t.outcome) {
                    (false, _) => None,
                    (true, TxnOutcome::Committed) => Some(OpType::Ok),
                    (true, TxnOutcome::Aborted) => Some(OpType::Fail),
                    (true, TxnOutcome::Unknown) => Some(OpType::Info),
                };
                let start = edn.len();
                edn.extend_from_slice(b"{:index ");
                push_int(&mut edn, ops.len() as i64);
                edn.extend_from_slice(b", :type :");
                edn.extend_from_slice(op_type.unwrap_or(OpType::Invoke).name().as_bytes());
                edn.extend_from_slice(b", :process ");
                push_int(&mut edn, s.process);
                edn.extend_from_slice(b", :f :txn, :value [");
                for (i, m) in t.mops.iter().enumerate() {
                    if i > 0 {
                        edn.push(b' ');
                    }
                    edn.extend_from_slice(if m.write { b"[:w " } else { b"[:r " });
                    push_int(&mut edn, m.key);
                    edn.push(b' ');
                    match seen_value(m, completion) {
                        Some(v) => push_int(&mut edn, v),
                        None => edn.extend_from_slice(b"nil"),
                    }
                    edn.push(b']');
                }
                edn.extend_from_slice(b"]}");
                ops.push((s.process, t, op_type, start, edn.len()));
                edn.push(b'\n');
            }
        }
    }
    let source = Arc::new(edn);
    let mut b = Builder::new(SourceText::Bytes(source.clone()), origin, Format::Edn);
    let txn_f = b.h.interner.atom(&Value::kw("txn"));
    b.h.ops.reserve(ops.len());
    b.h.pair.reserve(ops.len());
    b.h.mops.reserve(2 * mops);
    let too_big = |index: usize, what: &str| InputError {
        kind: Default::default(),
        file: origin.to_string(),
        line: 0,
        column: 0,
        message: format!("at op {index}: expected fewer than 2^32 {what}, found more"),
    };
    for (index, (process, t, op_type, start, end)) in ops.into_iter().enumerate() {
        let first = u32::try_from(b.h.mops.len()).map_err(|_| too_big(index, "micro-ops"))?;
        let completion = op_type.is_some();
        for m in &t.mops {
            let key = int_atom(&mut b.h.interner, m.key);
            let arg = match seen_value(m, completion) {
                Some(v) => MopArg::Atom(int_atom(&mut b.h.interner, v)),
                None => MopArg::Nil,
            };
            let f = if m.write { MopFn::Write } else { MopFn::Read };
            b.h.mops.push(Mop::new(f, key, arg));
        }
        let op = RawOp {
            index: Some(index as u64),
            time: -1,
            op_type: op_type.unwrap_or(OpType::Invoke),
            process: Some(process),
            f: txn_f,
            value: OpValue::Mops {
                start: first,
                len: u32::try_from(t.mops.len()).map_err(|_| too_big(index, "micro-ops"))?,
            },
            span: Span {
                start: start as u64,
                len: u32::try_from(end - start).map_err(|_| too_big(index, "bytes per op"))?,
                line: 0,
            },
        };
        b.push(&source, op)
            .map_err(|e| e.into_input_error(origin))?;
    }
    Ok(b.finish())
}

/// The value a micro-op shows: invocations do not know what their reads
/// will see.
fn seen_value(m: &PeerMop, completion: bool) -> Option<i64> {
    m.value.filter(|_| m.write || completion)
}

/// The atom of an integer, as the EDN reader makes it (inline when small,
/// interned otherwise).
fn int_atom(interner: &mut Interner, n: i64) -> Atom {
    Atom::int(n).unwrap_or_else(|| interner.atom(&Value::Int(n)))
}

/// Appends the decimal digits of `n` (what `write!` would, without its
/// formatting machinery, which dominated conversion time).
fn push_int(out: &mut Vec<u8>, n: i64) {
    if n < 0 {
        out.push(b'-');
    }
    let mut digits = [0u8; 20];
    let mut v = n.unsigned_abs();
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[i..]);
}

#[cfg(test)]
mod tests;
