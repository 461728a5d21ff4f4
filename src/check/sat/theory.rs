//! The acyclicity theory for `batsat` (VeriStrong §3.3–§3.5, §3.7): each
//! conditional edge becomes active when all literals of its reason are true
//! (a derived anti-dependency needs both its read-from and its version-order
//! literal), active edges are inserted into an incremental topological order
//! ([`DynamicOrder`]), and an edge that would close a cycle raises the
//! negation of the reasons of the cycle's edges as a conflict clause.
//!
//! For snapshot isolation the cycles that count are those of the *induced*
//! graph `(so ∪ wr ∪ ww) ; rw?`. Rather than composing edges (a product per
//! vertex), the order holds a layered graph on `2n` vertices with the same
//! paths between the original ones: each vertex `b` gets a twin `b'`
//! (`n + b`) that only non-rw edges enter and only rw edges leave; a non-rw
//! edge `a → b` becomes `a → b` and `a → b'`, an rw edge `b → c` becomes
//! `b' → c`. A path `a → b' → c` is the induced edge `a → c`, so a cycle
//! there is an induced cycle (an induced self-loop is a two-cycle).
//!
//! For the models that forbid only cycles with at most one anti-dependency
//! ([`super::Isolation::ConsistentView`]: G0, G1c, G-single), rw edges stay
//! out of the order: the order keeps the other edges acyclic, and an active
//! rw edge `a → b` conflicts when the order has a path `b ⇝ a` (checked when
//! the rw edge activates, and for every active rw edge at the final check).
//!
//! Backtracking undoes everything done at the popped levels, in reverse.

use batsat::{Lit, Theory, TheoryArg};

use super::polygraph::Reason;
use crate::graph::dynamic_order::DynamicOrder;

/// How many unconditional edges the theory's set-up inserts (or rw edges
/// it checks) between two readings of the clock.
pub(super) const SETUP_CLOCK_EVERY: usize = 4096;

/// An edge as the theory sees it.
#[derive(Clone, Debug)]
pub(super) struct TheoryEdge {
    pub(super) from: u32,
    pub(super) to: u32,
    /// Anti-dependency (only matters for snapshot isolation).
    pub(super) rw: bool,
    /// The literals that must all be true; empty = always present. Inline
    /// (no allocation per edge: big histories encode millions).
    pub(super) reason: Reason,
}

/// Saved sizes at the start of a decision level.
#[derive(Clone, Copy)]
struct Level {
    processed: usize,
    counted: usize,
    activated: usize,
    rw_active: usize,
}

/// The incremental acyclicity (SER) or induced-acyclicity (SI) theory.
pub(super) struct AcyclicTheory {
    edges: Vec<TheoryEdge>,
    /// Per edge: `(from, to, rw)`, compact for activation.
    ends: Vec<(u32, u32, bool)>,
    si: bool,
    /// Only cycles with at most one rw edge count (see the module doc).
    single_rw: bool,
    /// With `single_rw`: the active rw edges, in activation order.
    rw_active: Vec<u32>,
    order: DynamicOrder,
    /// Per literal index `l`: the edges whose reason contains it are
    /// `watched[watch_start[l]..watch_start[l + 1]]` (one flat array: the
    /// theory scans these lists for every assigned literal).
    watch_start: Vec<u32>,
    watched: Vec<u32>,
    /// Per edge: reason literals not yet true (active at zero).
    missing: Vec<u8>,
    /// Edges whose `missing` was decremented, for undo.
    counted: Vec<u32>,
    /// Order edges present before each activation, for undo.
    activated: Vec<usize>,
    /// Vertices of the history (the order has `2n` with SI).
    n: u32,
    levels: Vec<Level>,
    /// Length of the solver's trail already processed.
    processed: usize,
    /// The edges of the last cycle found (for the report).
    pub(super) last_cycle: Option<Vec<u32>>,
    /// Conflicts raised (shared, so that the solver's stop callback can
    /// enforce a conflict budget).
    pub(super) conflicts: std::rc::Rc<std::cell::Cell<usize>>,
    /// Per variable: its position on the solver's trail when processed.
    trail_pos: Vec<u32>,
    /// Longest backjump a conflict may cause (see `conflict`).
    backjump_limit: usize,
    clause: Vec<Lit>,
}

impl AcyclicTheory {
    /// A theory over `n = order.len()` vertices with `edges` (those with an
    /// empty reason are inserted at once) and `vars` variables; `order` is
    /// an initial vertex order, ideally topological for the unconditional
    /// edges; conflicts that would backjump more than `backjump_limit`
    /// levels backjump one. `single_rw` counts only cycles with at most one
    /// rw edge (not with `si`). Returns the cycle (edge ids) if the
    /// unconditional edges are cyclic, and `Ok(None)` once `expired()`
    /// (read every [`SETUP_CLOCK_EVERY`] unconditional edges: inserting
    /// millions of them takes seconds).
    pub(super) fn new(
        order: &[u32],
        edges: Vec<TheoryEdge>,
        vars: usize,
        super::Shape { si, single_rw }: super::Shape,
        backjump_limit: usize,
        expired: &dyn Fn() -> bool,
    ) -> Result<Option<AcyclicTheory>, Vec<u32>> {
        if expired() {
            return Ok(None);
        }
        let n = order.len() as u32;
        // With SI each twin follows its vertex.
        let layered: Vec<u32> = if si {
            order.iter().flat_map(|&v| [v, n + v]).collect()
        } else {
            order.to_vec()
        };
        let mut watch_start = vec![0u32; 2 * vars + 1];
        for e in &edges {
            for &l in e.reason.iter() {
                watch_start[l.idx() as usize + 1] += 1;
            }
        }
        for i in 0..2 * vars {
            watch_start[i + 1] += watch_start[i];
        }
        let mut fill = watch_start.clone();
        let mut watched = vec![0u32; watch_start[2 * vars] as usize];
        for (i, e) in edges.iter().enumerate() {
            for &l in e.reason.iter() {
                let slot = &mut fill[l.idx() as usize];
                watched[*slot as usize] = i as u32;
                *slot += 1;
            }
        }
        let mut th = AcyclicTheory {
            missing: edges.iter().map(|e| e.reason.len() as u8).collect(),
            ends: edges.iter().map(|e| (e.from, e.to, e.rw)).collect(),
            edges,
            si,
            single_rw,
            rw_active: Vec::new(),
            order: DynamicOrder::with_order(&layered),
            watch_start,
            watched,
            counted: Vec::new(),
            activated: Vec::new(),
            n,
            levels: Vec::new(),
            processed: 0,
            last_cycle: None,
            conflicts: Default::default(),
            trail_pos: vec![0; vars],
            backjump_limit,
            clause: Vec::new(),
        };
        let mut inserted = 0usize;
        for e in 0..th.edges.len() as u32 {
            if th.edges[e as usize].reason.is_empty() {
                th.activate(e)?;
                inserted += 1;
                if inserted.is_multiple_of(SETUP_CLOCK_EVERY) && expired() {
                    return Ok(None);
                }
            }
        }
        // An unconditional rw edge may be closed by unconditional edges
        // inserted after it: a cycle before any choice.
        for i in 0..th.rw_active.len() {
            th.check_rw(th.rw_active[i])?;
            if i % SETUP_CLOCK_EVERY == SETUP_CLOCK_EVERY - 1 && expired() {
                return Ok(None);
            }
        }
        Ok(Some(th))
    }

    /// Activates edge `e`; on a cycle returns its edges (in cycle order).
    fn activate(&mut self, e: u32) -> Result<(), Vec<u32>> {
        self.activated.push(self.order.edge_count());
        let (from, to, rw) = self.ends[e as usize];
        if self.single_rw && rw {
            self.rw_active.push(e);
            return self.check_rw(e);
        }
        if !self.si {
            return self.insert(from, to, e);
        }
        if rw {
            self.insert(self.n + from, to, e)
        } else {
            self.insert(from, to, e)?;
            self.insert(from, self.n + to, e)
        }
    }

    /// With `single_rw`: the cycle an active rw edge `e = a → b` closes with
    /// a path `b ⇝ a` of other edges, if any.
    fn check_rw(&mut self, e: u32) -> Result<(), Vec<u32>> {
        let (from, to, _) = self.ends[e as usize];
        match self.order.path(to, from) {
            Some(path) => {
                let mut cycle = vec![e];
                cycle.extend(path);
                Err(cycle)
            }
            None => Ok(()),
        }
    }

    /// Inserts an order edge for theory edge `e`.
    fn insert(&mut self, from: u32, to: u32, e: u32) -> Result<(), Vec<u32>> {
        self.order.add_edge(from, to, e).map_err(|path| {
            let mut cycle = vec![e];
            cycle.extend(path);
            cycle
        })
    }

    /// Undoes activations and counts back to the given sizes.
    fn undo_to(&mut self, level: Level) {
        if self.activated.len() > level.activated {
            let order_len = self.activated[level.activated];
            self.activated.truncate(level.activated);
            while self.order.edge_count() > order_len {
                self.order.pop_edge();
            }
        }
        for &e in &self.counted[level.counted..] {
            self.missing[e as usize] += 1;
        }
        self.counted.truncate(level.counted);
        self.rw_active.truncate(level.rw_active);
        self.processed = level.processed;
    }

    /// Processes the trail from `processed` on; raises a conflict on a cycle
    /// (and then returns `false`).
    fn process(&mut self, acts: &mut TheoryArg) -> bool {
        while self.processed < acts.model().len() {
            let l = acts.model()[self.processed];
            self.trail_pos[l.var().idx() as usize] = self.processed as u32;
            self.processed += 1;
            let (start, end) = (
                self.watch_start[l.idx() as usize] as usize,
                self.watch_start[l.idx() as usize + 1] as usize,
            );
            for i in start..end {
                let e = self.watched[i];
                self.missing[e as usize] -= 1;
                self.counted.push(e);
                if self.missing[e as usize] == 0 {
                    if let Err(cycle) = self.activate(e) {
                        self.conflict(cycle, acts);
                        return false;
                    }
                }
            }
        }
        true
    }

    fn conflict(&mut self, cycle: Vec<u32>, acts: &mut TheoryArg) {
        self.conflicts.set(self.conflicts.get() + 1);
        self.clause.clear();
        for &e in &cycle {
            self.clause
                .extend(self.edges[e as usize].reason.iter().map(|&l| !l));
        }
        self.clause.sort_unstable();
        self.clause.dedup();
        // A cycle closed by the newest decision against much older edges
        // would send batsat back to the older edges' level, and the search
        // would redo every decision in between (on VeriStrong's HD history,
        // a third of the backjumps crossed over 1,000 levels). Adding the
        // previous decision's negation keeps the clause implied (a superset
        // of one) and makes it assert one level down: chronological
        // backtracking, emulated, since batsat has no hook for it.
        {
            let t = self.backjump_limit;
            let current = self.levels.len();
            let level_of = |p: u32| self.levels.partition_point(|lv| lv.processed as u32 <= p);
            let back = self
                .clause
                .iter()
                .map(|l| level_of(self.trail_pos[l.var().idx() as usize]))
                .filter(|&k| k < current)
                .max()
                .unwrap_or(0);
            if current >= 2 && current - back > t {
                let at = self.levels[current - 2].processed;
                if let Some(&d) = acts.model().get(at) {
                    if !self.clause.contains(&!d) {
                        self.clause.push(!d);
                    }
                }
            }
        }
        // batsat learns a one-literal conflict clause as a unit at level 0
        // and asserts its literal there; if the literal was itself set at
        // level 0 (the theory saw it late, at a higher level), that would
        // overwrite a level-0 assignment. The newest trail literal (true,
        // at the current level) keeps the clause implied and false, so the
        // ordinary conflict analysis handles it.
        if self.clause.len() == 1 {
            if let Some(&d) = acts.model().last() {
                if !self.clause.contains(&!d) {
                    self.clause.push(!d);
                }
            }
        }
        self.last_cycle = Some(cycle);
        // Non-empty: a cycle of unconditional edges is caught in `new`.
        acts.raise_conflict(&self.clause, false);
    }
}

impl Theory for AcyclicTheory {
    fn final_check(&mut self, acts: &mut TheoryArg) {
        if self.process(acts) && self.single_rw {
            // Edges activated after an rw edge may have closed a path back
            // to it.
            for i in 0..self.rw_active.len() {
                if let Err(cycle) = self.check_rw(self.rw_active[i]) {
                    self.conflict(cycle, acts);
                    return;
                }
            }
        }
    }

    fn partial_check(&mut self, acts: &mut TheoryArg) {
        self.process(acts);
    }

    fn create_level(&mut self) {
        self.levels.push(Level {
            processed: self.processed,
            counted: self.counted.len(),
            activated: self.activated.len(),
            rw_active: self.rw_active.len(),
        });
    }

    fn pop_levels(&mut self, n: usize) {
        debug_assert!(n <= self.levels.len());
        let keep = self.levels.len() - n;
        let level = self.levels[keep];
        self.levels.truncate(keep);
        self.undo_to(level);
    }

    fn n_levels(&self) -> usize {
        self.levels.len()
    }

    fn explain_propagation(&mut self, _p: Lit) -> &[Lit] {
        unreachable!("the acyclicity theory does not propagate")
    }
}
