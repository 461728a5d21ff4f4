//! The plan's tables as hash maps, built the way they were before the dense
//! tables (test only): the full-pass oracle (`fixpoint/reference.rs`) reads
//! these, and [`Plan::check_tables`] checks the dense tables against them
//! in every test build, so a mistake in numbering keys or values shows as a
//! failed assertion rather than as a different `F`.

use super::{Plan, NONE};
use crate::model::{Atom, MopFn, OpType};
use crate::watch::store::{Arg, WMop};
use hashbrown::{HashMap, HashSet};

/// The tables [`Plan`] kept before its dense ones.
#[derive(Default)]
pub(super) struct OldTables {
    /// Writers of each key (indices), `nil` writers marked.
    pub(super) key_writers: HashMap<Atom, (Vec<usize>, bool)>,
    /// Writer index of (key, value).
    pub(super) writer: HashMap<(Atom, Atom), usize>,
    /// Readers of `nil` per key.
    pub(super) nil_readers: HashMap<Atom, Vec<usize>>,
    /// `:ok` readers of each (key, value).
    pub(super) readers: HashMap<(Atom, Atom), Vec<usize>>,
    /// The last value each transaction wrote to each key.
    pub(super) last_write: HashMap<(usize, Atom), Atom>,
    /// (transaction, key) pairs written more than once by the transaction.
    pub(super) rewrote: HashSet<(usize, Atom)>,
    /// Completed reads: (reader, key, value).
    pub(super) reads: Vec<(usize, Atom, Option<Atom>)>,
}

impl OldTables {
    /// Adds transaction `i`'s micro-op `m`.
    pub(super) fn add(&mut self, i: usize, outcome: OpType, m: &WMop) {
        match (m.f, &m.arg) {
            (MopFn::Write, a) if outcome != OpType::Fail => {
                let e = self.key_writers.entry(m.key).or_default();
                if e.0.last() != Some(&i) {
                    e.0.push(i);
                }
                match a {
                    Arg::Atom(v) => {
                        self.writer.insert((m.key, *v), i);
                        if self.last_write.insert((i, m.key), *v).is_some() {
                            self.rewrote.insert((i, m.key));
                        }
                    }
                    _ => e.1 = true,
                }
            }
            (MopFn::Read, a) if matches!(outcome, OpType::Ok | OpType::Info) => {
                let v = match a {
                    Arg::Atom(v) => Some(*v),
                    _ => None,
                };
                self.reads.push((i, m.key, v));
                match v {
                    Some(v) if outcome == OpType::Ok => {
                        self.readers.entry((m.key, v)).or_default().push(i)
                    }
                    None if outcome == OpType::Ok => {
                        self.nil_readers.entry(m.key).or_default().push(i)
                    }
                    _ => {}
                }
            }
            _ => {}
        }
    }
}

impl Plan {
    /// Asserts that the dense tables say what the hash maps say.
    pub(super) fn check_tables(&self) {
        let old = &self.old;
        let wide = |xs: &[u32]| xs.iter().map(|&x| x as usize).collect::<Vec<_>>();
        let written = self.key_writers.iter().filter(|ws| !ws.is_empty()).count();
        assert_eq!(written, old.key_writers.len(), "written keys");
        for (&k, (ws, nil)) in &old.key_writers {
            let slots = self.writers_of_key(k);
            let kid = self.key_ids.get(k).expect("a numbered key") as usize;
            assert_eq!(slots.iter().map(|s| s.tx).collect::<Vec<_>>(), *ws);
            assert_eq!(self.nil_writer[kid], *nil, "nil writer of {k:?}");
            for s in slots {
                let last = old.last_write.get(&(s.tx, k)).copied();
                assert_eq!(self.last_write(s.tx, k), last, "last write");
                assert_eq!(s.rewrote, old.rewrote.contains(&(s.tx, k)), "rewrote");
                let readers = last.and_then(|v| old.readers.get(&(k, v)));
                let dense = (s.value != NONE).then(|| wide(self.value_readers.of(s.value)));
                assert_eq!(dense.filter(|d| !d.is_empty()).as_ref(), readers);
            }
        }
        assert_eq!(self.reads.len(), old.reads.len(), "reads");
        for (j, &(r, k, v)) in old.reads.iter().enumerate() {
            assert_eq!(self.reads[j], r, "the reader of read {j}");
            let w = v.and_then(|v| old.writer.get(&(k, v)).copied());
            assert_eq!(self.read_from[j], w, "the writer of read {j}");
            assert_eq!(self.keys[self.read_key[j] as usize], k);
            let vid = v.map_or(NONE, |v| self.value_id[&(k, v)]);
            assert_eq!(self.read_value[j], vid, "the value of read {j}");
        }
        let nil_reads: usize = old.nil_readers.values().map(Vec::len).sum();
        assert_eq!(self.nil_readers.items.len(), nil_reads, "nil reads");
        for (k, rs) in &old.nil_readers {
            let kid = self.key_ids.get(*k).expect("a numbered key");
            assert_eq!(&wide(self.nil_readers.of(kid)), rs);
        }
        let value_reads: usize = old.readers.values().map(Vec::len).sum();
        assert_eq!(self.value_readers.items.len(), value_reads, "value reads");
        for (kv, rs) in &old.readers {
            assert_eq!(&wide(self.value_readers.of(self.value_id[kv])), rs);
        }
    }
}
