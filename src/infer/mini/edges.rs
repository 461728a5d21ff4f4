//! Phase 3 of the MT graph: the data edges out of the committed
//! transactions' external reads, and the read-modify-writers of each
//! version they hang on.

use super::*;

/// Phase 3 of [`build`]: wr, ww and rw edges out of the external reads of
/// committed transactions (`ok_nodes`).
pub(super) fn data_edges(
    ok_nodes: &[u32],
    c: &Committed,
    recs: &[WriteRec],
    edges: &mut Vec<(u32, u32, Rels)>,
) {
    let (node, txns, succ, more) = (&c.node, &c.txns, &c.succ, &c.more);
    for &s in ok_nodes {
        let t = node[s as usize] as usize;
        for ri in 0..txns[t].reads().len() {
            let v = txns[t].reads()[ri].1;
            let slot = txns[t].read_slots[ri] as usize;
            let writer = recs.get(slot).map_or(NONE, |r| r.pos);
            if v.is_some() {
                edges.push((writer, s, Rels::WR));
            }
            let sc = succ[slot];
            if sc.first == NONE {
                continue;
            }
            let rest: &[u32] = if sc.more == NONE {
                &[]
            } else {
                &more[sc.more as usize]
            };
            for &b in std::iter::once(&sc.first).chain(rest) {
                if b == s {
                    // s read-modify-wrote this version: ww from its
                    // writer (none from the initial state).
                    if v.is_some() {
                        edges.push((writer, s, Rels::WW));
                    }
                } else {
                    edges.push((s, b, Rels::RW));
                }
            }
        }
    }
}

/// Records `b` as a read-modify-writer of version `slot`.
pub(super) fn push_succ(succ: &mut [Succ], more: &mut Vec<Vec<u32>>, slot: u32, b: u32) {
    let sc = &mut succ[slot as usize];
    if sc.first == NONE {
        sc.first = b;
    } else {
        if sc.more == NONE {
            sc.more = more.len() as u32;
            more.push(Vec::new());
        }
        more[sc.more as usize].push(b);
    }
}
