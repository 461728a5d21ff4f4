//! List-append inference, with Elle's semantics: per-key version orders from
//! the longest read, ww / wr / rw edges (including the initial empty state and
//! appends never read), and the non-cycle anomalies G1a, G1b, internal,
//! future-read, dirty-update, duplicate-elements, incompatible-order and
//! lost-update.

use super::txn::{list_value, lost_updates, ExtraGraph, ReadsCounted, TxnMap};
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
mod versions;

pub(crate) use cases::{dirty_updates, g1a_cases, g1b_cases, internal_cases};
use cases::{duplicates, thin_air_reads_indexed};
pub use cases::{thin_air_reads, unrevealed_appends};
use explain::AppendExplainer;
pub use unrevealed::{
    analyze_ordered, decide_open_orders, open_orders, OpenOrders, OrderDecision, MAX_ORDERS,
    ORDER_WORK,
};
use versions::{indexes, read_state, sorted_values, Indexes, KeyOrder, ReadStates, NOWHERE};

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

fn append_value(m: &Mop) -> Atom {
    match m.arg() {
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
                .all(|m| matches!(m.f(), MopFn::Read | MopFn::Append)),
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
        .map(|op| h.mops(op).iter().filter(|m| m.f() == MopFn::Append).count())
        .sum();
    let mut seen: HashSet<(Atom, Atom)> = HashSet::with_capacity(invoked_appends);
    for (i, op) in h.ops.iter().enumerate() {
        if op.op_type != OpType::Invoke {
            continue;
        }
        for m in h.mops(op) {
            if m.f() == MopFn::Append && !seen.insert((m.key(), append_value(m))) {
                let k = h.atom_value(m.key());
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
        for m in h.mops(op).iter().filter(|m| m.f() == MopFn::Append) {
            let v = append_value(m);
            match last.entry(m.key()) {
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
///
/// The ops are checked in two halves, on two cores when one is free (issue
/// 23: a single pass was 0.08–0.11 s of a 1M-transaction check); the first
/// half's error, if any, is the one reported, and the second half compares
/// keys with the history's first key, as one pass would.
pub fn validate(h: &History) -> Result<(), crate::error::InputError> {
    validate_splitting_from(h, crate::par::SPLIT_FROM)
}

/// [`validate`], the ops cut in two from `split` ops on.
fn validate_splitting_from(h: &History, split: usize) -> Result<(), crate::error::InputError> {
    super::txn::validate_in_halves(h, split, |r, first_key| validate_ops(h, r, first_key))
}

/// [`validate`] over the ops at `range`; keys must have the class of
/// `first_key` (the history's first).
fn validate_ops(
    h: &History,
    range: std::ops::Range<usize>,
    first_key: Option<Atom>,
) -> Result<(), crate::error::InputError> {
    let mut keys = super::txn::OneKeyType::new(key_class);
    if let Some(k0) = first_key {
        // Sets the class every key must have; cannot fail.
        let _ = keys.check(h, k0);
    }
    for i in range {
        let Some(op) = h.ops.get(i) else { break };
        for m in h.mops(op) {
            if m.f() == MopFn::Read {
                if let MopArg::Atom(a) = m.arg() {
                    return Err(h.error_at(
                        i,
                        format!(
                            "expected a list or nil as the value of a list-append read, found {}",
                            pr_str(&h.atom_value(a))
                        ),
                    ));
                }
            }
            if let Err((k0, c0, k, class)) = keys.check(h, m.key()) {
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
    // needs only the history: Elle's preconditions (the indexes pass over
    // micro-ops other than reads and appends, so building them before
    // `verify` has spoken is harmless; its refusal wins), then Elle's
    // non-cycle checks as tasks whichever part is free takes
    // ([`case_tasks`]: run after the preconditions alone, they left the
    // indexes' part idle for a third of the phase). Then the data edges,
    // by chunks of the history whichever part is free takes, joined in
    // history order (the same list as one pass), the second part finding
    // the thin-air reads first ([`edge_chunks`]). The order graph's edges
    // are generated when the graph is built (`Inference::order`), never
    // listed (issue 23: listing and copying them was a tenth of the
    // inference of a 1M-transaction history).
    let next_case = std::sync::atomic::AtomicUsize::new(0);
    let (((idx, states, incompatible), mut done), (verified, other_done)) = crate::par::join(
        || {
            let indexed = indexes(h, orders);
            let done = case_tasks(h, &next_case);
            lap("indexes and non-cycle checks", t);
            (indexed, done)
        },
        || {
            let t = std::time::Instant::now();
            let verified = verify(h);
            lap("verify", t);
            let done = case_tasks(h, &next_case);
            lap("verify and non-cycle checks", t);
            (verified, done)
        },
    );
    done.extend(other_done);
    let mut cases = non_cycle_cases(done);
    lap("indexes joined", t);
    verified?;
    let next_chunk = std::sync::atomic::AtomicUsize::new(0);
    let (mut chunks, (more, thin_air)) = crate::par::join(
        || edge_chunks(h, &idx, &states, &next_chunk),
        || {
            let thin_air = exact.then(|| thin_air_reads_indexed(h, &idx));
            (edge_chunks(h, &idx, &states, &next_chunk), thin_air)
        },
    );
    drop(states);
    chunks.extend(more);
    chunks.sort_unstable_by_key(|&(chunk, _)| chunk);
    let mut edges = Vec::with_capacity(chunks.iter().map(|(_, e)| e.len()).sum());
    for (_, found) in chunks {
        edges.extend_from_slice(&found);
    }
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
        order: extra,
        anomalies,
        explainers,
        vertices: Vec::new(),
    })
}

/// Whether an op may have taken effect (`:ok` or `:info`).
fn possible(h: &History, i: usize) -> bool {
    matches!(h.ops[i].op_type, OpType::Ok | OpType::Info)
}

/// The non-cycle checks of [`analyze_with`] but incompatible orders, as
/// tasks: each a function of the history alone, numbered in Elle's order,
/// taken dearest first so that the two parts end close together (on the
/// 1M list-append history G1b took 0.17 s, duplicates 0.13, internal and
/// future reads 0.11, lost updates 0.09, dirty updates and G1a 0.02 each).
const CASE_TASKS: [usize; 6] = [4, 0, 1, 5, 2, 3];

/// Runs tasks of the non-cycle checks, taking the next one from `next`
/// until none is left; the results of those it ran (task, lists). Two
/// threads may share `next`: each task runs once, on one of them.
fn case_tasks(h: &History, next: &std::sync::atomic::AtomicUsize) -> Vec<(usize, Vec<Vec<Value>>)> {
    let mut done = Vec::new();
    loop {
        let taken = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let Some(&task) = CASE_TASKS.get(taken) else {
            return done;
        };
        let found = match task {
            0 => vec![duplicates(h, |i| possible(h, i))],
            1 => {
                let (internal, future) = internal_cases(h);
                vec![internal, future]
            }
            2 => vec![dirty_updates(h)],
            3 => vec![g1a_cases(h)],
            4 => vec![g1b_cases(h)],
            _ => vec![lost_updates(h, MopFn::Append, ReadsCounted::First)],
        };
        done.push((task, found));
    }
}

/// The non-cycle cases from every task's lists ([`case_tasks`]), named, in
/// the order Elle adds them, incompatible orders coming after the first.
fn non_cycle_cases(mut done: Vec<(usize, Vec<Vec<Value>>)>) -> [(&'static str, Vec<Value>); 8] {
    done.sort_unstable_by_key(|&(task, _)| task);
    debug_assert_eq!(done.len(), CASE_TASKS.len());
    let mut lists = done.into_iter().flat_map(|(_, found)| found);
    let mut next = || lists.next().unwrap_or_default();
    [
        ("duplicate-elements", next()),
        ("internal", next()),
        ("future-read", next()),
        ("dirty-update", next()),
        ("G1a", next()),
        ("G1b", next()),
        ("lost-update", next()),
        // Thin-air reads, when asked for: [`thin_air_reads_indexed`] fills
        // them in once the data edges' indexes exist.
        ("G1a", Vec::new()),
    ]
}

/// Edges `(from, to, relationships)`.
type EdgeList = Vec<(u32, u32, Rels)>;

/// How many chunks [`edge_chunks`] cuts a history's ops into: enough that
/// the two parts end close together, few enough that joining the chunks
/// costs nothing much.
const EDGE_CHUNKS: usize = 32;

/// Finds the data edges ([`op_edges`]) of chunks of the history's ops,
/// taking the next chunk from `next` until none is left; the chunks it
/// took (their number, their edges). Two threads may share `next`: each
/// chunk is taken once.
fn edge_chunks(
    h: &History,
    idx: &Indexes,
    states: &ReadStates,
    next: &std::sync::atomic::AtomicUsize,
) -> Vec<(usize, EdgeList)> {
    let n = h.ops.len();
    let mut done = Vec::new();
    loop {
        let chunk = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if chunk >= EDGE_CHUNKS {
            return done;
        }
        let range = n * chunk / EDGE_CHUNKS..n * (chunk + 1) / EDGE_CHUNKS;
        done.push((chunk, op_edges(h, idx, states, range)));
    }
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
        let first = match op.value {
            OpValue::Mops { start, .. } => start as usize,
            _ => 0,
        };
        for (&at, m) in states.positions[first..].iter().zip(h.mops(op)) {
            match m.f() {
                MopFn::Append => {
                    // The previous element, its writer and its state at
                    // the element's place, found when the writers were
                    // (issue 23).
                    let (prev, writer, state) = match idx.orders.get(&m.key()) {
                        Some(o) => Indexes::previous_at(o, at),
                        None => (None, None, None),
                    };
                    if let Some(w) = writer.filter(|&w| w != i) {
                        edges.push((w, i, Rels::WW));
                    }
                    for r in states.rw_deps(i, m.key(), prev, state) {
                        edges.push((r, i, Rels::RW));
                    }
                }
                MopFn::Read => {
                    // Most reads without a place read the initial state:
                    // `wr_dep` answers those without a lookup.
                    let o = (at != NOWHERE).then(|| idx.orders.get(&m.key())).flatten();
                    let w = match o {
                        Some(o) => Indexes::wr_dep_at(o, i, at),
                        None => idx.wr_dep(h, i, m),
                    };
                    if let Some(w) = w {
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
