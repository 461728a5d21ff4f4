//! The (hyper-)polygraph of a register history: edges conditional on
//! conjunctions of literals, clauses over the literals, and the small graph
//! helpers the pruning and the solving loop share.

use batsat::{Lit, Var};

use super::lost_update::LostUpdates;
use super::prune::PRUNE_MAX_BYTES;
use super::reach::Reach;
#[cfg(test)]
pub(super) use super::reads::summarise;
use super::reads::{summarise_reads, ExtRead, Seen};
use super::{CycleEdge, EdgeKind, PredTable, RegHistory, RegValue, SatOptions, Violation};
use crate::graph::{scc::nontrivial_sccs, DiGraph, Rels};

#[derive(Clone, Debug)]
pub(super) struct Edge {
    pub(super) from: u32,
    pub(super) to: u32,
    pub(super) kind: EdgeKind,
    pub(super) reason: Reason,
}

/// The most literals a reason holds: a read-from and a version-order
/// literal plus the selectors of the three transactions involved.
const MAX_REASON: usize = 5;

/// A sorted, duplicate-free conjunction of at most [`MAX_REASON`] literals,
/// stored inline: histories give millions of edges, and a heap allocation
/// per reason dominated building the polygraph.
#[derive(Clone, Copy, Debug)]
pub(super) struct Reason {
    lits: [Lit; MAX_REASON],
    len: u8,
}

impl Reason {
    /// The sorted, deduplicated union of `parts` (whose duplicates may
    /// take it over [`MAX_REASON`] before deduplication).
    fn union(parts: &[&[Lit]]) -> Reason {
        let mut all = [Lit::UNDEF; 2 * MAX_REASON];
        let mut n = 0;
        for &l in parts.iter().flat_map(|p| p.iter()) {
            all[n] = l;
            n += 1;
        }
        let all = &mut all[..n];
        all.sort_unstable();
        let mut r = Reason {
            lits: [Lit::UNDEF; MAX_REASON],
            len: 0,
        };
        for (i, &l) in all.iter().enumerate() {
            if i == 0 || l != all[i - 1] {
                r.lits[r.len as usize] = l;
                r.len += 1;
            }
        }
        r
    }
}

impl std::ops::Deref for Reason {
    type Target = [Lit];
    fn deref(&self) -> &[Lit] {
        &self.lits[..self.len as usize]
    }
}

/// The (hyper-)polygraph: edges conditional on conjunctions of literals,
/// plus clauses over those literals.
pub(super) struct Polygraph {
    pub(super) n: usize,
    pub(super) vars: usize,
    pub(super) edges: Vec<Edge>,
    pub(super) clauses: Vec<Vec<Lit>>,
    /// Per graph id: the literal "this `:info` transaction committed".
    pub(super) selector: Vec<Option<Lit>>,
    /// Read-from choices: the reader and its `(writer, literal)` candidates.
    pub(super) wr_choices: Vec<(u32, Vec<(u32, Lit)>)>,
    /// Session order when the checked model does not include it: not a
    /// constraint, only a hint for the initial order and the polarities
    /// (databases mostly run a session's transactions in order).
    pub(super) order_hints: Vec<(u32, u32)>,
    /// Per graph id: where the transaction likely took effect (invocation
    /// plus completion position, twice the midpoint; 0 for the initial
    /// transaction). Ties in the initial order go to the smaller key.
    pub(super) effect_key: Vec<u64>,
    /// With [`SatOptions::lost_update`]: per key and value read, the
    /// committed transactions that read it and write the key, where two of
    /// them may share a writer (`(key, value, readers)`).
    pub(super) lost_updates: Vec<(u64, RegValue, Vec<u32>)>,
}

pub(super) fn lit(v: usize, positive: bool) -> Lit {
    Lit::new(Var::unsafe_from_idx(v as u32), positive)
}

pub(super) fn build(
    h: &RegHistory,
    preds: &PredTable,
    opts: &SatOptions,
) -> Result<Polygraph, Violation> {
    let n = h.len() + 1;
    let mut vars = 0usize;
    let mut fresh = || {
        vars += 1;
        vars - 1
    };
    let mut reads = vec![Vec::new(); n];
    let mut writes: Vec<Vec<(u64, RegValue)>> = vec![Vec::new(); n];
    let mut inc: Vec<Option<Lit>> = vec![None; n];
    for (i, t) in h.iter().enumerate() {
        let id = i as u32 + 1;
        if t.committed {
            let (r, w) = summarise_reads(t, id, opts.skip_internal, preds)?;
            if opts.isolation.has_reads() {
                reads[id as usize] = r;
            }
            writes[id as usize] = w;
        } else {
            let (_, w) = summarise_reads(t, id, opts.skip_internal, preds)?;
            writes[id as usize] = w;
            inc[id as usize] = Some(lit(fresh(), true));
        }
    }
    let cond = |a: u32, b: u32, extra: &[Lit]| -> Reason {
        Reason::union(&[
            extra,
            inc[a as usize].as_slice(),
            inc[b as usize].as_slice(),
        ])
    };
    let mut edges = Vec::new();
    let mut clauses = Vec::new();
    let mut wr_choices = Vec::new();
    for t in 1..n as u32 {
        edges.push(Edge {
            from: 0,
            to: t,
            kind: EdgeKind::Init,
            reason: cond(0, t, &[]),
        });
    }
    let mut order_hints = Vec::new();
    if !opts.session_order {
        let mut last: std::collections::HashMap<i64, u32> = Default::default();
        for (i, t) in h.iter().enumerate() {
            let id = i as u32 + 1;
            if let Some(p) = last.insert(t.process, id) {
                order_hints.push((p, id));
            }
        }
    }
    if opts.session_order {
        // Each committed transaction follows its process's previous one, as
        // Elle's process graph orders `:ok` ops only (an `:info` transaction
        // is in no session order; Jepsen gives the process a new id).
        let mut last: std::collections::HashMap<i64, u32> = Default::default();
        for (i, t) in h.iter().enumerate().filter(|(_, t)| t.committed) {
            let id = i as u32 + 1;
            if let Some(p) = last.insert(t.process, id) {
                edges.push(Edge {
                    from: p,
                    to: id,
                    kind: EdgeKind::Process,
                    reason: cond(p, id, &[]),
                });
            }
        }
    }
    if opts.real_time {
        for (i, t) in h.iter().enumerate() {
            let id = i as u32 + 1;
            for &p in &t.realtime_preds {
                if p != 0 && p != id && h[p as usize - 1].committed {
                    edges.push(Edge {
                        from: p,
                        to: id,
                        kind: EdgeKind::Realtime,
                        reason: cond(p, id, &[]),
                    });
                }
            }
        }
    }
    // Writers per key (final writes), in id order; the initial transaction
    // writes nil to every key.
    let mut keys: Vec<u64> = writes
        .iter()
        .flatten()
        .map(|w| w.0)
        .chain(reads.iter().flatten().map(|r: &ExtRead| r.key))
        .collect();
    keys.sort_unstable();
    keys.dedup();
    let key_ix = |k: u64| keys.binary_search(&k).expect("key");
    let mut writers: Vec<Vec<u32>> = vec![vec![0]; keys.len()];
    for (t, ws) in writes.iter().enumerate() {
        for &(k, _) in ws {
            writers[key_ix(k)].push(t as u32);
        }
    }
    let final_write = |t: u32, k: u64| -> Option<RegValue> {
        if t == 0 {
            return Some(None);
        }
        writes[t as usize].iter().find(|w| w.0 == k).map(|w| w.1)
    };
    // Read-from candidates of every external read, before the version
    // order: a read with one committed candidate is a known edge.
    // The writers of each final `(key, value)`, by id (the initial
    // transaction's nil first): a read's candidates without scanning every
    // writer of the key (a writer of many keys, such as a predicate write,
    // made that scan quadratic).
    let mut by_value: Vec<(u64, RegValue, u32)> = keys.iter().map(|&k| (k, None, 0)).collect();
    for (t, ws) in writes.iter().enumerate() {
        by_value.extend(ws.iter().map(|&(k, v)| (k, v, t as u32)));
    }
    by_value.sort_unstable();
    by_value.dedup();
    let writers_of = |k: u64, v: RegValue| {
        let from = by_value.partition_point(|e| (e.0, e.1) < (k, v));
        by_value[from..]
            .iter()
            .take_while(move |e| (e.0, e.1) == (k, v))
            .map(|e| e.2)
    };
    let mut all_reads: Vec<(u32, u64, RegValue, Vec<u32>)> = Vec::new();
    // Per read of `all_reads`: the predicate micro-op that made it.
    let mut read_pred: Vec<Option<u32>> = Vec::new();
    for (s, rs) in reads.iter().enumerate() {
        let s = s as u32;
        for r in rs {
            let k = r.key;
            let (v, cands) = match &r.seen {
                Seen::Value(v) => (
                    *v,
                    writers_of(k, *v).filter(|&t| t != s).collect::<Vec<u32>>(),
                ),
                Seen::Class(cs) => {
                    let fits = |t: u32| {
                        final_write(t, k)
                            .is_some_and(|v| cs.iter().all(|&(p, m)| preds.eval(p, v) == m))
                    };
                    let visible = visible_in_real_time(h, &writers[key_ix(k)], s, opts.real_time);
                    let others = writers[key_ix(k)]
                        .iter()
                        .copied()
                        .filter(|&t| t != s && visible(t));
                    // Every version fits: whichever the read saw, the
                    // predicate could not tell them apart.
                    if others.clone().all(fits) {
                        continue;
                    }
                    let mut cands: Vec<u32> = others.filter(|&t| fits(t)).collect();
                    if cands.is_empty() && opts.real_time {
                        // Only real time rules the fitting versions out:
                        // keep them, the solver reports the cycle.
                        cands = writers[key_ix(k)]
                            .iter()
                            .copied()
                            .filter(|&t| t != s && fits(t))
                            .collect();
                    }
                    if cands.is_empty() {
                        return Err(Violation::PredicateUnexplained {
                            txn: s,
                            key: k,
                            pred: r.pred.expect("class reads come from predicates"),
                        });
                    }
                    (None, cands)
                }
            };
            if cands.is_empty() && opts.skip_unexplained {
                continue;
            }
            if cands.is_empty() {
                return Err(Violation::Unwritten {
                    txn: s,
                    key: k,
                    value: v,
                });
            }
            all_reads.push((s, k, v, cands));
            read_pred.push(r.pred);
        }
    }
    let known_wr = all_reads.iter().filter_map(|(s, _, _, cands)| {
        (cands.len() == 1 && inc[cands[0] as usize].is_none()).then_some((cands[0], *s))
    });
    let known = KnownOrder::new(n, &edges, known_wr);
    // Cobra's write combining: a transaction that read a key from a single
    // committed writer and wrote the key follows that writer immediately in
    // the key's version order (under SER and SI alike), so each key's writers
    // fall into chains and only whole chains are ordered.
    let mut rmw_links: Vec<Vec<(u32, u32)>> = vec![Vec::new(); keys.len()];
    // Below snapshot isolation a stale read-modify-write is no cycle, so
    // another writer may come between: no chains.
    let combine = opts.isolation.full();
    for (s, k, _, cands) in all_reads.iter().filter(|_| combine) {
        if cands.len() == 1 && inc[cands[0] as usize].is_none() && final_write(*s, *k).is_some() {
            rmw_links[key_ix(*k)].push((cands[0], *s));
        }
    }
    // Version order, per pair of chains: chains the known order already
    // orders get a known edge (no literal: pruning would fix it anyway, and
    // on the VeriStrong 10k histories that is most of the pairs); the others
    // one literal per unordered pair of transactions `(tail of one, head of
    // the other)` (true = lower id first), merged over keys.
    let mut pair_var: std::collections::HashMap<(u32, u32), usize> = Default::default();
    // ww alternatives per key: (from, to, reason)
    let mut ww: Vec<Vec<(u32, u32, Reason)>> = vec![Vec::new(); keys.len()];
    let mut known_after: Vec<(u32, u32)> = Vec::new();
    for (ki, ws) in writers.iter().enumerate() {
        known_after.clear();
        let chains = write_chains(ws, &mut rmw_links[ki]);
        for (ci, ca) in chains.iter().enumerate() {
            let (ha, ta) = (ca[0], ca[ca.len() - 1]);
            known_after.extend(ca.windows(2).map(|w| (w[0], w[1])));
            for cb in &chains[ci + 1..] {
                let (hb, tb) = (cb[0], cb[cb.len() - 1]);
                // Chains of several writers are committed throughout.
                let unconditional = cond(ha, hb, &[]).is_empty();
                if unconditional && known.reaches(ta, hb) {
                    known_after.push((ta, hb));
                } else if unconditional && known.reaches(tb, ha) {
                    known_after.push((tb, ha));
                } else if unconditional && known.reaches(ha, tb) {
                    // Ordered, but only through the chains: a new known edge.
                    ww[ki].push((ta, hb, Reason::union(&[])));
                } else if unconditional && known.reaches(hb, ta) {
                    ww[ki].push((tb, ha, Reason::union(&[])));
                } else if ha == 0 {
                    ww[ki].push((ta, hb, cond(ta, hb, &[])));
                } else {
                    let v = *pair_var
                        .entry((ta.min(hb), ta.max(hb)))
                        .or_insert_with(&mut fresh);
                    let a_first = lit(v, ta < hb);
                    ww[ki].push((ta, hb, cond(ta, hb, &[a_first])));
                    ww[ki].push((tb, ha, cond(tb, ha, &[!a_first])));
                }
            }
        }
        for (a, b, r) in &ww[ki] {
            edges.push(Edge {
                from: *a,
                to: *b,
                kind: EdgeKind::Ww { key: keys[ki] },
                reason: *r,
            });
        }
        // A known ww edge follows a known path, so it is left out; of a
        // writer's known successors only the first ones derive
        // anti-dependencies (`S → b` for a later `b` follows from `S → m`
        // and `m ⇝ b`).
        known.sort_by_position(&mut known_after);
        let mut first = 0;
        while first < known_after.len() {
            let a = known_after[first].0;
            let group = known_after[first..]
                .iter()
                .take_while(|&&(x, _)| x == a)
                .count();
            let start = ww[ki].len();
            for &(_, b) in &known_after[first..first + group] {
                if !ww[ki][start..].iter().any(|&(_, m, _)| known.reaches(m, b)) {
                    ww[ki].push((a, b, Reason::union(&[])));
                }
            }
            first += group;
        }
    }
    // Per key, the indices of its ww alternatives sorted by source (stable,
    // so edges come out in the same order as a scan): each read-from
    // candidate then finds its successors without scanning every pair.
    let ww_by_from: Vec<Vec<u32>> = ww
        .iter()
        .map(|alts| {
            let mut ix: Vec<u32> = (0..alts.len() as u32).collect();
            ix.sort_by_key(|&i| alts[i as usize].0);
            ix
        })
        .collect();
    // Read-from alternatives and the anti-dependencies they derive.
    let lost_update = LostUpdates::new(opts.lost_update, &all_reads, |t, k| {
        final_write(t, k).is_some()
    });
    // Per read (with lost updates): each candidate and its literal.
    let mut read_lits: Vec<Vec<(u32, Option<Lit>)>> = Vec::new();
    for ((s, k, v, cands), pred) in all_reads.into_iter().zip(read_pred) {
        let ki = key_ix(k);
        let single = cands.len() == 1 && inc[cands[0] as usize].is_none();
        let mut clause = Vec::new();
        let mut choice = Vec::new();
        if lost_update.enabled {
            read_lits.push(Vec::new());
        }
        for &t in &cands {
            let wr: Option<Lit> = if single {
                None
            } else {
                let l = lit(fresh(), true);
                clause.push(l);
                choice.push((t, l));
                if let Some(i) = inc[t as usize] {
                    clauses.push(vec![!l, i]);
                }
                Some(l)
            };
            if let Some(lits) = read_lits.last_mut().filter(|_| lost_update.enabled) {
                lits.push((t, wr));
            }
            edges.push(Edge {
                from: t,
                to: s,
                kind: match pred {
                    None => EdgeKind::Wr { key: k, value: v },
                    Some(pred) => EdgeKind::PredWr {
                        key: k,
                        value: final_write(t, k).expect("a candidate writes the key"),
                        pred,
                    },
                },
                reason: cond(t, s, wr.as_slice()),
            });
            if !opts.isolation.has_rw() {
                continue;
            }
            let by_from = &ww_by_from[ki];
            let first = by_from.partition_point(|&i| ww[ki][i as usize].0 < t);
            let from_t = by_from[first..]
                .iter()
                .map(|&i| &ww[ki][i as usize])
                .take_while(|alt| alt.0 == t);
            for (_, b, r) in from_t {
                if *b != s {
                    let reason = Reason::union(&[&cond(t, s, wr.as_slice()), r]);
                    edges.push(Edge {
                        from: s,
                        to: *b,
                        kind: match pred {
                            None => EdgeKind::Rw { key: k, via: t },
                            Some(pred) => EdgeKind::PredRw {
                                key: k,
                                via: t,
                                pred,
                            },
                        },
                        reason,
                    });
                }
            }
        }
        if !single {
            clauses.push(clause);
            wr_choices.push((s, choice));
        }
    }
    let lost_updates = lost_update.clauses(&read_lits, &mut clauses)?;
    Ok(Polygraph {
        n,
        vars,
        edges,
        clauses,
        selector: inc,
        wr_choices,
        order_hints,
        effect_key: std::iter::once(0)
            .chain(h.iter().map(|t| t.invoked + t.index))
            .collect(),
        lost_updates,
    })
}

/// With `real_time`, which writers of a key (graph ids, 0 the initial
/// transaction) reader `s` can have seen: not invoked after `s` completed,
/// and not followed in real time by a committed writer that completed
/// before `s` began (whose version, later, came before the read). Without
/// it, every writer. Vbox's time-based constraint avoidance for predicate
/// reads; exact, since the others would close a cycle with real time.
fn visible_in_real_time<'a>(
    h: &'a RegHistory,
    writers: &[u32],
    s: u32,
    real_time: bool,
) -> impl Fn(u32) -> bool + use<'a> {
    let reader = &h[s as usize - 1];
    let (began, ended) = (reader.invoked, reader.index);
    let latest = writers
        .iter()
        .filter(|&&w| real_time && w != 0 && w != s)
        .map(|&w| &h[w as usize - 1])
        .filter(|t| t.committed && t.index < began)
        .map(|t| t.invoked)
        .max();
    move |w: u32| {
        if !real_time {
            return true;
        }
        if w == 0 {
            return latest.is_none();
        }
        let t = &h[w as usize - 1];
        t.invoked < ended && (!t.committed || latest.is_none_or(|m| t.index >= m))
    }
}

/// The write chains of one key: `writers` (the initial transaction first,
/// then by id) linked by `links` (writer, read-modify-write successor), each
/// chain a list of consecutive versions, in the order of their heads. A
/// writer with two successors (a lost update) links to neither, and writers
/// on a cycle of links stay alone: the solver then finds the cycle.
fn write_chains(writers: &[u32], links: &mut [(u32, u32)]) -> Vec<Vec<u32>> {
    links.sort_unstable();
    let next = |t: u32| -> Option<u32> {
        let i = links.partition_point(|l| l.0 < t);
        match links[i..] {
            [(a, s), (b, _), ..] if a == t && b != t => Some(s),
            [(a, s)] if a == t => Some(s),
            _ => None,
        }
    };
    let mut has_pred: hashbrown::HashSet<u32> = Default::default();
    for &w in writers {
        if let Some(s) = next(w) {
            has_pred.insert(s);
        }
    }
    let mut chains = Vec::new();
    for &w in writers.iter().filter(|&&w| !has_pred.contains(&w)) {
        let mut chain = vec![w];
        let mut t = w;
        while let Some(s) = next(t) {
            chain.push(s);
            t = s;
        }
        chains.push(chain);
    }
    if chains.iter().map(Vec::len).sum::<usize>() < writers.len() {
        let linked: hashbrown::HashSet<u32> = chains.iter().flatten().copied().collect();
        chains.extend(
            writers
                .iter()
                .filter(|&&w| !linked.contains(&w))
                .map(|&w| vec![w]),
        );
        chains.sort_unstable_by_key(|c| writers.iter().position(|&w| w == c[0]));
    }
    chains
}

/// Reachability of the edges known before any choice (initial, session and
/// real-time order, reads with a single committed writer), used to order
/// writer pairs while building. Empty when those edges are cyclic (pruning
/// then reports the cycle) or too large.
struct KnownOrder {
    reach: Option<Reach>,
    pos: Vec<u32>,
}

impl KnownOrder {
    fn new(n: usize, edges: &[Edge], wr: impl Iterator<Item = (u32, u32)>) -> KnownOrder {
        let mut adj: Vec<Vec<(u32, usize)>> = vec![Vec::new(); n];
        for e in edges.iter().filter(|e| e.reason.is_empty()) {
            adj[e.from as usize].push((e.to, (e.kind == EdgeKind::Process) as usize));
        }
        for (t, s) in wr {
            adj[t as usize].push((s, 0));
        }
        let Some(order) = topo(&adj) else {
            return KnownOrder {
                reach: None,
                pos: Vec::new(),
            };
        };
        let pos = crate::graph::positions(&order);
        let reach = Reach::new(&adj, &order, PRUNE_MAX_BYTES, |l| l == 1, adj.len());
        KnownOrder { reach, pos }
    }

    /// Whether `a` reaches `b` by known edges (reflexive).
    fn reaches(&self, a: u32, b: u32) -> bool {
        self.reach.as_ref().is_some_and(|r| r.reaches(a, b))
    }

    /// Sorts pairs by source, then by the target's known position.
    fn sort_by_position(&self, pairs: &mut [(u32, u32)]) {
        if !self.pos.is_empty() {
            pairs.sort_unstable_by_key(|&(a, b)| (a, self.pos[b as usize]));
        }
    }
}

/// Value of a literal under a partial assignment (`None` = unassigned).
pub(super) fn value(assign: &[Option<bool>], l: Lit) -> Option<bool> {
    assign[l.var().idx() as usize].map(|b| b == l.sign())
}

/// A topological order of `adj`, or `None` if it has a cycle.
pub(super) fn topo(adj: &[Vec<(u32, usize)>]) -> Option<Vec<u32>> {
    crate::graph::topological_order(adj.len(), |v| adj[v as usize].iter().map(|&(t, _)| t))
}

/// Shortest path (edge indices) from `from` to `to` in `adj`, restricted to
/// vertices with `allowed`.
pub(super) fn bfs_path(
    adj: &[Vec<(u32, usize)>],
    from: u32,
    to: u32,
    allowed: impl Fn(u32) -> bool,
) -> Option<Vec<usize>> {
    let n = adj.len();
    let mut pred: Vec<Option<(u32, usize)>> = vec![None; n];
    let mut seen = vec![false; n];
    let mut queue = std::collections::VecDeque::from([from]);
    seen[from as usize] = true;
    while let Some(v) = queue.pop_front() {
        for &(t, e) in &adj[v as usize] {
            if t == to {
                let mut path = vec![e];
                let mut cur = v;
                while cur != from {
                    let (p, pe) = pred[cur as usize].expect("pred");
                    path.push(pe);
                    cur = p;
                }
                path.reverse();
                return Some(path);
            }
            if !seen[t as usize] && allowed(t) {
                seen[t as usize] = true;
                pred[t as usize] = Some((v, e));
                queue.push_back(t);
            }
        }
    }
    None
}

/// Up to `max` short cycles (edge indices), from distinct strongly
/// connected components and start vertices.
pub(super) fn find_cycles(adj: &[Vec<(u32, usize)>], max: usize) -> Vec<Vec<usize>> {
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
    for (c, comp) in sccs.iter().enumerate() {
        let step = (comp.len() / per).max(1);
        for &v in comp.iter().step_by(step).take(per) {
            if let Some(p) = bfs_path(adj, v, v, |t| comp_of[t as usize] == c as u32) {
                out.push(p);
            }
        }
    }
    out
}

pub(super) fn to_cycle(g: &Polygraph, path: &[usize]) -> Vec<CycleEdge> {
    path.iter()
        .map(|&i| CycleEdge {
            from: g.edges[i].from,
            to: g.edges[i].to,
            kind: g.edges[i].kind,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A derived rw reason joins two reasons that share a selector: six
    /// literals in, five distinct out, sorted.
    #[test]
    fn union_sorts_and_drops_duplicates() {
        let (wr, ww, a, b, c) = (
            lit(4, true),
            lit(1, false),
            lit(0, true),
            lit(3, true),
            lit(2, true),
        );
        let r = Reason::union(&[&[wr, a, b], &[ww, a, c]]);
        let mut expect = vec![wr, ww, a, b, c];
        expect.sort_unstable();
        assert_eq!(&*r, expect.as_slice());
        assert!(Reason::union(&[&[], &[]]).is_empty());
    }

    /// Chains follow read-modify-write links from writers nobody follows;
    /// a writer followed twice (lost update) and a cycle of links leave
    /// their writers alone; chains come in the order of their heads.
    #[test]
    fn write_chains_follow_links_and_skip_lost_updates_and_cycles() {
        let writers = [0, 1, 2, 3, 4, 5, 6, 7, 8];
        let mut links = [(3, 4), (0, 2), (2, 5), (1, 6), (1, 7), (8, 3)];
        assert_eq!(
            write_chains(&writers, &mut links),
            vec![vec![0, 2, 5], vec![1], vec![6], vec![7], vec![8, 3, 4]]
        );
        let mut cycle = [(1, 2), (2, 1)];
        assert_eq!(
            write_chains(&[0, 1, 2, 3], &mut cycle),
            vec![vec![0], vec![1], vec![2], vec![3]]
        );
    }
}
