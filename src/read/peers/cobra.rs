//! Cobra's client logs: a directory of per-client `T<N>.log` files (the
//! `.debug` and `.error` files beside them are ignored). Each log is a
//! stream of records, an opcode byte followed by big-endian `i64`s:
//!
//! ```text
//! 'S' txn                        start
//! 'C' txn                        commit
//! 'W' write-id key value         write
//! 'R' writer-txn write-id key value   read, naming the write it saw
//! ```
//!
//! Cobra's write ids are unique, so the write id is the value a write
//! writes and a read reads (`value` is only a hash). A read whose writer
//! transaction and write id are the initial-state sentinel `0xbebeebee` or
//! the null sentinel `0xdeadbeef` read the initial state: `nil`. Cobra logs
//! only committed transactions; one still open when its log ends (or when
//! the next starts) becomes an `:info`. Each log is a session; its
//! `:process` is `N`.

use super::{binary_error, build, read_bytes, PeerMop, PeerSession, PeerTxn, TxnOutcome};
use crate::error::{Error, InputError};
use crate::model::History;
use std::path::{Path, PathBuf};

/// Cobra's writer-transaction and write id of the initial state.
pub const INIT_ID: i64 = 0xbebe_ebee;
/// Cobra's writer id of a read that found no value.
pub const NULL_ID: i64 = 0xdead_beef;
/// Write ids Cobra's garbage-collection reads use (continuous mode only).
const GC_IDS: [i64; 2] = [0x2333_2333, 0x6666_6666];

/// The `T<N>.log` files of a directory, ordered by `N`.
fn logs(dir: &Path) -> std::io::Result<Vec<(i64, PathBuf)>> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir)? {
        let path = e?.path();
        let n = path.file_name().and_then(|n| n.to_str()).and_then(|n| {
            n.strip_prefix('T')?
                .strip_suffix(".log")?
                .parse::<i64>()
                .ok()
        });
        if let Some(n) = n {
            if path.is_file() {
                out.push((n, path));
            }
        }
    }
    out.sort();
    Ok(out)
}

/// Whether a directory holds Cobra `T<N>.log` files.
pub(super) fn has_logs(dir: &Path) -> bool {
    logs(dir).is_ok_and(|l| !l.is_empty())
}

/// Reads a Cobra history: a directory of `T<N>.log` files.
pub fn read_cobra_dir(dir: &Path) -> Result<History, Error> {
    let io = |source| Error::Io {
        path: dir.display().to_string(),
        source,
    };
    let not_logs = |found: &str| {
        Error::Input(InputError {
            kind: Default::default(),
            file: dir.display().to_string(),
            line: 0,
            column: 0,
            message: format!("expected a directory of Cobra T<N>.log files, found {found}"),
        })
    };
    if dir.is_file() {
        return Err(not_logs("a file"));
    }
    let logs = logs(dir).map_err(io)?;
    if logs.is_empty() {
        return Err(not_logs("none"));
    }
    let mut files = Vec::with_capacity(logs.len());
    for (n, path) in logs {
        files.push((n, path.display().to_string(), read_bytes(&path)?));
    }
    let borrowed: Vec<(i64, &str, &[u8])> = files
        .iter()
        .map(|(n, name, b)| (*n, name.as_str(), b.as_slice()))
        .collect();
    Ok(parse_cobra_logs(&dir.display().to_string(), &borrowed)?)
}

/// Parses Cobra logs given as `(process, file name, bytes)`, one per
/// session; `origin` names the history.
pub fn parse_cobra_logs(origin: &str, logs: &[(i64, &str, &[u8])]) -> Result<History, InputError> {
    let mut sessions = Vec::with_capacity(logs.len());
    for &(process, name, bytes) in logs {
        sessions.push(PeerSession {
            process,
            txns: parse_log(name, bytes)?,
        });
    }
    build(origin, &sessions)
}

/// The transactions of one client log.
fn parse_log(name: &str, bytes: &[u8]) -> Result<Vec<PeerTxn>, InputError> {
    let mut txns = Vec::new();
    // The open transaction: its id and micro-ops.
    let mut open: Option<(i64, Vec<PeerMop>)> = None;
    let mut at = 0;
    while at < bytes.len() {
        let record = at;
        let opcode = bytes[at];
        let fields = match opcode {
            b'S' | b'C' => 1,
            b'W' => 3,
            b'R' => 4,
            _ => {
                return Err(binary_error(
                    name,
                    record,
                    format!("expected a record opcode S, C, W or R, found byte {opcode:#04x}"),
                ))
            }
        };
        let what = match opcode {
            b'S' => "a start record (S txn)",
            b'C' => "a commit record (C txn)",
            b'W' => "a write record (W write-id key value)",
            _ => "a read record (R writer-txn write-id key value)",
        };
        let len = 1 + 8 * fields;
        if bytes.len() - at < len {
            return Err(binary_error(
                name,
                record,
                format!(
                    "expected {what} of {len} bytes, found only {} before the end of the file",
                    bytes.len() - at
                ),
            ));
        }
        let field = |i: usize| {
            let s = at + 1 + 8 * i;
            i64::from_be_bytes(bytes[s..s + 8].try_into().expect("8 bytes"))
        };
        match opcode {
            b'S' => {
                if let Some((_, mops)) = open.take() {
                    txns.push(PeerTxn {
                        outcome: TxnOutcome::Unknown,
                        mops,
                    });
                }
                open = Some((field(0), Vec::new()));
            }
            b'C' => match open.take() {
                Some((id, mops)) if id == field(0) => txns.push(PeerTxn {
                    outcome: TxnOutcome::Committed,
                    mops,
                }),
                Some((id, _)) => {
                    return Err(binary_error(
                        name,
                        record,
                        format!(
                        "expected the commit of the open transaction {id}, found a commit of {}",
                        field(0)
                    ),
                    ))
                }
                None => {
                    return Err(binary_error(
                        name,
                        record,
                        format!(
                            "expected a start record before committing transaction {}, found none",
                            field(0)
                        ),
                    ))
                }
            },
            _ => {
                let Some((_, mops)) = open.as_mut() else {
                    return Err(binary_error(
                        name,
                        record,
                        format!("expected a start record before {what}, found none"),
                    ));
                };
                mops.push(data_mop(opcode == b'W', field, name, record)?);
            }
        }
        at += len;
    }
    if let Some((_, mops)) = open {
        txns.push(PeerTxn {
            outcome: TxnOutcome::Unknown,
            mops,
        });
    }
    Ok(txns)
}

/// The micro-op of a write (`W write-id key value`) or read (`R
/// writer-txn write-id key value`) record whose fields `field` gives; a
/// read's value is the write id it saw (`nil` for the initial-state
/// sentinels), and a garbage-collection read is refused.
fn data_mop(
    write: bool,
    field: impl Fn(usize) -> i64,
    name: &str,
    record: usize,
) -> Result<PeerMop, InputError> {
    Ok(if write {
        PeerMop {
            write: true,
            key: field(1),
            value: Some(field(0)),
        }
    } else {
        let (writer, write_id) = (field(0), field(1));
        let sentinel = |id| id == INIT_ID || id == NULL_ID;
        let value = if sentinel(writer) && sentinel(write_id) {
            None
        } else if writer == INIT_ID && GC_IDS.contains(&write_id) {
            return Err(binary_error(
                name,
                record,
                "expected a read of a write, found a garbage-collection read \
                 (Cobra's continuous mode, which is not supported)"
                    .into(),
            ));
        } else {
            Some(write_id)
        };
        PeerMop {
            write: false,
            key: field(2),
            value,
        }
    })
}
