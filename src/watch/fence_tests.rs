//! Unit tests of fence-based collection ([`super::fence_gc`]): the digest's
//! epoch oracle (O15, with the convention's `nil` initial fence value), the
//! forgotten set, immediate rejections, a process without fences, and a
//! read of a set-aside crashed write.

use super::tests::line_chunks;
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

/// A generated 3000-transaction rw-register stream of 5 processes on 12
/// keys with a fence every 5 transactions, `fail` of them failed.
fn fenced_stream(seed: u64, fail: f64) -> Vec<u8> {
    fenced_stream_with(seed, fail, Vec::new())
}

/// [`fenced_stream`] with `faults` injected.
fn fenced_stream_with(seed: u64, fail: f64, faults: Vec<crate::gen::Fault>) -> Vec<u8> {
    use crate::gen::{generate_fenced, FenceOptions, GenOptions, Mode};
    let opts = GenOptions {
        faults,
        workload: Workload::RwRegister,
        mode: Mode::StrictSerializable,
        txns: 3000,
        processes: 5,
        keys: 12,
        fail_fraction: fail,
        seed,
        ..GenOptions::default()
    };
    let mut text = Vec::new();
    generate_fenced(&opts, Some(FenceOptions { every: 5, key: -1 }), &mut text).unwrap();
    text
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
        let i = ep.starts.binary_search(&s).expect("a retained transaction");
        assert_eq!(ep.bounds[i], b, "transaction at {s}");
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
    let base = |k: i64| g.bases[&Atom::int(k).unwrap()].values().to_vec();
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
    let mut vals = g.bases[&Atom::int(10).unwrap()].values().to_vec();
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

/// Processes 0 and 1 alternate fences (epochs 0, 1, 2, …), so each
/// process's transaction between two fences is concurrent with the other's
/// before and after it: `a_i` (process 0) writes key `10 + i % 2`, `b_i`
/// (process 1) writes keys `10 + i % 2` and `10 + (i + 1) % 2`, blind, and
/// nothing reads them. Every writer is concurrent with a later one of the
/// other process on one of its keys, so no base precedes every writer that
/// stays, and a prefix per process unravels back to the start; yet each
/// old write is overwritten by a later frozen one of its own process, so
/// its key is *covered* and it can be forgotten. `n` rounds of (a, b), then
/// one unfenced pair.
fn ladder(n: usize) -> Vec<(i64, String)> {
    let mut t = Vec::new();
    let fence = |e: usize| {
        let r = if e == 0 {
            "nil".to_string()
        } else {
            e.to_string()
        };
        format!("[[:r -1 {r}] [:w -1 {}]]", e + 1)
    };
    for i in 0..=n {
        if i < n {
            t.push((0, fence(2 * i)));
            t.push((1, fence(2 * i + 1)));
        }
        let (x, y) = (10 + i % 2, 10 + (i + 1) % 2);
        t.push((0, format!("[[:w {x} {}]]", 10 * i)));
        t.push((
            1,
            format!("[[:w {x} {}] [:w {y} {}]]", 10 * i + 1, 10 * i + 2),
        ));
    }
    t
}

fn ladder_watcher(cover: bool) -> Watcher {
    let mut w = watcher("strong-session-serializable");
    fence_gc(&mut w).cover = cover;
    let txns = ladder(20);
    let refs: Vec<(i64, &str)> = txns.iter().map(|(p, v)| (*p, v.as_str())).collect();
    w.ingest(history(&refs, 0)).unwrap();
    w
}

#[test]
fn covered_keys_collect_the_fence_ladder() {
    // Without covered keys, only the fences before the first write go.
    let mut w = ladder_watcher(false);
    let r = w.round().unwrap();
    assert!(r.new.is_empty(), "{:?}", r.new);
    assert_eq!(r.collected.ok, 2);
    // With them, everything but the last fenced rounds: the writers that
    // stay cover the others (no base: neither key keeps a value).
    let mut w = ladder_watcher(true);
    let r = w.round().unwrap();
    assert!(r.new.is_empty(), "{:?}", r.new);
    assert_eq!(r.collected.ok, 70);
    assert_eq!(w.retained(), 12);
    let g = fence_gc(&mut w);
    for k in [10, 11] {
        assert_eq!(g.bases[&Atom::int(k).unwrap()], fence_gc::Base::Covered);
    }
    // A read of a forgotten (overwritten) write, or of nil, is rejected at
    // once; a read of a writer that stayed is not.
    let more = [
        (0, "[[:r -1 40] [:w -1 41]]"),
        (0, "[[:r 10 0]]"),
        (0, "[[:r 11 nil]]"),
        (1, "[[:r -1 41] [:w -1 42]]"),
        (1, "[[:r 10 201]]"),
    ];
    w.ingest(history(&more, 200)).unwrap();
    let r = w.round().unwrap();
    let cases = rendered(&r);
    assert_eq!(
        cases,
        vec![
            format!("{COLLECTED_READ} {{:op {{:index 203, :time -1, :type :ok, :process 0, :f :txn, :value [[:r 10 0]]}}, :key 10, :value 0}}"),
            format!("{COLLECTED_READ} {{:op {{:index 205, :time -1, :type :ok, :process 0, :f :txn, :value [[:r 11 nil]]}}, :key 11, :value nil}}"),
        ]
    );
}

/// Key 10 is written by `u` (process 0) and `s` (process 2), concurrent by
/// their fences; `u` reaches `s` only through two reads and a session step
/// (`u` →wr `r` →so `r'` →wr `s`), which the one-step rules miss. With the
/// transitive reach, `s` is key 10's base and everything fenced is
/// forgotten; without it, neither writer has a base (a later writer `t`
/// stays) and they keep their processes' suffixes, and `r`, which read
/// `u`, keeps its own.
#[test]
fn transitive_reach_orders_writers_the_fences_do_not() {
    let txns = [
        (0, "[[:r -1 nil] [:w -1 1]]"), // F0  start 0
        (1, "[[:r -1 1] [:w -1 2]]"),   // F1  2
        (2, "[[:r -1 2] [:w -1 3]]"),   // F2  4
        (0, "[[:w 10 1] [:w 12 1]]"),   // u   6
        (1, "[[:r 12 1]]"),             // r   8
        (1, "[[:w 13 1]]"),             // r'  10
        (2, "[[:r 13 1] [:w 10 2]]"),   // s   12
        (0, "[[:r -1 3] [:w -1 4]]"),   // F3  14
        (1, "[[:r -1 4] [:w -1 5]]"),   // F4  16
        (2, "[[:r -1 5] [:w -1 6]]"),   // F5  18
        (0, "[[:r -1 6] [:w -1 7]]"),   // F6  20
        (1, "[[:r -1 7] [:w -1 8]]"),   // F7  22
        (2, "[[:r -1 8] [:w -1 9]]"),   // F8  24
        (0, "[[:w 10 3]]"),             // t   26
    ];
    for (closure, forgotten, kept) in [
        (true, 11, vec![22, 24, 26]),
        (false, 3, vec![6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26]),
    ] {
        let mut w = watcher("strong-session-serializable");
        // Key 10 is active (`t` wrote it just now): no loose base.
        fence_gc(&mut w).loose_idle_ops = 1000;
        fence_gc(&mut w).closure = closure;
        w.ingest(history(&txns, 0)).unwrap();
        let r = w.round().unwrap();
        assert!(r.new.is_empty(), "{:?}", r.new);
        assert_eq!(r.collected.ok, forgotten, "closure {closure}");
        assert_eq!(starts(&w), kept, "closure {closure}");
        if closure {
            let g = fence_gc(&mut w);
            let base = g.bases[&Atom::int(10).unwrap()].values().to_vec();
            assert_eq!(base, vec![Atom::int(2).unwrap()]);
        }
    }
}

/// The worklist fixpoint forgets exactly what full passes of the rules
/// forget (`FenceGc::collect` compares the two in test builds) on
/// generated fenced streams, under the session model and under real time,
/// with crashed and failed transactions.
#[test]
fn the_worklist_fixpoint_equals_full_passes_on_generated_streams() {
    use crate::gen::{generate_fenced, FenceOptions, GenOptions, Mode};
    // (A crash stops session-only collection: its process's successor
    // is a process first seen late, module docs.)
    // (seed, model, crashes, processes, keys, fence every, least forgotten)
    for (seed, model, info_fraction, processes, keys, every, least) in [
        (1, "strong-session-serializable", 0.0, 5, 12, 5, 2000),
        (2, "strong-session-serializable", 0.0, 5, 12, 5, 2000),
        (3, "strong-session-serializable", 0.0, 5, 12, 5, 2000),
        (1, "strong-session-serializable", 0.0, 10, 100, 20, 1),
        (2, "strong-session-serializable", 0.0, 10, 100, 20, 1),
        (4, "strong-session-serializable", 0.01, 5, 12, 5, 0),
        (5, "strict-serializable", 0.01, 5, 12, 5, 2000),
    ] {
        let opts = GenOptions {
            workload: Workload::RwRegister,
            mode: Mode::StrictSerializable,
            txns: 3000,
            processes,
            keys,
            info_fraction,
            fail_fraction: 0.02,
            seed,
            ..GenOptions::default()
        };
        let fences = FenceOptions { every, key: -1 };
        let mut text = Vec::new();
        generate_fenced(&opts, Some(fences), &mut text).unwrap();
        let mut w = watcher(model);
        let mut forgotten = 0;
        for chunk in line_chunks(&text, 400) {
            w.ingest(chunk).unwrap();
            let r = w.round().unwrap();
            assert!(r.new.is_empty(), "{seed} {model}: {:?}", r.new);
            forgotten += r.collected.ok;
        }
        assert!(forgotten >= least, "{seed} {model}: forgot {forgotten}");
    }
}

/// Op texts live in one buffer the round's history shares
/// ([`store::Store::texts`]): through collection, reads rewritten to `nil`
/// and compaction, each retained op's text is still its own (its `:index`
/// and `:type`; a completion's `:value` is its current micro-ops), and
/// after a round at most an eighth of the buffer is dead texts.
#[test]
fn op_texts_stay_their_ops_through_collection_and_compaction() {
    let text = fenced_stream(1, 0.0);
    let mut w = watcher("strong-session-serializable");
    let mut forgotten = 0;
    for chunk in line_chunks(&text, 400) {
        w.ingest(chunk).unwrap();
        forgotten += w.round().unwrap().collected.ok;
        let mut live = 0;
        for t in w.store.txns.values() {
            for o in t.inv.iter().chain(t.comp.iter()) {
                live += o.text.len as usize + 1;
                let m = crate::edn::parse_one(w.store.text(o.text)).unwrap();
                assert_eq!(m.get_kw("index"), Some(&Value::Int(o.index as i64)));
                assert_eq!(m.get_kw("type"), Some(&Value::kw(o.op_type.name())));
                if t.comp.as_ref().is_some_and(|c| c.pos == o.pos) {
                    let ms = t.mops.iter().flatten().map(|m| w.store.mop_value(m));
                    assert_eq!(m.get_kw("value"), Some(&Value::Vector(ms.collect())));
                }
            }
        }
        assert!(
            w.store.texts.len() * 7 <= live * 8,
            "{} {live}",
            w.store.texts.len()
        );
    }
    assert!(forgotten >= 2000, "forgot {forgotten}");
}

/// A collection prepared beside a round's check ([`fence_gc::FenceGc::
/// prepare`], `round_check.rs`) reads the store without changing it, and
/// plans as if the failed transactions had already left (the sequential
/// collection removed them first): applied, it forgets what a collection
/// of the store without them forgets, with the same bases.
#[test]
fn a_prepared_collection_leaves_the_store_alone_and_skips_failed_transactions() {
    let text = fenced_stream(3, 0.05);
    let model = "strong-session-serializable";
    let (mut w1, mut w2) = (watcher(model), watcher(model));
    let (mut forgotten, mut failed) = (0, 0);
    for chunk in line_chunks(&text, 400) {
        w1.ingest(chunk.clone()).unwrap();
        w2.ingest(chunk).unwrap();
        let Watcher {
            collector, store, ..
        } = &mut w1;
        let Collector::Fence(g1) = collector else {
            panic!("expected the fence collector")
        };
        g1.now = w2.next_pos;
        let before: Vec<u64> = store.txns.keys().copied().collect();
        let texts = store.texts.len();
        let p = g1.prepare(store);
        assert_eq!(store.txns.keys().copied().collect::<Vec<_>>(), before);
        assert_eq!(store.texts.len(), texts);
        let fails = (store.txns.values())
            .filter(|t| t.outcome() == OpType::Fail)
            .count();
        let done1 = g1.apply(store, p);
        assert_eq!(done1.failed, fails);
        let Watcher {
            collector, store, ..
        } = &mut w2;
        let Collector::Fence(g2) = collector else {
            panic!("expected the fence collector")
        };
        g2.now = g1.now;
        store.txns.retain(|_, t| t.outcome() != OpType::Fail);
        let done2 = g2.collect(store);
        assert_eq!(done1.ok, done2.ok);
        assert_eq!(starts(&w1), starts(&w2));
        assert_eq!(fence_gc(&mut w1).bases, fence_gc(&mut w2).bases);
        forgotten += done1.ok;
        failed += fails;
    }
    assert!(forgotten >= 2000 && failed > 0, "{forgotten} {failed}");
}

/// The collection planned beside a round's check (`round_check.rs`:
/// [`fence_gc::FenceGc::prepare`], then `apply`) and the one run after it
/// ([`fence_gc::FenceGc::collect`]) forget the same transactions round by
/// round, report the same anomalies and end in the same final map, on
/// valid streams and on streams with an anomaly (after which neither
/// collects).
#[test]
fn planning_beside_the_check_forgets_what_planning_after_it_forgets() {
    use crate::gen::Fault;
    let streams = [
        (1, vec![]),
        (2, vec![]),
        (4, vec![Fault::LostUpdate]),
        (5, vec![Fault::WriteSkew]),
    ];
    let texts =
        (streams.into_iter()).map(|(seed, faults)| (seed, fenced_stream_with(seed, 0.05, faults)));
    let new = || watcher("strong-session-serializable");
    let (forgotten, flagged) = super::tests::plan_beside_and_after_all(texts, new);
    // Both kinds of stream were seen: collection ran, and anomalies stopped it.
    assert!(forgotten >= 2000 && flagged == 2, "{forgotten} {flagged}");
}

/// A round's new anomalies as `type case` lines.
fn rendered(r: &Round) -> Vec<String> {
    r.new
        .iter()
        .map(|(t, c)| format!("{t} {}", pr_str(c)))
        .collect()
}

/// A completion held back ([`hold`]) reads a forgotten write: process 2's
/// `C` read `y = 10` (b0's) and `z = 1` from `P`, still pending, so `C` is
/// held while a round forgets b0 and b1 (base `y = 11`). Fed when `P`
/// completes, its read of b0's value is rejected at once, rightly: b1
/// overwrote it and reaches `C` through the fences (b1 → FB2 → FC2 → `C`),
/// a G-single with session order. Fed at once instead, `C` would stop
/// collection before b0 could be forgotten.
#[test]
fn a_held_completion_reading_a_write_forgotten_meanwhile_is_rejected() {
    let fenced = [
        (0, "[[:r -1 nil] [:w -1 1]]"), // FA1, epoch 0
        (1, "[[:r -1 1] [:w -1 2]]"),   // FB1, 1
        (2, "[[:r -1 2] [:w -1 3]]"),   // FC1, 2
        (3, "[[:r -1 3] [:w -1 4]]"),   // FD1, 3
        (1, "[[:w 20 10]]"),            // b0
        (1, "[[:r 20 10] [:w 20 11]]"), // b1
        (0, "[[:r -1 4] [:w -1 5]]"),   // FA2, 4
        (1, "[[:r -1 5] [:w -1 6]]"),   // FB2, 5
        (2, "[[:r -1 6] [:w -1 7]]"),   // FC2, 6
        (3, "[[:r -1 7] [:w -1 8]]"),   // FD2, 7
        (0, "[[:r -1 8] [:w -1 9]]"),   // FA3, 8: agree = 5
    ];
    let mut w = watcher("strong-session-serializable");
    let mut text = history(&fenced, 0);
    text.extend_from_slice(
        b"{:index 22, :type :invoke, :process 3, :f :txn, :value [[:w 30 1]]}\n\
          {:index 23, :type :invoke, :process 2, :f :txn, :value [[:r 20 nil] [:r 30 nil]]}\n\
          {:index 24, :type :ok, :process 2, :f :txn, :value [[:r 20 10] [:r 30 1]]}\n",
    );
    w.ingest(text).unwrap();
    assert_eq!(w.held(), 1);
    let r = w.round().unwrap();
    assert!(r.new.is_empty(), "{:?}", r.new);
    // FA1, FA2, FB1, b0, b1, FB2, FC1, FD1.
    assert_eq!(r.collected.ok, 8);
    assert!(!starts(&w).contains(&8), "b0 forgotten");
    w.ingest(b"{:index 25, :type :ok, :process 3, :f :txn, :value [[:w 30 1]]}\n".to_vec())
        .unwrap();
    assert_eq!(w.held(), 0);
    let r = w.round().unwrap();
    let new = rendered(&r);
    assert_eq!(
        new,
        vec![format!("{COLLECTED_READ} {{:op {{:index 24, :time -1, :type :ok, :process 2, :f :txn, :value [[:r 20 10] [:r 30 1]]}}, :key 20, :value 10}}")]
    );
}
