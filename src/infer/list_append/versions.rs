//! List-append's version orders (Elle's `sorted-values`: each key's
//! longest read), the writer of each element and the ops reading each
//! state: the indexes the ww, wr and rw edges come from.

use super::{append_value, lap, possible, Elem};
use crate::edn::order::{clojure_hash_order, clojure_hasheq};
use crate::infer::txn::list_value;
use crate::model::{Atom, History, Mop, MopArg, MopFn, OpType, OpValue, NO_OP};
use hashbrown::{HashMap, HashSet};

/// The inferred version order of one key.
#[derive(Default, Debug)]
pub(super) struct KeyOrder {
    /// Elements in append order (distinct elements of the longest read).
    pub(super) values: Vec<Atom>,
    /// Position of each element in `values` (u32: these maps hold every
    /// element of a history).
    pub(super) indices: HashMap<Atom, u32>,
    /// The last possible op that appended each element of `values`
    /// ([`NO_OP`] if none): filled by [`indexes`] once the orders are
    /// final, so that no (key, element) map of every append is needed.
    pub(super) writers: Vec<u32>,
    /// The number of the key's initial read state; the state after
    /// `values[i]` is this plus `i + 1` ([`ReadStates`]).
    pub(super) first_state: u32,
}

impl KeyOrder {
    /// The order of `chosen`'s distinct elements (writers and states are
    /// filled in later, by [`indexes`]).
    fn of(chosen: Vec<Atom>) -> KeyOrder {
        let mut values = Vec::with_capacity(chosen.len());
        let mut indices = HashMap::with_capacity(chosen.len());
        for v in chosen {
            if let hashbrown::hash_map::Entry::Vacant(e) = indices.entry(v) {
                e.insert(values.len() as u32);
                values.push(v);
            }
        }
        KeyOrder {
            values,
            indices,
            writers: Vec::new(),
            first_state: 0,
        }
    }
}

/// No place in a version order ([`ReadStates::positions`]).
pub(super) const NOWHERE: u32 = u32::MAX;

/// Sorted observed values per key, as Elle's `sorted-values`, reduced to
/// what is needed: the version order, and the first incompatible pair.
pub(super) struct SortedValues {
    pub(super) orders: HashMap<Atom, KeyOrder>,
    pub(super) incompatible: Vec<Incompatible>,
}

pub(super) fn is_prefix(a: &[Atom], b: &[Atom]) -> bool {
    a.len() <= b.len() && &b[..a.len()] == a
}

/// Elle's `sorted-values` over the ops selected by `include`, followed by
/// `incompatible-orders` and `append-index`.
pub(super) fn sorted_values(h: &History, include: impl Fn(usize) -> bool) -> SortedValues {
    // Longest read per key, and whether every read is a prefix of it.
    // Each key's non-empty reads, grouped by key in history order: first
    // as (key number, start, len) in history order, then counting-sorted
    // (a `Vec` per key grew by small steps, each a fresh allocation: a
    // third of this pass, issue 23).
    let mut key_numbers: HashMap<Atom, u32> = HashMap::new();
    let mut key_order: Vec<Atom> = Vec::new();
    let mut listed: Vec<(u32, u32, u32)> = Vec::new();
    let mut append_counts: HashMap<Atom, (u32, Atom)> = HashMap::new();
    for (i, op) in h.ops.iter().enumerate() {
        if !include(i) {
            continue;
        }
        for m in h.mops(op) {
            match (m.f(), m.arg()) {
                (MopFn::Read, MopArg::List { start, len }) if len > 0 => {
                    let number = *key_numbers.entry(m.key()).or_insert_with(|| {
                        key_order.push(m.key());
                        key_order.len() as u32 - 1
                    });
                    listed.push((number, start, len));
                }
                (MopFn::Append, arg) => {
                    let v = match arg {
                        MopArg::Atom(a) => a,
                        _ => Atom::default(),
                    };
                    let c = append_counts.entry(m.key()).or_insert((0, v));
                    c.0 += 1;
                }
                _ => {}
            }
        }
    }
    drop(key_numbers);
    let mut firsts = vec![0u32; key_order.len() + 1];
    for &(number, _, _) in &listed {
        firsts[number as usize + 1] += 1;
    }
    for i in 1..firsts.len() {
        firsts[i] += firsts[i - 1];
    }
    let mut reads = vec![(0u32, 0u32); listed.len()];
    {
        let mut next = firsts.clone();
        for &(number, start, len) in &listed {
            let at = &mut next[number as usize];
            reads[*at as usize] = (start, len);
            *at += 1;
        }
    }
    drop(listed);
    let mut orders = HashMap::new();
    let mut incompatible = Vec::new();
    for (&k, &(count, v)) in &append_counts {
        if count == 1 {
            // A single append: the key's versions are [] then [v], whatever
            // the reads say (Elle lets this override the reads).
            orders.insert(k, KeyOrder::of(vec![v]));
        }
    }
    for (number, k) in key_order.into_iter().enumerate() {
        if orders.contains_key(&k) {
            continue;
        }
        let rs = &reads[firsts[number] as usize..firsts[number + 1] as usize];
        let chosen = longest_read(h, k, rs, &mut incompatible);
        orders.insert(k, KeyOrder::of(chosen));
    }
    SortedValues {
        orders,
        incompatible,
    }
}

/// The indices the explainers need, kept for the cycle search: the version
/// orders with their writers, and the writers of elements outside them.
/// (The read-state index the rw edges come from is dropped once they are
/// built: the explainer finds a reader from its micro-ops instead.)
pub(super) struct Indexes {
    pub(super) orders: HashMap<Atom, KeyOrder>,
    /// (key, element) → the last ok/info op that appended it, for elements
    /// not in the key's version order (appends no read shows, mostly).
    pub(super) other_writes: HashMap<(Atom, Atom), u32>,
    /// How many read states the version orders number (each key's initial
    /// state and one after each of its elements).
    pub(super) states: u32,
}

impl Indexes {
    /// The orders, every writer unset, their read states numbered.
    pub(super) fn new(mut orders: HashMap<Atom, KeyOrder>) -> Indexes {
        let mut states = 0u32;
        for o in orders.values_mut() {
            o.writers = vec![NO_OP; o.values.len()];
            o.first_state = states;
            states += o.values.len() as u32 + 1;
        }
        Indexes {
            orders,
            other_writes: HashMap::new(),
            states,
        }
    }

    /// The number of the read state of `k` that ends with `last` (`None`:
    /// the initial state), when `k` has a version order that holds it, and
    /// where `last` is in that order ([`NOWHERE`] for the initial state).
    pub(super) fn state(&self, k: Atom, last: Elem) -> Option<(u32, u32)> {
        let o = self.orders.get(&k)?;
        match last {
            None => Some((o.first_state, NOWHERE)),
            Some(e) => o.indices.get(&e).map(|&i| (o.first_state + 1 + i, i)),
        }
    }

    /// Records `op` as the last op (so far) that appended `v` to `k`;
    /// returns where `v` is in `k`'s version order ([`NOWHERE`]: it is
    /// not, or `k` has none).
    pub(super) fn set_writer(&mut self, k: Atom, v: Atom, op: u32) -> u32 {
        if let Some(o) = self.orders.get_mut(&k) {
            if let Some(&i) = o.indices.get(&v) {
                o.writers[i as usize] = op;
                return i;
            }
        }
        self.other_writes.insert((k, v), op);
        NOWHERE
    }

    /// The last ok/info op that appended `v` to `k`.
    pub(super) fn writer(&self, k: Atom, v: Atom) -> Option<u32> {
        if let Some(o) = self.orders.get(&k) {
            if let Some(&i) = o.indices.get(&v) {
                let w = o.writers[i as usize];
                return (w != NO_OP).then_some(w);
            }
        }
        self.other_writes.get(&(k, v)).copied()
    }

    /// The element appended just before `v` on `k` (Elle's
    /// `previously-appended-element`), with its writer.
    pub(super) fn previous_with_writer(&self, k: Atom, v: Atom) -> (Elem, Option<u32>) {
        let (previous, writer, _) = self.previous_in_order(k, v);
        (previous, writer)
    }

    /// [`Indexes::previous_with_writer`], and the number of the read state
    /// that ends with that element when `k` has a version order (as
    /// [`Indexes::state`]: found with it, not looked up again).
    pub(super) fn previous_in_order(&self, k: Atom, v: Atom) -> (Elem, Option<u32>, Option<u32>) {
        let Some(o) = self.orders.get(&k) else {
            return (None, None, None);
        };
        let at = o.indices.get(&v).copied().unwrap_or(NOWHERE);
        Self::previous_at(o, at)
    }

    /// [`Indexes::previous_in_order`] of the element at `at` in `o`, the
    /// order of its key ([`NOWHERE`]: an element not in it).
    pub(super) fn previous_at(o: &KeyOrder, at: u32) -> (Elem, Option<u32>, Option<u32>) {
        let at = match at {
            0 => return (None, None, Some(o.first_state)),
            NOWHERE if o.values.is_empty() => return (None, None, Some(o.first_state)),
            NOWHERE => o.values.len() - 1,
            i => i as usize - 1,
        };
        let w = o.writers[at];
        let state = o.first_state + 1 + at as u32;
        (Some(o.values[at]), (w != NO_OP).then_some(w), Some(state))
    }

    /// The element appended just before `v` on `k` (Elle's
    /// `previously-appended-element`).
    pub(super) fn previous(&self, k: Atom, v: Atom) -> Elem {
        self.previous_with_writer(k, v).0
    }

    pub(super) fn ww_dep(&self, op: u32, k: Atom, v: Atom) -> Option<u32> {
        let w = self.previous_with_writer(k, v).1?;
        (w != op).then_some(w)
    }

    /// [`Indexes::wr_dep`] of a read whose last element is at `at` in
    /// its key's order `o` (known from [`ReadStates::positions`]).
    pub(super) fn wr_dep_at(o: &KeyOrder, op: u32, at: u32) -> Option<u32> {
        let w = o.writers[at as usize];
        (w != NO_OP && w != op).then_some(w)
    }

    pub(super) fn wr_dep(&self, h: &History, op: u32, m: &Mop) -> Option<u32> {
        let last = *h.list(m.arg()).last()?;
        let w = self.writer(m.key(), last)?;
        (w != op).then_some(w)
    }
}

/// Whether read micro-op `m` of op `i` is one of the reads rw edges start
/// from (an `:info` op's unknown `nil` read is not), and the state it saw:
/// the key's last element, `None` for the initial state.
pub(super) fn read_state(h: &History, i: usize, m: &Mop) -> Option<Elem> {
    if h.ops[i].op_type == OpType::Info && m.arg() == MopArg::Nil {
        return None;
    }
    Some(h.list(m.arg()).last().copied())
}

/// The readers of every state grouped by state, in history order within a
/// state (a counting sort of `pairs`, (state number, reader) in history
/// order, over `states` states): each state's range in the readers, and
/// the readers.
pub(super) fn group_readers(states: usize, pairs: &[(u32, u32)]) -> (Vec<(u32, u32)>, Vec<u32>) {
    let mut ranges = vec![(0u32, 0u32); states];
    for &(state, _) in pairs {
        ranges[state as usize].1 += 1;
    }
    let mut start = 0;
    for range in &mut ranges {
        range.0 = start;
        start += range.1;
    }
    let mut next: Vec<u32> = ranges.iter().map(|r| r.0).collect();
    let mut readers = vec![0u32; pairs.len()];
    for &(state, reader) in pairs {
        let at = &mut next[state as usize];
        readers[*at as usize] = reader;
        *at += 1;
    }
    (ranges, readers)
}

/// An incompatible-order case before it becomes a value: the key and two
/// reads that disagree.
pub(super) type Incompatible = (Atom, Vec<Atom>, Vec<Atom>);

/// The readers of each read state, for the rw edges (dropped once they are
/// built).
pub(super) struct ReadStates {
    /// Each read state's range in `readers`, by state number: a key's
    /// states in its version order are numbered by [`Indexes::state`] (no
    /// map of every state: an append's state comes with its previous
    /// element, issue 23); the others, after them, by `others`.
    pub(super) ranges: Vec<(u32, u32)>,
    /// (key, last element or initial state) → the number of a state read
    /// outside the version orders: a key without one (whose initial state
    /// an append follows), or an element not in its key's order (which no
    /// append follows: counted, never asked for).
    pub(super) others: HashMap<(Atom, Elem), u32>,
    /// The readers of each state, a state's in history order.
    pub(super) readers: Vec<u32>,
    /// By micro-op (its place in the history's), where the element it
    /// appends, or the last element it reads, is in its key's version
    /// order ([`NOWHERE`]: not there, no order, or no such element), so
    /// that the edges look it up once (issue 23: a hash lookup per
    /// micro-op, in a table of every element).
    pub(super) positions: Vec<u32>,
}

impl ReadStates {
    /// The ops other than `op` that read `k` in state `prev` (the state
    /// just before an append to `k`: [`Indexes::previous_in_order`]), in
    /// history order; `state` is that state's number when it gave one.
    pub(super) fn rw_deps(
        &self,
        op: u32,
        k: Atom,
        prev: Elem,
        state: Option<u32>,
    ) -> impl Iterator<Item = u32> + '_ {
        let state = state.or_else(|| self.others.get(&(k, prev)).copied());
        let (start, len) = state.map_or((0, 0), |s| self.ranges[s as usize]);
        self.readers[start as usize..(start + len) as usize]
            .iter()
            .copied()
            .filter(move |&r| r != op)
    }
}

/// The indexes [`analyze_with`]'s data edges (ww, rw, wr) come from: the
/// version orders with their writers (kept for explanations), the read
/// states (dropped once the edges are built), and the keys whose reads
/// disagree.
pub(super) fn indexes(
    h: &History,
    orders: impl FnOnce(&mut HashMap<Atom, KeyOrder>),
) -> (Indexes, ReadStates, Vec<Incompatible>) {
    let is_possible = |i: usize| possible(h, i);
    let t = std::time::Instant::now();
    // Indices over the possible (ok + info) ops.
    let mut sv = sorted_values(h, is_possible);
    orders(&mut sv.orders);
    lap("version orders", t);
    let incompatible = sv.incompatible;
    let mut idx = Indexes::new(sv.orders);
    // (state, reader) pairs, then the readers grouped by state.
    let mut others: HashMap<(Atom, Elem), u32> = HashMap::new();
    let mut read_pairs: Vec<(u32, u32)> = Vec::new();
    let mut positions = vec![NOWHERE; h.mops.len()];
    // The states a big op read already: each reader once per state (an op
    // reading one state thousands of times was as many readers, and every
    // append's rw edges walked them all: quadratic in the op's size).
    let mut read_by_op: HashSet<u32> = HashSet::new();
    for (i, op) in h.ops.iter().enumerate() {
        if !is_possible(i) {
            continue;
        }
        let first = match op.value {
            OpValue::Mops { start, .. } => start as usize,
            _ => 0,
        };
        let (pairs_before, big) = (read_pairs.len(), h.mops(op).len() > super::cases::BIG_TXN);
        if big {
            // Only big ops fill it (clearing it per op would cost its
            // capacity each time, once one big op grew it).
            read_by_op.clear();
        }
        for (at, m) in (first..).zip(h.mops(op)) {
            match m.f() {
                MopFn::Append => {
                    positions[at] = idx.set_writer(m.key(), append_value(m), i as u32);
                }
                MopFn::Read => {
                    let Some(last) = read_state(h, i, m) else {
                        continue;
                    };
                    let state = match idx.state(m.key(), last) {
                        Some((state, place)) => {
                            positions[at] = place;
                            state
                        }
                        None => {
                            let next = idx.states + others.len() as u32;
                            *others.entry((m.key(), last)).or_insert(next)
                        }
                    };
                    let again = if big {
                        !read_by_op.insert(state)
                    } else {
                        read_pairs[pairs_before..].contains(&(state, i as u32))
                    };
                    if !again {
                        read_pairs.push((state, i as u32));
                    }
                }
                _ => {}
            }
        }
    }
    let (ranges, readers) = group_readers(idx.states as usize + others.len(), &read_pairs);
    drop(read_pairs);
    let states = ReadStates {
        ranges,
        others,
        readers,
        positions,
    };
    lap("version orders, writers and read states", t);
    (idx, states, incompatible)
}

/// The version order `k`'s reads `rs` (ranges in the elements) give:
/// its longest read when every read is a prefix of it, else Elle's choice
/// (the longest distinct read in Clojure's set order, stable-sorted by
/// length), the first pair that disagrees going to `incompatible`.
fn longest_read(
    h: &History,
    k: Atom,
    rs: &[(u32, u32)],
    incompatible: &mut Vec<Incompatible>,
) -> Vec<Atom> {
    let slice = |&(s, l): &(u32, u32)| &h.elements[s as usize..(s + l) as usize];
    let longest = rs.iter().max_by_key(|r| r.1).copied().unwrap_or((0, 0));
    // A read stored where a prefix of the longest one is (the reader
    // stores a prefix of the longest read so far inside it) is a prefix
    // too when it is no longer: no elements compared (most reads).
    let mut known = longest;
    let all_prefix = rs.iter().all(|&r| {
        if r.0 == longest.0 || (r.0 == known.0 && r.1 <= known.1) {
            return true;
        }
        let prefix = is_prefix(slice(&r), slice(&longest));
        if prefix {
            known = r;
        }
        prefix
    });
    let longest = slice(&longest);
    if all_prefix {
        longest.to_vec()
    } else {
        // Replay Elle exactly: distinct values in Clojure set order,
        // stable-sorted by length; report the first non-prefix pair.
        let mut distinct: Vec<&[Atom]> = Vec::new();
        let mut seen: HashSet<&[Atom]> = HashSet::new();
        for r in rs {
            if seen.insert(slice(r)) {
                distinct.push(slice(r));
            }
        }
        clojure_hash_order(&mut distinct, |xs| clojure_hasheq(&list_value(h, xs)));
        distinct.sort_by_key(|xs| xs.len());
        if let Some(w) = distinct.windows(2).find(|w| !is_prefix(w[0], w[1])) {
            incompatible.push((k, w[0].to_vec(), w[1].to_vec()));
        }
        distinct.last().map(|xs| xs.to_vec()).unwrap_or_default()
    }
}
