//! Tests of the generator: they parse the emitted EDN with `edn-rs` (an
//! independent reader) and check structure, determinism, and per-mode
//! semantics by replaying the history.

use super::*;
use edn_rs::Edn;
use std::collections::{HashMap, HashSet};
use std::str::FromStr;

/// A micro-op's third element.
#[derive(Clone, Debug, PartialEq, Eq)]
enum V {
    Nil,
    Int(u64),
    List(Vec<u64>),
}

/// A parsed op line.
#[derive(Clone, Debug)]
struct Op {
    index: u64,
    time: u64,
    ty: String,
    process: u64,
    mops: Vec<(String, u64, V)>,
}

fn int(e: &Edn) -> u64 {
    match e {
        Edn::UInt(n) => *n,
        Edn::Int(n) if *n >= 0 => *n as u64,
        other => panic!("not a natural number: {other:?}"),
    }
}

fn key(e: &Edn) -> String {
    match e {
        Edn::Key(k) => k.clone(),
        other => panic!("not a keyword: {other:?}"),
    }
}

/// Parses one line with edn-rs, checking it is a map with exactly Elle's keys,
/// printed in Elle's order.
fn parse_line(line: &str) -> Op {
    let order = [
        "{:index ",
        ", :time ",
        ", :type ",
        ", :process ",
        ", :f :txn",
        ", :value [",
    ];
    let pos: Vec<usize> = order
        .iter()
        .map(|k| {
            line.find(k)
                .unwrap_or_else(|| panic!("{k} missing: {line}"))
        })
        .collect();
    assert_eq!(pos[0], 0, "{line}");
    assert!(pos.windows(2).all(|w| w[0] < w[1]), "key order: {line}");
    assert!(line.ends_with("]}"), "{line}");
    let edn = Edn::from_str(line).unwrap_or_else(|e| panic!("bad EDN {line}: {e:?}"));
    let Edn::Map(m) = edn else {
        panic!("not a map: {line}")
    };
    let m = m.to_map();
    let keys: Vec<&str> = m.keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [":f", ":index", ":process", ":time", ":type", ":value"],
        "{line}"
    );
    assert_eq!(key(&m[":f"]), ":txn");
    let Edn::Vector(mops) = m[":value"].clone() else {
        panic!("value not a vector: {line}")
    };
    let mops = mops
        .to_vec()
        .into_iter()
        .map(|mop| {
            let Edn::Vector(mop) = mop else {
                panic!("mop not a vector: {line}")
            };
            let mop = mop.to_vec();
            assert_eq!(mop.len(), 3, "{line}");
            let v = match &mop[2] {
                Edn::Nil => V::Nil,
                Edn::Vector(vs) => V::List(vs.clone().to_vec().iter().map(int).collect()),
                e => V::Int(int(e)),
            };
            (key(&mop[0]), int(&mop[1]), v)
        })
        .collect();
    Op {
        index: int(&m[":index"]),
        time: int(&m[":time"]),
        ty: key(&m[":type"]),
        process: int(&m[":process"]),
        mops,
    }
}

fn gen(opts: &GenOptions) -> (String, GenSummary) {
    let mut out = Vec::new();
    let summary = generate(opts, &mut out).expect("generate");
    (String::from_utf8(out).expect("utf-8"), summary)
}

fn parse(text: &str) -> Vec<Op> {
    text.lines().map(parse_line).collect()
}

/// For each completion index, the index of its invocation.
fn invocations(ops: &[Op]) -> HashMap<u64, u64> {
    let mut open: HashMap<u64, u64> = HashMap::new();
    let mut inv = HashMap::new();
    for op in ops {
        if op.ty == ":invoke" {
            open.insert(op.process, op.index);
        } else {
            inv.insert(op.index, open.remove(&op.process).expect("open invoke"));
        }
    }
    inv
}

/// Structure: dense indices, increasing times, invoke/complete pairing per
/// process, retired crashed processes, completion values consistent with
/// invocations, counts equal to the summary.
fn check_well_formed(ops: &[Op], s: &GenSummary, opts: &GenOptions) {
    let w = if opts.workload == Workload::ListAppend {
        ":append"
    } else {
        ":w"
    };
    let mut open: HashMap<u64, &Op> = HashMap::new();
    let mut crashed: HashSet<u64> = HashSet::new();
    let (mut ok, mut fail, mut info) = (0, 0, 0);
    for (i, op) in ops.iter().enumerate() {
        assert_eq!(op.index, i as u64);
        if i > 0 {
            assert!(op.time > ops[i - 1].time, "time at {i}");
        }
        assert!(
            !crashed.contains(&op.process),
            "crashed process reused at {i}"
        );
        assert!(!op.mops.is_empty() && op.mops.len() <= opts.max_mops.max(2));
        for (f, _, _) in &op.mops {
            assert!(f == ":r" || f == w, "{f}");
        }
        if op.ty == ":invoke" {
            assert!(
                open.insert(op.process, op).is_none(),
                "double invoke at {i}"
            );
            for (f, _, v) in &op.mops {
                assert_eq!(f == ":r", *v == V::Nil, "invoke value at {i}");
            }
            continue;
        }
        let inv = open.remove(&op.process).expect("completion without invoke");
        match op.ty.as_str() {
            ":ok" => {
                ok += 1;
                assert_eq!(inv.mops.len(), op.mops.len());
                for (a, b) in inv.mops.iter().zip(&op.mops) {
                    assert_eq!((&a.0, a.1), (&b.0, b.1), "ok mops at {i}");
                    if a.0 == w {
                        assert_eq!(a.2, b.2);
                    } else if opts.workload == Workload::ListAppend {
                        assert!(matches!(b.2, V::List(_)), "list read at {i}");
                    } else {
                        assert!(!matches!(b.2, V::List(_)), "register read at {i}");
                    }
                }
            }
            ":fail" | ":info" => {
                assert_eq!(inv.mops, op.mops, "fail/info value at {i}");
                if op.ty == ":info" {
                    info += 1;
                    crashed.insert(op.process);
                } else {
                    fail += 1;
                }
            }
            t => panic!("bad type {t}"),
        }
    }
    assert!(open.is_empty(), "unfinished txns");
    assert_eq!(s.ops, ops.len() as u64);
    assert_eq!(s.txns, opts.txns as u64);
    assert_eq!(s.ops, 2 * s.txns);
    assert_eq!((s.ok, s.fail, s.info), (ok, fail, info));
    assert_eq!(s.ok + s.fail + s.info, s.txns);
}

/// Written values are unique per key and ascending in invocation order.
fn check_unique_ascending_writes(ops: &[Op]) {
    let mut last: HashMap<u64, u64> = HashMap::new();
    for op in ops.iter().filter(|o| o.ty == ":invoke") {
        for (f, k, v) in &op.mops {
            if f != ":r" {
                let V::Int(v) = v else { panic!("write value") };
                let prev = last.insert(*k, *v).unwrap_or(0);
                assert!(*v > prev, "key {k}: {v} after {prev}");
            }
        }
    }
}

/// The database state during a replay.
#[derive(Default)]
struct State {
    lists: HashMap<u64, Vec<u64>>,
    regs: HashMap<u64, u64>,
}

impl State {
    fn read(&self, k: u64, list: bool) -> V {
        if list {
            V::List(self.lists.get(&k).cloned().unwrap_or_default())
        } else {
            self.regs.get(&k).map_or(V::Nil, |&v| V::Int(v))
        }
    }

    fn write(&mut self, k: u64, v: &V, list: bool) {
        let V::Int(v) = *v else {
            panic!("write of {v:?}")
        };
        if list {
            self.lists.entry(k).or_default().push(v);
        } else {
            self.regs.insert(k, v);
        }
    }
}

/// Replays `s.effect_order` serially: every `:ok` read must equal the state
/// at that point (with the txn's own earlier writes), every `:ok` txn must be
/// in the order exactly once, and, if `realtime`, the order must respect real
/// time. Returns the number of real-time inversions found.
fn replay(ops: &[Op], s: &GenSummary, list: bool, realtime: bool) -> usize {
    let inv = invocations(ops);
    let mut state = State::default();
    let mut seen = HashSet::new();
    let mut max_inv = None;
    let mut inversions = 0;
    for &c in &s.effect_order {
        assert!(seen.insert(c), "duplicate in effect order");
        let op = &ops[c as usize];
        let i = inv[&c];
        if max_inv.is_some_and(|m| c < m) {
            inversions += 1;
        }
        max_inv = max_inv.max(Some(i));
        match op.ty.as_str() {
            ":ok" => {
                for (f, k, v) in &op.mops {
                    if f == ":r" {
                        assert_eq!(&state.read(*k, list), v, "read at {c}: {op:?}");
                    } else {
                        state.write(*k, v, list);
                    }
                }
            }
            ":info" => {
                for (f, k, v) in &ops[i as usize].mops {
                    if f != ":r" {
                        state.write(*k, v, list);
                    }
                }
            }
            t => panic!("{t} completion in effect order"),
        }
    }
    let oks = ops.iter().filter(|o| o.ty == ":ok").count();
    let ok_in_order = seen
        .iter()
        .filter(|&&c| ops[c as usize].ty == ":ok")
        .count();
    assert_eq!(oks, ok_in_order, "every ok txn took effect");
    if realtime {
        assert_eq!(inversions, 0, "effect order violates real time");
    }
    inversions
}

fn opts(workload: Workload, mode: Mode, seed: u64) -> GenOptions {
    GenOptions {
        workload,
        mode,
        txns: 1_000,
        processes: 6,
        keys: 4,
        max_writes_per_key: 16,
        max_mops: 4,
        read_fraction: 0.5,
        fail_fraction: 0.05,
        info_fraction: 0.03,
        faults: Vec::new(),
        seed,
        mini: false,
        values: 0,
    }
}

const MODES: [Mode; 4] = [
    Mode::StrictSerializable,
    Mode::Serializable,
    Mode::SnapshotIsolation,
    Mode::ReadCommitted,
];
const WORKLOADS: [Workload; 2] = [Workload::ListAppend, Workload::RwRegister];

fn valid_faults(w: Workload) -> Vec<Fault> {
    Fault::ALL
        .into_iter()
        .filter(|&f| w == Workload::ListAppend || f != Fault::DirtyWrite)
        .collect()
}

#[test]
fn same_seed_same_bytes() {
    for w in WORKLOADS {
        for m in MODES {
            let mut o = opts(w, m, 11);
            o.faults = valid_faults(w);
            let (a, sa) = gen(&o);
            let (b, sb) = gen(&o);
            assert_eq!(a, b, "{w:?} {m:?}");
            assert_eq!(sa, sb);
            o.seed = 12;
            let (c, _) = gen(&o);
            assert_ne!(a, c, "{w:?} {m:?}");
        }
    }
}

#[test]
fn well_formed_in_every_mode() {
    for w in WORKLOADS {
        for m in MODES {
            for seed in 0..3 {
                let mut o = opts(w, m, seed);
                o.faults = valid_faults(w);
                let (text, s) = gen(&o);
                let ops = parse(&text);
                check_well_formed(&ops, &s, &o);
                check_unique_ascending_writes(&ops);
                assert_eq!(s.injections.len(), o.faults.len());
                assert!(s.info > 0 && s.fail > 0, "{w:?} {m:?} {s:?}");
            }
        }
    }
}

#[test]
fn crashed_processes_are_replaced() {
    let mut o = opts(Workload::ListAppend, Mode::StrictSerializable, 5);
    o.info_fraction = 0.2;
    o.processes = 3;
    let (text, s) = gen(&o);
    let ops = parse(&text);
    check_well_formed(&ops, &s, &o);
    // After each crash of process p, its slot continues as p + 3.
    let mut live: HashSet<u64> = (0..3).collect();
    for op in &ops {
        assert!(
            live.contains(&op.process),
            "unexpected process {}",
            op.process
        );
        if op.ty == ":info" {
            live.remove(&op.process);
            live.insert(op.process + 3);
        }
    }
    assert!(s.info > 100, "{}", s.info);
}

#[test]
fn strict_serializable_replays_in_real_time_order() {
    for w in WORKLOADS {
        for seed in 0..4 {
            for max_writes in [0, 8] {
                let mut o = opts(w, Mode::StrictSerializable, seed);
                o.max_writes_per_key = max_writes;
                o.txns = 2_000;
                let (text, s) = gen(&o);
                let ops = parse(&text);
                check_well_formed(&ops, &s, &o);
                replay(&ops, &s, w == Workload::ListAppend, true);
                assert_eq!(s.aborts, 0);
                assert_eq!(s.stale_reads, 0);
            }
        }
    }
}

#[test]
fn keys_rotate_after_max_writes() {
    let mut o = opts(Workload::ListAppend, Mode::StrictSerializable, 3);
    o.max_writes_per_key = 5;
    let (text, s) = gen(&o);
    let ops = parse(&text);
    let mut writes: HashMap<u64, u64> = HashMap::new();
    for op in ops.iter().filter(|o| o.ty == ":invoke") {
        for (f, k, _) in &op.mops {
            if f == ":append" {
                *writes.entry(*k).or_default() += 1;
            }
        }
    }
    // Every key but the final pool's was retired after exactly 5 appends.
    let full = writes.values().filter(|&&n| n == 5).count();
    assert!(writes.values().all(|&n| n <= 5));
    assert_eq!(full as u64, s.keys - o.keys as u64);
    assert!(s.keys > 50, "{}", s.keys);
}

#[test]
fn serializable_replays_but_reads_stale_snapshots() {
    for w in WORKLOADS {
        let mut inversions = 0;
        for seed in 0..4 {
            let mut o = opts(w, Mode::Serializable, seed);
            o.read_fraction = 0.7;
            let (text, s) = gen(&o);
            let ops = parse(&text);
            check_well_formed(&ops, &s, &o);
            inversions += replay(&ops, &s, w == Workload::ListAppend, false);
            assert!(s.stale_reads > 20, "{}", s.stale_reads);
        }
        assert!(inversions > 0, "no real-time violation for {w:?}");
    }
}

#[test]
fn snapshot_isolation_has_no_lost_updates() {
    // Replaying in commit order: a txn that reads and writes a key read its
    // latest committed state (first committer wins); every other read is some
    // earlier committed state.
    for w in WORKLOADS {
        let list = w == Workload::ListAppend;
        let mut o = opts(w, Mode::SnapshotIsolation, 9);
        o.txns = 3_000;
        let (text, s) = gen(&o);
        let ops = parse(&text);
        check_well_formed(&ops, &s, &o);
        assert!(s.aborts > 50, "{}", s.aborts);
        let inv = invocations(&ops);
        let mut state = State::default();
        let mut history: HashMap<u64, Vec<V>> = HashMap::new();
        for &c in &s.effect_order {
            let op = &ops[c as usize];
            let mops = if op.ty == ":ok" {
                &op.mops
            } else {
                &ops[inv[&c] as usize].mops
            };
            let written: HashSet<u64> = mops.iter().filter(|m| m.0 != ":r").map(|m| m.1).collect();
            let mut own: HashMap<u64, Vec<&V>> = HashMap::new();
            for (f, k, v) in mops {
                if f != ":r" {
                    own.entry(*k).or_default().push(v);
                } else if op.ty == ":ok" && written.contains(k) && !own.contains_key(k) {
                    assert_eq!(&state.read(*k, list), v, "lost update at {c}");
                } else if op.ty == ":ok" && !own.contains_key(k) {
                    let past = history.get(k).map_or(&[][..], |h| &h[..]);
                    assert!(
                        *v == V::Nil && !list || *v == V::List(vec![]) || past.contains(v),
                        "read of uncommitted state at {c}"
                    );
                }
            }
            for (k, vs) in own {
                for v in vs {
                    state.write(k, v, list);
                }
                history.entry(k).or_default().push(state.read(k, list));
            }
        }
    }
}

#[test]
fn read_committed_reads_only_committed_states() {
    for w in WORKLOADS {
        let list = w == Workload::ListAppend;
        let mut o = opts(w, Mode::ReadCommitted, 4);
        o.txns = 3_000;
        let (text, s) = gen(&o);
        let ops = parse(&text);
        check_well_formed(&ops, &s, &o);
        let inv = invocations(&ops);
        // Values that took effect, and each key's final state.
        let mut state = State::default();
        let mut effective: HashSet<(u64, u64)> = HashSet::new();
        for &c in &s.effect_order {
            let op = &ops[c as usize];
            for (f, k, v) in &ops[inv[&c] as usize].mops {
                if f != ":r" {
                    state.write(*k, v, list);
                    let V::Int(x) = v else { panic!() };
                    effective.insert((*k, *x));
                }
            }
            assert!(op.ty == ":ok" || op.ty == ":info");
        }
        for op in ops.iter().filter(|o| o.ty == ":ok") {
            for (f, k, v) in &op.mops {
                if f != ":r" {
                    continue;
                }
                match v {
                    V::List(vs) => {
                        let V::List(fin) = state.read(*k, true) else {
                            panic!()
                        };
                        assert!(fin.starts_with(vs), "{vs:?} not a prefix of {fin:?}");
                    }
                    V::Int(x) => assert!(effective.contains(&(*k, *x))),
                    V::Nil => {}
                }
            }
        }
        if list {
            assert!(s.aborts > 0, "{}", s.aborts);
        }
    }
}

/// The mops of a parsed op as `(f, key, value)` with keys renamed to their
/// order of first appearance, for exact comparisons.
fn shape(ops: &[Op], idx: &[u64]) -> Vec<String> {
    let mut names: HashMap<u64, usize> = HashMap::new();
    idx.iter()
        .map(|&i| {
            let op = &ops[i as usize];
            let mops: Vec<String> = op
                .mops
                .iter()
                .map(|(f, k, v)| {
                    let n = names.len();
                    let k = *names.entry(*k).or_insert(n);
                    format!("{f} k{k} {v:?}")
                })
                .collect();
            format!("{} p{} {}", op.ty, op.process, mops.join(", "))
        })
        .collect()
}

#[test]
fn injected_faults_have_their_exact_shape() {
    let mut o = opts(Workload::ListAppend, Mode::StrictSerializable, 21);
    o.faults = Fault::ALL.to_vec();
    o.processes = 2;
    let (text, s) = gen(&o);
    let ops = parse(&text);
    check_well_formed(&ops, &s, &o);
    check_unique_ascending_writes(&ops);
    let inv = invocations(&ops);
    assert_eq!(
        s.injections.iter().map(|i| i.fault).collect::<Vec<_>>(),
        Fault::ALL
    );
    let l = |v: &[u64]| V::List(v.to_vec());
    for inj in &s.injections {
        assert_eq!(inj.ops.len(), 2);
        let (a, b) = (&ops[inj.ops[0] as usize], &ops[inj.ops[1] as usize]);
        // The txns run on processes 0 and 1 (or their replacements) in turn.
        assert_ne!(a.process, b.process);
        let sh = shape(&ops, &inj.ops);
        let want: Vec<String> = match inj.fault {
            Fault::AbortedRead => vec![
                format!(":fail p{} :append k0 Int(1)", a.process),
                format!(":ok p{} :r k0 {:?}", b.process, l(&[1])),
            ],
            Fault::IntermediateRead => vec![
                format!(":ok p{} :append k0 Int(1), :append k0 Int(2)", a.process),
                format!(":ok p{} :r k0 {:?}", b.process, l(&[1])),
            ],
            Fault::LostUpdate => vec![
                format!(":ok p{} :r k0 {:?}, :append k0 Int(1)", a.process, l(&[])),
                format!(":ok p{} :r k0 {:?}, :append k0 Int(2)", b.process, l(&[])),
            ],
            Fault::WriteSkew => vec![
                format!(":ok p{} :r k0 {:?}, :append k1 Int(1)", a.process, l(&[])),
                format!(":ok p{} :r k1 {:?}, :append k0 Int(1)", b.process, l(&[])),
            ],
            Fault::StaleRead => vec![
                format!(":ok p{} :append k0 Int(1)", a.process),
                format!(":ok p{} :r k0 {:?}", b.process, l(&[])),
            ],
            Fault::CyclicInformationFlow => vec![
                format!(":ok p{} :append k0 Int(1), :r k1 {:?}", a.process, l(&[1])),
                format!(":ok p{} :append k1 Int(1), :r k0 {:?}", b.process, l(&[1])),
            ],
            Fault::DirtyWrite => vec![
                format!(":ok p{} :append k0 Int(1), :append k1 Int(1)", a.process),
                format!(":ok p{} :append k0 Int(2), :append k1 Int(2)", b.process),
            ],
        };
        assert_eq!(sh, want, "{:?}", inj.fault);
        // Timing: concurrency or real-time order as the anomaly needs.
        let (ia, ib) = (inv[&a.index], inv[&b.index]);
        match inj.fault {
            Fault::AbortedRead | Fault::StaleRead => assert!(a.index < ib),
            _ => assert!(ia.max(ib) < a.index.min(b.index)),
        }
        // Injected keys are used by no other txn, except the observer right
        // after the pair (lost update, write skew, dirty write).
        let keys: HashSet<u64> = a.mops.iter().chain(&b.mops).map(|m| m.1).collect();
        let users: Vec<u64> = ops
            .iter()
            .filter(|o| o.ty != ":invoke" && o.mops.iter().any(|m| keys.contains(&m.1)))
            .map(|o| o.index)
            .collect();
        let last = a.index.max(b.index);
        match inj.fault {
            Fault::LostUpdate | Fault::WriteSkew | Fault::DirtyWrite => {
                assert_eq!(users.len(), 3);
                let obs = &ops[users[2] as usize];
                assert_eq!(inv[&obs.index], last + 1);
                let reads: Vec<&V> = obs.mops.iter().map(|m| &m.2).collect();
                let want = match inj.fault {
                    Fault::LostUpdate => vec![l(&[1, 2])],
                    Fault::WriteSkew => vec![l(&[1]), l(&[1])],
                    _ => vec![l(&[1, 2]), l(&[2, 1])],
                };
                assert_eq!(reads, want.iter().collect::<Vec<_>>());
            }
            _ => assert_eq!(users.len(), 2),
        }
    }
}

#[test]
fn register_faults_and_golden_output() {
    let o = GenOptions {
        workload: Workload::RwRegister,
        txns: 2 + 2 + 3,
        processes: 2,
        faults: vec![Fault::CyclicInformationFlow, Fault::IntermediateRead],
        seed: 1,
        ..GenOptions::default()
    };
    let (text, s) = gen(&o);
    let without_times: Vec<String> = text
        .lines()
        .map(|l| {
            let t = l.find(", :time ").unwrap();
            let e = l[t + 2..].find(", ").unwrap() + t + 2;
            format!("{}{}", &l[..t], &l[e..])
        })
        .collect();
    let ops = parse(&text);
    check_well_formed(&ops, &s, &o);
    let find = |needle: &str| without_times.iter().position(|l| l.contains(needle));
    let g1c = s.injections[0].ops.clone();
    let g1b = s.injections[1].ops.clone();
    assert_eq!(s.injections[0].fault, Fault::CyclicInformationFlow);
    let (x, y) = (
        ops[g1c[0] as usize].mops[0].1,
        ops[g1c[1] as usize].mops[0].1,
    );
    assert_eq!(
        without_times[g1c[0] as usize],
        format!(
            "{{:index {}, :type :ok, :process {}, :f :txn, :value [[:w {x} 1] [:r {y} 1]]}}",
            g1c[0], ops[g1c[0] as usize].process
        )
    );
    assert_eq!(
        without_times[g1c[1] as usize],
        format!(
            "{{:index {}, :type :ok, :process {}, :f :txn, :value [[:w {y} 1] [:r {x} 1]]}}",
            g1c[1], ops[g1c[1] as usize].process
        )
    );
    let k = ops[g1b[0] as usize].mops[0].1;
    assert!(find(&format!(":value [[:w {k} 1] [:w {k} 2]]}}")).is_some());
    assert!(without_times[g1b[1] as usize].ends_with(&format!(":value [[:r {k} 1]]}}")));
    // 3 background txns on 2 processes + 4 injected: 14 lines.
    assert_eq!(ops.len(), 14);
}

#[test]
fn invalid_options_are_rejected() {
    let bad = |o: GenOptions| {
        let err = generate(&o, &mut Vec::new()).unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput);
    };
    let base = GenOptions::default();
    bad(GenOptions {
        processes: 0,
        ..base.clone()
    });
    bad(GenOptions {
        keys: 0,
        ..base.clone()
    });
    bad(GenOptions {
        max_mops: 0,
        ..base.clone()
    });
    bad(GenOptions {
        fail_fraction: 0.7,
        info_fraction: 0.7,
        ..base.clone()
    });
    bad(GenOptions {
        workload: Workload::RwRegister,
        faults: vec![Fault::DirtyWrite],
        ..base.clone()
    });
    bad(GenOptions {
        processes: 1,
        faults: vec![Fault::StaleRead],
        ..base.clone()
    });
    bad(GenOptions {
        txns: 4,
        faults: vec![Fault::LostUpdate, Fault::StaleRead],
        ..base.clone()
    });
    // Exactly enough room: only the injected txns.
    let o = GenOptions {
        txns: 5,
        faults: vec![Fault::LostUpdate, Fault::StaleRead],
        ..base
    };
    let (text, s) = gen(&o);
    assert_eq!((s.txns, s.ok, s.fail), (5, 5, 0));
    assert_eq!(text.lines().count(), 10);
    assert!(s.effect_order.is_empty());
}

#[test]
fn zero_txns_is_an_empty_history() {
    let o = GenOptions {
        txns: 0,
        ..GenOptions::default()
    };
    let (text, s) = gen(&o);
    assert_eq!(text, "");
    assert_eq!(
        s,
        GenSummary {
            keys: 5,
            ..GenSummary::default()
        }
    );
}

#[test]
fn gen_big_configuration_replays() {
    // The shape scripts/gen-big.sh uses, at a testable size.
    let o = GenOptions {
        txns: 20_000,
        processes: 10,
        keys: 10,
        max_writes_per_key: 32,
        max_mops: 7,
        seed: 0,
        ..GenOptions::default()
    };
    let (text, s) = gen(&o);
    let ops = parse(&text);
    check_well_formed(&ops, &s, &o);
    check_unique_ascending_writes(&ops);
    replay(&ops, &s, true, true);
    let mops: usize = ops
        .iter()
        .filter(|o| o.ty == ":invoke")
        .map(|o| o.mops.len())
        .sum();
    let mean = mops as f64 / s.txns as f64;
    assert!((3.9..4.1).contains(&mean), "{mean}");
    assert_eq!(s.effect_order.len(), 20_000);
}
