//! The misread scan ([`scan`]): the passes over a history that decide
//! whether Elle's rw-register inference would misread it
//! ([`super::inference_misreads`]).

use super::{val, write_source, Val};
use crate::infer::rw_register::AtomIds;
use crate::infer::txn::TxnMap;
use crate::model::{Atom, History, MopFn, OpType};

/// What [`scan`] found.
#[derive(Clone, Copy, Default)]
pub(super) struct ScanFacts {
    /// A value is written twice, or `nil` is written ([`values_repeat`]).
    pub(super) repeat: bool,
    /// A committed read may return a value a failed transaction wrote or
    /// one some op overwrote within itself: Elle's G1a/G1b cases may be
    /// non-empty (never false when they are not).
    pub(super) dirty_reads: bool,
    /// A committed read returned a value nobody (else) wrote.
    pub(super) thin_air: bool,
    /// A transaction wrote a key, read it and wrote it again.
    pub(super) own_write_read: bool,
    /// The committed reads were checked in a second pass (see [`scan_with`]).
    rechecked: bool,
}

/// Each written `(key, value)`'s one writer (op position): keys by dense
/// id, then per key value → writer, small integers by indexing (issue 23:
/// a hash lookup per write was most of this scan). Also the values Elle's
/// G1a/G1b cases look for: failed transactions' writes and every op's
/// intermediate writes (issue 23: the reads pass finds out whether any
/// is read, so the cases are computed only then).
#[derive(Default)]
struct ValueWriters {
    kids: AtomIds,
    written: Vec<AtomIds>,
    /// Failed or intermediate values, by key id, then [`DirtyMark`] slot.
    dirty: Vec<AtomIds>,
    /// What made each dirty value dirty.
    marks: Vec<DirtyMark>,
    /// Some intermediate write is of `nil`.
    dirty_nil: bool,
    /// A value was marked intermediate by another op than its writer after
    /// the writer was seen: reads checked before the mark may be dirty
    /// after all ([`scan`] then checks every read again).
    late_mark: bool,
}

/// What makes a value one Elle's G1a/G1b cases look for: a failed
/// transaction wrote it, or it was overwritten within an op (the last such
/// op's position, as Elle keeps).
#[derive(Clone, Copy)]
struct DirtyMark {
    failed: bool,
    intermediate_in: Option<u32>,
}

impl ValueWriters {
    /// The writer of `(key, v)`, if some transaction wrote it.
    fn get(&self, key: Atom, v: Atom) -> Option<u32> {
        let k = self.kids.get(key)?;
        self.written.get(k as usize)?.get(v)
    }

    /// The id of `key`, numbering it when new.
    fn kid(&mut self, key: Atom) -> u32 {
        let written = &mut self.written;
        self.kids.id(key, || {
            written.push(AtomIds::default());
            written.len() as u32 - 1
        })
    }

    /// Notes that a failed transaction wrote `v` (`intermediate_in` None),
    /// or that the op at `intermediate_in` overwrote it.
    fn mark_dirty(&mut self, key: Atom, v: Val, intermediate_in: Option<u32>) {
        let Some(v) = v else {
            self.dirty_nil = true;
            return;
        };
        if let Some(p) = intermediate_in {
            self.late_mark |= self.get(key, v).is_some_and(|writer| writer != p);
        }
        let kid = self.kid(key) as usize;
        if self.dirty.len() <= kid {
            self.dirty.resize_with(kid + 1, AtomIds::default);
        }
        let marks = &mut self.marks;
        let slot = self.dirty[kid].id(v, || {
            marks.push(DirtyMark {
                failed: false,
                intermediate_in: None,
            });
            marks.len() as u32 - 1
        });
        let mark = &mut self.marks[slot as usize];
        match intermediate_in {
            None => mark.failed = true,
            Some(p) => mark.intermediate_in = Some(p),
        }
    }

    /// Whether the read of `(key, v)` by the op at `reader` may be one of
    /// Elle's G1a/G1b cases (never false when it is).
    fn dirty_read(&self, h: &History, reader: usize, key: Atom, v: Val) -> bool {
        let Some(v) = v else {
            return self.dirty_nil;
        };
        let kid = self.kids.get(key);
        let Some(slot) = kid.and_then(|k| self.dirty.get(k as usize)?.get(v)) else {
            return false;
        };
        let mark = self.marks[slot as usize];
        // Elle's G1b leaves out reads of the reader's own intermediate write.
        mark.failed
            || mark
                .intermediate_in
                .is_some_and(|p| h.ops[p as usize].index != h.ops[reader].index)
    }
}

/// Marks the intermediate writes of the op at `i`, given it is no
/// transaction's write source (an invocation, an `:info` op's own value):
/// Elle's G1b cases count every op's. `last`: scratch, each key's latest
/// value.
fn mark_intermediate(h: &History, i: usize, w: &mut ValueWriters, last: &mut TxnMap<Val>) {
    last.clear();
    for m in h.mops(&h.ops[i]).iter().filter(|m| m.f() == MopFn::Write) {
        overwrite(w, last, i, m.key(), val(m.arg()));
    }
}

/// The op at `i` writes `v` to `key`: the value it wrote there before,
/// if any, is intermediate. `last`: each key's latest value in the op.
fn overwrite(w: &mut ValueWriters, last: &mut TxnMap<Val>, i: usize, key: Atom, v: Val) {
    match last.get_mut(key) {
        Some(slot) => {
            let before = std::mem::replace(slot, v);
            w.mark_dirty(key, before, Some(i as u32));
        }
        None => last.push(key, v),
    }
}

/// The facts [`super::inference_misreads`] needs, in one pass over the ops
/// (which stops at the first repeated value; [`scan_with`]).
pub(super) fn scan(h: &History, reads: bool, split: usize) -> ScanFacts {
    scan_with(h, reads, split, true)
}

/// One pass over the writes, and with `reads` over the committed reads:
/// with `inline`, each op's reads right after its writes (issue 23: a
/// second pass over every op and micro-op was a third of the scan), the
/// reads of values whose writer comes later kept and looked at once every
/// writer is known; without it, or when some value was marked intermediate
/// after its writer was seen (an invocation left open, or one whose writes
/// differ from its completion's), a second pass over the committed reads,
/// cut in two halves of the ops, each on its own core when one is free,
/// from `split` ops on (the reads only look the writers up, so the halves
/// share them). The two give the same facts (a test compares them).
fn scan_with(h: &History, reads: bool, split: usize, inline: bool) -> ScanFacts {
    let mut facts = ScanFacts::default();
    let mut w = ValueWriters::default();
    let mut last: TxnMap<Val> = TxnMap::default();
    let mut inline_reads = InlineReads::default();
    for (i, op) in h.ops.iter().enumerate() {
        let src = write_source(h, i);
        let own = src.is_some_and(|s| std::ptr::eq(s, op));
        if reads && !own {
            mark_intermediate(h, i, &mut w, &mut last);
        }
        if let Some(src) = src {
            if !note_writes(h, i, src, reads && own, &mut w, &mut last) {
                facts.repeat = true;
                return facts;
            }
        }
        if reads && inline && op.op_type == OpType::Ok {
            inline_reads.op(h, &w, i, &mut facts);
        }
    }
    if !reads {
        return facts;
    }
    if inline && !w.late_mark {
        inline_reads.finish(h, &w, &mut facts);
        return facts;
    }
    let [a, b] = crate::par::halves(h.ops.len(), split, |r| scan_reads(h, &w, r));
    facts.rechecked = true;
    facts.thin_air = a.thin_air || b.thin_air;
    facts.own_write_read = a.own_write_read || b.own_write_read;
    facts.dirty_reads = a.dirty_reads || b.dirty_reads;
    facts
}

/// Notes the writes of `src`, the op holding the writes of the transaction
/// completed at `i`; with `marks`, also its failed and intermediate values.
/// False when a value is written again, or `nil` is written.
fn note_writes(
    h: &History,
    i: usize,
    src: &crate::model::Op,
    marks: bool,
    w: &mut ValueWriters,
    last: &mut TxnMap<Val>,
) -> bool {
    last.clear();
    for m in h.mops(src) {
        if m.f() != MopFn::Write {
            continue;
        }
        let Some(v) = val(m.arg()) else {
            return false;
        };
        let kid = w.kid(m.key());
        let mut fresh = false;
        if let Some(values) = w.written.get_mut(kid as usize) {
            values.id(v, || {
                fresh = true;
                i as u32
            });
        }
        if !fresh {
            return false;
        }
        // An `:info` op's writes are its invocation's, marked there.
        if !marks {
            continue;
        }
        if h.ops[i].op_type == OpType::Fail {
            w.mark_dirty(m.key(), Some(v), None);
        }
        overwrite(w, last, i, m.key(), Some(v));
    }
    true
}

/// The committed reads [`scan_with`] looks at as it goes.
#[derive(Default)]
struct InlineReads {
    /// Per key of the current transaction, as in [`scan_reads`].
    seen: TxnMap<(bool, bool)>,
    /// Reads of values no writer had written yet: (reader, key, value,
    /// whether it was the transaction's first micro-op on the key).
    pending: Vec<(u32, Atom, Atom, bool)>,
    /// Some committed read returned `nil`.
    nil_read: bool,
}

impl InlineReads {
    /// The reads of the `:ok` op at `i`, after its writes: a read of a
    /// value whose writer is known already is judged now (its marks are
    /// final unless [`ValueWriters::late_mark`]), the others later.
    fn op(&mut self, h: &History, w: &ValueWriters, i: usize, facts: &mut ScanFacts) {
        self.seen.clear();
        for m in h.mops(&h.ops[i]) {
            let found = self.seen.get_mut(m.key());
            if m.f() == MopFn::Read {
                let first = found.is_none();
                match val(m.arg()) {
                    None => self.nil_read = true,
                    Some(v) => match w.get(m.key(), v) {
                        Some(writer) => {
                            // The reader's own (later) write explains nothing.
                            facts.thin_air |= first && writer == i as u32;
                            facts.dirty_reads |=
                                !w.marks.is_empty() && w.dirty_read(h, i, m.key(), Some(v));
                        }
                        None => self.pending.push((i as u32, m.key(), v, first)),
                    },
                }
            }
            match found {
                None => self.seen.push(m.key(), (m.f() == MopFn::Write, false)),
                Some(s) if m.f() == MopFn::Read => s.1 = true,
                Some(s) if s.0 && s.1 => facts.own_write_read = true,
                Some(_) => {}
            }
        }
    }

    /// The reads left for when every writer is known.
    fn finish(&self, h: &History, w: &ValueWriters, facts: &mut ScanFacts) {
        for &(i, key, v, first) in &self.pending {
            facts.thin_air |= first && w.get(key, v).filter(|&wr| wr != i).is_none();
            facts.dirty_reads |= w.dirty_read(h, i as usize, key, Some(v));
        }
        facts.dirty_reads |= self.nil_read && w.dirty_nil;
    }
}

/// The committed reads of the ops at `range`: [`ScanFacts`]'s
/// `thin_air` (a read of a value nobody else wrote; the scan stops at the
/// first, which decides), `own_write_read` (a read between two writes of
/// its key in one transaction) and `dirty_reads`.
fn scan_reads(h: &History, w: &ValueWriters, range: std::ops::Range<usize>) -> ScanFacts {
    let mut facts = ScanFacts::default();
    // Per key of one transaction: (first micro-op was a write, read since
    // a write).
    let mut seen: TxnMap<(bool, bool)> = TxnMap::default();
    // Without failed or intermediate values no read looks them up.
    let dirty = !w.marks.is_empty() || w.dirty_nil;
    for i in range {
        let Some(op) = h.ops.get(i).filter(|op| op.op_type == OpType::Ok) else {
            continue;
        };
        seen.clear();
        for m in h.mops(op) {
            if dirty && m.f() == MopFn::Read && w.dirty_read(h, i, m.key(), val(m.arg())) {
                facts.dirty_reads = true;
            }
            match seen.get_mut(m.key()) {
                None => {
                    if m.f() == MopFn::Read {
                        if let Some(v) = val(m.arg()) {
                            // The reader's own (later) write explains nothing.
                            if w.get(m.key(), v).filter(|&wr| wr != i as u32).is_none() {
                                facts.thin_air = true;
                                return facts;
                            }
                        }
                    }
                    seen.push(m.key(), (m.f() == MopFn::Write, false));
                }
                Some(s) if m.f() == MopFn::Read => s.1 = true,
                Some(s) if s.0 && s.1 => facts.own_write_read = true,
                Some(_) => {}
            }
        }
    }
    facts
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gen::Rng;

    /// A random rw-register history: up to four processes, invocations
    /// completed `:ok`, `:fail` or `:info` (the completion's writes
    /// sometimes differ from the invocation's) or left open, keys 0..3,
    /// values mostly fresh, sometimes repeated or `nil`, reads mostly of
    /// values some invocation wrote.
    fn random_history(rng: &mut Rng) -> History {
        let mut src = String::new();
        let mut open: Vec<Option<String>> = vec![None; 1 + rng.below(4) as usize];
        let mut written: Vec<(u64, u64)> = Vec::new();
        let mut fresh = 1;
        let mut index = 0;
        let mops = |rng: &mut Rng, written: &mut Vec<(u64, u64)>, fresh: &mut u64| {
            let mut out = String::from("[");
            for _ in 0..1 + rng.below(4) {
                let k = rng.below(3);
                if rng.below(2) == 0 {
                    let v = match rng.below(8) {
                        0 => "nil".to_string(),
                        1 => (1 + rng.below(6)).to_string(),
                        _ if !written.is_empty() => {
                            let (wk, wv) = written[rng.below(written.len() as u64) as usize];
                            if wk == k {
                                wv.to_string()
                            } else {
                                "nil".to_string()
                            }
                        }
                        _ => "nil".to_string(),
                    };
                    out += &format!("[:r {k} {v}]");
                } else {
                    let v = match rng.below(40) {
                        0 => "nil".to_string(),
                        1..=5 => (1 + rng.below(*fresh)).to_string(),
                        _ => {
                            *fresh += 1;
                            fresh.to_string()
                        }
                    };
                    if let Ok(n) = v.parse() {
                        written.push((k, n));
                    }
                    out += &format!("[:w {k} {v}]");
                }
            }
            out + "]"
        };
        for _ in 0..2 + rng.below(14) {
            let p = rng.below(open.len() as u64) as usize;
            let (t, value) = match open[p].take() {
                None => {
                    let v = mops(rng, &mut written, &mut fresh);
                    open[p] = Some(v.clone());
                    ("invoke", v)
                }
                Some(v) => {
                    let t = ["ok", "ok", "ok", "fail", "info"][rng.below(5) as usize];
                    // Reads filled in: the invocation's text mostly, else
                    // other micro-ops altogether.
                    let v = if rng.below(6) == 0 {
                        mops(rng, &mut written, &mut fresh)
                    } else {
                        v
                    };
                    (t, v)
                }
            };
            src +=
                &format!("{{:index {index}, :type :{t}, :process {p}, :f :txn, :value {value}}}\n");
            index += 1;
        }
        crate::read::read_history_bytes(src.into_bytes(), "h", crate::model::Format::Edn)
            .expect("reads")
    }

    /// What the facts decide (see `misreads_splitting_from`): a repeated
    /// value, else a read from thin air, else the dirty reads and the own
    /// write read.
    fn decided(f: ScanFacts) -> (bool, bool, bool, bool) {
        match (f.repeat, f.thin_air) {
            (true, _) => (true, false, false, false),
            (false, true) => (false, true, false, false),
            _ => (false, false, f.dirty_reads, f.own_write_read),
        }
    }

    /// The reads judged as the ops go (values whose writer comes later
    /// judged at the end) decide what a second pass over every committed
    /// read, after all the writes, does: on 50,000 random histories, with
    /// each outcome and the second pass's fallback met often.
    #[test]
    fn reads_judged_as_they_go_decide_what_a_second_pass_does() {
        let mut rng = Rng::new(23);
        let mut seen = std::collections::HashMap::new();
        let mut rechecked = 0;
        for n in 0..50_000 {
            let h = random_history(&mut rng);
            let inline = scan_with(&h, true, usize::MAX, true);
            let two_passes = scan_with(&h, true, usize::MAX, false);
            assert!(two_passes.repeat || two_passes.rechecked);
            assert_eq!(decided(inline), decided(two_passes), "history {n}: {h:?}");
            // The second pass cut in two halves, the second from the
            // second op on.
            let halves = scan_with(&h, true, 1, false);
            assert_eq!(decided(halves), decided(two_passes), "history {n}: {h:?}");
            rechecked += usize::from(inline.rechecked);
            *seen.entry(decided(inline)).or_insert(0) += 1;
        }
        for outcome in [
            (true, false, false, false),
            (false, true, false, false),
            (false, false, true, false),
            (false, false, false, false),
        ] {
            assert!(
                seen.get(&outcome).copied().unwrap_or(0) > 200,
                "{outcome:?}: {seen:?} {rechecked}"
            );
        }
        assert!(rechecked > 100, "{rechecked} second passes: {seen:?}");
    }
}
