//! Reading Jepsen histories (EDN or elle-cli JSON) into the shared model.
//!
//! EDN goes through a dedicated streaming reader (`fast`) that scans bytes
//! and only builds generic [`Value`]s for odd values; JSON goes through the
//! generic JSON parser (it is rare and small). Both feed one `Builder`, so
//! op semantics (indices, pairing, micro-op extraction) are defined once.

// Long (about 705 lines): the one `Builder` (indices, pairing, micro-op
// extraction, predicate micro-ops) every reader feeds, next to the entry points.

mod fast;
mod json;
mod parallel;
pub mod peers;
pub(crate) mod processes;

use crate::edn::{self, line_col, ParseError, Value};
use crate::error::{Error, InputError};
use crate::model::{
    Atom, Format, History, Mop, MopArg, MopFn, Op, OpType, OpValue, SourceText, Span, NO_OP,
};
use std::path::Path;
use std::sync::Arc;

/// The format a path's extension implies: `.json` is elle-cli JSON,
/// anything else Jepsen EDN.
pub fn detect_format(path: &Path) -> Format {
    match path.extension().and_then(|e| e.to_str()) {
        Some(e) if e.eq_ignore_ascii_case("json") => Format::Json,
        _ => Format::Edn,
    }
}

/// Files at least this large are not kept in memory after reading.
const KEEP_IN_MEMORY_BYTES: usize = 64 << 20;

/// EDN files at least this large (and under [`KEEP_IN_MEMORY_BYTES`]) are
/// read through a mapping, which the history keeps to print ops: copying
/// them into memory first faulted in as much fresh memory as the file and
/// held it for the whole run (a 44 MB history: 0.9× the wall time mapped,
/// and `auto` peaks at 142 MB, not 182). Smaller files are read in one
/// part, where the copy costs little.
const MAP_FROM_BYTES: usize = 2 * parallel::MIN_PART_BYTES;

/// Reads a history file (`-` for standard input, read as EDN).
pub fn read_history_file(path: &Path) -> Result<History, Error> {
    let origin = path.display().to_string();
    let io = |source| Error::Io {
        path: origin.clone(),
        source,
    };
    if origin != "-" && detect_format(path) == Format::Edn {
        let len = std::fs::metadata(path).map_or(0, |m| m.len());
        if len >= KEEP_IN_MEMORY_BYTES as u64 {
            if let Some(mut h) = parallel::read_file(path, &origin, parallel::BLOCK_BYTES, None) {
                h.source = SourceText::File(path.to_path_buf());
                return Ok(h);
            }
        } else if len >= MAP_FROM_BYTES as u64 {
            return read_edn_file_mapped(path);
        }
    }
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

/// The error for a format that [`read_history_bytes`] or [`read_fragment`]
/// cannot read from bytes.
fn not_bytes(origin: &str, format: Format) -> InputError {
    InputError {
        kind: Default::default(),
        file: origin.to_string(),
        line: 0,
        column: 0,
        message: format!(
            "expected edn or json here: the {} format is read from its files (read::read_path)",
            format.name()
        ),
    }
}

/// Reads `path` in `format`, or in the format detected when `None`
/// ([`peers::detect`], else the extension: [`detect_format`]). A path, not
/// standard input: peer formats are files or directories.
pub fn read_path(path: &Path, format: Option<Format>) -> Result<History, Error> {
    let format = match format {
        Some(f) => f,
        None => peers::detect(path).unwrap_or_else(|| detect_format(path)),
    };
    match format {
        Format::Edn | Format::Json if format == detect_format(path) => read_history_file(path),
        Format::Edn | Format::Json => {
            let bytes = std::fs::read(path).map_err(|e| Error::Io {
                path: path.display().to_string(),
                source: e,
            })?;
            Ok(read_history_bytes(
                bytes,
                &path.display().to_string(),
                format,
            )?)
        }
        Format::Dbcop | Format::Cobra | Format::Text => peers::read_peer(path, format),
    }
}

/// Reads a history from its bytes; `origin` names it in errors. The dbcop
/// and text formats are read too; Cobra's, a directory, is not (an error).
pub fn read_history_bytes(
    bytes: Vec<u8>,
    origin: &str,
    format: Format,
) -> Result<History, InputError> {
    let source = Arc::new(bytes);
    match format {
        Format::Edn => read_edn_text(SourceText::Bytes(source), origin),
        Format::Json => {
            let mut b = Builder::new(SourceText::Bytes(source.clone()), origin, format);
            json::read(&source, &mut b).map_err(|e| e.into_input_error(origin))?;
            Ok(b.finish())
        }
        Format::Dbcop => peers::parse_dbcop(&source, origin),
        Format::Text => peers::parse_text(&source, origin),
        Format::Cobra => Err(not_bytes(origin, format)),
    }
}

/// Reads the EDN history `source` holds (in memory or mapped): in parts on
/// several cores when it is big enough and cut at line starts, else in one
/// pass (which also reports the first error exactly).
fn read_edn_text(source: SourceText, origin: &str) -> Result<History, InputError> {
    let text = source.clone();
    let bytes = text.in_memory();
    let mut b = Builder::new(source.clone(), origin, Format::Edn);
    // Reading counts as checking in the thread budget (issue 23).
    let _reading = crate::par::Checking::start();
    let (parts, _helpers) = parallel::parts_for(bytes.len());
    let h = if parallel::read(bytes, &mut b, parts) {
        b.finish_unnumbered()
    } else {
        b = Builder::new(source, origin, Format::Edn);
        fast::read(bytes, &mut b).map_err(|e| e.into_input_error(origin))?;
        b.finish()
    };
    // A mapped file's pages go back to the page cache: the few ops printed
    // later fault theirs in again (resident size as if the text were not
    // held at all).
    if let SourceText::Mapped(m) = &text {
        m.release(0..bytes.len());
    }
    Ok(h)
}

/// Reads an EDN history file through a read-only mapping (see
/// [`MAP_FROM_BYTES`]; the bytes are read into memory where the system
/// maps nothing), which the history keeps as its source text; the result,
/// errors included, equals [`read_history_bytes`]'s on the file's bytes.
/// `check` takes this path for files from [`MAP_FROM_BYTES`] to
/// [`KEEP_IN_MEMORY_BYTES`]; public for tests and benchmarks of it.
pub fn read_edn_file_mapped(path: &Path) -> Result<History, Error> {
    let origin = path.display().to_string();
    let io = |source| Error::Io {
        path: origin.clone(),
        source,
    };
    let mut file = std::fs::File::open(path).map_err(io)?;
    let len = file.metadata().map_err(io)?.len();
    let len = usize::try_from(len).map_err(|_| io(std::io::ErrorKind::OutOfMemory.into()))?;
    let bytes = crate::model::mapped::FileBytes::of(&mut file, len, &origin).map_err(io)?;
    Ok(read_edn_text(SourceText::Mapped(Arc::new(bytes)), &origin)?)
}

/// Reads an EDN history cut into `parts` parts read in parallel, whatever
/// its size (the normal path does so only for big histories); the result,
/// errors included, equals [`read_history_bytes`]'s. For tests and
/// benchmarks of the parallel reader.
pub fn read_edn_in_parts(
    bytes: Vec<u8>,
    origin: &str,
    parts: usize,
) -> Result<History, InputError> {
    let source = Arc::new(bytes);
    let mut b = Builder::new(SourceText::Bytes(source.clone()), origin, Format::Edn);
    if parallel::read(&source, &mut b, parts) {
        return Ok(b.finish_unnumbered());
    }
    b = Builder::new(SourceText::Bytes(source.clone()), origin, Format::Edn);
    fast::read(&source, &mut b).map_err(|e| e.into_input_error(origin))?;
    Ok(b.finish())
}

/// Reads an EDN history file in blocks of `block_bytes` as big files are
/// read (each block cut into parts read in parallel), falling back to a
/// whole read as they do; the result, errors included, equals
/// [`read_history_file`]'s. For tests and benchmarks of the block reader.
pub fn read_edn_file_in_blocks(path: &Path, block_bytes: usize) -> Result<History, Error> {
    let origin = path.display().to_string();
    match parallel::read_file(path, &origin, block_bytes, None) {
        Some(mut h) => {
            h.source = SourceText::File(path.to_path_buf());
            Ok(h)
        }
        None => read_history_file(path),
    }
}

/// Reads a fragment of a growing history (whole op lines; `ellery watch`):
/// as [`read_history_bytes`], and also says whether the fragment's ops carry
/// `:index` (`None` when it has no ops), since a fragment's dense indices
/// start at 0 and the caller must shift them.
pub fn read_fragment(
    bytes: Vec<u8>,
    origin: &str,
    format: Format,
) -> Result<(History, Option<bool>), InputError> {
    let source = Arc::new(bytes);
    let mut b = Builder::new(SourceText::Bytes(source.clone()), origin, format);
    let res = match format {
        Format::Edn => fast::read(&source, &mut b),
        Format::Json => json::read(&source, &mut b),
        Format::Dbcop | Format::Cobra | Format::Text => return Err(not_bytes(origin, format)),
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
    open: processes::ProcessMap,
    /// Whether the first op had an `:index` (decided at the first op).
    indexed: Option<bool>,
    /// Ops seen so far, client or not (for dense indices).
    seen: u64,
    /// The previous op's `:index`, when the file has them.
    last_index: Option<u64>,
    /// The source text (for line numbers).
    src: SourceText,
    /// The first op's `:index`, when it has one.
    first_index: Option<u64>,
    /// In a part read in parallel ([`parallel`]): each process's first op
    /// in the part (its position), the one op whose pairing depends on the
    /// parts before; the join fixes those up. `None` otherwise.
    first_of: Option<processes::ProcessMap>,
}

impl Builder {
    fn new(source: SourceText, origin: &str, format: Format) -> Builder {
        let mut h = History {
            source: source.clone(),
            origin: origin.to_string(),
            format,
            ..History::default()
        };
        h.nil_atom = h.interner.atom(&Value::Nil);
        Builder {
            h,
            open: processes::ProcessMap::default(),
            indexed: None,
            seen: 0,
            last_index: None,
            src: source,
            first_index: None,
            first_of: None,
        }
    }

    /// A builder over the same source with empty tables, for reading one
    /// part of it in parallel ([`parallel`]).
    fn empty_like(&self) -> Builder {
        let mut b = Builder::new(self.src.clone(), &self.h.origin, self.h.format);
        b.first_of = Some(processes::ProcessMap::default());
        b
    }

    /// Adds one op (client or not). `index_at` is where an error about the
    /// op's index should point.
    pub(crate) fn push(&mut self, src: &[u8], op: RawOp) -> Result<(), ParseError> {
        let indexed = *self.indexed.get_or_insert(op.index.is_some());
        if self.seen == 0 {
            self.first_index = op.index;
        }
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
        if let Some(first) = &mut self.first_of {
            first.insert_if_absent(process, pos);
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
        } else if let Some(inv) = self.open.remove(process) {
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

    /// Compiles a predicate micro-op, `[:rp PRED RESULT]` (`write` false)
    /// or `[:wp PRED VALUE KEYS]`, each optionally followed by UNIVERSE (the
    /// keys the predicate ranged over), from its parts after the name, each
    /// with its position; `at` is the micro-op's own position. An error says
    /// where (one of those positions) and what was expected.
    pub(crate) fn pred_mop(
        &mut self,
        write: bool,
        parts: &[(Value, usize)],
        at: usize,
    ) -> Result<Mop, (usize, String)> {
        // Long (about 145 lines): each part's check names its own position
        // and what was expected there, in the order the parts come.
        use crate::model::{Pred, PredMop};
        let (name, arity, shape) = if write {
            ("wp", 3, "[:wp PRED VALUE KEYS]")
        } else {
            ("rp", 2, "[:rp PRED RESULT]")
        };
        // An optional last part declares the key universe (issue 18).
        let (parts, universe_form) = match parts.len() {
            n if n == arity + 1 => (&parts[..arity], parts.last()),
            _ => (parts, None),
        };
        if parts.len() != arity {
            return Err((
                at,
                format!(
                    "expected a predicate micro-op {shape}, found :{name} with {} argument{}",
                    parts.len(),
                    if parts.len() == 1 { "" } else { "s" }
                ),
            ));
        }
        let (form, form_at) = &parts[0];
        let pred = Pred::parse(form).map_err(|e| (*form_at, e))?;
        let mut rows: Vec<(Atom, Option<Atom>)> = Vec::new();
        let (rows_form, rows_at) = &parts[arity - 1];
        // Repeated keys: a scan of the rows so far, or for a long RESULT or
        // KEYS (a scan of a table) a set, so the check stays linear.
        let many = match rows_form {
            Value::Map(es) => es.len() > 16,
            Value::Vector(vs) | Value::List(vs) | Value::Set(vs) => vs.len() > 16,
            _ => false,
        };
        let mut seen: Option<hashbrown::HashSet<Atom>> = many.then(hashbrown::HashSet::new);
        let mut row = |k: &Value, v: Option<&Value>, b: &mut Builder| -> Result<(), String> {
            let key = b.h.interner.atom(k);
            let repeated = match &mut seen {
                Some(set) => !set.insert(key),
                None => rows.iter().any(|r| r.0 == key),
            };
            if repeated {
                return Err(format!(
                    "expected each key once in {shape}, found {} twice",
                    edn::pr_str(k)
                ));
            }
            let value = match v {
                None | Some(Value::Nil) => None,
                Some(v) => Some(b.h.interner.atom(v)),
            };
            rows.push((key, value));
            Ok(())
        };
        let bad = |what: &str| {
            format!(
                "expected {what} in {shape}, found {}",
                edn::pr_str(rows_form)
            )
        };
        match (write, rows_form) {
            (false, Value::Map(entries)) => {
                for (k, v) in entries {
                    // elle-cli's JSON reading turned the object's string
                    // keys into keywords; item micro-ops keep them strings.
                    let json_key;
                    let k = match (self.h.format, k) {
                        (Format::Json, Value::Keyword(name)) => {
                            json_key = Value::Str(name.clone());
                            &json_key
                        }
                        _ => k,
                    };
                    row(k, Some(v), self).map_err(|e| (*rows_at, e))?;
                }
            }
            // JSON objects have string keys only: a JSON RESULT may also be
            // an array of [key, value] pairs.
            (false, Value::Vector(pairs) | Value::List(pairs)) => {
                for p in pairs {
                    match p {
                        Value::Vector(kv) | Value::List(kv) if kv.len() == 2 => {
                            row(&kv[0], Some(&kv[1]), self).map_err(|e| (*rows_at, e))?
                        }
                        _ => {
                            return Err((
                                *rows_at,
                                bad("RESULT as a map {key value} or [[key value] …]"),
                            ))
                        }
                    }
                }
            }
            (false, Value::Nil) => {}
            (false, _) => return Err((*rows_at, bad("RESULT as a map {key value}"))),
            (true, Value::Vector(keys) | Value::List(keys) | Value::Set(keys)) => {
                for k in keys {
                    row(k, None, self).map_err(|e| (*rows_at, e))?;
                }
            }
            (true, Value::Nil) => {}
            (true, _) => return Err((*rows_at, bad("KEYS as a vector of the keys matched"))),
        }
        let universe = match universe_form {
            None => None,
            Some((Value::Vector(keys) | Value::List(keys) | Value::Set(keys), u_at)) => {
                let mut u: Vec<Atom> = keys.iter().map(|k| self.h.interner.atom(k)).collect();
                u.sort_unstable();
                u.dedup();
                if let Some(&(k, _)) = rows.iter().find(|r| u.binary_search(&r.0).is_err()) {
                    return Err((
                        *u_at,
                        format!(
                            "expected UNIVERSE to hold every key {} {}, found {} missing",
                            if write { "matched in" } else { "returned by" },
                            shape,
                            edn::pr_str(&self.h.atom_value(k))
                        ),
                    ));
                }
                Some(u)
            }
            Some((form, u_at)) => {
                return Err((
                    *u_at,
                    format!(
                        "expected UNIVERSE, the set of keys the predicate ranged over, after {shape}, found {}",
                        edn::pr_str(form)
                    ),
                ))
            }
        };
        let write = write.then(|| match &parts[1].0 {
            Value::Nil => None,
            v => Some(self.h.interner.atom(v)),
        });
        let i = self.h.predicates.len() as u32;
        self.h.predicates.push(PredMop {
            pred,
            form: form.clone(),
            rows,
            write,
            universe,
        });
        let f = if write.is_some() {
            MopFn::PredWrite
        } else {
            MopFn::PredRead
        };
        Ok(Mop::new(f, self.h.nil_atom, MopArg::Pred(i)))
    }

    /// Classifies a generic `:value` (the slow path): micro-op vectors become
    /// [`OpValue::Mops`], `nil` [`OpValue::Nil`], the rest
    /// [`OpValue::Other`]. A bad predicate micro-op is an error (without a
    /// position: the caller names the op).
    pub(crate) fn op_value(&mut self, v: Value) -> Result<OpValue, String> {
        let pred_name = |p: &[Value]| match p.first() {
            Some(Value::Keyword(k)) if k == "rp" => Some(false),
            Some(Value::Keyword(k)) if k == "wp" => Some(true),
            _ => None,
        };
        let is_mops = match &v {
            Value::Vector(items) => items.iter().all(|m| {
                matches!(m, Value::Vector(p) if (p.len() == 3 && matches!(p[0], Value::Keyword(_))) || pred_name(p).is_some())
            }),
            Value::Nil => return Ok(OpValue::Nil),
            _ => false,
        };
        if !is_mops {
            let i = self.h.other_values.len() as u32;
            self.h.other_values.push(v);
            return Ok(OpValue::Other(i));
        }
        let Value::Vector(items) = v else {
            return Ok(OpValue::Nil);
        };
        let start = self.h.mops.len() as u32;
        let len = items.len() as u32;
        for m in items {
            let Value::Vector(p) = m else { continue };
            if let Some(write) = pred_name(&p) {
                // The parts move in: a RESULT may hold many rows.
                let parts: Vec<(Value, usize)> = p.into_iter().skip(1).map(|x| (x, 0)).collect();
                let mop = self.pred_mop(write, &parts, 0).map_err(|e| e.1)?;
                self.h.mops.push(mop);
                continue;
            }
            let f = match &p[0] {
                Value::Keyword(k) if k == "r" => MopFn::Read,
                Value::Keyword(k) if k == "append" => MopFn::Append,
                Value::Keyword(k) if k == "w" => MopFn::Write,
                other => match self.h.interner.fn_name(other) {
                    Some(name) => MopFn::Other(name),
                    None => return Err(TOO_MANY_NAMES.into()),
                },
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
            self.h.mops.push(Mop::new(f, key, arg));
        }
        Ok(OpValue::Mops { start, len })
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
                ("value", v) => {
                    op.value = self.op_value(v).map_err(|e| ParseError::at(src, at, e))?
                }
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

    /// The history, its ops' lines left unnumbered (read in parts or
    /// blocks: [`History::line`] counts them when needed).
    fn finish_unnumbered(mut self) -> History {
        self.h.ops.shrink_to_fit();
        self.h.pair.shrink_to_fit();
        self.h.mops.shrink_to_fit();
        self.h.elements.shrink_to_fit();
        self.h
    }

    fn finish(mut self) -> History {
        // One pass over the newlines of the whole source (fast with memchr)
        // instead of counting them op by op while reading.
        let src = self.src.clone();
        let mut newlines = memchr::memchr_iter(b'\n', src.in_memory());
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

/// The message for a micro-op function first named after more distinct
/// values than a [`Mop`] can tell names apart among
/// ([`crate::model::FN_NAME_SLOTS`]).
pub(crate) const TOO_MANY_NAMES: &str = "expected a micro-op function named among the first 134,217,728 distinct values of the history (ellery's limit), found a new name after them";

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
