//! List-append inference, with Elle's semantics: per-key version orders from
//! the longest read, ww / wr / rw edges (including the initial empty state and
//! appends never read), and the non-cycle anomalies G1a, G1b, internal,
//! future-read, dirty-update, duplicate-elements, incompatible-order and
//! lost-update.

use super::order_graphs::{process_edges, realtime_edges, ProcessExplainer, RealtimeExplainer};
use super::{Anomalies, Inference, PairExplainer, Step, StepKind, StepText, Unanalyzable};
use crate::edn::{pr_str, Value};
use crate::graph::order::{clojure_hash_order, clojure_hasheq, clojure_map_order};
use crate::graph::Rels;
use crate::model::{Atom, History, Mop, MopArg, MopFn, OpType, OpValue};
use hashbrown::{HashMap, HashSet};

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

/// A list element or the initial (empty) state of a key.
type Elem = Option<Atom>;

/// The inferred version order of one key.
#[derive(Default, Debug)]
struct KeyOrder {
    /// Elements in append order (distinct elements of the longest read).
    values: Vec<Atom>,
    /// Position of each element in `values`.
    indices: HashMap<Atom, usize>,
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

fn list_value(h: &History, xs: &[Atom]) -> Value {
    Value::Vector(xs.iter().map(|&a| h.atom_value(a)).collect())
}

/// Elle's `sorted-values` over the ops selected by `include`, followed by
/// `incompatible-orders` and `append-index`.
fn sorted_values(h: &History, include: impl Fn(usize) -> bool) -> SortedValues {
    // Longest read per key, and whether every read is a prefix of it.
    let mut reads: HashMap<Atom, Vec<(u32, u32)>> = HashMap::new();
    let mut append_counts: HashMap<Atom, (u32, Atom)> = HashMap::new();
    let mut key_order: Vec<Atom> = Vec::new();
    for (i, op) in h.ops.iter().enumerate() {
        if !include(i) {
            continue;
        }
        for m in h.mops(op) {
            match (m.f, m.arg) {
                (MopFn::Read, MopArg::List { start, len }) if len > 0 => {
                    let e = reads.entry(m.key).or_insert_with(|| {
                        key_order.push(m.key);
                        Vec::new()
                    });
                    e.push((start, len));
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
                },
            );
        }
    }
    for k in key_order {
        if orders.contains_key(&k) {
            continue;
        }
        let rs = &reads[&k];
        let slice = |&(s, l): &(u32, u32)| &h.elements[s as usize..(s + l) as usize];
        let longest = rs.iter().max_by_key(|r| r.1).map(slice).unwrap_or(&[]);
        let all_prefix = rs.iter().all(|r| is_prefix(slice(r), longest));
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
                e.insert(values.len());
                values.push(v);
            }
        }
        orders.insert(k, KeyOrder { values, indices });
    }
    SortedValues {
        orders,
        incompatible,
    }
}

/// The indices the graph and explainers need.
struct Indexes {
    orders: HashMap<Atom, KeyOrder>,
    /// (key, element) → the last ok/info op that appended it.
    writes: HashMap<(Atom, Atom), u32>,
    /// (key, last element or initial state) → ops that read that state.
    reads: HashMap<(Atom, Elem), Vec<u32>>,
}

impl Indexes {
    /// The element appended just before `v` on `k` (Elle's
    /// `previously-appended-element`).
    fn previous(&self, k: Atom, v: Atom) -> Elem {
        match self.orders.get(&k) {
            Some(o) => match o.indices.get(&v) {
                Some(&0) => None,
                Some(&i) => Some(o.values[i - 1]),
                None => o.values.last().copied(),
            },
            None => None,
        }
    }

    fn ww_dep(&self, op: u32, k: Atom, v: Atom) -> Option<u32> {
        let prev = self.previous(k, v)?;
        let w = *self.writes.get(&(k, prev))?;
        (w != op).then_some(w)
    }

    fn wr_dep(&self, h: &History, op: u32, m: &Mop) -> Option<u32> {
        let last = *h.list(m.arg).last()?;
        let w = *self.writes.get(&(m.key, last))?;
        (w != op).then_some(w)
    }

    fn rw_deps(&self, op: u32, k: Atom, v: Atom) -> impl Iterator<Item = u32> + '_ {
        let prev = self.previous(k, v);
        self.reads
            .get(&(k, prev))
            .into_iter()
            .flatten()
            .copied()
            .filter(move |&r| r != op)
    }
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
    let mut seen: HashSet<(Atom, Atom)> = HashSet::new();
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
    let mut keys = super::OneKeyType::new(key_class);
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
pub fn analyze(h: &History, extra: ExtraGraph) -> Result<Inference<'static>, Unanalyzable> {
    verify(h)?;
    let n = h.ops.len();
    let is_possible = |i: usize| matches!(h.ops[i].op_type, OpType::Ok | OpType::Info);
    let mut anomalies = Anomalies::default();

    // Indices over the possible (ok + info) ops.
    let sv = sorted_values(h, is_possible);
    let mut writes = HashMap::new();
    let mut reads: HashMap<(Atom, Elem), Vec<u32>> = HashMap::new();
    for (i, op) in h.ops.iter().enumerate() {
        if !is_possible(i) {
            continue;
        }
        for m in h.mops(op) {
            match m.f {
                MopFn::Append => {
                    writes.insert((m.key, append_value(m)), i as u32);
                }
                MopFn::Read => {
                    if op.op_type == OpType::Info && m.arg == MopArg::Nil {
                        continue;
                    }
                    let last = h.list(m.arg).last().copied();
                    reads.entry((m.key, last)).or_default().push(i as u32);
                }
                _ => {}
            }
        }
    }
    let incompatible = sv.incompatible;
    let idx = Indexes {
        orders: sv.orders,
        writes,
        reads,
    };

    // Cycle-graph edges.
    let mut edges = Vec::new();
    for (i, op) in h.ops.iter().enumerate() {
        if !is_possible(i) {
            continue;
        }
        let i = i as u32;
        for m in h.mops(op) {
            match m.f {
                MopFn::Append => {
                    let v = append_value(m);
                    if let Some(w) = idx.ww_dep(i, m.key, v) {
                        edges.push((w, i, Rels::WW));
                    }
                    for r in idx.rw_deps(i, m.key, v) {
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
    let mut explainers: Vec<Box<dyn PairExplainer>> = Vec::new();
    match extra {
        ExtraGraph::None => {}
        ExtraGraph::Process => edges.extend(process_edges(h)),
        ExtraGraph::Realtime => edges.extend(realtime_edges(h)),
    }
    let _ = n;

    // Non-cycle anomalies, in the order Elle adds them to its map.
    let dups = duplicates(h, is_possible);
    anomalies.add_nonempty("duplicate-elements", dups);
    let incompatible: Vec<Value> = incompatible
        .into_iter()
        .map(|case| incompatible_case(h, case))
        .collect();
    anomalies.add_nonempty("incompatible-order", incompatible);
    let (internal, future) = internal_cases(h);
    anomalies.add_nonempty("internal", internal);
    anomalies.add_nonempty("future-read", future);
    anomalies.add_nonempty("dirty-update", dirty_updates(h));
    anomalies.add_nonempty("G1a", g1a_cases(h));
    anomalies.add_nonempty("G1b", g1b_cases(h));
    anomalies.add_nonempty("lost-update", lost_updates(h, MopFn::Append));

    explainers.push(Box::new(AppendExplainer { idx }));
    match extra {
        ExtraGraph::None => {}
        ExtraGraph::Process => explainers.push(Box::new(ProcessExplainer)),
        ExtraGraph::Realtime => explainers.push(Box::new(RealtimeExplainer)),
    }
    Ok(Inference {
        edges,
        anomalies,
        explainers,
        vertices: Vec::new(),
    })
}

fn duplicates(h: &History, include: impl Fn(usize) -> bool) -> Vec<Value> {
    let mut out = Vec::new();
    let mut scratch: Vec<Atom> = Vec::new();
    for (i, op) in h.ops.iter().enumerate() {
        if !include(i) {
            continue;
        }
        for m in h.mops(op) {
            if m.f != MopFn::Read {
                continue;
            }
            let xs = h.list(m.arg);
            if xs.len() < 2 {
                continue;
            }
            scratch.clear();
            scratch.extend_from_slice(xs);
            scratch.sort_unstable();
            if !scratch.windows(2).any(|w| w[0] == w[1]) {
                continue;
            }
            let mut dups: Vec<(Value, i64)> = Vec::new();
            for run in scratch.chunk_by(|a, b| a == b) {
                if run.len() > 1 {
                    dups.push((h.atom_value(run[0]), run.len() as i64));
                }
            }
            dups.sort_by(|a, b| compare_values(&a.0, &b.0));
            out.push(Value::kw_map(vec![
                ("op", h.op_value(i)),
                ("mop", h.mop_value(m)),
                (
                    "duplicates",
                    Value::Map(dups.into_iter().map(|(v, c)| (v, Value::Int(c))).collect()),
                ),
            ]));
        }
    }
    out
}

/// Clojure's `compare` for the scalar values used as list elements.
fn compare_values(a: &Value, b: &Value) -> std::cmp::Ordering {
    match (a, b) {
        (Value::Int(x), Value::Int(y)) => x.cmp(y),
        (Value::Str(x), Value::Str(y)) => x.cmp(y),
        (Value::Keyword(x), Value::Keyword(y)) => x.cmp(y),
        _ => pr_str(a).cmp(&pr_str(b)),
    }
}

pub(crate) fn internal_cases(h: &History) -> (Vec<Value>, Vec<Value>) {
    let mut internal = Vec::new();
    let mut future = Vec::new();
    // Expected state per key: (key, unknown prefix?, known suffix). Txns are
    // small, so a vector beats a hash map here.
    let mut state: Vec<(Atom, bool, Vec<Atom>)> = Vec::new();
    for (i, op) in h.ops.iter().enumerate() {
        if op.op_type != OpType::Ok {
            continue;
        }
        let mops = h.mops(op);
        state.clear();
        for m in mops {
            let slot = state.iter().position(|(k, _, _)| *k == m.key);
            match m.f {
                MopFn::Append => match slot {
                    Some(j) => state[j].2.push(append_value(m)),
                    None => state.push((m.key, true, vec![append_value(m)])),
                },
                MopFn::Read => {
                    let v = h.list(m.arg);
                    let bad = match slot.map(|j| &state[j]) {
                        None => false,
                        Some((_, true, s)) => {
                            v.len() < s.len() || &v[v.len() - s.len()..] != s.as_slice()
                        }
                        Some((_, false, s)) => s.as_slice() != v,
                    };
                    if bad {
                        let (_, unknown, s) = &state[slot.expect("known state")];
                        let mut expected: Vec<Value> = Vec::new();
                        if *unknown {
                            expected.push(Value::Symbol("...".into()));
                        }
                        expected.extend(s.iter().map(|&a| h.atom_value(a)));
                        internal.push(Value::kw_map(vec![
                            ("op", h.op_value(i)),
                            ("mop", h.mop_value(m)),
                            ("expected", Value::Vector(expected)),
                        ]));
                        break;
                    }
                    match slot {
                        Some(j) => {
                            state[j].1 = false;
                            state[j].2.clear();
                            state[j].2.extend_from_slice(v);
                        }
                        None => state.push((m.key, false, v.to_vec())),
                    }
                }
                _ => {}
            }
        }
        // Future reads: an append of an element that an earlier read of the
        // same key in this txn already contained (the first such read).
        'mops: for (j, m) in mops.iter().enumerate() {
            if m.f != MopFn::Append {
                continue;
            }
            let v = append_value(m);
            for r in &mops[..j] {
                if r.f == MopFn::Read && r.key == m.key && h.list(r.arg).contains(&v) {
                    future.push(Value::kw_map(vec![
                        ("op", h.op_value(i)),
                        ("mop", h.mop_value(r)),
                        ("element", h.atom_value(v)),
                    ]));
                    break 'mops;
                }
            }
        }
    }
    (internal, future)
}

pub(crate) fn dirty_updates(h: &History) -> Vec<Value> {
    // A dirty update needs a failed append; most histories have none, and
    // then the second pass over all reads is not needed.
    let any_failed_append = h
        .ops
        .iter()
        .any(|op| op.op_type == OpType::Fail && h.mops(op).iter().any(|m| m.f == MopFn::Append));
    if !any_failed_append {
        return Vec::new();
    }
    let sv = sorted_values(h, |_| true);
    // Last non-invocation op appending each element (ok, info or fail).
    let mut writer: HashMap<(Atom, Atom), u32> = HashMap::new();
    for (i, op) in h.ops.iter().enumerate() {
        if op.op_type == OpType::Invoke {
            continue;
        }
        for m in h.mops(op) {
            if m.f == MopFn::Append {
                writer.insert((m.key, append_value(m)), i as u32);
            }
        }
    }
    let mut keys: Vec<Atom> = sv.orders.keys().copied().collect();
    keys.sort();
    clojure_hash_order(&mut keys, |&k| clojure_hasheq(&h.atom_value(k)));
    let mut out = Vec::new();
    for k in keys {
        let order = &sv.orders[&k];
        // (type of t1, t1 op, versions since)
        let mut t1: (OpType, Option<u32>) = (OpType::Ok, None);
        let mut vs: Vec<Atom> = Vec::new();
        for &v in &order.values {
            vs.push(v);
            let Some(&t2) = writer.get(&(k, v)) else {
                // An element nobody completed appending: we cannot say.
                continue;
            };
            let t2_type = h.ops[t2 as usize].op_type;
            match (t1.0, t2_type) {
                (OpType::Fail, OpType::Ok) => {
                    let first = t1.1.expect("a failed writer");
                    out.push(Value::kw_map(vec![
                        ("key", h.atom_value(k)),
                        ("values", list_value(h, &vs)),
                        (
                            "txns",
                            Value::Vector(vec![
                                h.op_value(first as usize),
                                Value::Symbol("...".into()),
                                h.op_value(t2 as usize),
                            ]),
                        ),
                    ]));
                    t1 = (t2_type, Some(t2));
                    vs = vec![v];
                }
                (_, OpType::Ok) | (OpType::Ok | OpType::Info, OpType::Fail) => {
                    t1 = (t2_type, Some(t2));
                    vs = vec![v];
                }
                _ => {}
            }
        }
    }
    out
}

pub(crate) fn g1a_cases(h: &History) -> Vec<Value> {
    let mut failed: HashMap<(Atom, Atom), u32> = HashMap::new();
    for (i, op) in h.ops.iter().enumerate() {
        if op.op_type == OpType::Fail {
            for m in h.mops(op) {
                if m.f == MopFn::Append {
                    failed.insert((m.key, append_value(m)), i as u32);
                }
            }
        }
    }
    let mut out = Vec::new();
    if failed.is_empty() {
        return out;
    }
    for (i, m) in ok_reads(h) {
        for &e in h.list(m.arg) {
            if let Some(&w) = failed.get(&(m.key, e)) {
                out.push(bad_read_case(h, i, m, w, e));
            }
        }
    }
    out
}

/// Every read micro-op of every `:ok` op, with the op's position.
fn ok_reads(h: &History) -> impl Iterator<Item = (usize, &Mop)> + '_ {
    h.ops
        .iter()
        .enumerate()
        .filter(|(_, op)| op.op_type == OpType::Ok)
        .flat_map(move |(i, op)| h.mops(op).iter().map(move |m| (i, m)))
        .filter(|(_, m)| m.f == MopFn::Read)
}

/// Thin-air reads: for every `:ok` read and every element of its list that
/// no op of the history appends to that key (whatever its outcome, completed
/// or not), the G1a case `{:op .., :mop .., :writer nil, :element e}`, in
/// history order. Every model that proscribes G1a (read committed and
/// stronger) forbids them: no transaction, committed or not, wrote the
/// element. Elle does not look for them (its G1a is a read of a `:fail`ed
/// append), so [`analyze`] does not either; [`analyze_exact`] does.
pub fn thin_air_reads(h: &History) -> Vec<Value> {
    let appended: HashSet<(Atom, Atom)> = h
        .mops
        .iter()
        .filter(|m| m.f == MopFn::Append)
        .filter_map(|m| match m.arg {
            MopArg::Atom(a) => Some((m.key, a)),
            _ => None,
        })
        .collect();
    let mut out = Vec::new();
    for (i, m) in ok_reads(h) {
        for &e in h.list(m.arg) {
            if !appended.contains(&(m.key, e)) {
                out.push(Value::kw_map(vec![
                    ("op", h.op_value(i)),
                    ("mop", h.mop_value(m)),
                    ("writer", Value::Nil),
                    ("element", h.atom_value(e)),
                ]));
            }
        }
    }
    out
}

/// [`analyze`] plus [`thin_air_reads`] as G1a: what `--algorithm auto`
/// reports (Elle's answer, and invalid where a read shows an element nobody
/// appended, which Elle calls valid).
pub fn analyze_exact(h: &History, extra: ExtraGraph) -> Result<Inference<'static>, Unanalyzable> {
    let mut inference = analyze(h, extra)?;
    inference.anomalies.add_nonempty("G1a", thin_air_reads(h));
    Ok(inference)
}

/// Keys whose version order the reads leave open: for each key, in order of
/// first append, the `:ok` ops (positions, in history order) that appended
/// an element no `:ok` read shows, when there are two or more. Every such
/// element comes after all shown ones, but their order among themselves is
/// a choice: Elle (and [`analyze`]) adds no ww edge between them, so a
/// cycle that every choice closes (e.g. two transactions that append to
/// the key, each with an rw edge to the other: G2-item as inferred, but
/// G-single under either order) goes unreported under models that allow
/// G2-item, such as snapshot isolation. An exact checker must try the
/// orders of these ops (or encode them as polygraph choices); unobserved
/// `:info` appends are a further choice (whether they happened), not listed.
pub fn unrevealed_appends(h: &History) -> Vec<(Atom, Vec<usize>)> {
    let mut shown: HashSet<(Atom, Atom)> = HashSet::new();
    for (_, m) in ok_reads(h) {
        shown.extend(h.list(m.arg).iter().map(|&e| (m.key, e)));
    }
    let mut keys: Vec<Atom> = Vec::new();
    let mut by_key: HashMap<Atom, Vec<usize>> = HashMap::new();
    for (i, op) in h.ops.iter().enumerate() {
        if op.op_type != OpType::Ok {
            continue;
        }
        for m in h.mops(op) {
            let MopArg::Atom(e) = m.arg else { continue };
            if m.f != MopFn::Append || shown.contains(&(m.key, e)) {
                continue;
            }
            let ops = by_key.entry(m.key).or_insert_with(|| {
                keys.push(m.key);
                Vec::new()
            });
            if ops.last() != Some(&i) {
                ops.push(i);
            }
        }
    }
    keys.into_iter()
        .filter_map(|k| {
            let ops = by_key.remove(&k).expect("a key with appends");
            (ops.len() > 1).then_some((k, ops))
        })
        .collect()
}

/// A G1a or G1b case: the op at `reader` read element `e`, written by the
/// op at `writer`, in micro-op `m`.
fn bad_read_case(h: &History, reader: usize, m: &Mop, writer: u32, e: Atom) -> Value {
    Value::kw_map(vec![
        ("op", h.op_value(reader)),
        ("mop", h.mop_value(m)),
        ("writer", h.op_value(writer as usize)),
        ("element", h.atom_value(e)),
    ])
}

pub(crate) fn g1b_cases(h: &History) -> Vec<Value> {
    // (key, element) → last op whose non-final append it was.
    let intermediate = super::intermediate_writes(h, MopFn::Append, append_value);
    let mut out = Vec::new();
    if intermediate.is_empty() {
        return out;
    }
    for (i, m) in ok_reads(h) {
        let Some(&e) = h.list(m.arg).last() else {
            continue;
        };
        if let Some(&w) = intermediate.get(&(m.key, e)) {
            if h.ops[w as usize].index != h.ops[i].index {
                out.push(bad_read_case(h, i, m, w, e));
            }
        }
    }
    out
}

/// Elle's `lost-update-cases`: committed transactions that read the same
/// value of a key and then wrote that key (`write` is the writing micro-op:
/// `:append` or `:w`).
pub(crate) fn lost_updates(h: &History, write: MopFn) -> Vec<Value> {
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
    /// The txns that read each value of a key, in insertion order.
    type ReadersByValue = Vec<(Seen, Vec<u32>)>;
    // key → readers by value, in insertion order.
    let mut by_key: Vec<(Atom, ReadersByValue)> = Vec::new();
    let mut key_slot: HashMap<Atom, usize> = HashMap::new();
    let mut first_read: Vec<(Atom, Seen)> = Vec::new();
    let mut written: Vec<Atom> = Vec::new();
    for (i, op) in h.ops.iter().enumerate() {
        if op.op_type != OpType::Ok {
            continue;
        }
        first_read.clear();
        written.clear();
        for m in h.mops(op) {
            let read = first_read
                .iter()
                .find(|(k, _)| *k == m.key)
                .map(|&(_, s)| s);
            if m.f == write && !written.contains(&m.key) {
                if let Some(seen) = read {
                    let slot = *key_slot.entry(m.key).or_insert_with(|| {
                        by_key.push((m.key, Vec::new()));
                        by_key.len() - 1
                    });
                    let vals = &mut by_key[slot].1;
                    let same = |s: &Seen| match (*s, seen) {
                        (Seen::One(a), Seen::One(b)) => a == b,
                        (a, b) => content(a) == content(b),
                    };
                    match vals.iter_mut().find(|(s, _)| same(s)) {
                        Some(e) => e.1.push(i as u32),
                        None => vals.push((seen, vec![i as u32])),
                    }
                    written.push(m.key);
                }
            } else if read.is_none() {
                // The first read of a key (an append to a key already
                // written also lands here, as in Elle).
                let seen = match m.arg {
                    MopArg::Nil | MopArg::Pred(_) => Seen::Nil,
                    MopArg::Atom(a) => Seen::One(a),
                    MopArg::List { start, len } => Seen::List(start, len),
                };
                first_read.push((m.key, seen));
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
    clojure_map_order(&mut by_key, |(k, _)| clojure_hasheq(&h.atom_value(*k)));
    by_key.retain(|(_, vals)| vals.iter().any(|(_, t)| t.len() >= 2));
    let mut out = Vec::new();
    for (k, mut vals) in by_key {
        clojure_map_order(&mut vals, |(v, _)| clojure_hasheq(&as_value(*v)));
        for (v, txns) in vals {
            if txns.len() >= 2 {
                out.push(Value::kw_map(vec![
                    ("key", h.atom_value(k)),
                    ("value", as_value(v)),
                    (
                        "txns",
                        Value::Vector(txns.iter().map(|&t| h.op_value(t as usize)).collect()),
                    ),
                ]));
            }
        }
    }
    out
}

/// Explains ww, wr and rw steps between list-append transactions, consulted
/// in that order as Elle's combined explainer does.
struct AppendExplainer {
    idx: Indexes,
}

fn mop_index(h: &History, op: u32, f: MopFn, k: Atom, arg: MopArg) -> Value {
    h.mops(&h.ops[op as usize])
        .iter()
        .position(|m| m.f == f && m.key == k && m.arg == arg)
        .map_or(Value::Nil, |i| Value::Int(i as i64))
}

fn elem_value(h: &History, e: Elem) -> Value {
    match e {
        Some(a) => h.atom_value(a),
        None => init_value(),
    }
}

/// A ww step (`value2` is the element `b` appended) or a wr step (`b`
/// read the list ending in `value`), both pointing at `a`'s append of
/// `value`.
fn write_step(
    h: &History,
    (a, b): (u32, u32),
    b_mop: &Mop,
    value: Atom,
    value2: Option<Atom>,
    text: StepText,
) -> Step {
    let kind = if value2.is_some() {
        StepKind::Ww
    } else {
        StepKind::Wr
    };
    let mut entries = vec![
        ("type", Value::kw(kind.name())),
        ("key", h.atom_value(b_mop.key)),
        ("value", h.atom_value(value)),
    ];
    if let Some(v2) = value2 {
        entries.push(("value'", h.atom_value(v2)));
    }
    entries.push((
        "a-mop-index",
        mop_index(h, a, MopFn::Append, b_mop.key, MopArg::Atom(value)),
    ));
    entries.push((
        "b-mop-index",
        mop_index(h, b, b_mop.f, b_mop.key, b_mop.arg),
    ));
    Step {
        kind,
        data: Value::kw_map(entries),
        text,
    }
}

impl PairExplainer for AppendExplainer {
    fn explain(&self, h: &History, a: u32, b: u32) -> Option<Step> {
        let bmops = h.mops(&h.ops[b as usize]);
        // ww
        for m in bmops.iter().filter(|m| m.f == MopFn::Append) {
            let v = append_value(m);
            if self.idx.ww_dep(b, m.key, v) == Some(a) {
                let prev = self
                    .idx
                    .previous(m.key, v)
                    .expect("ww has a previous element");
                let text = StepText::AppendWw {
                    key: pr_str(&h.atom_value(m.key)),
                    value: pr_str(&h.atom_value(prev)),
                    value2: pr_str(&h.atom_value(v)),
                };
                return Some(write_step(h, (a, b), m, prev, Some(v), text));
            }
        }
        // wr
        for m in bmops.iter().filter(|m| m.f == MopFn::Read) {
            if self.idx.wr_dep(h, b, m) == Some(a) {
                let last = *h.list(m.arg).last().expect("wr reads something");
                let text = StepText::AppendWr {
                    key: pr_str(&h.atom_value(m.key)),
                    value: pr_str(&h.atom_value(last)),
                };
                return Some(write_step(h, (a, b), m, last, None, text));
            }
        }
        // rw
        for (i, m) in bmops.iter().enumerate() {
            if m.f != MopFn::Append {
                continue;
            }
            let v = append_value(m);
            if !self.idx.rw_deps(b, m.key, v).any(|r| r == a) {
                continue;
            }
            let prev = self.idx.previous(m.key, v);
            let a_mop = h
                .mops(&h.ops[a as usize])
                .iter()
                .position(|am| {
                    am.f == MopFn::Read
                        && am.key == m.key
                        && match prev {
                            None => h.list(am.arg).is_empty(),
                            Some(p) => h.list(am.arg).last() == Some(&p),
                        }
                })
                .map_or(Value::Nil, |i| Value::Int(i as i64));
            let key = pr_str(&h.atom_value(m.key));
            let value2 = pr_str(&h.atom_value(v));
            return Some(Step {
                kind: StepKind::Rw,
                data: Value::kw_map(vec![
                    ("type", Value::kw("rw")),
                    ("key", h.atom_value(m.key)),
                    ("value", elem_value(h, prev)),
                    ("value'", h.atom_value(v)),
                    ("a-mop-index", a_mop),
                    ("b-mop-index", Value::Int(i as i64)),
                ]),
                text: match prev {
                    None => StepText::AppendRwInit { key, value2 },
                    Some(_) => StepText::AppendRw { key, value2 },
                },
            });
        }
        None
    }
}
