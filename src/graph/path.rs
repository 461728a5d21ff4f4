//! Shortest paths and short cycles over adjacency lists whose entries carry
//! an edge id, `adj[v] = [(target, edge id), …]`: the reports of the exact
//! checker name edges (with their reasons), not just vertices.

use super::{scc::nontrivial_sccs, DiGraph, Rels};

/// Edge ids of a shortest path `from ⇝ to` in `adj` whose inner vertices
/// satisfy `allowed` (breadth-first). With `from == to`, a shortest cycle
/// through `from`; `None` when there is no such path.
pub fn shortest_path(
    adj: &[Vec<(u32, usize)>],
    from: u32,
    to: u32,
    allowed: impl Fn(u32) -> bool,
) -> Option<Vec<usize>> {
    Bfs::new(adj.len()).shortest_path(adj, from, to, allowed)
}

/// A breadth-first search's tables, kept across searches: each search
/// clears only what it touched. Allocating them per search made reporting
/// a cycle of a graph with thousands of components (one search each)
/// fault in and free the tables every time (a 300k-transaction history:
/// 26 s, most of it in the kernel).
struct Bfs {
    pred: Vec<Option<(u32, usize)>>,
    seen: Vec<bool>,
    touched: Vec<u32>,
}

impl Bfs {
    fn new(n: usize) -> Bfs {
        Bfs {
            pred: vec![None; n],
            seen: vec![false; n],
            touched: Vec::new(),
        }
    }

    /// [`shortest_path`], on these tables.
    fn shortest_path(
        &mut self,
        adj: &[Vec<(u32, usize)>],
        from: u32,
        to: u32,
        allowed: impl Fn(u32) -> bool,
    ) -> Option<Vec<usize>> {
        for v in self.touched.drain(..) {
            self.seen[v as usize] = false;
            self.pred[v as usize] = None;
        }
        let Bfs {
            pred,
            seen,
            touched,
        } = self;
        let mut queue = std::collections::VecDeque::from([from]);
        seen[from as usize] = true;
        touched.push(from);
        while let Some(v) = queue.pop_front() {
            for &(t, e) in &adj[v as usize] {
                if t == to {
                    let mut path = vec![e];
                    let mut cur = v;
                    while cur != from {
                        let (p, pe) = pred[cur as usize].expect("BFS predecessor");
                        path.push(pe);
                        cur = p;
                    }
                    path.reverse();
                    return Some(path);
                }
                if !seen[t as usize] && allowed(t) {
                    seen[t as usize] = true;
                    pred[t as usize] = Some((v, e));
                    touched.push(t);
                    queue.push_back(t);
                }
            }
        }
        None
    }
}

/// Up to `max` short cycles of `adj` (edge ids, in cycle order), spread
/// over its strongly connected components and, within each, over start
/// vertices: each is a shortest cycle through its start vertex.
pub fn short_cycles(adj: &[Vec<(u32, usize)>], max: usize) -> Vec<Vec<usize>> {
    let g = DiGraph::from_edges(
        adj.len(),
        adj.iter()
            .enumerate()
            .flat_map(|(v, a)| a.iter().map(move |&(t, _)| (v as u32, t, Rels::WW)))
            .collect(),
    );
    let mut out = Vec::new();
    let mut comp_of = vec![u32::MAX; adj.len()];
    let sccs = nontrivial_sccs(&g);
    for (c, comp) in sccs.iter().enumerate() {
        for &v in comp {
            comp_of[v as usize] = c as u32;
        }
    }
    let per = max.div_ceil(sccs.len().max(1)).max(1);
    let mut bfs = Bfs::new(adj.len());
    for (c, comp) in sccs.iter().enumerate() {
        let step = (comp.len() / per).max(1);
        for &v in comp.iter().step_by(step).take(per) {
            if let Some(p) = bfs.shortest_path(adj, v, v, |t| comp_of[t as usize] == c as u32) {
                out.push(p);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The BFS takes the two-edge path over the three-edge one, skips
    /// vertices the filter refuses, and closes cycles through `from`.
    #[test]
    fn shortest_paths_respect_the_filter_and_cycles_close() {
        // 0 →(e0) 1 →(e1) 3; 0 →(e2) 2 →(e3) 4 →(e4) 3; 3 →(e5) 0.
        let adj = vec![
            vec![(1, 0), (2, 2)],
            vec![(3, 1)],
            vec![(4, 3)],
            vec![(0, 5)],
            vec![(3, 4)],
        ];
        assert_eq!(shortest_path(&adj, 0, 3, |_| true), Some(vec![0, 1]));
        assert_eq!(shortest_path(&adj, 0, 3, |v| v != 1), Some(vec![2, 3, 4]));
        assert_eq!(shortest_path(&adj, 0, 0, |_| true), Some(vec![0, 1, 5]));
        assert_eq!(shortest_path(&adj, 1, 2, |_| true), Some(vec![1, 5, 2]));
        assert_eq!(shortest_path(&adj, 1, 2, |v| v != 0), None);
        assert_eq!(short_cycles(&adj, 1), vec![vec![0, 1, 5]]);
        assert!(short_cycles(&[vec![(1, 0)], vec![]], 3).is_empty());
    }

    /// Searches that share their tables (each clearing what the one before
    /// touched) find what searches with fresh tables do: random graphs with
    /// many components, every start `short_cycles` takes.
    #[test]
    fn short_cycles_equal_fresh_searches_per_start() {
        let mut rng = crate::gen::Rng::new(11);
        let mut cycles = 0;
        for _ in 0..400 {
            let n = 2 + rng.below(40) as usize;
            let mut adj: Vec<Vec<(u32, usize)>> = vec![Vec::new(); n];
            for e in 0..rng.below(2 * n as u64) as usize {
                let (a, b) = (rng.below(n as u64) as usize, rng.below(n as u64) as u32);
                adj[a].push((b, e));
            }
            let max = 1 + rng.below(6) as usize;
            let g = DiGraph::from_edges(
                n,
                adj.iter()
                    .enumerate()
                    .flat_map(|(v, a)| a.iter().map(move |&(t, _)| (v as u32, t, Rels::WW)))
                    .collect(),
            );
            let sccs = nontrivial_sccs(&g);
            let per = max.div_ceil(sccs.len().max(1)).max(1);
            let mut want = Vec::new();
            for comp in &sccs {
                let step = (comp.len() / per).max(1);
                for &v in comp.iter().step_by(step).take(per) {
                    want.extend(shortest_path(&adj, v, v, |t| comp.contains(&t)));
                }
            }
            cycles += want.len();
            assert_eq!(short_cycles(&adj, max), want, "{adj:?}");
        }
        assert!(cycles > 300, "{cycles}");
    }
}
