//! The retained part of a watched history: one record per transaction
//! (invocation and completion), with what garbage collection needs (micro-ops
//! over the watcher's own interned atoms, file positions) and the op texts
//! that each round's check reads.
//!
//! The texts sit in one buffer ([`Store::texts`]), each followed by a
//! newline, which a round's history shares as its source text (no copy of
//! every retained op each round: on the 10M rw-register stream under
//! `strong-session-serializable` that copy was about 35 MB of each round's
//! peak). A forgotten or rewritten op's text stays in the buffer until
//! [`Store::compact`] copies the live ones into a new one.

use crate::edn::{pr_str, Value};
use crate::model::{Atom, Interner, MopFn, OpType};
use std::sync::Arc;

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
    /// Where the EDN text the round checks read (the source line, or a
    /// rendering) is in [`Store::texts`].
    pub text: TextRef,
    /// Its line in the input (for errors found by a round's check).
    pub line: u64,
    /// Where its `:value`'s micro-ops are (for [`super::build`]).
    pub shape: Shape,
}

/// Where an op's text is in [`Store::texts`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TextRef {
    /// Its first byte.
    pub at: u64,
    /// Its length (the newline after it not counted).
    pub len: u32,
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
    pub txns: super::by_start::ByStart<Txn>,
    /// The pending transaction (start position) of each process.
    pub open: hashbrown::HashMap<i64, u64>,
    /// What the pending transactions write: `(process, start, key,
    /// value)`, kept with `open` so that an op is checked against them
    /// without looking each pending transaction up ([`super::hold`] asks
    /// for every completion that read something).
    pub open_writes: Vec<(i64, u64, Atom, Atom)>,
    /// Interned keys, values and `:f`s (integers are inline and cost
    /// nothing).
    pub interner: Interner,
    /// Op texts, each followed by a newline (module docs); shared with the
    /// history a round checks while it checks.
    pub texts: Arc<Vec<u8>>,
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
        let mut out = Vec::with_capacity(ops.iter().map(|o| o.text.len as usize + 1).sum());
        let mut lines = Vec::with_capacity(ops.len());
        for o in ops {
            out.extend_from_slice(self.text(o.text));
            out.push(b'\n');
            lines.push(o.line);
        }
        (out, lines)
    }

    /// Appends an op's text (and a newline) to [`Store::texts`]. The buffer
    /// is copied only if a round's history still shares it, which never
    /// happens: the round drops its history before ops are read again.
    pub fn push_text(&mut self, text: &[u8]) -> TextRef {
        let texts = Arc::make_mut(&mut self.texts);
        let at = texts.len() as u64;
        texts.extend_from_slice(text);
        texts.push(b'\n');
        TextRef {
            at,
            len: text.len().min(u32::MAX as usize) as u32,
        }
    }

    /// An op's text (empty if the reference is out of range, which a
    /// reference from this store never is).
    pub fn text(&self, r: TextRef) -> &[u8] {
        let at = r.at as usize;
        self.texts.get(at..at + r.len as usize).unwrap_or(&[])
    }

    /// Replaces the completion text of the transaction starting at `start`
    /// with a rendering of its fields and current micro-ops (garbage
    /// collection trimmed its reads).
    pub fn rerender_completion(&mut self, start: u64) {
        let Some(t) = self.txns.get(&start) else {
            return;
        };
        let Some(comp) = t.comp.as_ref() else {
            return;
        };
        let text = self.render_op(t, comp, t.mops.as_deref());
        let r = self.push_text(&text);
        if let Some(c) = self.txns.get_mut(&start).and_then(|t| t.comp.as_mut()) {
            c.text = r;
        }
    }

    /// Copies the live texts (in stream order) into a new buffer when at
    /// least an eighth of it is texts of forgotten or rewritten ops; call
    /// after garbage collection, while no round's history shares it.
    pub fn compact(&mut self) {
        let live: usize = self
            .txns
            .values()
            .flat_map(|t| t.inv.iter().chain(t.comp.iter()))
            .map(|o| o.text.len as usize + 1)
            .sum();
        let total = self.texts.len();
        if total.saturating_sub(live) * 8 <= total {
            return;
        }
        let old = std::mem::take(&mut self.texts);
        let mut recs: Vec<&mut OpRec> = self
            .txns
            .values_mut()
            .flat_map(|t| t.inv.iter_mut().chain(t.comp.iter_mut()))
            .collect();
        recs.sort_unstable_by_key(|o| o.pos);
        // Room for the next round's ops too, about as many as this round's
        // (sized to what is live, the next round's pushes copied the buffer
        // as it doubled, a tenth of the intake); pages not written to stay
        // unmapped.
        let mut out = Vec::with_capacity(total.max(live));
        for o in recs {
            let at = o.text.at as usize;
            let at_new = out.len() as u64;
            out.extend_from_slice(old.get(at..at + o.text.len as usize).unwrap_or(&[]));
            out.push(b'\n');
            o.text.at = at_new;
        }
        self.texts = Arc::new(out);
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
