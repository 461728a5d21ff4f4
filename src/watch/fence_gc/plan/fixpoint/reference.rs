//! The fixpoint by full passes (test only): the oracle the worklist
//! fixpoint must equal, transaction for transaction and base for base
//! (`FenceGc::collect` compares them in every test build). It keeps the
//! rules' original code, base and covered keys included, which the
//! worklist decides on its own tables (`decide.rs`).

use super::super::Plan;
use crate::model::Atom;
use crate::watch::fence_gc::FenceGc;
use hashbrown::HashMap;

impl Plan {
    /// [`Plan::fixpoint`] as full passes of every rule over every
    /// transaction, read and key (the implementation before the worklist).
    pub(in crate::watch::fence_gc) fn fixpoint_by_full_passes(
        &self,
        gc: &FenceGc,
    ) -> (Vec<bool>, HashMap<Atom, Vec<usize>>) {
        // Long (about 150 lines): the fixpoint's rules each shrink the same
        // candidate set and must be re-run together until none applies.
        let idle = |k: Atom| !gc.touched.contains_key(&k);
        let cover = gc.cover && !gc.realtime;
        let n = self.starts.len();
        let mut c = self.eligible.clone();
        // Why transactions left `F`, by rule (for `ELLERY_WATCH_TIMING`).
        loop {
            let mut changed = false;
            let mut out = |c: &mut Vec<bool>, i: usize, _rule: usize| {
                if c[i] {
                    c[i] = false;
                    changed = true;
                }
            };
            // (b) process prefixes (failed transactions are gone already).
            for seq in &self.seqs {
                let mut blocked = false;
                for &i in seq {
                    if blocked {
                        out(&mut c, i, 0);
                    }
                    blocked |= !c[i];
                }
            }
            // (b) real time.
            if gc.realtime {
                let first_end_outside = (0..n)
                    .filter(|&i| !c[i] && self.ok[i])
                    .filter_map(|i| self.span[i].1)
                    .min()
                    .unwrap_or(u64::MAX);
                for i in 0..n {
                    if self.span[i].0 > first_end_outside {
                        out(&mut c, i, 1);
                    }
                }
            }
            // (c) what members read.
            for &(r, k, v) in &self.old.reads {
                if !c[r] {
                    continue;
                }
                if let Some(v) = v {
                    match self.old.writer.get(&(k, v)) {
                        Some(&w) if c[w] => {}
                        _ => out(&mut c, r, 2),
                    }
                }
            }
            // (d) a base per key; (e) nil readers outside.
            let c_at_bases = c.clone();
            let mut bases: HashMap<Atom, Vec<usize>> = HashMap::new();
            let mut keys: Vec<&Atom> = self.old.key_writers.keys().collect();
            keys.sort_unstable();
            for k in keys {
                let (ws, nil_writer) = &self.old.key_writers[k];
                let cw: Vec<usize> = ws
                    .iter()
                    .copied()
                    .filter(|&w| c[w] && !self.set_aside(w))
                    .collect();
                if cw.is_empty() {
                    continue;
                }
                let nil_outside = self
                    .old
                    .nil_readers
                    .get(k)
                    .is_some_and(|rs| rs.iter().any(|&r| !c[r]));
                if *nil_writer || nil_outside {
                    cw.iter().for_each(|&w| out(&mut c, w, 3));
                    continue;
                }
                let mut nw: Vec<usize> = ws
                    .iter()
                    .copied()
                    .filter(|&w| !c[w] && self.live[w] && !self.set_aside(w))
                    .collect();
                if cover && self.covered(&cw, &nw, *k, &c) {
                    bases.insert(*k, Vec::new());
                    continue;
                }
                let mut cw = cw;
                // When no writer can be the base, the latest leaves `F` (it
                // is the most likely to be unordered with what stays) and
                // the others try again: one key's frontier does not drag its
                // whole past out of `F`.
                while let Some(&last) = cw.last() {
                    match self.base_of(&cw, &nw, *k, &c, idle(*k)) {
                        Some((m, later)) => {
                            later.into_iter().for_each(|w| out(&mut c, w, 4));
                            bases.insert(*k, m);
                            break;
                        }
                        None => {
                            out(&mut c, last, 4);
                            cw.pop();
                            nw.push(last);
                            // The writer that stays may cover the others
                            // (Cobra keeps a key's last writers and deletes
                            // the writers they overwrite).
                            if cover && !cw.is_empty() && self.covered(&cw, &nw, *k, &c) {
                                bases.insert(*k, Vec::new());
                                break;
                            }
                        }
                    }
                }
            }
            // (e) readers outside of non-base values.
            let mut again = false;
            for &(r, k, v) in &self.old.reads {
                if c[r] {
                    continue;
                }
                if c_at_bases[r] {
                    // `r` left `F` after the bases were chosen: choose
                    // again (a writer `r` read from may become the base).
                    again = true;
                    continue;
                }
                if let Some(&w) = v.and_then(|v| self.old.writer.get(&(k, v))) {
                    let base_value = bases
                        .get(&k)
                        .filter(|m| m[..] == [w])
                        .and_then(|_| self.old.last_write.get(&(w, k)));
                    if c[w] && base_value != v.as_ref() {
                        out(&mut c, w, 5);
                    }
                }
            }
            if !changed && !again {
                return (c, bases);
            }
        }
    }

    /// Whether `a`'s write of `k` precedes `b`'s in every serialization
    /// that respects reach: `a ~> b`; or `a ~> R` for a reader `R` of
    /// `b`'s value (`a` before `R`, and no write between `b` and `R`); or
    /// `R ~> b` for a reader `R` of `a`'s value (Cobra's pruning of a
    /// constraint whose one side reach already rules out).
    fn before(&self, a: usize, b: usize, k: Atom) -> bool {
        if self.reach_wr(a, b) {
            return true;
        }
        let readers = |t: usize| {
            self.old
                .last_write
                .get(&(t, k))
                .and_then(|v| self.old.readers.get(&(k, *v)))
                .into_iter()
                .flatten()
                .copied()
        };
        readers(b).any(|r| r != a && r != b && self.reach_wr(a, r))
            || readers(a).any(|r| r != a && r != b && self.reach_wr(r, b))
    }

    /// A base for key `k` among its writers `cw` in `F` (start order),
    /// given its writers `nw` outside: the latest `m` whose write precedes
    /// every write outside, and the writers of `cw` that must then leave
    /// `F` (those not known to precede `m`, which `m` precedes).
    fn base_of(
        &self,
        cw: &[usize],
        nw: &[usize],
        k: Atom,
        c: &[bool],
        idle: bool,
    ) -> Option<(Vec<usize>, Vec<usize>)> {
        // A writer whose value a transaction outside `F` read must be the
        // base (or stay): try those first.
        let read_outside: Vec<usize> = cw
            .iter()
            .rev()
            .copied()
            .filter(|&w| {
                self.old
                    .last_write
                    .get(&(w, k))
                    .and_then(|v| self.old.readers.get(&(k, *v)))
                    .is_some_and(|rs| rs.iter().any(|&r| !c[r]))
            })
            .collect();
        let order: Vec<usize> = if read_outside.is_empty() {
            cw.iter().rev().copied().collect()
        } else {
            read_outside
        };
        // A base that makes no writer leave `F`; else a loose one; else one
        // that sends later, unordered writers out.
        if let Some(b) = self.single_base(&order, cw, nw, k, false) {
            return Some(b);
        }
        // A loose base: the writers no other writer in `F` follows, pairwise
        // unordered, each after every other writer in `F` and before every
        // writer outside, and read by nobody outside (a later read shows
        // which is last, and the whole history decides: `admit`). Only on
        // an idle key (the `ok` below needs `idle`): the search for the
        // block is quadratic in the key's writers, and on active keys it
        // would always be thrown away.
        if !idle {
            return self.single_base(&order, cw, nw, k, true);
        }
        // Later writers are the likelier to follow `w`: look at them first.
        let mut top: Vec<usize> = cw
            .iter()
            .copied()
            .filter(|&w| !cw.iter().rev().any(|&x| x != w && self.before(w, x, k)))
            .collect();
        // Close it: a writer not known to precede every member may be last
        // too.
        loop {
            let more: Vec<usize> = cw
                .iter()
                .copied()
                .filter(|w| !top.contains(w))
                .filter(|&w| !top.iter().all(|&t| self.before(w, t, k)))
                .collect();
            if more.is_empty() {
                break;
            }
            top.extend(more);
        }
        let ok = top.len() > 1
            && idle
            && top.iter().all(|&t| self.ok[t])
            && cw
                .iter()
                .filter(|w| !top.contains(w))
                .all(|&w| top.iter().all(|&t| self.before(w, t, k)))
            && top
                .iter()
                .all(|&t| nw.iter().all(|&x| self.before(t, x, k)))
            && !top.iter().any(|&t| {
                self.old
                    .last_write
                    .get(&(t, k))
                    .and_then(|v| self.old.readers.get(&(k, *v)))
                    .is_some_and(|rs| rs.iter().any(|&r| !c[r]))
            });
        if ok {
            return Some((top, Vec::new()));
        }
        self.single_base(&order, cw, nw, k, true)
    }

    /// The first `m` of `order` whose write precedes every write outside
    /// and that every other writer in `F` precedes, except the returned
    /// ones (`allow_later`), which `m` precedes and which must leave `F`.
    fn single_base(
        &self,
        order: &[usize],
        cw: &[usize],
        nw: &[usize],
        k: Atom,
        allow_later: bool,
    ) -> Option<(Vec<usize>, Vec<usize>)> {
        for &m in order {
            // A crashed writer reaches nothing by real time: no base.
            if !self.ok[m] || !nw.iter().all(|&x| self.before(m, x, k)) {
                continue;
            }
            if !allow_later {
                // Only whether some writer is not known to precede `m`:
                // stop at the first (later writers are the likelier).
                if cw.iter().rev().any(|&w| w != m && !self.before(w, m, k)) {
                    continue;
                }
                return Some((vec![m], Vec::new()));
            }
            let later: Vec<usize> = cw
                .iter()
                .copied()
                .filter(|&w| w != m && !self.before(w, m, k))
                .collect();
            if later.iter().all(|&x| self.before(m, x, k)) {
                return Some((vec![m], later));
            }
        }
        None
    }

    /// Whether key `k` is *covered* (parent module docs): nobody outside
    /// `F` reads a value a writer in `F` (`cw`) wrote, and each of them
    /// precedes some frozen `:ok` writer of `k` that stays (`nw`). Then the
    /// state `F` leaves in `k` is never read by what stays, and a future
    /// read of it is stale. (`nil` readers outside were ruled out before.)
    fn covered(&self, cw: &[usize], nw: &[usize], k: Atom, c: &[bool]) -> bool {
        let frozen = || {
            nw.iter()
                .rev()
                .copied()
                .filter(|&s| self.eligible[s] && self.ok[s])
        };
        if frozen().next().is_none() {
            return false;
        }
        // Only the last value each writer wrote is indexed: a writer that
        // wrote `k` twice (an intermediate value) is not covered.
        let read_outside = cw.iter().any(|&w| {
            self.old.rewrote.contains(&(w, k))
                || self
                    .old
                    .last_write
                    .get(&(w, k))
                    .and_then(|v| self.old.readers.get(&(k, *v)))
                    .is_some_and(|rs| rs.iter().any(|&r| !c[r]))
        });
        // The latest writers are the likeliest to fail: try them first.
        !read_outside
            && cw
                .iter()
                .rev()
                .all(|&w| frozen().any(|s| self.before(w, s, k)))
    }
}
