//! The candidate order that completes each key's version order from the
//! transactions' real-time windows ([`by_zones`]), in one pass and without
//! search: the cheap first try of issue 23.
//!
//! Each key's clusters (a written value with its readers, see
//! `chains.rs`) are sorted by a point in time where the cluster can sit,
//! as in Gibbons and Korach's test for one register: a cluster none of
//! whose members completed before another was invoked ("backward": all its
//! members were in flight together) can shrink to the instant its last
//! member was invoked; one where some member completed before another was
//! invoked ("forward") must stretch over that gap, and sits where it
//! begins, at the first completion. Sorting by that point is consistent
//! with every order real time forces between two clusters of the key
//! (if `A`'s member completed before `B`'s was invoked, `A` comes first)
//! whenever the key alone is linearizable. Versions a read-then-write glues
//! together (see `chains.rs`) are sorted as one segment.
//!
//! The sorted clusters give each key a total version order; with the
//! writer-before-reader edges, each cluster before the next writer, the
//! session order and (with real time) the real-time order, any topological
//! order of that graph replays, since every read then sees its writer's
//! value last. Keys are coupled only through transactions that touch
//! several: when the per-key choices disagree, the graph has a cycle and
//! the candidate gives up (the version chains search instead). The order
//! agrees with the inference's version orders (`nil` first, a
//! read-then-write's two versions adjacent) by construction, so they are
//! not read back from its edges. Linear apart from sorting.

use super::chains::{Clusters, NO_WRITER};
use super::*;

/// A candidate order: every key's version order sorted by time (see the
/// module docs), in a topological order of the graph it induces with
/// session order and, with `orders.real_time`, real-time order. `None` when
/// a read has no unique writer, or that graph has a cycle.
pub fn by_zones(h: &History, orders: Orders) -> Option<Vec<u32>> {
    let n = h.ops.len();
    let mut keep: Vec<bool> = h.ops.iter().map(|op| op.op_type == OpType::Ok).collect();
    for i in read_infos(h) {
        keep[i as usize] = true;
    }
    let cl = Clusters::build(h, &keep)?;
    let units = Units::build(&cl);
    let mut w = Windows::new(h);
    for _ in 0..ROUNDS {
        w.narrow_by_reads(&cl);
        for k in 0..cl.keys {
            w.narrow_by_key(&units, k);
        }
    }
    // Each key's units by their point (see the module docs), the `nil`
    // one first.
    let spans: Vec<(u64, u64)> = (0..units.head.len() as u32)
        .map(|u| w.span(units.members(u)))
        .collect();
    let point = |u: u32| {
        let (lo, hi) = spans[u as usize];
        if (u as usize) < cl.keys {
            0
        } else {
            1 + w.point(lo, hi)
        }
    };
    let mut sorted: Vec<(u32, u64, u32)> = (0..units.head.len() as u32)
        .map(|u| (cl.clusters[units.head[u as usize] as usize].kid, point(u), u))
        .collect();
    sorted.sort_unstable();
    // Per key, its units in version order.
    let mut chains: Vec<Vec<u32>> = vec![Vec::new(); cl.keys];
    for &(kid, _, u) in &sorted {
        chains[kid as usize].push(u);
    }
    drop(sorted);
    // Per transaction, the (key, index) of the units whose first writer it
    // is: where a repair looks.
    let mut heads: HashMap<u32, Vec<(u32, u32)>> = HashMap::new();
    for (k, chain) in chains.iter().enumerate() {
        for (i, &u) in chain.iter().enumerate().skip(1) {
            let w = units.members(u)[0];
            heads.entry(w).or_default().push((k as u32, i as u32));
        }
    }
    let mut order_only: Vec<(u32, u32, Rels)> = Vec::new();
    order_edges(h, &keep, orders, &mut order_only);
    // Pairs already swapped: never swapped back (no oscillation).
    let mut fixed: HashSet<(u32, u32)> = HashSet::new();
    for _ in 0..REPAIRS {
        let g = graph(h, &cl, &units, &chains, &order_only);
        if let Some(order) = topological_order(n, |v| g.out_ids(v).iter().copied()) {
            return Some(order.into_iter().filter(|&v| keep[v as usize]).collect());
        }
        // Each cycle holds a version order the sort got wrong: a unit's
        // first writer reaches a member of the unit before it. Swap one
        // such pair per cycle.
        let mut in_scc = vec![u32::MAX; n];
        let sccs = crate::graph::scc::nontrivial_sccs(&g);
        for (i, scc) in sccs.iter().enumerate() {
            for &v in scc {
                in_scc[v as usize] = i as u32;
            }
        }
        // Per cycle, the pair of adjacent units on it whose points are
        // closest (the likeliest wrong guess), real time not forcing it.
        let mut best: Vec<Option<(u64, u32, u32)>> = vec![None; sccs.len()];
        for (i, scc) in sccs.iter().enumerate() {
            for &v in scc {
                for &(k, j) in heads.get(&v).map(Vec::as_slice).unwrap_or(&[]) {
                    let chain = &chains[k as usize];
                    let (a, b) = (chain[j as usize - 1], chain[j as usize]);
                    if j < 2 || fixed.contains(&(a, b)) || spans[a as usize].0 < spans[b as usize].1 {
                        continue;
                    }
                    if units.members(a).iter().any(|&m| in_scc[m as usize] == i as u32) {
                        let gap = point(b).abs_diff(point(a));
                        if best[i].is_none_or(|(g, _, _)| gap < g) {
                            best[i] = Some((gap, k, j));
                        }
                    }
                }
            }
        }
        let mut swaps = Vec::new();
        for &(_, k, j) in best.iter().flatten() {
            let chain = &chains[k as usize];
            fixed.insert((chain[j as usize], chain[j as usize - 1]));
            swaps.push((k, j));
        }
        if std::env::var_os("ELLERY_WITNESS_DEBUG").is_some() {
            eprintln!("sccs {} (largest {}) swaps {}", sccs.len(), sccs.iter().map(Vec::len).max().unwrap_or(0), swaps.len());
        }
        if swaps.is_empty() {
            if std::env::var_os("ELLERY_WITNESS_DEBUG").is_some() {
                for scc in sccs.iter().filter(|c| c.len() <= 3) {
                    let set: HashSet<u32> = scc.iter().copied().collect();
                    for &v in scc {
                        let outs: Vec<_> = g.out(v).filter(|(t, _)| set.contains(t)).collect();
                        eprintln!("{v} -> {outs:?} win {}..{}", w.early[v as usize], w.late[v as usize]);
                        for &(k, j) in heads.get(&v).map(Vec::as_slice).unwrap_or(&[]) {
                            let chain = &chains[k as usize];
                            let (a, b) = (chain[j as usize - 1], chain[j as usize]);
                            eprintln!("  heads key {k} #{j}: A={a} {:?} span {:?} pt {} / B={b} {:?} span {:?} pt {}", units.members(a), spans[a as usize], point(a), units.members(b), spans[b as usize], point(b));
                        }
                    }
                    eprintln!("--");
                }
            }
            return None;
        }
        for (k, j) in swaps {
            let chain = &mut chains[k as usize];
            chain.swap(j as usize - 1, j as usize);
            // Re-index the two units' entries.
            for jj in [j - 1, j] {
                let u = chains[k as usize][jj as usize];
                let w = units.members(u)[0];
                let list = heads.get_mut(&w).expect("indexed");
                for e in list.iter_mut() {
                    if e.0 == k && (e.1 == j - 1 || e.1 == j) {
                        e.1 = jj;
                    }
                }
            }
        }
    }
    None
}

/// Attempts of [`by_zones`] to repair the sorted version orders.
const REPAIRS: usize = 8;

/// The graph of the version orders in `chains`: each cluster before the
/// next writer of its key, each writer before its readers, and the order
/// edges.
fn graph(
    h: &History,
    cl: &Clusters,
    units: &Units,
    chains: &[Vec<u32>],
    order_only: &[(u32, u32, Rels)],
) -> DiGraph {
    let mut edges: Vec<(u32, u32, Rels)> = Vec::with_capacity(2 * cl.readers.len() + order_only.len() + cl.clusters.len());
    for (kid, chain) in chains.iter().enumerate() {
        let mut prev = NO_WRITER;
        for &u in chain {
            let mut c = units.head[u as usize];
            if c as usize == kid {
                // The key's `nil`, first: nothing before it.
                prev = c;
                c = cl.succ[c as usize];
            }
            while c != NO_WRITER {
                let w = cl.clusters[c as usize].writer;
                let before = cl.clusters[prev as usize].writer;
                for &x in cl.readers(prev).iter().chain(Some(&before)) {
                    if x != NO_WRITER && x != w {
                        edges.push((x, w, Rels::WW));
                    }
                }
                for &r in cl.readers(c) {
                    if r != w {
                        edges.push((w, r, Rels::WR));
                    }
                }
                prev = c;
                c = cl.succ[c as usize];
            }
        }
    }
    edges.extend_from_slice(order_only);
    DiGraph::from_edges(h.ops.len(), edges)
}

/// An order of every op position for the version chains to start from:
/// each kept transaction at the latest point its narrowed window allows
/// (see [`Windows`]), every other op at its position. It agrees with real
/// time, session order and each writer before its readers, so those facts
/// go in without reordering, and it suggests the versions' places.
pub(super) fn deadline_order(h: &History, cl: &Clusters, keep: &[bool]) -> Vec<u32> {
    let units = Units::build(cl);
    let mut w = Windows::new(h);
    for _ in 0..ROUNDS {
        w.narrow_by_reads(cl);
        for k in 0..cl.keys {
            w.narrow_by_key(&units, k);
        }
    }
    w.narrow_by_reads(cl);
    let mut order: Vec<u32> = (0..h.ops.len() as u32).collect();
    order.sort_by_cached_key(|&t| {
        if keep[t as usize] {
            w.late[t as usize]
        } else {
            t as u64 * SCALE
        }
    });
    order
}

/// Rounds of narrowing: each can narrow what the previous one's bounds
/// imply.
const ROUNDS: usize = 3;

/// Time units per op position: a window's bounds move by one unit per
/// precedence, so that several transactions can be ordered inside the gap
/// between two ops.
const SCALE: u64 = 1 << 10;

/// The units of each key's version order: its `nil` with the versions a
/// read-then-write glued to it (unit `kid`), and every other segment of
/// glued versions, with all their members (writers and readers).
struct Units {
    /// Per unit: its first cluster.
    head: Vec<u32>,
    /// Per unit: its range in `flat`.
    range: Vec<std::ops::Range<u32>>,
    flat: Vec<u32>,
    /// Per key: its units, the `nil` one first.
    of_key: Vec<Vec<u32>>,
}

impl Units {
    fn build(cl: &Clusters) -> Units {
        let mut u = Units {
            head: Vec::new(),
            range: Vec::new(),
            flat: Vec::new(),
            of_key: vec![Vec::new(); cl.keys],
        };
        let heads = (0..cl.keys as u32).chain((cl.keys as u32..cl.clusters.len() as u32).filter(
            |&c| cl.pred[c as usize] == NO_WRITER,
        ));
        for c in heads {
            let start = u.flat.len() as u32;
            let mut s = c;
            while s != NO_WRITER {
                let w = cl.clusters[s as usize].writer;
                u.flat.extend((w != NO_WRITER).then_some(w));
                u.flat.extend_from_slice(cl.readers(s));
                s = cl.succ[s as usize];
            }
            u.of_key[cl.clusters[c as usize].kid as usize].push(u.head.len() as u32);
            u.head.push(c);
            u.range.push(start..u.flat.len() as u32);
        }
        u
    }

    fn members(&self, u: u32) -> &[u32] {
        let r = &self.range[u as usize];
        &self.flat[r.start as usize..r.end as usize]
    }
}

/// Each transaction's window `[early, late]` (in [`SCALE`] units) for the
/// point where it takes effect.
struct Windows {
    early: Vec<u64>,
    late: Vec<u64>,
}

impl Windows {
    fn new(h: &History) -> Windows {
        let n = h.ops.len() as u64;
        let early = (0..h.ops.len())
            .map(|t| h.invocation_of(t).unwrap_or(t) as u64 * SCALE + 1)
            .collect();
        // An `:info` transaction may have taken effect until the end.
        let late = (0..h.ops.len())
            .map(|t| match h.ops[t].op_type {
                OpType::Ok => t as u64 * SCALE - 1,
                _ => n * SCALE,
            })
            .collect();
        Windows { early, late }
    }

    /// The latest of the members' latest points and the earliest of their
    /// earliest ones: `lo < hi` means the unit must stretch over `lo..hi`.
    fn span(&self, members: &[u32]) -> (u64, u64) {
        members.iter().fold((u64::MAX, 0), |(lo, hi), &m| {
            (lo.min(self.late[m as usize]), hi.max(self.early[m as usize]))
        })
    }

    /// Where a unit sits: as late as it can (a unit that must stretch, at
    /// the end of its stretch).
    fn point(&self, lo: u64, hi: u64) -> u64 {
        lo.max(hi)
    }

    /// A writer takes effect before its readers.
    fn narrow_by_reads(&mut self, cl: &Clusters) {
        for c in cl.keys as u32..cl.clusters.len() as u32 {
            let w = cl.clusters[c as usize].writer as usize;
            for &r in cl.readers(c) {
                let r = r as usize;
                if r != w {
                    self.early[r] = self.early[r].max(self.early[w] + 1);
                    self.late[w] = self.late[w].min(self.late[r].saturating_sub(1));
                }
            }
        }
    }

    /// The orders real time forces between two units of key `k`: when
    /// some member of `A` must take effect before some member of `B` can
    /// (`lo(A) < hi(B)`), all of `A` precedes `B`'s first writer (the
    /// `nil` unit precedes every other).
    fn narrow_by_key(&mut self, units: &Units, k: usize) {
        let list = &units.of_key[k];
        if list.len() < 2 {
            return;
        }
        let spans: Vec<(u64, u64)> = list.iter().map(|&u| self.span(units.members(u))).collect();
        let writer = |i: usize| units.members(list[i])[0] as usize;
        // The nil unit precedes all: as if it ended before everything.
        let lo = |i: usize| if i == 0 { 0 } else { spans[i].0 };
        // By `lo`: for each B, the latest `hi` among the A before it.
        let mut by_lo: Vec<usize> = (0..list.len()).collect();
        by_lo.sort_unstable_by_key(|&i| lo(i));
        let mut best: Vec<[(u64, usize); 2]> = Vec::with_capacity(list.len());
        let mut top = [(0u64, usize::MAX); 2];
        for &i in &by_lo {
            let e = (spans[i].1, i);
            if e.0 > top[0].0 {
                top = [e, top[0]];
            } else if e.0 > top[1].0 {
                top[1] = e;
            }
            best.push(top);
        }
        // By `hi` of the others: for each A, the earliest latest point of
        // a first writer after it.
        let mut by_hi: Vec<usize> = (1..list.len()).collect();
        by_hi.sort_unstable_by_key(|&i| spans[i].1);
        let mut suffix: Vec<[(u64, usize); 2]> = vec![[(u64::MAX, usize::MAX); 2]; by_hi.len() + 1];
        for j in (0..by_hi.len()).rev() {
            let i = by_hi[j];
            let e = (self.late[writer(i)], i);
            let mut top = suffix[j + 1];
            if e.0 < top[0].0 {
                top = [e, top[0]];
            } else if e.0 < top[1].0 {
                top[1] = e;
            }
            suffix[j] = top;
        }
        let pick = |top: &[(u64, usize); 2], me: usize| if top[0].1 == me { top[1].0 } else { top[0].0 };
        for b in 1..list.len() {
            let hi_b = spans[b].1;
            let count = by_lo.partition_point(|&i| lo(i) < hi_b);
            if count > 0 {
                let e = pick(&best[count - 1], b);
                if e != u64::MAX && e > 0 {
                    let w = writer(b);
                    self.early[w] = self.early[w].max(e + 1);
                }
            }
        }
        for a in 0..list.len() {
            let from = by_hi.partition_point(|&i| spans[i].1 <= lo(a));
            let l = pick(&suffix[from], a);
            if l != u64::MAX {
                let bound = l.saturating_sub(1);
                for &m in units.members(list[a]) {
                    self.late[m as usize] = self.late[m as usize].min(bound);
                }
            }
        }
    }
}

/// Session order between the kept `:ok` transactions and, with
/// `orders.real_time`, real-time order through a chain of the kept
/// invocations (each transaction after its invocation, each `:ok` one
/// before the first invocation after its completion): linear in size,
/// where the pairwise relation is quadratic.
fn order_edges(h: &History, keep: &[bool], orders: Orders, edges: &mut Vec<(u32, u32, Rels)>) {
    let n = h.ops.len();
    if orders.real_time {
        let mut instants: Vec<u32> = (0..n)
            .filter(|&t| keep[t])
            .map(|t| h.invocation_of(t).unwrap_or(t) as u32)
            .collect();
        instants.sort_unstable();
        for w in instants.windows(2) {
            edges.push((w[0], w[1], Rels::REALTIME));
        }
        for t in (0..n).filter(|&t| keep[t]) {
            if let Some(i) = h.invocation_of(t) {
                edges.push((i as u32, t as u32, Rels::REALTIME));
            }
            if h.ops[t].op_type == OpType::Ok {
                let next = instants.partition_point(|&i| i as usize <= t);
                if let Some(&i) = instants.get(next) {
                    edges.push((t as u32, i, Rels::REALTIME));
                }
            }
        }
    }
    let mut last: HashMap<i64, u32> = HashMap::new();
    for t in (0..n).filter(|&t| keep[t] && h.ops[t].op_type == OpType::Ok) {
        if let Some(p) = last.insert(h.ops[t].process, t as u32) {
            edges.push((p, t as u32, Rels::PROCESS));
        }
    }
}
