//! The fixpoint that finds `F` (parent modules' docs, rules (a)–(e)),
//! driven by what left `F`: each transaction that leaves is logged once,
//! and each rule looks only at what can have changed since it last looked
//! — a leaver's process successors (b) and readers (c), the keys it writes
//! or reads (d), its reads and the reads of keys decided anew (e) — instead
//! of every transaction, read and key on every pass. Streams whose
//! collection frees little in a round needed hundreds of passes, which made
//! collection quadratic in what is retained.
//!
//! Each pass finds exactly what a full pass of the same rules, in the same
//! order, finds (so `F` is the same): (b) and (e) do not depend on the
//! order they look in; (c) visits its reads in index order (a heap), as
//! the full scan does, so a reader that leaves affects the later reads of
//! this pass and the earlier ones in the next; a key's (d) decision depends
//! only on its writers' and readers' membership.

mod decide;
#[cfg(test)]
mod reference;

use super::Plan;
use crate::graph::{grouped, Grouped};
use crate::model::Atom;
use crate::watch::fence_gc::FenceGc;
use hashbrown::HashMap;

/// Why transactions left `F`, by rule (for `ELLERY_WATCH_TIMING`).
const RULES: [&str; 6] = [
    "prefix",
    "real time",
    "reads",
    "nil",
    "base",
    "non-base readers",
];

/// The candidate set while the rules shrink it.
struct Candidates<'a> {
    ix: &'a Index,
    /// While (c) scans: the read it is at, and the reads still to visit in
    /// this scan (index order).
    scan: Option<(u32, std::collections::BinaryHeap<std::cmp::Reverse<u32>>)>,
    /// The reads (c) visits in its next scan.
    next_scan: Vec<u32>,
    /// Membership.
    c: Vec<bool>,
    /// The transactions that left, in order.
    log: Vec<usize>,
    /// Each transaction's place in `log` (`u32::MAX`: a member).
    left_at: Vec<u32>,
    /// Keys (indices into the sorted keys) whose (d) decision one of their
    /// writers or readers leaving may change.
    dirty: Vec<bool>,
    why: [usize; 6],
}

impl Candidates<'_> {
    fn out(&mut self, i: usize, rule: usize) {
        if self.c[i] {
            self.c[i] = false;
            self.left_at[i] = self.log.len() as u32;
            self.log.push(i);
            self.why[rule] += 1;
            for &k in self.ix.touches.of(i as u32) {
                self.dirty[k as usize] = true;
            }
            // Its readers: (c) looks at them later in this scan if the
            // scan has not passed them yet, else in the next.
            for &j in self.ix.read_from_writer.of(i as u32) {
                match &mut self.scan {
                    Some((at, heap)) if j > *at => heap.push(std::cmp::Reverse(j)),
                    _ => self.next_scan.push(j),
                }
            }
        }
    }
}

/// What the rules look up by transaction, read and key (the lists in
/// compressed rows: one allocation each, not one per transaction).
struct Index {
    /// Each transaction's successor in its process.
    next: Vec<Option<usize>>,
    /// The reads (indices into `Plan::reads`) of each writer's values.
    read_from_writer: Grouped,
    /// The reads each transaction made.
    reads_by: Grouped,
    /// The keys each transaction writes or reads.
    touches: Grouped,
}

/// The written keys in the order the fixpoint decides them (their atoms'
/// order, as the full passes'), and where each key of the plan falls in it.
pub(super) struct KeyOrder {
    /// The keys' atoms, sorted.
    pub(super) atoms: Vec<Atom>,
    /// Each one's index in `Plan::keys`.
    pub(super) kids: Vec<u32>,
    /// For each of `Plan::keys`, its place in `atoms` (`u32::MAX`: never
    /// written).
    pub(super) place: Vec<u32>,
}

impl Plan {
    fn key_order(&self) -> KeyOrder {
        let mut kids: Vec<u32> = (0..self.keys.len() as u32)
            .filter(|&kid| !self.key_writers[kid as usize].is_empty())
            .collect();
        kids.sort_unstable_by_key(|&kid| self.keys[kid as usize]);
        let mut place = vec![u32::MAX; self.keys.len()];
        for (ki, &kid) in kids.iter().enumerate() {
            place[kid as usize] = ki as u32;
        }
        KeyOrder {
            atoms: kids.iter().map(|&kid| self.keys[kid as usize]).collect(),
            kids,
            place,
        }
    }

    fn index(&self, keys: &KeyOrder) -> Index {
        let n = self.starts.len();
        let mut next = vec![None; n];
        for seq in &self.seqs {
            for w in seq.windows(2) {
                next[w[0]] = Some(w[1]);
            }
        }
        let reads = || self.reads.iter().zip(&self.read_from).enumerate();
        let written = (keys.kids.iter().enumerate()).flat_map(|(ki, &kid)| {
            (self.key_writers[kid as usize].iter()).map(move |w| (w.tx as u32, ki as u32))
        });
        let read = (self.read_key.iter().enumerate())
            .map(|(j, &kid)| (self.reads[j] as u32, keys.place[kid as usize]))
            .filter(|&(_, ki)| ki != u32::MAX);
        Index {
            next,
            read_from_writer: grouped(
                n,
                reads().filter_map(|(j, (_, w))| Some(((*w)? as u32, j as u32))),
            ),
            reads_by: grouped(n, reads().map(|(j, (&r, _))| (r as u32, j as u32))),
            touches: grouped(n, written.chain(read)),
        }
    }

    /// The largest `F` (membership per index) and each collected key's
    /// base writer.
    pub(in crate::watch::fence_gc) fn fixpoint(
        &self,
        gc: &FenceGc,
    ) -> (Vec<bool>, HashMap<Atom, Vec<usize>>) {
        let n = self.starts.len();
        let order = self.key_order();
        let keys = &order.atoms[..];
        let t0 = std::time::Instant::now();
        let ix = self.index(&order);
        crate::watch::timing("fixpoint: index", t0);
        let t0 = std::time::Instant::now();
        let mut kv = self.keys_view(&order.kids);
        crate::watch::timing("fixpoint: keys view", t0);
        let mut cs = Candidates {
            ix: &ix,
            scan: None,
            // The first scan visits every read of a value.
            next_scan: (self.read_value.iter().enumerate())
                .filter(|(_, &vid)| vid != super::NONE)
                .map(|(j, _)| j as u32)
                .collect(),
            c: self.eligible.clone(),
            log: Vec::new(),
            left_at: vec![u32::MAX; n],
            dirty: vec![true; keys.len()],
            why: [0; 6],
        };
        for i in 0..n {
            if !cs.c[i] {
                cs.left_at[i] = cs.log.len() as u32;
                cs.log.push(i);
            }
        }
        let mut decided: Vec<Option<Vec<usize>>> = vec![None; keys.len()];
        // How far (b) and (e) have looked into the log.
        let (mut prefixed, mut checked) = (0, 0);
        let mut passes = 0;
        // How far (b)'s real-time rule has read the log, the earliest
        // completion of an `:ok` leaver so far, and where its suffix starts.
        let (mut rt_seen, mut first_end_outside, mut rt_cut) = (0, u64::MAX, n);
        loop {
            passes += 1;
            let before = cs.log.len();
            // (b) process prefixes: a leaver's successors, transitively.
            while let Some(&i) = cs.log.get(prefixed) {
                prefixed += 1;
                if let Some(nx) = ix.next[i] {
                    cs.out(nx, 0);
                }
            }
            // (b) real time: whatever was invoked after a non-member
            // completed (its successors leave in the next pass, as there).
            // That completion only moves earlier as the log grows, and
            // indices are in start order, so what it sends out is a suffix
            // that only grows: each pass reads the log's new entries and
            // the suffix's new part (the same leavers, in the same order,
            // as a scan of everything).
            if gc.realtime {
                while let Some(&i) = cs.log.get(rt_seen) {
                    rt_seen += 1;
                    if let Some(e) = self.span[i].1.filter(|_| self.ok[i]) {
                        first_end_outside = first_end_outside.min(e);
                    }
                }
                let cut = self.span.partition_point(|s| s.0 <= first_end_outside);
                for i in cut..rt_cut {
                    cs.out(i, 1);
                }
                rt_cut = rt_cut.min(cut);
            }
            self.scan_reads(&mut cs);
            // (d) the keys a leaver wrote or read.
            let mark = cs.log.len();
            let mut redecided = Vec::new();
            for ki in 0..keys.len() {
                if !cs.dirty[ki] {
                    continue;
                }
                // Cleared first: what this decision sends out of `F`
                // makes the key dirty again.
                cs.dirty[ki] = false;
                let m = self.decide(gc, (keys[ki], order.kids[ki]), ki, &mut kv, &mut cs);
                if m != decided[ki] {
                    let old = std::mem::replace(&mut decided[ki], m);
                    redecided.push((ki, old));
                }
            }
            self.non_base_readers(&order, &decided, &redecided, (checked, mark), &mut cs);
            checked = mark;
            if cs.log.len() == before {
                break;
            }
        }
        if std::env::var_os("ELLERY_WATCH_TIMING").is_some() {
            let eligible = self.eligible.iter().filter(|&&e| e).count();
            let why: Vec<String> = (RULES.iter().zip(cs.why))
                .map(|(r, k)| format!("{r} {k}"))
                .collect();
            eprintln!(
                "ellery: timing: fixpoint passes {passes}, eligible {eligible}, left F by {}",
                why.join(" ")
            );
        }
        let bases = (keys.iter().zip(decided))
            .filter_map(|(k, m)| Some((*k, m?)))
            .collect();
        (cs.c, bases)
    }

    /// (c) one scan, in index order, of the reads whose writer left since
    /// the scan last visited them: a member that read a value no member
    /// wrote leaves.
    fn scan_reads(&self, cs: &mut Candidates) {
        let heap = std::mem::take(&mut cs.next_scan)
            .into_iter()
            .map(std::cmp::Reverse)
            .collect();
        cs.scan = Some((0, heap));
        while let Some((at, heap)) = &mut cs.scan {
            let Some(std::cmp::Reverse(j)) = heap.pop() else {
                break;
            };
            *at = j;
            let r = self.reads[j as usize];
            let from_member = self.read_from[j as usize].is_some_and(|w| cs.c[w]);
            if cs.c[r] && !from_member {
                cs.out(r, 2);
            }
        }
        cs.scan = None;
    }

    /// (e) a member whose value of a key is not the key's base leaves when
    /// a reader outside read it. Looks at the reads of the readers that
    /// left in `left` (log positions, before the bases were chosen) and,
    /// for each key decided anew (with its previous decision), at the
    /// reads of its previous single base; a reader that left later is
    /// looked at in the next pass, after its keys are decided again.
    ///
    /// Those are all the reads that can send a writer out: a read by a
    /// reader that left before is looked at when it left (its fresh
    /// window) and, if its writer was a member and did not leave then, the
    /// read was of the value of the key's single base at that time. It can
    /// only send its writer out once that base changes, which is when the
    /// key is decided anew with that base as its previous decision.
    /// (Looking at every read of the key, as the full passes do, only finds
    /// writers that have left already.)
    fn non_base_readers(
        &self,
        keys: &KeyOrder,
        decided: &[Option<Vec<usize>>],
        redecided: &[(usize, Option<Vec<usize>>)],
        left: (usize, usize),
        cs: &mut Candidates,
    ) {
        let ix = cs.ix;
        let fresh = (cs.log[left.0..left.1].iter()).flat_map(|&r| ix.reads_by.of(r as u32));
        let of_old_bases = (redecided.iter())
            .filter_map(|(ki, old)| match old.as_deref() {
                Some(&[w]) => Some((keys.kids[*ki], w)),
                _ => None,
            })
            .flat_map(|(kid, w)| {
                (ix.read_from_writer.of(w as u32).iter())
                    .filter(move |&&j| self.read_key[j as usize] == kid)
            });
        let to_check: Vec<u32> = fresh.chain(of_old_bases).copied().collect();
        for j in to_check {
            let r = self.reads[j as usize];
            if cs.c[r] || cs.left_at[r] as usize >= left.1 {
                continue;
            }
            let Some(w) = self.read_from[j as usize] else {
                continue;
            };
            let kid = self.read_key[j as usize];
            let base = (decided.get(keys.place[kid as usize] as usize)).and_then(Option::as_ref);
            // Values of one key: the same index is the same value.
            let base_value = (base.filter(|m| m[..] == [w])).map(|_| self.last_write_id(w, kid));
            if cs.c[w] && base_value != Some(self.read_value[j as usize]) {
                cs.out(w, 5);
            }
        }
    }
}
