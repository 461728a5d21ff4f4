//! Oracles of the VeriStrong digest and a brute-force differential test.

use super::*;

fn val(v: u64) -> RegValue {
    (v != 0).then_some(v)
}
fn r(k: u64, v: u64) -> RwMop {
    RwMop::Read(k, val(v))
}
fn w(k: u64, v: u64) -> RwMop {
    RwMop::Write(k, val(v))
}
const X: u64 = 0;
const Y: u64 = 1;

/// Transactions `(process, ops)`, all committed, in order.
fn hist(txns: &[(i64, &[RwMop])]) -> RegHistory {
    txns.iter()
        .enumerate()
        .map(|(i, (p, ops))| RegTxn {
            process: *p,
            ops: ops.to_vec(),
            committed: true,
            index: i as u64,
            invoked: i as u64,
            realtime_preds: Vec::new(),
        })
        .collect()
}

/// A committed transaction of `process` at op position `index`, invoked
/// there too, with no real-time predecessors.
pub(super) fn committed_txn(process: i64, index: u64, ops: Vec<RwMop>) -> RegTxn {
    RegTxn {
        process,
        ops,
        committed: true,
        index,
        invoked: index,
        realtime_preds: Vec::new(),
    }
}

/// `n` committed blind writers of key 0 (values `0..n`), one per process,
/// invoked and completed in turn: without session order their version
/// order is free, `n (n - 1)` ww edges (the clock-reading tests of
/// encoding and splitting).
pub(super) fn blind_writers(n: u64) -> RegHistory {
    (0..n)
        .map(|i| RegTxn {
            process: i as i64,
            ops: vec![RwMop::Write(0, Some(i))],
            committed: true,
            index: 2 * i + 1,
            invoked: 2 * i,
            realtime_preds: Vec::new(),
        })
        .collect()
}

/// Every combination of the options that must not change a verdict (the
/// backjump limit at both extremes, paired with the polarity: small
/// histories never backjump 100 levels, so 0 is what exercises the
/// clause weakening).
fn all_opts(base: SatOptions) -> Vec<SatOptions> {
    let mut out = Vec::new();
    for prune in [true, false] {
        for two_width in [true, false] {
            for (polarity, backjump_limit) in
                [(Polarity::KnownOrder, 0), (Polarity::Solver, usize::MAX)]
            {
                out.push(SatOptions {
                    prune,
                    two_width,
                    polarity,
                    backjump_limit,
                    ..base
                });
            }
        }
    }
    out
}

/// Checks with every option combination; all must agree; invalid cycles
/// must re-check against the history.
fn ser(h: &RegHistory) -> bool {
    ser_sessions(h, true)
}

/// [`ser`], with or without session order.
fn ser_sessions(h: &RegHistory, session: bool) -> bool {
    let mut answers = Vec::new();
    for o in all_opts(SatOptions {
        session_order: session,
        ..SatOptions::default()
    }) {
        let (v, _) = check_serializable(h, &o);
        answers.push(match v {
            Verdict::Valid(order) => {
                assert!(serial_ok(h, &order, session), "witness {order:?} fails");
                true
            }
            Verdict::Invalid(Violation::Cycle(c)) => {
                verify_cycle(h, &c).unwrap_or_else(|e| panic!("{e}: {c:?}"));
                false
            }
            Verdict::Invalid(_) => false,
            Verdict::Unknown => panic!("unknown"),
        });
    }
    assert!(
        answers.iter().all(|&a| a == answers[0]),
        "options changed the verdict: {answers:?}"
    );
    answers[0]
}

/// Runs `order` (graph ids, with :info transactions present iff listed)
/// serially: every read sees the latest write; with `session`, each
/// process's transactions keep their history order.
pub(super) fn serial_ok(h: &RegHistory, order: &[u32], session: bool) -> bool {
    serial_ok_rt(h, order, session, false)
}

/// [`serial_ok`], and with `real_time` every transaction's real-time
/// predecessors come first.
fn serial_ok_rt(h: &RegHistory, order: &[u32], session: bool, real_time: bool) -> bool {
    let mut state: std::collections::HashMap<u64, RegValue> = Default::default();
    let mut last: std::collections::HashMap<i64, u32> = Default::default();
    for (i, &id) in order.iter().enumerate() {
        let t = &h[id as usize - 1];
        if real_time && t.realtime_preds.iter().any(|p| !order[..i].contains(p)) {
            return false;
        }
        // Session order holds between committed transactions (Elle's
        // process graph has `:ok` ops only).
        if session && t.committed {
            if let Some(&p) = last.get(&t.process) {
                if p > id {
                    return false;
                }
            }
            last.insert(t.process, id);
        }
        for op in &t.ops {
            match *op {
                RwMop::Read(k, v) => {
                    if t.committed && state.get(&k).copied().unwrap_or(None) != v {
                        return false;
                    }
                }
                RwMop::Write(k, v) => {
                    state.insert(k, v);
                }
                // Predicate histories have their own reference
                // (`tests/predicates.rs`).
                RwMop::PredRead { .. } => return false,
            }
        }
    }
    // every committed transaction is present
    (1..=h.len() as u32).all(|id| !h[id as usize - 1].committed || order.contains(&id))
}

fn permutations(items: &[u32], f: &mut impl FnMut(&[u32]) -> bool) -> bool {
    fn go(items: &mut Vec<u32>, k: usize, f: &mut impl FnMut(&[u32]) -> bool) -> bool {
        if k == items.len() {
            return f(items);
        }
        for i in k..items.len() {
            items.swap(k, i);
            if go(items, k + 1, f) {
                return true;
            }
            items.swap(k, i);
        }
        false
    }
    go(&mut items.to_vec(), 0, f)
}

/// Brute force: some subset of the :info transactions and some order.
pub(super) fn brute(h: &RegHistory, session: bool) -> bool {
    brute_rt(h, session, false)
}

/// [`brute`] with real-time order optionally required.
fn brute_rt(h: &RegHistory, session: bool, real_time: bool) -> bool {
    let committed: Vec<u32> = (1..=h.len() as u32)
        .filter(|&i| h[i as usize - 1].committed)
        .collect();
    let info: Vec<u32> = (1..=h.len() as u32)
        .filter(|&i| !h[i as usize - 1].committed)
        .collect();
    for mask in 0..1u32 << info.len() {
        let mut items = committed.clone();
        items.extend(
            info.iter()
                .enumerate()
                .filter(|(j, _)| mask >> j & 1 == 1)
                .map(|(_, &i)| i),
        );
        if permutations(&items, &mut |o| serial_ok_rt(h, o, session, real_time)) {
            return true;
        }
    }
    false
}

/// Brute-force snapshot isolation (VeriStrong Theorem A.2): some subset of
/// the :info transactions, some commit order (every key's version order
/// follows it: the topological order of an acyclic induced graph gives one)
/// and some read-from choice whose induced graph `(so ∪ wr ∪ ww) ; rw?` is
/// acyclic.
pub(super) fn brute_si(h: &RegHistory, session: bool, real_time: bool) -> bool {
    let n = h.len() + 1;
    let info: Vec<u32> = (1..n as u32)
        .filter(|&i| !h[i as usize - 1].committed)
        .collect();
    // Final writes and external reads per transaction.
    let mut fw: Vec<Vec<(u64, RegValue)>> = vec![Vec::new(); n];
    let mut er: Vec<Vec<(u64, RegValue)>> = vec![Vec::new(); n];
    for (i, t) in h.iter().enumerate() {
        match polygraph::summarise(t, i as u32 + 1) {
            Ok((r, w)) => {
                er[i + 1] = r;
                fw[i + 1] = w;
            }
            Err(_) => return false,
        }
    }
    let writes = |t: u32, k: u64| -> Option<RegValue> {
        if t == 0 {
            Some(None)
        } else {
            fw[t as usize].iter().find(|w| w.0 == k).map(|w| w.1)
        }
    };
    for mask in 0..1u32 << info.len() {
        let present = |t: u32| {
            t == 0
                || h[t as usize - 1].committed
                || info
                    .iter()
                    .position(|&i| i == t)
                    .is_some_and(|j| mask >> j & 1 == 1)
        };
        let items: Vec<u32> = (1..n as u32).filter(|&t| present(t)).collect();
        // External reads of present transactions with their candidates.
        let mut reads: Vec<(u32, u64, Vec<u32>)> = Vec::new();
        let mut possible = true;
        for &s in &items {
            for &(k, v) in &er[s as usize] {
                let c: Vec<u32> = std::iter::once(0)
                    .chain(items.iter().copied())
                    .filter(|&t| t != s && writes(t, k) == Some(v))
                    .collect();
                possible &= !c.is_empty();
                reads.push((s, k, c));
            }
        }
        if !possible {
            continue;
        }
        let found = permutations(&items, &mut |commit| {
            let mut pos = vec![usize::MAX; n];
            pos[0] = 0;
            for (i, &t) in commit.iter().enumerate() {
                pos[t as usize] = i + 1;
            }
            let mut choice = vec![0usize; reads.len()];
            loop {
                if si_acyclic(
                    h, &items, &pos, &reads, &choice, &writes, session, real_time,
                ) {
                    return true;
                }
                // Next read-from choice (odometer).
                let mut i = 0;
                loop {
                    if i == reads.len() {
                        return false;
                    }
                    choice[i] += 1;
                    if choice[i] < reads[i].2.len() {
                        break;
                    }
                    choice[i] = 0;
                    i += 1;
                }
            }
        });
        if found {
            return true;
        }
    }
    false
}

/// Whether the induced graph of one resolution is acyclic.
#[allow(clippy::too_many_arguments)]
fn si_acyclic(
    h: &RegHistory,
    items: &[u32],
    pos: &[usize],
    reads: &[(u32, u64, Vec<u32>)],
    choice: &[usize],
    writes: &dyn Fn(u32, u64) -> Option<RegValue>,
    session: bool,
    real_time: bool,
) -> bool {
    let n = pos.len();
    let mut dep = vec![vec![false; n]; n];
    let mut rw = vec![vec![false; n]; n];
    let all: Vec<u32> = std::iter::once(0).chain(items.iter().copied()).collect();
    for &b in items {
        dep[0][b as usize] = true;
        for &a in items {
            let (ta, tb) = (&h[a as usize - 1], &h[b as usize - 1]);
            if (session && ta.committed && tb.committed && ta.process == tb.process && a < b)
                || (real_time && tb.realtime_preds.contains(&a))
            {
                dep[a as usize][b as usize] = true;
            }
        }
    }
    // Version order: commit order among each key's writers.
    for &a in &all {
        for &b in &all {
            if a != b && pos[a as usize] < pos[b as usize] {
                let shared = (0..4).any(|k| writes(a, k).is_some() && writes(b, k).is_some());
                if shared {
                    dep[a as usize][b as usize] = true;
                }
            }
        }
    }
    for (i, (s, k, c)) in reads.iter().enumerate() {
        let t = c[choice[i]];
        dep[t as usize][*s as usize] = true;
        for &t2 in &all {
            if t2 != *s && t2 != t && writes(t2, *k).is_some() && pos[t as usize] < pos[t2 as usize]
            {
                rw[*s as usize][t2 as usize] = true;
            }
        }
    }
    // Induced edges, then acyclicity by repeated removal of sources.
    let mut ind = dep.clone();
    for a in 0..n {
        for b in 0..n {
            if dep[a][b] {
                for c in 0..n {
                    if rw[b][c] {
                        ind[a][c] = true;
                    }
                }
            }
        }
    }
    let mut alive: Vec<usize> = all.iter().map(|&t| t as usize).collect();
    loop {
        let Some(i) = alive
            .iter()
            .position(|&v| alive.iter().all(|&u| !ind[u][v]))
        else {
            return alive.is_empty();
        };
        alive.swap_remove(i);
    }
}

/// Cobra §3.1: two read-modify-write chains on one key, [T1, T2] and
/// [T3, T4], need one ordering literal (one per writer pair: four).
#[test]
fn write_chains_coalesce_the_version_order() {
    let h = hist(&[
        (1, &[w(X, 1)]),
        (2, &[r(X, 1), w(X, 2)]),
        (3, &[w(X, 3)]),
        (4, &[r(X, 3), w(X, 4)]),
        (5, &[r(X, 4)]),
    ]);
    let (v, stats) = check_serializable(&h, &SatOptions::default());
    assert_eq!(v, Verdict::Valid(vec![1, 2, 3, 4, 5]));
    assert_eq!(stats.vars, 1);
    assert!(ser(&h));
    // T1 overwrites x between T3 and T4, which read-modify-wrote it.
    let h = hist(&[
        (1, &[w(X, 1)]),
        (2, &[w(X, 3)]),
        (3, &[r(X, 3), r(Y, 0), w(X, 4)]),
        (4, &[r(X, 1), w(Y, 1)]),
        (5, &[r(X, 4), r(Y, 1)]),
    ]);
    assert!(!ser(&h));
    assert!(!brute(&h, false));
}

/// A chain starting at the initial state orders every other chain of its
/// key after its tail (an edge no known path implies, so it must be added),
/// even when values repeat the initial nil.
#[test]
fn initial_state_chain_precedes_the_other_chains() {
    let h: RegHistory = hist(&[
        (0, &[w(Y, 0), w(X, 2)]),
        (2, &[w(Y, 2), r(Y, 2), r(Y, 2), r(Y, 2)]),
        (0, &[w(Y, 1), r(X, 0), w(X, 2)]),
        (2, &[r(Y, 1), w(Y, 0), r(Y, 0)]),
    ]);
    assert!(brute(&h, false) && ser_sessions(&h, false));
    assert!(!brute(&h, true) && !ser(&h));
}

#[test]
fn o1_unique_values_single_solution() {
    let h = hist(&[
        (1, &[w(X, 1)]),
        (2, &[w(X, 2), w(Y, 1)]),
        (3, &[r(X, 1), r(Y, 1)]),
    ]);
    assert!(ser(&h));
    let (v, stats) = check_serializable(&h, &SatOptions::default());
    assert_eq!(v, Verdict::Valid(vec![2, 1, 3]));
    // O15: pruning decides everything.
    assert_eq!((stats.vars, stats.pruned, stats.decisions), (1, 1, 0));
}

#[test]
fn o2_duplicate_values_not_serializable() {
    let h = hist(&[
        (1, &[r(Y, 1), w(X, 1)]),
        (2, &[w(Y, 1), w(X, 1)]),
        (3, &[r(Y, 0), r(X, 1)]),
    ]);
    assert!(!ser(&h));
    let (_, stats) = check_serializable(
        &h,
        &SatOptions {
            prune: false,
            two_width: false,
            ..SatOptions::default()
        },
    );
    assert!(stats.theory_conflicts >= 1, "{stats:?}");
}

#[test]
fn o3_to_o5_serializable() {
    // O3
    assert!(ser(&hist(&[
        (1, &[w(X, 1)]),
        (2, &[w(X, 1)]),
        (2, &[r(X, 1)])
    ])));
    // O4
    assert!(ser(&hist(&[
        (1, &[w(X, 1)]),
        (2, &[r(X, 1)]),
        (2, &[w(X, 1)])
    ])));
    // O5: read-modify-write must not derive a self-loop
    assert!(ser(&hist(&[(1, &[r(X, 0), w(X, 1)])])));
}

#[test]
fn o6_lost_update_o7_write_skew() {
    assert!(!ser(&hist(&[
        (1, &[r(X, 0), w(X, 1)]),
        (2, &[r(X, 0), w(X, 1)])
    ])));
    assert!(!ser(&hist(&[
        (1, &[r(X, 0), r(Y, 0), w(X, 1)]),
        (2, &[r(X, 0), r(Y, 0), w(Y, 1)])
    ])));
}

#[test]
fn o8_initial_transaction_precedes_sessions() {
    let h = hist(&[(1, &[w(X, 1)]), (1, &[r(X, 0)])]);
    assert!(!ser(&h));
    let (v, _) = check_serializable(&h, &SatOptions::default());
    let Verdict::Invalid(Violation::Cycle(c)) = v else {
        panic!("{v:?}")
    };
    assert_eq!(
        c,
        vec![
            CycleEdge {
                from: 1,
                to: 2,
                kind: EdgeKind::Process
            },
            CycleEdge {
                from: 2,
                to: 1,
                kind: EdgeKind::Rw { key: X, via: 0 }
            },
        ]
    );
}

#[test]
fn o9_duplicate_values_right_writer() {
    let h = hist(&[
        (1, &[w(X, 1)]),
        (2, &[w(X, 1)]),
        (1, &[w(X, 2)]),
        (1, &[w(Y, 1)]),
        (3, &[r(Y, 1), r(X, 1)]),
    ]);
    assert!(ser(&h));
    let (v, stats) = check_serializable(&h, &SatOptions::default());
    assert_eq!(v, Verdict::Valid(vec![1, 3, 2, 4, 5]));
    assert_eq!(stats.pruned, stats.vars);
    assert_eq!(stats.decisions, 0);
}

#[test]
fn o10_unwritten_o11_internal() {
    let (v, _) = check_serializable(&hist(&[(1, &[r(X, 7)])]), &SatOptions::default());
    assert_eq!(
        v,
        Verdict::Invalid(Violation::Unwritten {
            txn: 1,
            key: X,
            value: Some(7)
        })
    );
    let (v, _) = check_serializable(&hist(&[(1, &[w(X, 1), r(X, 2)])]), &SatOptions::default());
    assert_eq!(v, Verdict::Invalid(Violation::Internal { txn: 1, key: X }));
    let (v, _) = check_serializable(
        &hist(&[(1, &[r(X, 0), r(X, 1)]), (2, &[w(X, 1)])]),
        &SatOptions::default(),
    );
    assert_eq!(v, Verdict::Invalid(Violation::Internal { txn: 1, key: X }));
}

#[test]
fn o12_duplicate_of_initial_value_o13_long_fork_o14_fractured() {
    assert!(ser(&hist(&[(1, &[w(X, 0)]), (2, &[r(X, 0)])])));
    assert!(!ser(&hist(&[
        (1, &[w(X, 1)]),
        (2, &[w(Y, 1)]),
        (3, &[r(X, 1), r(Y, 0)]),
        (4, &[r(X, 0), r(Y, 1)]),
    ])));
    assert!(!ser(&hist(&[
        (1, &[w(X, 1), w(Y, 1)]),
        (2, &[w(X, 2), w(Y, 2)]),
        (3, &[r(X, 1), r(Y, 2)])
    ])));
}

#[test]
fn info_transactions_may_or_may_not_commit() {
    // A read of an :info write is fine (it committed) ...
    let mut h = hist(&[(1, &[w(X, 1)]), (2, &[r(X, 1)])]);
    h[0].committed = false;
    assert!(ser(&h));
    // ... and so is never seeing it.
    let mut h = hist(&[(1, &[w(X, 1)]), (2, &[r(X, 0)]), (3, &[r(X, 0)])]);
    h[0].committed = false;
    assert!(ser(&h));
    // Reading it and then missing it in a later session transaction is not.
    let mut h = hist(&[(1, &[w(X, 1)]), (2, &[r(X, 1)]), (2, &[r(X, 0)])]);
    h[0].committed = false;
    assert!(!ser(&h));
}

#[test]
fn timeout_zero_is_unknown() {
    let h = hist(&[(1, &[w(X, 1)]), (2, &[w(X, 1)]), (2, &[r(X, 1)])]);
    let (v, _) = check_serializable(
        &h,
        &SatOptions {
            timeout: Some(Duration::ZERO),
            ..SatOptions::default()
        },
    );
    assert_eq!(v, Verdict::Unknown);
}

/// Past its deadline the stop callback says "stop" within 64 calls and
/// then on every call (batsat asks again before resuming a search; a
/// `false` there restarted the search forever).
#[test]
fn deadline_stop_latches() {
    let stop = super::deadline_stop(Some(Instant::now() + Duration::from_secs(3600)));
    assert!((0..1000).all(|_| !stop()));
    let stop = super::deadline_stop(Some(Instant::now()));
    let first = (0..64).position(|_| stop()).expect("stops within 64 calls");
    assert_eq!(first, 63);
    assert!((0..1000).all(|_| stop()));
}

/// xorshift64*
pub(super) struct Rng(pub(super) u64);
impl Rng {
    pub(super) fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub(super) fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// A random history of ≤ 6 transactions over ≤ 3 keys with values in
/// {nil, 1, 2}: usually a serial execution in a random order, sometimes
/// with one read perturbed, processes assigned at random, some :info.
pub(super) fn random_history(rng: &mut Rng) -> RegHistory {
    let n = 1 + rng.below(6) as usize;
    let keys = 1 + rng.below(3);
    let mut state: std::collections::HashMap<u64, RegValue> = Default::default();
    let mut txns = Vec::new();
    let mut spans: Vec<(u64, u64)> = Vec::new();
    let mut past = vec![state.clone()];
    for i in 0..n {
        // Sometimes read from an older snapshot (lost updates, write skew).
        let snapshot = if rng.below(4) == 0 {
            Some(past[rng.below(past.len() as u64) as usize].clone())
        } else {
            None
        };
        let mut own: std::collections::HashMap<u64, RegValue> = Default::default();
        let len = 1 + rng.below(4);
        let info = rng.below(8) == 0;
        let mut ops = Vec::new();
        for _ in 0..len {
            let k = rng.below(keys);
            if rng.below(2) == 0 {
                let v = match (own.get(&k), &snapshot) {
                    (Some(&v), _) => v,
                    (None, Some(s)) => s.get(&k).copied().unwrap_or(None),
                    (None, None) => state.get(&k).copied().unwrap_or(None),
                };
                ops.push(RwMop::Read(k, v));
            } else {
                let v = val(rng.below(3));
                own.insert(k, v);
                if !info || rng.below(2) == 0 {
                    state.insert(k, v);
                }
                ops.push(RwMop::Write(k, v));
            }
        }
        txns.push(RegTxn {
            process: rng.below(3) as i64,
            ops,
            committed: !info,
            index: i as u64,
            invoked: i as u64,
            realtime_preds: Vec::new(),
        });
        // Real time: an interval around the execution instant 4i, usually
        // (not always) containing it.
        let at = 4 * i as u64 + rng.below(3);
        spans.push((at.saturating_sub(rng.below(7)), at + rng.below(7)));
        past.push(state.clone());
    }
    // Shuffle the history order (completion order ≠ execution order).
    for i in (1..txns.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        txns.swap(i, j);
        spans.swap(i, j);
    }
    for b in 0..txns.len() {
        for a in 0..txns.len() {
            if a != b && txns[a].committed && spans[a].1 < spans[b].0 {
                txns[b].realtime_preds.push(a as u32 + 1);
            }
        }
    }
    if rng.below(4) == 0 {
        let t = rng.below(n as u64) as usize;
        if let Some(RwMop::Read(k, v)) = txns[t]
            .ops
            .iter_mut()
            .find(|o| matches!(o, RwMop::Read(..)))
        {
            *v = val(rng.below(3));
            let _ = k;
        }
    }
    txns
}

#[test]
fn agrees_with_brute_force_on_random_histories() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut counts = [[0usize; 2]; 2]; // [session][valid]
    for round in 0..10000 {
        let h = random_history(&mut rng);
        let session = round % 2 == 0;
        let expected = brute(&h, session);
        for opts in all_opts(SatOptions {
            session_order: session,
            ..SatOptions::default()
        }) {
            let prune = opts.prune;
            let (v, _) = check_serializable(&h, &opts);
            let got = match &v {
                Verdict::Valid(order) => {
                    assert!(
                        serial_ok(&h, order, session),
                        "round {round}: witness {order:?} fails on {h:?}"
                    );
                    true
                }
                Verdict::Invalid(Violation::Cycle(c)) => {
                    verify_cycle(&h, c)
                        .unwrap_or_else(|e| panic!("round {round}: {e}: {c:?} on {h:?}"));
                    false
                }
                Verdict::Invalid(_) => false,
                Verdict::Unknown => panic!("unknown"),
            };
            assert_eq!(
                got, expected,
                "round {round} session {session} prune {prune}: {v:?} on {h:?}"
            );
        }
        counts[session as usize][expected as usize] += 1;
    }
    // Both verdicts are well represented in both modes.
    for c in counts {
        assert!(c[0] >= 400 && c[1] >= 400, "{counts:?}");
    }
}

/// Snapshot isolation on the digest's oracles: every option combination
/// agrees, and reported cycles are real induced cycles (no two adjacent rw
/// edges).
fn si(h: &RegHistory) -> bool {
    let mut answers = Vec::new();
    for o in all_opts(SatOptions {
        isolation: Isolation::SnapshotIsolation,
        ..SatOptions::default()
    }) {
        let (v, _) = check_serializable(h, &o);
        answers.push(match v {
            Verdict::Valid(_) => true,
            Verdict::Invalid(Violation::Cycle(c)) => {
                verify_cycle(h, &c).unwrap_or_else(|e| panic!("{e}: {c:?}"));
                assert_ne!(classify_cycle(&c), "G2-item", "{c:?}");
                false
            }
            Verdict::Invalid(_) => false,
            Verdict::Unknown => panic!("unknown"),
        });
    }
    assert!(answers.iter().all(|&a| a == answers[0]), "{answers:?}");
    answers[0]
}

#[test]
fn snapshot_isolation_oracles() {
    // O1, O3, O4, O5, O9, O12: SI.
    assert!(si(&hist(&[
        (1, &[w(X, 1)]),
        (2, &[w(X, 2), w(Y, 1)]),
        (3, &[r(X, 1), r(Y, 1)]),
    ])));
    assert!(si(&hist(&[
        (1, &[w(X, 1)]),
        (2, &[w(X, 1)]),
        (2, &[r(X, 1)])
    ])));
    assert!(si(&hist(&[
        (1, &[w(X, 1)]),
        (2, &[r(X, 1)]),
        (2, &[w(X, 1)])
    ])));
    assert!(si(&hist(&[(1, &[r(X, 0), w(X, 1)])])));
    assert!(si(&hist(&[
        (1, &[w(X, 1)]),
        (2, &[w(X, 1)]),
        (1, &[w(X, 2)]),
        (1, &[w(Y, 1)]),
        (3, &[r(Y, 1), r(X, 1)]),
    ])));
    assert!(si(&hist(&[(1, &[w(X, 0)]), (2, &[r(X, 0)])])));
    // O7: write skew is SI but not SER.
    let skew = hist(&[
        (1, &[r(X, 0), r(Y, 0), w(X, 1)]),
        (2, &[r(X, 0), r(Y, 0), w(Y, 1)]),
    ]);
    assert!(si(&skew) && !ser(&skew));
    let (v, _) = check_snapshot_isolation(&skew, &SatOptions::default());
    assert_eq!(v, Verdict::Valid(vec![2, 1]));
    // O2, O6, O8, O13 (long fork), O14: not SI.
    assert!(!si(&hist(&[
        (1, &[r(Y, 1), w(X, 1)]),
        (2, &[w(Y, 1), w(X, 1)]),
        (3, &[r(Y, 0), r(X, 1)]),
    ])));
    assert!(!si(&hist(&[
        (1, &[r(X, 0), w(X, 1)]),
        (2, &[r(X, 0), w(X, 1)])
    ])));
    assert!(!si(&hist(&[(1, &[w(X, 1)]), (1, &[r(X, 0)])])));
    let long_fork = hist(&[
        (1, &[w(X, 1)]),
        (2, &[w(Y, 1)]),
        (3, &[r(X, 1), r(Y, 0)]),
        (4, &[r(X, 0), r(Y, 1)]),
    ]);
    assert!(!si(&long_fork));
    let (v, _) = check_snapshot_isolation(&long_fork, &SatOptions::default());
    let Verdict::Invalid(Violation::Cycle(c)) = v else {
        panic!("{v:?}")
    };
    assert_eq!(classify_cycle(&c), "G-nonadjacent-item");
    assert!(!si(&hist(&[
        (1, &[w(X, 1), w(Y, 1)]),
        (2, &[w(X, 2), w(Y, 2)]),
        (3, &[r(X, 1), r(Y, 2)])
    ])));
}

#[test]
fn strict_serializability_uses_real_time() {
    // T1 writes x and completes; T2, invoked later, reads the initial x:
    // serializable (T2 first), not strictly.
    let mut h = hist(&[(1, &[w(X, 1)]), (2, &[r(X, 0)])]);
    h[1].realtime_preds = vec![1];
    assert!(ser(&hist(&[(1, &[w(X, 1)]), (2, &[r(X, 0)])])));
    let strict = SatOptions {
        real_time: true,
        ..SatOptions::default()
    };
    let (v, _) = check_serializable(&h, &strict);
    let Verdict::Invalid(Violation::Cycle(c)) = v else {
        panic!("{v:?}")
    };
    verify_cycle(&h, &c).expect("real cycle");
    assert_eq!(classify_cycle(&c), "G-single-item-realtime");
}

/// SER, strict SER and SI (each with and without session order) against
/// brute force on random small histories.
#[test]
fn all_levels_agree_with_brute_force_on_random_histories() {
    let mut rng = Rng(0x0123_4567_89AB_CDEF);
    // [level][valid]: level 0 strict SER, 1 SI, 2 strong SI
    let mut counts = [[0usize; 2]; 3];
    for round in 0..3000 {
        let h = random_history(&mut rng);
        let session = round % 2 == 0;
        for (level, count) in counts.iter_mut().enumerate() {
            let (isolation, real_time) = match level {
                0 => (Isolation::Serializable, true),
                1 => (Isolation::SnapshotIsolation, false),
                _ => (Isolation::SnapshotIsolation, true),
            };
            let expected = if isolation == Isolation::Serializable {
                brute_rt(&h, session, real_time)
            } else {
                brute_si(&h, session, real_time)
            };
            for opts in all_opts(SatOptions {
                isolation,
                session_order: session,
                real_time,
                ..SatOptions::default()
            }) {
                let (v, _) = check_serializable(&h, &opts);
                let got = match &v {
                    Verdict::Valid(order) => {
                        if isolation == Isolation::Serializable {
                            assert!(
                                serial_ok_rt(&h, order, session, real_time),
                                "round {round}: witness {order:?} fails on {h:?}"
                            );
                        }
                        true
                    }
                    Verdict::Invalid(Violation::Cycle(c)) => {
                        verify_cycle(&h, c)
                            .unwrap_or_else(|e| panic!("round {round}: {e}: {c:?} on {h:?}"));
                        if isolation == Isolation::SnapshotIsolation {
                            assert_ne!(classify_cycle(c), "G2-item", "round {round}");
                        }
                        false
                    }
                    Verdict::Invalid(_) => false,
                    Verdict::Unknown => panic!("unknown"),
                };
                assert_eq!(
                    got, expected,
                    "round {round} level {level} session {session} {opts:?}: {v:?} on {h:?}"
                );
            }
            count[expected as usize] += 1;
        }
    }
    for c in counts {
        assert!(c[0] >= 300 && c[1] >= 300, "{counts:?}");
    }
}

/// Two groups of transactions that share no key and no process solve as
/// separate parts; the invalid one decides the verdict, and its cycle (a
/// lost update on Z) is the one reported, the same on every run.
#[test]
fn independent_parts_solve_separately_and_report_deterministically() {
    const Z: u64 = 2;
    let h = hist(&[
        (1, &[w(X, 1)]),
        (2, &[w(X, 2)]),
        (1, &[r(X, 2)]),
        (3, &[r(Z, 0), w(Z, 1)]),
        (4, &[r(Z, 0), w(Z, 2)]),
    ]);
    let opts = SatOptions {
        prune: false,
        session_order: false,
        ..SatOptions::default()
    };
    let (first, stats) = check_serializable(&h, &opts);
    assert_eq!(stats.parts, 2);
    let Verdict::Invalid(Violation::Cycle(cycle)) = &first else {
        panic!("{first:?}");
    };
    let mut txns: Vec<u32> = cycle.iter().map(|e| e.from).collect();
    txns.sort_unstable();
    assert_eq!(txns, vec![4, 5]);
    assert_eq!(classify_cycle(cycle), "G2-item");
    for _ in 0..20 {
        assert_eq!(check_serializable(&h, &opts).0, first);
    }
    // Without the lost update the history is valid, with a witness order
    // respecting both parts.
    let (v, stats) = check_serializable(&h[..3].to_vec(), &opts);
    assert_eq!((v, stats.parts), (Verdict::Valid(vec![1, 2, 3]), 1));
}

/// A history from `ellery gen`, as the SAT checker's input.
fn generated(opts: &crate::gen::GenOptions) -> RegHistory {
    let mut text = Vec::new();
    crate::gen::generate(opts, &mut text).expect("generated");
    let h = crate::read::read_history_bytes(text, "g.edn", crate::model::Format::Edn)
        .expect("readable");
    reg_history(&h, false).expect("registers").0
}

/// Snapshot isolation on generated histories big enough for pruning's
/// reachability to take the path layout with the second layer off the
/// paths: pruning and the 2-width clauses (which query it) change no
/// verdict, every cycle re-checks, and a snapshot-isolated database's
/// histories pass.
#[test]
fn si_pruning_on_session_paths_agrees_with_the_plain_solver() {
    use crate::gen::{Fault, GenOptions, Mode, Workload as GenWorkload};
    let mut counts = [0usize; 2]; // [valid?]
    for seed in 0..24u64 {
        let faults = [vec![], vec![Fault::LostUpdate], vec![Fault::WriteSkew]];
        let opts = GenOptions {
            workload: GenWorkload::RwRegister,
            mode: Mode::SnapshotIsolation,
            txns: 300,
            processes: 5,
            keys: 8,
            max_mops: 4,
            faults: faults[(seed % 3) as usize].clone(),
            seed,
            ..GenOptions::default()
        };
        let rh = generated(&opts);
        let base = SatOptions {
            isolation: Isolation::SnapshotIsolation,
            session_order: true,
            ..SatOptions::default()
        };
        let (pruned, stats) = check_serializable(&rh, &base);
        assert!(stats.pruned > 0, "seed {seed}: {stats:?}");
        let plain = SatOptions {
            prune: false,
            two_width: false,
            ..base
        };
        let (unpruned, _) = check_serializable(&rh, &plain);
        let valid = |v: &Verdict| match v {
            Verdict::Valid(_) => true,
            Verdict::Invalid(Violation::Cycle(c)) => {
                verify_cycle(&rh, c).unwrap_or_else(|e| panic!("seed {seed}: {e}: {c:?}"));
                false
            }
            other => panic!("seed {seed}: {other:?}"),
        };
        let answer = valid(&pruned);
        assert_eq!(answer, valid(&unpruned), "seed {seed}");
        if opts.faults.is_empty() {
            assert!(answer, "seed {seed}");
        }
        counts[answer as usize] += 1;
    }
    assert!(counts[0] >= 4 && counts[1] >= 8, "{counts:?}");
}

/// A conflict budget makes a search that needs more conflicts unknown, the
/// same way on every run, and changes nothing for one that needs fewer.
#[test]
fn conflict_budget_gives_up_deterministically() {
    use crate::gen::{GenOptions, Mode, Workload as GenWorkload};
    let opts = GenOptions {
        workload: GenWorkload::RwRegister,
        mode: Mode::Serializable,
        txns: 2000,
        seed: 1,
        ..GenOptions::default()
    };
    let rh = generated(&opts);
    let base = SatOptions {
        session_order: false,
        ..SatOptions::default()
    };
    let (free, stats) = check_serializable(&rh, &base);
    assert!(matches!(free, Verdict::Valid(_)), "{free:?}");
    let needed = stats.theory_conflicts;
    assert!(needed >= 10, "{stats:?}");
    for _ in 0..3 {
        let short = SatOptions {
            conflict_budget: Some(needed / 2),
            ..base
        };
        let (v, stats) = check_serializable(&rh, &short);
        assert_eq!(v, Verdict::Unknown);
        assert_eq!(stats.theory_conflicts, needed / 2);
    }
    let enough = SatOptions {
        conflict_budget: Some(needed + 1),
        ..base
    };
    assert_eq!(check_serializable(&rh, &enough).0, free);
}
