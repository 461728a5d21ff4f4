//! Reachability pruning to a fixpoint (Cobra §3.3, VeriStrong Algorithm 5):
//! a choice whose edge would close a cycle with the edges already known is
//! fixed to its alternative.

use super::polygraph::{active_adjacency, bfs_path, find_cycles, to_cycle, topo, value, Polygraph};
use super::{SatStats, Violation};

/// Bit rows: `row(v)` has bit `u` set iff `v` reaches `u` (reflexive).
pub(super) struct Reach {
    words: usize,
    bits: Vec<u64>,
}

impl Reach {
    fn new(adj: &[Vec<(u32, usize)>], order: &[u32]) -> Reach {
        Reach::build(adj.len(), order, |v| {
            adj[v as usize].iter().map(|&(t, _)| t)
        })
    }

    /// Reachability over successor lists, given a topological order.
    pub(super) fn from_successors(adj: &[Vec<u32>], order: &[u32]) -> Reach {
        Reach::build(adj.len(), order, |v| adj[v as usize].iter().copied())
    }

    /// Rows filled in reverse topological order: a vertex's row is itself
    /// plus the rows of its successors (word-parallel OR).
    fn build<I: Iterator<Item = u32>>(n: usize, order: &[u32], succ: impl Fn(u32) -> I) -> Reach {
        let words = n.div_ceil(64);
        let mut bits = vec![0u64; n * words];
        for &v in order.iter().rev() {
            let vi = v as usize;
            bits[vi * words + vi / 64] |= 1 << (vi % 64);
            for t in succ(v) {
                let t = t as usize;
                let (lo, hi) = if vi < t {
                    let (a, b) = bits.split_at_mut(t * words);
                    (&mut a[vi * words..vi * words + words], &b[..words])
                } else {
                    let (a, b) = bits.split_at_mut(vi * words);
                    (&mut b[..words], &a[t * words..t * words + words])
                };
                for (x, y) in lo.iter_mut().zip(hi) {
                    *x |= *y;
                }
            }
        }
        Reach { words, bits }
    }

    /// Whether `a` reaches `b` (reflexive).
    pub(super) fn reaches(&self, a: u32, b: u32) -> bool {
        let (a, b) = (a as usize, b as usize);
        self.bits[a * self.words + b / 64] >> (b % 64) & 1 == 1
    }
}

/// Largest vertex count for which pruning's n² bit matrix is built.
pub(super) const PRUNE_MAX_VERTICES: usize = 30_000;

/// No second edge in a label.
const NONE: usize = usize::MAX;

/// The graph pruning reasons about: for serializability the known edges;
/// for snapshot isolation the known *induced* graph, every known non-rw edge
/// `a → b` and every known non-rw edge followed by a known rw edge. Each
/// adjacency entry's label indexes `labels`: the one or two polygraph edges
/// the entry stands for.
struct Known {
    adj: Vec<Vec<(u32, usize)>>,
    labels: Vec<(usize, usize)>,
    /// SI: known non-rw edges into each vertex, known rw edges out of it.
    dep_in: Vec<Vec<usize>>,
    rw_out: Vec<Vec<usize>>,
}

impl Known {
    fn new(g: &Polygraph, assign: &[Option<bool>], si: bool) -> Known {
        let adj = active_adjacency(g, |e| {
            e.reason.iter().all(|&l| value(assign, l) == Some(true))
        });
        let mut labels = Vec::new();
        if !si {
            let adj = adj
                .into_iter()
                .map(|a| {
                    a.into_iter()
                        .map(|(t, i)| {
                            labels.push((i, NONE));
                            (t, labels.len() - 1)
                        })
                        .collect()
                })
                .collect();
            return Known {
                adj,
                labels,
                dep_in: Vec::new(),
                rw_out: Vec::new(),
            };
        }
        let mut dep_in = vec![Vec::new(); g.n];
        let mut rw_out = vec![Vec::new(); g.n];
        for (v, a) in adj.iter().enumerate() {
            for &(t, i) in a {
                if is_rw(g, i) {
                    rw_out[v].push(i);
                } else {
                    dep_in[t as usize].push(i);
                }
            }
        }
        let mut ind: Vec<Vec<(u32, usize)>> = vec![Vec::new(); g.n];
        for (b, deps) in dep_in.iter().enumerate() {
            for &d in deps {
                let a = g.edges[d].from;
                labels.push((d, NONE));
                ind[a as usize].push((b as u32, labels.len() - 1));
                for &r in &rw_out[b] {
                    labels.push((d, r));
                    ind[a as usize].push((g.edges[r].to, labels.len() - 1));
                }
            }
        }
        Known {
            adj: ind,
            labels,
            dep_in,
            rw_out,
        }
    }

    /// The polygraph edges behind a path of labels.
    fn expand(&self, path: &[usize]) -> Vec<usize> {
        let mut out = Vec::new();
        for &l in path {
            let (a, b) = self.labels[l];
            out.push(a);
            if b != NONE {
                out.push(b);
            }
        }
        out
    }
}

fn is_rw(g: &Polygraph, i: usize) -> bool {
    matches!(g.edges[i].kind, super::EdgeKind::Rw { .. })
}

/// Pruning outcome: `Err` is a violation. With `si`, cycles are those of
/// the induced graph (VeriStrong appendix A): an alternative goes when an
/// induced edge it would create closes a cycle with known induced edges.
pub(super) fn prune(
    g: &Polygraph,
    assign: &mut [Option<bool>],
    stats: &mut SatStats,
    si: bool,
) -> Result<(), Violation> {
    // For each literal fixed false: the new edges and the known path
    // (`to ⇝ from`) that ruled it out. Paths are found only when reported:
    // known edges only accumulate, so the path still exists then.
    let mut why: Vec<Option<(Vec<usize>, u32, u32)>> = vec![None; g.vars];
    loop {
        stats.prune_passes += 1;
        let known = Known::new(g, assign, si);
        let Some(order) = topo(&known.adj) else {
            let c = find_cycles(&known.adj, 1).pop().expect("cycle");
            return Err(Violation::Cycle(to_cycle(g, &known.expand(&c))));
        };
        let reach = Reach::new(&known.adj, &order);
        let mut changed = false;
        // The induced edges a candidate would add: (from, to, its edges).
        let mut new_edges: Vec<(u32, u32, [usize; 2])> = Vec::new();
        for (i, e) in g.edges.iter().enumerate() {
            let mut open = None;
            let mut count = 0;
            let mut dead = false;
            for &l in &e.reason {
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
                new_edges.push((e.from, e.to, [i, NONE]));
            } else if is_rw(g, i) {
                for &d in &known.dep_in[e.from as usize] {
                    new_edges.push((g.edges[d].from, e.to, [d, i]));
                }
            } else {
                new_edges.push((e.from, e.to, [i, NONE]));
                for &r in &known.rw_out[e.to as usize] {
                    new_edges.push((e.from, g.edges[r].to, [i, r]));
                }
            }
            // Reachability is reflexive: an induced self-loop counts.
            let Some(&(from, to, parts)) = new_edges
                .iter()
                .find(|&&(from, to, _)| reach.reaches(to, from))
            else {
                continue;
            };
            let l = open.expect("open literal");
            assign[l.var().idx() as usize] = Some(!l.sign());
            stats.pruned += 1;
            changed = true;
            let parts: Vec<usize> = parts.iter().copied().filter(|&p| p != NONE).collect();
            why[l.var().idx() as usize] = Some((parts, to, from));
        }
        for c in &g.clauses {
            let mut open = Vec::new();
            if c.iter().any(|&l| value(assign, l) == Some(true)) {
                continue;
            }
            for &l in c {
                if value(assign, l).is_none() {
                    open.push(l);
                }
            }
            match open.len() {
                0 => {
                    // No choice left: report the cycle that ruled out one.
                    let (mut cycle, to, from) = c
                        .iter()
                        .find_map(|l| why[l.var().idx() as usize].clone())
                        .expect("eliminated alternative has a cycle");
                    if to != from {
                        let known = Known::new(g, assign, si);
                        let path = bfs_path(&known.adj, to, from, |_| true).expect("path");
                        cycle.extend(known.expand(&path));
                    }
                    return Err(Violation::Cycle(to_cycle(g, &cycle)));
                }
                1 => {
                    assign[open[0].var().idx() as usize] = Some(open[0].sign());
                    stats.pruned += 1;
                    changed = true;
                }
                _ => {}
            }
        }
        if !changed {
            return Ok(());
        }
    }
}
