//! List-append inference, with Elle's semantics: per-key version orders from
//! the longest read, ww / wr / rw edges (including the initial empty state and
//! appends never read), and the non-cycle anomalies G1a, G1b, internal,
//! future-read, dirty-update, duplicate-elements, incompatible-order and
//! lost-update.

use super::txn::{list_value, lost_updates, ExtraGraph};
use super::{Anomalies, Inference, PairExplainer, Refusal, Step, StepKind, StepText, Unanalyzable};
use crate::edn::order::{clojure_hash_order, clojure_hasheq};
use crate::edn::{pr_str, Value};
use crate::graph::Rels;
use crate::model::{Atom, History, Mop, MopArg, MopFn, OpType, OpValue, NO_OP};
use hashbrown::{HashMap, HashSet};

mod cases;
mod explain;
#[cfg(test)]
mod tests;
mod unrevealed;

pub(crate) use cases::{dirty_updates, g1a_cases, g1b_cases, internal_cases};
use cases::{duplicates, thin_air_reads_indexed};
pub use cases::{thin_air_reads, unrevealed_appends};
use explain::AppendExplainer;
pub use unrevealed::{
    analyze_ordered, decide_open_orders, open_orders, OpenOrders, OrderDecision, MAX_ORDERS,
    ORDER_WORK,
};

/// With `ELLERY_LA_TIMING` set, says on standard error how long a step of
/// the inference took (issue 23: where the time of a large check goes).
fn lap(step: &str, since: std::time::Instant) {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    if *ON.get_or_init(|| std::env::var_os("ELLERY_LA_TIMING").is_some()) {
        eprintln!(
            "list-append: {step}: {:.3} s",
            since.elapsed().as_secs_f64()
        );
    }
}

/// A list element or the initial (empty) state of a key.
type Elem = Option<Atom>;

/// The inferred version order of one key.
#[derive(Default, Debug)]
struct KeyOrder {
    /// Elements in append order (distinct elements of the longest read).
    values: Vec<Atom>,
    /// Position of each element in `values` (u32: these maps hold every
    /// element of a history).
    indices: HashMap<Atom, u32>,
    /// The last possible op that appended each element of `values`
    /// ([`NO_OP`] if none): filled by [`indexes`] once the orders are
    /// final, so that no (key, element) map of every append is needed.
    writers: Vec<u32>,
    /// The number of the key's initial read state; the state after
    /// `values[i]` is this plus `i + 1` ([`ReadStates`]).
    first_state: u32,
}

/// Sorted observed values per key, as Elle's `sorted-values`, reduced to
/// what is needed: the version order, and the first incompatible pair.
struct SortedValues {
    orders: HashMap<Atom, KeyOrder>,
    incompatible: Vec<(Atom, Vec<Atom>, Vec<Atom>)>,
}

fn is_prefix(a: &[Atom], b: &[Atom]) -> bool {
    a.len() <= b.len() && &b[..a.len()] == a
}

/// Elle's `sorted-values` over the ops selected by `include`, followed by
/// `incompatible-orders` and `append-index`.
fn sorted_values(h: &History, include: impl Fn(usize) -> bool) -> SortedValues {
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
            match (m.f, m.arg) {
                (MopFn::Read, MopArg::List { start, len }) if len > 0 => {
                    let number = *key_numbers.entry(m.key).or_insert_with(|| {
                        key_order.push(m.key);
                        key_order.len() as u32 - 1
                    });
                    listed.push((number, start, len));
                }
                (MopFn::Append, arg) => {
                    let v = match arg {
                        MopArg::Atom(a) => a,
                        _ => Atom::default(),
                    };
                    let c = append_counts.entry(m.key).or_insert((0, v));
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
            let mut indices = HashMap::new();
            indices.insert(v, 0);
            orders.insert(
                k,
                KeyOrder {
                    values: vec![v],
                    indices,
                    writers: Vec::new(),
                    first_state: 0,
                },
            );
        }
    }
    for (number, k) in key_order.into_iter().enumerate() {
        if orders.contains_key(&k) {
            continue;
        }
        let rs = &reads[firsts[number] as usize..firsts[number + 1] as usize];
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
        let chosen: Vec<Atom> = if all_prefix {
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
        };
        let mut values = Vec::with_capacity(chosen.len());
        let mut indices = HashMap::with_capacity(chosen.len());
        for v in chosen {
            if let hashbrown::hash_map::Entry::Vacant(e) = indices.entry(v) {
                e.insert(values.len() as u32);
                values.push(v);
            }
        }
        orders.insert(
            k,
            KeyOrder {
                values,
                indices,
                writers: Vec::new(),
                first_state: 0,
            },
        );
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
struct Indexes {
    orders: HashMap<Atom, KeyOrder>,
    /// (key, element) → the last ok/info op that appended it, for elements
    /// not in the key's version order (appends no read shows, mostly).
    other_writes: HashMap<(Atom, Atom), u32>,
    /// How many read states the version orders number (each key's initial
    /// state and one after each of its elements).
    states: u32,
}

impl Indexes {
    /// The orders, every writer unset, their read states numbered.
    fn new(mut orders: HashMap<Atom, KeyOrder>) -> Indexes {
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
    /// the initial state), when `k` has a version order that holds it.
    fn state(&self, k: Atom, last: Elem) -> Option<u32> {
        let o = self.orders.get(&k)?;
        match last {
            None => Some(o.first_state),
            Some(e) => o.indices.get(&e).map(|&i| o.first_state + 1 + i),
        }
    }

    /// Records `op` as the last op (so far) that appended `v` to `k`.
    fn set_writer(&mut self, k: Atom, v: Atom, op: u32) {
        if let Some(o) = self.orders.get_mut(&k) {
            if let Some(&i) = o.indices.get(&v) {
                o.writers[i as usize] = op;
                return;
            }
        }
        self.other_writes.insert((k, v), op);
    }

    /// The last ok/info op that appended `v` to `k`.
    fn writer(&self, k: Atom, v: Atom) -> Option<u32> {
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
    fn previous_with_writer(&self, k: Atom, v: Atom) -> (Elem, Option<u32>) {
        let (previous, writer, _) = self.previous_in_order(k, v);
        (previous, writer)
    }

    /// [`Indexes::previous_with_writer`], and the number of the read state
    /// that ends with that element when `k` has a version order (as
    /// [`Indexes::state`]: found with it, not looked up again).
    fn previous_in_order(&self, k: Atom, v: Atom) -> (Elem, Option<u32>, Option<u32>) {
        let Some(o) = self.orders.get(&k) else {
            return (None, None, None);
        };
        let at = match o.indices.get(&v) {
            Some(&0) => return (None, None, Some(o.first_state)),
            Some(&i) => i as usize - 1,
            None if o.values.is_empty() => return (None, None, Some(o.first_state)),
            None => o.values.len() - 1,
        };
        let w = o.writers[at];
        let state = o.first_state + 1 + at as u32;
        (Some(o.values[at]), (w != NO_OP).then_some(w), Some(state))
    }

    /// The element appended just before `v` on `k` (Elle's
    /// `previously-appended-element`).
    fn previous(&self, k: Atom, v: Atom) -> Elem {
        self.previous_with_writer(k, v).0
    }

    fn ww_dep(&self, op: u32, k: Atom, v: Atom) -> Option<u32> {
        let w = self.previous_with_writer(k, v).1?;
        (w != op).then_some(w)
    }

    fn wr_dep(&self, h: &History, op: u32, m: &Mop) -> Option<u32> {
        let last = *h.list(m.arg).last()?;
        let w = self.writer(m.key, last)?;
        (w != op).then_some(w)
    }
}

/// Whether read micro-op `m` of op `i` is one of the reads rw edges start
/// from (an `:info` op's unknown `nil` read is not), and the state it saw:
/// the key's last element, `None` for the initial state.
fn read_state(h: &History, i: usize, m: &Mop) -> Option<Elem> {
    if h.ops[i].op_type == OpType::Info && m.arg == MopArg::Nil {
        return None;
    }
    Some(h.list(m.arg).last().copied())
}

/// The readers of every state grouped by state, in history order within a
/// state (a counting sort of `pairs`, (state number, reader) in history
/// order, over `states` states): each state's range in the readers, and
/// the readers.
fn group_readers(states: usize, pairs: &[(u32, u32)]) -> (Vec<(u32, u32)>, Vec<u32>) {
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

fn append_value(m: &Mop) -> Atom {
    match m.arg {
        MopArg::Atom(a) => a,
        _ => Atom::default(),
    }
}

/// Elle's marker for the initial state of a list.
fn init_value() -> Value {
    Value::kw("elle.list-append/init")
}

/// Checks Elle's preconditions: only `:r`/`:append` micro-ops, and no
/// element appended twice to a key by invocations.
fn verify(h: &History) -> Result<(), Unanalyzable> {
    let mut bad = Vec::new();
    let mut first_bad = None;
    for (i, op) in h.ops.iter().enumerate() {
        let ok = match op.value {
            OpValue::Mops { .. } => h
                .mops(op)
                .iter()
                .all(|m| matches!(m.f, MopFn::Read | MopFn::Append)),
            OpValue::Nil => true,
            OpValue::Other(_) => false,
        };
        if !ok && bad.len() < 8 {
            bad.push(h.op_value(i));
            first_bad.get_or_insert(i);
        }
    }
    if !bad.is_empty() {
        return Err(Unanalyzable {
            result: Value::kw_map(vec![
                ("valid?", Value::kw("unknown")),
                ("type", Value::kw("unexpected-txn-micro-op-types")),
                (
                    "message",
                    Value::Str("history contained operations other than appends or reads".into()),
                ),
                ("examples", Value::Vector(bad)),
            ]),
            problem: first_bad.map(|i| {
                h.error_at(
                    i,
                    "expected only :r and :append micro-ops in a list-append history".into(),
                )
            }),
        });
    }
    if appends_grow_per_key(h) {
        return Ok(());
    }
    // Sized for every invoked append at once: growing a million-entry set
    // step by step rehashes it about twenty times (issue 23).
    let invoked_appends = h
        .ops
        .iter()
        .filter(|op| op.op_type == OpType::Invoke)
        .map(|op| h.mops(op).iter().filter(|m| m.f == MopFn::Append).count())
        .sum();
    let mut seen: HashSet<(Atom, Atom)> = HashSet::with_capacity(invoked_appends);
    for (i, op) in h.ops.iter().enumerate() {
        if op.op_type != OpType::Invoke {
            continue;
        }
        for m in h.mops(op) {
            if m.f == MopFn::Append && !seen.insert((m.key, append_value(m))) {
                let k = h.atom_value(m.key);
                let v = h.atom_value(append_value(m));
                return Err(Unanalyzable {
                    result: Value::kw_map(vec![
                        ("valid?", Value::kw("unknown")),
                        ("type", Value::kw("duplicate-appends")),
                        ("op", h.op_value(i)),
                        ("key", k.clone()),
                        ("value", v.clone()),
                        (
                            "message",
                            Value::Str(format!(
                                "value {} appended to key {} multiple times!",
                                clj_str(&v),
                                clj_str(&k)
                            )),
                        ),
                    ]),
                    problem: Some(h.error_at(
                        i,
                        format!(
                            "expected each element to be appended to a key once, but {} was appended to {} again",
                            pr_str(&v),
                            pr_str(&k)
                        ),
                    )),
                });
            }
        }
    }
    Ok(())
}

/// Whether each key's invoked appends add strictly growing elements, in
/// history order: then no element is appended twice to a key. Jepsen's
/// generators number each key's elements so, and this asks one small map
/// per append instead of inserting every append into one big set (a cache
/// miss each: a quarter of a second on a million transactions, issue 23).
/// When it does not hold, [`verify`] looks for the repeated append.
fn appends_grow_per_key(h: &History) -> bool {
    let mut last: HashMap<Atom, Atom> = HashMap::new();
    for op in h.ops.iter().filter(|op| op.op_type == OpType::Invoke) {
        for m in h.mops(op).iter().filter(|m| m.f == MopFn::Append) {
            let v = append_value(m);
            match last.entry(m.key) {
                hashbrown::hash_map::Entry::Occupied(mut e) if *e.get() < v => {
                    e.insert(v);
                }
                hashbrown::hash_map::Entry::Occupied(_) => return false,
                hashbrown::hash_map::Entry::Vacant(e) => {
                    e.insert(v);
                }
            }
        }
    }
    true
}

/// Clojure's `str`: strings print raw, everything else as `pr-str`.
fn clj_str(v: &Value) -> String {
    match v {
        Value::Str(s) => s.clone(),
        Value::Nil => String::new(),
        other => pr_str(other),
    }
}

/// One `incompatible-order` case: the key and two reads that disagree.
fn incompatible_case(h: &History, (k, a, b): (Atom, Vec<Atom>, Vec<Atom>)) -> Value {
    Value::kw_map(vec![
        ("key", h.atom_value(k)),
        (
            "values",
            Value::Vector(vec![list_value(h, &a), list_value(h, &b)]),
        ),
    ])
}

/// Elle's `incompatible-order` cases over the possible (`:ok` and `:info`)
/// ops: keys whose reads disagree on the order of appends.
pub(crate) fn incompatible_cases(h: &History) -> Vec<Value> {
    let is_possible = |i: usize| matches!(h.ops[i].op_type, OpType::Ok | OpType::Info);
    sorted_values(h, is_possible)
        .incompatible
        .into_iter()
        .map(|case| incompatible_case(h, case))
        .collect()
}

/// A coarse type of key, for the one-type-of-key rule.
fn key_class(v: &Value) -> &'static str {
    match v {
        Value::Int(_) | Value::BigInt(_) => "an integer",
        Value::Keyword(_) => "a keyword",
        Value::Str(_) => "a string",
        _ => "another kind of value",
    }
}

/// Rejects histories no list-append analysis can make sense of: reads whose
/// value is neither a list nor nil, and keys of mixed types (a sign of a
/// harness bug, e.g. keys turned into strings on one path).
pub fn validate(h: &History) -> Result<(), crate::error::InputError> {
    let mut keys = super::txn::OneKeyType::new(key_class);
    for (i, op) in h.ops.iter().enumerate() {
        for m in h.mops(op) {
            if m.f == MopFn::Read {
                if let MopArg::Atom(a) = m.arg {
                    return Err(h.error_at(
                        i,
                        format!(
                            "expected a list or nil as the value of a list-append read, found {}",
                            pr_str(&h.atom_value(a))
                        ),
                    ));
                }
            }
            if let Err((k0, c0, k, class)) = keys.check(h, m.key) {
                return Err(h.error_at(
                    i,
                    format!(
                        "expected every key to be {c0} like the first key, {}, found {}, which is {class}",
                        pr_str(&k0),
                        pr_str(&k)
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// Runs the full list-append analysis.
pub fn analyze(h: &History, extra: ExtraGraph) -> Result<Inference<'static>, Refusal> {
    analyze_with(h, extra, false, |_| {})
}

/// [`analyze`], with `orders` rewriting the inferred version orders before
/// any edge is built (see [`analyze_ordered`]), plus [`thin_air_reads`]
/// when `exact`.
fn analyze_with(
    h: &History,
    extra: ExtraGraph,
    exact: bool,
    orders: impl FnOnce(&mut HashMap<Atom, KeyOrder>) + Send,
) -> Result<Inference<'static>, Refusal> {
    let t = std::time::Instant::now();
    // Two phases of two parts each, on two cores when one is free (issue
    // 23; the same result on one thread). First the indexes beside what
    // needs only the history: Elle's preconditions, the non-cycle checks
    // and the order graph (the indexes pass over micro-ops other than
    // reads and appends, so building them before `verify` has spoken is
    // harmless; its refusal wins). Then the data edges of each half of the
    // history, joined in history order (the same list as one pass), the
    // thin-air reads beside the second part.
    let ((idx, states, incompatible), (verified, order, mut cases)) = crate::par::join(
        || indexes(h, orders),
        || {
            let t = std::time::Instant::now();
            let verified = verify(h);
            lap("verify", t);
            let order = extra.edges(h);
            lap("verify and order graph", t);
            let cases = non_cycle_cases(h);
            lap("verify, order graph and non-cycle checks", t);
            (verified, order, cases)
        },
    );
    lap("indexes joined", t);
    verified?;
    // The second part also finds the thin-air reads (about a quarter of
    // the edges' work on a generated history): it gets fewer ops then.
    let half = if exact {
        h.ops.len() / 8 * 5
    } else {
        h.ops.len() / 2
    };
    let (mut edges, (rest, thin_air)) = crate::par::join(
        || op_edges(h, &idx, &states, 0..half),
        || {
            let rest = op_edges(h, &idx, &states, half..h.ops.len());
            (rest, exact.then(|| thin_air_reads_indexed(h, &idx)))
        },
    );
    drop(states);
    edges.reserve_exact(rest.len() + order.len());
    edges.extend_from_slice(&rest);
    drop(rest);
    edges.extend(order);
    if let Some(found) = thin_air {
        cases[7].1 = found;
    }
    lap("edges joined", t);

    // Non-cycle anomalies, in the order Elle adds them to its map (thin-air
    // reads last, as G1a, as `analyze_exact` adds them).
    let mut anomalies = Anomalies::default();
    let [(kind, found), rest @ ..] = cases;
    anomalies.add_nonempty(kind, found);
    let incompatible: Vec<Value> = incompatible
        .into_iter()
        .map(|case| incompatible_case(h, case))
        .collect();
    anomalies.add_nonempty("incompatible-order", incompatible);
    for (kind, found) in rest {
        anomalies.add_nonempty(kind, found);
    }
    let mut explainers: Vec<Box<dyn PairExplainer>> = Vec::new();
    explainers.push(Box::new(AppendExplainer { idx }));
    extra.add_explainer(&mut explainers);
    Ok(Inference {
        edges,
        order: ExtraGraph::None,
        anomalies,
        explainers,
        vertices: Vec::new(),
    })
}

/// Whether an op may have taken effect (`:ok` or `:info`).
fn possible(h: &History, i: usize) -> bool {
    matches!(h.ops[i].op_type, OpType::Ok | OpType::Info)
}

/// [`analyze_with`]'s non-cycle checks but incompatible orders, in Elle's
/// order, incompatible orders coming after the first.
fn non_cycle_cases(h: &History) -> [(&'static str, Vec<Value>); 8] {
    let (internal, future) = internal_cases(h);
    [
        ("duplicate-elements", duplicates(h, |i| possible(h, i))),
        ("internal", internal),
        ("future-read", future),
        ("dirty-update", dirty_updates(h)),
        ("G1a", g1a_cases(h)),
        ("G1b", g1b_cases(h)),
        ("lost-update", lost_updates(h, MopFn::Append)),
        // Thin-air reads, when asked for: [`thin_air_reads_indexed`] fills
        // them in once the data edges' indexes exist.
        ("G1a", Vec::new()),
    ]
}

/// An incompatible-order case before it becomes a value: the key and two
/// reads that disagree.
type Incompatible = (Atom, Vec<Atom>, Vec<Atom>);

/// The readers of each read state, for the rw edges (dropped once they are
/// built).
struct ReadStates {
    /// Each read state's range in `readers`, by state number: a key's
    /// states in its version order are numbered by [`Indexes::state`] (no
    /// map of every state: an append's state comes with its previous
    /// element, issue 23); the others, after them, by `others`.
    ranges: Vec<(u32, u32)>,
    /// (key, last element or initial state) → the number of a state read
    /// outside the version orders: a key without one (whose initial state
    /// an append follows), or an element not in its key's order (which no
    /// append follows: counted, never asked for).
    others: HashMap<(Atom, Elem), u32>,
    /// The readers of each state, a state's in history order.
    readers: Vec<u32>,
}

impl ReadStates {
    /// The ops other than `op` that read `k` in state `prev` (the state
    /// just before an append to `k`: [`Indexes::previous_in_order`]), in
    /// history order; `state` is that state's number when it gave one.
    fn rw_deps(
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
fn indexes(
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
    for (i, op) in h.ops.iter().enumerate() {
        if !is_possible(i) {
            continue;
        }
        for m in h.mops(op) {
            match m.f {
                MopFn::Append => idx.set_writer(m.key, append_value(m), i as u32),
                MopFn::Read => {
                    let Some(last) = read_state(h, i, m) else {
                        continue;
                    };
                    let state = match idx.state(m.key, last) {
                        Some(state) => state,
                        None => {
                            let next = idx.states + others.len() as u32;
                            *others.entry((m.key, last)).or_insert(next)
                        }
                    };
                    read_pairs.push((state, i as u32));
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
    };
    lap("version orders, writers and read states", t);
    (idx, states, incompatible)
}

/// The data edges into the possible ops of `range` (positions in
/// `h.ops`), in history order.
fn op_edges(
    h: &History,
    idx: &Indexes,
    states: &ReadStates,
    range: std::ops::Range<usize>,
) -> Vec<(u32, u32, Rels)> {
    let mut edges = Vec::new();
    for i in range {
        if !possible(h, i) {
            continue;
        }
        let op = &h.ops[i];
        let i = i as u32;
        for m in h.mops(op) {
            match m.f {
                MopFn::Append => {
                    // The previous element and its writer, looked up
                    // once for both edges (issue 23).
                    let (prev, writer, state) = idx.previous_in_order(m.key, append_value(m));
                    if let Some(w) = writer.filter(|&w| w != i) {
                        edges.push((w, i, Rels::WW));
                    }
                    for r in states.rw_deps(i, m.key, prev, state) {
                        edges.push((r, i, Rels::RW));
                    }
                }
                MopFn::Read => {
                    if let Some(w) = idx.wr_dep(h, i, m) {
                        edges.push((w, i, Rels::WR));
                    }
                }
                _ => {}
            }
        }
    }
    edges
}

/// [`analyze`] plus [`thin_air_reads`] as G1a: what `--algorithm auto`
/// reports (Elle's answer, and invalid where a read shows an element nobody
/// appended, which Elle calls valid).
pub fn analyze_exact(h: &History, extra: ExtraGraph) -> Result<Inference<'static>, Refusal> {
    analyze_with(h, extra, true, |_| {})
}
