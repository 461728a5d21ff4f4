//! Exact verdicts when no read reveals the order of a key's last appends
//! (issue 22 §4).
//!
//! Elle (and [`analyze`]) orders the appended elements no read shows after
//! the longest read, all at the same place: each gets a ww edge from the
//! last shown element's writer and an rw edge from its readers, and none
//! gets an edge from another. The real order is one of the total orders of
//! these appends. Every choice's graph contains each of Elle's cycles
//! (Elle's edges are paths with the same rw edges in it), so an inferred
//! anomaly holds for every choice; but a choice adds ww edges between the
//! unrevealed appends, which can close a cycle a model forbids where Elle
//! sees one it allows (two transactions appending to a key, each with an rw
//! edge to the other: G2-item as inferred, G-single-item under either
//! order, so not snapshot isolation).
//!
//! The search is kept small by two facts. A new ww edge between two
//! transactions lies on a new cycle only if they are in the same strongly
//! connected component of Elle's graph: ordering the unrevealed appends of
//! different components by a topological order of the components adds no
//! cycle, and every cycle of another order maps to a closed walk of this
//! one with the same rw edges (so as forbidden). So only the order within
//! each component is a choice. An `:info` transaction whose appends no read
//! shows takes part in no choice: dropping it (it may not have committed)
//! only removes edges, and Elle's graph gives it no outgoing edge anyway.
//! [`decide_open_orders`] then tries every remaining combination.

use super::*;
use crate::graph::scc::nontrivial_sccs;
use crate::graph::{topological_order, DiGraph};

/// One key whose unrevealed appends (by committed or observed `:info`
/// transactions) come from two or more transactions: those transactions in
/// blocks, in a topological order of the components of Elle's graph; the
/// transactions of one block share a component and may come in any order.
#[derive(Clone, Debug, PartialEq, Eq)]
struct OpenKey {
    key: Atom,
    blocks: Vec<Vec<u32>>,
}

/// The choices of order an exact list-append verdict must try (see the
/// module doc): empty when Elle's graph already decides.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OpenOrders {
    keys: Vec<OpenKey>,
}

impl OpenOrders {
    /// Whether no choice can change the verdict (no block of two or more).
    pub fn is_empty(&self) -> bool {
        self.free_blocks().next().is_none()
    }

    /// How many combinations of orders there are (saturating).
    pub fn combinations(&self) -> u64 {
        self.free_blocks()
            .map(|b| (2..=b.len() as u64).fold(1u64, |a, i| a.saturating_mul(i)))
            .fold(1u64, |a, f| a.saturating_mul(f))
    }

    /// Each key with unrevealed appends by two or more transactions, and
    /// those transactions (op positions) in blocks: in a topological order
    /// of the components of Elle's graph, one block per component; only a
    /// block of two or more is a choice.
    pub fn blocks(&self) -> impl Iterator<Item = (Atom, &[Vec<u32>])> + '_ {
        self.keys.iter().map(|k| (k.key, k.blocks.as_slice()))
    }

    fn free_blocks(&self) -> impl Iterator<Item = &Vec<u32>> {
        self.keys
            .iter()
            .flat_map(|k| k.blocks.iter())
            .filter(|b| b.len() > 1)
    }
}

/// The orders left open by the reads of a list-append history whose Elle
/// inference is `inference` (from [`analyze`] or [`super::analyze_exact`]
/// on `h`).
pub fn open_orders(h: &History, inference: &Inference<'_>) -> OpenOrders {
    let is_possible = |i: usize| matches!(h.ops[i].op_type, OpType::Ok | OpType::Info);
    let orders = sorted_values(h, is_possible).orders;
    let revealed = |k: Atom, e: Atom| orders.get(&k).is_some_and(|o| o.indices.contains_key(&e));
    let appends = |i: usize| {
        h.mops(&h.ops[i])
            .iter()
            .filter(|m| m.f() == MopFn::Append)
            .map(|m| (m.key(), append_value(m)))
    };
    let mut keys: Vec<Atom> = Vec::new();
    let mut by_key: HashMap<Atom, Vec<u32>> = HashMap::new();
    for i in 0..h.ops.len() {
        let observed = match h.ops[i].op_type {
            OpType::Ok => true,
            OpType::Info => appends(i).any(|(k, e)| revealed(k, e)),
            _ => false,
        };
        if !observed {
            continue;
        }
        for (k, e) in appends(i) {
            if revealed(k, e) {
                continue;
            }
            let ops = by_key.entry(k).or_insert_with(|| {
                keys.push(k);
                Vec::new()
            });
            if ops.last() != Some(&(i as u32)) {
                ops.push(i as u32);
            }
        }
    }
    keys.retain(|k| by_key[k].len() > 1);
    if keys.is_empty() {
        return OpenOrders::default();
    }
    let rank = component_ranks(inference.graph(h).merged());
    let keys = keys
        .into_iter()
        .map(|key| {
            let mut ops = by_key.remove(&key).expect("collected");
            ops.sort_by_key(|&o| (rank[o as usize], o));
            let blocks = ops
                .chunk_by(|a, b| rank[*a as usize] == rank[*b as usize])
                .map(|b| b.to_vec())
                .collect();
            OpenKey { key, blocks }
        })
        .collect();
    OpenOrders { keys }
}

/// Each vertex's component's position in a topological order of the
/// components of `g` (vertices of one strongly connected component share
/// it).
fn component_ranks(g: DiGraph) -> Vec<u32> {
    let n = g.len();
    let sccs = nontrivial_sccs(&g);
    // Component ids: one per nontrivial SCC, then one per other vertex.
    let mut comp: Vec<u32> = vec![u32::MAX; n];
    for (c, scc) in sccs.iter().enumerate() {
        for &v in scc {
            comp[v as usize] = c as u32;
        }
    }
    let mut next = sccs.len() as u32;
    for c in comp.iter_mut().filter(|c| **c == u32::MAX) {
        *c = next;
        next += 1;
    }
    let mut out: Vec<Vec<u32>> = vec![Vec::new(); next as usize];
    for (a, b, _) in g.edges() {
        let (ca, cb) = (comp[a as usize], comp[b as usize]);
        if ca != cb {
            out[ca as usize].push(cb);
        }
    }
    let order = topological_order(next as usize, |c| out[c as usize].iter().copied())
        .expect("the graph of components is acyclic");
    let pos = crate::graph::positions(&order);
    comp.iter().map(|&c| pos[c as usize]).collect()
}

/// [`analyze`] with each listed key's unrevealed appends in the given order
/// of transactions (op positions; each one's unrevealed elements in its
/// program order) after the elements the reads show.
pub fn analyze_ordered(
    h: &History,
    extra: ExtraGraph,
    orders: &[(Atom, Vec<u32>)],
) -> Result<Inference<'static>, Refusal> {
    analyze_with(h, extra, false, |inferred| {
        for (k, ops) in orders {
            let o = inferred.entry(*k).or_default();
            for &op in ops {
                for m in h.mops(&h.ops[op as usize]) {
                    let e = append_value(m);
                    if m.f() == MopFn::Append && m.key() == *k && !o.indices.contains_key(&e) {
                        o.indices.insert(e, o.values.len() as u32);
                        o.values.push(e);
                    }
                }
            }
        }
    })
}

/// Orders [`decide_open_orders`] tries at most.
pub const MAX_ORDERS: u64 = 4096;

/// The orders tried times the history's ops, at most: each order is a
/// whole inference and cycle search (a 10,000-op history: 1,000 orders).
pub const ORDER_WORK: u64 = 10_000_000;

/// What [`decide_open_orders`] found, with the number of combinations.
#[derive(Debug)]
pub enum OrderDecision<T> {
    /// No order is a choice (see [`open_orders`]): Elle's graph decides.
    NoChoice,
    /// Some order passes the check: the inferred verdict stands.
    SomeOrderPasses(u64),
    /// Every order fails it; the check's answer for the first order (in
    /// history order of the transactions, lexicographically).
    EveryOrderFails(u64, T),
    /// Some order's check was inconclusive and none passed.
    Undecided(u64),
    /// More combinations than the limits ([`MAX_ORDERS`], [`ORDER_WORK`]).
    TooMany(u64),
}

impl<T> OrderDecision<T> {
    /// A line for `--verbose`.
    pub fn describe(&self) -> String {
        match self {
            OrderDecision::NoChoice => "no order of unrevealed appends is a choice".into(),
            OrderDecision::SomeOrderPasses(n) => {
                format!("{n} orders of the appends no read reveals; one has no forbidden cycle")
            }
            OrderDecision::EveryOrderFails(n, _) => format!(
                "each of the {n} orders of the appends no read reveals has a forbidden cycle; the first order's is reported"
            ),
            OrderDecision::Undecided(n) => {
                format!("{n} orders of the appends no read reveals; a cycle search timed out")
            }
            OrderDecision::TooMany(n) => format!(
                "{n} orders of the appends no read reveals, over the limit ({MAX_ORDERS}, and {ORDER_WORK} ops checked in all)"
            ),
        }
    }
}

/// Decides the orders [`open_orders`] finds in `inference` (Elle's, from
/// [`analyze`] or [`super::analyze_exact`] on `h`): tries every combination
/// (within the limits), building each one's inference and asking `check`
/// whether it passes (`Some(true)`), fails (`Some(false)`, with its answer)
/// or cannot tell (`None`); stops at the first that passes.
pub fn decide_open_orders<T>(
    h: &History,
    extra: ExtraGraph,
    inference: &Inference<'_>,
    mut check: impl FnMut(&Inference<'static>) -> (Option<bool>, T),
) -> Result<OrderDecision<T>, Refusal> {
    let open = open_orders(h, inference);
    if open.is_empty() {
        return Ok(OrderDecision::NoChoice);
    }
    let combinations = open.combinations();
    if combinations > MAX_ORDERS.min(ORDER_WORK / h.ops.len().max(1) as u64) {
        return Ok(OrderDecision::TooMany(combinations));
    }
    // The current permutation of every block, starting in history order.
    let mut blocks: Vec<Vec<Vec<u32>>> = open.keys.iter().map(|k| k.blocks.clone()).collect();
    let mut first = None;
    let mut undecided = false;
    loop {
        let orders: Vec<(Atom, Vec<u32>)> = open
            .keys
            .iter()
            .zip(&blocks)
            .map(|(k, bs)| (k.key, bs.concat()))
            .collect();
        let inference = analyze_ordered(h, extra, &orders)?;
        match check(&inference) {
            (Some(true), _) => return Ok(OrderDecision::SomeOrderPasses(combinations)),
            (Some(false), answer) => {
                first.get_or_insert(answer);
            }
            (None, _) => undecided = true,
        }
        // The next combination: an odometer over the blocks' permutations
        // (`next_permutation` wraps a block back to sorted order).
        let mut free = blocks.iter_mut().flatten().filter(|b| b.len() > 1);
        if !free.any(|b| next_permutation(b)) {
            break;
        }
    }
    Ok(match first {
        Some(answer) if !undecided => OrderDecision::EveryOrderFails(combinations, answer),
        _ => OrderDecision::Undecided(combinations),
    })
}

/// Rearranges `xs` into the next permutation in lexicographic order;
/// `false` (and `xs` sorted again) after the last.
fn next_permutation(xs: &mut [u32]) -> bool {
    let Some(i) = (1..xs.len()).rev().find(|&i| xs[i - 1] < xs[i]) else {
        xs.reverse();
        return false;
    };
    let j = (i..xs.len())
        .rev()
        .find(|&j| xs[j] > xs[i - 1])
        .expect("a larger element after the pivot");
    xs.swap(i - 1, j);
    xs[i..].reverse();
    true
}

#[cfg(test)]
mod tests {
    use super::next_permutation;

    #[test]
    fn permutations_run_through_every_order_and_wrap() {
        let mut xs = [1, 2, 3];
        let mut seen = vec![xs.to_vec()];
        while next_permutation(&mut xs) {
            seen.push(xs.to_vec());
        }
        assert_eq!(
            seen,
            vec![
                vec![1, 2, 3],
                vec![1, 3, 2],
                vec![2, 1, 3],
                vec![2, 3, 1],
                vec![3, 1, 2],
                vec![3, 2, 1]
            ]
        );
        assert_eq!(xs, [1, 2, 3]);
    }
}
