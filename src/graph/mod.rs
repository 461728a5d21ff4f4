//! Dependency graphs between transactions, their strongly connected
//! components, and cycle search. Written once, shared by every algorithm.
//!
//! Vertices are `u32` transaction ids (positions of completion ops in
//! [`crate::model::History::ops`]); edges carry a set of relationships
//! ([`Rels`]): ww, wr, rw, their predicate forms, process and realtime.

pub mod dynamic_order;
mod grouped;
pub mod path;
mod rels;
pub mod scc;
pub mod search;
pub mod window_reach;

pub use grouped::{grouped, Grouped};
pub use rels::Rels;

/// The number of edges from which [`DiGraph::from_edges_and`] counts and
/// sorts on two cores (a helper thread costs tens of microseconds).
const SPLIT_FROM_EDGES: usize = 1 << 18;

/// Sorts each row of one run of consecutive rows by target and merges
/// parallel edges, compacting the rows to the front of `targets` and
/// `rels` (the run's part of the graph's arrays, which starts at `base` in
/// them). `starts` holds each row's start in the whole arrays on entry
/// (a row ends where the next starts, the last at the run's end) and its
/// start after compaction, counted from the run's start, on return.
/// Returns how many edges the run keeps.
fn merge_rows(starts: &mut [u32], base: u32, targets: &mut [u32], rels: &mut [Rels]) -> usize {
    let mut row: Vec<(u32, Rels)> = Vec::new();
    let mut write = 0usize;
    for v in 0..starts.len() {
        let start = (starts[v] - base) as usize;
        let end = match starts.get(v + 1) {
            Some(&next) => (next - base) as usize,
            None => targets.len(),
        };
        starts[v] = write as u32;
        row.clear();
        row.extend(
            targets[start..end]
                .iter()
                .copied()
                .zip(rels[start..end].iter().copied()),
        );
        if !row.is_sorted_by_key(|&(b, _)| b) {
            row.sort_unstable_by_key(|&(b, _)| b);
        }
        let mut i = 0;
        while i < row.len() {
            let (b, mut r) = row[i];
            i += 1;
            while i < row.len() && row[i].0 == b {
                r = r.union(row[i].1);
                i += 1;
            }
            targets[write] = b;
            rels[write] = r;
            write += 1;
        }
    }
    write
}

/// A directed graph in compressed sparse row form. Parallel edges are merged
/// (their relationships unioned); vertex ids are dense local ids `0..len`.
#[derive(Clone, Debug, Default)]
pub struct DiGraph {
    offsets: Vec<u32>,
    targets: Vec<u32>,
    rels: Vec<Rels>,
}

impl DiGraph {
    /// Builds a graph on vertices `0..n` from `(from, to, rels)` edges.
    pub fn from_edges(n: usize, edges: Vec<(u32, u32, Rels)>) -> DiGraph {
        DiGraph::from_edge_slice(n, &edges)
    }

    /// Builds a graph on vertices `0..n` from borrowed edges, without
    /// copying or sorting the whole list: edges are bucketed by source (a
    /// counting sort) straight into the target and relationship arrays,
    /// then each row is sorted (through a small scratch buffer; rows are
    /// short) and its parallel edges merged, compacting in place. No
    /// second edge-sized array exists at any time (issue 23: memory).
    pub fn from_edge_slice(n: usize, edges: &[(u32, u32, Rels)]) -> DiGraph {
        DiGraph::from_edges_and(n, edges, |_, _: &mut dyn FnMut(u32, u32, Rels)| {})
    }

    /// [`DiGraph::from_edge_slice`] over `edges` and the edges `more`
    /// passes to its second argument: `more(sources, f)` must pass every
    /// edge whose source is in `sources` (the same ones each time; others
    /// may come too, and are ignored). It is called to count (every
    /// source) and then to place rows (on two cores, each half of the
    /// sources): edges generated on the fly (real-time order, issue 23)
    /// never exist as a list, and each half's generator may skip what
    /// only the other's sources need. The graph does not depend on the
    /// order of the edges.
    pub fn from_edges_and(
        n: usize,
        edges: &[(u32, u32, Rels)],
        more: impl Fn(std::ops::Range<u32>, &mut dyn FnMut(u32, u32, Rels)) + Sync,
    ) -> DiGraph {
        DiGraph::build(n, edges, more, SPLIT_FROM_EDGES)
    }

    /// [`DiGraph::from_edges_and`] without merging the rows yet: see
    /// [`UnmergedGraph`].
    pub fn unmerged_from_edges_and(
        n: usize,
        edges: &[(u32, u32, Rels)],
        more: impl Fn(std::ops::Range<u32>, &mut dyn FnMut(u32, u32, Rels)) + Sync,
    ) -> UnmergedGraph {
        UnmergedGraph::build(n, edges, more, SPLIT_FROM_EDGES)
    }

    /// [`DiGraph::from_edges_and`], counting `edges` beside `more`'s and
    /// sorting the rows in two halves on two cores (when one is free) once
    /// there are at least `split_from` edges: building the graph was a
    /// tenth of a 1M-transaction check, on one core (issue 23).
    fn build(
        n: usize,
        edges: &[(u32, u32, Rels)],
        more: impl Fn(std::ops::Range<u32>, &mut dyn FnMut(u32, u32, Rels)) + Sync,
        split_from: usize,
    ) -> DiGraph {
        UnmergedGraph::build(n, edges, more, split_from).merged()
    }

    /// Number of vertex slots.
    pub fn len(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    /// Whether the graph has no vertex slots.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Number of (merged) edges.
    pub fn edge_count(&self) -> usize {
        self.targets.len()
    }

    /// Out-neighbours of `v` with the relationships of each edge, in
    /// ascending id order.
    pub fn out(&self, v: u32) -> impl Iterator<Item = (u32, Rels)> + '_ {
        let (s, e) = (
            self.offsets[v as usize] as usize,
            self.offsets[v as usize + 1] as usize,
        );
        self.targets[s..e]
            .iter()
            .copied()
            .zip(self.rels[s..e].iter().copied())
    }

    /// Out-neighbour ids of `v`.
    pub fn out_ids(&self, v: u32) -> &[u32] {
        let (s, e) = (
            self.offsets[v as usize] as usize,
            self.offsets[v as usize + 1] as usize,
        );
        &self.targets[s..e]
    }

    /// The relationships on edge `a → b`, if there is one.
    pub fn edge(&self, a: u32, b: u32) -> Option<Rels> {
        let (s, e) = (
            self.offsets[a as usize] as usize,
            self.offsets[a as usize + 1] as usize,
        );
        self.targets[s..e]
            .binary_search(&b)
            .ok()
            .map(|i| self.rels[s + i])
    }

    /// Iterates every edge `(from, to, rels)`.
    pub fn edges(&self) -> impl Iterator<Item = (u32, u32, Rels)> + '_ {
        (0..self.len() as u32).flat_map(move |a| self.out(a).map(move |(b, r)| (a, b, r)))
    }

    /// The graph restricted to the given relationships: edges keep only the
    /// intersection of their relationships, and vanish when it is empty.
    pub fn project(&self, keep: Rels) -> DiGraph {
        let edges = self
            .edges()
            .filter_map(|(a, b, r)| {
                let r = r.intersection(keep);
                (!r.is_empty()).then_some((a, b, r))
            })
            .collect();
        DiGraph::from_edges(self.len(), edges)
    }

    /// Whether `v` has any incident edge.
    pub fn has_edges(&self, v: u32) -> bool {
        self.offsets[v as usize] != self.offsets[v as usize + 1]
    }

    /// The union of two graphs on the same vertex slots.
    pub fn union(&self, other: &DiGraph) -> DiGraph {
        let edges = self.edges().chain(other.edges()).collect();
        DiGraph::from_edges(self.len().max(other.len()), edges)
    }

    /// Sequential extension `A ∪ (A ; B)`: every edge of A, plus `x → z`
    /// whenever `x → y` in A and `y → z` in B. Composed edges carry no
    /// relationships of their own (they exist only to be searched for SCCs).
    pub fn extension(&self, b: &DiGraph) -> DiGraph {
        let mut edges: Vec<(u32, u32, Rels)> = self.edges().collect();
        for (x, y, _) in self.edges() {
            if (y as usize) < b.len() {
                for &z in b.out_ids(y) {
                    edges.push((x, z, Rels::NONE));
                }
            }
        }
        DiGraph::from_edges(self.len().max(b.len()), edges)
    }

    /// The subgraph induced by `vertices` (given in local ids of `self`),
    /// renumbered densely in the order given. Returns the graph.
    pub fn induced(&self, vertices: &[u32]) -> DiGraph {
        let mut local = hashbrown::HashMap::with_capacity(vertices.len());
        for (i, &v) in vertices.iter().enumerate() {
            local.insert(v, i as u32);
        }
        let mut edges = Vec::new();
        for (i, &v) in vertices.iter().enumerate() {
            for (w, r) in self.out(v) {
                if let Some(&j) = local.get(&w) {
                    edges.push((i as u32, j, r));
                }
            }
        }
        DiGraph::from_edges(vertices.len(), edges)
    }
}

/// A graph as [`DiGraph::from_edges_and`] places it, before its rows are
/// merged: a row may list a target more than once, in any order. Enough
/// for the strongly connected components ([`scc::nontrivial_sccs_unmerged`])
/// and for counting vertices, so a check whose graph has none merges
/// nothing (issue 23: merging was a third of building a 1M-transaction
/// check's graph); [`UnmergedGraph::merged`] gives the [`DiGraph`].
#[derive(Debug)]
pub struct UnmergedGraph {
    /// The rows, not merged (the one place a `DiGraph`'s rows may be so).
    rows: DiGraph,
    /// The first row of the half merged on a second core (`len()` when
    /// the graph is merged on one), and where its edges start.
    mid: usize,
    split: usize,
}

impl UnmergedGraph {
    /// Counts and places the edges of `edges` and `more` (see
    /// [`DiGraph::from_edges_and`]): counting `edges` beside `more`'s and
    /// placing the rows in two halves on two cores (when one is free)
    /// once there are at least `split_from` edges.
    fn build(
        n: usize,
        edges: &[(u32, u32, Rels)],
        more: impl Fn(std::ops::Range<u32>, &mut dyn FnMut(u32, u32, Rels)) + Sync,
        split_from: usize,
    ) -> UnmergedGraph {
        // `offsets[a + 2]` counts a's edges; summed, `offsets[a + 1]` is
        // a's start, the cursor that places its edges in order and ends at
        // the next row's start (no copy of the offsets: issue 23).
        let count_listed = || {
            let mut offsets = vec![0u32; n + 2];
            for &(a, _, _) in edges {
                offsets[a as usize + 2] += 1;
            }
            offsets
        };
        let mut offsets = if edges.len() >= split_from {
            let (mut offsets, generated) = crate::par::join(count_listed, || {
                let mut counts = vec![0u32; n];
                more(0..n as u32, &mut |a, _, _| counts[a as usize] += 1);
                counts
            });
            for (o, c) in offsets[2..].iter_mut().zip(generated) {
                *o += c;
            }
            offsets
        } else {
            let mut offsets = count_listed();
            more(0..n as u32, &mut |a, _, _| offsets[a as usize + 2] += 1);
            offsets
        };
        for i in 2..n + 2 {
            offsets[i] += offsets[i - 1];
        }
        let total = offsets[n + 1] as usize;
        let mut targets = vec![0u32; total];
        let mut rels = vec![Rels::NONE; total];
        // The rows before `mid` hold about half of the edges; `offsets[a +
        // 1]` is row a's start.
        let mid = if total >= split_from {
            offsets[1..=n].partition_point(|&o| (o as usize) < total / 2)
        } else {
            n
        };
        let split = offsets.get(mid + 1).map_or(total, |&o| o as usize);
        {
            // Each half's rows placed on their own core, each core walking
            // every edge (issue 23: placing was a third of building the
            // graph of a 1M-transaction check, on one core).
            let (low, high) = offsets[1..=n].split_at_mut(mid);
            let (low_targets, high_targets) = targets.split_at_mut(split);
            let (low_rels, high_rels) = rels.split_at_mut(split);
            // Rows `first..` (cursors), their edges from `base` on.
            let place_rows = |cursors: &mut [u32],
                              first: usize,
                              base: usize,
                              targets: &mut [u32],
                              rels: &mut [Rels]| {
                let sources = first as u32..(first + cursors.len()) as u32;
                let mut place = |a: u32, b: u32, r: Rels| {
                    if let Some(slot) = (a as usize)
                        .checked_sub(first)
                        .and_then(|i| cursors.get_mut(i))
                    {
                        let at = *slot as usize - base;
                        targets[at] = b;
                        rels[at] = r;
                        *slot += 1;
                    }
                };
                for &(a, b, r) in edges {
                    place(a, b, r);
                }
                more(sources, &mut place);
            };
            if mid < n {
                crate::par::join(
                    || place_rows(low, 0, 0, low_targets, low_rels),
                    || place_rows(high, mid, split, high_targets, high_rels),
                );
            } else {
                place_rows(low, 0, 0, low_targets, low_rels);
            }
        }
        // Each cursor ended at the next row's start: `offsets[a]` is row
        // a's start, `offsets[n]` the end.
        offsets.pop();
        UnmergedGraph {
            rows: DiGraph {
                offsets,
                targets,
                rels,
            },
            mid,
            split,
        }
    }

    /// Number of vertex slots.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Whether the graph has no vertex slots.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The targets of `v`'s edges, in no particular order, a target as
    /// often as edges to it were given.
    pub fn out_ids(&self, v: u32) -> &[u32] {
        self.rows.out_ids(v)
    }

    /// Iterates every edge as given (parallel ones not merged).
    pub fn edges(&self) -> impl Iterator<Item = (u32, u32, Rels)> + '_ {
        self.rows.edges()
    }

    /// This graph with the edges `more` generates added (as
    /// [`DiGraph::from_edges_and`] calls it): the rows placed again.
    pub fn extended(
        self,
        more: impl Fn(std::ops::Range<u32>, &mut dyn FnMut(u32, u32, Rels)) + Sync,
    ) -> UnmergedGraph {
        let rows = self.rows;
        UnmergedGraph::build(
            rows.len(),
            &[],
            |sources: std::ops::Range<u32>, f: &mut dyn FnMut(u32, u32, Rels)| {
                for a in sources.clone() {
                    for (b, r) in rows.out(a) {
                        f(a, b, r);
                    }
                }
                more(sources, f);
            },
            SPLIT_FROM_EDGES,
        )
    }

    /// The graph with each row sorted by target and its parallel edges
    /// merged (their relationships unioned): the two halves on two cores
    /// when the graph was placed so.
    pub fn merged(self) -> DiGraph {
        let UnmergedGraph {
            rows:
                DiGraph {
                    mut offsets,
                    mut targets,
                    mut rels,
                },
            mid,
            split,
        } = self;
        let n = offsets.len() - 1;
        let kept = if mid == n {
            merge_rows(&mut offsets[..n], 0, &mut targets, &mut rels)
        } else {
            let (low_targets, high_targets) = targets.split_at_mut(split);
            let (low_rels, high_rels) = rels.split_at_mut(split);
            let (low, high) = offsets[..n].split_at_mut(mid);
            let (low_kept, high_kept) = crate::par::join(
                || merge_rows(low, 0, low_targets, low_rels),
                || merge_rows(high, split as u32, high_targets, high_rels),
            );
            // The second half's rows follow the first's.
            for o in high.iter_mut() {
                *o += low_kept as u32;
            }
            targets.copy_within(split..split + high_kept, low_kept);
            rels.copy_within(split..split + high_kept, low_kept);
            low_kept + high_kept
        };
        offsets[n] = kept as u32;
        targets.truncate(kept);
        targets.shrink_to_fit();
        rels.truncate(kept);
        rels.shrink_to_fit();
        DiGraph {
            offsets,
            targets,
            rels,
        }
    }
}

/// The inverse of an `order` of `0..order.len()`: each vertex's index in it.
pub fn positions(order: &[u32]) -> Vec<u32> {
    let mut pos = vec![0u32; order.len()];
    for (i, &v) in order.iter().enumerate() {
        pos[v as usize] = i as u32;
    }
    pos
}

/// A topological order of the graph on `0..n` whose successors `out(v)`
/// lists (Kahn's algorithm), or `None` if it has a cycle. Among ready
/// vertices the smallest id goes first, so the order is deterministic and
/// stays close to id order.
pub fn topological_order<I: IntoIterator<Item = u32>>(
    n: usize,
    out: impl Fn(u32) -> I,
) -> Option<Vec<u32>> {
    topological_order_by(n, out, |_| 0)
}

/// [`topological_order`] where, among ready vertices, the smallest
/// `(priority(v), v)` goes first: the order stays as close to the priority
/// order as the edges allow.
pub fn topological_order_by<I: IntoIterator<Item = u32>>(
    n: usize,
    out: impl Fn(u32) -> I,
    priority: impl Fn(u32) -> u64,
) -> Option<Vec<u32>> {
    use std::cmp::Reverse;
    let mut indeg = vec![0u32; n];
    for v in 0..n as u32 {
        for t in out(v) {
            indeg[t as usize] += 1;
        }
    }
    let mut ready: std::collections::BinaryHeap<Reverse<(u64, u32)>> = (0..n as u32)
        .filter(|&v| indeg[v as usize] == 0)
        .map(|v| Reverse((priority(v), v)))
        .collect();
    let mut order = Vec::with_capacity(n);
    while let Some(Reverse((_, v))) = ready.pop() {
        order.push(v);
        for t in out(v) {
            indeg[t as usize] -= 1;
            if indeg[t as usize] == 0 {
                ready.push(Reverse((priority(t), t)));
            }
        }
    }
    (order.len() == n).then_some(order)
}

#[cfg(test)]
mod topological_tests {
    use super::topological_order;

    #[test]
    fn orders_respect_edges_smallest_ready_first_and_cycles_have_none() {
        let adj: Vec<Vec<u32>> = vec![vec![3], vec![0], vec![], vec![]];
        let order = topological_order(4, |v| adj[v as usize].clone());
        assert_eq!(order, Some(vec![1, 0, 2, 3]));
        let cyclic: Vec<Vec<u32>> = vec![vec![1], vec![2], vec![0], vec![]];
        assert_eq!(topological_order(4, |v| cyclic[v as usize].clone()), None);
    }
}

#[cfg(test)]
mod csr_tests {
    use super::{DiGraph, Rels};

    #[test]
    fn rows_are_sorted_and_parallel_edges_merged() {
        // Row 0 arrives unsorted with a parallel edge; row 1 is empty; row
        // 2 is sorted already (the list-append case) but for a duplicate.
        let edges = [
            (0, 3, Rels::RW),
            (2, 0, Rels::WW),
            (0, 1, Rels::WW),
            (0, 3, Rels::WR),
            (2, 3, Rels::PROCESS),
            (2, 3, Rels::REALTIME),
            (3, 3, Rels::WW),
        ];
        let g = DiGraph::from_edge_slice(4, &edges);
        assert_eq!(g.edge_count(), 5);
        let row = |v: u32| g.out(v).collect::<Vec<_>>();
        assert_eq!(row(0), [(1, Rels::WW), (3, Rels::RW.union(Rels::WR))]);
        assert_eq!(row(1), []);
        assert_eq!(
            row(2),
            [(0, Rels::WW), (3, Rels::PROCESS.union(Rels::REALTIME))]
        );
        assert_eq!(row(3), [(3, Rels::WW)]);
        assert_eq!(g.edge(0, 3), Some(Rels::RW.union(Rels::WR)));
        assert_eq!(g.edge(1, 0), None);
        // The same edges, the last four generated (twice: counted, then
        // placed), make the same graph.
        let more = |_, f: &mut dyn FnMut(u32, u32, Rels)| {
            for &(a, b, r) in &edges[3..] {
                f(a, b, r)
            }
        };
        let h = DiGraph::from_edges_and(4, &edges[..3], more);
        assert_eq!(h.edges().collect::<Vec<_>>(), g.edges().collect::<Vec<_>>());
        assert_eq!(h.len(), 4);
    }

    #[test]
    fn rows_sorted_in_two_halves_make_the_graph_one_pass_makes() {
        let rels = [Rels::WW, Rels::WR, Rels::RW, Rels::PROCESS, Rels::REALTIME];
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |bound: u64| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) % bound
        };
        for round in 0..300 {
            // Empty graphs, graphs with few vertices (long rows, many
            // parallel edges) and sparse ones; some edges generated.
            let n = [0, 1, 2, 5, 40, 300][round % 6];
            let count = if n == 0 { 0 } else { next(600) as usize };
            let edges: Vec<(u32, u32, Rels)> = (0..count)
                .map(|_| {
                    let a = next(n as u64) as u32;
                    let b = next(n as u64) as u32;
                    (a, b, rels[next(5) as usize])
                })
                .collect();
            let cut = if count == 0 {
                0
            } else {
                next(count as u64 + 1) as usize
            };
            // Every other round, only the edges of the sources asked for.
            let only_asked = round % 2 == 0;
            let more = |sources: std::ops::Range<u32>, f: &mut dyn FnMut(u32, u32, Rels)| {
                for &(a, b, r) in &edges[cut..] {
                    if !only_asked || sources.contains(&a) {
                        f(a, b, r)
                    }
                }
            };
            let one = DiGraph::build(n, &edges[..cut], more, usize::MAX);
            let two = DiGraph::build(n, &edges[..cut], more, 0);
            assert_eq!(one.offsets, two.offsets, "round {round}");
            assert_eq!(one.targets, two.targets, "round {round}");
            assert_eq!(one.rels, two.rels, "round {round}");
            let listed = DiGraph::from_edge_slice(n, &edges);
            assert_eq!(one.offsets, listed.offsets, "round {round}");
            assert_eq!(one.targets, listed.targets, "round {round}");
            // Every edge is in, once per (source, target).
            for &(a, b, r) in &edges {
                assert!(two.edge(a, b).is_some_and(|got| got.union(r) == got));
            }
        }
    }
}
