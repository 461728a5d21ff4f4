//! Dirty reads decided exactly when written values repeat: Elle's G1a and
//! G1b cases assume one writer per value, so a read of a value that a
//! committed transaction installed *and* a failed one (or another
//! transaction's intermediate write) also wrote would be reported although
//! the committed write explains it.
//!
//! A committed transaction's external read of `(key, value)` is explained
//! when `value` is `nil` (the initial state) or some other `:ok` or `:info`
//! transaction's final write of `key` is `value`. An unexplained read is a
//! dirty read in every resolution: `G1a` when a failed transaction wrote the
//! value, else `G1b` when some other transaction wrote it as an intermediate
//! value, else a read of a value nobody wrote, which ellery reports as `G1a`
//! with `:writer nil` (Elle has no name for it).

use hashbrown::HashMap;

use crate::edn::Value;
use crate::model::{Atom, History, MopArg, MopFn, OpType};

/// A register value: `None` is `nil`.
type Val = Option<Atom>;

fn val(arg: MopArg) -> Val {
    match arg {
        MopArg::Atom(a) => Some(a),
        _ => None,
    }
}

/// The op holding the writes of the transaction completed at position `i`
/// (an `:info` op's are its invocation's), or `None` for an invocation.
fn write_source(h: &History, i: usize) -> Option<&crate::model::Op> {
    let op = &h.ops[i];
    match op.op_type {
        OpType::Ok | OpType::Fail => Some(op),
        OpType::Info => Some(&h.ops[h.invocation_of(i).unwrap_or(i)]),
        OpType::Invoke => None,
    }
}

/// Who wrote each `(key, value)`: op positions of the transactions.
#[derive(Default)]
struct Writers {
    /// Final writes of `:ok` and `:info` transactions (several per value
    /// when values repeat).
    installed: HashMap<(Atom, Val), Vec<u32>>,
    /// Intermediate writes of `:ok` and `:info` transactions.
    intermediate: HashMap<(Atom, Val), Vec<u32>>,
    /// Writes of `:fail`ed transactions (the first).
    failed: HashMap<(Atom, Val), u32>,
}

impl Writers {
    fn new(h: &History) -> Writers {
        let mut w = Writers::default();
        let mut last: Vec<(Atom, Val)> = Vec::new();
        for (i, op) in h.ops.iter().enumerate() {
            let Some(src) = write_source(h, i) else {
                continue;
            };
            last.clear();
            for m in h.mops(src).iter().filter(|m| m.f == MopFn::Write) {
                let v = val(m.arg);
                if op.op_type == OpType::Fail {
                    w.failed.entry((m.key, v)).or_insert(i as u32);
                    continue;
                }
                match last.iter_mut().find(|(k, _)| *k == m.key) {
                    Some(slot) => {
                        w.intermediate
                            .entry((m.key, slot.1))
                            .or_default()
                            .push(i as u32);
                        slot.1 = v;
                    }
                    None => last.push((m.key, v)),
                }
            }
            for &kv in &last {
                w.installed.entry(kv).or_default().push(i as u32);
            }
        }
        w
    }
}

/// The exact `G1a` and `G1b` cases of `h` (Elle's case maps: `:op`, `:mop`,
/// `:writer`), in history order.
pub fn dirty_read_cases(h: &History) -> (Vec<Value>, Vec<Value>) {
    let writers = Writers::new(h);
    let (mut g1a, mut g1b) = (Vec::new(), Vec::new());
    let mut touched: Vec<Atom> = Vec::new();
    for (i, op) in h.ops.iter().enumerate() {
        if op.op_type != OpType::Ok {
            continue;
        }
        touched.clear();
        for m in h.mops(op) {
            if touched.contains(&m.key) {
                continue;
            }
            touched.push(m.key);
            let v = val(m.arg);
            if m.f != MopFn::Read || v.is_none() {
                continue;
            }
            let explained = writers
                .installed
                .get(&(m.key, v))
                .is_some_and(|ws| ws.iter().any(|&w| w != i as u32));
            if explained {
                continue;
            }
            let case = |writer: Value| {
                Value::kw_map(vec![
                    ("op", h.op_value(i)),
                    ("mop", h.mop_value(m)),
                    ("writer", writer),
                ])
            };
            if let Some(&w) = writers.failed.get(&(m.key, v)) {
                g1a.push(case(h.op_value(w as usize)));
            } else if let Some(&w) = writers
                .intermediate
                .get(&(m.key, v))
                .and_then(|ws| ws.iter().find(|&&w| w != i as u32))
            {
                g1b.push(case(h.op_value(w as usize)));
            } else {
                g1a.push(case(Value::Nil));
            }
        }
    }
    (g1a, g1b)
}

/// Lost updates every resolution has (Elle's `lost-update` case maps:
/// `:key`, `:value`, `:txns`): committed transactions that read a key and
/// wrote it, whose read only one committed transaction (or the initial
/// state) explains, the same one for all of them. Others are the solver's
/// choice.
pub fn certain_lost_updates(h: &History) -> Vec<Value> {
    let writers = Writers::new(h);
    // (key, writer or u32::MAX for the initial state) → value, readers.
    let mut groups: Vec<((Atom, u32), Val, Vec<usize>)> = Vec::new();
    let mut slot: HashMap<(Atom, u32), usize> = HashMap::new();
    let mut first: Vec<(Atom, Val, bool)> = Vec::new(); // key, value, read first
    for (i, op) in h.ops.iter().enumerate() {
        if op.op_type != OpType::Ok {
            continue;
        }
        first.clear();
        for m in h.mops(op) {
            if !first.iter().any(|f| f.0 == m.key) {
                first.push((m.key, val(m.arg), m.f == MopFn::Read));
            }
        }
        for &(k, v, read) in &first {
            let writes = h.mops(op).iter().any(|m| m.key == k && m.f == MopFn::Write);
            if !read || !writes {
                continue;
            }
            let others: Vec<u32> = writers
                .installed
                .get(&(k, v))
                .map(|ws| ws.iter().copied().filter(|&w| w != i as u32).collect())
                .unwrap_or_default();
            let source = match (v, others.as_slice()) {
                (None, []) => u32::MAX,
                (Some(_), [w]) if h.ops[*w as usize].op_type == OpType::Ok => *w,
                _ => continue,
            };
            let g = *slot.entry((k, source)).or_insert_with(|| {
                groups.push(((k, source), v, Vec::new()));
                groups.len() - 1
            });
            groups[g].2.push(i);
        }
    }
    groups
        .into_iter()
        .filter(|g| g.2.len() > 1)
        .map(|((k, _), v, readers)| {
            Value::kw_map(vec![
                ("key", h.atom_value(k)),
                ("value", v.map_or(Value::Nil, |a| h.atom_value(a))),
                (
                    "txns",
                    Value::Vector(readers.iter().map(|&r| h.op_value(r)).collect()),
                ),
            ])
        })
        .collect()
}

/// Whether Elle's G1a / G1b cases (which look at every read, also those
/// after the transaction's own write, and take a failed transaction's
/// intermediate write for a G1b) differ from the exact ones.
pub fn elle_dirty_reads_differ(h: &History) -> bool {
    use crate::infer::rw_register::{g1a_cases, g1b_cases};
    let (elle_a, elle_b) = (g1a_cases(h), g1b_cases(h));
    if elle_a.is_empty() && elle_b.is_empty() {
        // Then no exact case either: an exact one needs a failed or
        // intermediate writer, which Elle's cases would name too, or a
        // never-written value (see `inference_misreads`).
        return false;
    }
    let (a, b) = dirty_read_cases(h);
    a != elle_a || b != elle_b
}

/// Whether some value is written to a key by two transactions (`:ok`,
/// `:info` or `:fail`; final or intermediate), twice by one, or `nil` is
/// written (as the initial state has it): then a read's writer is a choice,
/// and Elle's inference, which takes the one writer of each value, does not
/// apply.
pub fn values_repeat(h: &History) -> bool {
    let mut seen: HashMap<(Atom, Val), ()> = HashMap::new();
    for i in 0..h.ops.len() {
        let Some(src) = write_source(h, i) else {
            continue;
        };
        for m in h.mops(src).iter().filter(|m| m.f == MopFn::Write) {
            let v = val(m.arg);
            if v.is_none() || seen.insert((m.key, v), ()).is_some() {
                return true;
            }
        }
    }
    false
}

/// Why Elle's rw-register inference would misread `h`, if it would: one
/// pass over the writes and one over the committed reads, with Elle's own
/// dirty-read cases compared to the exact ones only when a failed or
/// intermediate write exists. The reasons, in the order checked:
/// written values repeat ([`values_repeat`]); a read returns a value nobody
/// wrote; Elle's G1a/G1b cases differ from the exact ones
/// ([`elle_dirty_reads_differ`]); a transaction writes a key, reads it and
/// writes it again, which Elle's lost-update check counts as a
/// read-modify-write.
pub fn inference_misreads(h: &History) -> Option<&'static str> {
    // Each value's one writer (op position), once values are unique.
    let mut written: HashMap<(Atom, Val), u32> = HashMap::new();
    let mut dirty_writes = false;
    let mut last: Vec<(Atom, Val)> = Vec::new();
    for (i, op) in h.ops.iter().enumerate() {
        let Some(src) = write_source(h, i) else {
            continue;
        };
        last.clear();
        for m in h.mops(src).iter().filter(|m| m.f == MopFn::Write) {
            let v = val(m.arg);
            if v.is_none() || written.insert((m.key, v), i as u32).is_some() {
                return Some("written values repeat, so a read's writer is a choice the inference cannot make");
            }
            dirty_writes |= op.op_type == OpType::Fail || last.iter().any(|(k, _)| *k == m.key);
            last.push((m.key, v));
        }
    }
    // Per key of one transaction: (first micro-op was a write, read since
    // a write).
    let mut seen: Vec<(Atom, bool, bool)> = Vec::new();
    for (i, op) in h.ops.iter().enumerate() {
        if op.op_type != OpType::Ok {
            continue;
        }
        seen.clear();
        for m in h.mops(op) {
            let v = val(m.arg);
            match seen.iter_mut().find(|s| s.0 == m.key) {
                None => {
                    // The reader's own (later) write explains nothing.
                    let writer = written.get(&(m.key, v)).filter(|&&w| w != i as u32);
                    if m.f == MopFn::Read && v.is_some() && writer.is_none() {
                        return Some("a read returned a value nobody wrote, which the inference does not report");
                    }
                    seen.push((m.key, m.f == MopFn::Write, false));
                }
                Some(s) if m.f == MopFn::Read => s.2 = true,
                Some(s) if s.1 && s.2 => {
                    return Some("Elle's lost-update check counts a read that follows the transaction's own write");
                }
                Some(_) => {}
            }
        }
    }
    if dirty_writes && elle_dirty_reads_differ(h) {
        return Some("Elle's G1a/G1b cases include reads no choice of writer makes dirty");
    }
    None
}
