//! Reachability pruning to a fixpoint (Cobra §3.3, VeriStrong Algorithm 5):
//! a choice whose edge would close a cycle with the edges already known is
//! fixed to its alternative.

use super::polygraph::{to_cycle, topo, value, Polygraph, PROCESS_KIND};
use super::reach::Reach;
use super::{SatStats, Shape, Violation};
use crate::graph::path::{short_cycles, shortest_path};

/// Most reachability memory pruning may use, in bytes.
pub(super) const PRUNE_MAX_BYTES: usize = 1 << 30;

/// The graph pruning reasons about: for serializability the known edges;
/// for snapshot isolation the layered graph of the theory (see
/// [`super::theory`]) on `2n` vertices, whose paths between original
/// vertices are those of the known induced graph. Labels are polygraph
/// edge indices; between two vertices, the edge with the fewest literals
/// (the lowest index among those), so reported cycles are short to explain.
fn known_graph(g: &Polygraph, assign: &[Option<bool>], shape: Shape) -> Vec<Vec<(u32, usize)>> {
    let mut adj = vec![Vec::new(); if shape.si { 2 * g.n } else { g.n }];
    add_known(
        g,
        assign,
        &mut adj,
        &mut (0..g.edges.len() as u32).collect(),
        shape,
    );
    for a in &mut adj {
        a.sort_unstable_by_key(|&(t, i)| (t, g.edges[i].reason.len(), i));
        a.dedup_by_key(|x| x.0);
    }
    adj
}

/// Adds the edges of `pending` whose reasons now all hold to `adj` (as
/// [`layered`] places them) and drops them, and the dead ones, from
/// `pending`. Unlike [`known_graph`], `adj` may hold several edges between
/// two vertices: only its paths matter.
fn add_known(
    g: &Polygraph,
    assign: &[Option<bool>],
    adj: &mut [Vec<(u32, usize)>],
    pending: &mut Vec<u32>,
    shape: Shape,
) {
    let n = g.n as u32;
    let si = shape.si;
    pending.retain(|&i| {
        let i = i as usize;
        let e = &g.edges[i];
        let mut all = true;
        for &l in e.reason.iter() {
            match value(assign, l) {
                Some(true) => {}
                Some(false) => return false,
                None => all = false,
            }
        }
        if all {
            if shape.single_rw && is_rw(g, i) {
                // Never on a path: a cycle may pass through several.
            } else if !si {
                adj[e.from as usize].push((e.to, i));
            } else if is_rw(g, i) {
                adj[(n + e.from) as usize].push((e.to, i));
            } else {
                adj[e.from as usize].push((e.to, i));
                adj[e.from as usize].push((n + e.to, i));
            }
        }
        !all
    });
}

fn is_rw(g: &Polygraph, i: usize) -> bool {
    g.is_rw(i)
}

/// Pruning outcome: `Err` is a violation. Stops early once `expired()`.
/// At a fixpoint (or nearly: see the loop's end), returns the reachability
/// of the known graph of the last pass (the layered one with `si`), which
/// the encoding reuses; `None` when pruning timed out or reachability did
/// not fit in memory. With `si`, cycles are those of
/// the induced graph (VeriStrong appendix A): an alternative goes when an
/// induced edge it would create closes a cycle with known induced edges.
/// The reported cycle starts with the eliminated edge; with SI its first
/// step may be the twin edge, whose edge is the same.
pub(super) fn prune(
    g: &Polygraph,
    assign: &mut [Option<bool>],
    stats: &mut SatStats,
    shape: Shape,
    expired: &dyn Fn() -> bool,
) -> Result<Option<Reach>, Violation> {
    // Long (over 120 lines): one fixpoint loop whose passes share the known graph,
    // its reachability and the assignment; split, they would pass all three.
    let si = shape.si;
    // For each literal fixed false: the new edges and the known path
    // (`to ⇝ from`) that ruled it out. Paths are found only when reported:
    // known edges only accumulate, so the path still exists then.
    let mut why: Vec<Option<(Vec<usize>, u32, u32)>> = vec![None; g.vars];
    // Known edges only accumulate, and dead ones stay dead: each pass looks
    // only at the edges and clauses still undecided.
    let mut known: Vec<Vec<(u32, usize)>> = vec![Vec::new(); if si { 2 * g.n } else { g.n }];
    // Edge indices as `u32`: on big histories the list is tens of millions.
    let mut pending: Vec<u32> = (0..g.edges.len() as u32).collect();
    let mut open_clauses: Vec<usize> = (0..g.clauses.len()).collect();
    let mut spare = None;
    loop {
        stats.prune_passes += 1;
        add_known(g, assign, &mut known, &mut pending, shape);
        let Some(order) = topo(&known) else {
            // Reported from the deduplicated graph, as everywhere else.
            let c = short_cycles(&known_graph(g, assign, shape), 1)
                .pop()
                .expect("cycle");
            return Err(Violation::Cycle(to_cycle(g, &c)));
        };
        let session = |i: usize| g.edges.get(i).is_some_and(|e| e.kind == PROCESS_KIND);
        let Some(reach) =
            Reach::new_reusing(&known, &order, PRUNE_MAX_BYTES, session, g.n, spare.take())
        else {
            // Too big to prune: leave everything to the solver.
            return Ok(None);
        };
        let mut changed = false;
        let pruned_before = stats.pruned;
        let n = g.n as u32;
        // The layered edges a candidate would add.
        let mut new_edges: Vec<(u32, u32)> = Vec::new();
        for &i in &pending {
            let i = i as usize;
            let e = &g.edges[i];
            let mut open = None;
            let mut count = 0;
            let mut dead = false;
            for &l in e.reason.iter() {
                match value(assign, l) {
                    Some(true) => {}
                    Some(false) => dead = true,
                    None => {
                        count += 1;
                        open = Some(l);
                    }
                }
            }
            if dead || count != 1 {
                continue;
            }
            new_edges.clear();
            if !si {
                new_edges.push((e.from, e.to));
            } else if is_rw(g, i) {
                new_edges.push((n + e.from, e.to));
            } else {
                new_edges.push((e.from, e.to));
                new_edges.push((e.from, n + e.to));
            }
            // Reachability is reflexive: a self-loop counts.
            let Some(&(from, to)) = new_edges
                .iter()
                .find(|&&(from, to)| reach.reaches(to, from))
            else {
                continue;
            };
            let l = open.expect("open literal");
            assign[l.var().idx() as usize] = Some(!l.sign());
            stats.pruned += 1;
            changed = true;
            why[l.var().idx() as usize] = Some((vec![i], to, from));
        }
        let mut unsat = None;
        open_clauses.retain(|&ci| {
            let c = &g.clauses[ci];
            if unsat.is_some() {
                return true;
            }
            let mut open = Vec::new();
            if c.iter().any(|&l| value(assign, l) == Some(true)) {
                return false;
            }
            for &l in c {
                if value(assign, l).is_none() {
                    open.push(l);
                }
            }
            match open.len() {
                0 => {
                    unsat = Some(ci);
                    true
                }
                1 => {
                    assign[open[0].var().idx() as usize] = Some(open[0].sign());
                    stats.pruned += 1;
                    changed = true;
                    false
                }
                _ => true,
            }
        });
        if let Some(ci) = unsat {
            // No choice left: report the cycle that ruled out one. Only
            // the lost-update clauses can be refuted by literals that
            // other clauses forced.
            let Some((mut cycle, to, from)) = g.clauses[ci]
                .iter()
                .find_map(|l| why[l.var().idx() as usize].clone())
            else {
                return match g.lost_updates.first() {
                    Some((key, value, txns)) => Err(Violation::LostUpdate {
                        key: *key,
                        value: *value,
                        txns: txns.clone(),
                    }),
                    // Not expected: leave the decision to the solver.
                    None => Ok(None),
                };
            };
            if to != from {
                let known = known_graph(g, assign, shape);
                cycle.extend(shortest_path(&known, to, from, |_| true).expect("path"));
            }
            return Err(Violation::Cycle(to_cycle(g, &cycle)));
        }
        // A pass that fixes under 0.5% of the open variables ends pruning:
        // another pass costs a reachability rebuild for a handful of
        // literals the solver settles anyway. Its reachability, of a subset
        // of the known edges now, is still sound for the encoding.
        let open = g.vars - pruned_before;
        if !changed || (stats.pruned - pruned_before) * 200 < open {
            return Ok(Some(reach));
        }
        spare = Some(reach);
        // Stopping early is sound: fewer fixed literals.
        if expired() {
            return Ok(None);
        }
    }
}
