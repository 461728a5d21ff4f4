//! The version orders the graph forces before any choice ([`propagate`]),
//! the version chains' second phase.

use super::*;

/// Rounds of [`propagate`]: each can force orders the previous one's
/// edges imply. Two suffice on the generated 200k histories (seeds 1 and
/// 2 give up with one) and a third re-asked every pair still unordered
/// (about a third of the propagation) for nothing there.
const ROUNDS: usize = 2;

/// Adds the version orders the graph already forces, before any choice:
/// when cluster `A`'s writer reaches a member of cluster `B` (same key),
/// `B` cannot come wholly before `A`, so `A`'s writer and readers precede
/// `B`'s writer. Only clusters whose spans (first invocation to last
/// completion among their members) overlap are compared: real time orders
/// the others already. False when a forced order closes a cycle.
pub(super) fn propagate(h: &History, cl: &Clusters, g: &mut DynamicOrder, orders: Orders) -> bool {
    let inv = |t: u32| h.invocation_of(t as usize).unwrap_or(t as usize) as u32;
    let end = |t: u32| match h.ops[t as usize].op_type {
        OpType::Ok => t,
        _ => h.ops.len() as u32,
    };
    // Per cluster: its span.
    let span: Vec<(u32, u32)> = (0..cl.clusters.len() as u32)
        .map(|c| {
            let w = cl.clusters[c as usize].writer;
            let members = cl
                .readers(c)
                .iter()
                .copied()
                .chain((w != NO_WRITER).then_some(w));
            let start = if w == NO_WRITER {
                0
            } else {
                members.clone().map(inv).min().unwrap_or(0)
            };
            (start, members.map(end).max().unwrap_or(0))
        })
        .collect();
    // Per cluster, the latest invocation among its members: with real
    // time, an `:ok` writer that completed before it reaches that member
    // through the instants' chain (see [`facts`]), and most forced orders
    // are such (the search would find the same answer, at a cost).
    let latest: Vec<u32> = if orders.real_time {
        (0..cl.clusters.len() as u32)
            .map(|c| {
                let w = cl.clusters[c as usize].writer;
                cl.readers(c)
                    .iter()
                    .copied()
                    .chain((w != NO_WRITER).then_some(w))
                    .map(inv)
                    .max()
                    .unwrap_or(0)
            })
            .collect()
    } else {
        Vec::new()
    };
    // The same question as `reaches_cluster`, answered from real time
    // where it can be: a `nil` cluster `y` (no writer) is never reached.
    let reaches = |g: &mut DynamicOrder, x: u32, y: u32, targets: &mut Vec<u32>| {
        let wx = cl.clusters[x as usize].writer;
        let by_real_time = wx != NO_WRITER
            && cl.clusters[y as usize].writer != NO_WRITER
            && h.ops[wx as usize].op_type == OpType::Ok
            && latest.get(y as usize).is_some_and(|&l| l > wx);
        by_real_time || reaches_cluster(g, cl, x, y, targets)
    };
    let mut by_key: Vec<Vec<u32>> = vec![Vec::new(); cl.keys];
    for c in 0..cl.clusters.len() as u32 {
        by_key[cl.clusters[c as usize].kid as usize].push(c);
    }
    for list in &mut by_key {
        list.sort_unstable_by_key(|&c| span[c as usize]);
    }
    // Per overlapping pair, in the order every round meets them: bit 0 when
    // the first was forced before the second, bit 1 the other way (a
    // hash set of pairs cost more than all the searches).
    let mut forced: Vec<u8> = Vec::new();
    let mut targets: Vec<u32> = Vec::new();
    for _ in 0..ROUNDS {
        let mut changed = false;
        let mut pair = 0;
        for list in &by_key {
            for (i, &a) in list.iter().enumerate() {
                for &b in list[i + 1..]
                    .iter()
                    .take_while(|&&b| span[b as usize].0 < span[a as usize].1)
                {
                    if pair == forced.len() {
                        forced.push(0);
                    }
                    pair += 1;
                    // Once forced one way, the other way would close a
                    // cycle in an acyclic graph: never.
                    if forced[pair - 1] != 0 {
                        continue;
                    }
                    for (bit, x, y) in [(1u8, a, b), (2, b, a)] {
                        if !reaches(g, x, y, &mut targets) {
                            continue;
                        }
                        forced[pair - 1] |= bit;
                        changed = true;
                        let (wx, wy) = (
                            cl.clusters[x as usize].writer,
                            cl.clusters[y as usize].writer,
                        );
                        if wy == NO_WRITER {
                            // Nothing goes before a `nil`: a cycle.
                            return false;
                        }
                        let before = (wx != NO_WRITER).then_some(wx).into_iter();
                        for m in before.chain(cl.readers(x).iter().copied()) {
                            if m != wy && g.add_edge(m, wy, FACT).is_err() {
                                return false;
                            }
                        }
                        break;
                    }
                }
            }
        }
        if !changed {
            break;
        }
    }
    true
}

/// Whether cluster `a` must come before cluster `b`: a `nil` always does;
/// else `a`'s writer (which reaches all of `a`) reaches a member of `b`.
fn reaches_cluster(
    g: &mut DynamicOrder,
    cl: &Clusters,
    a: u32,
    b: u32,
    targets: &mut Vec<u32>,
) -> bool {
    let (wa, wb) = (
        cl.clusters[a as usize].writer,
        cl.clusters[b as usize].writer,
    );
    if wa == NO_WRITER {
        return true;
    }
    if wb == NO_WRITER {
        return false;
    }
    targets.clear();
    targets.extend(
        std::iter::once(wb)
            .chain(cl.readers(b).iter().copied())
            .filter(|&y| y != wa),
    );
    g.reaches_any(wa, targets)
}
