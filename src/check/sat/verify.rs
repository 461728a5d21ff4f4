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
    Ok(())
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
