//! Ops held back from rounds: an `:ok` completion that read a value whose
//! writer is still pending (invoked, not completed), as Cobra buffers such
//! reads.
//!
//! A round's check sees such a read as a read nobody wrote (`G1a`), which
//! is no anomaly yet (the writer may complete) and sends the round to the
//! SAT checker (on the 10M fenced rw-register stream, that round was the
//! peak of resident memory). So the completion is not fed to the store at
//! all until every writer it read from has completed: to the store and to
//! garbage collection its transaction is still pending, which is what
//! collection already assumes of a slow completion (nothing is forgotten
//! that a pending transaction's later completion could put on a cycle).
//! Fed later, it keeps its place in the stream (position, line), so the
//! rounds' histories and real-time order are those of the input.
//!
//! While it is held, its reads are unknown to collection, which may
//! forget a writer it read from (one that completed while the completion
//! still waits for another). That is the slow completion's case, and
//! exact for the same reason: the held transaction's process issued it
//! after that process's last completed fence, so every forgotten writer
//! `w` (`nf(w) ≤ agree`) reaches it; fed later, its read of `w`'s value is
//! a read of the key's base (rewritten to `nil`, as for any reader) or is
//! rejected as a read of a collected version, rightly: `w` reaches the
//! base, which overwrote `w`'s value and reaches the reader
//! ([`super::fence_gc`], "Why it is safe").
//!
//! What must go with it, so that each round checks a sound sub-history:
//! * its process's later ops (session order: the store would otherwise see
//!   a second invocation of a pending process);
//! * readers of its own writes, and of the writes of its process's held
//!   later invocations: these transactions are pending to the store (or
//!   not even invoked yet), so such readers are held by the same rule, and
//!   none reaches the store reading a value no retained transaction wrote
//!   (which collection would take for a read of a forgotten version).
//!
//! Bound: at most [`HOLD_MAX`] ops are held; beyond that (a writer that
//! stays pending for good, without even a crash) everything held is fed in
//! order, and the round's `G1a` filter (`Watcher::round`) keeps the reads
//! of pending writes out of what is reported, as before. At end of input
//! everything held is fed (`Watcher::end_of_input`).

use super::store::{Arg, Store, WMop};
use crate::model::{Atom, MopFn, OpType};
use std::collections::VecDeque;

/// At most this many ops are held (module docs).
pub const HOLD_MAX: usize = 20_000;

/// One held op.
#[derive(Debug)]
pub struct Held {
    /// Its client-op position in the stream.
    pub pos: u64,
    /// Its input line.
    pub line: u64,
    /// `:process`.
    pub process: i64,
    /// Its EDN text, with its `:index`.
    pub text: Box<[u8]>,
    /// `(key, value)` of each read of an `:ok` completion (empty otherwise).
    reads: Vec<(Atom, Atom)>,
    /// `(key, value)` of each write of an invocation (empty otherwise): a
    /// held invocation is pending too, though not in the store yet.
    writes: Vec<(Atom, Atom)>,
}

/// The held ops, in stream order.
#[derive(Debug, Default)]
pub struct Hold {
    ops: VecDeque<Held>,
    /// Held ops per process.
    per_process: hashbrown::HashMap<i64, usize>,
    /// Pending writers (start) that some held op waits for.
    waits: hashbrown::HashSet<u64>,
    /// A waited-for writer completed: try to feed what is held.
    pub wake: bool,
}

impl Hold {
    /// How many ops are held.
    pub fn len(&self) -> usize {
        self.ops.len()
    }

    /// Whether nothing is held.
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }

    /// Whether an op must be held: its process has held ops, or it is an
    /// `:ok` completion that read a pending transaction's write. If so, it
    /// is held.
    pub fn take(
        &mut self,
        store: &Store,
        process: i64,
        op_type: OpType,
        mops: Option<&[WMop]>,
        held: impl FnOnce() -> (u64, u64, Box<[u8]>),
    ) -> bool {
        let reads = match (op_type, mops) {
            (OpType::Ok, Some(ms)) => atoms(ms, MopFn::Read),
            _ => Vec::new(),
        };
        let blocked = self.per_process.contains_key(&process);
        if !blocked {
            let writers = self.pending_writers(store, process, &reads);
            if writers.is_empty() {
                return false;
            }
            self.waits.extend(writers);
        }
        let (pos, line, text) = held();
        let writes = match (op_type, mops) {
            (OpType::Invoke, Some(ms)) => atoms(ms, MopFn::Write),
            _ => Vec::new(),
        };
        *self.per_process.entry(process).or_default() += 1;
        self.ops.push_back(Held {
            pos,
            line,
            process,
            text,
            reads,
            writes,
        });
        true
    }

    /// Notes that the transaction starting at `start` completed.
    pub fn completed(&mut self, start: u64) {
        if self.waits.remove(&start) {
            self.wake = true;
        }
    }

    /// The first held op that may be fed now (no earlier held op of its
    /// process, and no read of a pending write), taken out.
    pub fn next_ready(&mut self, store: &Store) -> Option<Held> {
        let mut seen: Vec<i64> = Vec::new();
        let mut ready = None;
        for (at, h) in self.ops.iter().enumerate() {
            if seen.contains(&h.process) {
                continue;
            }
            seen.push(h.process);
            let writers = self.pending_writers(store, h.process, &h.reads);
            if writers.is_empty() {
                ready = Some(at);
                break;
            }
            self.waits.extend(writers);
            if seen.len() == self.per_process.len() {
                break;
            }
        }
        self.remove(ready?)
    }

    /// The oldest held op, taken out (to feed everything, in order).
    pub fn pop_front(&mut self) -> Option<Held> {
        self.remove(0)
    }

    /// The pending transactions (starts) of other processes that write one
    /// of `reads`: a scan of what the pending invocations in the store
    /// write ([`Store::open_writes`]; at most one invocation per process)
    /// and of the held ones.
    fn pending_writers(&self, store: &Store, process: i64, reads: &[(Atom, Atom)]) -> Vec<u64> {
        let mut out = Vec::new();
        if reads.is_empty() {
            return out;
        }
        for &(p, s, k, v) in &store.open_writes {
            if p != process && reads.contains(&(k, v)) && out.last() != Some(&s) {
                out.push(s);
            }
        }
        // A held invocation starts at its own position.
        for h in self.ops.iter().filter(|h| h.process != process) {
            if h.writes.iter().any(|w| reads.contains(w)) {
                out.push(h.pos);
            }
        }
        out
    }

    fn remove(&mut self, at: usize) -> Option<Held> {
        let h = self.ops.remove(at)?;
        if let Some(n) = self.per_process.get_mut(&h.process) {
            *n -= 1;
            if *n == 0 {
                self.per_process.remove(&h.process);
            }
        }
        if self.ops.is_empty() {
            self.waits.clear();
        }
        Some(h)
    }
}

/// `(key, value)` of each micro-op `f` of a value.
fn atoms(mops: &[WMop], f: MopFn) -> Vec<(Atom, Atom)> {
    mops.iter()
        .filter_map(|m| match &m.arg {
            Arg::Atom(v) if m.f == f => Some((m.key, *v)),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::{Final, WatchOptions, Watcher};
    use super::HOLD_MAX;
    use crate::model::Workload;
    use crate::route::Validity;

    fn watcher() -> Watcher {
        Watcher::new(WatchOptions::for_tests(Some(Workload::RwRegister)))
    }

    fn op(w: &mut Watcher, index: u64, ty: &str, p: i64, value: &str) {
        let line =
            format!("{{:index {index}, :type :{ty}, :process {p}, :f :txn, :value {value}}}\n");
        w.ingest(line.into_bytes()).unwrap();
    }

    fn types(r: &super::super::Round) -> Vec<&str> {
        r.new.iter().map(|(t, _)| t.as_str()).collect()
    }

    /// Process 1 reads `x = 1` while its writer (process 0) is pending: the
    /// read, process 1's later transaction, and process 2's read of that
    /// transaction's write wait; the round sees none of them (no read
    /// nobody wrote, nothing suppressed); once the writer completes they
    /// are fed, and the next round checks them: valid, and the final map
    /// needs no re-check (before, the first round left the read out of
    /// what it reported and the whole history had to be re-checked).
    #[test]
    fn a_read_of_a_pending_write_waits_for_the_writer() {
        let mut w = watcher();
        op(&mut w, 0, "invoke", 0, "[[:w 1 1]]");
        op(&mut w, 1, "invoke", 1, "[[:r 1 nil]]");
        op(&mut w, 2, "ok", 1, "[[:r 1 1]]");
        assert_eq!(w.held(), 1);
        op(&mut w, 3, "invoke", 1, "[[:w 2 1]]");
        op(&mut w, 4, "ok", 1, "[[:w 2 1]]");
        op(&mut w, 5, "invoke", 2, "[[:r 2 nil]]");
        op(&mut w, 6, "ok", 2, "[[:r 2 1]]");
        assert_eq!(w.held(), 4);
        let r = w.round().unwrap();
        assert!(r.new.is_empty(), "{:?}", r.new);
        assert!(!w.suppressed);
        op(&mut w, 7, "ok", 0, "[[:w 1 1]]");
        assert_eq!(w.held(), 0);
        assert_eq!(w.retained(), 4);
        let r = w.round().unwrap();
        assert!(r.new.is_empty(), "{:?}", r.new);
        assert!(!w.suppressed);
        let last = r.outcome.unwrap();
        assert_eq!(last.validity, Validity::Valid);
        match w.finish(Some(last)) {
            Final::Outcome(o) => assert_eq!(o.validity, Validity::Valid),
            Final::Valid => {}
            other => panic!("expected a valid map without a re-check, got {other:?}"),
        }
    }

    /// A held read of a write that aborts is a genuine G1a once the writer
    /// fails; a read of a value nobody writes is not held at all.
    #[test]
    fn reads_of_aborted_or_unwritten_values_are_still_g1a() {
        let mut w = watcher();
        op(&mut w, 0, "invoke", 0, "[[:w 1 1]]");
        op(&mut w, 1, "invoke", 1, "[[:r 1 nil]]");
        op(&mut w, 2, "ok", 1, "[[:r 1 1]]");
        assert_eq!(w.held(), 1);
        op(&mut w, 3, "fail", 0, "[[:w 1 1]]");
        assert_eq!(w.held(), 0);
        assert_eq!(types(&w.round().unwrap()), ["G1a"]);

        let mut w = watcher();
        op(&mut w, 0, "invoke", 0, "[[:w 1 1]]");
        op(&mut w, 1, "invoke", 1, "[[:r 1 nil]]");
        op(&mut w, 2, "ok", 1, "[[:r 1 9]]");
        assert_eq!(w.held(), 0);
        assert_eq!(types(&w.round().unwrap()), ["G1a"]);
    }

    /// A writer that crashes (`:info`) may have taken effect: its reader is
    /// fed and nothing is reported. One that never completes: the read is
    /// fed at end of input, the round leaves it out of what it reports, and
    /// the whole history decides.
    #[test]
    fn a_crashed_or_never_completed_writer_releases_its_readers() {
        let mut w = watcher();
        op(&mut w, 0, "invoke", 0, "[[:w 1 1]]");
        op(&mut w, 1, "invoke", 1, "[[:r 1 nil]]");
        op(&mut w, 2, "ok", 1, "[[:r 1 1]]");
        op(&mut w, 3, "info", 0, "[[:w 1 1]]");
        assert_eq!(w.held(), 0);
        assert!(w.round().unwrap().new.is_empty());

        let mut w = watcher();
        op(&mut w, 0, "invoke", 0, "[[:w 1 1]]");
        op(&mut w, 1, "invoke", 1, "[[:r 1 nil]]");
        op(&mut w, 2, "ok", 1, "[[:r 1 1]]");
        assert!(w.round().unwrap().new.is_empty());
        assert_eq!(w.new_ops(), 0);
        w.end_of_input().unwrap();
        assert_eq!((w.held(), w.new_ops()), (0, 1));
        assert_eq!(w.retained(), 2);
        assert!(w.round().unwrap().new.is_empty());
        assert!(w.suppressed);
        assert!(matches!(w.finish(None), Final::Recheck(_)));
    }

    /// A writer that stays pending holds at most `HOLD_MAX` ops: then
    /// everything held is fed, in order.
    #[test]
    fn holding_is_bounded() {
        let mut w = watcher();
        op(&mut w, 0, "invoke", 0, "[[:w 1 1]]");
        op(&mut w, 1, "invoke", 1, "[[:r 1 nil]]");
        op(&mut w, 2, "ok", 1, "[[:r 1 1]]");
        let mut most = 0;
        for i in 0..(HOLD_MAX as u64 / 2 + 10) {
            op(&mut w, 3 + 2 * i, "invoke", 1, &format!("[[:w 2 {i}]]"));
            op(&mut w, 4 + 2 * i, "ok", 1, &format!("[[:w 2 {i}]]"));
            most = most.max(w.held());
        }
        assert!(most + 2 >= HOLD_MAX && most <= HOLD_MAX, "{most}");
        assert!(w.held() < 30, "{}", w.held());
    }
}
