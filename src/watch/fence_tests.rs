//! Unit tests of fence-based collection ([`super::fence_gc`]): the digest's
//! epoch oracle (O15, with the convention's `nil` initial fence value), the
//! forgotten set, immediate rejections, a process without fences, and a
//! read of a set-aside crashed write.

use super::*;
use crate::check::result::Expectations;

/// Client A: FA1, a1 w(x,1), a2 r(x,1), FA2, a3 r(y,11); client B: b0
/// w(y,10), b1 r(y,10) w(y,11), FB1, b2 r(x,1), FB2. Fences chain FA1, FB1,
/// FA2, FB2 (epochs 0..3). Each op map is (process, value), invoked and
/// completed at once; positions are 2 per transaction.
const O15: [(i64, &str); 10] = [
    (0, "[[:r -1 nil] [:w -1 1]]"), // FA1  start 0
    (1, "[[:w 20 10]]"),            // b0   start 2
    (1, "[[:r 20 10] [:w 20 11]]"), // b1   start 4
    (1, "[[:r -1 1] [:w -1 2]]"),   // FB1  start 6
    (0, "[[:w 10 1]]"),             // a1   start 8
    (0, "[[:r 10 1]]"),             // a2   start 10
    (0, "[[:r -1 2] [:w -1 3]]"),   // FA2  start 12
    (1, "[[:r 10 1]]"),             // b2   start 14
    (1, "[[:r -1 3] [:w -1 4]]"),   // FB2  start 16
    (0, "[[:r 20 11]]"),            // a3   start 18
];

fn history(txns: &[(i64, &str)], first_index: usize) -> Vec<u8> {
    let mut h = String::new();
    for (n, (p, v)) in txns.iter().enumerate() {
        let i = first_index + 2 * n;
        h.push_str(&format!(
            "{{:index {i}, :type :invoke, :process {p}, :f :txn, :value {v}}}\n{{:index {}, :type :ok, :process {p}, :f :txn, :value {v}}}\n",
            i + 1
        ));
    }
    h.into_bytes()
}

fn watcher(model: &'static str) -> Watcher {
    Watcher::new(WatchOptions {
        check: CheckOptions {
            expectations: Expectations {
                models: Some(vec![model]),
                anomalies: Vec::new(),
            },
            ..CheckOptions::default()
        },
        ..WatchOptions::for_tests(Some(Workload::RwRegister))
    })
}

fn fence_gc(w: &mut Watcher) -> &mut fence_gc::FenceGc {
    match &mut w.collector {
        Collector::Fence(g) => g,
        other => panic!("expected the fence collector, found {other:?}"),
    }
}

fn starts(w: &Watcher) -> Vec<u64> {
    w.store.txns.keys().copied().collect()
}

#[test]
fn o15_epochs() {
    let mut w = watcher("strong-session-serializable");
    w.ingest(history(&O15, 0)).unwrap();
    let store = std::mem::take(&mut w.store);
    let ep = fence_gc(&mut w).epochs(&store);
    // (pf, nf) per transaction: Cobra's epoch is nf - 1 (a1 = a2 = 1,
    // b0 = b1 = 0, b2 = 2, a3 = +inf), fences carry their own.
    type Bounds = (Option<u64>, Option<u64>);
    let want: [(u64, Bounds); 10] = [
        (0, (Some(0), Some(0))),
        (2, (None, Some(1))),
        (4, (None, Some(1))),
        (6, (Some(1), Some(1))),
        (8, (Some(0), Some(2))),
        (10, (Some(0), Some(2))),
        (12, (Some(2), Some(2))),
        (14, (Some(1), Some(3))),
        (16, (Some(3), Some(3))),
        (18, (Some(2), None)),
    ];
    for (s, b) in want {
        assert_eq!(ep.bounds[&s], b, "transaction at {s}");
    }
    // epoch_agree = min(last fence of A, of B) = min(2, 3).
    assert_eq!(ep.agree, Some(2));
}

#[test]
fn o15_forgotten_set_and_tombstones() {
    let mut w = watcher("strong-session-serializable");
    w.ingest(history(&O15, 0)).unwrap();
    let r = w.round().unwrap();
    assert!(r.new.is_empty(), "{:?}", r.new);
    // Forgotten: FA1, b0, b1, FB1, a1, a2, FA2 (nf <= agree = 2, each
    // process's prefix, bases x <- a1, y <- b1, fence key <- FA2). Cobra's
    // removable set is {b0} alone (it keeps the latest writers; here their
    // values stay as the keys' bases instead).
    assert_eq!(r.collected.ok, 7);
    assert_eq!(starts(&w), vec![14, 16, 18]);
    let g = fence_gc(&mut w);
    let base = |k: i64| g.bases[&Atom::int(k).unwrap()].values.clone();
    assert_eq!(base(10), vec![Atom::int(1).unwrap()]);
    assert_eq!(base(20), vec![Atom::int(11).unwrap()]);
    assert_eq!(base(-1), vec![Atom::int(3).unwrap()]);
    // The retained reads of the bases read nil now.
    let t = &w.store.txns[&14];
    assert_eq!(t.mops.as_ref().unwrap()[0].arg, store::Arg::Nil);
    // Next round: A reads y = 11 (the base: fine), then y = 10 (b0's
    // forgotten write: rejected at once), then x = nil (before a1: rejected).
    let more = [
        (0, "[[:r -1 4] [:w -1 5]]"),
        (0, "[[:r 20 11]]"),
        (0, "[[:r 20 10]]"),
        (0, "[[:r 10 nil]]"),
    ];
    w.ingest(history(&more, 20)).unwrap();
    let r = w.round().unwrap();
    let types: Vec<&str> = r.new.iter().map(|(t, _)| t.as_str()).collect();
    assert_eq!(types, vec![COLLECTED_READ, COLLECTED_READ], "{:?}", r.new);
    assert_eq!(
        pr_str(&r.new[0].1),
        "{:op {:index 25, :time -1, :type :ok, :process 0, :f :txn, :value [[:r 20 10]]}, :key 20, :value 10}"
    );
    assert_eq!(
        pr_str(&r.new[1].1),
        "{:op {:index 27, :time -1, :type :ok, :process 0, :f :txn, :value [[:r 10 nil]]}, :key 10, :value nil}"
    );
    assert!(w.flagged());
}

#[test]
fn a_client_without_fences_freezes_nothing() {
    let mut w = watcher("strong-session-serializable");
    let mut txns = O15.to_vec();
    txns.push((2, "[[:w 30 1]]"));
    w.ingest(history(&txns, 0)).unwrap();
    let r = w.round().unwrap();
    assert!(r.new.is_empty(), "{:?}", r.new);
    assert_eq!(r.collected.ok, 0);
    assert_eq!(w.retained(), 11);
}

#[test]
fn no_collection_without_session_order() {
    let mut w = watcher("serializable");
    assert!(matches!(w.collector, Collector::None));
    w.ingest(history(&O15, 0)).unwrap();
    w.round().unwrap();
    assert_eq!(w.retained(), 10);
    assert!(
        w.notes.iter().any(|n| n.contains("session order")),
        "{:?}",
        w.notes
    );
}

#[test]
fn concurrent_last_writes_form_a_loose_base_and_a_read_defers() {
    // x is written by two concurrent transactions of A and B (neither
    // known to be last), then both processes fence twice.
    let mut h = String::new();
    let mut i = 0;
    let mut op = |p: i64, t: &str, v: &str| {
        h.push_str(&format!(
            "{{:index {i}, :type :{t}, :process {p}, :f :txn, :value {v}}}\n"
        ));
        i += 1;
    };
    op(0, "invoke", "[[:w 10 1]]");
    op(1, "invoke", "[[:w 10 2]]");
    op(0, "ok", "[[:w 10 1]]");
    op(1, "ok", "[[:w 10 2]]");
    for (p, r, wv) in [(0, "nil", 1), (1, "1", 2), (0, "2", 3), (1, "3", 4)] {
        let v = format!("[[:r -1 {r}] [:w -1 {wv}]]");
        op(p, "invoke", &v);
        op(p, "ok", &v);
    }
    let mut w = watcher("strong-session-serializable");
    w.ingest(h.into_bytes()).unwrap();
    let r = w.round().unwrap();
    assert!(r.new.is_empty(), "{:?}", r.new);
    let g = fence_gc(&mut w);
    let mut vals = g.bases[&Atom::int(10).unwrap()].values.clone();
    vals.sort();
    assert_eq!(vals, vec![Atom::int(1).unwrap(), Atom::int(2).unwrap()]);
    // A later read shows which was last: no rejection, but the verdict is
    // left to the whole history.
    let more = [(0, "[[:r 10 1]]")];
    w.ingest(history(&more, 12)).unwrap();
    let r = w.round().unwrap();
    assert!(r.new.is_empty(), "{:?}", r.new);
    assert!(w.deferred);
    assert!(matches!(w.finish(None), Final::Recheck(_)));
}

/// A crashed write nobody read is set aside while key 10's base forms from
/// the `:ok` write; a later read of the crashed write's value is not
/// rejected (it may be serialized last) but leaves the verdict to the whole
/// history.
#[test]
fn a_read_of_a_set_aside_info_write_defers() {
    let mut h = String::new();
    let mut i = 0;
    let mut op = |p: i64, t: &str, v: &str| {
        h.push_str(&format!(
            "{{:index {i}, :type :{t}, :process {p}, :f :txn, :value {v}}}\n"
        ));
        i += 1;
    };
    op(2, "invoke", "[[:w 10 5]]");
    op(2, "info", "[[:w 10 5]]");
    op(0, "invoke", "[[:w 10 1]]");
    op(0, "ok", "[[:w 10 1]]");
    for (p, r, wv) in [(0, "nil", 1), (1, "1", 2), (0, "2", 3), (1, "3", 4)] {
        let v = format!("[[:r -1 {r}] [:w -1 {wv}]]");
        op(p, "invoke", &v);
        op(p, "ok", &v);
    }
    let mut w = watcher("strict-serializable");
    w.ingest(h.into_bytes()).unwrap();
    let r = w.round().unwrap();
    assert!(r.new.is_empty(), "{:?}", r.new);
    assert!(r.collected.ok > 0, "{:?}", r.collected);
    assert!(!w.deferred);
    w.ingest(history(&[(1, "[[:r 10 5]]")], 12)).unwrap();
    let r = w.round().unwrap();
    assert!(r.new.is_empty(), "{:?}", r.new);
    assert!(w.deferred);
    assert!(
        w.notes.iter().any(|n| n.contains("crashed (:info)")),
        "{:?}",
        w.notes
    );
    assert!(matches!(w.finish(None), Final::Recheck(_)));
}
