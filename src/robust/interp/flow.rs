//! The abstract and concrete readings' control flow: statement lists,
//! maybe-run branches (an IF with an unknown condition, a loop over rows
//! that may not exist), their join, and `ABORT`: a branch that surely
//! aborts once taken is no committed run's, so it is dropped.

use super::{Exec, Local, AV};
use crate::robust::syntax::Stmt;

impl Exec<'_> {
    /// Runs `stmts` on a copy of the locals as maybe-reached, then joins
    /// (nothing changes when they surely abort once reached).
    pub(super) fn run_maybe(&mut self, stmts: &[Stmt]) {
        let before = self.locals.clone();
        if self.maybe_branch(stmts) {
            self.join(&before);
        }
    }

    /// Runs `stmts` as maybe-reached; false when every path through them
    /// reaches `ABORT`: no committed run takes them, so their reads,
    /// writes and case facts are dropped (the state is as before).
    pub(super) fn maybe_branch(&mut self, stmts: &[Stmt]) -> bool {
        let saved = (
            self.locals.clone(),
            self.fp.clone(),
            self.group,
            self.assumed.clone(),
            self.excluded.clone(),
        );
        self.maybe_depth += 1;
        self.run(stmts, true);
        self.maybe_depth -= 1;
        if !std::mem::take(&mut self.halted) {
            return true;
        }
        (
            self.locals,
            self.fp,
            self.group,
            self.assumed,
            self.excluded,
        ) = saved;
        false
    }

    /// Runs a transaction body from the top; the footprint says whether
    /// the run (or, abstractly, the case) surely aborts.
    pub(super) fn run_top(&mut self, stmts: &[Stmt]) {
        self.run(stmts, false);
        self.fp.aborts = self.halted;
    }

    pub(super) fn join(&mut self, other: &[Local]) {
        for (a, b) in self.locals.iter_mut().zip(other) {
            if a != b {
                *a = match (&*a, b) {
                    (Local::Val(_), Local::Val(_)) => Local::Val(AV::Unknown),
                    _ => Local::AnyRows,
                };
            }
        }
    }

    pub(super) fn run(&mut self, stmts: &[Stmt], maybe: bool) {
        for s in stmts {
            if self.halted {
                return;
            }
            self.stmt(s, maybe);
        }
    }

    /// An IF whose condition is unknown: both branches as maybe-run (a
    /// branch that surely aborts is dropped; both: the IF aborts).
    pub(super) fn both_branches(&mut self, then: &[Stmt], els: &[Stmt]) {
        let before = self.locals.clone();
        let then_runs = self.maybe_branch(then);
        let after_then = std::mem::replace(&mut self.locals, before);
        let else_runs = self.maybe_branch(els);
        match (then_runs, else_runs) {
            (true, true) => self.join(&after_then),
            (true, false) => self.locals = after_then,
            (false, true) => {}
            (false, false) => self.halted = true,
        }
    }
}
