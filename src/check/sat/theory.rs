//! The acyclicity theory for `batsat` (VeriStrong §3.3–§3.5, §3.7): each
//! conditional edge becomes active when all literals of its reason are true
//! (a derived anti-dependency needs both its read-from and its version-order
//! literal), active edges are inserted into an incremental topological order
//! ([`DynamicOrder`]), and an edge that would close a cycle raises the
//! negation of the reasons of the cycle's edges as a conflict clause.
//!
//! For snapshot isolation the order holds the *induced* graph instead:
//! every non-rw edge `a → b`, and every non-rw edge followed by an rw edge
//! `a → b → c` as `a → c`; a self-loop there is an immediate conflict.
//!
//! Backtracking undoes everything done at the popped levels, in reverse.

use batsat::{Lit, Theory, TheoryArg};

use crate::graph::dynamic_order::DynamicOrder;

/// No second edge (an induced edge made of one edge only).
const NONE: u32 = u32::MAX;

/// An edge as the theory sees it.
#[derive(Clone, Debug)]
pub(super) struct TheoryEdge {
    pub(super) from: u32,
    pub(super) to: u32,
    /// Anti-dependency (only matters for snapshot isolation).
    pub(super) rw: bool,
    /// The literals that must all be true; empty = always present.
    pub(super) reason: Vec<Lit>,
}

/// Saved sizes at the start of a decision level.
#[derive(Clone, Copy)]
struct Level {
    processed: usize,
    counted: usize,
    activated: usize,
}

/// The incremental acyclicity (SER) or induced-acyclicity (SI) theory.
pub(super) struct AcyclicTheory {
    edges: Vec<TheoryEdge>,
    si: bool,
    order: DynamicOrder,
    /// Per literal index: the edges whose reason contains it.
    watch: Vec<Vec<u32>>,
    /// Per edge: reason literals currently true.
    holds: Vec<u8>,
    /// Edges whose `holds` was incremented, for undo.
    counted: Vec<u32>,
    /// Activated edges with the sizes to restore on undo:
    /// `(edge, order edges before, induced labels before)`.
    activated: Vec<(u32, usize, usize)>,
    /// Order-edge labels: `(edge, second edge or NONE)`.
    labels: Vec<(u32, u32)>,
    /// SI: active non-rw edges into each vertex, rw edges out of it.
    dep_in: Vec<Vec<u32>>,
    rw_out: Vec<Vec<u32>>,
    levels: Vec<Level>,
    /// Length of the solver's trail already processed.
    processed: usize,
    /// The edges of the last cycle found (for the report).
    pub(super) last_cycle: Option<Vec<u32>>,
    /// Conflicts raised.
    pub(super) conflicts: usize,
    clause: Vec<Lit>,
}

impl AcyclicTheory {
    /// A theory over `n` vertices with `edges` (those with an empty reason
    /// are inserted at once) and `vars` variables; `order` is an initial
    /// vertex order, ideally topological for the unconditional edges.
    /// Returns the cycle (edge ids) if the unconditional edges are cyclic.
    pub(super) fn new(
        order: &[u32],
        edges: Vec<TheoryEdge>,
        vars: usize,
        si: bool,
    ) -> Result<AcyclicTheory, Vec<u32>> {
        let n = order.len();
        let mut watch = vec![Vec::new(); 2 * vars];
        for (i, e) in edges.iter().enumerate() {
            for &l in &e.reason {
                watch[l.idx() as usize].push(i as u32);
            }
        }
        let mut th = AcyclicTheory {
            holds: vec![0; edges.len()],
            edges,
            si,
            order: DynamicOrder::with_order(order),
            watch,
            counted: Vec::new(),
            activated: Vec::new(),
            labels: Vec::new(),
            dep_in: if si { vec![Vec::new(); n] } else { Vec::new() },
            rw_out: if si { vec![Vec::new(); n] } else { Vec::new() },
            levels: Vec::new(),
            processed: 0,
            last_cycle: None,
            conflicts: 0,
            clause: Vec::new(),
        };
        for e in 0..th.edges.len() as u32 {
            if th.edges[e as usize].reason.is_empty() {
                th.activate(e)?;
            }
        }
        Ok(th)
    }

    /// The current vertex order: topological for the active edges.
    pub(super) fn order(&self) -> Vec<u32> {
        self.order.order()
    }

    /// Activates edge `e`; on a cycle returns its edges (in cycle order).
    fn activate(&mut self, e: u32) -> Result<(), Vec<u32>> {
        self.activated
            .push((e, self.order.edge_count(), self.labels.len()));
        let TheoryEdge { from, to, rw, .. } = self.edges[e as usize];
        if !self.si {
            return self.insert(from, to, e, NONE);
        }
        if rw {
            self.rw_out[from as usize].push(e);
            for i in 0..self.dep_in[from as usize].len() {
                let d = self.dep_in[from as usize][i];
                self.insert(self.edges[d as usize].from, to, d, e)?;
            }
        } else {
            self.dep_in[to as usize].push(e);
            self.insert(from, to, e, NONE)?;
            for i in 0..self.rw_out[to as usize].len() {
                let r = self.rw_out[to as usize][i];
                self.insert(from, self.edges[r as usize].to, e, r)?;
            }
        }
        Ok(())
    }

    /// Inserts an order edge labelled by one or two theory edges.
    fn insert(&mut self, from: u32, to: u32, first: u32, second: u32) -> Result<(), Vec<u32>> {
        let label = self.labels.len() as u32;
        match self.order.add_edge(from, to, label) {
            Ok(()) => {
                self.labels.push((first, second));
                Ok(())
            }
            Err(path) => {
                let mut cycle = vec![first];
                if second != NONE {
                    cycle.push(second);
                }
                for l in path {
                    let (a, b) = self.labels[l as usize];
                    cycle.push(a);
                    if b != NONE {
                        cycle.push(b);
                    }
                }
                Err(cycle)
            }
        }
    }

    /// Undoes activations and counts back to the given sizes.
    fn undo_to(&mut self, level: Level) {
        while self.activated.len() > level.activated {
            let (e, order_len, labels_len) = self.activated.pop().expect("activation");
            while self.order.edge_count() > order_len {
                self.order.pop_edge();
            }
            self.labels.truncate(labels_len);
            if self.si {
                let TheoryEdge { from, to, rw, .. } = self.edges[e as usize];
                let list = if rw {
                    &mut self.rw_out[from as usize]
                } else {
                    &mut self.dep_in[to as usize]
                };
                // LIFO: the activated edge is the last entry (or absent when
                // the activation failed before pushing it).
                if list.last() == Some(&e) {
                    list.pop();
                }
            }
        }
        while self.counted.len() > level.counted {
            let e = self.counted.pop().expect("count");
            self.holds[e as usize] -= 1;
        }
        self.processed = level.processed.min(self.processed);
    }

    /// Processes the trail from `processed` on; raises a conflict on a cycle.
    fn process(&mut self, acts: &mut TheoryArg) {
        while self.processed < acts.model().len() {
            let l = acts.model()[self.processed];
            self.processed += 1;
            for i in 0..self.watch[l.idx() as usize].len() {
                let e = self.watch[l.idx() as usize][i];
                self.holds[e as usize] += 1;
                self.counted.push(e);
                if self.holds[e as usize] as usize == self.edges[e as usize].reason.len() {
                    if let Err(cycle) = self.activate(e) {
                        self.conflict(cycle, acts);
                        return;
                    }
                }
            }
        }
    }

    fn conflict(&mut self, cycle: Vec<u32>, acts: &mut TheoryArg) {
        self.conflicts += 1;
        self.clause.clear();
        for &e in &cycle {
            self.clause
                .extend(self.edges[e as usize].reason.iter().map(|&l| !l));
        }
        self.clause.sort_unstable();
        self.clause.dedup();
        self.last_cycle = Some(cycle);
        // Non-empty: a cycle of unconditional edges is caught in `new`.
        acts.raise_conflict(&self.clause, false);
    }
}

impl Theory for AcyclicTheory {
    fn final_check(&mut self, acts: &mut TheoryArg) {
        self.process(acts);
    }

    fn partial_check(&mut self, acts: &mut TheoryArg) {
        self.process(acts);
    }

    fn create_level(&mut self) {
        self.levels.push(Level {
            processed: self.processed,
            counted: self.counted.len(),
            activated: self.activated.len(),
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
