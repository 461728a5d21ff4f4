//! The candidate order that completes each key's version order
//! ([`by_version_chains`]).
//!
//! With unique written values, a serial order replays exactly when, for
//! each key, the writers form a chain `w1 < w2 < …` and every reader of
//! `w_i`'s value comes after `w_i` and before `w_{i+1}` (readers of `nil`
//! before `w1`). So the candidate builds such a chain per key: each writer
//! together with its readers (a *cluster*) is inserted into its key's
//! chain at the place the current order suggests, as the edges
//! `w_prev → w`, `readers(prev) → w`, `w → w_next`, `readers(w) → w_next`
//! (plus `w → readers(w)`, added up front), kept acyclic together with
//! session order and real-time order by an incrementally maintained
//! topological order ([`DynamicOrder`]). A place that would close a cycle
//! is taken back and the neighbouring places are tried.
//!
//! What steers the places: first, [`Propagation`] adds the version orders
//! the graph already forces (a cluster whose writer reaches a member of
//! another of the same key comes wholly before it), one round before any
//! choice, and a second (then placing again) only when placing gives up.
//! With few transactions at once (a mean span of at most
//! [`QUICK_MAX_SPAN`] positions) placing is first tried without
//! propagation, within fewer backjumps.
//! A transaction that read a key and then wrote it writes the version
//! right after the one it read, so such versions go in together,
//! as one segment, and the glued version's writer, pinned in time by it,
//! has its other clusters placed at once. A writer's clusters (one per
//! key it writes) are placed
//! together, by a small depth-first search, since the place chosen in one
//! key pins where the writer can go in the others. Writers are taken by
//! deadline (the latest point they can have taken effect, see
//! [`deadlines`]), those nobody reads a little later (twice the mean
//! span of a transaction past their deadline, [`spans_total`]), and the
//! order that suggests the places starts as the deadlines. When a writer finds no place, the
//! latest earlier writer whose edges closed one of the cycles is taken
//! back with everything after it and tries another place
//! (conflict-directed backjumping, within a budget; what is banned is that
//! writer's whole placing, not each of its places). An unread writer with
//! no gap (a cluster of its key has a writer that reaches it and a reader
//! it reaches) blames only the groups on those two paths, and goes in just
//! before the latest of them instead, once: a writer so moved is
//! backjumped to, not jumped over again.
//!
//! Generated strict-serializable histories of 3,000 to 200,000
//! transactions are confirmed this way (at 200,000 with 10 processes,
//! seeds 1, 2 and 3 with 1 to 3 backjumps; with 20 and 50 processes, seed
//! 1, with 55 and 152). It is still a heuristic: when it gives up, the
//! other candidates and then the SAT checker decide. When every cluster has a
//! place, the topological order maintained is a serial witness; the
//! replay still judges it.

// Long (about 1,000 lines): the phases (clusters, facts, placing) share the
// cluster view and the dynamic order; they read best in one place, in the
// order they run. Propagation, which only adds facts, is in `propagate.rs`.

use super::deadlines::{self, deadlines};
use super::*;
use crate::graph::dynamic_order::DynamicOrder;
use propagate::Propagation;

mod propagate;

/// Places in its key's chain a cluster may try before the candidate gives
/// up: the suggested one and its neighbours. Generated histories need the
/// first almost always; a wrong place shows up as a cycle at once.
const TRIES: usize = 16;

/// The label of edges no choice added (session and real-time order, each
/// writer before its readers); the others carry their group's index.
const FACT: u32 = u32::MAX;

/// No writer: the cluster of a key's initial `nil`.
pub(super) const NO_WRITER: u32 = u32::MAX;

/// A writer of one key and the transactions that read its value.
pub(super) struct Cluster {
    /// Dense key id.
    pub(super) kid: u32,
    /// The writer's completion position, or [`NO_WRITER`].
    pub(super) writer: u32,
    /// The range of its readers in [`Clusters::readers`].
    readers: std::ops::Range<u32>,
}

/// Every key's clusters, the initial `nil` ones first (cluster `kid` is
/// key `kid`'s `nil`).
pub(super) struct Clusters {
    pub(super) clusters: Vec<Cluster>,
    pub(super) readers: Vec<u32>,
    pub(super) keys: usize,
    /// Per cluster, the cluster its version must directly follow, or
    /// [`NO_WRITER`]: a writer that read the key first writes the next
    /// version of what it read.
    pred: Vec<u32>,
    /// The inverse of `pred`.
    succ: Vec<u32>,
    /// Per op, the first cluster it wrote, or [`NO_WRITER`].
    first_of: Vec<u32>,
}

impl Clusters {
    /// Groups the transactions `keep` marks into clusters; `None` when a
    /// read cannot be matched to exactly one kept writer (a value written
    /// twice or not at all, a written `nil`).
    // Long (about 125 lines): one pass per step (writes, reads, values,
    // readers by cluster, glued versions), each dropping what the next no
    // longer needs (issue 23: memory).
    fn build(h: &History, keep: &[bool]) -> Option<Clusters> {
        // Dense key ids by first appearance (small integer keys by
        // indexing: a hash lookup per micro-op was a tenth of the chains).
        let mut kid = crate::infer::rw_register::AtomIds::default();
        let mut keys = 0u32;
        let mut key_id = |k: Atom| {
            kid.id(k, || {
                keys += 1;
                keys - 1
            })
        };
        // One pass over the kept transactions collects both, with their
        // keys as atoms: each transaction's final writes (the value it
        // leaves in each key) and, for `:ok` ones, its external reads.
        // Keys are numbered after, writes first, as two passes did (issue
        // 23: the second pass over the ops and micro-ops was a third of
        // building the clusters).
        // Room for every micro-op of the completions (about half of them):
        // untouched room costs no memory, and growing by doubling cost a
        // twelfth of building the clusters (copies and fresh pages).
        let room = h.mops.len() / 2;
        let mut raw_writes: Vec<(Atom, Atom, u32)> = Vec::with_capacity(room);
        let mut raw_reads: Vec<(Atom, Option<Atom>, u32)> = Vec::with_capacity(room);
        for t in (0..h.ops.len()).filter(|&t| keep[t]) {
            let observed = h.ops[t].op_type == OpType::Ok;
            let mops = txn_mops(h, t);
            let mut unwritten = false;
            final_writes_at(mops, |i| match reg_value(&mops[i]) {
                Ok(Some(v)) => raw_writes.push((mops[i].key(), v, t as u32)),
                _ => unwritten = true,
            });
            if unwritten {
                return None;
            }
            if observed {
                external_reads_of(mops, |k, v| raw_reads.push((k, v, t as u32)));
            }
        }
        let writes: Vec<(u32, Atom, u32)> = raw_writes
            .into_iter()
            .map(|(k, v, t)| (key_id(k), v, t))
            .collect();
        let reads: Vec<(u32, Option<Atom>, u32)> = raw_reads
            .into_iter()
            .map(|(k, v, t)| (key_id(k), v, t))
            .collect();
        drop(kid);
        let keys = keys as usize;
        let mut clusters: Vec<Cluster> = (0..keys as u32)
            .map(|kid| Cluster {
                kid,
                writer: NO_WRITER,
                readers: 0..0,
            })
            .collect();
        let by_value = ByValue::new(keys, &writes, clusters.len())?;
        // A writer's clusters are consecutive (`writes` lists each
        // transaction's together): its first one, for finding the cluster of
        // a writer and key without a map.
        let mut first_of: Vec<u32> = vec![NO_WRITER; h.ops.len()];
        for (kid, _, t) in writes {
            let c = clusters.len() as u32;
            if first_of[t as usize] == NO_WRITER {
                first_of[t as usize] = c;
            }
            clusters.push(Cluster {
                kid,
                writer: t,
                readers: 0..0,
            });
        }
        // Readers grouped by cluster, each once: `reads` lists them by
        // transaction, so a counting sort by cluster sorts the pairs.
        let mut cluster_of: Vec<u32> = Vec::with_capacity(reads.len());
        let mut count = vec![0u32; clusters.len() + 1];
        for &(kid, v, _) in &reads {
            let c = match v {
                None => kid,
                Some(v) => by_value.get(kid, v)?,
            };
            cluster_of.push(c);
            count[c as usize + 1] += 1;
        }
        drop(by_value);
        for i in 1..count.len() {
            count[i] += count[i - 1];
        }
        let mut of: Vec<(u32, u32)> = vec![(0, 0); reads.len()];
        for (&c, &(_, _, t)) in cluster_of.iter().zip(&reads) {
            of[count[c as usize] as usize] = (c, t);
            count[c as usize] += 1;
        }
        drop((cluster_of, count, reads));
        of.dedup();
        // The cluster of writer `t`'s write of key `kid`.
        let written = |t: u32, kid: u32| {
            let first = *first_of.get(t as usize)?;
            if first == NO_WRITER {
                return None;
            }
            clusters[first as usize..]
                .iter()
                .take_while(|c| c.writer == t)
                .position(|c| c.kid == kid)
                .map(|i| first + i as u32)
        };
        let mut pred = vec![NO_WRITER; clusters.len()];
        let mut succ = vec![NO_WRITER; clusters.len()];
        for &(p, t) in &of {
            let Some(c) = written(t, clusters[p as usize].kid) else {
                continue;
            };
            // Two versions after one (a lost update), or one after two: no
            // chain has them.
            if c == p
                || std::mem::replace(&mut pred[c as usize], p) != NO_WRITER
                || std::mem::replace(&mut succ[p as usize], c) != NO_WRITER
            {
                return None;
            }
        }
        let mut readers = Vec::with_capacity(of.len());
        let mut i = 0;
        for (c, cluster) in clusters.iter_mut().enumerate() {
            let start = readers.len() as u32;
            while i < of.len() && of[i].0 as usize == c {
                readers.push(of[i].1);
                i += 1;
            }
            cluster.readers = start..readers.len() as u32;
        }
        Some(Clusters {
            clusters,
            readers,
            keys,
            pred,
            succ,
            first_of,
        })
    }

    /// The first cluster op `t` wrote, or [`NO_WRITER`].
    fn first_of(&self, t: u32) -> u32 {
        self.first_of.get(t as usize).copied().unwrap_or(NO_WRITER)
    }

    /// Cluster `head` and the versions glued after it, in order.
    fn segment(&self, head: u32) -> impl Iterator<Item = u32> + '_ {
        std::iter::successors(Some(head), |&s| {
            Some(self.succ[s as usize]).filter(|&s| s != NO_WRITER)
        })
    }

    pub(super) fn readers(&self, c: u32) -> &[u32] {
        let r = &self.clusters[c as usize].readers;
        &self.readers[r.start as usize..r.end as usize]
    }
}

/// The cluster of each written value, by key: a key's values sorted, so a
/// lookup is a binary search within its key's. Keys are written and read
/// close in time, so a key's values stay in the cache; a hash map of every
/// `(key, value)` missed it on most lookups (a quarter of building the
/// clusters).
struct ByValue {
    /// Where each key's values start in `items`, and the end.
    start: Vec<u32>,
    /// Per key, its values and their clusters, sorted by value.
    items: Vec<(Atom, u32)>,
}

impl ByValue {
    /// The values of `writes` (key, value, writer), whose clusters are
    /// numbered from `first` in that order; `None` when a key has a value
    /// twice.
    fn new(keys: usize, writes: &[(u32, Atom, u32)], first: usize) -> Option<ByValue> {
        let mut start = vec![0u32; keys + 1];
        for &(kid, _, _) in writes {
            *start.get_mut(kid as usize + 1)? += 1;
        }
        for i in 1..start.len() {
            start[i] += start[i - 1];
        }
        let mut next = start.clone();
        let mut items = vec![(Atom::default(), 0u32); writes.len()];
        for (i, &(kid, v, _)) in writes.iter().enumerate() {
            let at = next.get_mut(kid as usize)?;
            *items.get_mut(*at as usize)? = (v, (first + i) as u32);
            *at += 1;
        }
        for k in 0..keys {
            let values = &mut items[start[k] as usize..start[k + 1] as usize];
            values.sort_unstable_by_key(|&(v, _)| v);
            if values.windows(2).any(|w| w[0].0 == w[1].0) {
                return None;
            }
        }
        Some(ByValue { start, items })
    }

    /// The cluster that wrote `v` to key `kid`.
    fn get(&self, kid: u32, v: Atom) -> Option<u32> {
        let k = kid as usize;
        let (&a, &b) = (self.start.get(k)?, self.start.get(k + 1)?);
        let values = self.items.get(a as usize..b as usize)?;
        let i = values.binary_search_by_key(&v, |&(x, _)| x).ok()?;
        Some(values[i].1)
    }
}

/// A candidate order: every key's version order completed into a chain
/// (see the module docs), with process order and, with
/// `orders.real_time`, real-time order. `None` when some cluster finds no
/// place within `TRIES`, or a read has no unique writer.
pub fn by_version_chains(h: &History, orders: Orders) -> Option<Vec<u32>> {
    by_version_chains_traced(h, orders, &mut |_| {})
}

/// [`by_version_chains`], telling `trace` how long each phase took.
pub fn by_version_chains_traced(
    h: &History,
    orders: Orders,
    trace: &mut dyn FnMut(String),
) -> Option<Vec<u32>> {
    let clock = std::time::Instant::now();
    let lap = |what: &str, trace: &mut dyn FnMut(String)| {
        trace(format!(
            "chains: {what} at {:.3} s",
            clock.elapsed().as_secs_f64()
        ));
    };
    // Which ops are `:ok`, read once: the later phases ask it of scattered
    // ops, and an op is many times the size of a flag.
    // Their processes in the same pass (one stream over the 64-byte ops
    // instead of another for the session order; issue 23).
    let (ok, process): (Vec<bool>, Vec<i64>) = h
        .ops
        .iter()
        .map(|op| (op.op_type == OpType::Ok, op.process))
        .unzip();
    let mut keep = ok.clone();
    for i in read_infos(h) {
        keep[i as usize] = true;
    }
    let cl = Clusters::build(h, &keep)?;
    lap("clusters built", trace);
    let dl = deadlines(&cl, &keep, &ok);
    lap("deadlines computed", trace);
    let mut g = facts(h, &cl, &keep, (&ok, &process), orders, &dl)?;
    drop(process);
    lap("facts added", trace);
    let rt = RealTime { h, ok: &ok, orders };
    let (span_total, spans) = spans_total(h, &ok);
    let todo = placing_order(h, &cl, &dl, 2 * span_total / spans.max(1) + 1);
    let kept = |g: DynamicOrder| -> Vec<u32> {
        g.order()
            .into_iter()
            .filter(|&v| keep[v as usize])
            .collect()
    };
    // With few transactions at once, placing mostly needs no propagation:
    // a quick try first, within fewer backjumps (issue 23: on the
    // generated 200k histories with 10 processes it succeeds with 0 to 460
    // backjumps, 0.02 to 0.09 s sooner than after a round of propagation;
    // from 20 processes on it gives up, so it is not tried there).
    if span_total <= QUICK_MAX_SPAN * spans {
        let (placed, back) = place_all(&cl, rt, g, &todo, QUICK_WRITERS_PER_BACKJUMP, &mut |l| {
            lap(&l, trace)
        });
        if placed {
            return Some(kept(back));
        }
        g = back;
    }
    // Then a round of propagation and placing; only when placing gives up
    // another round (about as long again) and placing again, until the
    // propagation settles or `ROUNDS`: on the generated 200k histories
    // with 20 and 50 processes the first round is enough, and placing
    // after it costs less than the second round; with 100 processes
    // placing needs the second round, and its first try gives up quickly
    // (about 4% of the chains there).
    let mut prop = Propagation::new(h, &cl, orders, &ok, &dl);
    loop {
        let Some(changed) = prop.round(&mut g) else {
            lap("propagation closed a cycle", trace);
            return None;
        };
        lap(
            &format!("forced orders propagated (round {})", prop.rounds),
            trace,
        );
        // A later round that forced nothing leaves placing as it failed.
        if prop.rounds > 1 && !changed {
            return None;
        }
        let (placed, back) = place_all(&cl, rt, g, &todo, WRITERS_PER_BACKJUMP, &mut |l| {
            lap(&l, trace)
        });
        if placed {
            return Some(kept(back));
        }
        g = back;
        if !changed || prop.rounds >= propagate::ROUNDS {
            return None;
        }
    }
}

/// The most mean span (in positions, invocation to completion) at which
/// placing is tried before any propagation: about 13 processes (a
/// generated history's mean span is about 1.2 times its processes).
const QUICK_MAX_SPAN: usize = 16;

/// The clusters in the order they are placed: by their writer's deadline
/// (the latest it can have taken effect), so mostly each goes at the end
/// of its chain. Writers nobody reads a little later: their writes fit in
/// any gap between two clusters, so the read clusters of the transactions
/// around them (the real constraints) choose first. Placed after every
/// read one (as before 28 Nov), a backjump from such a writer reached
/// back over all of them, and with 20 processes or more placing gave up.
/// A writer's clusters stay together (see [`place_all`]).
fn placing_order(h: &History, cl: &Clusters, dl: &[u32], lag: usize) -> Vec<u32> {
    let mut read = vec![false; h.ops.len()];
    for c in &cl.clusters[cl.keys..] {
        read[c.writer as usize] |= !c.readers.is_empty();
    }
    // By (deadline, lagged when unread; writer, cluster): a counting sort
    // by the first (a position, or none), fed the clusters in index
    // order, which is writer order (a comparison sort looking the flags
    // and deadlines up was a tenth of the chains).
    let n = h.ops.len();
    let bucket = |c: u32| -> u32 {
        let w = cl.clusters[c as usize].writer as usize;
        let d = dl.get(w).map_or(n, |&d| (d as usize).min(n));
        let unread = !read.get(w).copied().unwrap_or(false);
        (if unread { (d + lag).min(n) } else { d }) as u32
    };
    crate::graph::grouped(
        n + 1,
        (cl.keys as u32..cl.clusters.len() as u32).map(|c| (bucket(c), c)),
    )
    .items
}

/// Places every cluster of `todo` (in [`placing_order`]) into its chain,
/// a writer's clusters as one group; whether every group found a place,
/// and the graph: with the places' edges, or as it was when a group found
/// none (placing's edges taken back; its order differs, which nothing
/// after depends on).
fn place_all(
    cl: &Clusters,
    rt: RealTime,
    g: DynamicOrder,
    todo: &[u32],
    writers_per_backjump: usize,
    lap: &mut dyn FnMut(String),
) -> (bool, DynamicOrder) {
    let mut groups: Vec<&[u32]> = todo
        .chunk_by(|&a, &b| cl.clusters[a as usize].writer == cl.clusters[b as usize].writer)
        .collect();
    let mut p = Placer {
        g,
        cl,
        rt,
        chains: (0..cl.keys as u32).map(|k| vec![k]).collect(),
        budget: 0,
        placed: (0..cl.clusters.len()).map(|c| c < cl.keys).collect(),
        group: 0,
        conflicts: std::collections::BTreeSet::new(),
        inserts: Vec::new(),
        banned: HashMap::new(),
        group_start: 0,
        moved: HashSet::new(),
        backjumped: 0,
        furthest: 0,
        stuck: NO_WRITER,
    };
    let mark = p.g.edge_count();
    let placed = p.run(&mut groups, writers_per_backjump);
    lap(format!(
        "placing {} ({} of {} writers at most, {} backjumps{})",
        if placed { "done" } else { "gave up" },
        p.furthest,
        groups.len(),
        p.backjumped,
        match p.stuck {
            NO_WRITER => String::new(),
            w => format!(", last stuck at op {w}"),
        }
    ));
    while !placed && p.g.edge_count() > mark {
        p.g.pop_edge();
    }
    (placed, p.g)
}

/// The spans (invocation to completion, in positions) of the `:ok`
/// transactions: their sum and count. Unread writers are placed twice the
/// mean past their deadline ([`placing_order`]), so that the read
/// clusters of the transactions concurrent with them are in their chains
/// by then (they decide their gaps), yet a backjump from one does not
/// reach far back.
fn spans_total(h: &History, ok: &[bool]) -> (usize, usize) {
    let (mut total, mut count) = (0usize, 0usize);
    for t in (0..h.ops.len()).filter(|&t| ok[t]) {
        if let Some(&i) = h.pair.get(t) {
            if i != crate::model::NO_OP && (i as usize) < t {
                total += t - i as usize;
                count += 1;
            }
        }
    }
    (total, count)
}

/// The graph of what no choice decides: session order, real-time order
/// (with `orders.real_time`) and each writer before its readers; `None` on
/// a cycle. `ok` and `process` are per op: whether it is `:ok`, and its
/// process (read once beside the op types, not from the ops again).
fn facts(
    h: &History,
    cl: &Clusters,
    keep: &[bool],
    (ok, process): (&[bool], &[i64]),
    orders: Orders,
    dl: &[u32],
) -> Option<DynamicOrder> {
    // Vertices are op positions: a transaction is its completion, and with
    // real time the kept invocations form a chain of instants: each
    // transaction follows its invocation, and an `:ok` one precedes the
    // first invocation after its completion. The order starts as the
    // transactions' deadlines (others at their positions; a transaction
    // whose own completion is the deadline after those pulled to it), which
    // every such edge and each writer-before-reader edge almost always
    // respects, so these insertions mostly cost O(1); the places are then
    // suggested by deadlines.
    let order = initial_order(dl, keep);
    let mut g = DynamicOrder::with_order(&order);
    drop(order);
    // Room for the facts and the places' edges: about three per kept op
    // (invocation, next instant, the chain of instants), two per read (its
    // writer before it; it before the next version's writer) and one per
    // cluster (the version before it).
    let kept = keep.iter().filter(|&&k| k).count();
    g.reserve_edges(3 * kept + 2 * cl.readers.len() + cl.clusters.len());
    if orders.real_time {
        // A kept op is a completion: its invocation is its pair, if any.
        let invocation = |t: usize| match h.pair.get(t) {
            Some(&p) if p != crate::model::NO_OP => Some(p),
            _ => None,
        };
        // The instants in increasing order, marked by position (distinct:
        // an invocation pairs with one completion), and the next one after
        // each completion found by a cursor (completions come in order).
        let mut instant = vec![false; h.ops.len()];
        for t in (0..h.ops.len()).filter(|&t| keep[t]) {
            let i = invocation(t).map_or(t, |i| i as usize);
            if let Some(x) = instant.get_mut(i) {
                *x = true;
            }
        }
        let instants: Vec<u32> = (0..h.ops.len() as u32)
            .filter(|&i| instant[i as usize])
            .collect();
        drop(instant);
        for w in instants.windows(2) {
            g.add_edge(w[0], w[1], FACT).ok()?;
        }
        let mut next = 0;
        for t in (0..h.ops.len()).filter(|&t| keep[t]) {
            if let Some(i) = invocation(t) {
                g.add_edge(i, t as u32, FACT).ok()?;
            }
            if ok[t] {
                while instants.get(next).is_some_and(|&i| i as usize <= t) {
                    next += 1;
                }
                if let Some(&i) = instants.get(next) {
                    g.add_edge(t as u32, i, FACT).ok()?;
                }
            }
        }
    }
    // Session order, where real time does not imply it already (with real
    // time it does whenever a process invoked its next transaction after
    // its previous `:ok` one completed, as every history the reader
    // accepts does; the check is made per edge all the same, since a
    // history is untrusted). The implied edges only lengthened every
    // search.
    let rt = RealTime { h, ok, orders };
    let mut last: HashMap<i64, u32> = HashMap::new();
    for t in (0..h.ops.len()).filter(|&t| keep[t] && ok[t]) {
        if let Some(p) = last.insert(process[t], t as u32) {
            if !rt.implies(p, t as u32) {
                g.add_edge(p, t as u32, FACT).ok()?;
            }
        }
    }
    drop(last);
    // Each writer before its readers: facts, added first so that the
    // order the places are chosen by already has them (unless real time
    // has them already: most reads are of values written long before).
    for c in cl.keys as u32..cl.clusters.len() as u32 {
        let w = cl.clusters[c as usize].writer;
        for &r in cl.readers(c) {
            if r != w && !rt.implies(w, r) {
                g.add_edge(w, r, FACT).ok()?;
            }
        }
    }
    Some(g)
}

/// Which edges [`facts`]' real-time edges already imply: `from → to`
/// where kept `from` completed `:ok` before kept `to` was invoked (its
/// edge to the next instant and the chain of instants reach `to`'s
/// invocation). Such an edge would add nothing but an insertion and a
/// slot every search walks past.
#[derive(Clone, Copy)]
struct RealTime<'h> {
    h: &'h History,
    ok: &'h [bool],
    orders: Orders,
}

impl RealTime<'_> {
    /// Whether real time already leads from `from` to `to`.
    fn implies(&self, from: u32, to: u32) -> bool {
        self.orders.real_time
            && self.ok.get(from as usize).copied().unwrap_or(false)
            && matches!(self.h.pair.get(to as usize), Some(&i) if i != crate::model::NO_OP && from < i)
    }
}

/// The order [`facts`] starts from: by `(deadline, whether the deadline is
/// the vertex's own position, position)`, where a vertex without a
/// deadline (or not kept) counts as its own. Every key is below `n` (a
/// deadline is a position), so a counting sort by deadline and flag, with
/// positions met in increasing order, gives it in linear time (a
/// comparison sort looking the deadlines up was a tenth of the witness).
fn initial_order(dl: &[u32], keep: &[bool]) -> Vec<u32> {
    let n = dl.len();
    let bucket = |v: usize| -> u32 {
        let b = match dl[v] {
            d if d != deadlines::NONE && keep[v] && (d as usize) < n => {
                2 * d as usize + usize::from(d as usize == v)
            }
            _ => 2 * v + 1,
        };
        b as u32
    };
    crate::graph::grouped(2 * n + 1, (0..n).map(|v| (bucket(v), v as u32))).items
}

/// Backjumps allowed besides one per hundred writers: generated
/// histories of 200,000 transactions need, after one round of
/// [`Propagation`], 322 with 20 processes and 726 with 50 (seed 1), and
/// with 100 processes, after two rounds, 542 (in 0.2 s: unread writers
/// placed near their deadlines keep backjumps short; after one round that
/// history gives up within 0.08 s; 29 Nov, once session order was left to
/// real time). What bounds a failure's cost is the
/// groups taken back in all: at most as many as there are, plus
/// [`UNDO_SLACK`]: when the culprit lies far back, blame walks back one
/// writer at a time and the search thrashes (seed 3 with 10 processes,
/// before unread writers were explained: 190 backjumps failed).
const BACKJUMPS: usize = 32;

/// Writers per backjump allowed besides [`BACKJUMPS`].
const WRITERS_PER_BACKJUMP: usize = 100;

/// The same for the quick try before any propagation (see
/// [`by_version_chains`]): the generated 200k histories with 10 processes
/// need 0 to 460 backjumps there (seeds 1 to 7), this allows 798; with 20
/// processes (not tried there) it gave up only after 1,561 (0.12 s).
const QUICK_WRITERS_PER_BACKJUMP: usize = 200;

/// Groups the backjumps may take back besides one per group.
const UNDO_SLACK: usize = 10_000;

/// Places a writer's clusters may try in all before the candidate gives
/// up (a depth-first search over the places of each).
const GROUP_TRIES: usize = 256;

/// A segment's insertion into a chain: key, index, length, and the
/// clusters it went between (the one before it and its head).
type Insert = (u32, u32, u32, (u32, u32));

/// The chains being built and the graph that keeps them acyclic.
struct Placer<'c> {
    g: DynamicOrder,
    cl: &'c Clusters,
    /// Edges placing need not add: real time implies them.
    rt: RealTime<'c>,
    /// Per key, its clusters in version order, its `nil` first.
    chains: Vec<Vec<u32>>,
    /// Places the current group may still try.
    budget: usize,
    /// Which clusters are in their chain (the `nil` ones from the start).
    placed: Vec<bool>,
    /// The index of the group being placed: the label of its edges.
    group: u32,
    /// The earlier groups with an edge on a cycle a place closed.
    conflicts: std::collections::BTreeSet<u32>,
    /// The insertions of the groups placed so far and of the current one,
    /// in order (a stack: a backjump pops them).
    inserts: Vec<Insert>,
    /// Places taken back by a backjump, per group: each is one whole
    /// placing of the group (per segment, the clusters it went between), which
    /// that group may not take again. Banning each segment's place on its
    /// own also banned places that were right: a cluster whose chain has one
    /// gap then never went in again.
    banned: HashMap<u32, Vec<Vec<(u32, u32)>>>,
    /// Writers an explanation ever moved before an earlier group (kept
    /// when a backjump takes the move back: such a writer is backjumped
    /// to from then on, which only trades a rotation for a backjump).
    moved: HashSet<u32>,
    /// Where the current group's insertions start in `inserts`.
    group_start: usize,
    /// Backjumps taken so far (for `--verbose`).
    backjumped: usize,
    /// The most groups placed at once (for `--verbose`).
    furthest: usize,
    /// The writer of the group that last found no place (for `--verbose`).
    stuck: u32,
}

impl Placer<'_> {
    /// Places every group in turn (see the comment inside); false when a
    /// group finds no place and no earlier one is to blame, or the
    /// backjumps run out.
    fn run(&mut self, groups: &mut [&[u32]], writers_per_backjump: usize) -> bool {
        // Per placed group: the edge count and the length of
        // `self.inserts` (one stack for all groups) before it.
        let mut log: Vec<(usize, usize)> = Vec::with_capacity(groups.len());
        let mut backjumps = groups.len() / writers_per_backjump + BACKJUMPS;
        // Groups a backjump may take back in all: what placing every group
        // once more costs (half of that for the quick try).
        let mut undo_budget =
            groups.len() * WRITERS_PER_BACKJUMP / writers_per_backjump + UNDO_SLACK;
        let mut inherited: HashMap<u32, std::collections::BTreeSet<u32>> = HashMap::new();
        // A writer's clusters are placed together: the places of one key pin
        // where the writer can go in the others. When a group finds no place,
        // the latest earlier group whose edges closed one of the cycles is
        // taken back (with everything after it) and its place banned:
        // conflict-directed backjumping, within budgets (`BACKJUMPS`, `UNDO_SLACK`).
        while log.len() < groups.len() {
            let i = log.len();
            let mark = self.g.edge_count();
            let inserted = self.inserts.len();
            self.budget = GROUP_TRIES;
            self.group = i as u32;
            self.group_start = inserted;
            self.conflicts.clear();
            if self.place(groups[i], groups[i].len()) {
                log.push((mark, inserted));
                self.furthest = self.furthest.max(log.len());
                continue;
            }
            self.stuck = groups[i]
                .first()
                .map_or(NO_WRITER, |&c| self.cl.clusters[c as usize].writer);
            // An unread writer with no gap: blame only what pinned it.
            let explained = match self.explain(groups[i]) {
                // Only facts pin it (no group's place is on either path):
                // no backjump can leave it a gap.
                Some(why) if why.is_empty() => return false,
                Some(why) => {
                    self.conflicts = why;
                    true
                }
                None => false,
            };
            // The groups to blame: those on the cycles just met, and those
            // that made an earlier group come back here.
            let mut blamed = std::mem::take(&mut self.conflicts);
            blamed.extend(inherited.remove(&(i as u32)).unwrap_or_default());
            let Some(j) = blamed.pop_last() else {
                return false;
            };
            let (Some(left), Some(undo_left)) = (
                backjumps.checked_sub(1),
                undo_budget.checked_sub(i.saturating_sub(j as usize)),
            ) else {
                return false;
            };
            (backjumps, undo_budget) = (left, undo_left);
            self.backjumped += 1;
            // A writer moved before `j` by an earlier explanation is not
            // jumped over again: two unread writers that each leave the
            // other no gap would trade places for ever (the generated
            // 200,000-transaction history with 20 processes). Backjumping
            // to it instead lets it try its other gaps, then blames further
            // back.
            let writer_of = |g: &[u32]| g.first().map(|&c| self.cl.clusters[c as usize].writer);
            let moved = writer_of(groups[j as usize]).is_some_and(|w| self.moved.contains(&w));
            if explained && !moved {
                if let Some(w) = writer_of(groups[i]) {
                    self.moved.insert(w);
                }
                // The unread writer goes in before the latest group that
                // pinned it, which then has to leave it a gap (that group's
                // place was not wrong as such, so it is not banned).
                self.banned.retain(|&g, _| g < j);
                inherited.retain(|&g, _| g < j);
                let j = j as usize;
                self.undo_to(&mut log, j, false);
                groups[j..=i].rotate_right(1);
                continue;
            }
            // Groups after `j` start afresh; `j` inherits the rest of the blame.
            self.banned.retain(|&g, _| g <= j);
            inherited.retain(|&g, _| g <= j);
            inherited.entry(j).or_default().extend(blamed);
            self.undo_to(&mut log, j as usize, true);
        }
        true
    }

    /// Takes back the groups from `j` on (their log entries, insertions
    /// and edges); with `ban`, group `j` may not take its places again.
    fn undo_to(&mut self, log: &mut Vec<(usize, usize)>, j: usize, ban: bool) {
        while log.len() > j {
            let Some((mark, inserted)) = log.pop() else {
                break;
            };
            if ban && log.len() == j {
                let placing = self.placing(inserted);
                self.banned.entry(j as u32).or_default().push(placing);
            }
            while self.inserts.len() > inserted {
                let Some((kid, at, len, _)) = self.inserts.pop() else {
                    break;
                };
                let (kid, at, len) = (kid as usize, at as usize, len as usize);
                for c in self.chains[kid].drain(at..at + len) {
                    self.placed[c as usize] = false;
                }
            }
            while self.g.edge_count() > mark {
                self.g.pop_edge();
            }
        }
    }

    /// Inserts `group` (clusters of one writer) into their chains at places
    /// that keep the graph acyclic: for each, the place the current order
    /// suggests and then its neighbours, taking back the places of the
    /// earlier ones when a later one finds none. The first `own` clusters
    /// are the group's: a segment one of them inserts also brings in the
    /// other clusters of the glued versions' writers (see
    /// [`Self::partners`]), which bring in no more. False when the budget
    /// runs out (the graph and chains are then as before).
    fn place(&mut self, group: &[u32], own: usize) -> bool {
        let Some((&c, rest)) = group.split_first() else {
            // Every cluster has a place: unless a backjump took this very
            // placing back.
            return match self.banned.get(&self.group) {
                None => true,
                Some(bans) => !bans.contains(&self.placing(self.group_start)),
            };
        };
        let own_rest = own.saturating_sub(1);
        if self.placed[c as usize] {
            // Placed with another writer's read-then-write segment.
            return self.place(rest, own_rest);
        }
        let (cl, kid) = (self.cl, self.cl.clusters[c as usize].kid as usize);
        // The versions a read-then-write glues to `c` go in with it, as one
        // segment; one glued to a `nil` goes right after it.
        let mut head = c;
        while cl.pred[head as usize] != NO_WRITER && !self.placed[cl.pred[head as usize] as usize] {
            head = cl.pred[head as usize];
        }
        // Followed through `succ` each time it is needed, not collected:
        // this runs once per cluster and try.
        let segment = || cl.segment(head);
        let seg_len = segment().count();
        let anchored = cl.pred[head as usize] != NO_WRITER;
        // Writers along a chain are in order (ww edges), so the suggested
        // place is after the last writer the current order puts before `c`'s.
        let p = self.g.position(cl.clusters[c as usize].writer);
        let chain = &self.chains[kid];
        let before = |d: u32| self.g.position(cl.clusters[d as usize].writer) < p;
        let suggested = if anchored {
            1
        } else if chain.len() > 1 && chain.last().is_some_and(|&d| before(d)) {
            // Mostly the end (writers come by deadline): no search.
            chain.len()
        } else {
            1 + chain[1..].partition_point(|&d| before(d))
        };
        let len = chain.len();
        for i in 0..if anchored { 1 } else { TRIES } {
            // suggested, +1, -1, +2, -2, …
            let step = i.div_ceil(2) as isize;
            let at = suggested as isize + if i % 2 == 1 { step } else { -step };
            if at < 1 || at as usize > len {
                if step as usize > len {
                    break;
                }
                continue;
            }
            if self.budget == 0 {
                return false;
            }
            self.budget -= 1;
            let at = at as usize;
            let prev = self.chains[kid][at - 1];
            let next = self.chains[kid].get(at).copied();
            // A segment never goes between two glued versions.
            if next.is_some_and(|n| cl.pred[n as usize] != NO_WRITER) {
                continue;
            }
            let mark = self.g.edge_count();
            // prev → segment[0] → … → next, without a list per try.
            let mut from = prev;
            let linked = segment().chain(next).all(|to| {
                let ok = self.link(from, to);
                from = to;
                ok
            });
            if linked {
                self.chains[kid].splice(at..at, segment());
                for s in segment() {
                    self.placed[s as usize] = true;
                }
                self.inserts
                    .push((kid as u32, at as u32, seg_len as u32, (prev, head)));
                // A glued version's writer is now pinned in time by this
                // segment: its other clusters go in now, while their chains
                // can still make room (placed with its own group, later,
                // such a writer found no gap: seed 3 at 200,000).
                let more = if own > 0 {
                    self.partners(head, c, rest)
                } else {
                    None
                };
                let done = match more {
                    Some(more) => self.place(&more, own_rest),
                    None => self.place(rest, own_rest),
                };
                if done {
                    return true;
                }
                self.inserts.pop();
                for s in segment() {
                    self.placed[s as usize] = false;
                }
                self.chains[kid].drain(at..at + seg_len);
            }
            while self.g.edge_count() > mark {
                self.g.pop_edge();
            }
        }
        false
    }
}

impl Placer<'_> {
    /// The placing made by the insertions from `start` on: the places
    /// they took, sorted.
    fn placing(&self, start: usize) -> Vec<(u32, u32)> {
        let mut places: Vec<(u32, u32)> = self.inserts[start..].iter().map(|i| i.3).collect();
        places.sort_unstable();
        places
    }

    /// Why an unread, unglued cluster of `group` has no gap in its chain:
    /// a cluster `C` of its key whose writer reaches the cluster's writer
    /// `u`, which reaches one of `C`'s readers (`u` would overwrite `C`'s
    /// value before it is read). The earlier groups on those two paths are
    /// the whole reason; the union of every cycle met while trying places
    /// blamed groups far from it (seed 3 at 200,000: blame walked back
    /// one group at a time). `None` when no such cluster is found.
    fn explain(&mut self, group: &[u32]) -> Option<std::collections::BTreeSet<u32>> {
        let cl = self.cl;
        for &c in group {
            let ci = c as usize;
            if self.placed[ci]
                || !cl.readers(c).is_empty()
                || cl.pred[ci] != NO_WRITER
                || cl.succ[ci] != NO_WRITER
            {
                continue;
            }
            let u = cl.clusters[ci].writer;
            let pu = self.g.position(u);
            let g = &self.g;
            let straddling: Vec<u32> = self.chains[cl.clusters[ci].kid as usize]
                .iter()
                .copied()
                .filter(|&d| {
                    let w = cl.clusters[d as usize].writer;
                    (w == NO_WRITER || g.position(w) < pu)
                        && cl.readers(d).iter().any(|&r| g.position(r) > pu)
                })
                .collect();
            for d in straddling {
                let w = cl.clusters[d as usize].writer;
                let to_u = match w {
                    NO_WRITER => Some(Vec::new()),
                    w => self.g.path(w, u),
                };
                let Some(to_u) = to_u else {
                    continue;
                };
                for &r in cl.readers(d) {
                    if r == u || self.g.position(r) <= pu {
                        continue;
                    }
                    if let Some(from_u) = self.g.path(u, r) {
                        let group = self.group;
                        return Some(
                            to_u.iter()
                                .chain(&from_u)
                                .copied()
                                .filter(|&l| l < group)
                                .collect(),
                        );
                    }
                }
            }
        }
        None
    }

    /// `rest` and the unplaced clusters of the other writers of the segment
    /// from `head` (versions glued to `c`'s), or `None` when there are
    /// none.
    fn partners(&self, head: u32, c: u32, rest: &[u32]) -> Option<Vec<u32>> {
        let cl = self.cl;
        let mut more: Option<Vec<u32>> = None;
        let writer = cl.clusters[c as usize].writer;
        for s in cl.segment(head) {
            let w = cl.clusters[s as usize].writer;
            let first = cl.first_of(w);
            if w == writer || first == NO_WRITER {
                continue;
            }
            // A writer's clusters are consecutive (see `Clusters::build`).
            let first = first as usize;
            let mine = cl.clusters[first..]
                .iter()
                .take_while(|d| d.writer == w)
                .enumerate()
                .map(|(i, _)| (first + i) as u32);
            for d in mine {
                if !self.placed[d as usize] {
                    let list = more.get_or_insert_with(|| rest.to_vec());
                    if !list.contains(&d) {
                        list.push(d);
                    }
                }
            }
        }
        more
    }

    /// Adds the edges that put cluster `b` right after cluster `a` in their
    /// key's version order: `a`'s writer and readers before `b`'s writer,
    /// except where real time has them already (at 200k transactions with
    /// 10 processes, 30% of the graph's edges and 5% of `auto`'s peak
    /// memory);
    /// false on a cycle, noting the latest earlier group on it.
    fn link(&mut self, a: u32, b: u32) -> bool {
        let cl = self.cl;
        let (wa, wb) = (
            cl.clusters[a as usize].writer,
            cl.clusters[b as usize].writer,
        );
        let before = (wa != NO_WRITER).then_some(wa).into_iter();
        for x in before.chain(cl.readers(a).iter().copied()) {
            if x == wb || self.rt.implies(x, wb) {
                continue;
            }
            if let Err(path) = self.g.add_edge(x, wb, self.group) {
                let earlier = path.into_iter().filter(|&l| l < self.group);
                self.conflicts.extend(earlier);
                return false;
            }
        }
        true
    }
}
