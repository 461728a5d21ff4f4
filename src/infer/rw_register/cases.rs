//! Elle's non-cycle cases of rw-register histories: `:internal`, `:G1a`,
//! `:G1b` (the mini-transaction path reports them too).

use super::*;

/// Elle's `op-internal-case` over every `:ok` op.
pub(crate) fn internal_cases(h: &History) -> Vec<Value> {
    internal_cases_in(h, 0..h.ops.len())
}

/// [`internal_cases`] of the ops at `range` (each op's case is its own:
/// the cases of consecutive ranges, joined, are the whole history's).
pub(crate) fn internal_cases_in(h: &History, range: std::ops::Range<usize>) -> Vec<Value> {
    let mut out = Vec::new();
    let mut state: Vec<(Atom, Val)> = Vec::new();
    // Keys' slots in `state`, for transactions too long to scan it per
    // micro-op (a predicate read over a table becomes one read per row).
    let mut slots: HashMap<Atom, usize> = HashMap::new();
    for i in range {
        let op = &h.ops[i];
        if op.op_type != OpType::Ok {
            continue;
        }
        state.clear();
        slots.clear();
        let mops = h.mops(op);
        let long = mops.len() > 16;
        for m in mops {
            let v = arg_val(m.arg());
            let slot = if long {
                slots.get(&m.key()).copied()
            } else {
                state.iter().position(|(k, _)| *k == m.key())
            };
            if m.f() == MopFn::Read {
                if let Some(j) = slot {
                    if state[j].1 != v {
                        out.push(Value::kw_map(vec![
                            ("op", h.op_value(i)),
                            ("mop", h.mop_value(m)),
                            ("expected", val_value(h, state[j].1)),
                        ]));
                        break;
                    }
                }
            }
            match slot {
                Some(j) => state[j].1 = v,
                None => {
                    if long {
                        slots.insert(m.key(), state.len());
                    }
                    state.push((m.key(), v));
                }
            }
        }
    }
    out
}

/// Elle's `g1a-cases`: `:ok` reads of values written by `:fail`ed ops.
pub(crate) fn g1a_cases(h: &History) -> Vec<Value> {
    let mut failed: HashMap<(Atom, Val), u32> = HashMap::new();
    for (i, op) in h.ops.iter().enumerate() {
        if op.op_type == OpType::Fail {
            for m in h.mops(op) {
                if m.f() == MopFn::Write {
                    failed.insert((m.key(), arg_val(m.arg())), i as u32);
                }
            }
        }
    }
    reads_of(h, &failed, false)
}

/// Elle's `g1b-cases`: `:ok` reads of values some other op overwrote within
/// its own transaction.
pub(crate) fn g1b_cases(h: &History) -> Vec<Value> {
    let intermediate =
        crate::infer::txn::intermediate_writes(h, MopFn::Write, |m| arg_val(m.arg()));
    reads_of(h, &intermediate, true)
}

/// The `:ok` reads of a value `writers` names (key, value → writer's
/// position), as Elle's `{:op :mop :writer}` cases; `skip_own` drops reads
/// whose writer is the reading op itself.
/// In two halves of the ops when a core is free (issue 23), joined in op
/// order.
fn reads_of(h: &History, writers: &HashMap<(Atom, Val), u32>, skip_own: bool) -> Vec<Value> {
    if writers.is_empty() {
        return Vec::new();
    }
    let [mut a, b] = crate::par::halves(h.ops.len(), crate::par::SPLIT_FROM, |r| {
        reads_of_in(h, writers, skip_own, r)
    });
    a.extend(b);
    a
}

/// [`reads_of`] over the ops at `range`.
fn reads_of_in(
    h: &History,
    writers: &HashMap<(Atom, Val), u32>,
    skip_own: bool,
    range: std::ops::Range<usize>,
) -> Vec<Value> {
    let mut out = Vec::new();
    for (i, op) in h.ops.iter().enumerate().take(range.end).skip(range.start) {
        if op.op_type != OpType::Ok {
            continue;
        }
        for m in h.mops(op) {
            if m.f() != MopFn::Read {
                continue;
            }
            if let Some(&w) = writers.get(&(m.key(), arg_val(m.arg()))) {
                if !skip_own || h.ops[w as usize].index != op.index {
                    out.push(Value::kw_map(vec![
                        ("op", h.op_value(i)),
                        ("mop", h.mop_value(m)),
                        ("writer", h.op_value(w as usize)),
                    ]));
                }
            }
        }
    }
    out
}
