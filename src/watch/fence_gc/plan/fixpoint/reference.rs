//! The fixpoint by full passes (test only): the oracle the worklist
//! fixpoint must equal, transaction for transaction and base for base
//! (`FenceGc::collect` compares them in every test build).

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
            for &(r, k, v) in &self.reads {
                if !c[r] {
                    continue;
                }
                if let Some(v) = v {
                    match self.writer.get(&(k, v)) {
                        Some(&w) if c[w] => {}
                        _ => out(&mut c, r, 2),
                    }
                }
            }
            // (d) a base per key; (e) nil readers outside.
            let c_at_bases = c.clone();
            let mut bases: HashMap<Atom, Vec<usize>> = HashMap::new();
            let mut keys: Vec<&Atom> = self.key_writers.keys().collect();
            keys.sort_unstable();
            for k in keys {
                let (ws, nil_writer) = &self.key_writers[k];
                let cw: Vec<usize> = ws
                    .iter()
                    .copied()
                    .filter(|&w| c[w] && !self.set_aside(w))
                    .collect();
                if cw.is_empty() {
                    continue;
                }
                let nil_outside = self
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
            for &(r, k, v) in &self.reads {
                if c[r] {
                    continue;
                }
                if c_at_bases[r] {
                    // `r` left `F` after the bases were chosen: choose
                    // again (a writer `r` read from may become the base).
                    again = true;
                    continue;
                }
                if let Some(&w) = v.and_then(|v| self.writer.get(&(k, v))) {
                    let base_value = bases
                        .get(&k)
                        .filter(|m| m[..] == [w])
                        .and_then(|_| self.last_write.get(&(w, k)));
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
}
