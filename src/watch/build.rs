//! The history a round checks, built from the retained, already parsed ops
//! (no rendering to EDN and parsing again, which used to cost each round as
//! much as reading its ops from scratch).
//!
//! The result equals what reading the rendered text ([`Store::render`])
//! gives: the same ops, pairs, micro-ops and list elements, the same source
//! text (op printing and error columns re-read it), and an interner filled
//! in the order the reader fills it (`nil` first, then each op's `:f` and
//! its micro-ops' atoms in stream order) for texts that put `:f` before
//! `:value`, as Jepsen, `gen` and the watcher's own renderings do. Where the
//! interner's order could still differ (interned keys or values in a text
//! with `:value` first), the caller reads the text instead while the last
//! round's outcome may become the final map ([`super::Watcher::round`]).

use super::store::{Arg, OpRec, Shape, Store, Txn, WMop};
use crate::edn::Value;
use crate::model::{
    Atom, Format, History, Interner, Mop, MopArg, MopFn, Op, OpValue, SourceText, Span, NO_OP,
};

/// The retained history and each op's input line (by rendered line), or
/// `None` when some retained op's `:value` is not a micro-op vector (the
/// caller renders and reads those).
pub fn history(store: &Store, origin: &str) -> Option<(History, Vec<u64>)> {
    // By position, the key kept beside each op (sorting through the
    // pointers missed the cache on most comparisons).
    let mut ops: Vec<(u64, &OpRec, &Txn)> = Vec::with_capacity(store.txns.len() * 2);
    for t in store.txns.values() {
        for o in t.inv.iter().chain(&t.comp) {
            ops.push((o.pos, o, t));
        }
    }
    ops.sort_unstable_by_key(|&(pos, _, _)| pos);
    let mut h = History {
        origin: origin.to_string(),
        format: Format::Edn,
        ..History::default()
    };
    h.nil_atom = h.interner.atom(&Value::Nil);
    let mut lines = Vec::with_capacity(ops.len());
    let mut map = Remap {
        to: vec![None; store.interner.len()],
        from: &store.interner,
    };
    let mut open: hashbrown::HashMap<i64, u32> = hashbrown::HashMap::new();
    h.ops.reserve_exact(ops.len());
    h.pair.reserve_exact(ops.len());
    // Exactly: doubling left up to half of the largest array unused.
    h.mops
        .reserve_exact(ops.iter().map(|(_, o, t)| mop_count(o, t)).sum());
    for (_, o, t) in ops {
        // The op's text where the store keeps it: the history shares the
        // store's buffer (ops need not be contiguous in it, only each on
        // its own line).
        let span = Span {
            start: o.text.at,
            len: o.text.len,
            line: lines.len() as u32 + 1,
        };
        lines.push(o.line);
        let f = map.atom(&mut h.interner, t.f);
        let is_inv = o.op_type == crate::model::OpType::Invoke;
        // The invocation of a completed transaction holds the completion's
        // micro-ops with reads unobserved, unless it said otherwise.
        let value = match (&o.shape, &t.mops) {
            (Shape::Plain, _) | (Shape::Txn, None) => return None,
            (Shape::Own(ms), _) => push_mops(&mut h, &mut map, ms, false)?,
            (Shape::Txn, Some(ms)) => push_mops(&mut h, &mut map, ms, is_inv && t.comp.is_some())?,
        };
        let pos = h.ops.len() as u32;
        let mut partner = NO_OP;
        if is_inv {
            open.insert(t.process, pos);
        } else if let Some(inv) = open.remove(&t.process) {
            partner = inv;
            h.pair[inv as usize] = pos;
        }
        h.pair.push(partner);
        h.ops.push(Op {
            index: o.index,
            time: o.time,
            op_type: o.op_type,
            process: t.process,
            f,
            value,
            span,
        });
    }
    h.source = SourceText::Bytes(store.texts.clone());
    Some((h, lines))
}

/// How many micro-ops [`history`] stores for an op.
fn mop_count(o: &OpRec, t: &Txn) -> usize {
    match (&o.shape, &t.mops) {
        (Shape::Own(ms), _) => ms.len(),
        (Shape::Txn, Some(ms)) => ms.len(),
        _ => 0,
    }
}

/// Store atoms as the new history's (integers are inline in both).
struct Remap<'a> {
    to: Vec<Option<Atom>>,
    from: &'a Interner,
}

impl Remap<'_> {
    fn atom(&mut self, into: &mut Interner, a: Atom) -> Atom {
        let Some(slot) = a.interned_slot() else {
            return a;
        };
        if let Some(b) = self.to[slot] {
            return b;
        }
        let b = into.atom(&self.from.value(a));
        self.to[slot] = Some(b);
        b
    }
}

/// Appends micro-ops (reads as `nil` when `unobserved`) in the reader's
/// interning order: function, key, argument. `None` when a function's
/// name is past what a micro-op holds (the caller then reads the text,
/// which names the op).
fn push_mops(h: &mut History, map: &mut Remap, ms: &[WMop], unobserved: bool) -> Option<OpValue> {
    let start = h.mops.len() as u32;
    for m in ms {
        let f = match m.f {
            MopFn::Other(name) => MopFn::Other(h.interner.fn_name(&map.from.fn_value(name))?),
            f => f,
        };
        let key = map.atom(&mut h.interner, m.key);
        let arg = match &m.arg {
            _ if unobserved && m.f == MopFn::Read => MopArg::Nil,
            Arg::Nil => MopArg::Nil,
            Arg::Atom(a) => MopArg::Atom(map.atom(&mut h.interner, *a)),
            Arg::List(l) => {
                let s = h.elements.len() as u32;
                for &a in l {
                    let b = map.atom(&mut h.interner, a);
                    h.elements.push(b);
                }
                MopArg::List {
                    start: s,
                    len: l.len() as u32,
                }
            }
        };
        h.mops.push(Mop::new(f, key, arg));
    }
    Some(OpValue::Mops {
        start,
        len: ms.len() as u32,
    })
}

/// The shape of an invocation given the completion's micro-ops: derivable
/// ([`Shape::Txn`]) when they are the same with every read unobserved.
pub fn invocation_shape(inv: &[WMop], comp: &[WMop]) -> Shape {
    let same = inv.len() == comp.len()
        && inv.iter().zip(comp).all(|(i, c)| {
            i.f == c.f
                && i.key == c.key
                && if i.f == MopFn::Read {
                    i.arg == Arg::Nil
                } else {
                    i.arg == c.arg
                }
        });
    if same {
        Shape::Txn
    } else {
        Shape::Own(inv.to_vec().into_boxed_slice())
    }
}

#[cfg(test)]
mod tests {
    use super::super::{WatchOptions, Watcher};
    use crate::gen::{FenceOptions, GenOptions};
    use crate::model::{Format, History, MopArg, Workload};

    /// Feeds `text` to a watcher without collection (everything retained)
    /// and compares the built history with the rendered text read back:
    /// every table the checkers use must be equal, interner order included.
    fn same_as_reading(text: &[u8]) {
        let mut w = Watcher::new(WatchOptions {
            collect: false,
            ..WatchOptions::for_tests(None)
        });
        w.ingest(text.to_vec()).unwrap();
        let (built, lines) = super::history(&w.store, "t").expect("micro-op values");
        let (rendered, rlines) = w.store.render();
        let read = crate::read::read_history_bytes(rendered, "t", Format::Edn).unwrap();
        assert_eq!(lines, rlines);
        // Equal up to where each op's text is: a held op's text is pushed
        // to the store's buffer when it is fed, after later ops' (`hold`).
        let ops = |h: &History| {
            let op = |o: &crate::model::Op| {
                let text = h.source.slice(o.span).into_owned();
                let mut o = *o;
                o.span.start = 0;
                (o, text)
            };
            h.ops.iter().map(op).collect::<Vec<_>>()
        };
        assert_eq!(ops(&built), ops(&read));
        assert_eq!(built.pair, read.pair);
        // Micro-ops equal up to where their lists are stored (the reader
        // shares a prefix read's elements with the longest list so far).
        let stored = |h: &History, m: &crate::model::Mop| {
            let list = matches!(m.arg(), MopArg::List { .. }).then(|| h.list(m.arg()).to_vec());
            let arg = if list.is_some() { MopArg::Nil } else { m.arg() };
            (m.f(), m.key(), arg, list)
        };
        assert_eq!(built.mops.len(), read.mops.len());
        for (b, r) in built.mops.iter().zip(&read.mops) {
            assert_eq!(stored(&built, b), stored(&read, r));
        }
        assert_eq!(built.nil_atom, read.nil_atom);
        assert_eq!(built.non_client_ops, read.non_client_ops);
        // Same values in the same slots: absorbing the read interner into
        // a copy of the built one adds nothing and maps each slot to itself.
        assert_eq!(built.interner.len(), read.interner.len());
        let mut both = built.interner.clone();
        let slots = both.absorb(&read.interner);
        assert_eq!(both.len(), built.interner.len());
        for (i, a) in slots.iter().enumerate() {
            assert_eq!(a.interned_slot(), Some(i));
        }
        let src = |h: &History| {
            h.source
                .slice(crate::model::Span {
                    start: 0,
                    len: u32::MAX,
                    line: 0,
                })
                .len()
        };
        assert_eq!(src(&built), src(&read));
    }

    fn generated(workload: Workload, fences: bool, info: f64) -> Vec<u8> {
        let opts = GenOptions {
            workload,
            txns: 400,
            processes: 5,
            keys: 6,
            fail_fraction: 0.1,
            info_fraction: info,
            seed: 7,
            ..GenOptions::default()
        };
        let mut out = Vec::new();
        let f = fences.then_some(FenceOptions { every: 5, key: -1 });
        crate::gen::generate_fenced(&opts, f, &mut out).unwrap();
        out
    }

    #[test]
    fn built_history_equals_the_rendered_text_read_back() {
        same_as_reading(&generated(Workload::ListAppend, false, 0.05));
        same_as_reading(&generated(Workload::RwRegister, true, 0.05));
        same_as_reading(&generated(Workload::RwRegister, false, 0.0));
        // Interned keys and values, no :index, a non-standard mop, an
        // invocation that is not its completion with reads unobserved, extra
        // keys, and a pending transaction.
        same_as_reading(
            b"{:type :invoke, :process 0, :f :txn, :value [[:append :x \"a\"] [:r :y nil]]}\n\
              {:type :invoke, :process 1, :f :go, :value [[:r :x [7]] [:frob :z 1]]}\n\
              {:type :ok, :process 0, :f :txn, :value [[:append :x \"a\"] [:r :y [:q]]], :extra 1}\n\
              {:type :info, :process 1, :f :go, :value [[:r :x [\"a\"]] [:frob :z 1]]}\n\
              {:type :invoke, :process 2, :time 5, :f :txn, :value [[:r :x nil]]}\n",
        );
    }
}
