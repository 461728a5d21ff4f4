//! Building the (hyper-)polygraph of a register history, phase by phase:
//! what each transaction reads and writes, the order edges (initial,
//! session, real time), the read-from candidates of every external read,
//! the version order per key (chains of read-modify-writes, one literal per
//! unordered pair of chains), and the read-from edges with the
//! anti-dependencies they derive.

// Long (about 850 lines): the phases share the builder's state; the last
// impl block (predicate views' anti-dependencies, the memory budget) and
// `unmet_class_views` (deferred views against a witness) could move to a
// child module `build/` when it grows.

use batsat::Lit;

use super::lost_update::LostUpdates;
use super::polygraph::{
    fixed_kinds, lit, visible_in_real_time, write_chains, Edge, KnownOrder, Polygraph, Reason,
    INIT_KIND, PROCESS_KIND, REALTIME_KIND,
};
use super::predicates::ClassViews;
use super::reads::{summarise_reads, ExtRead, Seen};
use super::{EdgeKind, PredTable, RegHistory, RegValue, SatOptions, Violation};

/// An external read with its read-from candidates: `(reader, key, value,
/// writers)` (value `None` for a predicate read, which matches a class).
type CandRead = (u32, u64, RegValue, Vec<u32>);

/// Committed readers of one `(key, value)` that also write the key:
/// `(key, value, readers)` (see [`Polygraph::lost_updates`]).
type LostUpdateGroup = (u64, RegValue, Vec<u32>);

/// The version-order alternatives of one key: `(from, to, reason)`.
type WwAlts = Vec<(u32, u32, Reason)>;

/// A predicate's view of a key known only by class: the writers (by id)
/// whose versions it cannot have seen; `None` for other reads.
type Misfits = Option<Box<[u32]>>;

/// Estimated peak bytes of a whole check per polygraph edge (the edge,
/// its copy in the encoding, the theory's graph, the 2-width clauses) and
/// per literal (the solver's variable, its read-from clause), for the
/// memory budget. Measured (release, whole process): VeriStrong's HD-10k
/// without session order, 13.8M edges, 2.06 GB when its timeout stopped
/// it before solving; a generated 10k predicate history with session order,
/// 0.58M edges and 0.25M literals, 86 MB after solving.
pub(super) const BYTES_PER_EDGE: u64 = 200;
pub(super) const BYTES_PER_VAR: u64 = 100;

/// The state the phases share.
struct Builder<'a> {
    h: &'a RegHistory,
    preds: &'a PredTable,
    opts: &'a SatOptions,
    n: usize,
    vars: usize,
    reads: Vec<Vec<ExtRead>>,
    writes: Vec<Vec<(u64, RegValue)>>,
    /// Per graph id: the selector of an `:info` transaction.
    inc: Vec<Option<Lit>>,
    /// Every key read or written, sorted.
    keys: Vec<u64>,
    /// Per key index: its writers (final writes), the initial transaction
    /// first, then by id.
    writers: Vec<Vec<u32>>,
    edges: Vec<Edge>,
    clauses: Vec<Vec<Lit>>,
    wr_choices: Vec<(u32, Vec<(u32, Lit)>)>,
    /// The memory the polygraph may take and what sets it
    /// ([`crate::limits::solver_budget`]); `None`: no limit.
    budget: Option<(u64, &'static str)>,
    /// Set when building stopped over [`Self::budget`]: why.
    over_budget: Option<String>,
    /// Per key index, its write chains, kept for the keys a predicate
    /// did not return (see [`Builder::pred_rw_edges`]).
    chains: Vec<Option<KeyChains>>,
    /// The distinct edge kinds ([`Polygraph::kinds`]) and their indices.
    kinds: Vec<EdgeKind>,
    kind_ix: hashbrown::HashMap<EdgeKind, u32>,
    /// With deferred class views ([`super::predicates::ClassViews`]): the
    /// ones to build; the others are only checked against the witness.
    views: Option<&'a ClassViews>,
}

/// [`build_within`] without the reason it stopped.
#[cfg(test)]
pub(super) fn build(
    h: &RegHistory,
    preds: &PredTable,
    opts: &SatOptions,
    expired: &dyn Fn() -> bool,
) -> Result<Option<Polygraph>, Violation> {
    build_within(h, preds, opts, expired, &mut None, None)
}

/// The polygraph of `h`, or `None` once `expired()` (building takes
/// seconds on big histories without session order: the version order and
/// the derived anti-dependencies grow with the square of a key's writers)
/// or once it would not fit the memory budget
/// ([`crate::limits::solver_budget`]; `over_budget` then says why). With
/// `views`, only those predicate views known by class are built (the
/// others must exist and are checked later, see
/// [`super::predicates::ClassViews`]).
pub(super) fn build_within<'a>(
    h: &'a RegHistory,
    preds: &'a PredTable,
    opts: &'a SatOptions,
    expired: &dyn Fn() -> bool,
    over_budget: &mut Option<String>,
    views: Option<&'a ClassViews>,
) -> Result<Option<Polygraph>, Violation> {
    let mut b = Builder::summarise(h, preds, opts)?;
    b.views = views;
    let built = b.phases(h, expired);
    *over_budget = b.over_budget.take();
    built
}

impl Builder<'_> {
    /// [`build_within`]'s phases after the summary.
    fn phases(
        &mut self,
        h: &RegHistory,
        expired: &dyn Fn() -> bool,
    ) -> Result<Option<Polygraph>, Violation> {
        let b = self;
        let order_hints = b.order_edges();
        b.index_keys();
        if !b.class_views_fit() {
            return Ok(None);
        }
        let (all_reads, read_pred, misfits) = b.read_candidates()?;
        // Every read-from candidate is an edge (and most a literal): refuse
        // before building them when they alone would not fit.
        let wr_edges: u64 = all_reads.iter().map(|r| r.3.len() as u64).sum();
        if !b.within_budget(wr_edges, wr_edges) {
            return Ok(None);
        }
        b.chains = vec![None; b.keys.len()];
        for (r, m) in all_reads.iter().zip(&misfits) {
            if m.is_some() {
                let ki = b.key_ix(r.1);
                b.chains[ki] = Some(KeyChains {
                    chains: Vec::new(),
                    at: Vec::new(),
                });
            }
        }
        let known_wr = all_reads.iter().filter_map(|(s, _, _, cands)| {
            (cands.len() == 1 && b.inc[cands[0] as usize].is_none()).then_some((cands[0], *s))
        });
        let known = KnownOrder::new(b.n, &b.edges, known_wr);
        let Some(ww) = b.version_order(&all_reads, &known, expired) else {
            return Ok(None);
        };
        let Some(lost_updates) = b.read_edges(all_reads, read_pred, misfits, &ww, expired)? else {
            return Ok(None);
        };
        b.chains = Vec::new();
        Ok(Some(Polygraph {
            n: b.n,
            vars: b.vars,
            edges: std::mem::take(&mut b.edges),
            kind_rw: b.kinds.iter().map(|k| k.is_rw()).collect(),
            kinds: std::mem::take(&mut b.kinds),
            clauses: std::mem::take(&mut b.clauses),
            selector: std::mem::take(&mut b.inc),
            wr_choices: std::mem::take(&mut b.wr_choices),
            order_hints,
            effect_key: std::iter::once(0)
                .chain(h.iter().map(|t| t.invoked + t.index))
                .collect(),
            lost_updates,
        }))
    }
}

impl<'a> Builder<'a> {
    /// Each transaction's external reads and final writes; a selector per
    /// `:info` transaction (whose reads are not observed).
    fn summarise(
        h: &'a RegHistory,
        preds: &'a PredTable,
        opts: &'a SatOptions,
    ) -> Result<Builder<'a>, Violation> {
        let n = h.len() + 1;
        let mut b = Builder {
            h,
            preds,
            opts,
            n,
            vars: 0,
            reads: vec![Vec::new(); n],
            writes: vec![Vec::new(); n],
            inc: vec![None; n],
            keys: Vec::new(),
            writers: Vec::new(),
            edges: Vec::new(),
            clauses: Vec::new(),
            wr_choices: Vec::new(),
            budget: crate::limits::solver_budget(),
            over_budget: None,
            chains: Vec::new(),
            kinds: fixed_kinds(),
            kind_ix: (fixed_kinds().into_iter())
                .zip([INIT_KIND, PROCESS_KIND, REALTIME_KIND])
                .collect(),
            views: None,
        };
        for (i, t) in h.iter().enumerate() {
            let id = i as u32 + 1;
            let (r, w) = summarise_reads(t, id, opts.skip_internal, preds)?;
            if !t.committed {
                b.inc[id as usize] = Some(lit(b.fresh(), true));
            } else if opts.isolation.has_reads() {
                b.reads[id as usize] = r;
            }
            b.writes[id as usize] = w;
        }
        Ok(b)
    }

    fn fresh(&mut self) -> usize {
        self.vars += 1;
        self.vars - 1
    }

    /// The reason of an edge `a → b` needing `extra`: `extra` plus the
    /// selectors of `a` and `b`.
    fn cond(&self, a: u32, b: u32, extra: &[Lit]) -> Reason {
        Reason::union(&[
            extra,
            self.inc[a as usize].as_slice(),
            self.inc[b as usize].as_slice(),
        ])
    }

    fn key_ix(&self, k: u64) -> usize {
        self.keys.binary_search(&k).expect("key")
    }

    /// `t`'s final write of `k` (the initial transaction writes nil).
    fn final_write(&self, t: u32, k: u64) -> Option<RegValue> {
        if t == 0 {
            return Some(None);
        }
        self.writes[t as usize]
            .iter()
            .find(|w| w.0 == k)
            .map(|w| w.1)
    }

    /// Initial, session and real-time edges; without session order in the
    /// model, returns it as hints.
    fn order_edges(&mut self) -> Vec<(u32, u32)> {
        let (h, opts) = (self.h, self.opts);
        for t in 1..self.n as u32 {
            let reason = self.cond(0, t, &[]);
            self.push(0, t, EdgeKind::Init, reason);
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
        } else {
            // Each committed transaction follows its process's previous
            // one, as Elle's process graph orders `:ok` ops only (an
            // `:info` transaction is in no session order; Jepsen gives the
            // process a new id).
            let mut last: std::collections::HashMap<i64, u32> = Default::default();
            for (i, t) in h.iter().enumerate().filter(|(_, t)| t.committed) {
                let id = i as u32 + 1;
                if let Some(p) = last.insert(t.process, id) {
                    let reason = self.cond(p, id, &[]);
                    self.push(p, id, EdgeKind::Process, reason);
                }
            }
        }
        if opts.real_time {
            for (i, t) in h.iter().enumerate() {
                let id = i as u32 + 1;
                for &p in &t.realtime_preds {
                    if p != 0 && p != id && h[p as usize - 1].committed {
                        let reason = self.cond(p, id, &[]);
                        self.push(p, id, EdgeKind::Realtime, reason);
                    }
                }
            }
        }
        order_hints
    }

    fn push(&mut self, from: u32, to: u32, kind: EdgeKind, reason: Reason) {
        let kind = self.intern(kind);
        self.push_ix(from, to, kind, reason);
    }

    /// [`Self::push`] with the kind's index ([`Self::intern`]).
    fn push_ix(&mut self, from: u32, to: u32, kind: u32, reason: Reason) {
        self.edges.push(Edge {
            from,
            to,
            kind,
            reason,
        });
    }

    /// The index of `kind` in the kinds table, added if new.
    fn intern(&mut self, kind: EdgeKind) -> u32 {
        let next = self.kinds.len() as u32;
        let ix = *self.kind_ix.entry(kind).or_insert(next);
        if ix == next {
            self.kinds.push(kind);
        }
        ix
    }

    /// The keys, and per key its writers (final writes) in id order; the
    /// initial transaction writes nil to every key.
    fn index_keys(&mut self) {
        let mut keys: Vec<u64> = (self.writes.iter().flatten().map(|w| w.0))
            .chain(self.reads.iter().flatten().map(|r| r.key))
            .collect();
        keys.sort_unstable();
        keys.dedup();
        self.keys = keys;
        let mut writers: Vec<Vec<u32>> = vec![vec![0]; self.keys.len()];
        for (t, ws) in self.writes.iter().enumerate() {
            for &(k, _) in ws {
                writers[self.key_ix(k)].push(t as u32);
            }
        }
        self.writers = writers;
    }

    /// Read-from candidates of every external read, before the version
    /// order (a read with one committed candidate is a known edge), per
    /// read the predicate micro-op that made it, and for a predicate's
    /// view known only by class its *misfits*: the other writers of the
    /// key (by id) whose versions it cannot have seen.
    #[allow(clippy::type_complexity)]
    fn read_candidates(
        &self,
    ) -> Result<(Vec<CandRead>, Vec<Option<u32>>, Vec<Misfits>), Violation> {
        let (h, opts, preds) = (self.h, self.opts, self.preds);
        // The writers of each final `(key, value)`, by id (the initial
        // transaction's nil first): a read's candidates without scanning
        // every writer of the key (a writer of many keys, such as a
        // predicate write, made that scan quadratic).
        let mut by_value: Vec<(u64, RegValue, u32)> =
            self.keys.iter().map(|&k| (k, None, 0)).collect();
        for (t, ws) in self.writes.iter().enumerate() {
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
        let mut all_reads: Vec<CandRead> = Vec::new();
        let mut read_pred: Vec<Option<u32>> = Vec::new();
        let mut misfits: Vec<Misfits> = Vec::new();
        for (s, rs) in self.reads.iter().enumerate() {
            let s = s as u32;
            for r in rs {
                let k = r.key;
                let mut misfit = None;
                let (v, cands) = match &r.seen {
                    Seen::Value(v) => (*v, writers_of(k, *v).filter(|&t| t != s).collect()),
                    Seen::Class(cs) => {
                        let fits = |t: u32| {
                            self.final_write(t, k)
                                .is_some_and(|v| cs.iter().all(|&(p, m)| preds.eval(p, v) == m))
                        };
                        let writers = &self.writers[self.key_ix(k)];
                        let visible = visible_in_real_time(h, writers, s, opts.real_time);
                        let others = writers.iter().copied().filter(|&t| t != s && visible(t));
                        // Every version fits: whichever the read saw, the
                        // predicate could not tell them apart.
                        if others.clone().all(fits) {
                            continue;
                        }
                        if self.views.is_some_and(|v| !v.builds(s, k)) {
                            // Deferred: only its existence is checked here.
                            if !others.clone().any(fits) {
                                return Err(Violation::PredicateUnexplained {
                                    txn: s,
                                    key: k,
                                    pred: r.pred.expect("class reads come from predicates"),
                                });
                            }
                            continue;
                        }
                        let mut cands: Vec<u32> = others.filter(|&t| fits(t)).collect();
                        if cands.is_empty() && opts.real_time {
                            // Only real time rules the fitting versions
                            // out: keep them, the solver reports the cycle.
                            cands = (writers.iter().copied())
                                .filter(|&t| t != s && fits(t))
                                .collect();
                        }
                        misfit = Some(
                            (writers.iter().copied())
                                .filter(|&t| t != s && !fits(t))
                                .collect(),
                        );
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
                misfits.push(misfit);
            }
        }
        Ok((all_reads, read_pred, misfits))
    }

    /// The version order of every key, as ww alternatives (also pushed as
    /// edges). Cobra's write combining: a transaction that read a key from
    /// a single committed writer and wrote the key follows that writer
    /// immediately in the key's version order (under SER and SI alike), so
    /// each key's writers fall into chains and only whole chains are
    /// ordered.
    fn version_order(
        &mut self,
        all_reads: &[CandRead],
        known: &KnownOrder,
        expired: &dyn Fn() -> bool,
    ) -> Option<Vec<WwAlts>> {
        let nkeys = self.keys.len();
        let mut rmw_links: Vec<Vec<(u32, u32)>> = vec![Vec::new(); nkeys];
        // Below snapshot isolation a stale read-modify-write is no cycle,
        // so another writer may come between: no chains.
        let combine = self.opts.isolation.full();
        for (s, k, _, cands) in all_reads.iter().filter(|_| combine) {
            if cands.len() == 1
                && self.inc[cands[0] as usize].is_none()
                && self.final_write(*s, *k).is_some()
            {
                rmw_links[self.key_ix(*k)].push((cands[0], *s));
            }
        }
        // One literal per unordered pair of transactions `(tail of one,
        // head of the other)` (true = lower id first), merged over keys.
        let mut pair_var: std::collections::HashMap<(u32, u32), usize> = Default::default();
        let mut ww: Vec<WwAlts> = vec![Vec::new(); nkeys];
        let mut known_after: Vec<(u32, u32)> = Vec::new();
        for ki in 0..nkeys {
            // The budget is arithmetic on lengths: checked every time, before
            // the next key's edges; the clock every 256 keys.
            if (ki % 256 == 0 && expired()) || !self.within_budget(0, 0) {
                return None;
            }
            known_after.clear();
            let chains = write_chains(&self.writers[ki], &mut rmw_links[ki]);
            for (ci, ca) in chains.iter().enumerate() {
                // A key's chain pairs are quadratic in its writers.
                if (ci % 64 == 63 && expired()) || !self.within_budget(ww[ki].len() as u64, 0) {
                    return None;
                }
                known_after.extend(ca.windows(2).map(|w| (w[0], w[1])));
                for cb in &chains[ci + 1..] {
                    self.order_chains(ca, cb, known, &mut pair_var, &mut ww[ki], &mut known_after);
                }
            }
            self.keep_chains(ki, chains);
            for &(a, b, r) in &ww[ki] {
                self.push(a, b, EdgeKind::Ww { key: self.keys[ki] }, r);
            }
            // A known ww edge follows a known path, so it is left out; of
            // a writer's known successors only the first ones derive
            // anti-dependencies (`S → b` for a later `b` follows from
            // `S → m` and `m ⇝ b`).
            known.sort_by_position(&mut known_after);
            let mut first = 0;
            while first < known_after.len() {
                let a = known_after[first].0;
                let group = (known_after[first..].iter())
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
        Some(ww)
    }

    /// Orders chains `ca` before `cb` (by head) of one key: chains the
    /// known order already orders get a known edge (no literal: pruning
    /// would fix it anyway, and on the VeriStrong 10k histories that is
    /// most of the pairs); the others one literal.
    fn order_chains(
        &mut self,
        ca: &[u32],
        cb: &[u32],
        known: &KnownOrder,
        pair_var: &mut std::collections::HashMap<(u32, u32), usize>,
        ww: &mut WwAlts,
        known_after: &mut Vec<(u32, u32)>,
    ) {
        let (ha, ta) = (ca[0], ca[ca.len() - 1]);
        let (hb, tb) = (cb[0], cb[cb.len() - 1]);
        // Chains of several writers are committed throughout.
        let unconditional = self.cond(ha, hb, &[]).is_empty();
        if unconditional && known.reaches(ta, hb) {
            known_after.push((ta, hb));
        } else if unconditional && known.reaches(tb, ha) {
            known_after.push((tb, ha));
        } else if unconditional && known.reaches(ha, tb) {
            // Ordered, but only through the chains: a new known edge.
            ww.push((ta, hb, Reason::union(&[])));
        } else if unconditional && known.reaches(hb, ta) {
            ww.push((tb, ha, Reason::union(&[])));
        } else if ha == 0 {
            ww.push((ta, hb, self.cond(ta, hb, &[])));
        } else {
            let v = match pair_var.get(&(ta.min(hb), ta.max(hb))) {
                Some(&v) => v,
                None => {
                    let v = self.fresh();
                    pair_var.insert((ta.min(hb), ta.max(hb)), v);
                    v
                }
            };
            let a_first = lit(v, ta < hb);
            ww.push((ta, hb, self.cond(ta, hb, &[a_first])));
            ww.push((tb, ha, self.cond(tb, ha, &[!a_first])));
        }
    }

    /// Read-from alternatives (a literal each when there are several, at
    /// least one true) and the anti-dependencies they derive; returns the
    /// lost-update groups (with [`SatOptions::lost_update`]).
    fn read_edges(
        &mut self,
        all_reads: Vec<CandRead>,
        read_pred: Vec<Option<u32>>,
        misfits: Vec<Misfits>,
        ww: &[WwAlts],
        expired: &dyn Fn() -> bool,
    ) -> Result<Option<Vec<LostUpdateGroup>>, Violation> {
        // Per key, the indices of its ww alternatives sorted by source
        // (stable, so edges come out in the same order as a scan): each
        // read-from candidate then finds its successors without scanning
        // every pair.
        let ww_by_from: Vec<Vec<u32>> = ww
            .iter()
            .map(|alts| {
                let mut ix: Vec<u32> = (0..alts.len() as u32).collect();
                ix.sort_by_key(|&i| alts[i as usize].0);
                ix
            })
            .collect();
        let lost_update = LostUpdates::new(self.opts.lost_update, &all_reads, |t, k| {
            self.final_write(t, k).is_some()
        });
        // Per read (with lost updates): each candidate and its literal.
        let mut read_lits: Vec<Vec<(u32, Option<Lit>)>> = Vec::new();
        let reads = all_reads.into_iter().zip(read_pred).zip(misfits);
        for (r, (((s, k, v, cands), pred), misfit)) in reads.enumerate() {
            // Budget per read (its derived edges can be many), clock per 256.
            if (r % 256 == 255 && expired()) || !self.within_budget(0, 0) {
                return Ok(None);
            }
            let ki = self.key_ix(k);
            let single = cands.len() == 1 && self.inc[cands[0] as usize].is_none();
            let mut clause = Vec::new();
            let mut choice = Vec::new();
            if lost_update.enabled {
                read_lits.push(Vec::new());
            }
            for &t in &cands {
                let wr: Option<Lit> = if single {
                    None
                } else {
                    let l = lit(self.fresh(), true);
                    clause.push(l);
                    choice.push((t, l));
                    if let Some(i) = self.inc[t as usize] {
                        self.clauses.push(vec![!l, i]);
                    }
                    Some(l)
                };
                if let Some(lits) = read_lits.last_mut().filter(|_| lost_update.enabled) {
                    lits.push((t, wr));
                }
                let kind = match pred {
                    None => EdgeKind::Wr { key: k, value: v },
                    Some(pred) => EdgeKind::PredWr {
                        key: k,
                        value: self.final_write(t, k).expect("a candidate writes the key"),
                        pred,
                    },
                };
                let wr_reason = self.cond(t, s, wr.as_slice());
                self.push(t, s, kind, wr_reason);
                if !self.opts.isolation.has_rw() {
                    continue;
                }
                let by_from = &ww_by_from[ki];
                let first = by_from.partition_point(|&i| ww[ki][i as usize].0 < t);
                let from_t = (by_from[first..].iter())
                    .map(|&i| &ww[ki][i as usize])
                    .take_while(|alt| alt.0 == t);
                if let (Some(pred), Some(misfit)) = (pred, &misfit) {
                    let read = PredView {
                        reader: s,
                        ki,
                        pred,
                        wr: wr_reason,
                        misfit,
                    };
                    self.pred_rw_edges(&read, t, from_t);
                    continue;
                }
                let kind = self.intern(match pred {
                    None => EdgeKind::Rw { key: k, via: t },
                    Some(pred) => EdgeKind::PredRw {
                        key: k,
                        via: t,
                        pred,
                    },
                });
                for &(_, b, r) in from_t {
                    if b != s {
                        self.push_ix(s, b, kind, Reason::union(&[&wr_reason, &r]));
                    }
                }
            }
            if !single {
                self.clauses.push(clause);
                self.wr_choices.push((s, choice));
            }
        }
        lost_update.clauses(&read_lits, &mut self.clauses).map(Some)
    }
}

/// A key's write chains with each writer's place: `(writer, chain,
/// position)` sorted by writer.
#[derive(Clone, Debug)]
struct KeyChains {
    chains: Vec<Vec<u32>>,
    at: Vec<(u32, u32, u32)>,
}

impl KeyChains {
    /// `(chain, position)` of writer `t`, a writer of the key (every one
    /// lies on one chain).
    fn locate(&self, t: u32) -> (usize, usize) {
        let i = self.at.partition_point(|a| a.0 < t);
        let (_, c, p) = self.at[i];
        (c as usize, p as usize)
    }

    /// Whether writer `m` lies on chain `c` at position `p` or earlier.
    fn up_to(&self, m: u32, c: usize, p: usize) -> bool {
        let i = self.at.partition_point(|a| a.0 < m);
        matches!(self.at.get(i), Some(&(w, cm, pm)) if w == m && cm as usize == c && pm as usize <= p)
    }
}

/// A predicate's view of one key known only by class, for the
/// anti-dependencies of one of its read-from candidates.
struct PredView<'m> {
    reader: u32,
    ki: usize,
    pred: u32,
    /// The reason of the read-from edge.
    wr: Reason,
    /// The writers whose versions the view rules out, by id.
    misfit: &'m [u32],
}

// Predicate-specific phases and the memory budget (helper "pred").
impl Builder<'_> {
    /// Whether the polygraph, with `edges` and `vars` more, fits the
    /// budget; if not, records why. The estimate is per edge and per
    /// literal over the whole check ([`BYTES_PER_EDGE`]).
    fn within_budget(&mut self, edges: u64, vars: u64) -> bool {
        let Some((budget, what)) = self.budget else {
            return true;
        };
        let edges = self.edges.len() as u64 + edges;
        let need = edges * BYTES_PER_EDGE + (self.vars as u64 + vars) * BYTES_PER_VAR;
        if need <= budget {
            return true;
        }
        let mb = |b: u64| b.div_ceil(1 << 20);
        self.over_budget = Some(format!(
            "the polygraph needs more than {} MB (about {edges} edges), more than {what} leaves for it ({} MB)",
            mb(need),
            mb(budget)
        ));
        false
    }

    /// Whether the read-from candidates of the predicate views known only
    /// by class can fit the budget, counted before they are listed: without
    /// real time such a view can have seen almost every version of its key
    /// (all but the few the predicate would have returned), so each writer
    /// of the key counts. With real time the windows leave far fewer, and
    /// the exact count after listing them decides.
    fn class_views_fit(&mut self) -> bool {
        if self.opts.real_time || self.budget.is_none() {
            return true;
        }
        let mut cands = 0u64;
        // Deferred views count too: were they all built they would not
        // fit, and without real time the item polygraph of such a history
        // is itself too big to solve (issue 18's 100k history without
        // views: 6.3M edges, 2.3 GB, no answer in 60 s), so giving up at
        // once beats a minute of solving towards `:unknown`.
        for rs in &self.reads {
            for r in rs.iter().filter(|r| matches!(r.seen, Seen::Class(_))) {
                let writers = self.writers[self.key_ix(r.key)].len() as u64;
                cands += writers.saturating_sub(1);
            }
        }
        self.within_budget(cands, cands)
    }

    /// Keeps key `ki`'s write chains if a predicate's view of it is known
    /// only by class.
    fn keep_chains(&mut self, ki: usize, chains: Vec<Vec<u32>>) {
        let Some(slot) = self.chains.get_mut(ki).filter(|c| c.is_some()) else {
            return;
        };
        let mut at: Vec<(u32, u32, u32)> = (chains.iter().enumerate())
            .flat_map(|(c, ch)| (ch.iter().enumerate()).map(move |(p, &t)| (t, c as u32, p as u32)))
            .collect();
        at.sort_unstable();
        *slot = Some(KeyChains { chains, at });
    }

    /// The anti-dependencies of a predicate's view known only by class,
    /// read from `t`: only towards the *misfits* after `t` (Vbox §4.1),
    /// not towards every later writer as for an item read. Exact: were a
    /// misfit the last version before the reader in a resolution's
    /// topological order, it would follow `t` and be reached by one of
    /// these edges. From the initial chain (first in every version order)
    /// an edge goes to each misfit after `t`. From another chain, a
    /// version-order choice `t → head of B` gives an edge to B's first
    /// misfit (B's later versions follow it), and a known successor keeps
    /// its edge (the versions after it may follow it only through known
    /// paths, which may hold misfits).
    fn pred_rw_edges<'w>(
        &mut self,
        view: &PredView,
        t: u32,
        from_t: impl Iterator<Item = &'w (u32, u32, Reason)>,
    ) {
        let kind = EdgeKind::PredRw {
            key: self.keys[view.ki],
            via: t,
            pred: view.pred,
        };
        let s = view.reader;
        let Some(kc) = self.chains[view.ki].take() else {
            unreachable!("chains are kept for predicate keys")
        };
        let (ct, pt) = kc.locate(t);
        if kc.chains[ct][0] == 0 {
            // A lookup per misfit, not a scan of the chain up to `t`.
            for &m in (view.misfit.iter()).filter(|&&m| m != s && !kc.up_to(m, ct, pt)) {
                let r = self.cond(s, m, &view.wr);
                self.push(s, m, kind, r);
            }
        } else {
            for &(_, b, r) in from_t.filter(|alt| alt.1 != s) {
                let reason = Reason::union(&[&view.wr, &r]);
                if r.len() <= self.cond(t, b, &[]).len() {
                    // Known (no choice): keep it.
                    self.push(s, b, kind, reason);
                    continue;
                }
                let (cb, pb) = kc.locate(b);
                let first = kc.chains[cb][pb..]
                    .iter()
                    .find(|x| view.misfit.binary_search(x).is_ok());
                if let Some(&x) = first.filter(|&&x| x != s) {
                    self.push(s, x, kind, reason);
                }
            }
        }
        self.chains[view.ki] = Some(kc);
    }
}

/// The predicate views known only by class that `views` did not build and
/// that serial order `order` (graph ids of the transactions that took
/// effect, as [`super::Verdict::Valid`] gives it) does not satisfy: the
/// last version of the key before the reader is one the view rules out.
/// `(reader, key)` pairs, in reader order.
pub(super) fn unmet_class_views(
    h: &RegHistory,
    preds: &PredTable,
    opts: &SatOptions,
    order: &[u32],
    views: &ClassViews,
) -> Result<Vec<(u32, u64)>, Violation> {
    let mut b = Builder::summarise(h, preds, opts)?;
    b.index_keys();
    // Position in the serial order; the initial transaction first, those
    // left out (unchosen `:info`) never.
    let mut pos = vec![u32::MAX; b.n];
    pos[0] = 0;
    for (i, &t) in order.iter().enumerate() {
        pos[t as usize] = i as u32 + 1;
    }
    let by_pos: Vec<Vec<u32>> = (b.writers.iter())
        .map(|ws| {
            let mut ws: Vec<u32> = ws
                .iter()
                .copied()
                .filter(|&t| pos[t as usize] != u32::MAX)
                .collect();
            ws.sort_unstable_by_key(|&t| pos[t as usize]);
            ws
        })
        .collect();
    let mut unmet = Vec::new();
    for (s, rs) in b.reads.iter().enumerate() {
        let s = s as u32;
        for r in rs {
            let Seen::Class(cs) = &r.seen else { continue };
            if views.builds(s, r.key) || pos[s as usize] == u32::MAX {
                continue;
            }
            let ws = &by_pos[b.key_ix(r.key)];
            // The initial transaction is first in every order, so some
            // writer precedes the reader.
            let i = ws.partition_point(|&t| pos[t as usize] < pos[s as usize]);
            let last = ws[i - 1];
            let fits = (b.final_write(last, r.key))
                .is_some_and(|v| cs.iter().all(|&(p, m)| preds.eval(p, v) == m));
            if !fits {
                unmet.push((s, r.key));
            }
        }
    }
    Ok(unmet)
}
