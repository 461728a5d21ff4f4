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
use crate::infer::txn::TxnMap;
use crate::model::{Atom, History, Mop, MopArg, MopFn, OpType};

mod scan;
mod thin_air;
use scan::scan;
pub use thin_air::thin_air_cases;

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

/// The first two distinct transactions (op positions) that wrote one
/// `(key, value)` and how many did: enough to answer "another than `i`",
/// and "only one other than `i`", without a list per value.
#[derive(Clone, Copy)]
struct FirstTwo {
    first: u32,
    second: u32,
    count: u32,
}

impl FirstTwo {
    fn new(t: u32) -> FirstTwo {
        FirstTwo {
            first: t,
            second: u32::MAX,
            count: 1,
        }
    }

    /// Adds writer `t` (each transaction at most once per value).
    fn add(&mut self, t: u32) {
        if self.count == 1 {
            self.second = t;
        }
        self.count += 1;
    }

    /// A writer other than `i`, if any.
    fn other_than(&self, i: u32) -> Option<u32> {
        if self.first != i {
            Some(self.first)
        } else {
            (self.count > 1).then_some(self.second)
        }
    }

    /// The one writer other than `i`, if exactly one: writers are distinct,
    /// so with three or more there are at least two others.
    fn only_other_than(&self, i: u32) -> Option<u32> {
        match self.count {
            1 => (self.first != i).then_some(self.first),
            2 if self.first == i => Some(self.second),
            2 if self.second == i => Some(self.first),
            _ => None,
        }
    }

    /// Whether no writer other than `i` exists.
    fn none_other_than(&self, i: u32) -> bool {
        self.count == 1 && self.first == i
    }
}

fn note(map: &mut HashMap<(Atom, Val), FirstTwo>, kv: (Atom, Val), t: u32) {
    map.entry(kv)
        .and_modify(|w| w.add(t))
        .or_insert_with(|| FirstTwo::new(t));
}

/// Who wrote each `(key, value)`: op positions of the transactions.
#[derive(Default)]
struct Writers {
    /// Final writes of `:ok` and `:info` transactions (several per value
    /// when values repeat).
    installed: HashMap<(Atom, Val), FirstTwo>,
    /// Intermediate writes of `:ok` and `:info` transactions.
    intermediate: HashMap<(Atom, Val), FirstTwo>,
    /// Writes of `:fail`ed transactions (the first).
    failed: HashMap<(Atom, Val), u32>,
}

impl Writers {
    fn new(h: &History) -> Writers {
        let mut w = Writers::default();
        let mut last: TxnMap<Val> = TxnMap::default();
        for (i, op) in h.ops.iter().enumerate() {
            let Some(src) = write_source(h, i) else {
                continue;
            };
            last.clear();
            for m in h.mops(src).iter().filter(|m| m.f() == MopFn::Write) {
                let v = val(m.arg());
                if op.op_type == OpType::Fail {
                    w.failed.entry((m.key(), v)).or_insert(i as u32);
                    continue;
                }
                match last.get_mut(m.key()) {
                    Some(slot) => {
                        // One transaction may write the same intermediate
                        // value twice: count it once.
                        let kv = (m.key(), *slot);
                        if w.intermediate
                            .get(&kv)
                            .is_none_or(|f| f.first != i as u32 && f.second != i as u32)
                        {
                            note(&mut w.intermediate, kv, i as u32);
                        }
                        *slot = v;
                    }
                    None => last.push(m.key(), v),
                }
            }
            for &kv in last.entries() {
                note(&mut w.installed, kv, i as u32);
            }
        }
        w
    }
}

/// The facts every resolution of a history has, as Elle's case maps.
pub struct Facts {
    /// Dirty reads of failed writes and reads of values nobody wrote.
    pub g1a: Vec<Value>,
    /// Dirty reads of intermediate writes.
    pub g1b: Vec<Value>,
    /// Certain lost updates (see `lost_updates`).
    pub lost_updates: Vec<Value>,
}

/// [`dirty_read_cases`] and [`facts`]'s `lost_updates`, from one index of
/// the writers.
pub fn facts(h: &History) -> Facts {
    let writers = Writers::new(h);
    let (g1a, g1b) = dirty_reads(h, &writers);
    Facts {
        g1a,
        g1b,
        lost_updates: lost_updates(h, &writers),
    }
}

/// The exact `G1a` and `G1b` cases of `h` (Elle's case maps: `:op`, `:mop`,
/// `:writer`), in history order.
pub fn dirty_read_cases(h: &History) -> (Vec<Value>, Vec<Value>) {
    dirty_reads(h, &Writers::new(h))
}

/// Calls `f` on each external read of a non-`nil` value by a committed
/// transaction (its first micro-op on the key, a read): the op's position,
/// the micro-op and the `(key, value)` read. Until `f` says stop (`false`);
/// returns whether it never did.
fn external_reads(h: &History, mut f: impl FnMut(usize, &Mop, (Atom, Val)) -> bool) -> bool {
    let mut touched: TxnMap<()> = TxnMap::default();
    for (i, op) in h.ops.iter().enumerate() {
        if op.op_type != OpType::Ok {
            continue;
        }
        touched.clear();
        for m in h.mops(op) {
            if touched.contains(m.key()) {
                continue;
            }
            touched.push(m.key(), ());
            let v = val(m.arg());
            if m.f() == MopFn::Read && v.is_some() && !f(i, m, (m.key(), v)) {
                return false;
            }
        }
    }
    true
}

fn dirty_reads(h: &History, writers: &Writers) -> (Vec<Value>, Vec<Value>) {
    let (mut g1a, mut g1b) = (Vec::new(), Vec::new());
    external_reads(h, |i, m, kv| {
        let explained = writers
            .installed
            .get(&kv)
            .is_some_and(|ws| ws.other_than(i as u32).is_some());
        if explained {
            return true;
        }
        let case = |writer: Value| {
            Value::kw_map(vec![
                ("op", h.op_value(i)),
                ("mop", h.mop_value(m)),
                ("writer", writer),
            ])
        };
        if let Some(&w) = writers.failed.get(&kv) {
            g1a.push(case(h.op_value(w as usize)));
        } else if let Some(w) = writers
            .intermediate
            .get(&kv)
            .and_then(|ws| ws.other_than(i as u32))
        {
            g1b.push(case(h.op_value(w as usize)));
        } else {
            g1a.push(case(Value::Nil));
        }
        true
    });
    (g1a, g1b)
}

/// Lost updates every resolution has (Elle's `lost-update` case maps:
/// `:key`, `:value`, `:txns`): committed transactions that read a key and
/// wrote it, whose read only one committed transaction (or the initial
/// state) explains, the same one for all of them. Others are the solver's
/// choice.
fn lost_updates(h: &History, writers: &Writers) -> Vec<Value> {
    // (key, writer or u32::MAX for the initial state) → value, readers.
    let mut groups: Vec<((Atom, u32), Val, Vec<usize>)> = Vec::new();
    let mut slot: HashMap<(Atom, u32), usize> = HashMap::new();
    // Per key of the transaction, in first-use order: the first micro-op's
    // value, whether it was a read, and whether any micro-op writes the key
    // (one pass: a search per micro-op was quadratic in a big one).
    let mut first: TxnMap<(Val, bool, bool)> = TxnMap::default();
    for (i, op) in h.ops.iter().enumerate() {
        if op.op_type != OpType::Ok {
            continue;
        }
        first.clear();
        for m in h.mops(op) {
            let write = m.f() == MopFn::Write;
            match first.get_mut(m.key()) {
                Some(e) => e.2 |= write,
                None => first.push(m.key(), (val(m.arg()), m.f() == MopFn::Read, write)),
            }
        }
        for &(k, (v, read, writes)) in first.entries() {
            if !read || !writes {
                continue;
            }
            let installers = writers.installed.get(&(k, v));
            let none_other = installers.is_none_or(|ws| ws.none_other_than(i as u32));
            let source = match (v, installers.and_then(|ws| ws.only_other_than(i as u32))) {
                (None, _) if none_other => u32::MAX,
                (Some(_), Some(w)) if h.ops[w as usize].op_type == OpType::Ok => w,
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
    elle_dirty_cases_differ(h).0
}

/// Elle's G1a and G1b cases (`g1a-cases`, `g1b-cases`), in the order and
/// form the rw-register inference reports them.
pub type ElleDirtyCases = [Vec<Value>; 2];

/// [`elle_dirty_reads_differ`], and Elle's cases it computed (the
/// inference reports them: issue 23, computed once).
fn elle_dirty_cases_differ(h: &History) -> (bool, ElleDirtyCases) {
    use crate::infer::rw_register::{g1a_cases, g1b_cases};
    let (elle_a, elle_b) = (g1a_cases(h), g1b_cases(h));
    if elle_a.is_empty() && elle_b.is_empty() {
        // Then no exact case either: an exact one needs a failed or
        // intermediate writer, which Elle's cases would name too, or a
        // never-written value (see `inference_misreads`).
        return (false, [elle_a, elle_b]);
    }
    let (a, b) = dirty_read_cases(h);
    (a != elle_a || b != elle_b, [elle_a, elle_b])
}

/// Whether some value is written to a key by two transactions (`:ok`,
/// `:info` or `:fail`; final or intermediate), twice by one, or `nil` is
/// written (as the initial state has it): then a read's writer is a choice,
/// and Elle's inference, which takes the one writer of each value, does not
/// apply.
pub fn values_repeat(h: &History) -> bool {
    scan(h, false, usize::MAX).repeat
}

/// Why Elle's rw-register inference would misread `h`, if it would: one
/// pass over the writes and one over the committed reads (`scan`), with
/// Elle's own dirty-read cases compared to the exact ones only when a
/// committed read returns a failed or intermediate value. The reasons, in the order checked:
/// written values repeat ([`values_repeat`]); a read returns a value nobody
/// wrote; Elle's G1a/G1b cases differ from the exact ones
/// ([`elle_dirty_reads_differ`]); a transaction writes a key, reads it and
/// writes it again, which Elle's lost-update check counts as a
/// read-modify-write.
pub fn inference_misreads(h: &History) -> Option<Misread> {
    misreads_splitting_from(h, crate::par::SPLIT_FROM).0
}

/// [`inference_misreads`], and Elle's G1a/G1b cases when it has them (no
/// value repeats, none is read from thin air), for the inference to report
/// rather than compute again ([`crate::infer::rw_register::analyze_knowing`]).
pub fn inference_misreads_keeping_cases(h: &History) -> (Option<Misread>, Option<ElleDirtyCases>) {
    misreads_splitting_from(h, crate::par::SPLIT_FROM)
}

/// [`inference_misreads_keeping_cases`], the reads cut in two from `split`
/// ops on.
fn misreads_splitting_from(h: &History, split: usize) -> (Option<Misread>, Option<ElleDirtyCases>) {
    let f = scan(h, true, split);
    if f.repeat {
        return (Some(Misread::RepeatedValues), None);
    }
    if f.thin_air {
        return (Some(Misread::ThinAir), None);
    }
    let cases = if f.dirty_reads {
        let (differ, elle) = elle_dirty_cases_differ(h);
        if differ {
            return (Some(Misread::ElleDirtyReads), None);
        }
        elle
    } else {
        // No committed read returns a failed or intermediate value: Elle
        // has no case, and then no exact case exists either (see
        // `elle_dirty_cases_differ`).
        [Vec::new(), Vec::new()]
    };
    (
        f.own_write_read.then_some(Misread::OwnWriteRead),
        Some(cases),
    )
}

/// What the inference gets wrong about a history ([`inference_misreads`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Misread {
    /// Written values repeat: a read's writer is a choice.
    RepeatedValues,
    /// A read returned a value nobody wrote.
    ThinAir,
    /// Elle's G1a/G1b cases include reads no choice of writer makes dirty.
    ElleDirtyReads,
    /// A transaction writes a key, reads it and writes it again, which
    /// Elle's lost-update check counts as a read-modify-write. Only this
    /// check is affected, and it can only report too much (another
    /// transaction would have to read the first, intermediate write, which
    /// is G1b anyway). `auto`'s inference counts external reads only
    /// ([`crate::infer::txn::ReadsCounted::External`]), so its answer
    /// stands: nothing is routed on this reason.
    OwnWriteRead,
}

impl Misread {
    /// Why, in a sentence for `--verbose`.
    pub fn reason(self) -> &'static str {
        match self {
            Misread::RepeatedValues => {
                "written values repeat, so a read's writer is a choice the inference cannot make"
            }
            Misread::ThinAir => {
                "a read returned a value nobody wrote, which the inference does not report"
            }
            Misread::ElleDirtyReads => {
                "Elle's G1a/G1b cases include reads no choice of writer makes dirty"
            }
            Misread::OwnWriteRead => {
                "Elle's lost-update check counts a read that follows the transaction's own write"
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One invocation and completion per transaction, in turn: (process,
    /// completion type, invocation's value, completion's value).
    fn txns_history(txns: &[(usize, &str, &str, &str)]) -> History {
        let mut src = String::new();
        for (i, (p, t, invoke, done)) in txns.iter().enumerate() {
            src += &format!(
                "{{:index {}, :type :invoke, :process {p}, :f :txn, :value {invoke}}}\n",
                2 * i
            );
            src += &format!(
                "{{:index {}, :type :{t}, :process {p}, :f :txn, :value {done}}}\n",
                2 * i + 1
            );
        }
        crate::read::read_history_bytes(src.into_bytes(), "h", crate::model::Format::Edn)
            .expect("reads")
    }

    fn history(ops: &[(&str, &str)]) -> History {
        let txns: Vec<_> = ops
            .iter()
            .enumerate()
            .map(|(i, &(t, v))| (i / 2, t, v, v))
            .collect();
        txns_history(&txns)
    }

    /// Certain lost updates come out the same whether the transactions
    /// are small or padded past the size at which their keys are hashed:
    /// two committed transactions that read key 1 as nil and then write
    /// it, whose only other explanation is the initial state.
    #[test]
    fn lost_updates_of_big_transactions_are_those_of_small_ones() {
        let pad = |from: i64| -> String {
            (from..from + 40)
                .map(|k| format!("[:w {k} {}] [:r {k} nil]", k + 1))
                .collect::<Vec<_>>()
                .join(" ")
        };
        let summary = |h: &History| -> Vec<(Value, Value, usize)> {
            facts(h)
                .lost_updates
                .iter()
                .map(|c| {
                    let txns = match c.get_kw("txns") {
                        Some(Value::Vector(t)) => t.len(),
                        _ => 0,
                    };
                    let get = |k| c.get_kw(k).cloned().unwrap_or(Value::Nil);
                    (get("key"), get("value"), txns)
                })
                .collect()
        };
        let small = history(&[
            ("ok", "[[:r 1 nil] [:w 1 10]]"),
            ("ok", "[[:r 1 nil] [:w 1 11]]"),
        ]);
        let (a, b) = (
            format!("[[:r 1 nil] {} [:w 1 10]]", pad(100)),
            format!("[[:r 1 nil] {} [:w 1 11]]", pad(200)),
        );
        let big = history(&[("ok", a.as_str()), ("ok", b.as_str())]);
        let want = vec![(Value::Int(1), Value::Nil, 2)];
        assert_eq!(summary(&small), want);
        assert_eq!(summary(&big), want);
    }

    /// Each reason, and the order the reasons are checked in, with the
    /// reads scanned on one thread and cut in two halves (the ops of the
    /// second transaction on are in the second half). The scan judges
    /// reads in its one pass unless a late intermediate mark sends them
    /// to the second pass, so the halves matter only there: the scan's own
    /// random-history test compares that pass cut in halves.
    #[test]
    fn misreads_name_each_reason_whichever_half_its_read_is_in() {
        let ok = |v: &str| ("ok", v.to_string());
        let misread = |ops: Vec<(&str, String)>| {
            let ops: Vec<(&str, &str)> = ops.iter().map(|(t, v)| (*t, v.as_str())).collect();
            let h = history(&ops);
            let whole = misreads_splitting_from(&h, usize::MAX);
            assert_eq!(misreads_splitting_from(&h, 0), whole, "{ops:?}");
            whole.0
        };
        let clean = "[[:w 7 1] [:r 7 1]]";
        type Case<'a> = (Vec<(&'a str, String)>, Option<Misread>);
        let cases: Vec<Case> = vec![
            (vec![ok(clean), ok("[[:w 3 1]]"), ok("[[:r 3 1]]")], None),
            (vec![ok("[[:r 3 1]]"), ok(clean), ok("[[:w 3 1]]")], None),
            (
                vec![ok(clean), ok("[[:w 3 1]]"), ("fail", "[[:w 3 1]]".into())],
                Some(Misread::RepeatedValues),
            ),
            (
                vec![ok(clean), ok("[[:w 3 nil]]")],
                Some(Misread::RepeatedValues),
            ),
            // A read of a never-written value, and of the reader's own
            // later write, in either half.
            (vec![ok(clean), ok("[[:r 3 5]]")], Some(Misread::ThinAir)),
            (vec![ok("[[:r 3 5]]"), ok(clean)], Some(Misread::ThinAir)),
            (
                vec![ok(clean), ok("[[:r 3 2] [:w 3 2]]")],
                Some(Misread::ThinAir),
            ),
            (
                vec![ok(clean), ok("[[:w 3 1] [:r 3 1] [:w 3 2]]")],
                Some(Misread::OwnWriteRead),
            ),
            (
                vec![ok("[[:w 3 1] [:r 3 1] [:w 3 2]]"), ok(clean)],
                Some(Misread::OwnWriteRead),
            ),
            // Repeated values first, wherever the thin-air read is.
            (
                vec![ok("[[:r 7 9]]"), ok("[[:w 3 1]]"), ok("[[:w 3 1]]")],
                Some(Misread::RepeatedValues),
            ),
            // Thin air before the own write read, in either half.
            (
                vec![ok("[[:w 3 1] [:r 3 1] [:w 3 2]]"), ok("[[:r 7 9]]")],
                Some(Misread::ThinAir),
            ),
            (
                vec![ok("[[:r 7 9]]"), ok("[[:w 3 1] [:r 3 1] [:w 3 2]]")],
                Some(Misread::ThinAir),
            ),
        ];
        for (ops, want) in cases {
            assert_eq!(misread(ops.clone()), want, "{ops:?}");
        }
    }

    /// Where a failed or intermediate write exists and Elle's dirty-read
    /// cases are the exact ones, the scan keeps Elle's cases, and the
    /// inference given them reports what it finds itself (issue 23: they
    /// are computed once); without such a write there is nothing to keep.
    #[test]
    fn the_scan_keeps_elle_dirty_cases_for_the_inference() {
        use crate::infer::rw_register::{
            analyze_knowing, analyze_validated, g1a_cases, g1b_cases, number, Known,
        };
        let h = history(&[
            ("ok", "[[:w 7 1] [:r 7 1]]"),
            ("fail", "[[:w 3 1]]"),
            ("ok", "[[:r 3 1] [:w 4 1] [:w 4 2]]"),
            ("ok", "[[:r 4 1] [:r 7 1]]"),
        ]);
        let (misread, cases) = inference_misreads_keeping_cases(&h);
        assert_eq!(misread, None);
        let elle = [g1a_cases(&h), g1b_cases(&h)];
        assert_eq!((elle[0].len(), elle[1].len()), (1, 1));
        assert_eq!(cases.as_ref(), Some(&elle));
        let opts = crate::infer::rw_register::RwOptions::default();
        let extra = crate::infer::txn::ExtraGraph::None;
        let known = Known {
            dirty: cases,
            numbered: Some(number(&h)),
            ..Known::default()
        };
        let given = analyze_knowing(&h, extra, &opts, known).expect("inferred");
        let computed = analyze_validated(&h, extra, &opts).expect("inferred");
        assert_eq!(given.anomalies, computed.anomalies);
        assert_eq!(given.edges, computed.edges);
        assert!(!given.edges.is_empty());
        assert!(given.anomalies.contains("G1a") && given.anomalies.contains("G1b"));
        let clean = history(&[("ok", "[[:w 7 1]]"), ("ok", "[[:r 7 1]]")]);
        let none = Some([Vec::new(), Vec::new()]);
        assert_eq!(inference_misreads_keeping_cases(&clean), (None, none));
    }

    /// A random history of the shapes the dirty-read marks must tell
    /// apart: failed and `:info` transactions, intermediate writes, reads
    /// of a transaction's own writes, invocations whose writes differ from
    /// their completions', nil writes and repeated values now and then.
    fn random_dirty_history(seed: &mut u64) -> History {
        let mut next = |n: u64| {
            *seed ^= *seed << 13;
            *seed ^= *seed >> 7;
            *seed ^= *seed << 17;
            *seed % n
        };
        let mut written: Vec<(u64, u64)> = Vec::new();
        let mut fresh = 1;
        let mut txns = Vec::new();
        for t in 0..2 + next(6) as usize {
            let mut invoke = String::new();
            let mut done = String::new();
            for _ in 0..1 + next(4) {
                let k = next(3);
                if next(2) == 0 {
                    let v = match next(12) {
                        0 => "nil".to_string(),
                        1 if !written.is_empty() => {
                            written[next(written.len() as u64) as usize].1.to_string()
                        }
                        _ => {
                            fresh += 1;
                            written.push((k, fresh));
                            fresh.to_string()
                        }
                    };
                    invoke += &format!("[:w {k} {v}]");
                    // Now and then the completion writes something else.
                    let v2 = if next(10) == 0 {
                        (fresh + 100).to_string()
                    } else {
                        v
                    };
                    done += &format!("[:w {k} {v2}]");
                } else {
                    let v = match next(4) {
                        0 => "nil".to_string(),
                        _ if !written.is_empty() => {
                            written[next(written.len() as u64) as usize].1.to_string()
                        }
                        _ => "nil".to_string(),
                    };
                    invoke += &format!("[:r {k} nil]");
                    done += &format!("[:r {k} {v}]");
                }
            }
            let ty = ["ok", "ok", "ok", "fail", "info"][next(5) as usize];
            let done = if ty == "info" && next(3) == 0 {
                invoke.clone()
            } else {
                done
            };
            txns.push((t, ty, format!("[{invoke}]"), format!("[{done}]")));
        }
        let txns: Vec<_> = txns
            .iter()
            .map(|(p, t, i, d)| (*p, *t, i.as_str(), d.as_str()))
            .collect();
        txns_history(&txns)
    }

    /// The cases the scan hands the inference are Elle's own, whether it
    /// computed them (some committed read returns a failed or intermediate
    /// value) or knew them to be empty, on thousands of random histories.
    #[test]
    fn the_scan_knows_when_elle_has_no_dirty_case() {
        use crate::infer::rw_register::{g1a_cases, g1b_cases};
        let mut seed = 0x2545_F491_4F6C_DD1D_u64;
        let (mut empty, mut found) = (0, 0);
        for _ in 0..20_000 {
            let h = random_dirty_history(&mut seed);
            let (_, cases) = inference_misreads_keeping_cases(&h);
            let Some(cases) = cases else { continue };
            let elle = [g1a_cases(&h), g1b_cases(&h)];
            assert_eq!(cases, elle, "{:?}", h.ops);
            if elle[0].is_empty() && elle[1].is_empty() {
                empty += 1;
            } else {
                found += 1;
            }
        }
        // Both kinds of history are common enough to test the marks.
        assert!(empty > 2000 && found > 200, "{empty} {found}");
    }
}
