//! What every transactional workload shares (Elle keeps these in
//! `elle.txn`): the order graph added to the data dependencies
//! ([`ExtraGraph`]), intermediate writes, lost updates, the one-type-of-key
//! rule, and how a list value prints. The workloads ([`super::list_append`],
//! [`super::rw_register`]) and the mini-transaction path ([`super::mini`])
//! depend on this module, not on each other for these. The cycle specs
//! (which cycle each anomaly type is) are workload-independent too; they
//! live with the cycle search in [`crate::check`](mod@crate::check).

use super::order_graphs::{process_edges, realtime_edges, ProcessExplainer, RealtimeExplainer};
use super::PairExplainer;
use crate::edn::order::{clojure_hasheq, clojure_map_order};
use crate::edn::Value;
use crate::graph::Rels;
use crate::model::{Atom, History, MopArg, MopFn, OpType};
use hashbrown::HashMap;

/// Which order graphs to add to the data dependencies.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub enum ExtraGraph {
    /// Data dependencies only.
    #[default]
    None,
    /// Add process order.
    Process,
    /// Add real-time order.
    Realtime,
}

impl ExtraGraph {
    /// The order graph's edges (none for [`ExtraGraph::None`]), to add to
    /// the data dependencies.
    pub(crate) fn edges(self, h: &History) -> Vec<(u32, u32, Rels)> {
        match self {
            ExtraGraph::None => Vec::new(),
            ExtraGraph::Process => process_edges(h),
            ExtraGraph::Realtime => realtime_edges(h),
        }
    }

    /// Passes each of the order graph's edges to `f`, in the order
    /// [`ExtraGraph::edges`] lists them, without listing them (real-time
    /// edges are a million-transaction history's largest share: issue 23).
    pub(crate) fn for_each_edge(self, h: &History, f: &mut dyn FnMut(u32, u32, Rels)) {
        self.for_each_edge_from(h, 0..h.ops.len() as u32, f)
    }

    /// [`ExtraGraph::for_each_edge`] for the edges whose source is in
    /// `sources`, and perhaps some others: the real-time walk starts at
    /// the first source and stops when no later edge can leave one
    /// (issue 23: building a graph's two halves of rows on two cores, each
    /// walked the whole history).
    pub(crate) fn for_each_edge_from(
        self,
        h: &History,
        sources: std::ops::Range<u32>,
        f: &mut dyn FnMut(u32, u32, Rels),
    ) {
        match self {
            ExtraGraph::None => {}
            ExtraGraph::Process => {
                for (a, b, r) in process_edges(h) {
                    f(a, b, r)
                }
            }
            ExtraGraph::Realtime => {
                super::order_graphs::realtime_walk_from(h, sources, |frontier, c| {
                    for &a in frontier {
                        f(a, c, Rels::REALTIME)
                    }
                })
            }
        }
    }

    /// The order graph's explainer, consulted after the data dependencies'.
    pub(crate) fn add_explainer(self, explainers: &mut Vec<Box<dyn PairExplainer>>) {
        match self {
            ExtraGraph::None => {}
            ExtraGraph::Process => explainers.push(Box::new(ProcessExplainer)),
            ExtraGraph::Realtime => explainers.push(Box::new(RealtimeExplainer)),
        }
    }
}

/// Elle's `intermediate-write-indices`: for each (key, value) that some op
/// wrote with micro-op `f` and then overwrote within the same op, the
/// position of the last such op in history order. `value` maps a micro-op
/// to the value it writes.
pub(crate) fn intermediate_writes<V: Copy + Eq + std::hash::Hash + Send>(
    h: &History,
    f: MopFn,
    value: impl Fn(&crate::model::Mop) -> V + Sync,
) -> HashMap<(Atom, V), u32> {
    // In two halves of the ops when a core is free (issue 23); the second
    // half's entries replace the first's, as later ops' do in one pass.
    let [mut a, b] = crate::par::halves(h.ops.len(), crate::par::SPLIT_FROM, |r| {
        intermediate_writes_in(h, f, &value, r)
    });
    a.extend(b);
    a
}

/// [`intermediate_writes`] of the ops at `range`.
fn intermediate_writes_in<V: Copy + Eq + std::hash::Hash>(
    h: &History,
    f: MopFn,
    value: &impl Fn(&crate::model::Mop) -> V,
    range: std::ops::Range<usize>,
) -> HashMap<(Atom, V), u32> {
    let mut intermediate = HashMap::new();
    // Per op: each key's latest written value.
    let mut last: TxnMap<V> = TxnMap::default();
    for (i, op) in h.ops.iter().enumerate().take(range.end).skip(range.start) {
        last.clear();
        for m in h.mops(op).iter().filter(|m| m.f() == f) {
            let v = value(m);
            match last.get_mut(m.key()) {
                Some(slot) => {
                    intermediate.insert((m.key(), *slot), i as u32);
                    *slot = v;
                }
                None => last.push(m.key(), v),
            }
        }
    }
    intermediate
}

/// A map from keys to `V` for one transaction's micro-ops, cleared for
/// each transaction and kept in insertion order: searched in place while
/// small (most transactions touch a few keys), hashed once it holds more
/// than [`TXN_MAP_LINEAR`] keys (a search per micro-op made a transaction
/// of 100,000 keys take 17 s to infer).
pub(crate) struct TxnMap<V> {
    entries: Vec<(Atom, V)>,
    index: HashMap<Atom, u32>,
}

/// Keys a [`TxnMap`] searches in place before it hashes them.
const TXN_MAP_LINEAR: usize = 16;

impl<V> Default for TxnMap<V> {
    fn default() -> Self {
        TxnMap {
            entries: Vec::new(),
            index: HashMap::new(),
        }
    }
}

impl<V> TxnMap<V> {
    /// Empties the map (for the next transaction), keeping its room
    /// unless the hash index is far bigger than the transaction just held
    /// needed: clearing a hash table costs its capacity, so after one
    /// transaction of 100,000 keys every later one of 17 would have paid
    /// for 100,000 (quadratic on a crafted history).
    pub(crate) fn clear(&mut self) {
        if self.index.capacity() > 4 * self.entries.len().max(64) {
            self.index = HashMap::new();
        } else if !self.index.is_empty() {
            self.index.clear();
        }
        self.entries.clear();
    }

    fn position(&self, k: Atom) -> Option<usize> {
        if self.entries.len() <= TXN_MAP_LINEAR {
            self.entries.iter().position(|e| e.0 == k)
        } else {
            self.index.get(&k).map(|&i| i as usize)
        }
    }

    /// The value kept for `k`.
    pub(crate) fn get(&self, k: Atom) -> Option<&V> {
        self.position(k).map(|i| &self.entries[i].1)
    }

    /// The value kept for `k`, to change.
    pub(crate) fn get_mut(&mut self, k: Atom) -> Option<&mut V> {
        self.position(k).map(|i| &mut self.entries[i].1)
    }

    /// Whether `k` is kept.
    pub(crate) fn contains(&self, k: Atom) -> bool {
        self.position(k).is_some()
    }

    /// Keeps `v` for `k`, which the map does not hold yet.
    pub(crate) fn push(&mut self, k: Atom, v: V) {
        debug_assert!(!self.contains(k));
        let i = self.entries.len();
        self.entries.push((k, v));
        if i == TXN_MAP_LINEAR {
            let all = self.entries.iter().enumerate();
            self.index.extend(all.map(|(j, e)| (e.0, j as u32)));
        } else if i > TXN_MAP_LINEAR {
            self.index.insert(k, i as u32);
        }
    }

    /// The keys and values, in the order they were added.
    pub(crate) fn entries(&self) -> &[(Atom, V)] {
        &self.entries
    }
}

/// A list of atoms as Elle's vector of values.
pub(crate) fn list_value(h: &History, xs: &[Atom]) -> Value {
    Value::Vector(xs.iter().map(|&a| h.atom_value(a)).collect())
}

/// Which read of a key makes a transaction its reader for the lost-update
/// check ([`lost_updates`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ReadsCounted {
    /// Elle's: the transaction's first read of the key, also one that
    /// follows its own write of it (`[:w k 1] [:r k 1] [:w k 2]` reads
    /// version 1 and writes k, for Elle).
    #[default]
    First,
    /// Only an external read: the first micro-op on the key, a read. A
    /// read after the transaction's own write sees that write, not a
    /// version another transaction could also have read and overwritten,
    /// so counting it reports lost updates no resolution has (the exact
    /// checks' definition; `auto` on rw-register).
    External,
}

/// Elle's `lost-update-cases`: committed transactions that read the same
/// value of a key and then wrote that key (`write` is the writing micro-op:
/// `:append` or `:w`), the reads counted as `counted` says.
pub(crate) fn lost_updates(h: &History, write: MopFn, counted: ReadsCounted) -> Vec<Value> {
    // What a txn first read of a key: nil, a register value, or a list.
    #[derive(Clone, Copy, PartialEq, Eq, Hash)]
    enum Seen {
        Nil,
        One(Atom),
        List(u32, u32),
    }
    let content = |s: Seen| -> (u8, &[Atom]) {
        match s {
            Seen::Nil => (0, &[]),
            Seen::One(_) => (1, &[]),
            Seen::List(start, len) => (2, &h.elements[start as usize..(start + len) as usize]),
        }
    };
    /// Each value of a key read then written, with its group's number,
    /// in insertion order.
    type ReadersByValue = Vec<(Seen, u32)>;
    // key → readers by value, in insertion order. A group's first txn is
    // `firsts[group]`; its second and later txns are listed apart, as
    // (group, txn): most groups hold one txn, and a list each was an
    // allocation per read-then-written key (issue 23).
    let mut by_key: Vec<(Atom, ReadersByValue)> = Vec::new();
    let mut firsts: Vec<u32> = Vec::new();
    let mut later: Vec<(u32, u32)> = Vec::new();
    let mut key_slot: HashMap<Atom, usize> = HashMap::new();
    /// What makes two first reads the same value: a register value, or the
    /// contents (`nil` or a list's elements).
    #[derive(PartialEq, Eq, Hash)]
    enum Same<'a> {
        One(Atom),
        Content((u8, &'a [Atom])),
    }
    // (key slot, value read) → its group.
    let mut groups: HashMap<(usize, Same<'_>), u32> = HashMap::new();
    // Per key of the transaction, the first read; `None` for a key written
    // before any read of it, when only external reads count.
    let mut first_read: TxnMap<Option<Seen>> = TxnMap::default();
    let mut written: TxnMap<()> = TxnMap::default();
    for (i, op) in h.ops.iter().enumerate() {
        if op.op_type != OpType::Ok {
            continue;
        }
        first_read.clear();
        written.clear();
        for m in h.mops(op) {
            let read = first_read.get(m.key()).copied();
            if m.f() == write && read.is_none() && counted == ReadsCounted::External {
                // Written first: no later read of the key is external.
                first_read.push(m.key(), None);
            } else if m.f() == write && !written.contains(m.key()) {
                if let Some(Some(seen)) = read {
                    let slot = *key_slot.entry(m.key()).or_insert_with(|| {
                        by_key.push((m.key(), Vec::new()));
                        by_key.len() - 1
                    });
                    // Found by content (a list's elements), not by a scan
                    // of the key's values: a key read and written a
                    // million times has a million (issue 23).
                    let same = match seen {
                        Seen::One(a) => Same::One(a),
                        s => Same::Content(content(s)),
                    };
                    match groups.entry((slot, same)) {
                        hashbrown::hash_map::Entry::Occupied(g) => later.push((*g.get(), i as u32)),
                        hashbrown::hash_map::Entry::Vacant(e) => {
                            let g = firsts.len() as u32;
                            e.insert(g);
                            by_key[slot].1.push((seen, g));
                            firsts.push(i as u32);
                        }
                    }
                    written.push(m.key(), ());
                }
            } else if read.is_none() {
                // The first read of a key (an append to a key already
                // written also lands here, as in Elle).
                let seen = match m.arg() {
                    MopArg::Nil | MopArg::Pred(_) => Seen::Nil,
                    MopArg::Atom(a) => Seen::One(a),
                    MopArg::List { start, len } => Seen::List(start, len),
                };
                first_read.push(m.key(), Some(seen));
            }
        }
    }
    let as_value = |s: Seen| match s {
        Seen::Nil => Value::Nil,
        Seen::One(a) => h.atom_value(a),
        Seen::List(..) => list_value(h, content(s).1),
    };
    // Order as Elle's map of every read-then-appended key, then keep the
    // colliding ones.
    // The groups of two or more txns: those with a later one.
    let mut more: HashMap<u32, Vec<u32>> = HashMap::new();
    for (g, t) in later {
        more.entry(g).or_default().push(t);
    }
    clojure_map_order(&mut by_key, |(k, _)| clojure_hasheq(&h.atom_value(*k)));
    by_key.retain(|(_, vals)| vals.iter().any(|(_, g)| more.contains_key(g)));
    let mut out = Vec::new();
    for (k, mut vals) in by_key {
        clojure_map_order(&mut vals, |(v, _)| clojure_hasheq(&as_value(*v)));
        for (v, g) in vals {
            if let Some(rest) = more.get(&g) {
                let txns = std::iter::once(firsts[g as usize]).chain(rest.iter().copied());
                out.push(Value::kw_map(vec![
                    ("key", h.atom_value(k)),
                    ("value", as_value(v)),
                    (
                        "txns",
                        Value::Vector(txns.map(|t| h.op_value(t as usize)).collect()),
                    ),
                ]));
            }
        }
    }
    out
}

/// The one-type-of-key rule both workloads enforce (Elle's
/// `assert-type-sanity`): every key has the class of the first one. Keys are
/// compared as atoms; an interned key's value is looked at once, so a
/// history's scan allocates nothing per micro-op.
pub(crate) struct OneKeyType {
    class: fn(&crate::edn::Value) -> &'static str,
    first: Option<(crate::model::Atom, &'static str)>,
    checked: Vec<bool>,
    /// An inline integer key passed: every other one has its class.
    int_passed: bool,
}

/// Two keys of different classes: the first key and its class, then the
/// offending key and its class.
pub(crate) type KeyMismatch = (
    crate::edn::Value,
    &'static str,
    crate::edn::Value,
    &'static str,
);

impl OneKeyType {
    /// A rule classifying keys with `class`.
    pub(crate) fn new(class: fn(&crate::edn::Value) -> &'static str) -> OneKeyType {
        OneKeyType {
            class,
            first: None,
            checked: Vec::new(),
            int_passed: false,
        }
    }

    /// Checks key `k` against the first key seen.
    pub(crate) fn check(&mut self, h: &History, k: crate::model::Atom) -> Result<(), KeyMismatch> {
        let int = k.as_int().is_some();
        if int && self.int_passed {
            return Ok(());
        }
        if let Some(slot) = k.interned_slot() {
            if self.checked.get(slot) == Some(&true) {
                return Ok(());
            }
            if self.checked.len() <= slot {
                self.checked.resize(slot + 1, false);
            }
            self.checked[slot] = true;
        }
        // Inline integers become `Value::Int` without allocating.
        let value = h.atom_value(k);
        let class = (self.class)(&value);
        match self.first {
            None => self.first = Some((k, class)),
            Some((k0, c0)) if c0 != class => return Err((h.atom_value(k0), c0, value, class)),
            _ => {}
        }
        self.int_passed |= int;
        Ok(())
    }
}

/// Runs a workload's validation over the ops in two halves (on two cores
/// when one is free: [`crate::par::halves`], from `split` ops on), each half
/// told the history's first key, so that the one-type-of-key rule
/// ([`OneKeyType`]) compares with it as one pass would; the first half's
/// error, if any, is the one reported: the first error in op order.
pub(crate) fn validate_in_halves<E: Send>(
    h: &History,
    split: usize,
    validate_ops: impl Fn(std::ops::Range<usize>, Option<Atom>) -> Result<(), E> + Sync,
) -> Result<(), E> {
    let first_key = h
        .ops
        .iter()
        .find_map(|op| h.mops(op).first())
        .map(|m| m.key());
    let [a, b] = crate::par::halves(h.ops.len(), split, |r| validate_ops(r, first_key));
    a.and(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A [`TxnMap`] answers as a list searched in order would, below and
    /// above the size at which it starts hashing, and across clears.
    #[test]
    fn txn_map_is_a_map_in_insertion_order() {
        let mut rng = crate::gen::Rng::new(23);
        let mut map: TxnMap<u32> = TxnMap::default();
        for round in 0..200 {
            map.clear();
            let mut reference: Vec<(Atom, u32)> = Vec::new();
            let keys = 1 + rng.below(3 * TXN_MAP_LINEAR as u64);
            for step in 0..rng.below(100) {
                let k = Atom::int(rng.below(keys) as i64).expect("small");
                let v = (round * 1000 + step) as u32;
                match reference.iter_mut().find(|e| e.0 == k) {
                    Some(e) => {
                        assert_eq!(map.get(k), Some(&e.1));
                        *map.get_mut(k).expect("kept") = v;
                        e.1 = v;
                    }
                    None => {
                        assert!(!map.contains(k));
                        map.push(k, v);
                        reference.push((k, v));
                    }
                }
                assert_eq!(map.entries(), &reference[..]);
            }
            for k in 0..keys as i64 + 2 {
                let k = Atom::int(k).expect("small");
                let want = reference.iter().find(|e| e.0 == k).map(|e| &e.1);
                assert_eq!(map.get(k), want);
            }
        }
    }

    /// After a big transaction, clearing for a small one gives the hash
    /// index back, so later clears cost the small one's size, not the big
    /// one's.
    #[test]
    fn a_big_transaction_leaves_no_big_index_behind() {
        let mut map: TxnMap<()> = TxnMap::default();
        let key = |k: i64| Atom::int(k).expect("small");
        for k in 0..10_000 {
            map.push(key(k), ());
        }
        map.clear();
        assert!(!map.contains(key(5)));
        for k in 0..20 {
            map.push(key(k), ());
        }
        assert!(map.contains(key(19)) && !map.contains(key(20)));
        map.clear();
        assert!(map.index.capacity() <= 4 * 64, "{}", map.index.capacity());
        for k in 0..20 {
            map.push(key(k), ());
        }
        assert_eq!(map.entries().len(), 20);
        assert!(map.contains(key(17)));
    }
}
