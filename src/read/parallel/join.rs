//! Joining a part read on its own thread onto the history read so far: the
//! second half of [`super`]'s parallel reading (see its docs for why the
//! result is the one-pass reader's).

use super::super::Builder;
use crate::model::{Atom, Mop, MopArg, MopFn, Op, OpType, OpValue, NO_OP};

/// From this many micro-ops in a part, the join copies it on two threads
/// (below, a thread costs more than it saves).
const JOIN_ON_TWO_THREADS: usize = if cfg!(test) { 64 } else { 1 << 16 };

/// Appends one part's tables and ops to `b`, renumbering its atoms and
/// shifting its positions: a concatenation, but for the processes whose
/// invocation is still open in `b` (their first op in the part completes
/// it). `None`, before `b` is changed, when the sequential reader would
/// fail at the cut: indices that do not grow across it, a first op without
/// an `:index` where the history's have one, a process invoked again, too
/// many ops.
// Long (about 130 lines): the cut checks must all pass before `b` changes,
// and the two copying closures borrow disjoint fields of `b` and `part`.
pub(super) fn join(b: &mut Builder, part: Builder) -> Option<Spare> {
    let mut p = part;
    let first_of = p.first_of.as_ref()?;
    let indexed = match (b.indexed, p.indexed) {
        (None, x) | (x, None) => x,
        (Some(x), Some(y)) if x == y => Some(x),
        // The part decided otherwise than the history's first op.
        _ => return None,
    };
    if indexed == Some(true)
        && b.last_index
            .is_some_and(|l| p.first_index.is_none_or(|f| f <= l))
    {
        return None;
    }
    let ops0 = b.h.ops.len();
    if ops0 + p.h.ops.len() >= NO_OP as usize {
        return None;
    }
    // Every function name absorbed fits in a micro-op (else the
    // sequential reader names the op that is past the bound).
    if b.h.interner.len() + p.h.interner.len() > crate::model::FN_NAME_SLOTS {
        return None;
    }
    let mut fixups = Vec::new();
    for (process, pos) in first_of.iter() {
        if let Some(inv) = b.open.get(process) {
            if p.h.ops[pos as usize].op_type == OpType::Invoke {
                return None; // invoked again before completing
            }
            fixups.push((process, inv, pos + ops0 as u32));
        }
    }
    // Joinable: from here on `b` changes.
    let ops0 = ops0 as u32;
    let shift_index = if indexed == Some(true) { 0 } else { b.seen };
    b.indexed = indexed;
    b.seen += p.seen;
    b.last_index = p.last_index.or(b.last_index);
    b.h.non_client_ops += p.h.non_client_ops;
    let table = b.h.interner.absorb(&p.h.interner);
    let same = table
        .iter()
        .enumerate()
        .all(|(s, a)| a.interned_slot() == Some(s));
    let atom = |a: Atom| match a.interned_slot() {
        Some(s) if !same => table[s],
        _ => a,
    };
    let table_ref = &table;
    let (mops0, elements0) = (b.h.mops.len() as u32, b.h.elements.len() as u32);
    let others0 = b.h.other_values.len() as u32;
    let predicates0 = b.h.predicates.len() as u32;
    b.h.predicates.extend(
        std::mem::take(&mut p.h.predicates)
            .into_iter()
            .map(|mut p| {
                for (key, value) in &mut p.rows {
                    *key = atom(*key);
                    *value = value.map(atom);
                }
                p.write = p.write.map(|w| w.map(atom));
                p
            }),
    );
    b.h.other_values
        .extend(std::mem::take(&mut p.h.other_values));
    // The two halves of the copy (micro-ops and elements; ops and pairs)
    // write to different tables: a big part's are copied on two threads,
    // since the join runs after every part is read, on one core otherwise.
    let (elements, mops) = (&mut b.h.elements, &mut b.h.mops);
    let (p_elements, p_mops) = (&p.h.elements, &p.h.mops);
    let mut copy_values = move || {
        if same {
            elements.extend_from_slice(p_elements);
        } else {
            elements.reserve_exact(p_elements.len());
            elements.extend(p_elements.iter().map(|&a| atom(a)));
        }
        mops.reserve_exact(p_mops.len());
        mops.extend(p_mops.iter().map(|m| {
            let f = match m.f() {
                // Fits: the interners together are under the bound (above).
                MopFn::Other(name) if !same => {
                    MopFn::Other(name.absorbed(table_ref).unwrap_or(name))
                }
                f => f,
            };
            let arg = match m.arg() {
                MopArg::Atom(a) => MopArg::Atom(atom(a)),
                MopArg::List { start, len } => MopArg::List {
                    start: start + elements0,
                    len,
                },
                MopArg::Pred(i) => MopArg::Pred(i + predicates0),
                MopArg::Nil => MopArg::Nil,
            };
            Mop::new(f, atom(m.key()), arg)
        }));
    };
    let (ops, pair) = (&mut b.h.ops, &mut b.h.pair);
    let (p_ops, p_pair) = (&p.h.ops, &p.h.pair);
    let mut copy_ops = move || {
        ops.reserve_exact(p_ops.len());
        ops.extend(p_ops.iter().map(|op| Op {
            index: op.index + shift_index,
            f: atom(op.f),
            value: match op.value {
                OpValue::Mops { start, len } => OpValue::Mops {
                    start: start + mops0,
                    len,
                },
                OpValue::Other(i) => OpValue::Other(i + others0),
                OpValue::Nil => OpValue::Nil,
            },
            ..*op
        }));
        pair.reserve_exact(p_pair.len());
        pair.extend(
            p_pair
                .iter()
                .map(|&q| if q == NO_OP { q } else { q + ops0 }),
        );
    };
    if p_mops.len() >= JOIN_ON_TWO_THREADS {
        std::thread::scope(|scope| {
            scope.spawn(copy_values);
            copy_ops();
        });
    } else {
        copy_values();
        copy_ops();
    }
    for (process, inv, pos) in fixups {
        b.h.pair[inv as usize] = pos;
        b.h.pair[pos as usize] = inv;
        b.open.remove(process);
    }
    for (process, pos) in p.open.iter() {
        b.open.insert(process, pos + ops0);
    }
    Some(Spare::emptied(&mut p))
}

/// A joined part's biggest tables, emptied but holding their memory, for
/// the next block's part: a fresh part faulted its pages in again in every
/// block (page faults and zeroing were a tenth of a 1M-transaction
/// check's CPU, issue 23).
#[derive(Default)]
pub(super) struct Spare {
    ops: Vec<Op>,
    pair: Vec<u32>,
    mops: Vec<Mop>,
    elements: Vec<Atom>,
}

impl Spare {
    /// Takes `part`'s tables, emptied.
    fn emptied(part: &mut Builder) -> Spare {
        let mut spare = Spare {
            ops: std::mem::take(&mut part.h.ops),
            pair: std::mem::take(&mut part.h.pair),
            mops: std::mem::take(&mut part.h.mops),
            elements: std::mem::take(&mut part.h.elements),
        };
        spare.ops.clear();
        spare.pair.clear();
        spare.mops.clear();
        spare.elements.clear();
        spare
    }

    /// A part builder like `b`'s [`Builder::empty_like`], its tables these
    /// (empty: the same part as a fresh one).
    pub(super) fn part_of(self, b: &Builder) -> Builder {
        let mut part = b.empty_like();
        (part.h.ops, part.h.pair) = (self.ops, self.pair);
        (part.h.mops, part.h.elements) = (self.mops, self.elements);
        part
    }
}
