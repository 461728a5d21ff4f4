//! Conversion of a rw-register [`History`] into the checker's
//! [`RegHistory`]: dense key and value ids, `:info` writes, predicate
//! micro-ops expanded per key, real-time predecessors.

use super::{predicates, PredSeen, PredTable, RegHistory, RegTxn, RwMop};
use crate::model::{History, MopArg, MopFn, OpType};

/// Converts a rw-register [`History`]: `:ok` completions with their micro-ops,
/// `:info` completions with the writes of their invocation (reads dropped),
/// `:fail` skipped. Keys and values become dense ids into the returned atom
/// table; micro-ops other than `:r`/`:w` are an error naming the op.
/// With `real_time`, real-time predecessors come from Elle's real-time graph
/// (its transitive reduction); without, they are left empty (the sweep
/// costs a pass over the history that only strict models use).
pub fn reg_history(
    h: &History,
    real_time: bool,
) -> Result<(RegHistory, Vec<crate::model::Atom>), String> {
    reg_history_with_predicates(h, real_time, false).map(|(rh, table, _)| (rh, table))
}

/// [`reg_history`], predicate micro-ops included: a predicate read becomes
/// one [`RwMop::PredRead`] per returned row and per key of the universe
/// that some written value could make it return (see `predicates`); a
/// predicate write also writes its value to the keys it matched. Returns
/// the predicates and values to evaluate them with. With `time_window`
/// (every model checked keeps real-time order) an unreturned row counts
/// only when a version the read can have seen in real time matches
/// (`predicates::TimeIndex`).
#[allow(clippy::type_complexity)]
pub fn reg_history_with_predicates(
    h: &History,
    real_time: bool,
    time_window: bool,
) -> Result<(RegHistory, Vec<crate::model::Atom>, PredTable), String> {
    // Long (over 120 lines): one pass over the ops; the predicate expansion shares
    // the atom table and the windows with the plain micro-ops.
    let universe = h.has_predicates().then(|| predicates::Universe::new(h));
    // Per predicate micro-op of an `:ok` op, its relevant keys, when the
    // real-time windows decide them.
    let mut windowed: Vec<Option<Vec<u32>>> = vec![None; h.predicates.len()];
    if let (Some(u), true) = (&universe, time_window) {
        let mut reads: Vec<(usize, &crate::model::Pred)> = Vec::new();
        let mut which: Vec<u32> = Vec::new();
        for (i, op) in h.ops.iter().enumerate() {
            if op.op_type != OpType::Ok {
                continue;
            }
            for m in h.mops(op) {
                if let MopArg::Pred(p) = m.arg() {
                    reads.push((i, &h.predicates[p as usize].pred));
                    which.push(p);
                }
            }
        }
        let index = predicates::TimeIndex::new(h, u);
        for (p, keys) in which.into_iter().zip(index.relevant(h, &reads)) {
            windowed[p as usize] = Some(keys);
        }
    }
    let mut table: Vec<crate::model::Atom> = Vec::new();
    let mut ids: hashbrown::HashMap<crate::model::Atom, u64> = Default::default();
    let mut id = |a: crate::model::Atom| {
        *ids.entry(a).or_insert_with(|| {
            table.push(a);
            table.len() as u64 - 1
        })
    };
    let mut out = Vec::new();
    // Graph id of each op position that becomes a transaction.
    let mut graph_id: Vec<u32> = vec![0; h.ops.len()];
    for (i, op) in h.ops.iter().enumerate() {
        let committed = match op.op_type {
            OpType::Ok => true,
            OpType::Info => false,
            _ => continue,
        };
        let invoked = h.invocation_of(i).unwrap_or(i);
        let src = if committed { op } else { &h.ops[invoked] };
        let mut ops = Vec::new();
        for m in h.mops(src) {
            if let (MopArg::Pred(p), Some(u)) = (m.arg(), &universe) {
                let pm = &h.predicates[p as usize];
                if committed {
                    for &(k, v) in &pm.rows {
                        let seen = match pm.write {
                            None => PredSeen::Returned(v.map(&mut id)),
                            Some(_) => PredSeen::Matched,
                        };
                        ops.push(RwMop::PredRead {
                            key: id(k),
                            pred: p,
                            seen,
                        });
                    }
                    let relevant = match windowed[p as usize].take() {
                        Some(keys) => keys,
                        None => u.relevant(&pm.pred),
                    };
                    for k in relevant {
                        let k = u.keys[k as usize];
                        if pm.ranges_over(k) && !pm.rows.iter().any(|r| r.0 == k) {
                            ops.push(RwMop::PredRead {
                                key: id(k),
                                pred: p,
                                seen: PredSeen::Missed,
                            });
                        }
                    }
                }
                if let Some(w) = pm.write {
                    let w = w.map(&mut id);
                    for &(k, _) in &pm.rows {
                        ops.push(RwMop::Write(id(k), w));
                    }
                }
                continue;
            }
            let key = id(m.key());
            let value = match m.arg() {
                MopArg::Nil => None,
                MopArg::Atom(a) => Some(id(a)),
                MopArg::List { .. } | MopArg::Pred(_) => {
                    return Err(format!("op {}: list value", op.index))
                }
            };
            match m.f() {
                MopFn::Read if committed => ops.push(RwMop::Read(key, value)),
                MopFn::Read => {}
                MopFn::Write => ops.push(RwMop::Write(key, value)),
                _ => return Err(format!("op {}: micro-op other than :r/:w", op.index)),
            }
        }
        out.push(RegTxn {
            process: op.process,
            ops,
            committed,
            index: i as u64,
            invoked: invoked as u64,
            realtime_preds: Vec::new(),
        });
        graph_id[i] = out.len() as u32;
    }
    let realtime = if real_time {
        crate::infer::order_graphs::realtime_edges(h)
    } else {
        Vec::new()
    };
    for (a, b, _) in realtime {
        let (a, b) = (graph_id[a as usize], graph_id[b as usize]);
        if a != 0 && b != 0 {
            out[b as usize - 1].realtime_preds.push(a);
        }
    }
    let preds = PredTable {
        preds: h.predicates.iter().map(|p| p.pred.clone()).collect(),
        values: match universe {
            Some(_) => table.iter().map(|&a| h.atom_value(a)).collect(),
            None => Vec::new(),
        },
    };
    Ok((out, table, preds))
}

impl RwMop {
    /// The key the micro-op reads, writes or a predicate saw.
    pub fn key(&self) -> u64 {
        match *self {
            RwMop::Read(k, _) | RwMop::Write(k, _) => k,
            RwMop::PredRead { key, .. } => key,
        }
    }
}

/// One more than the largest key of `h` (keys are dense ids): the length
/// of a table by key.
pub(super) fn key_count(h: &RegHistory) -> usize {
    (h.iter().flat_map(|t| &t.ops))
        .map(|op| op.key() as usize + 1)
        .max()
        .unwrap_or(0)
}
