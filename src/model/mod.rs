//! The shared model: every workload and every algorithm works on a
//! [`History`] of client operations, whose transactional values are stored as
//! compact micro-operations over interned keys and values.
//!
//! Memory matters here (a million-transaction history must check in well
//! under 1.5 GB), so ops keep no parsed maps: each op remembers the byte range
//! of its source text, and the original map is re-read only when an op must be
//! printed (inside a cycle, say).

use crate::edn::Value;
use hashbrown::HashMap;

pub mod mapped;
mod source;
pub use source::SourceText;
pub mod predicate;
pub use predicate::{Pred, PredMop};
mod mop;
pub use mop::{FnName, Mop, MopArg, MopFn, FN_NAME_SLOTS};

/// A key or value of a micro-op, packed into 64 bits.
///
/// Integers that fit in 63 bits are stored inline; everything else (keywords,
/// strings, big integers, vectors, ...) is interned in the history's
/// [`Interner`] and stored as a tagged index. Two atoms are equal exactly when
/// the EDN values they stand for are equal, so atoms can be compared and
/// hashed directly.
///
/// Aligned to 4 bytes, not 8: micro-ops (and anything else pairing an atom
/// with 32-bit fields) pack tighter, e.g. a [`Mop`] takes 20 bytes, not 24.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug, Default)]
#[repr(C, packed(4))]
pub struct Atom(u64);

const INTERNED_TAG: u64 = 1 << 63;

impl Atom {
    /// The atom for an integer, if it fits inline (|n| < 2^62).
    pub fn int(n: i64) -> Option<Atom> {
        if (-(1i64 << 62)..(1i64 << 62)).contains(&n) {
            // Offset so that the representation is non-negative and ordered.
            Some(Atom((n + (1i64 << 62)) as u64))
        } else {
            None
        }
    }

    /// The integer this atom holds inline, if any.
    pub fn as_int(self) -> Option<i64> {
        if self.0 & INTERNED_TAG == 0 {
            Some(self.0 as i64 - (1i64 << 62))
        } else {
            None
        }
    }

    /// The interner slot of a non-inline atom.
    pub fn interned_slot(self) -> Option<usize> {
        if self.0 & INTERNED_TAG != 0 {
            Some((self.0 & !INTERNED_TAG) as usize)
        } else {
            None
        }
    }

    fn from_slot(slot: usize) -> Atom {
        Atom(slot as u64 | INTERNED_TAG)
    }
}

/// Interns non-integer EDN values (keywords, strings, ...) as [`Atom`]s.
#[derive(Default, Debug, Clone)]
pub struct Interner {
    values: Vec<Value>,
    slots: HashMap<Value, usize>,
}

impl Interner {
    /// The atom for a value: inline for small integers, interned otherwise.
    pub fn atom(&mut self, value: &Value) -> Atom {
        if let Value::Int(n) = value {
            if let Some(a) = Atom::int(*n) {
                return a;
            }
        }
        if let Some(&slot) = self.slots.get(value) {
            return Atom::from_slot(slot);
        }
        let slot = self.values.len();
        self.values.push(value.clone());
        self.slots.insert(value.clone(), slot);
        Atom::from_slot(slot)
    }

    /// The atom for a value if it was seen before (or is an inline integer).
    pub fn lookup(&self, value: &Value) -> Option<Atom> {
        if let Value::Int(n) = value {
            if let Some(a) = Atom::int(*n) {
                return Some(a);
            }
        }
        self.slots.get(value).map(|&s| Atom::from_slot(s))
    }

    /// Interns every value of `other` here, in `other`'s order, and returns
    /// for each of `other`'s slots the atom it has here. Merging interners
    /// built over consecutive parts of a file in file order gives the same
    /// atoms as one interner over the whole file (slots follow first use).
    pub fn absorb(&mut self, other: &Interner) -> Vec<Atom> {
        other.values.iter().map(|v| self.atom(v)).collect()
    }

    /// The name of a micro-op function outside the built-ins (a keyword:
    /// the readers take no other), interned as its atom would be, so the
    /// name is a slot that fits in a [`Mop`] beside its tags (issue 23:
    /// 5M micro-ops in a 1M history). Equal names are equal values, as for
    /// atoms, and [`Interner::absorb`] maps them too. `None` when its slot
    /// is past [`FN_NAME_SLOTS`] (the value is interned all the same).
    pub fn fn_name(&mut self, value: &Value) -> Option<FnName> {
        let slot = match self.slots.get(value) {
            Some(&slot) => slot,
            None => {
                let slot = self.values.len();
                self.values.push(value.clone());
                self.slots.insert(value.clone(), slot);
                slot
            }
        };
        FnName::at(slot)
    }

    /// The name a function value has if it was seen before: comparing
    /// names, not values, needs no value per micro-op.
    pub fn fn_lookup(&self, value: &Value) -> Option<FnName> {
        self.slots.get(value).and_then(|&slot| FnName::at(slot))
    }

    /// The EDN value of a micro-op function's name.
    pub fn fn_value(&self, name: FnName) -> Value {
        self.values.get(name.slot()).cloned().unwrap_or(Value::Nil)
    }

    /// The EDN value an atom stands for.
    pub fn value(&self, atom: Atom) -> Value {
        match atom.as_int() {
            Some(n) => Value::Int(n),
            None => self.values[atom.interned_slot().expect("interned atom")].clone(),
        }
    }

    /// Number of interned (non-inline) values.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// Whether nothing has been interned yet.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }
}

/// Jepsen's op types.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub enum OpType {
    /// `:invoke`: the client began the operation.
    Invoke,
    /// `:ok`: the operation definitely happened.
    Ok,
    /// `:fail`: the operation definitely did not happen.
    Fail,
    /// `:info`: the operation may or may not have happened.
    Info,
}

impl OpType {
    /// The keyword name, without the colon.
    pub fn name(self) -> &'static str {
        match self {
            OpType::Invoke => "invoke",
            OpType::Ok => "ok",
            OpType::Fail => "fail",
            OpType::Info => "info",
        }
    }

    /// Parses a keyword name (without colon).
    pub fn from_name(name: &str) -> Option<OpType> {
        Some(match name {
            "invoke" => OpType::Invoke,
            "ok" => OpType::Ok,
            "fail" => OpType::Fail,
            "info" => OpType::Info,
            _ => return None,
        })
    }
}

/// Where an op's text sits in its source, so it can be re-read for printing
/// and named in error messages.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct Span {
    /// Byte offset of the op map's opening brace.
    pub start: u64,
    /// Length in bytes of the op map's text.
    pub len: u32,
    /// 1-based line of the opening brace; 0 when not numbered while
    /// reading (a big history read in parts: [`History::line`] counts it
    /// when an error needs it).
    pub line: u32,
}

/// What an op's `:value` holds.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum OpValue {
    /// `nil` or absent.
    Nil,
    /// A vector of micro-ops: a range in [`History::mops`].
    Mops {
        /// First micro-op's position.
        start: u32,
        /// Number of micro-ops.
        len: u32,
    },
    /// Anything else (e.g. a register value or `[old new]` for a CAS): an
    /// index into [`History::other_values`].
    Other(u32),
}

/// One client operation (an invocation or a completion).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Op {
    /// Jepsen's `:index` (dense indices are assigned when the file has none).
    pub index: u64,
    /// `:time` in nanoseconds, or -1 when absent.
    pub time: i64,
    /// `:type`.
    pub op_type: OpType,
    /// `:process` (only ops with an integer process are client ops).
    pub process: i64,
    /// `:f`, interned (`nil` when absent).
    pub f: Atom,
    /// `:value`.
    pub value: OpValue,
    /// Where the op came from.
    pub span: Span,
}

/// A sentinel for "no such op" in pairing tables.
pub const NO_OP: u32 = u32::MAX;

/// A history of client operations, in file order, with pairing information.
#[derive(Debug, Default, Clone)]
pub struct History {
    /// Client ops (integer `:process`), in file order.
    pub ops: Vec<Op>,
    /// For each op, the position (in `ops`) of its partner: the completion of
    /// an invocation or the invocation of a completion; [`NO_OP`] if none.
    pub pair: Vec<u32>,
    /// All micro-ops, referenced by [`OpValue::Mops`].
    pub mops: Vec<Mop>,
    /// All list elements of reads, referenced by [`MopArg::List`].
    pub elements: Vec<Atom>,
    /// Op values that are not micro-op vectors.
    pub other_values: Vec<Value>,
    /// Predicates and rows of predicate micro-ops, referenced by
    /// [`MopArg::Pred`].
    pub predicates: Vec<PredMop>,
    /// Interned keys, values and function names.
    pub interner: Interner,
    /// Ops that were skipped because their `:process` is not an integer.
    pub non_client_ops: usize,
    /// The atom for `nil` (absent `:f`).
    pub nil_atom: Atom,
    /// The source text, kept (or re-read from its file) to print ops.
    pub source: SourceText,
    /// Where the history came from (a path, or `-`).
    pub origin: String,
    /// The syntax of [`History::source`], for re-reading ops: `Json` for
    /// elle-cli's JSON, `Edn` otherwise (peer formats are converted to EDN
    /// text as they are read).
    pub format: Format,
}

/// The workloads ellery checks (and `gen` generates): what a history's
/// operations are.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Workload {
    /// Elle's list-append: `[:append k e]` / `[:r k [..]]` micro-ops.
    ListAppend,
    /// Elle's rw-register: `[:w k v]` / `[:r k v]` micro-ops.
    RwRegister,
    /// Knossos's cas-register: `:read`/`:write`/`:cas` ops on registers.
    CasRegister,
}

impl Workload {
    /// The workload a history's operations belong to: register operations
    /// (`:read`, `:write`, `:cas` with plain values) are a CAS register;
    /// micro-op transactions are list-append if any micro-op appends,
    /// rw-register if any writes; list-append otherwise (read-only histories
    /// check the same way).
    ///
    /// The ops are looked at in two halves, on two cores when one is free
    /// (issue 23): the first half's answer stands when it decides.
    pub fn detect(h: &History) -> Workload {
        Workload::detect_splitting_from(h, crate::par::SPLIT_FROM)
    }

    /// [`Workload::detect`], the ops cut in two from `split` ops on.
    fn detect_splitting_from(h: &History, split: usize) -> Workload {
        let register_fns: Vec<Atom> = ["read", "write", "cas"]
            .iter()
            .filter_map(|f| h.interner.lookup(&crate::edn::Value::kw(f)))
            .collect();
        // Per range: the workload its first deciding op says, and whether
        // a micro-op writes.
        let scan = |range: std::ops::Range<usize>| {
            let mut writes = false;
            for op in h.ops.get(range).unwrap_or(&[]) {
                if !matches!(op.value, OpValue::Mops { .. }) && register_fns.contains(&op.f) {
                    return (Some(Workload::CasRegister), writes);
                }
                for m in h.mops(op) {
                    match m.f() {
                        MopFn::Append => return (Some(Workload::ListAppend), writes),
                        MopFn::Write | MopFn::PredRead | MopFn::PredWrite => writes = true,
                        _ => {}
                    }
                }
            }
            (None, writes)
        };
        match crate::par::halves(h.ops.len(), split, scan) {
            [(Some(w), _), _] | [_, (Some(w), _)] => w,
            [(None, a), (None, b)] if a || b => Workload::RwRegister,
            _ => Workload::ListAppend,
        }
    }
}

/// The format of a history's input: Jepsen's and elle-cli's text formats,
/// and the peer checkers' formats `read::peers` converts into EDN text.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Jepsen EDN.
    #[default]
    Edn,
    /// elle-cli's JSON dialect.
    Json,
    /// dbcop's legacy `history.bincode` (Rust bincode v1).
    Dbcop,
    /// Cobra's directory of per-client binary `T<N>.log` files.
    Cobra,
    /// The `r(key,value,session,txn)` / `w(...)` text format (PolySI, Plume).
    Text,
}

/// The name [`Format`] had when only EDN and JSON were in it; kept so
/// code written against that name still builds.
pub type SourceFormat = Format;

impl Format {
    /// The name used on the command line (`-f`).
    pub fn name(self) -> &'static str {
        match self {
            Format::Edn => "edn",
            Format::Json => "json",
            Format::Dbcop => "dbcop",
            Format::Cobra => "cobra",
            Format::Text => "text",
        }
    }

    /// Whether this is another checker's format (read by `read::peers`,
    /// from files only, as rw-register histories without real time).
    pub fn is_peer(self) -> bool {
        match self {
            Format::Edn | Format::Json => false,
            Format::Dbcop | Format::Cobra | Format::Text => true,
        }
    }
}

impl History {
    /// The micro-ops of an op (empty unless its value is a micro-op vector).
    pub fn mops(&self, op: &Op) -> &[Mop] {
        match op.value {
            OpValue::Mops { start, len } => &self.mops[start as usize..(start + len) as usize],
            _ => &[],
        }
    }

    /// The elements of a list argument (empty for non-lists).
    pub fn list(&self, arg: MopArg) -> &[Atom] {
        match arg {
            MopArg::List { start, len } => &self.elements[start as usize..(start + len) as usize],
            _ => &[],
        }
    }

    /// The invocation paired with the op at position `i`, if `i` is a
    /// completion that has one.
    pub fn invocation_of(&self, i: usize) -> Option<usize> {
        let op = &self.ops[i];
        if op.op_type == OpType::Invoke {
            return None;
        }
        match self.pair[i] {
            NO_OP => None,
            j => Some(j as usize),
        }
    }

    /// The completion paired with the op at position `i`, if `i` is an
    /// invocation that has one.
    pub fn completion_of(&self, i: usize) -> Option<usize> {
        let op = &self.ops[i];
        if op.op_type != OpType::Invoke {
            return None;
        }
        match self.pair[i] {
            NO_OP => None,
            j => Some(j as usize),
        }
    }

    /// The EDN value of an atom.
    pub fn atom_value(&self, atom: Atom) -> Value {
        self.interner.value(atom)
    }

    /// The 1-based line of the op at position `pos`: as read, or counted in
    /// the source when reading left it unnumbered (a big history read in
    /// parts skips the pass over its newlines: 7% of reading, issue 23).
    pub fn line(&self, pos: usize) -> u32 {
        let span = self.ops[pos].span;
        if span.line != 0 {
            return span.line;
        }
        let newlines = self.source.newlines_before(span.start);
        u32::try_from(newlines + 1).unwrap_or(u32::MAX)
    }

    /// An input error pointing at the op at position `pos` (its line, and
    /// the column of its opening brace).
    pub fn error_at(&self, pos: usize, message: String) -> crate::error::InputError {
        let span = self.ops[pos].span;
        // The column: characters between the line's start and the op.
        let back = span.start.min(4096);
        let before = self.source.slice(Span {
            start: span.start - back,
            len: back as u32,
            line: 0,
        });
        let line_start = memchr::memrchr(b'\n', &before).map_or(0, |p| p + 1);
        let column = 1 + before[line_start..]
            .iter()
            .filter(|&&b| (b & 0xC0) != 0x80)
            .count();
        crate::error::InputError {
            kind: Default::default(),
            file: self.origin.clone(),
            line: self.line(pos),
            column: column as u32,
            message,
        }
    }
}

/// Printing ops and micro-ops as Elle prints them (the model's own view of
/// itself, so that inference and checking need not call into the reports).
impl History {
    /// The op at position `pos` as Elle prints it: a map with `:index
    /// :time :type :process :f :value` first, then any extra keys from the
    /// source.
    pub fn op_value(&self, pos: usize) -> Value {
        self.op_map(&self.ops[pos])
    }

    /// The full op map of an op, re-read from its source text, in Elle's key
    /// order: `:index :time :type :process :f :value`, then the other keys in
    /// source order. `:index` is the op's (dense when the source has none),
    /// `:time` and `:f` are filled in when absent.
    pub fn op_map(&self, op: &Op) -> Value {
        let history = self;
        let text = history.source.slice(op.span);
        let text: &[u8] = &text;
        let parsed = match history.format {
            Format::Edn | Format::Dbcop | Format::Cobra | Format::Text => {
                crate::edn::parse_one(text).ok()
            }
            Format::Json => crate::edn::parse_json(text)
                .ok()
                .map(crate::edn::json::json_op),
        };
        let mut source_entries = match parsed {
            Some(Value::Map(e)) => e,
            _ => Vec::new(),
        };
        let mut take = |name: &str| {
            source_entries
                .iter()
                .position(|(k, _)| matches!(k, Value::Keyword(n) if n == name))
                .map(|p| source_entries.remove(p).1)
        };
        let _ = take("index");
        let time = take("time").unwrap_or(Value::Int(op.time));
        let op_type = take("type").unwrap_or_else(|| Value::kw(op.op_type.name()));
        let process = take("process").unwrap_or(Value::Int(op.process));
        let f = take("f").unwrap_or_else(|| history.atom_value(op.f));
        let value = take("value").unwrap_or(Value::Nil);
        let mut entries = vec![
            (Value::kw("index"), Value::Int(op.index as i64)),
            (Value::kw("time"), time),
            (Value::kw("type"), op_type),
            (Value::kw("process"), process),
            (Value::kw("f"), f),
            (Value::kw("value"), value),
        ];
        entries.extend(source_entries);
        Value::Map(entries)
    }

    /// Whether some micro-op is a predicate read or write.
    pub fn has_predicates(&self) -> bool {
        !self.predicates.is_empty()
    }

    /// A micro-op as an EDN vector `[f k v]` (`[:rp PRED RESULT]`, `[:wp
    /// PRED VALUE KEYS]` for predicate micro-ops, plus the declared
    /// universe if any).
    pub fn mop_value(&self, m: &Mop) -> Value {
        if let MopArg::Pred(i) = m.arg() {
            let p = &self.predicates[i as usize];
            let atom = |a: Option<Atom>| a.map_or(Value::Nil, |a| self.atom_value(a));
            let mut out = match p.write {
                None => vec![
                    Value::kw("rp"),
                    p.form.clone(),
                    Value::Map(
                        p.rows
                            .iter()
                            .map(|&(k, v)| (self.atom_value(k), atom(v)))
                            .collect(),
                    ),
                ],
                Some(w) => vec![
                    Value::kw("wp"),
                    p.form.clone(),
                    atom(w),
                    Value::Vector(p.rows.iter().map(|&(k, _)| self.atom_value(k)).collect()),
                ],
            };
            if let Some(u) = &p.universe {
                out.push(Value::Set(u.iter().map(|&k| self.atom_value(k)).collect()));
            }
            return Value::Vector(out);
        }
        let f = match m.f() {
            MopFn::Other(name) => self.interner.fn_value(name),
            f => Value::kw(f.keyword().unwrap_or_default()),
        };
        let arg = match m.arg() {
            MopArg::Nil | MopArg::Pred(_) => Value::Nil,
            MopArg::Atom(a) => self.atom_value(a),
            MopArg::List { .. } => Value::Vector(
                self.list(m.arg())
                    .iter()
                    .map(|&a| self.atom_value(a))
                    .collect(),
            ),
        };
        Value::Vector(vec![f, self.atom_value(m.key()), arg])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Detection in two halves answers as one pass does: the first deciding
    /// op in file order.
    #[test]
    fn detection_in_halves_takes_the_first_deciding_op() {
        let op = |v: &str| format!("{{:type :ok, :process 0, :f :txn, :value {v}}}\n");
        let cas = "{:type :ok, :process 0, :f :read, :value 1}\n".to_string();
        let cases = [
            (
                [
                    op("[[:w 1 1]]"),
                    op("[[:r 1 1]]"),
                    op("[[:append 1 2]]"),
                    cas.clone(),
                ],
                Workload::ListAppend,
            ),
            (
                [
                    op("[[:w 1 1]]"),
                    cas.clone(),
                    op("[[:append 1 2]]"),
                    op("[]"),
                ],
                Workload::CasRegister,
            ),
            (
                [
                    op("[[:r 1 1]]"),
                    op("[]"),
                    cas.clone(),
                    op("[[:append 1 2]]"),
                ],
                Workload::CasRegister,
            ),
            (
                [op("[[:r 1 1]]"), op("[]"), op("[[:w 1 2]]"), op("[]")],
                Workload::RwRegister,
            ),
            (
                [op("[[:w 1 1]]"), op("[]"), op("[[:r 1 2]]"), op("[]")],
                Workload::RwRegister,
            ),
            (
                [op("[[:r 1 1]]"), op("[]"), op("[[:r 1 2]]"), op("[]")],
                Workload::ListAppend,
            ),
        ];
        for (ops, want) in cases {
            let text = ops.concat();
            let h = crate::read::read_history_bytes(text.clone().into_bytes(), "h", Format::Edn)
                .expect("reads");
            assert_eq!(
                Workload::detect_splitting_from(&h, usize::MAX),
                want,
                "{text}"
            );
            assert_eq!(Workload::detect_splitting_from(&h, 0), want, "{text}");
        }
    }

    /// The sizes a million-transaction history's tables are made of.
    #[test]
    fn compact_sizes() {
        assert_eq!(std::mem::size_of::<Atom>(), 8);
        assert_eq!(std::mem::align_of::<Atom>(), 4);
        assert_eq!(std::mem::size_of::<Mop>(), 20);
        assert_eq!(std::mem::size_of::<Op>(), 64);
        // Order is the integers' order for inline integers.
        let a = |n| Atom::int(n).expect("inline");
        assert!(a(-3) < a(2) && a(2) < a(1 << 40));
    }
}
