//! The (hyper-)polygraph of a register history: edges conditional on
//! conjunctions of literals, clauses over the literals (built in
//! [`super::build`]), and the small helpers the building, the pruning and
//! the solving loop share.

use batsat::{Lit, Var};

use super::prune::PRUNE_MAX_BYTES;
use super::reach::Reach;
#[cfg(test)]
pub(super) use super::reads::summarise;
use super::{CycleEdge, EdgeKind, RegHistory, RegValue};

/// An edge of the polygraph. Its kind is an index into
/// [`Polygraph::kinds`]: histories give millions of edges, most of them
/// anti-dependencies sharing a few hundred thousand kinds (one per read and
/// candidate writer), and the kind inline doubled the edge (64 bytes, 36
/// now; VeriStrong's HD-10k builds 13.8M edges).
#[derive(Clone, Copy, Debug)]
pub(super) struct Edge {
    pub(super) from: u32,
    pub(super) to: u32,
    pub(super) kind: u32,
    pub(super) reason: Reason,
}

/// The index of [`EdgeKind::Init`], [`EdgeKind::Process`] and
/// [`EdgeKind::Realtime`] in every [`Polygraph::kinds`] (fixed, so that
/// the session-order test needs no lookup).
pub(super) const INIT_KIND: u32 = 0;
pub(super) const PROCESS_KIND: u32 = 1;
pub(super) const REALTIME_KIND: u32 = 2;

/// The kinds table every polygraph starts with (see [`INIT_KIND`]).
pub(super) fn fixed_kinds() -> Vec<EdgeKind> {
    vec![EdgeKind::Init, EdgeKind::Process, EdgeKind::Realtime]
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
    pub(super) fn union(parts: &[&[Lit]]) -> Reason {
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

impl Reason {
    /// The reason of the literals `f` maps these to (sorted again).
    pub(super) fn map(&self, f: impl Fn(Lit) -> Lit) -> Reason {
        let mut lits = [Lit::UNDEF; MAX_REASON];
        for (i, &l) in self.iter().enumerate() {
            lits[i] = f(l);
        }
        Reason::union(&[&lits[..self.len as usize]])
    }

    /// The literals `keep` accepts, in order.
    pub(super) fn filter(&self, keep: impl Fn(Lit) -> bool) -> Reason {
        let mut r = Reason {
            lits: [Lit::UNDEF; MAX_REASON],
            len: 0,
        };
        for &l in self.iter().filter(|&&l| keep(l)) {
            r.lits[r.len as usize] = l;
            r.len += 1;
        }
        r
    }
}

impl From<&[Lit]> for Reason {
    /// [`Reason::union`] of one part.
    fn from(lits: &[Lit]) -> Reason {
        Reason::union(&[lits])
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
    /// The kinds of the edges ([`Edge::kind`] indexes it), distinct.
    pub(super) kinds: Vec<EdgeKind>,
    /// Per kind: whether it is an anti-dependency.
    pub(super) kind_rw: Vec<bool>,
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

impl Polygraph {
    /// Why edge `i` exists.
    pub(super) fn kind(&self, i: usize) -> EdgeKind {
        self.kinds[self.edges[i].kind as usize]
    }

    /// Whether edge `i` is an anti-dependency (item or predicate).
    pub(super) fn is_rw(&self, i: usize) -> bool {
        self.kind_rw[self.edges[i].kind as usize]
    }

    /// Keeps only the edges `origin` names, renumbering `origin` to match:
    /// once encoded, the others (on big histories most of them, implied
    /// by known paths or ruled out by pruning) are never read again.
    pub(super) fn keep_edges(&mut self, origin: &mut [usize]) {
        let kept: Vec<Edge> = origin.iter().map(|&i| self.edges[i]).collect();
        self.edges = kept;
        for (j, o) in origin.iter_mut().enumerate() {
            *o = j;
        }
    }
}

pub(super) fn lit(v: usize, positive: bool) -> Lit {
    Lit::new(Var::unsafe_from_idx(v as u32), positive)
}

/// With `real_time`, which writers of a key (graph ids, 0 the initial
/// transaction) reader `s` can have seen: not invoked after `s` completed,
/// and not followed in real time by a committed writer that completed
/// before `s` began (whose version, later, came before the read). Without
/// it, every writer. Vbox's time-based constraint avoidance for predicate
/// reads; exact, since the others would close a cycle with real time.
pub(super) fn visible_in_real_time<'a>(
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
pub(super) fn write_chains(writers: &[u32], links: &mut [(u32, u32)]) -> Vec<Vec<u32>> {
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
pub(super) struct KnownOrder {
    reach: Option<Reach>,
    pos: Vec<u32>,
}

impl KnownOrder {
    pub(super) fn new(
        n: usize,
        edges: &[Edge],
        wr: impl Iterator<Item = (u32, u32)>,
    ) -> KnownOrder {
        let mut adj: Vec<Vec<(u32, usize)>> = vec![Vec::new(); n];
        for e in edges.iter().filter(|e| e.reason.is_empty()) {
            adj[e.from as usize].push((e.to, (e.kind == PROCESS_KIND) as usize));
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
    pub(super) fn reaches(&self, a: u32, b: u32) -> bool {
        self.reach.as_ref().is_some_and(|r| r.reaches(a, b))
    }

    /// Sorts pairs by source, then by the target's known position.
    pub(super) fn sort_by_position(&self, pairs: &mut [(u32, u32)]) {
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

pub(super) fn to_cycle(g: &Polygraph, path: &[usize]) -> Vec<CycleEdge> {
    path.iter()
        .map(|&i| CycleEdge {
            from: g.edges[i].from,
            to: g.edges[i].to,
            kind: g.kind(i),
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
