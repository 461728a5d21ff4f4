//! When the MT graph of a list-append history contains Elle's graph
//! (issue 23): `auto` may then answer `{:valid? true}` from the MT path, which
//! is linear, instead of Elle's inference, and the answer is the same.
//!
//! Why it is the same, given [`super::analyze`] succeeds (every committed
//! or indeterminate transaction a mini-transaction, unique elements, every
//! read list the chain of read-modify-writes that ends in its last element)
//! and its check finds nothing at all:
//!
//! * no divergence (it would be a `lost-update`), so each key's committed
//!   appends form one chain and every read list is a prefix of it: Elle's
//!   version order is that prefix, its ww edges (consecutive elements), wr
//!   edges (appender of a read's last element) and rw edges (reader of
//!   `e_i` → appender of `e_i+1`, who read `e_i`) are MT edges too;
//!   the appends no read shows get no Elle edge at all;
//! * the non-cycle checks are Elle's own functions on both paths, and
//!   thin-air reads are `G1a` on both (`analyze_exact`);
//! * the process and real-time edges are the same function's.
//!
//! So a forbidden cycle in Elle's graph is one in the MT graph. Two things
//! the MT graph has that Elle's may not, and that this module rules out:
//! an `:info` transaction's read (Elle takes a non-nil one as a read, the MT
//! path does not; [`info_reads_nothing`]), and Elle's empty transaction
//! graph (`:valid? :unknown`) when no read shows any element: the caller
//! then requires a wr, process or real-time edge, which Elle's graph has
//! too.

use super::*;

/// Whether no `:info` op carries a read's value (Jepsen's `:info`
/// completions repeat the invocation's `nil` reads): Elle's list-append
/// inference would take such a read's edges, the MT path ignores them.
pub fn info_reads_nothing(h: &History) -> bool {
    h.ops
        .iter()
        .filter(|op| op.op_type == OpType::Info)
        .all(|op| {
            h.mops(op)
                .iter()
                .all(|m| m.f() != MopFn::Read || m.arg() == MopArg::Nil)
        })
}

/// Whether an inference's graph has an edge Elle's list-append graph of
/// the same history has too (see the module doc): a wr edge, or a process
/// or real-time one.
pub fn has_shared_edge(inference: &Inference<'_>) -> bool {
    let shared = Rels::WR.union(Rels::PROCESS).union(Rels::REALTIME);
    inference.edges.iter().any(|e| e.2.intersects(shared))
}
