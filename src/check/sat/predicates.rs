//! Predicate micro-ops in the exact checker (Vbox, seed 000): a predicate
//! read is, for every key of the universe, a read of that key whose version
//! is known (a returned row) or known only by class (a row it did not
//! return: its version was absent or made the predicate false; a row a
//! `:wp` matched: the predicate was true). The polygraph gives such a read
//! every writer of a fitting version as a read-from candidate, with
//! anti-dependencies to the later writers whose versions do not fit
//! (`Builder::pred_rw_edges` in `build.rs`). This is exact: in a serial
//! order the predicate evaluated each key's last version before it, so the
//! candidate is that version's writer; conversely a resolution's
//! topological order is a serial order in which the chosen candidate is the
//! last writer before the reader. Vbox's predicate constraint (choose one
//! θ-false writer `tm`, then anti-dependencies to the θ-true writers after
//! it) is that constraint; both it and the one with anti-dependencies to
//! every later writer admit exactly the histories that have a serial
//! order. Under snapshot isolation
//! the predicate reads the transaction's snapshot, like its item reads, so
//! the same read-from choice is exact there too.
//!
//! Before any polygraph, a serial witness (`pred_witness`: completion
//! order, replayed) may confirm a valid history; under plain
//! serializability without real time the views known by class are then
//! deferred ([`ClassViews`]): built only once a witness order misses them.
//!
//! The key universe is every key of the history (of `:r`/`:w` micro-ops
//! and of predicate rows), or the keys the micro-op declares (its optional
//! last element, [`crate::model::PredMop::universe`]). A key none of whose
//! written versions could make the predicate true adds nothing and is left
//! out before building.

use crate::edn::Value;
use crate::model::{Atom, History, Mop, MopArg, MopFn, OpType, OpValue};
use hashbrown::HashMap;

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
        let pred = &self.preds[p as usize];
        match v.map(|v| &self.values[v as usize]) {
            Some(Value::Int(n)) => pred.matches_int(*n),
            v => pred.matches(v),
        }
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
                match (m.f(), m.arg()) {
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
                        let k = key(m.key(), &mut keys);
                        if let (true, MopArg::Atom(v)) = (writes, arg) {
                            written.push((k, v));
                        }
                    }
                    _ => {
                        key(m.key(), &mut keys);
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
        let matches = |n: i64| pred.matches_int(n);
        let mut out: Vec<u32> = Vec::new();
        let (lo, hi) = pred.int_bounds().unwrap_or((i64::MIN, i64::MAX));
        // The writes in each interval (`lo > hi`, as in `[:between 5 3]`,
        // holds none).
        let spans: Vec<(usize, usize)> = (pred.int_intervals().unwrap_or(vec![(lo, hi)]).iter())
            .map(|&(lo, hi)| {
                let from = self.ints.partition_point(|&(n, _)| n < lo);
                (from, self.ints.partition_point(|&(n, _)| n <= hi).max(from))
            })
            .collect();
        if spans.iter().map(|s| s.1 - s.0).sum::<usize>() <= self.keys.len() {
            // Narrow: the writes in the intervals.
            for &(from, to) in &spans {
                out.extend(
                    self.ints[from..to]
                        .iter()
                        .filter(|&&(n, _)| matches(n))
                        .map(|&(_, k)| k),
                );
            }
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
pub(crate) fn item_view(h: &History) -> History {
    item_view_with(h, &[], false).0
}

/// [`item_view`], each predicate micro-op `p` also reading the rows
/// `misses[p]` (when `misses` has an entry for it); with `origins`, per
/// micro-op of the view, the predicate micro-op it came from (else empty).
fn item_view_with(
    h: &History,
    misses: &[Vec<(Atom, Option<Atom>)>],
    origins: bool,
) -> (History, Vec<Option<u32>>) {
    let mut out = History {
        mops: Vec::with_capacity(h.mops.len()),
        ops: Vec::with_capacity(h.ops.len()),
        ..h.clone()
    };
    out.predicates.clear();
    let mut origin: Vec<Option<u32>> = Vec::new();
    let arg = |v: Option<Atom>| v.map_or(MopArg::Nil, MopArg::Atom);
    for op in &h.ops {
        let mut op = *op;
        if let OpValue::Mops { .. } = op.value {
            let start = out.mops.len() as u32;
            for m in h.mops(&op) {
                match m.arg() {
                    MopArg::Pred(p) => {
                        let missed = misses.get(p as usize).map_or(&[][..], |m| &m[..]);
                        for &(k, v) in missed {
                            out.mops.push(Mop::new(MopFn::Read, k, arg(v)));
                        }
                        let p_id = p;
                        let p = &h.predicates[p as usize];
                        for &(k, v) in &p.rows {
                            out.mops.push(match p.write {
                                None => Mop::new(MopFn::Read, k, arg(v)),
                                Some(w) => Mop::new(MopFn::Write, k, arg(w)),
                            });
                        }
                        if origins {
                            origin.resize(out.mops.len(), Some(p_id));
                        }
                    }
                    _ => {
                        out.mops.push(*m);
                        if origins {
                            origin.push(None);
                        }
                    }
                }
            }
            op.value = OpValue::Mops {
                start,
                len: out.mops.len() as u32 - start,
            };
        }
        out.ops.push(op);
    }
    (out, origin)
}

/// The view Elle-style inference reads (`--algorithm infer`): the
/// [`item_view`] plus the unreturned rows whose version is certain. A key
/// the predicate ranged over but did not return (or match) was seen in a
/// version it does not match; when every value written to the key (by an
/// `:ok` or `:info` transaction) matches, that version can only be the
/// initial `nil`, an item read `[:r k nil]`. Other unreturned rows leave a
/// choice of versions and add nothing here (the exact checker decides
/// them). Returns the view and, per micro-op of it, the predicate micro-op
/// it came from.
pub(crate) fn inference_view(h: &History) -> (History, Vec<Option<u32>>) {
    let u = Universe::new(h);
    let mut misses: Vec<Vec<(Atom, Option<Atom>)>> = vec![Vec::new(); h.predicates.len()];
    // Keys the transaction touched before (the predicate's view of them is
    // no external read), and the rows of the predicate micro-op at hand:
    // sets, as a table scan's rows are many. Reused from op to op.
    let mut touched: hashbrown::HashSet<Atom> = hashbrown::HashSet::new();
    let mut rows: hashbrown::HashSet<Atom> = hashbrown::HashSet::new();
    for op in h.ops.iter().filter(|op| op.op_type == OpType::Ok) {
        touched.clear();
        for m in h.mops(op) {
            let MopArg::Pred(p) = m.arg() else {
                touched.insert(m.key());
                continue;
            };
            let pm = &h.predicates[p as usize];
            rows.clear();
            rows.extend(pm.rows.iter().map(|r| r.0));
            for k in u.relevant(&pm.pred) {
                let (key, ki) = (u.keys[k as usize], k as usize);
                let certain = u.key_ints[ki].iter().all(|&n| pm.pred.matches_int(n))
                    && u.key_others[ki].iter().all(|v| pm.pred.matches(Some(v)));
                if certain && pm.ranges_over(key) && !touched.contains(&key) && !rows.contains(&key)
                {
                    misses[p as usize].push((key, None));
                }
            }
            touched.extend(&rows);
        }
    }
    item_view_with(h, &misses, true)
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
    writes: Vec<(u32, u32, u32, Val)>,
    /// Per key, its `:ok` writes (indices into `writes`, so by
    /// completion), and the running maximum of their invocations.
    per_key: Vec<Vec<u32>>,
    prefix_max_invoke: Vec<Vec<u32>>,
    /// `:info` writes may take effect any time after their invocation, so
    /// they are visible to every read that completes later. Per key, its
    /// `:info` writes `(invocation, value)`; every integer one as
    /// `(value, invocation, key)`, sorted, for range look-ups; the others
    /// `(invocation, key, value)`. Indexed so that a read costs the writes
    /// its predicate can match, not every `:info` write.
    info_per_key: Vec<Vec<(u32, Val)>>,
    info_ints: Vec<(i64, u32, u32)>,
    info_others: Vec<(u32, u32, Val)>,
    /// Values other than integers and `nil`, which [`Val::Other`] names.
    others: Vec<Value>,
    /// The longest `:ok` transaction that writes, in op positions.
    span: u32,
}

/// A written value, small and cheap to copy: predicates evaluate integers
/// directly ([`crate::model::Pred::matches_int`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Val {
    Nil,
    Int(i64),
    /// An index into [`TimeIndex::others`].
    Other(u32),
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
        let mut others = Vec::new();
        let mut other_ix: HashMap<Atom, u32> = HashMap::new();
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
                let v = match v {
                    None => Val::Nil,
                    Some(a) => match a.as_int() {
                        Some(n) => Val::Int(n),
                        None => Val::Other(*other_ix.entry(a).or_insert_with(|| {
                            others.push(h.atom_value(a));
                            others.len() as u32 - 1
                        })),
                    },
                };
                let k = ix[&k];
                match op.op_type {
                    OpType::Ok => writes.push((i as u32, inv, k, v)),
                    _ => info.push((inv, k, v)),
                }
            };
            for m in h.mops(src) {
                match (m.f(), m.arg()) {
                    (MopFn::Write, MopArg::Atom(a)) => push(m.key(), Some(a)),
                    (MopFn::Write, _) => push(m.key(), None),
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
        let mut info_per_key: Vec<Vec<(u32, Val)>> = vec![Vec::new(); u.keys.len()];
        let mut info_ints = Vec::new();
        let mut info_others = Vec::new();
        for (inv, k, v) in info {
            info_per_key[k as usize].push((inv, v));
            match v {
                Val::Int(n) => info_ints.push((n, inv, k)),
                Val::Other(_) => info_others.push((inv, k, v)),
                Val::Nil => {}
            }
        }
        info_ints.sort_unstable();
        TimeIndex {
            writes,
            per_key,
            prefix_max_invoke,
            info_per_key,
            info_ints,
            info_others,
            others,
            span,
        }
    }

    /// Whether value `v` matches `pred`, whose integer matches lie in
    /// `[lo, hi]`.
    fn matches(&self, pred: &crate::model::Pred, (lo, hi): (i64, i64), v: Val) -> bool {
        match v {
            Val::Nil => false,
            Val::Int(n) => (lo..=hi).contains(&n) && pred.matches_int(n),
            Val::Other(i) => pred.matches(Some(&self.others[i as usize])),
        }
    }

    /// Whether a version of key `k` that the reader (invoked at `ti`,
    /// completed at `tc`) can have seen matches `pred`.
    fn visible_match(
        &self,
        k: u32,
        pred: &crate::model::Pred,
        bounds: (i64, i64),
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
            .any(|w| w.1 < tc && w.0 != tc && self.matches(pred, bounds, w.3))
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
        let mut tails: Vec<std::collections::VecDeque<(u32, Val)>> =
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
                let (c, _, k, v) = self.writes[swept];
                let tail = &mut tails[k as usize];
                while tail.front().is_some_and(|f| f.0 + self.span < c) {
                    let (fc, fv) = tail.pop_front().expect("front");
                    if let Val::Int(n) = fv {
                        ints.remove(&(n, k, fc));
                    }
                }
                tail.push_back((c, v));
                match v {
                    Val::Int(n) => {
                        ints.insert((n, k, c));
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
                        .filter(|e| pred.matches_int(e.0))
                        .map(|e| e.1),
                );
                let from = self.info_ints.partition_point(|e| e.0 < lo);
                found.extend(
                    self.info_ints[from..]
                        .iter()
                        .take_while(|e| e.0 <= hi)
                        .filter(|e| e.1 < tc && pred.matches_int(e.0))
                        .map(|e| e.2),
                );
            }
            found.extend(others.iter().copied());
            // The writes completed since the read began: the sweep stopped
            // at the first of them.
            let from = swept;
            let end = tc.saturating_add(self.span);
            found.extend(
                self.writes[from..]
                    .iter()
                    .take_while(|w| w.0 <= end)
                    .filter(|w| w.1 < tc && self.matches(pred, bounds, w.3))
                    .map(|w| w.2),
            );
            found.extend(
                self.info_others
                    .iter()
                    .filter(|w| w.0 < tc && self.matches(pred, bounds, w.2))
                    .map(|w| w.1),
            );
            found.sort_unstable();
            found.dedup();
            let info_match = |k: u32| {
                self.info_per_key[k as usize]
                    .iter()
                    .any(|w| w.0 < tc && self.matches(pred, bounds, w.1))
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

/// Which predicate views known only by class (unreturned rows, rows a
/// `:wp` matched) the polygraph builds when they are *deferred*: under
/// plain serializability without real time (Elle's `serializable`,
/// `strong-session-serializable`) every such view chooses among almost all
/// versions of its key, millions of read-from candidates at 100k
/// transactions, yet a serial order close to the one the database ran
/// satisfies nearly all of them. So [`solve_deferring`] first solves
/// without them, checks each against the witness order, builds the ones it
/// violates, and solves again, until the witness satisfies every view.
///
/// Exact. Valid: the answer is a witness, a serial order that satisfies
/// every item read (the built polygraph), every built view (a topological
/// order of a resolution: `Builder::pred_rw_edges`) and, checked one by
/// one, every deferred view (the last version of its key before the reader
/// is one it can have seen), so the history is serializable. Invalid: a
/// cycle of a polygraph with only some of the views is a cycle of every
/// resolution of the one with all of them (their edges and clauses are a
/// subset), and a refuted subset refutes the whole. It ends: each round
/// builds at least one more view.
#[derive(Clone, Debug, Default)]
pub(super) struct ClassViews {
    /// `(reader, key)` of the views to build.
    built: hashbrown::HashSet<(u32, u64)>,
}

impl ClassViews {
    /// Whether the view of `key` by reader `s` is built.
    pub(super) fn builds(&self, s: u32, key: u64) -> bool {
        self.built.contains(&(s, key))
    }
}

/// The serial witness (`pred_witness`), tried before any polygraph on a
/// history with predicates under serializability: `None` when not tried,
/// else the witness order or the reads its replay failed to explain.
pub(super) fn witness(
    h: &super::RegHistory,
    preds: &PredTable,
    opts: &super::SatOptions,
) -> Option<Result<Vec<u32>, Vec<super::pred_witness::Failure>>> {
    (!preds.preds.is_empty() && opts.isolation == super::Isolation::Serializable)
        .then(|| super::pred_witness::by_completion(h, preds, opts))
}

/// Whether [`solve_deferring`] defers the views known by class: plain
/// serializability (session order or not) without real time, whose views
/// no order narrows. With real time the windows of
/// `visible_in_real_time` leave few candidates, and snapshot isolation's
/// witness orders the layered graph, not the transactions.
pub(super) fn defers(preds: &PredTable, opts: &super::SatOptions) -> bool {
    !preds.preds.is_empty() && opts.isolation == super::Isolation::Serializable && !opts.real_time
}

/// Solves with `solve` (given the class views to build, `None`: all),
/// deferring the views known by class when [`defers`] says so (see
/// [`ClassViews`]; `rounds` counts the solves). The caller has tried the
/// serial witness ([`witness`]) first.
pub(super) fn solve_deferring(
    h: &super::RegHistory,
    preds: &PredTable,
    opts: &super::SatOptions,
    rounds: &mut usize,
    mut solve: impl FnMut(Option<&ClassViews>) -> super::Verdict,
) -> super::Verdict {
    use super::Verdict;
    *rounds = 1;
    if !defers(preds, opts) {
        return solve(None);
    }
    let mut views = ClassViews::default();
    loop {
        let order = match solve(Some(&views)) {
            Verdict::Valid(order) => order,
            other => return other,
        };
        let unmet = match super::build::unmet_class_views(h, preds, opts, &order, &views) {
            Ok(unmet) => unmet,
            Err(v) => return Verdict::Invalid(v),
        };
        if unmet.is_empty() {
            return Verdict::Valid(order);
        }
        views.built.extend(unmet);
        *rounds += 1;
    }
}
