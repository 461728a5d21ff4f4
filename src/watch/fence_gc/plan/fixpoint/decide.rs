//! Rule (d), a key's base, decided on dense per-key tables with what
//! earlier decisions of the same key learned kept between passes.
//!
//! The worklist decides a key again whenever one of its writers or readers
//! leaves `F`; on hot keys that is nearly every pass, and each decision
//! asked "does `a`'s write precede `b`'s" for most pairs of the key's
//! writers again (each question several hash lookups). The answer to that
//! question never changes within a collection, and `F` only shrinks: a
//! member may leave, and a writer outside never comes back. So each of the
//! following, once learned, stays true for the rest of the fixpoint, and
//! is kept per writer rather than asked again:
//!
//! * a writer `m` does not precede every writer outside (`nw` only grows);
//!   the writers outside it was compared with so far (a log per key);
//! * a writer of `F` precedes some frozen writer outside (covered keys);
//!   the frozen writers it was compared with so far;
//! * going down the key's writers from the latest, the writers above a
//!   position that are no longer members, or that precede `m` (for the
//!   single base), or that are ordered with `m` either way (for a base
//!   that sends later writers out), or that `m` does not precede (for the
//!   writers no other follows, on idle keys): a pointer per writer and
//!   question that moves down only past such writers, and stays at the
//!   first one that answers it until that one leaves `F`.
//!
//! Each decision is the same function of membership as the full passes'
//! (`reference.rs`, which keeps the original code and which every test
//! build compares with); only the order in which it asks may differ, and
//! each answer is a plain `all`/`any` whose value does not depend on it.

use super::super::Plan;
use super::Candidates;
use crate::model::Atom;
use crate::watch::fence_gc::FenceGc;

/// Every key's writers ("slots": key `ki`'s are `off[ki]..off[ki + 1]`, in
/// start order, as `Plan::key_writers`), their static facts, and what the
/// decisions learned so far (module docs).
pub(super) struct Keys {
    off: Vec<u32>,
    /// Each slot's writer (transaction index).
    tx: Vec<usize>,
    /// Whether the key has a `nil` writer.
    nil_writer: Vec<bool>,
    /// The last value slot `s`'s writer wrote to the key (an index into
    /// `Plan::value_readers`; `NONE`: only `nil` or lists).
    value: Vec<u32>,
    /// The writer wrote the key more than once.
    rewrote: Vec<bool>,
    /// Slots already in `out_log`.
    logged: Vec<bool>,
    /// Per key, the slots outside `F` (live, not set aside) in the order
    /// seen: `off[ki]..off[ki] + out_len[ki]`. Frozen ones again in
    /// `frozen_log`.
    out_log: Vec<u32>,
    out_len: Vec<u32>,
    frozen_log: Vec<u32>,
    frozen_len: Vec<u32>,
    /// How much of `out_log` a slot was compared with (all preceded), and
    /// whether one was not preceded.
    out_seen: Vec<u32>,
    out_bad: Vec<bool>,
    /// Whether a slot precedes some frozen slot outside, and how much of
    /// `frozen_log` it was compared with.
    witness: Vec<bool>,
    frozen_seen: Vec<u32>,
    /// Downward pointers (one past the next slot to look at), one per
    /// [`Scan`], and whether the slot below each answered it (it is then
    /// asked again only once it left `F`).
    ptr: [Vec<u32>; 3],
    found: [Vec<bool>; 3],
}

/// What a downward pointer looks for: a member `s` other than `m` with...
#[derive(Clone, Copy)]
enum Scan {
    /// `s` not known to precede `m` (no single base at `m`).
    Blocker = 0,
    /// `s` and `m` not known to be ordered either way (no base at `m`
    /// that sends later writers out).
    Unordered = 1,
    /// `m` preceding `s` (`m` is not among the latest writers).
    Follower = 2,
}

impl Plan {
    /// The dense tables of `kids` (keys' indices in the plan, in the
    /// fixpoint's order).
    pub(super) fn keys_view(&self, kids: &[u32]) -> Keys {
        let slots = |kid: u32| &self.key_writers[kid as usize][..];
        let total: usize = kids.iter().map(|&kid| slots(kid).len()).sum();
        let mut v = Keys {
            off: Vec::with_capacity(kids.len() + 1),
            tx: Vec::with_capacity(total),
            nil_writer: Vec::with_capacity(kids.len()),
            value: Vec::with_capacity(total),
            rewrote: Vec::with_capacity(total),
            logged: vec![false; total],
            out_log: vec![0; total],
            out_len: vec![0; kids.len()],
            frozen_log: vec![0; total],
            frozen_len: vec![0; kids.len()],
            out_seen: vec![0; total],
            out_bad: vec![false; total],
            witness: vec![false; total],
            frozen_seen: vec![0; total],
            ptr: std::array::from_fn(|_| Vec::with_capacity(total)),
            found: std::array::from_fn(|_| vec![false; total]),
        };
        for &kid in kids {
            v.off.push(v.tx.len() as u32);
            v.nil_writer.push(self.nil_writer[kid as usize]);
            let hi = (v.tx.len() + slots(kid).len()) as u32;
            for w in slots(kid) {
                v.tx.push(w.tx);
                v.value.push(w.value);
                v.rewrote.push(w.rewrote);
                v.ptr.iter_mut().for_each(|p| p.push(hi));
            }
        }
        v.off.push(v.tx.len() as u32);
        v
    }

    /// The `:ok` readers of slot `s`'s value (read in place: `of` gives
    /// none for `NONE`).
    fn slot_readers<'a>(&'a self, v: &Keys, s: u32) -> &'a [u32] {
        self.value_readers.of(v.value[s as usize])
    }

    /// Whether slot `a`'s write precedes slot `b`'s (same key): `before`
    /// of the full passes, on the slots' tables.
    fn slot_before(&self, v: &Keys, a: u32, b: u32) -> bool {
        let (ta, tb) = (v.tx[a as usize], v.tx[b as usize]);
        self.reach_wr(ta, tb)
            || (self.slot_readers(v, b).iter().map(|&r| r as usize))
                .any(|r| r != ta && r != tb && self.reach_wr(ta, r))
            || (self.slot_readers(v, a).iter().map(|&r| r as usize))
                .any(|r| r != ta && r != tb && self.reach_wr(r, tb))
    }

    /// Whether some reader outside `F` read slot `s`'s value.
    fn read_outside(&self, v: &Keys, s: u32, c: &[bool]) -> bool {
        self.slot_readers(v, s).iter().any(|&r| !c[r as usize])
    }

    /// Logs slot `s` as outside `F`.
    fn log_out(&self, v: &mut Keys, ki: usize, s: u32) {
        let lo = v.off[ki] as usize;
        v.logged[s as usize] = true;
        v.out_log[lo + v.out_len[ki] as usize] = s;
        v.out_len[ki] += 1;
        let t = v.tx[s as usize];
        if self.eligible[t] && self.ok[t] {
            v.frozen_log[lo + v.frozen_len[ki] as usize] = s;
            v.frozen_len[ki] += 1;
        }
    }

    /// Whether slot `m` precedes every writer outside `F` (`nw`).
    fn precedes_outside(&self, v: &mut Keys, ki: usize, m: u32) -> bool {
        let lo = v.off[ki] as usize;
        let m_ = m as usize;
        while !v.out_bad[m_] && v.out_seen[m_] < v.out_len[ki] {
            let x = v.out_log[lo + v.out_seen[m_] as usize];
            v.out_seen[m_] += 1;
            v.out_bad[m_] = !self.slot_before(v, m, x);
        }
        !v.out_bad[m_]
    }

    /// Whether some member other than `m` answers `q` (module docs),
    /// looking down from `m`'s pointer for `q`.
    fn scan(&self, v: &mut Keys, ki: usize, m: u32, c: &[bool], q: Scan) -> bool {
        let lo = v.off[ki];
        let (m_, q_) = (m as usize, q as usize);
        loop {
            let at = v.ptr[q_][m_];
            if at <= lo {
                return false;
            }
            let s = at - 1;
            let t = v.tx[s as usize];
            let member = c[t] && !self.set_aside(t);
            if member && v.found[q_][m_] {
                return true;
            }
            v.found[q_][m_] = s != m
                && member
                && match q {
                    Scan::Blocker => !self.slot_before(v, s, m),
                    Scan::Unordered => !self.slot_before(v, s, m) && !self.slot_before(v, m, s),
                    Scan::Follower => self.slot_before(v, m, s),
                };
            if v.found[q_][m_] {
                return true;
            }
            v.ptr[q_][m_] = s;
        }
    }

    /// (d) for key `keys[ki]`: its base (empty: covered), or `None` when
    /// no writer of it is in `F` or all of them had to leave (the full
    /// passes' decision, module docs).
    pub(super) fn decide(
        &self,
        gc: &FenceGc,
        (k, kid): (Atom, u32),
        ki: usize,
        v: &mut Keys,
        cs: &mut Candidates,
    ) -> Option<Vec<usize>> {
        let cover = gc.cover && !gc.realtime;
        let idle = !gc.touched.contains_key(&k);
        let (lo, hi) = (v.off[ki], v.off[ki + 1]);
        let mut cw: Vec<u32> = (lo..hi)
            .filter(|&s| {
                let t = v.tx[s as usize];
                cs.c[t] && !self.set_aside(t)
            })
            .collect();
        if cw.is_empty() {
            return None;
        }
        // (e) a reader outside of the key's state before `F`.
        let nil_outside = (self.nil_readers.of(kid).iter()).any(|&r| !cs.c[r as usize]);
        if v.nil_writer[ki] || nil_outside {
            cw.iter().for_each(|&s| cs.out(v.tx[s as usize], 3));
            return None;
        }
        for s in lo..hi {
            let t = v.tx[s as usize];
            if !v.logged[s as usize] && !cs.c[t] && self.live[t] && !self.set_aside(t) {
                self.log_out(v, ki, s);
            }
        }
        if cover && self.covered_slots(v, ki, &cw, &cs.c) {
            return Some(Vec::new());
        }
        // When no writer can be the base, the latest leaves `F` (it is the
        // most likely to be unordered with what stays) and the others try
        // again: one key's frontier does not drag its whole past out of `F`.
        while let Some(&last) = cw.last() {
            match self.base_of_slots(v, ki, &cw, &cs.c, idle) {
                Some((m, later)) => {
                    later.into_iter().for_each(|s| cs.out(v.tx[s as usize], 4));
                    return Some(m.into_iter().map(|s| v.tx[s as usize]).collect());
                }
                None => {
                    cs.out(v.tx[last as usize], 4);
                    cw.pop();
                    self.log_out(v, ki, last);
                    // The writer that stays may cover the others (Cobra keeps
                    // a key's last writers and deletes the writers they
                    // overwrite).
                    if cover && !cw.is_empty() && self.covered_slots(v, ki, &cw, &cs.c) {
                        return Some(Vec::new());
                    }
                }
            }
        }
        None
    }

    /// Whether the key is covered (parent modules' docs): nobody outside
    /// `F` read what a member (`cw`) wrote, which each precede some frozen
    /// `:ok` writer outside.
    fn covered_slots(&self, v: &mut Keys, ki: usize, cw: &[u32], c: &[bool]) -> bool {
        if v.frozen_len[ki] == 0 {
            return false;
        }
        // Only the last value each writer wrote is indexed: a writer that
        // wrote the key twice (an intermediate value) is not covered.
        if (cw.iter()).any(|&s| v.rewrote[s as usize] || self.read_outside(v, s, c)) {
            return false;
        }
        let lo = v.off[ki] as usize;
        // The latest writers are the likeliest to fail: try them first.
        for &w in cw.iter().rev() {
            let w_ = w as usize;
            while !v.witness[w_] && v.frozen_seen[w_] < v.frozen_len[ki] {
                let s = v.frozen_log[lo + v.frozen_seen[w_] as usize];
                v.frozen_seen[w_] += 1;
                v.witness[w_] = self.slot_before(v, w, s);
            }
            if !v.witness[w_] {
                return false;
            }
        }
        true
    }

    /// A base for the key among its members `cw` (slots, start order): the
    /// latest `m` whose write precedes every write outside, and the members
    /// that must then leave `F` (those not known to precede `m`, which `m`
    /// precedes); or a loose base on an idle key (parent modules' docs).
    fn base_of_slots(
        &self,
        v: &mut Keys,
        ki: usize,
        cw: &[u32],
        c: &[bool],
        idle: bool,
    ) -> Option<(Vec<u32>, Vec<u32>)> {
        // A writer whose value a transaction outside `F` read must be the
        // base (or stay): try those first.
        let read_outside: Vec<u32> = (cw.iter().rev().copied())
            .filter(|&s| self.read_outside(v, s, c))
            .collect();
        let order: Vec<u32> = if read_outside.is_empty() {
            cw.iter().rev().copied().collect()
        } else {
            read_outside
        };
        // A base that makes no writer leave `F`; else a loose one (only on
        // an idle key: the search is quadratic in the key's writers); else
        // one that sends later, unordered writers out.
        if let Some(b) = self.single_base_slots(v, ki, &order, cw, c, false) {
            return Some(b);
        }
        if !idle {
            return self.single_base_slots(v, ki, &order, cw, c, true);
        }
        if let Some(top) = self.loose_base(v, ki, cw, c) {
            return Some((top, Vec::new()));
        }
        self.single_base_slots(v, ki, &order, cw, c, true)
    }

    /// The loose base of an idle key: the members no other member follows,
    /// closed under "may be last too", when they are several, all `:ok`,
    /// every other member precedes each, each precedes every writer
    /// outside, and nobody outside read them. Quadratic, as the full
    /// passes' (idle keys have few writers).
    fn loose_base(&self, v: &mut Keys, ki: usize, cw: &[u32], c: &[bool]) -> Option<Vec<u32>> {
        // Later writers are the likelier to follow `w`: look at them first.
        let mut top: Vec<u32> = Vec::new();
        for &w in cw {
            if !self.scan(v, ki, w, c, Scan::Follower) {
                top.push(w);
            }
        }
        // Close it: a writer not known to precede every member may be last
        // too.
        loop {
            let more: Vec<u32> = (cw.iter().copied())
                .filter(|w| !top.contains(w))
                .filter(|&w| !top.iter().all(|&t| self.slot_before(v, w, t)))
                .collect();
            if more.is_empty() {
                break;
            }
            top.extend(more);
        }
        let ok = top.len() > 1
            && top.iter().all(|&t| self.ok[v.tx[t as usize]])
            && (cw.iter())
                .filter(|w| !top.contains(w))
                .all(|&w| top.iter().all(|&t| self.slot_before(v, w, t)))
            && top.iter().all(|&t| self.precedes_outside(v, ki, t))
            && !top.iter().any(|&t| self.read_outside(v, t, c));
        ok.then_some(top)
    }

    /// The first `m` of `order` that precedes every write outside and that
    /// every other member precedes, except the returned ones
    /// (`allow_later`), which `m` precedes and which must leave `F`.
    fn single_base_slots(
        &self,
        v: &mut Keys,
        ki: usize,
        order: &[u32],
        cw: &[u32],
        c: &[bool],
        allow_later: bool,
    ) -> Option<(Vec<u32>, Vec<u32>)> {
        for &m in order {
            // A crashed writer reaches nothing by real time: no base.
            if !self.ok[v.tx[m as usize]] || !self.precedes_outside(v, ki, m) {
                continue;
            }
            let q = if allow_later {
                Scan::Unordered
            } else {
                Scan::Blocker
            };
            if self.scan(v, ki, m, c, q) {
                continue;
            }
            let later = if allow_later {
                (cw.iter().copied())
                    .filter(|&w| w != m && !self.slot_before(v, w, m))
                    .collect()
            } else {
                Vec::new()
            };
            return Some((vec![m], later));
        }
        None
    }
}
