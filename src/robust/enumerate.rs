//! The explicit-state bounded enumerator (digest §9.2): every assignment of
//! descriptors to k slots (ar = slot order: slots are interchangeable, so no
//! permutation is needed), every visibility relation the axioms allow
//! (checked slot by slot, so violations prune early), replayed concretely;
//! a cyclic dependency graph is a witness. Exact within the declared
//! domains; used to cross-check the SAT engine.

use super::exec::{axioms_hold_at, best_cycle, dependencies, replay_one, Execution, Replayed};
use super::interp::Analysis;
use super::syntax::{Axiom, Program};
use std::time::Instant;

/// The answer of a bounded search.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Bounded {
    /// A non-serializable execution with this many instances.
    Violation(Execution),
    /// None with at most k instances.
    None,
    /// The deadline passed.
    Timeout,
}

struct Search<'a> {
    prog: &'a Program,
    an: &'a Analysis,
    axioms: &'a [Axiom],
    k: usize,
    allowed: &'a [bool],
    pins: &'a [Option<usize>],
    deadline: Option<Instant>,
    steps: u64,
    descs: Vec<usize>,
    types: Vec<usize>,
    vis: Vec<u64>,
    reps: Vec<Replayed>,
}

impl Search<'_> {
    /// Depth-first over slots; Some(true) on a witness, None on timeout.
    fn go(&mut self) -> Option<bool> {
        let j = self.descs.len();
        if j == self.k {
            let edges = dependencies(&self.reps);
            return Some(best_cycle(j, &edges).is_some());
        }
        for d in 0..self.an.descs.len() {
            let t = self.an.descs[d].txn;
            if !self.allowed[t] || self.pins.get(j).copied().flatten().is_some_and(|p| p != t) {
                continue;
            }
            for mask in 0..(1u64 << j) {
                self.steps += 1;
                if self.steps.is_multiple_of(256)
                    && self.deadline.is_some_and(|t| Instant::now() >= t)
                {
                    return None;
                }
                let rep = replay_one(self.prog, self.an, &self.an.descs[d], mask, &self.reps);
                if rep.fp.aborts {
                    // Not a committed instance: this is an execution of
                    // fewer, which a smaller k covers.
                    continue;
                }
                self.descs.push(d);
                self.types.push(self.an.descs[d].txn);
                self.vis.push(mask);
                self.reps.push(rep);
                let ok = axioms_hold_at(self.axioms, &self.types, &self.vis, &self.reps, j);
                let r = if ok { self.go() } else { Some(false) };
                if r != Some(false) {
                    return r;
                }
                self.descs.pop();
                self.types.pop();
                self.vis.pop();
                self.reps.pop();
            }
        }
        Some(false)
    }
}

/// Searches executions of exactly `k` instances (an execution with fewer
/// extends to one of k with the same cycle: later instances that see nothing
/// change no earlier read). `pins`: the type of some slots (None: any).
pub fn search_exactly(
    prog: &Program,
    an: &Analysis,
    axioms: &[Axiom],
    k: usize,
    allowed: &[bool],
    pins: &[Option<usize>],
    deadline: Option<Instant>,
) -> Bounded {
    if an.descs.is_empty() || k > 63 {
        return Bounded::None;
    }
    let mut s = Search {
        prog,
        an,
        axioms,
        k,
        allowed,
        pins,
        deadline,
        steps: 0,
        descs: vec![],
        types: vec![],
        vis: vec![],
        reps: vec![],
    };
    match s.go() {
        None => Bounded::Timeout,
        Some(true) => Bounded::Violation(Execution {
            descs: s.descs,
            vis: s.vis,
        }),
        Some(false) => Bounded::None,
    }
}

/// Iterative deepening from 2 to `k`: the first witness is a smallest one.
pub fn search(
    prog: &Program,
    an: &Analysis,
    axioms: &[Axiom],
    k: usize,
    allowed: &[bool],
    deadline: Option<Instant>,
) -> Bounded {
    for kk in 2..=k {
        match search_exactly(prog, an, axioms, kk, allowed, &[], deadline) {
            Bounded::None => {}
            other => return other,
        }
    }
    Bounded::None
}
