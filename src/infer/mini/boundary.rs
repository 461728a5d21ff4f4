//! `:not` / `:also-not` for cycles that rest on an `:info` write's
//! placement.
//!
//! Under models that proscribe G-single, an observed `:info` write whose
//! predecessor no read reveals is placed after its key's last version
//! (`attach_info`): anywhere else, it would fall between a version and the
//! read-modify-write that follows it, a G-single-item (the writer of that
//! version's successor read it, so rw-precedes the `:info` transaction,
//! which ww-precedes it). So the verdict under those models is exact, but a
//! cycle through the placement's edges proves only "this cycle, or a
//! G-single-item": a G1c found that way rules out what both rule out
//! (consistent view and stronger), not read committed. Elle's boundary is
//! computed from the types found; this rewrites it for such cycles.

use super::{Committed, WriteRec, NONE};
use crate::consistency as cm;
use crate::edn::Value;
use hashbrown::HashMap;
use std::collections::BTreeSet;

/// Rewrites `result`'s `:not` and `:also-not` (Elle's boundary) where a
/// reported anomaly type is only shown by cycles (`cycles`: type and ops,
/// first repeated last) through a pair in `placed` (from
/// [`super::MiniAnalysis::placed`]): that type counts only for the models
/// it and G-single-item both rule out. Other types count as found. The
/// map is unchanged when no type is in that case.
pub fn placement_boundary<'a>(
    result: &mut Value,
    cycles: impl Iterator<Item = (&'a str, &'a [u32])>,
    placed: &[(u32, u32)],
) {
    if placed.is_empty() {
        return;
    }
    let through = |ops: &[u32]| {
        ops.windows(2)
            .any(|w| placed.binary_search(&(w[0], w[1])).is_ok())
    };
    // Per reported cycle type: whether every cycle of it rests on a placement.
    let mut only_placed: Vec<(&str, bool)> = Vec::new();
    for (kind, ops) in cycles {
        let p = through(ops);
        match only_placed.iter_mut().find(|(k, _)| *k == kind) {
            Some(e) => e.1 &= p,
            None => only_placed.push((kind, p)),
        }
    }
    if !only_placed.iter().any(|&(_, p)| p) {
        return;
    }
    let Value::Map(entries) = result else { return };
    let types: Vec<String> = match entries
        .iter()
        .find(|(k, _)| *k == Value::kw("anomaly-types"))
    {
        Some((_, Value::List(ts))) => ts
            .iter()
            .filter_map(|t| match t {
                Value::Keyword(k) => Some(k.to_string()),
                _ => None,
            })
            .collect(),
        _ => return,
    };
    let single = cm::anomalies_to_impossible_models(&["G-single-item"]);
    let mut impossible: BTreeSet<&'static str> = BTreeSet::new();
    for t in &types {
        let models = cm::anomalies_to_impossible_models(&[t.as_str()]);
        if only_placed.iter().any(|&(k, p)| p && k == t) {
            impossible.extend(models.intersection(&single).copied());
        } else {
            impossible.extend(models);
        }
    }
    let all: Vec<&'static str> = impossible.iter().copied().collect();
    let boundary = cm::boundary_of(&all);
    let set = |ms: &BTreeSet<&str>| Value::Set(ms.iter().map(|m| Value::kw(m)).collect());
    for (k, v) in entries.iter_mut() {
        if *k == Value::kw("not") {
            *v = set(&boundary.not);
        } else if *k == Value::kw("also-not") {
            *v = set(&boundary.also_not);
        }
    }
}

/// The pairs whose edge rests on a placement `(slot, writer)` from
/// `attach_info`: the ww edge from the version's writer and the rw edges
/// from its committed readers.
pub(super) fn placed_pairs(
    placements: &[(u32, u32)],
    ok_nodes: &[u32],
    c: &Committed,
    recs: &[WriteRec],
) -> Vec<(u32, u32)> {
    let mut placed = Vec::new();
    if placements.is_empty() {
        return placed;
    }
    for &(slot, pos) in placements {
        if let Some(r) = recs.get(slot as usize).filter(|r| r.pos != NONE) {
            placed.push((r.pos, pos));
        }
    }
    let mut by_slot: HashMap<u32, Vec<u32>> = HashMap::new();
    for &(slot, pos) in placements {
        by_slot.entry(slot).or_default().push(pos);
    }
    for &s in ok_nodes {
        let t = &c.txns[c.node[s as usize] as usize];
        for slot in &t.read_slots[..t.nreads as usize] {
            for &pos in by_slot.get(slot).into_iter().flatten() {
                if pos != s {
                    placed.push((s, pos));
                }
            }
        }
    }
    placed.sort_unstable();
    placed.dedup();
    placed
}
