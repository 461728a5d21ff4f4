//! Reading Jepsen histories (EDN or elle-cli JSON) into the shared model.
//!
//! EDN goes through a dedicated streaming reader ([`fast`]) that scans bytes
//! and only builds generic [`Value`]s for odd values; JSON goes through the
//! generic JSON parser (it is rare and small). Both feed one [`Builder`], so
//! op semantics (indices, pairing, micro-op extraction) are defined once.

mod fast;
mod json;
pub mod peers;

use crate::edn::{self, line_col, ParseError, Value};
use crate::error::{Error, InputError};
use crate::model::{
    Atom, History, Mop, MopArg, MopFn, Op, OpType, OpValue, SourceFormat, SourceText, Span, NO_OP,
};
use hashbrown::HashMap;
use std::path::Path;
use std::sync::Arc;

/// The format a path's extension implies: `.json` is elle-cli JSON,
/// anything else Jepsen EDN.
pub fn detect_format(path: &Path) -> SourceFormat {
    match path.extension().and_then(|e| e.to_str()) {
        Some(e) if e.eq_ignore_ascii_case("json") => SourceFormat::Json,
        _ => SourceFormat::Edn,
    }
}

/// Files at least this large are not kept in memory after reading.
const KEEP_IN_MEMORY_BYTES: usize = 64 << 20;

/// Reads a history file (`-` for standard input, read as EDN).
pub fn read_history_file(path: &Path) -> Result<History, Error> {
    let origin = path.display().to_string();
    let io = |source| Error::Io {
        path: origin.clone(),
        source,
    };
    let bytes = if origin == "-" {
        let mut buf = Vec::new();
        std::io::Read::read_to_end(&mut std::io::stdin(), &mut buf).map_err(io)?;
        buf
    } else {
        std::fs::read(path).map_err(io)?
    };
    let keep_in_memory = origin == "-" || bytes.len() < KEEP_IN_MEMORY_BYTES;
    let mut h = read_history_bytes(bytes, &origin, detect_format(path))?;
    if !keep_in_memory {
        // Large histories print few ops; re-reading those from the file is
        // cheaper than holding the whole text for the rest of the run.
        h.source = SourceText::File(path.to_path_buf());
    }
    Ok(h)
}

/// Reads a history from its bytes; `origin` names it in errors.
pub fn read_history_bytes(
    bytes: Vec<u8>,
    origin: &str,
    format: SourceFormat,
) -> Result<History, InputError> {
    let source = Arc::new(bytes);
    let mut b = Builder::new(source.clone(), origin, format);
    let res = match format {
        SourceFormat::Edn => fast::read(&source, &mut b),
        SourceFormat::Json => json::read(&source, &mut b),
    };
    res.map_err(|e| e.into_input_error(origin))?;
    Ok(b.finish())
}

/// Reads a fragment of a growing history (whole op lines; `ellery watch`):
/// as [`read_history_bytes`], and also says whether the fragment's ops carry
/// `:index` (`None` when it has no ops), since a fragment's dense indices
/// start at 0 and the caller must shift them.
pub fn read_fragment(
    bytes: Vec<u8>,
    origin: &str,
    format: SourceFormat,
) -> Result<(History, Option<bool>), InputError> {
    let source = Arc::new(bytes);
    let mut b = Builder::new(source.clone(), origin, format);
    let res = match format {
        SourceFormat::Edn => fast::read(&source, &mut b),
        SourceFormat::Json => json::read(&source, &mut b),
    };
    res.map_err(|e| e.into_input_error(origin))?;
    let indexed = b.indexed;
    Ok((b.finish(), indexed))
}

/// An op as read, before index assignment and pairing.
pub(crate) struct RawOp {
    /// `:index`, if present.
    pub index: Option<u64>,
    /// `:time`, -1 when absent.
    pub time: i64,
    /// `:type`.
    pub op_type: OpType,
    /// `:process`, when it is an integer.
    pub process: Option<i64>,
    /// Interned `:f`.
    pub f: Atom,
    /// `:value`.
    pub value: OpValue,
    /// Where the op is.
    pub span: Span,
}

/// Accumulates ops into a [`History`], applying Jepsen's rules for indices
/// and pairing as ops arrive.
pub(crate) struct Builder {
    /// The history being built.
    pub h: History,
    /// Open invocation (position in `ops`) per process.
    open: HashMap<i64, u32>,
    /// Whether the first op had an `:index` (decided at the first op).
    indexed: Option<bool>,
    /// Ops seen so far, client or not (for dense indices).
    seen: u64,
    /// The previous op's `:index`, when the file has them.
    last_index: Option<u64>,
    /// The source text (for line numbers).
    src: Arc<Vec<u8>>,
}

impl Builder {
    fn new(source: Arc<Vec<u8>>, origin: &str, format: SourceFormat) -> Builder {
        let mut h = History {
            source: SourceText::Bytes(source.clone()),
            origin: origin.to_string(),
            format,
            ..History::default()
        };
        h.nil_atom = h.interner.atom(&Value::Nil);
        Builder {
            h,
            open: HashMap::new(),
            indexed: None,
            seen: 0,
            last_index: None,
            src: source,
        }
    }

    /// Adds one op (client or not). `index_at` is where an error about the
    /// op's index should point.
    pub(crate) fn push(&mut self, src: &[u8], op: RawOp) -> Result<(), ParseError> {
        let indexed = *self.indexed.get_or_insert(op.index.is_some());
        let index = match (indexed, op.index) {
            (true, Some(i)) => {
                // Jepsen (and so Elle) find ops by `:index` assuming
                // it grows with file order; ellery orders processes and
                // real time by file order. Equal or decreasing indices
                // (a duplicated or reordered line) would make the two
                // disagree, so they are refused.
                if let Some(last) = self.last_index.filter(|&l| i <= l) {
                    return Err(ParseError::at(
                            src,
                            op.span.start as usize,
                            format!(
                                "expected an op with an :index greater than the previous op's ({last}), found :index {i} (ops must be in :index order, each once)"
                            ),
                        ));
                }
                self.last_index = Some(i);
                i
            }
            (true, None) => {
                return Err(ParseError::at(
                    src,
                    op.span.start as usize,
                    "expected an op map with an :index (the first op has one), found one without",
                ))
            }
            (false, _) => self.seen,
        };
        self.seen += 1;
        let Some(process) = op.process else {
            self.h.non_client_ops += 1;
            return Ok(());
        };
        let pos = self.h.ops.len() as u32;
        if pos == NO_OP {
            return Err(ParseError::at(
                src,
                op.span.start as usize,
                "expected at most 4294967294 client ops, found more",
            ));
        }
        let mut partner = NO_OP;
        if op.op_type == OpType::Invoke {
            if let Some(prev) = self.open.insert(process, pos) {
                // Lines are only known after reading; errors compute them.
                let prev_line = line_col(src, self.h.ops[prev as usize].span.start as usize).0;
                let line = line_col(src, op.span.start as usize).0;
                return Err(ParseError::at(
                    src,
                    op.span.start as usize,
                    format!(
                        "process {process} invoked again at line {line} before its invocation at line {prev_line} completed"
                    ),
                ));
            }
        } else if let Some(inv) = self.open.remove(&process) {
            partner = inv;
            self.h.pair[inv as usize] = pos;
        }
        self.h.pair.push(partner);
        self.h.ops.push(Op {
            index,
            time: op.time,
            op_type: op.op_type,
            process,
            f: op.f,
            value: op.value,
            span: op.span,
        });
        Ok(())
    }

    /// Classifies a generic `:value` (the slow path): micro-op vectors become
    /// [`OpValue::Mops`], `nil` [`OpValue::Nil`], the rest
    /// [`OpValue::Other`].
    pub(crate) fn op_value(&mut self, v: Value) -> OpValue {
        let is_mops = match &v {
            Value::Vector(items) => items.iter().all(|m| {
                matches!(m, Value::Vector(p) if p.len() == 3 && matches!(p[0], Value::Keyword(_)))
            }),
            Value::Nil => return OpValue::Nil,
            _ => false,
        };
        if !is_mops {
            let i = self.h.other_values.len() as u32;
            self.h.other_values.push(v);
            return OpValue::Other(i);
        }
        let Value::Vector(items) = v else {
            return OpValue::Nil;
        };
        let start = self.h.mops.len() as u32;
        for m in &items {
            let Value::Vector(p) = m else { continue };
            let f = match &p[0] {
                Value::Keyword(k) if k == "r" => MopFn::Read,
                Value::Keyword(k) if k == "append" => MopFn::Append,
                Value::Keyword(k) if k == "w" => MopFn::Write,
                other => MopFn::Other(self.h.interner.atom(other)),
            };
            let key = self.h.interner.atom(&p[1]);
            let arg = match &p[2] {
                Value::Nil => MopArg::Nil,
                Value::Vector(els) | Value::List(els) => {
                    let s = self.h.elements.len() as u32;
                    for e in els {
                        let a = self.h.interner.atom(e);
                        self.h.elements.push(a);
                    }
                    MopArg::List {
                        start: s,
                        len: els.len() as u32,
                    }
                }
                other => MopArg::Atom(self.h.interner.atom(other)),
            };
            self.h.mops.push(Mop { f, key, arg });
        }
        OpValue::Mops {
            start,
            len: items.len() as u32,
        }
    }

    /// Builds a [`RawOp`] from a generic op map (the JSON path).
    pub(crate) fn raw_op(
        &mut self,
        src: &[u8],
        map: Value,
        span: Span,
    ) -> Result<RawOp, ParseError> {
        let at = span.start as usize;
        let Value::Map(entries) = map else {
            return Err(ParseError::at(
                src,
                at,
                format!("expected an op map, found {}", edn::pr_str(&map)),
            ));
        };
        let mut op = RawOp {
            index: None,
            time: -1,
            op_type: OpType::Invoke,
            process: None,
            f: self.h.nil_atom,
            value: OpValue::Nil,
            span,
        };
        let mut has_type = false;
        for (k, v) in entries {
            let Value::Keyword(k) = k else { continue };
            match (k.as_str(), v) {
                ("index", Value::Int(i)) if i >= 0 => op.index = Some(i as u64),
                ("index", v) => {
                    return Err(ParseError::at(
                        src,
                        at,
                        format!(
                            "expected a non-negative integer :index, found {}",
                            edn::pr_str(&v)
                        ),
                    ))
                }
                ("time", Value::Int(t)) => op.time = t,
                ("time", Value::Nil) => {}
                ("time", v) => {
                    return Err(ParseError::at(
                        src,
                        at,
                        format!("expected an integer :time, found {}", edn::pr_str(&v)),
                    ))
                }
                ("type", v) => {
                    op.op_type = match &v {
                        Value::Keyword(t) => OpType::from_name(t),
                        _ => None,
                    }
                    .ok_or_else(|| ParseError::at(src, at, bad_type(&edn::pr_str(&v))))?;
                    has_type = true;
                }
                ("process", Value::Int(p)) => op.process = Some(p),
                ("process", _) => {}
                ("f", v) => op.f = self.h.interner.atom(&v),
                ("value", v) => op.value = self.op_value(v),
                _ => {}
            }
        }
        if !has_type {
            return Err(ParseError::at(
                src,
                at,
                "expected an op map with a :type, found none",
            ));
        }
        Ok(op)
    }

    fn finish(mut self) -> History {
        // One pass over the newlines of the whole source (fast with memchr)
        // instead of counting them op by op while reading.
        let src = self.src.clone();
        let mut newlines = memchr::memchr_iter(b'\n', &src);
        let mut next = newlines.next();
        let mut line = 1u32;
        for op in &mut self.h.ops {
            let start = op.span.start as usize;
            while next.is_some_and(|p| p < start) {
                line += 1;
                next = newlines.next();
            }
            op.span.line = line;
        }
        // Give back the reader's generous up-front reservations.
        self.h.ops.shrink_to_fit();
        self.h.pair.shrink_to_fit();
        self.h.mops.shrink_to_fit();
        self.h.elements.shrink_to_fit();
        self.h
    }
}

/// The message for an unknown `:type`.
pub(crate) fn bad_type(found: &str) -> String {
    format!("expected :type to be one of :invoke :ok :fail :info, found {found}")
}

/// The full op map of an op, re-read from its source text, in Elle's key
/// order: `:index :time :type :process :f :value`, then the other keys in
/// source order. `:index` is the op's (dense when the source has none),
/// `:time` and `:f` are filled in when absent.
pub fn op_map(history: &History, op: &Op) -> Value {
    history.op_map(op)
}

#[cfg(test)]
mod tests;
