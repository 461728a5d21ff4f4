//! Predicate micro-ops in the exact checker (Vbox, seed 000): a predicate
//! read is, for every key of the universe, a read of that key whose version
//! is known (a returned row) or known only by class (a row it did not
//! return: its version was absent or made the predicate false; a row a
//! `:wp` matched: the predicate was true). The polygraph gives such a read
//! every writer of a fitting version as a read-from candidate, with the
//! usual anti-dependencies to later writers. This is exact: in a serial
//! order the predicate evaluated each key's last version before it, so the
//! candidate is that version's writer; conversely a resolution's
//! topological order is a serial order in which the chosen candidate is the
//! last writer before the reader. Vbox's predicate constraint (choose one
//! θ-false writer `tm`, then anti-dependencies to the θ-true writers after
//! it) is the same constraint with fewer anti-dependencies; both admit
//! exactly the histories that have a serial order. Under snapshot isolation
//! the predicate reads the transaction's snapshot, like its item reads, so
//! the same read-from choice is exact there too.
//!
//! The key universe is every key of the history (of `:r`/`:w` micro-ops
//! and of predicate rows), or the keys the micro-op declares (its optional
//! last element, [`crate::model::PredMop::universe`]). A key none of whose
//! written versions could make the predicate true adds nothing and is left
//! out before building.

use hashbrown::HashMap;

use crate::edn::Value;
use crate::infer::{Step, StepKind, StepText};
use crate::model::{Atom, History, Mop, MopArg, MopFn, OpType, OpValue};

/// What a predicate micro-op said of one key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PredSeen {
    /// `:rp` returned the row with this value.
    Returned(super::RegValue),
    /// `:wp` matched the row (its value unknown, the predicate true).
    Matched,
    /// The row was not returned or matched: the version seen was absent or
    /// made the predicate false.
    Missed,
}

/// The predicates of a history's predicate micro-ops, and the values of
/// the dense value ids, to evaluate a predicate on a version.
#[derive(Clone, Debug, Default)]
pub struct PredTable {
    /// Per predicate micro-op (index of [`crate::model::History::predicates`]).
    pub preds: Vec<crate::model::Pred>,
    /// Per dense value id, its EDN value.
    pub values: Vec<crate::edn::Value>,
}

impl PredTable {
    /// Whether a version holding `v` matches predicate `p`.
    pub fn eval(&self, p: u32, v: super::RegValue) -> bool {
        self.preds[p as usize].matches(v.map(|v| &self.values[v as usize]))
    }
}

/// Which keys could matter to a predicate: those with a written value
/// (by an `:ok` or `:info` transaction) that the predicate matches.
pub(super) struct Universe {
    /// Every key, in first-seen order.
    pub(super) keys: Vec<Atom>,
    /// `(integer value, key)` of every integer write, sorted.
    ints: Vec<(i64, u32)>,
    /// Per key (index into `keys`), its distinct written integer values,
    /// sorted.
    key_ints: Vec<Vec<i64>>,
    /// Per key, its distinct written values that are not integers.
    key_others: Vec<Vec<Value>>,
}

impl Universe {
    pub(super) fn new(h: &History) -> Universe {
        let mut ix: HashMap<Atom, u32> = HashMap::new();
        let mut keys = Vec::new();
        let mut key = |k: Atom, keys: &mut Vec<Atom>| {
            *ix.entry(k).or_insert_with(|| {
                keys.push(k);
                keys.len() as u32 - 1
            })
        };
        let mut written: Vec<(u32, Atom)> = Vec::new();
        for (i, op) in h.ops.iter().enumerate() {
            let writes = matches!(op.op_type, OpType::Ok | OpType::Info);
            let src = match op.op_type {
                OpType::Info => &h.ops[h.invocation_of(i).unwrap_or(i)],
                _ => op,
            };
            for m in h.mops(src) {
                match (m.f, m.arg) {
                    (MopFn::PredRead | MopFn::PredWrite, MopArg::Pred(p)) => {
                        let p = &h.predicates[p as usize];
                        for &(k, _) in &p.rows {
                            let k = key(k, &mut keys);
                            if let (true, Some(Some(v))) = (writes, p.write) {
                                written.push((k, v));
                            }
                        }
                    }
                    (MopFn::Write, arg) => {
                        let k = key(m.key, &mut keys);
                        if let (true, MopArg::Atom(v)) = (writes, arg) {
                            written.push((k, v));
                        }
                    }
                    _ => {
                        key(m.key, &mut keys);
                    }
                }
            }
        }
        written.sort_unstable();
        written.dedup();
        let mut ints = Vec::new();
        let mut key_ints = vec![Vec::new(); keys.len()];
        let mut key_others = vec![Vec::new(); keys.len()];
        for (k, v) in written {
            match v.as_int() {
                Some(n) => {
                    ints.push((n, k));
                    key_ints[k as usize].push(n);
                }
                None => key_others[k as usize].push(h.atom_value(v)),
            }
        }
        ints.sort_unstable();
        for v in &mut key_ints {
            v.sort_unstable();
        }
        Universe {
            keys,
            ints,
            key_ints,
            key_others,
        }
    }

    /// The keys (indices into `keys`, ascending) with a written value the
    /// predicate matches.
    pub(super) fn relevant(&self, pred: &crate::model::Pred) -> Vec<u32> {
        let matches = |n: i64| pred.matches(Some(&Value::Int(n)));
        let mut out: Vec<u32> = Vec::new();
        let (lo, hi) = pred.int_bounds().unwrap_or((i64::MIN, i64::MAX));
        let from = self.ints.partition_point(|&(n, _)| n < lo);
        let to = self.ints.partition_point(|&(n, _)| n <= hi);
        // `lo > hi` (`[:between 5 3]`): `from` may pass `to`, and no
        // integer matches; the wide walk below finds none.
        if from <= to && to - from <= self.keys.len() {
            // A narrow range: the writes in it.
            out.extend(
                self.ints[from..to]
                    .iter()
                    .filter(|&&(n, _)| matches(n))
                    .map(|&(_, k)| k),
            );
        } else {
            // A wide one: each key's first value in range that matches.
            for (k, vs) in self.key_ints.iter().enumerate() {
                let start = vs.partition_point(|&n| n < lo);
                if vs[start..]
                    .iter()
                    .take_while(|&&n| n <= hi)
                    .any(|&n| matches(n))
                {
                    out.push(k as u32);
                }
            }
        }
        for (k, vs) in self.key_others.iter().enumerate() {
            if vs.iter().any(|v| pred.matches(Some(v))) {
                out.push(k as u32);
            }
        }
        out.sort_unstable();
        out.dedup();
        out
    }
}

/// `h` with every predicate micro-op replaced by the item micro-ops it
/// implies: a returned row is `[:r k v]`, a `:wp` writes `[:w k VALUE]` to
/// each matched key. The dirty-read and internal-consistency facts are
/// computed on it (ops print from their source text, so cases show the
/// original ops).
pub(super) fn item_view(h: &History) -> History {
    let mut out = History {
        mops: Vec::with_capacity(h.mops.len()),
        ops: Vec::with_capacity(h.ops.len()),
        ..h.clone()
    };
    out.predicates.clear();
    for op in &h.ops {
        let mut op = *op;
        if let OpValue::Mops { .. } = op.value {
            let start = out.mops.len() as u32;
            for m in h.mops(&op) {
                match m.arg {
                    MopArg::Pred(p) => {
                        let p = &h.predicates[p as usize];
                        for &(k, v) in &p.rows {
                            let arg = |v: Option<Atom>| v.map_or(MopArg::Nil, MopArg::Atom);
                            out.mops.push(match p.write {
                                None => Mop {
                                    f: MopFn::Read,
                                    key: k,
                                    arg: arg(v),
                                },
                                Some(w) => Mop {
                                    f: MopFn::Write,
                                    key: k,
                                    arg: arg(w),
                                },
                            });
                        }
                    }
                    _ => out.mops.push(*m),
                }
            }
            op.value = OpValue::Mops {
                start,
                len: out.mops.len() as u32 - start,
            };
        }
        out.ops.push(op);
    }
    out
}

/// Predicate micro-ops that contradict their own transaction: a returned
/// row the predicate does not match, a row the transaction wrote or read
/// earlier that the predicate should have returned (or matched) and did
/// not, or one it returned (matched) although the earlier value does not
/// match. Elle's `internal` case shape, with the key and the value known
/// before (`:expected`), one case per op.
pub(super) fn internal_cases(h: &History) -> Vec<Value> {
    let mut out = Vec::new();
    let mut state: Vec<(Atom, Option<Atom>)> = Vec::new();
    let value = |v: Option<Atom>| v.map_or(Value::Nil, |a| h.atom_value(a));
    for (i, op) in h.ops.iter().enumerate() {
        if op.op_type != OpType::Ok {
            continue;
        }
        state.clear();
        'mops: for m in h.mops(op) {
            let MopArg::Pred(p) = m.arg else {
                let v = match m.arg {
                    MopArg::Atom(a) => Some(a),
                    _ => None,
                };
                match state.iter_mut().find(|s| s.0 == m.key) {
                    Some(s) => s.1 = v,
                    None => state.push((m.key, v)),
                }
                continue;
            };
            let p = &h.predicates[p as usize];
            let holds = |v: Option<Atom>| p.pred.matches(v.map(|a| h.atom_value(a)).as_ref());
            let case = |k: Atom, v: Option<Atom>, what: &str| {
                Value::kw_map(vec![
                    ("op", h.op_value(i)),
                    ("mop", h.mop_value(m)),
                    ("key", h.atom_value(k)),
                    ("expected", value(v)),
                    ("predicate", Value::Str(what.to_string())),
                ])
            };
            for &(k, v) in p.rows.iter().filter(|_| p.write.is_none()) {
                if !holds(v) {
                    out.push(case(k, v, "returned a row the predicate does not match"));
                    break 'mops;
                }
            }
            for &(k, v) in state.iter().filter(|s| p.ranges_over(s.0)) {
                let listed = p.rows.iter().any(|r| r.0 == k);
                if listed != holds(v) {
                    let what = if listed {
                        "returned or matched a row whose value, as its transaction knew it, does not match"
                    } else {
                        "missed a row whose value, as its transaction knew it, matches"
                    };
                    out.push(case(k, v, what));
                    break 'mops;
                }
            }
            for &(k, v) in &p.rows {
                let v = p.write.unwrap_or(v);
                match state.iter_mut().find(|s| s.0 == k) {
                    Some(s) => s.1 = v,
                    None => state.push((k, v)),
                }
            }
        }
    }
    out
}

/// The predicate micro-op and whether it returned / matched `key`.
fn listed(h: &History, pred: u32, key: Atom) -> (Value, bool, bool) {
    let p = &h.predicates[pred as usize];
    (
        p.form.clone(),
        p.rows.iter().any(|r| r.0 == key),
        p.write.is_some(),
    )
}

/// A wr step into a predicate read: `b`'s predicate saw `a`'s version
/// `key = value` (returned it, matched it, or did not return it).
pub(super) fn wr_step(h: &History, key: Atom, value: Option<Atom>, pred: u32) -> Step {
    let (form, listed, write) = listed(h, pred, key);
    let (k, v, f) = (
        crate::edn::pr_str(&h.atom_value(key)),
        crate::edn::pr_str(&value.map_or(Value::Nil, |a| h.atom_value(a))),
        crate::edn::pr_str(&form),
    );
    let verb = if write { "write" } else { "read" };
    let template = match (listed, write) {
        (true, false) => format!("{{a}} wrote {k} = {v}, which {{b}}'s predicate read {f} returned"),
        (true, true) => format!(
            "{{b}}'s predicate write {f} matched {k} in the version {{a}} wrote, {k} = {v}"
        ),
        (false, _) => format!(
            "{{b}}'s predicate {verb} {f} did not return {k}, so it saw a version the predicate does not match: {{a}}'s {k} = {v}"
        ),
    };
    Step {
        kind: StepKind::Wr,
        data: Value::kw_map(vec![
            ("type", Value::kw("wr")),
            ("key", h.atom_value(key)),
            ("value", value.map_or(Value::Nil, |a| h.atom_value(a))),
            ("predicate", form),
            ("returned", Value::Bool(listed)),
        ]),
        text: StepText::Predicate { template },
    }
}

/// An rw step out of a predicate read: `a`'s predicate saw `key = value`
/// (returned, matched or missed), and `b` wrote the later version `value2`.
pub(super) fn rw_step(
    h: &History,
    key: Atom,
    value: Option<Atom>,
    value2: Option<Atom>,
    pred: u32,
) -> Step {
    let (form, listed, write) = listed(h, pred, key);
    let p = &h.predicates[pred as usize];
    let atom = |v: Option<Atom>| v.map_or(Value::Nil, |a| h.atom_value(a));
    let (k, v, v2, f) = (
        crate::edn::pr_str(&h.atom_value(key)),
        crate::edn::pr_str(&atom(value)),
        crate::edn::pr_str(&atom(value2)),
        crate::edn::pr_str(&form),
    );
    let verb = if write { "write" } else { "read" };
    let would = p.pred.matches(value2.map(|a| h.atom_value(a)).as_ref());
    let template = match (listed, would) {
        (false, true) => format!(
            "{{a}}'s predicate {verb} {f} missed {k} (it saw {k} = {v}), and {{b}} set it to {v2}, which the predicate matches: {{b}}'s version came later"
        ),
        (false, false) => format!(
            "{{a}}'s predicate {verb} {f} did not return {k} (it saw {k} = {v}), and {{b}} set it to {v2}, a later version"
        ),
        (true, _) => format!(
            "{{a}}'s predicate {verb} {f} returned {k} = {v}, and {{b}} set it to {v2}, a later version"
        ),
    };
    Step {
        kind: StepKind::Rw,
        data: Value::kw_map(vec![
            ("type", Value::kw("rw")),
            ("key", h.atom_value(key)),
            ("value", atom(value)),
            ("value'", atom(value2)),
            ("predicate", form),
            ("returned", Value::Bool(listed)),
        ]),
        text: StepText::Predicate { template },
    }
}

/// Client time for strict models (Vbox §4.2): a key's version a predicate
/// read can have seen is one whose writer did not begin after the reader
/// completed and is not followed, in real time, by another writer of the
/// key that completed before the reader began (that writer's version would
/// come later, and it came before the read). When no such version matches
/// the predicate, the unreturned row constrains nothing and is left out.
///
/// Finding those keys without evaluating the predicate on every key:
/// writes sweep into a per-key *tail* (a key's writes that completed at
/// most `span` positions before its latest one, `span` being the longest
/// writing transaction) indexed by value; a read's visible versions lie in
/// the tail as of its beginning (the last writer that completed before it
/// began was invoked at most `span` earlier, and every visible version
/// completed after that invocation), or among the writes completed since
/// that began before it ended; each key found is then checked exactly.
pub(super) struct TimeIndex {
    /// `:ok` writes `(completion, invocation, key, value)` by completion.
    writes: Vec<(u32, u32, u32, Value)>,
    /// Per key, its `:ok` writes (indices into `writes`, so by
    /// completion), and the running maximum of their invocations.
    per_key: Vec<Vec<u32>>,
    prefix_max_invoke: Vec<Vec<u32>>,
    /// `:info` writes `(invocation, key, value)`: they may take effect any
    /// time after their invocation, so they are visible to every later read.
    info: Vec<(u32, u32, Value)>,
    /// The longest `:ok` transaction that writes, in op positions.
    span: u32,
}

impl TimeIndex {
    pub(super) fn new(h: &History, u: &Universe) -> TimeIndex {
        let ix: HashMap<Atom, u32> = u
            .keys
            .iter()
            .enumerate()
            .map(|(i, &k)| (k, i as u32))
            .collect();
        let mut writes = Vec::new();
        let mut info = Vec::new();
        let mut span = 0;
        for (i, op) in h.ops.iter().enumerate() {
            let inv = h.invocation_of(i).unwrap_or(i) as u32;
            let src = match op.op_type {
                OpType::Ok => op,
                OpType::Info => &h.ops[inv as usize],
                _ => continue,
            };
            let mut push = |k: Atom, v: Option<Atom>| {
                if op.op_type == OpType::Ok {
                    span = span.max(i as u32 - inv);
                }
                let (k, v) = (ix[&k], v.map_or(Value::Nil, |a| h.atom_value(a)));
                match op.op_type {
                    OpType::Ok => writes.push((i as u32, inv, k, v)),
                    _ => info.push((inv, k, v)),
                }
            };
            for m in h.mops(src) {
                match (m.f, m.arg) {
                    (MopFn::Write, MopArg::Atom(a)) => push(m.key, Some(a)),
                    (MopFn::Write, _) => push(m.key, None),
                    (MopFn::PredWrite, MopArg::Pred(p)) => {
                        let p = &h.predicates[p as usize];
                        for &(k, _) in &p.rows {
                            push(k, p.write.flatten());
                        }
                    }
                    _ => {}
                }
            }
        }
        let mut per_key: Vec<Vec<u32>> = vec![Vec::new(); u.keys.len()];
        for (j, w) in writes.iter().enumerate() {
            per_key[w.2 as usize].push(j as u32);
        }
        let prefix_max_invoke = per_key
            .iter()
            .map(|ws| {
                ws.iter()
                    .scan(0u32, |m, &j| {
                        *m = (*m).max(writes[j as usize].1);
                        Some(*m)
                    })
                    .collect()
            })
            .collect();
        TimeIndex {
            writes,
            per_key,
            prefix_max_invoke,
            info,
            span,
        }
    }

    /// Whether a version of key `k` that the reader (invoked at `ti`,
    /// completed at `tc`) can have seen matches `pred`.
    fn visible_match(
        &self,
        k: u32,
        pred: &crate::model::Pred,
        (lo, hi): (i64, i64),
        ti: u32,
        tc: u32,
    ) -> bool {
        let ws = &self.per_key[k as usize];
        let w = |j: &u32| &self.writes[*j as usize];
        let before = ws.partition_point(|j| w(j).0 < ti);
        let m = match before {
            0 => 0,
            b => self.prefix_max_invoke[k as usize][b - 1],
        };
        let from = ws.partition_point(|j| w(j).0 < m);
        let end = tc.saturating_add(self.span);
        ws[from..]
            .iter()
            .map(w)
            .take_while(|w| w.0 <= end)
            .any(|w| w.1 < tc && w.0 != tc && may_match(&w.3, lo, hi) && pred.matches(Some(&w.3)))
    }

    /// For each predicate read `(position of its op, predicate)`, in any
    /// order: the keys (indices into the universe, ascending) whose
    /// visible versions include one the predicate matches.
    pub(super) fn relevant(
        &self,
        h: &History,
        reads: &[(usize, &crate::model::Pred)],
    ) -> Vec<Vec<u32>> {
        use std::collections::BTreeSet;
        let mut order: Vec<usize> = (0..reads.len()).collect();
        let invoked = |r: usize| h.invocation_of(reads[r].0).unwrap_or(reads[r].0) as u32;
        order.sort_by_key(|&r| invoked(r));
        let mut out = vec![Vec::new(); reads.len()];
        // The tails: per key its writes (completion, value), and every
        // tail value by (integer value, key); other values by key.
        let mut tails: Vec<std::collections::VecDeque<(u32, Value)>> =
            vec![Default::default(); self.per_key.len()];
        let mut ints: BTreeSet<(i64, u32, u32)> = BTreeSet::new();
        let mut others: BTreeSet<u32> = BTreeSet::new();
        let mut swept = 0;
        let mut found: Vec<u32> = Vec::new();
        for r in order {
            let (pos, pred) = reads[r];
            let (ti, tc) = (invoked(r), pos as u32);
            let horizon = ti;
            while swept < self.writes.len() && self.writes[swept].0 < horizon {
                let (c, _, k, ref v) = self.writes[swept];
                let tail = &mut tails[k as usize];
                while tail.front().is_some_and(|f| f.0 + self.span < c) {
                    let (fc, fv) = tail.pop_front().expect("front");
                    if let Value::Int(n) = fv {
                        ints.remove(&(n, k, fc));
                    }
                }
                tail.push_back((c, v.clone()));
                match v {
                    Value::Int(n) => {
                        ints.insert((*n, k, c));
                    }
                    _ => {
                        others.insert(k);
                    }
                }
                swept += 1;
            }
            found.clear();
            let bounds = pred.int_bounds().unwrap_or((i64::MIN, i64::MAX));
            let (lo, hi) = bounds;
            // `lo > hi`: no integer matches (`[:between 5 3]`, or an `:and`
            // of disjoint ranges).
            if lo <= hi {
                found.extend(
                    ints.range((lo, 0, 0)..=(hi, u32::MAX, u32::MAX))
                        .filter(|e| pred.matches(Some(&Value::Int(e.0))))
                        .map(|e| e.1),
                );
            }
            found.extend(others.iter().copied());
            let from = self.writes.partition_point(|w| w.0 < horizon);
            let end = tc.saturating_add(self.span);
            found.extend(
                self.writes[from..]
                    .iter()
                    .take_while(|w| w.0 <= end)
                    .filter(|w| w.1 < tc && may_match(&w.3, lo, hi) && pred.matches(Some(&w.3)))
                    .map(|w| w.2),
            );
            found.extend(
                self.info
                    .iter()
                    .filter(|w| w.0 < tc && pred.matches(Some(&w.2)))
                    .map(|w| w.1),
            );
            found.sort_unstable();
            found.dedup();
            let info_match = |k: u32| {
                self.info
                    .iter()
                    .any(|w| w.1 == k && w.0 < tc && pred.matches(Some(&w.2)))
            };
            out[r] = found
                .iter()
                .copied()
                .filter(|&k| info_match(k) || self.visible_match(k, pred, bounds, ti, tc))
                .collect();
        }
        out
    }
}

/// Whether `v` can match a predicate whose integer matches lie in
/// `[lo, hi]` (a cheap test before evaluating the predicate).
fn may_match(v: &Value, lo: i64, hi: i64) -> bool {
    match v {
        Value::Int(n) => (lo..=hi).contains(n),
        Value::Nil => false,
        _ => true,
    }
}
