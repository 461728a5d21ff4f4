//! The MTC paper's decision procedures on a mini-transaction dependency
//! graph ([`ellery::infer::mini`]): CHECKSER, CHECKSI (with the DIVERGENCE
//! pre-check) and CHECKSSER, each linear in the graph's size.
//!
//! The pipeline reports anomalies through the ordinary cycle search; these
//! procedures are the paper's verdicts, used by these tests to cross-check the
//! reports.
//!
//! Real-time order is the foundation's sweep (`ellery::infer::order_graphs::realtime_edges`),
//! the transitive reduction of "completed before invoked", whose size is
//! bounded by ops × concurrency rather than the paper's Θ(n²) pairs.

use ellery::graph::scc::nontrivial_sccs;
use ellery::graph::{DiGraph, Rels};

/// Whether the edges (over vertices `0..n`) form an acyclic graph: CHECKSER
/// on wr ∪ ww ∪ rw (∪ process order), CHECKSSER with real-time order added.
pub fn acyclic(n: usize, edges: &[(u32, u32, Rels)]) -> bool {
    nontrivial_sccs(&DiGraph::from_edge_slice(n, edges)).is_empty()
}

/// CHECKSI: false on a DIVERGENCE (two transactions read-modify-wrote the
/// same version), else whether `G' = X ∪ (X ; rw)`, X = every non-rw edge
/// (wr, ww and any order edges given), is acyclic. A composite self-loop is a
/// violation (FracturedRead, NonMonotonicRead, SessionGuaranteeViolation).
pub fn snapshot_isolation(n: usize, edges: &[(u32, u32, Rels)], divergent: bool) -> bool {
    if divergent {
        return false;
    }
    let g = DiGraph::from_edge_slice(n, edges);
    let mut composed: Vec<(u32, u32, Rels)> = Vec::with_capacity(edges.len() * 2);
    for (a, b, r) in g.edges() {
        if r.difference(Rels::ANY_RW).is_empty() {
            continue; // rw only: not an edge of G' by itself
        }
        composed.push((a, b, Rels::WW));
        for (c, rc) in g.out(b) {
            if rc.intersects(Rels::ANY_RW) {
                if c == a {
                    return false;
                }
                composed.push((a, c, Rels::RW));
            }
        }
    }
    acyclic(n, &composed)
}
