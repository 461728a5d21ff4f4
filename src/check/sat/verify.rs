//! Re-checking a reported cycle against the history, and naming it in
//! Elle's vocabulary.

use super::{CycleEdge, EdgeKind, PredSeen, PredTable, RegHistory, RegValue, RwMop};

/// Re-checks a reported cycle against the history: consecutive edges, and
/// every edge justified by the transactions' reads and writes. Returns a
/// description of the first problem.
pub fn verify_cycle(h: &RegHistory, cycle: &[CycleEdge]) -> Result<(), String> {
    verify_cycle_with(h, &PredTable::default(), cycle)
}

/// [`verify_cycle`] for a history with predicate micro-ops: a predicate
/// edge needs the predicate's view of the key to fit the version.
pub fn verify_cycle_with(
    h: &RegHistory,
    preds: &PredTable,
    cycle: &[CycleEdge],
) -> Result<(), String> {
    if cycle.is_empty() {
        return Err("empty cycle".into());
    }
    let fw = |t: u32, k: u64| -> Option<RegValue> {
        if t == 0 {
            return Some(None);
        }
        let mut r = None;
        for op in &h[t as usize - 1].ops {
            if let RwMop::Write(kk, v) = *op {
                if kk == k {
                    r = Some(v);
                }
            }
        }
        r
    };
    let er = |t: u32, k: u64| -> Option<RegValue> {
        if t == 0 || !h[t as usize - 1].committed {
            return None;
        }
        for op in &h[t as usize - 1].ops {
            match *op {
                RwMop::Read(kk, v) if kk == k => return Some(v),
                RwMop::Write(kk, _) if kk == k => return None,
                _ => {}
            }
        }
        None
    };
    // Whether committed `t`'s predicate micro-op `p` saw `k` in a version
    // holding `v` (before any write of its own to `k`).
    let pred_saw = |t: u32, p: u32, k: u64, v: RegValue| -> bool {
        if t == 0 || !h[t as usize - 1].committed {
            return false;
        }
        for op in &h[t as usize - 1].ops {
            match *op {
                RwMop::Write(kk, _) if kk == k => return false,
                RwMop::PredRead { key, pred, seen } if key == k && pred == p => {
                    return match seen {
                        PredSeen::Returned(x) => x == v,
                        PredSeen::Matched => preds.eval(p, v),
                        PredSeen::Missed => !preds.eval(p, v),
                    }
                }
                _ => {}
            }
        }
        false
    };
    for (i, e) in cycle.iter().enumerate() {
        let next = cycle[(i + 1) % cycle.len()];
        if e.to != next.from {
            return Err(format!(
                "edge {i} does not meet edge {}",
                (i + 1) % cycle.len()
            ));
        }
        let ok = match e.kind {
            EdgeKind::Init => e.from == 0 && e.to != 0,
            EdgeKind::Process => {
                e.from != 0
                    && e.from < e.to
                    && h[e.from as usize - 1].process == h[e.to as usize - 1].process
            }
            EdgeKind::Realtime => {
                e.from != 0 && e.to != 0 && h[e.to as usize - 1].realtime_preds.contains(&e.from)
            }
            EdgeKind::Wr { key, value } => {
                e.from != e.to && fw(e.from, key) == Some(value) && er(e.to, key) == Some(value)
            }
            EdgeKind::Ww { key } => {
                e.from != e.to && e.to != 0 && fw(e.from, key).is_some() && fw(e.to, key).is_some()
            }
            EdgeKind::Rw { key, via } => {
                e.from != e.to
                    && e.to != 0
                    && via != e.to
                    && via != e.from
                    && fw(via, key).is_some()
                    && er(e.from, key) == fw(via, key)
                    && fw(e.to, key).is_some()
            }
            EdgeKind::PredWr { key, value, pred } => {
                e.from != e.to && fw(e.from, key) == Some(value) && pred_saw(e.to, pred, key, value)
            }
            EdgeKind::PredRw { key, via, pred } => {
                e.from != e.to
                    && e.to != 0
                    && via != e.to
                    && via != e.from
                    && fw(via, key).is_some_and(|v| pred_saw(e.from, pred, key, v))
                    && fw(e.to, key).is_some()
            }
        };
        if !ok {
            return Err(format!("edge {i} ({e:?}) is not justified by the history"));
        }
    }
    jointly_possible(cycle)
}

/// Whether one resolution of the history has every edge of `cycle` at
/// once: each reader reads one writer per key, and each key's write-order
/// steps (`ww`, and an `rw` step's "read version before the writer's")
/// fit one total order. Each edge alone may be justified while the set is
/// not (with repeated values, the solver's last conflict can be a cycle of
/// write-order literals alone, which no single version order has).
fn jointly_possible(cycle: &[CycleEdge]) -> Result<(), String> {
    use hashbrown::HashMap;
    // A predicate micro-op reads on its own (weak models let one
    // transaction's reads of a key see different versions).
    let mut read_from: HashMap<(u32, u64, Option<u32>), u32> = HashMap::new();
    let mut before: HashMap<u64, Vec<(u32, u32)>> = HashMap::new();
    for e in cycle {
        let (reader, key, pred, writer) = match e.kind {
            EdgeKind::Wr { key, .. } => (e.to, key, None, e.from),
            EdgeKind::PredWr { key, pred, .. } => (e.to, key, Some(pred), e.from),
            EdgeKind::Rw { key, via } => {
                before.entry(key).or_default().push((via, e.to));
                (e.from, key, None, via)
            }
            EdgeKind::PredRw { key, via, pred } => {
                before.entry(key).or_default().push((via, e.to));
                (e.from, key, Some(pred), via)
            }
            EdgeKind::Ww { key } => {
                before.entry(key).or_default().push((e.from, e.to));
                continue;
            }
            _ => continue,
        };
        if *read_from.entry((reader, key, pred)).or_insert(writer) != writer {
            return Err(format!(
                "transaction {reader} reads key {key} from two writers"
            ));
        }
    }
    let mut keys: Vec<_> = before.into_iter().collect();
    keys.sort_unstable_by_key(|(k, _)| *k);
    for (key, pairs) in keys {
        if !acyclic(&pairs) {
            return Err(format!(
                "the write-order steps on key {key} contradict each other: {pairs:?} in {cycle:?}"
            ));
        }
    }
    Ok(())
}

/// Whether the relation `pairs` (a before b) has no cycle, over the few
/// transactions one cycle names.
fn acyclic(pairs: &[(u32, u32)]) -> bool {
    let mut ids: Vec<u32> = pairs.iter().flat_map(|&(a, b)| [a, b]).collect();
    ids.sort_unstable();
    ids.dedup();
    let at = |t: u32| ids.binary_search(&t).unwrap_or(0) as u32;
    let mut out: Vec<Vec<u32>> = vec![Vec::new(); ids.len()];
    for &(a, b) in pairs {
        out[at(a) as usize].push(at(b));
    }
    crate::graph::topological_order(ids.len(), |v| out[v as usize].iter().copied()).is_some()
}

/// Elle's anomaly type for a cycle ([`crate::check::classify_kinds`]): G0,
/// G1c, G-single-item, G2-item or G-nonadjacent-item, `-process` when it
/// uses session order. A cycle through a predicate edge is Adya's
/// predicate-level anomaly: `G-single`, `G-nonadjacent`, `G2` (no `-item`).
pub fn classify_cycle(cycle: &[CycleEdge]) -> String {
    let name = classify_items(cycle);
    let predicate = cycle
        .iter()
        .any(|e| matches!(e.kind, EdgeKind::PredWr { .. } | EdgeKind::PredRw { .. }));
    match predicate {
        true => name.replacen("-item", "", 1),
        false => name,
    }
}

fn classify_items(cycle: &[CycleEdge]) -> String {
    use crate::infer::StepKind;
    let kinds: Vec<StepKind> = cycle
        .iter()
        .map(|e| match e.kind {
            EdgeKind::Process => StepKind::Process,
            EdgeKind::Realtime => StepKind::Realtime,
            EdgeKind::Wr { .. } | EdgeKind::PredWr { .. } => StepKind::Wr,
            EdgeKind::Rw { .. } | EdgeKind::PredRw { .. } => StepKind::Rw,
            // The initial transaction has no predecessor, so its edges never
            // lie on a cycle; counting them as ww would be harmless.
            EdgeKind::Ww { .. } | EdgeKind::Init => StepKind::Ww,
        })
        .collect();
    crate::check::classify_kinds(&kinds)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ww(from: u32, to: u32) -> CycleEdge {
        CycleEdge {
            from,
            to,
            kind: EdgeKind::Ww { key: 1 },
        }
    }

    #[test]
    fn write_order_steps_that_no_version_order_has_are_refused() {
        // a < b < c < a on one key: each step alone is possible.
        let cycle = [ww(1, 2), ww(2, 3), ww(3, 1)];
        assert_eq!(
            jointly_possible(&cycle),
            Err(format!(
                "the write-order steps on key 1 contradict each other: {:?} in {:?}",
                [(1, 2), (2, 3), (3, 1)],
                cycle
            ))
        );
        // An rw step orders the version read before the writer: 2 read
        // 1's version, 3 wrote after it, and 3 < 1 contradicts it.
        let rw = CycleEdge {
            from: 2,
            to: 3,
            kind: EdgeKind::Rw { key: 1, via: 1 },
        };
        assert!(jointly_possible(&[rw, ww(3, 1)]).is_err());
        assert_eq!(jointly_possible(&[ww(1, 2), ww(2, 3)]), Ok(()));
    }
}
