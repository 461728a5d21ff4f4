//! Elle's non-cycle cases of list-append histories (duplicate elements,
//! internal and future reads, dirty updates, G1a, G1b), the reads of
//! elements nobody appended, and the appends no read reveals (the
//! mini-transaction path and the exact checker use these too).

use super::*;

pub(super) fn duplicates(h: &History, include: impl Fn(usize) -> bool) -> Vec<Value> {
    let mut out = Vec::new();
    let mut scratch: Vec<Atom> = Vec::new();
    let mut marks = Marks::default();
    for (i, op) in h.ops.iter().enumerate() {
        if !include(i) {
            continue;
        }
        for m in h.mops(op) {
            if m.f() != MopFn::Read {
                continue;
            }
            let xs = h.list(m.arg());
            if xs.len() < 2 || marks.distinct(xs) == Some(true) {
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

/// A mark per integer of a small range, to tell whether a list of small
/// integers (the elements of Jepsen's histories) repeats one without
/// sorting it: sorting every read was most of [`duplicates`] (issue 23).
#[derive(Default)]
pub(super) struct Marks {
    /// The read number that last marked each integer (offset by the
    /// list's least element).
    at: Vec<u32>,
    /// This read's number (from 1).
    read: u32,
}

impl Marks {
    /// Whether `xs` holds no element twice, when its elements are integers
    /// spread over no more than a few times its length; `None` otherwise.
    pub(super) fn distinct(&mut self, xs: &[Atom]) -> Option<bool> {
        let (mut least, mut most) = (i64::MAX, i64::MIN);
        for x in xs {
            let n = x.as_int()?;
            (least, most) = (least.min(n), most.max(n));
        }
        let span = usize::try_from(most.checked_sub(least)?).ok()? + 1;
        if span > 4 * xs.len() + 64 {
            return None;
        }
        if self.at.len() < span {
            self.at.resize(span, 0);
        }
        if self.read == u32::MAX {
            self.at.fill(0);
            self.read = 0;
        }
        self.read += 1;
        for x in xs {
            // In the span: checked above.
            let slot = &mut self.at[(x.as_int()? - least) as usize];
            if *slot == self.read {
                return Some(false);
            }
            *slot = self.read;
        }
        Some(true)
    }
}

/// Clojure's `compare` for the scalar values used as list elements.
pub(super) fn compare_values(a: &Value, b: &Value) -> std::cmp::Ordering {
    match (a, b) {
        (Value::Int(x), Value::Int(y)) => x.cmp(y),
        (Value::Str(x), Value::Str(y)) => x.cmp(y),
        (Value::Keyword(x), Value::Keyword(y)) => x.cmp(y),
        _ => pr_str(a).cmp(&pr_str(b)),
    }
}

/// Micro-ops above which a txn's micro-ops are indexed (hashed) rather
/// than searched in place: [`internal_cases`]' future reads, and the read
/// states an op has read already (`versions::indexes`).
pub(super) const BIG_TXN: usize = 16;

pub(crate) fn internal_cases(h: &History) -> (Vec<Value>, Vec<Value>) {
    let mut internal = Vec::new();
    let mut future = Vec::new();
    // Expected state per key: (key, unknown prefix?, known suffix). Txns are
    // small, so a vector beats a hash map here. Its first `used` entries are
    // this txn's; the others keep their lists' room for the next txns (an
    // allocation per micro-op was a third of this pass, issue 23).
    let mut state: Vec<(Atom, bool, Vec<Atom>)> = Vec::new();
    // The next free entry, for `key`, its list empty.
    fn fresh<'a>(
        state: &'a mut Vec<(Atom, bool, Vec<Atom>)>,
        used: &mut usize,
        key: Atom,
        unknown: bool,
    ) -> &'a mut Vec<Atom> {
        if *used == state.len() {
            state.push((key, unknown, Vec::new()));
        }
        let e = &mut state[*used];
        *used += 1;
        (e.0, e.1) = (key, unknown);
        e.2.clear();
        &mut e.2
    }
    // This txn's keys' entries in `state` (a search per micro-op was
    // quadratic in a big txn's size).
    let mut slots: TxnMap<usize> = TxnMap::default();
    for (i, op) in h.ops.iter().enumerate() {
        if op.op_type != OpType::Ok {
            continue;
        }
        let mops = h.mops(op);
        let mut used = 0;
        slots.clear();
        for m in mops {
            let slot = slots.get(m.key()).copied();
            if slot.is_none() && matches!(m.f(), MopFn::Append | MopFn::Read) {
                // `fresh` takes entry `used` below.
                slots.push(m.key(), used);
            }
            match m.f() {
                MopFn::Append => match slot {
                    Some(j) => state[j].2.push(append_value(m)),
                    None => fresh(&mut state, &mut used, m.key(), true).push(append_value(m)),
                },
                MopFn::Read => {
                    let v = h.list(m.arg());
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
                        None => fresh(&mut state, &mut used, m.key(), false).extend_from_slice(v),
                    }
                }
                _ => {}
            }
        }
        // Future reads: an append of an element that an earlier read of the
        // same key in this txn already contained (the first such read).
        future.extend(future_read(h, i, mops));
    }
    (internal, future)
}

/// The future read of the txn completed at `i` (micro-ops `mops`), if any:
/// see [`internal_cases`].
fn future_read(h: &History, i: usize, mops: &[Mop]) -> Option<Value> {
    // A big txn's first read holding each (key, element) of the keys it
    // appends to, from one pass over those reads' elements: the first read
    // before an append that holds its element is that one when it comes
    // before the append, else there is none (searching the reads before
    // each append was quadratic in the txn's size: 30,000 reads and
    // appends of one key took 2 s). A txn that appends nothing has no
    // future read, and its reads are not looked at.
    let first_read = (mops.len() > BIG_TXN).then(|| {
        let mut appended: TxnMap<()> = TxnMap::default();
        for m in mops.iter().filter(|m| m.f() == MopFn::Append) {
            if !appended.contains(m.key()) {
                appended.push(m.key(), ());
            }
        }
        let mut first: HashMap<(Atom, Atom), usize> = HashMap::new();
        for (j, r) in mops.iter().enumerate() {
            if r.f() == MopFn::Read && appended.contains(r.key()) {
                for &e in h.list(r.arg()) {
                    first.entry((r.key(), e)).or_insert(j);
                }
            }
        }
        first
    });
    for (j, m) in mops.iter().enumerate() {
        if m.f() != MopFn::Append {
            continue;
        }
        let v = append_value(m);
        let read = match &first_read {
            None => mops[..j]
                .iter()
                .filter(|r| r.f() == MopFn::Read && r.key() == m.key())
                .find(|r| h.list(r.arg()).contains(&v)),
            Some(first) => first
                .get(&(m.key(), v))
                .filter(|&&p| p < j)
                .map(|&p| &mops[p]),
        };
        if let Some(r) = read {
            return Some(Value::kw_map(vec![
                ("op", h.op_value(i)),
                ("mop", h.mop_value(r)),
                ("element", h.atom_value(v)),
            ]));
        }
    }
    None
}

pub(crate) fn dirty_updates(h: &History) -> Vec<Value> {
    // A dirty update needs a failed append; most histories have none, and
    // then the second pass over all reads is not needed.
    let any_failed_append = h
        .ops
        .iter()
        .any(|op| op.op_type == OpType::Fail && h.mops(op).iter().any(|m| m.f() == MopFn::Append));
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
            if m.f() == MopFn::Append {
                writer.insert((m.key(), append_value(m)), i as u32);
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
                if m.f() == MopFn::Append {
                    failed.insert((m.key(), append_value(m)), i as u32);
                }
            }
        }
    }
    let mut out = Vec::new();
    if failed.is_empty() {
        return out;
    }
    for (i, m) in ok_reads(h) {
        for &e in h.list(m.arg()) {
            if let Some(&w) = failed.get(&(m.key(), e)) {
                out.push(bad_read_case(h, i, m, w, e));
            }
        }
    }
    out
}

/// Every read micro-op of every `:ok` op, with the op's position.
pub(super) fn ok_reads(h: &History) -> impl Iterator<Item = (usize, &Mop)> + '_ {
    h.ops
        .iter()
        .enumerate()
        .filter(|(_, op)| op.op_type == OpType::Ok)
        .flat_map(move |(i, op)| h.mops(op).iter().map(move |m| (i, m)))
        .filter(|(_, m)| m.f() == MopFn::Read)
}

/// Thin-air reads: for every `:ok` read and every element of its list that
/// no op of the history appends to that key (whatever its outcome, completed
/// or not), the G1a case `{:op .., :mop .., :writer nil, :element e}`, in
/// history order. Every model that proscribes G1a (read committed and
/// stronger) forbids them: no transaction, committed or not, wrote the
/// element. Elle does not look for them (its G1a is a read of a `:fail`ed
/// append), so [`analyze`] does not either; [`analyze_exact`] does.
pub fn thin_air_reads(h: &History) -> Vec<Value> {
    let appended: HashSet<(Atom, Atom)> = every_append(h).collect();
    let candidates = ok_reads(h).flat_map(|(i, m)| h.list(m.arg()).iter().map(move |&e| (i, m, e)));
    thin_air_cases(
        h,
        candidates.filter(|&(_, m, e)| !appended.contains(&(m.key(), e))),
    )
}

/// `(key, element)` of every append micro-op of the history, whatever
/// its op's type (invoked, failed ones included).
fn every_append(h: &History) -> impl Iterator<Item = (Atom, Atom)> + '_ {
    (h.mops.iter().filter(|m| m.f() == MopFn::Append)).filter_map(|m| match m.arg() {
        MopArg::Atom(a) => Some((m.key(), a)),
        _ => None,
    })
}

/// The G1a cases of [`thin_air_reads`] for (op, read, element) triples
/// already known to be thin air, in the order given.
fn thin_air_cases<'h>(
    h: &'h History,
    found: impl Iterator<Item = (usize, &'h Mop, Atom)>,
) -> Vec<Value> {
    found
        .map(|(i, m, e)| {
            Value::kw_map(vec![
                ("op", h.op_value(i)),
                ("mop", h.mop_value(m)),
                ("writer", Value::Nil),
                ("element", h.atom_value(e)),
            ])
        })
        .collect()
}

/// [`thin_air_reads`] from the inference's indexes, without a set of every
/// append (issue 23: a 1M-transaction history spent a tenth of its time
/// and 50 MB there). An element with a possible writer in the index was
/// appended; a read that is a prefix of its key's version order is checked
/// by comparing lists, not by a lookup per element. The few elements left
/// (no ok/info writer) are looked up among every op's appends, failed and
/// invoked ones included, in one pass over the micro-ops.
pub(super) fn thin_air_reads_indexed(h: &History, idx: &Indexes) -> Vec<Value> {
    let mut unwritten: Vec<(usize, &Mop, Atom)> = Vec::new();
    for (i, m) in ok_reads(h) {
        let list = h.list(m.arg());
        if list.is_empty() {
            continue;
        }
        match idx.orders.get(&m.key()) {
            Some(o) if o.values.starts_with(list) => {
                for (j, &e) in list.iter().enumerate() {
                    if o.writers[j] == NO_OP {
                        unwritten.push((i, m, e));
                    }
                }
            }
            _ => {
                for &e in list {
                    if idx.writer(m.key(), e).is_none() {
                        unwritten.push((i, m, e));
                    }
                }
            }
        }
    }
    if unwritten.is_empty() {
        return Vec::new();
    }
    let wanted: HashSet<(Atom, Atom)> = unwritten.iter().map(|&(_, m, e)| (m.key(), e)).collect();
    let appended: HashSet<(Atom, Atom)> =
        every_append(h).filter(|ke| wanted.contains(ke)).collect();
    thin_air_cases(
        h,
        unwritten
            .into_iter()
            .filter(|&(_, m, e)| !appended.contains(&(m.key(), e))),
    )
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
        shown.extend(h.list(m.arg()).iter().map(|&e| (m.key(), e)));
    }
    let mut keys: Vec<Atom> = Vec::new();
    let mut by_key: HashMap<Atom, Vec<usize>> = HashMap::new();
    for (i, op) in h.ops.iter().enumerate() {
        if op.op_type != OpType::Ok {
            continue;
        }
        for m in h.mops(op) {
            let MopArg::Atom(e) = m.arg() else { continue };
            if m.f() != MopFn::Append || shown.contains(&(m.key(), e)) {
                continue;
            }
            let ops = by_key.entry(m.key()).or_insert_with(|| {
                keys.push(m.key());
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
pub(super) fn bad_read_case(h: &History, reader: usize, m: &Mop, writer: u32, e: Atom) -> Value {
    Value::kw_map(vec![
        ("op", h.op_value(reader)),
        ("mop", h.mop_value(m)),
        ("writer", h.op_value(writer as usize)),
        ("element", h.atom_value(e)),
    ])
}

pub(crate) fn g1b_cases(h: &History) -> Vec<Value> {
    // (key, element) → last op whose non-final append it was.
    let intermediate = crate::infer::txn::intermediate_writes(h, MopFn::Append, append_value);
    let mut out = Vec::new();
    if intermediate.is_empty() {
        return out;
    }
    for (i, m) in ok_reads(h) {
        let Some(&e) = h.list(m.arg()).last() else {
            continue;
        };
        if let Some(&w) = intermediate.get(&(m.key(), e)) {
            if h.ops[w as usize].index != h.ops[i].index {
                out.push(bad_read_case(h, i, m, w, e));
            }
        }
    }
    out
}
