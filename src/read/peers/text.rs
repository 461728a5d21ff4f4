//! The text format of PolySI, Plume and IsoVista: one operation per line,
//! `r(key,value,session,txn)` or `w(key,value,session,txn)`, integers.
//!
//! Transaction ids are global; a transaction belongs to the session of its
//! first line, and a session's transactions are in order of first
//! appearance. Every listed transaction committed. As in PolySI's loader,
//! every key starts at value 0, so reads of 0 become `nil` (unless 0 is
//! also written: [`super::zero_is_initial`]). Blank lines are
//! skipped; spaces around tokens and a trailing `\r` are allowed.

use super::{build, read_bytes, zero_is_initial, PeerMop, PeerSession, PeerTxn, TxnOutcome};
use crate::error::{Error, InputError};
use crate::model::History;
use hashbrown::HashMap;
use std::path::Path;

/// Reads a text-format history file.
pub fn read_text(path: &Path) -> Result<History, Error> {
    let bytes = read_bytes(path)?;
    Ok(parse_text(&bytes, &path.display().to_string())?)
}

/// Whether a file's first non-empty line starts with `r(` or `w(`.
pub(super) fn looks_like_text(path: &Path) -> bool {
    use std::io::Read;
    // Only regular files: a pipe (`<(…)`) would lose what is sniffed.
    if !std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
        return false;
    }
    let mut head = [0u8; 512];
    let Ok(n) = std::fs::File::open(path).and_then(|mut f| f.read(&mut head)) else {
        return false;
    };
    let line = head[..n]
        .split(|&b| b == b'\n')
        .map(|l| l.trim_ascii())
        .find(|l| !l.is_empty());
    line.is_some_and(|l| l.starts_with(b"r(") || l.starts_with(b"w("))
}

/// Parses a text-format history; `origin` names it in errors.
pub fn parse_text(bytes: &[u8], origin: &str) -> Result<History, InputError> {
    let mut sessions: Vec<PeerSession> = Vec::new();
    let mut session_pos: HashMap<i64, usize> = HashMap::new();
    // Transaction id → (its session's position, its position there).
    let mut txn_pos: HashMap<i64, (usize, usize)> = HashMap::new();
    for (line_no, line) in bytes.split(|&b| b == b'\n').enumerate() {
        let mut p = LineParser {
            line,
            at: 0,
            origin,
            line_no: line_no as u32 + 1,
        };
        p.skip_space();
        if p.at == line.len() {
            continue;
        }
        let write = match line[p.at] {
            b'r' => false,
            b'w' => true,
            _ => return Err(p.error("expected r( or w(")),
        };
        p.at += 1;
        p.expect(b'(')?;
        let key = p.int("a key")?;
        p.expect(b',')?;
        let value = p.int("a value")?;
        p.expect(b',')?;
        let session = p.int("a session id")?;
        p.expect(b',')?;
        let txn_at = p.at;
        let txn = p.int("a transaction id")?;
        p.expect(b')')?;
        p.skip_space();
        if p.at != line.len() {
            return Err(p.error("expected the end of the line"));
        }
        let s = *session_pos.entry(session).or_insert_with(|| {
            sessions.push(PeerSession {
                process: session,
                txns: Vec::new(),
            });
            sessions.len() - 1
        });
        let (ts, tp) = *txn_pos.entry(txn).or_insert_with(|| {
            sessions[s].txns.push(PeerTxn {
                outcome: TxnOutcome::Committed,
                mops: Vec::new(),
            });
            (s, sessions[s].txns.len() - 1)
        });
        if ts != s {
            p.at = txn_at;
            return Err(p.error_here(format!(
                "expected transaction {txn} in session {} (where it began), found it in session {session}",
                sessions[ts].process
            )));
        }
        sessions[s].txns[tp].mops.push(PeerMop {
            write,
            key,
            value: Some(value),
        });
    }
    zero_is_initial(&mut sessions);
    build(origin, &sessions)
}

/// Parses one line, reporting errors at its line and column.
struct LineParser<'a> {
    line: &'a [u8],
    at: usize,
    origin: &'a str,
    line_no: u32,
}

impl LineParser<'_> {
    /// "expected …, found <the rest of the line>" at the current column.
    fn error(&self, expected: &str) -> InputError {
        let found = match self.line.get(self.at) {
            None => "the end of the line".to_string(),
            Some(_) => {
                let rest = String::from_utf8_lossy(&self.line[self.at..]);
                let rest: String = rest.trim_end().chars().take(20).collect();
                format!("{rest:?}")
            }
        };
        self.error_here(format!("{expected}, found {found}"))
    }

    /// An error with a complete message at the current column.
    fn error_here(&self, message: String) -> InputError {
        let column = 1 + String::from_utf8_lossy(&self.line[..self.at])
            .chars()
            .count();
        InputError {
            kind: Default::default(),
            file: self.origin.to_string(),
            line: self.line_no,
            column: column as u32,
            message,
        }
    }

    fn skip_space(&mut self) {
        while self
            .line
            .get(self.at)
            .is_some_and(|b| matches!(b, b' ' | b'\t' | b'\r'))
        {
            self.at += 1;
        }
    }

    fn expect(&mut self, c: u8) -> Result<(), InputError> {
        self.skip_space();
        if self.line.get(self.at) == Some(&c) {
            self.at += 1;
            Ok(())
        } else {
            Err(self.error(&format!("expected '{}'", c as char)))
        }
    }

    fn int(&mut self, what: &str) -> Result<i64, InputError> {
        self.skip_space();
        let start = self.at;
        let mut end = start;
        if self.line.get(end) == Some(&b'-') {
            end += 1;
        }
        while self.line.get(end).is_some_and(u8::is_ascii_digit) {
            end += 1;
        }
        let text = std::str::from_utf8(&self.line[start..end]).unwrap_or("");
        match text.parse::<i64>() {
            Ok(v) => {
                self.at = end;
                Ok(v)
            }
            Err(_) => Err(self.error(&format!("expected {what} (an integer)"))),
        }
    }
}
