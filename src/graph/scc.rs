//! Strongly connected components (iterative Tarjan; for a graph whose
//! rows are not merged yet, Kahn's peeling first, which settles an acyclic
//! graph alone).
//!
//! Pearce's one-array variant, which looks at one array per edge instead
//! of two or three, was slower here (1M-transaction rw-register check,
//! interleaved runs: 0.12–0.17 s against 0.08–0.10 s; 30 Nov), so Tarjan
//! stays. What paid: no allocation per (mostly one-vertex) component.

use super::{DiGraph, UnmergedGraph};

/// The strongly connected components of `g` that contain a cycle: more than
/// one vertex, or a single vertex with a self-edge. Each component's vertices
/// are sorted ascending; components are ordered by their smallest vertex.
pub fn nontrivial_sccs(g: &DiGraph) -> Vec<Vec<u32>> {
    tarjan(g.len(), |v| g.out_ids(v), |_| true)
}

/// [`nontrivial_sccs`] of a graph whose rows are not merged yet. First
/// the vertices no edge enters are peeled off, again and again (Kahn's
/// algorithm): a graph without a cycle (a valid history's, the usual big
/// one) is then gone, at about half the cost of Tarjan's walk (issue 23),
/// and otherwise the walk visits only what is left, which holds every
/// cycle.
pub fn nontrivial_sccs_unmerged(g: &UnmergedGraph) -> Vec<Vec<u32>> {
    match peeled_with(g, &NoOrder) {
        None => Vec::new(),
        Some(left) => nontrivial_sccs_among(g, &left),
    }
}

/// The nontrivial SCCs of `g` among the vertices peeling left (`left[v]`
/// not 0: [`peeled_with`]): every cycle's. `g` may hold more edges than
/// the peeled graph if they reach the same vertices (its order's edges
/// listed): the same vertices are left then.
pub fn nontrivial_sccs_among(g: &UnmergedGraph, left: &[u32]) -> Vec<Vec<u32>> {
    tarjan(
        g.len(),
        |v| g.out_ids(v),
        |v| left.get(v as usize).is_some_and(|&e| e != 0),
    )
}

/// No precedence beyond the edges: plain Kahn's peeling.
struct NoOrder;

impl PositionOrder for NoOrder {
    fn is_end(&self, _: u32) -> bool {
        false
    }
    fn start(&self, _: u32) -> Option<u32> {
        None
    }
    fn started_at(&self, _: u32) -> Option<u32> {
        None
    }
}

/// A precedence among a graph's vertices known from their positions
/// instead of listed as edges: `a` precedes `v` when `a` is an end and
/// `a < start(v)`. The real-time order is one (an op that completed
/// before another was invoked precedes it): a million-transaction
/// history's largest share of edges, which [`peeled_with`] never lists.
pub trait PositionOrder {
    /// Whether vertex `a` is an end: it precedes every vertex that starts
    /// after it.
    fn is_end(&self, a: u32) -> bool;
    /// Where vertex `v` starts (it follows every end before that), or
    /// `None` when no end precedes it.
    fn start(&self, v: u32) -> Option<u32>;
    /// The vertex that starts at position `i`, if one does (at most one).
    fn started_at(&self, i: u32) -> Option<u32>;
}

/// For each vertex of `g` with the precedences of `order` added, how many
/// edges still enter it once every vertex nothing enters has been removed,
/// again and again: 0 for the removed ones, which lie on no cycle; a
/// cycle's vertices (a self-edge's included) are never removed. `None`
/// when every vertex was: no cycle.
///
/// Kahn's peeling, the order kept as one more edge entering each vertex
/// with a start, removed when the vertex is released: when the first end
/// not yet removed lies at or after its start (no end before the start is
/// left). Releasing follows that first end, position by position. A cycle
/// through order edges leaves one of its ends unremoved, and everything
/// starting after it with it.
pub fn peeled_with(g: &UnmergedGraph, order: &impl PositionOrder) -> Option<Vec<u32>> {
    /// `entering` of a removed vertex.
    const REMOVED: u32 = u32::MAX;
    let n = g.len() as u32;
    let mut entering = vec![0u32; n as usize];
    for v in 0..n {
        for &w in g.out_ids(v) {
            entering[w as usize] += 1;
        }
        if order.start(v).is_some() {
            entering[v as usize] += 1;
        }
    }
    let mut ready: Vec<u32> = (0..n).filter(|&v| entering[v as usize] == 0).collect();
    // The first end not removed, and the positions released (all up to
    // that end, or all).
    let (mut first_end, mut released) = (0u32, 0u32);
    let mut advance = |entering: &mut [u32], ready: &mut Vec<u32>| {
        while first_end < n && (entering[first_end as usize] == REMOVED || !order.is_end(first_end))
        {
            first_end += 1;
        }
        while released <= first_end && released < n {
            if let Some(v) = order.started_at(released) {
                let e = &mut entering[v as usize];
                *e -= 1;
                if *e == 0 {
                    ready.push(v);
                }
            }
            released += 1;
        }
        first_end
    };
    let mut end_left = advance(&mut entering, &mut ready);
    let mut removed = 0u32;
    while let Some(v) = ready.pop() {
        entering[v as usize] = REMOVED;
        removed += 1;
        for &w in g.out_ids(v) {
            let e = &mut entering[w as usize];
            *e -= 1;
            if *e == 0 {
                ready.push(w);
            }
        }
        if v == end_left {
            end_left = advance(&mut entering, &mut ready);
        }
    }
    if removed == n {
        return None;
    }
    for e in &mut entering {
        if *e == REMOVED {
            *e = 0;
        }
    }
    Some(entering)
}

/// The nontrivial SCCs of the graph on `0..n` whose edges from `v` go to
/// `out_ids(v)` (any order, repeats allowed), among the vertices `kept`
/// (the others and their edges are left out).
fn tarjan<'g>(
    n: usize,
    out_ids: impl Fn(u32) -> &'g [u32],
    kept: impl Fn(u32) -> bool,
) -> Vec<Vec<u32>> {
    const UNSEEN: u32 = u32::MAX;
    let mut index = vec![UNSEEN; n];
    let mut low = vec![0u32; n];
    let mut on_stack = vec![false; n];
    let mut stack: Vec<u32> = Vec::new();
    // A vertex and its next out-edge: 8 bytes a frame, as a real-time
    // chain's DFS can be a million frames deep (issue 23: memory).
    let mut call: Vec<(u32, u32)> = Vec::new();
    let mut next = 0u32;
    let mut out = Vec::new();
    // The component being popped (most are one vertex: no allocation).
    let mut comp = Vec::new();
    for root in 0..n as u32 {
        if index[root as usize] != UNSEEN || out_ids(root).is_empty() || !kept(root) {
            continue;
        }
        call.push((root, 0));
        index[root as usize] = next;
        low[root as usize] = next;
        next += 1;
        stack.push(root);
        on_stack[root as usize] = true;
        while let Some(&mut (v, ref mut pos)) = call.last_mut() {
            let outs = out_ids(v);
            if (*pos as usize) < outs.len() {
                let w = outs[*pos as usize];
                *pos += 1;
                if !kept(w) {
                    continue;
                }
                if index[w as usize] == UNSEEN {
                    index[w as usize] = next;
                    low[w as usize] = next;
                    next += 1;
                    stack.push(w);
                    on_stack[w as usize] = true;
                    call.push((w, 0));
                } else if on_stack[w as usize] {
                    low[v as usize] = low[v as usize].min(index[w as usize]);
                }
            } else {
                call.pop();
                if let Some(&(parent, _)) = call.last() {
                    low[parent as usize] = low[parent as usize].min(low[v as usize]);
                }
                if low[v as usize] == index[v as usize] {
                    comp.clear();
                    loop {
                        let w = stack.pop().expect("tarjan stack");
                        on_stack[w as usize] = false;
                        comp.push(w);
                        if w == v {
                            break;
                        }
                    }
                    if comp.len() > 1 || out_ids(v).contains(&v) {
                        comp.sort_unstable();
                        out.push(comp.clone());
                    }
                }
            }
        }
    }
    out.sort_by_key(|c| c[0]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::Rels;

    #[test]
    fn finds_cycles_and_self_loops_only() {
        let g = DiGraph::from_edges(
            6,
            vec![
                (0, 1, Rels::WW),
                (1, 0, Rels::WR),
                (2, 3, Rels::WW),
                (4, 4, Rels::RW),
                (3, 5, Rels::WW),
                (5, 2, Rels::WW),
            ],
        );
        assert_eq!(
            nontrivial_sccs(&g),
            vec![vec![0, 1], vec![2, 3, 5], vec![4]]
        );
    }

    /// The components by definition: `v` and `w` share one when each
    /// reaches the other (transitive closure by repeated relaxation).
    // Indexes read as the closure's definition does.
    #[allow(clippy::needless_range_loop)]
    fn brute_force(n: usize, edges: &[(u32, u32, Rels)]) -> Vec<Vec<u32>> {
        let mut reach = vec![vec![false; n]; n];
        for &(a, b, _) in edges {
            reach[a as usize][b as usize] = true;
        }
        for k in 0..n {
            for i in 0..n {
                if reach[i][k] {
                    for j in 0..n {
                        if reach[k][j] {
                            reach[i][j] = true;
                        }
                    }
                }
            }
        }
        let mut out: Vec<Vec<u32>> = Vec::new();
        for v in 0..n {
            if out.iter().any(|c| c.contains(&(v as u32))) {
                continue;
            }
            let comp: Vec<u32> = (0..n)
                .filter(|&w| reach[v][w] && reach[w][v])
                .map(|w| w as u32)
                .collect();
            if !comp.is_empty() {
                out.push(comp);
            }
        }
        out
    }

    #[test]
    fn agrees_with_reachability_on_random_graphs() {
        let mut rng = crate::gen::Rng::new(0x9E37_79B9_7F4A_7C15);
        let mut next = |m: u64| rng.below(m);
        let mut cyclic = 0;
        for _ in 0..5000 {
            let n = 1 + next(12) as usize;
            let m = next(3 * n as u64 + 1);
            let edges: Vec<(u32, u32, Rels)> = (0..m)
                .map(|_| (next(n as u64) as u32, next(n as u64) as u32, Rels::WW))
                .collect();
            let expected = brute_force(n, &edges);
            cyclic += usize::from(!expected.is_empty());
            let g = DiGraph::from_edges(n, edges.clone());
            assert_eq!(nontrivial_sccs(&g), expected, "{edges:?}");
            // Rows not merged, placed on one core and in two halves.
            for split_from in [usize::MAX, 0] {
                let rows = UnmergedGraph::build(n, &edges, |_, _| {}, split_from);
                assert_eq!(nontrivial_sccs_unmerged(&rows), expected, "{edges:?}");
                let merged: Vec<_> = rows.merged().edges().collect();
                assert_eq!(merged, g.edges().collect::<Vec<_>>(), "{edges:?}");
            }
        }
        assert!(cyclic > 1000, "{cyclic}");
    }

    /// A position order from tables: the ends, and each vertex's start.
    struct Table {
        ends: Vec<bool>,
        starts: Vec<Option<u32>>,
    }

    impl PositionOrder for Table {
        fn is_end(&self, a: u32) -> bool {
            self.ends[a as usize]
        }
        fn start(&self, v: u32) -> Option<u32> {
            self.starts[v as usize]
        }
        fn started_at(&self, i: u32) -> Option<u32> {
            (0..self.starts.len() as u32).find(|&v| self.starts[v as usize] == Some(i))
        }
    }

    /// Peeling with the order kept as positions decides exactly what the
    /// graph with the order's edges listed (every end before a vertex's
    /// start to the vertex) has: random graphs and random orders, some
    /// with histories' shape (an op ends after it starts), some not.
    #[test]
    fn peeling_with_a_position_order_agrees_with_its_listed_edges() {
        let mut rng = crate::gen::Rng::new(0x2545_F491_4F6C_DD1D);
        let (mut cyclic, mut acyclic) = (0, 0);
        for round in 0..6000 {
            let n = 1 + rng.below(14) as usize;
            let m = rng.below(2 * n as u64 + 1);
            let mut edges: Vec<(u32, u32, Rels)> = (0..m)
                .map(|_| {
                    (
                        rng.below(n as u64) as u32,
                        rng.below(n as u64) as u32,
                        Rels::WW,
                    )
                })
                .collect();
            // Starts are distinct positions; in half the rounds a vertex
            // starts before itself, as an op's invocation precedes it.
            let mut free: Vec<u32> = (0..n as u32).collect();
            let mut starts = vec![None; n];
            for (v, start) in starts.iter_mut().enumerate() {
                let candidates: Vec<usize> = (0..free.len())
                    .filter(|&i| round % 2 == 1 || free[i] < v as u32)
                    .collect();
                if !candidates.is_empty() && rng.below(3) > 0 {
                    let k = rng.below(candidates.len() as u64) as usize;
                    *start = Some(free.remove(candidates[k]));
                }
            }
            let ends: Vec<bool> = (0..n).map(|_| rng.below(2) == 0).collect();
            let order = Table { ends, starts };
            for v in 0..n as u32 {
                if let Some(s) = order.start(v) {
                    edges.extend(
                        (0..s)
                            .filter(|&a| order.is_end(a))
                            .map(|a| (a, v, Rels::REALTIME)),
                    );
                }
            }
            let listed = UnmergedGraph::build(n, &edges, |_, _| {}, usize::MAX);
            let expected = nontrivial_sccs_unmerged(&listed).is_empty();
            let data_only: Vec<_> = edges
                .iter()
                .copied()
                .filter(|e| e.2 != Rels::REALTIME)
                .collect();
            let data = UnmergedGraph::build(n, &data_only, |_, _| {}, usize::MAX);
            let left = peeled_with(&data, &order);
            if let Some(left) = &left {
                // What is left holds every cycle of the listed graph.
                assert_eq!(
                    nontrivial_sccs_among(&listed, left),
                    nontrivial_sccs_unmerged(&listed),
                    "{data_only:?}"
                );
            }
            assert_eq!(
                left.is_none(),
                expected,
                "{data_only:?} {:?} {:?}",
                order.ends,
                order.starts
            );
            if expected {
                acyclic += 1;
            } else {
                cyclic += 1;
            }
        }
        assert!(cyclic > 1000 && acyclic > 1000, "{cyclic} {acyclic}");
    }
}
