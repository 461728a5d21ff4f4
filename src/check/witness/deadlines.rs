//! How late each transaction can take effect, for ordering the version
//! chains' choices ([`deadlines`]).

use super::chains::{Clusters, NO_WRITER};
use super::*;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

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
/// The deadlines are minima over paths, computed as shortest paths with
/// zero-weight edges: each transaction is settled once, at its final
/// deadline (a Dijkstra search run backwards from every completion), so
/// the work is `O((n + reads) log n)`.
pub(super) fn deadlines(h: &History, cl: &Clusters, keep: &[bool]) -> Vec<u32> {
    let n = h.ops.len();
    let mut dl: Vec<u32> = (0..n)
        .map(|t| match h.ops[t].op_type {
            OpType::Ok if keep[t] => t as u32,
            _ => NONE,
        })
        .collect();
    // Per transaction, the clusters it read (sorted by reader), and the
    // keys it wrote (sorted by writer).
    let mut read: Vec<(u32, u32)> = Vec::with_capacity(cl.readers.len());
    for c in 0..cl.clusters.len() as u32 {
        read.extend(cl.readers(c).iter().map(|&r| (r, c)));
    }
    read.sort_unstable();
    let mut wrote: Vec<(u32, u32)> = cl.clusters[cl.keys..]
        .iter()
        .map(|c| (c.writer, c.kid))
        .collect();
    wrote.sort_unstable();
    // A key's `nil` readers need lowering once: by its first writer settled.
    let mut nil_done = vec![false; cl.keys];
    let mut heap: BinaryHeap<Reverse<(u32, u32)>> = (0..n as u32)
        .filter(|&t| dl[t as usize] != NONE)
        .map(|t| Reverse((dl[t as usize], t)))
        .collect();
    while let Some(Reverse((d, t))) = heap.pop() {
        if d != dl[t as usize] {
            continue;
        }
        let mut lower = |x: u32| {
            if x != t && x != NO_WRITER && dl[x as usize] > d {
                dl[x as usize] = d;
                heap.push(Reverse((d, x)));
            }
        };
        let from = read.partition_point(|&(r, _)| r < t);
        for &(_, c) in read[from..].iter().take_while(|&&(r, _)| r == t) {
            lower(cl.clusters[c as usize].writer);
        }
        let from = wrote.partition_point(|&(w, _)| w < t);
        for &(_, k) in wrote[from..].iter().take_while(|&&(w, _)| w == t) {
            if !std::mem::replace(&mut nil_done[k as usize], true) {
                // Cluster `k` is key `k`'s `nil`.
                for &r in cl.readers(k) {
                    lower(r);
                }
            }
        }
    }
    dl
}
