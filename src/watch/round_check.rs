//! A round's check, with the collection's plan beside it.
//!
//! The check reads the round's history (built from the retained
//! transactions) and the plan (the fence collector's, or the list-append
//! collector's) reads the same retained transactions in the store; neither
//! changes what the other reads, and the plan does not depend on the
//! check's outcome: only whether it is applied does (not after a round
//! that found an anomaly). So the plan is worked out on a
//! second core while the round's history is built and checked
//! ([`crate::par::beside`]: only when the thread budget has a core free,
//! else after the check, as before), and applied or dropped after. The
//! check then finds the budget spent and runs its own parts in turn, so
//! the process never runs more threads than `ELLERY_THREADS` (or the
//! machine) allows. What is forgotten, and every output, is the same
//! either way: the plan is a function of the store and of the collector's
//! own state, which the check does not touch. Rounds over
//! [`BESIDE_MAX_TXNS`] transactions plan after the check, to bound memory.

use super::{fence_gc, gc, timing, Collector, Watcher};
use crate::error::InputError;
use crate::model::Workload;
use crate::route::{self, CheckOptions, Outcome};

/// The largest round (retained transactions, new ones included) whose
/// collection plan runs beside its check. The plan and the check's
/// history and inference each take memory in proportion to the round, so
/// side by side they raise a round's peak by the plan's share: on the 10M
/// stream of the README, rounds of up to 167k transactions peaked at
/// 256 MB one after the other but at 354 MB side by side. Bigger rounds,
/// the rare ones after collection stalls, run the plan after the check,
/// which keeps the peak under issue 17's 300 MB; most rounds are smaller
/// and keep the second core's gain.
pub(super) const BESIDE_MAX_TXNS: usize = 100_000;

/// A collection worked out beside a round's check, applied after it (or
/// dropped, after a round that found an anomaly).
pub(super) enum Planned {
    /// The fence collector's.
    Fence(fence_gc::Prepared),
    /// The list-append collector's.
    List(gc::Prepared),
}

impl Watcher {
    /// Builds and checks the round's history and, when this round may
    /// collect, prepares that collection beside it (module docs); the
    /// check's outcome, and the prepared collection if any.
    pub(super) fn check_and_plan(&mut self) -> Result<(Outcome, Option<Planned>), InputError> {
        let collects = matches!(self.collector, Collector::Fence(_) | Collector::List(_));
        let speculate = !self.flagged && collects;
        if !speculate {
            return Ok((self.check_round()?, None));
        }
        if self.store.txns.len() > self.plan_beside_max_txns {
            // Too big to hold both at once (`BESIDE_MAX_TXNS`): the plan
            // follows in `collect`, after the check's memory is freed.
            return Ok((self.check_round()?, None));
        }
        // Out of `self` while the helper thread works on it, so that the
        // check may borrow the rest of the watcher.
        let mut collector = std::mem::replace(&mut self.collector, Collector::Undecided);
        let now = self.next_pos;
        let t0 = std::time::Instant::now();
        let (checked, prepared) = {
            let this = &*self;
            let plan = || match &mut collector {
                Collector::Fence(g) => {
                    g.now = now;
                    Some(Planned::Fence(g.prepare(&this.store)))
                }
                Collector::List(g) => {
                    g.now = now;
                    Some(Planned::List(g.prepare(&this.store)))
                }
                _ => None,
            };
            // Without a free core the plan runs after the check, and not
            // at all when the check failed (the round ends in an error).
            crate::par::beside(|| this.check_round(), plan, |c| c.is_ok())
        };
        self.collector = collector;
        timing("check and plan", t0);
        Ok((checked?, prepared.flatten()))
    }

    /// Builds the round's history and checks it.
    fn check_round(&self) -> Result<Outcome, InputError> {
        let workload = self.workload.unwrap_or(Workload::ListAppend);
        let (h, lines) = self.retained_history()?;
        let mut opts = CheckOptions {
            workload: Some(workload),
            rw: self.opts.rw,
            ..self.opts.check.clone()
        };
        if std::env::var_os("ELLERY_WATCH_TIMING").is_some() {
            // Which confirmation each round's check needed (a round that
            // falls back to the SAT checker is the round with the peak).
            opts.trace = Some(|line| eprintln!("ellery: timing: check: {line}"));
        }
        let t0 = std::time::Instant::now();
        let outcome = route::check(&h, &opts);
        timing("check", t0);
        drop(h);
        outcome.map_err(|e| {
            let text = e.to_string();
            match e.into_input() {
                Some(e) => self.unrender(e, &lines),
                // Usage errors name no op: they are the options', whatever
                // the history.
                None => InputError {
                    kind: Default::default(),
                    file: self.opts.origin.clone(),
                    line: 0,
                    column: 0,
                    message: text,
                },
            }
        })
    }
}
