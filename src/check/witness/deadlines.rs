//! How late each transaction can take effect, for ordering the version
//! chains' choices ([`deadlines`]).

use super::chains::{Clusters, NO_WRITER};
use crate::graph::grouped;

/// No deadline (an op no kept transaction completes at, or an `:info`
/// transaction nobody read).
pub(super) const NONE: u32 = u32::MAX;

/// Each kept transaction's deadline: the earliest completion (a position in
/// `h.ops`) among itself and the transactions that must follow it: the
/// readers of its values and, for a reader of a key's `nil`, every writer
/// of that key. An `:ok` transaction took effect before it completed, so it
/// took effect before its deadline too; a writer whose value a quick reader
/// saw took effect before that reader completed, however late its own
/// completion. Ordering by deadline instead of completion puts such a
/// writer where the reader needs it (the generated 200,000-transaction
/// histories: seed 1 places every writer without a backjump, seed 2 with
/// 4, where completion order needed 16 and gave up). `:info` transactions
/// get their readers' deadlines; others [`NONE`].
///
/// The deadlines are minima over paths: each transaction is settled once,
/// at its final deadline, by searches from the completions in increasing
/// order, so the work is `O(n + reads)`.
pub(super) fn deadlines(cl: &Clusters, keep: &[bool], ok: &[bool]) -> Vec<u32> {
    let n = keep.len();
    let mut dl: Vec<u32> = (0..n)
        .map(|t| if keep[t] && ok[t] { t as u32 } else { NONE })
        .collect();
    // Per transaction, the clusters it read and the keys it wrote, as
    // lists indexed by transaction (counting sorts: the deadlines are a
    // fixpoint, so the order within a list does not matter).
    let read = grouped(
        n,
        (0..cl.clusters.len() as u32).flat_map(|c| cl.readers(c).iter().map(move |&r| (r, c))),
    );
    let wrote = grouped(n, cl.clusters[cl.keys..].iter().map(|c| (c.writer, c.kid)));
    // A key's `nil` readers need lowering once: by its first writer settled.
    let mut nil_done = vec![false; cl.keys];
    // Every edge keeps the deadline, so a transaction's final deadline is
    // the smallest completion that reaches it: taking the completions in
    // increasing order, a depth-first search from each settles what it
    // reaches first, once (a heap of every transaction cost a tenth of
    // the chains for the same answer).
    let mut stack: Vec<u32> = Vec::new();
    for s in 0..n as u32 {
        if dl[s as usize] != s {
            // Not a kept completion, or already reached from an earlier one.
            continue;
        }
        let d = s;
        stack.push(s);
        while let Some(t) = stack.pop() {
            let mut lower = |x: u32| {
                if x != t && x != NO_WRITER && dl[x as usize] > d {
                    dl[x as usize] = d;
                    stack.push(x);
                }
            };
            for &c in read.of(t) {
                lower(cl.clusters[c as usize].writer);
            }
            for &k in wrote.of(t) {
                if !std::mem::replace(&mut nil_done[k as usize], true) {
                    // Cluster `k` is key `k`'s `nil`.
                    for &r in cl.readers(k) {
                        lower(r);
                    }
                }
            }
        }
    }
    dl
}
