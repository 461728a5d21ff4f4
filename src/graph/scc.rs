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
    let out_ids = |v| g.out_ids(v);
    match peeled(g.len(), out_ids) {
        None => Vec::new(),
        Some(left) => tarjan(g.len(), out_ids, |v| left[v as usize] != 0),
    }
}

/// For each vertex of the graph on `0..n` with edges from `v` to
/// `out_ids(v)`, how many edges still enter it once every vertex nothing
/// enters has been removed, again and again (Kahn's algorithm): 0 for the
/// removed ones, which lie on no cycle; a cycle's vertices (a self-edge's
/// included) are never removed. `None` when every vertex was: no cycle.
fn peeled<'g>(n: usize, out_ids: impl Fn(u32) -> &'g [u32]) -> Option<Vec<u32>> {
    let mut entering = vec![0u32; n];
    for v in 0..n as u32 {
        for &w in out_ids(v) {
            entering[w as usize] += 1;
        }
    }
    let mut ready: Vec<u32> = (0..n as u32)
        .filter(|&v| entering[v as usize] == 0)
        .collect();
    let mut removed = 0;
    while let Some(v) = ready.pop() {
        removed += 1;
        for &w in out_ids(v) {
            let e = &mut entering[w as usize];
            *e -= 1;
            if *e == 0 {
                ready.push(w);
            }
        }
    }
    (removed < n).then_some(entering)
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
}
