//! The retained part of a watched history: one record per transaction
//! (invocation and completion), with what garbage collection needs (micro-ops
//! over the watcher's own interned atoms, file positions) and the op texts
//! that each round's check reads.

use crate::edn::{pr_str, Value};
use crate::model::{Atom, Interner, MopFn, OpType};
use std::collections::BTreeMap;

/// A micro-op's argument, over the watcher's interner.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Arg {
    /// `nil` (an invocation's read, an unobserved read).
    Nil,
    /// A written value or appended element.
    Atom(Atom),
    /// A list read.
    List(Vec<Atom>),
}

/// A micro-op `[f k v]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WMop {
    /// `:r`, `:w`, `:append`, …
    pub f: MopFn,
    /// The key.
    pub key: Atom,
    /// Its argument or result.
    pub arg: Arg,
}

/// One op line (an invocation or a completion).
#[derive(Clone, Debug)]
pub struct OpRec {
    /// Client-op position in the whole stream (real time is file order).
    pub pos: u64,
    /// `:index`.
    pub index: u64,
    /// `:time`.
    pub time: i64,
    /// `:type`.
    pub op_type: OpType,
    /// The EDN text the round checks read (the source line, or a rendering).
    pub text: Box<[u8]>,
    /// Its line in the input (for errors found by a round's check).
    pub line: u64,
    /// Where its `:value`'s micro-ops are (for [`super::build`]).
    pub shape: Shape,
}

/// Where an op's micro-ops are kept.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Shape {
    /// The transaction's [`Txn::mops`] (for the invocation of a completed
    /// transaction: with every read unobserved, as Jepsen writes them).
    Txn,
    /// Its own (an invocation that is not the completion with reads
    /// unobserved).
    Own(Box<[WMop]>),
    /// `:value` is not a micro-op vector.
    Plain,
}

/// A transaction: its invocation, its completion once seen, and the
/// micro-ops of the completion (of the invocation while pending).
#[derive(Clone, Debug)]
pub struct Txn {
    /// `:process`.
    pub process: i64,
    /// `:f`, interned.
    pub f: Atom,
    /// The invocation, if the stream had one.
    pub inv: Option<OpRec>,
    /// The completion, once seen.
    pub comp: Option<OpRec>,
    /// Micro-ops (`None` when `:value` is not a micro-op vector).
    pub mops: Option<Vec<WMop>>,
}

impl Txn {
    /// Where the transaction starts (its invocation, else its completion).
    pub fn start(&self) -> u64 {
        self.inv
            .as_ref()
            .or(self.comp.as_ref())
            .map_or(0, |o| o.pos)
    }

    /// How it ended: `Invoke` while pending.
    pub fn outcome(&self) -> OpType {
        self.comp.as_ref().map_or(OpType::Invoke, |c| c.op_type)
    }

    /// The completion's position, if completed.
    pub fn end(&self) -> Option<u64> {
        self.comp.as_ref().map(|c| c.pos)
    }
}

/// The retained transactions, keyed by where they start (unique: one op per
/// position).
#[derive(Default, Debug)]
pub struct Store {
    /// Transactions by start position.
    pub txns: BTreeMap<u64, Txn>,
    /// The pending transaction (start position) of each process.
    pub open: hashbrown::HashMap<i64, u64>,
    /// Interned keys, values and `:f`s (integers are inline and cost
    /// nothing).
    pub interner: Interner,
}

impl Store {
    /// The EDN text of every retained op, in stream order, one per line:
    /// the history each round checks; and each rendered line's input line.
    pub fn render(&self) -> (Vec<u8>, Vec<u64>) {
        let mut ops: Vec<&OpRec> = Vec::with_capacity(self.txns.len() * 2);
        for t in self.txns.values() {
            ops.extend(t.inv.iter());
            ops.extend(t.comp.iter());
        }
        ops.sort_unstable_by_key(|o| o.pos);
        let mut out = Vec::with_capacity(ops.iter().map(|o| o.text.len() + 1).sum());
        let mut lines = Vec::with_capacity(ops.len());
        for o in ops {
            out.extend_from_slice(&o.text);
            out.push(b'\n');
            lines.push(o.line);
        }
        (out, lines)
    }

    /// An op's EDN text from its fields (used when garbage collection trims
    /// its reads): Elle's key order, no extra keys.
    pub fn render_op(&self, t: &Txn, op: &OpRec, mops: Option<&[WMop]>) -> Box<[u8]> {
        let value = match mops {
            None => Value::Nil,
            Some(ms) => Value::Vector(ms.iter().map(|m| self.mop_value(m)).collect()),
        };
        let map = Value::kw_map(vec![
            ("index", Value::Int(op.index as i64)),
            ("time", Value::Int(op.time)),
            ("type", Value::kw(op.op_type.name())),
            ("process", Value::Int(t.process)),
            ("f", self.interner.value(t.f)),
            ("value", value),
        ]);
        pr_str(&map).into_bytes().into_boxed_slice()
    }

    /// A micro-op as EDN.
    pub fn mop_value(&self, m: &WMop) -> Value {
        // (Predicate micro-ops are refused when read: `Watcher::ingest`.)
        let f = match m.f {
            MopFn::Other(name) => self.interner.fn_value(name),
            f => Value::kw(f.keyword().unwrap_or_default()),
        };
        let arg = match &m.arg {
            Arg::Nil => Value::Nil,
            Arg::Atom(a) => self.interner.value(*a),
            Arg::List(l) => Value::Vector(l.iter().map(|&a| self.interner.value(a)).collect()),
        };
        Value::Vector(vec![f, self.interner.value(m.key), arg])
    }
}
