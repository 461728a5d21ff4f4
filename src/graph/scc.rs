//! Strongly connected components (iterative Tarjan).

use super::DiGraph;

/// The strongly connected components of `g` that contain a cycle: more than
/// one vertex, or a single vertex with a self-edge. Each component's vertices
/// are sorted ascending; components are ordered by their smallest vertex.
pub fn nontrivial_sccs(g: &DiGraph) -> Vec<Vec<u32>> {
    let n = g.len();
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
    for root in 0..n as u32 {
        if index[root as usize] != UNSEEN || !g.has_edges(root) {
            continue;
        }
        call.push((root, 0));
        index[root as usize] = next;
        low[root as usize] = next;
        next += 1;
        stack.push(root);
        on_stack[root as usize] = true;
        while let Some(&mut (v, ref mut pos)) = call.last_mut() {
            let outs = g.out_ids(v);
            if (*pos as usize) < outs.len() {
                let w = outs[*pos as usize];
                *pos += 1;
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
                    let mut comp = Vec::new();
                    loop {
                        let w = stack.pop().expect("tarjan stack");
                        on_stack[w as usize] = false;
                        comp.push(w);
                        if w == v {
                            break;
                        }
                    }
                    if comp.len() > 1 || g.edge(v, v).is_some() {
                        comp.sort_unstable();
                        out.push(comp);
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
}
