//! Unit tests of the watcher's helpers and of list-append collection.

use super::store::{Arg, WMop};
use super::*;
use crate::model::Atom;

#[test]
fn line_mentions_shift() {
    assert_eq!(
        shift_line_mentions("expected ] to close [ at line 7, column 53", 120),
        "expected ] to close [ at line 127, column 53"
    );
    assert_eq!(shift_line_mentions("no lines here", 5), "no lines here");
}

#[test]
fn line_mentions_leave_quoted_input_alone() {
    // Text copied from the input is not a line number (it was rewritten).
    assert_eq!(
        shift_line_mentions(r#"at line 2, found "line 5", found "a\"line 5""#, 10),
        r#"at line 12, found "line 5", found "a\"line 5""#
    );
    // A huge number in the input used to overflow the addition (a panic in
    // debug builds).
    assert_eq!(
        shift_line_mentions("at line 18446744073709551615", 3),
        "at line 18446744073709551615"
    );
}

fn read(k: i64, els: &[i64]) -> WMop {
    WMop {
        f: MopFn::Read,
        key: Atom::int(k).unwrap(),
        arg: Arg::List(els.iter().map(|&e| Atom::int(e).unwrap()).collect()),
    }
}

fn opts() -> WatchOptions {
    WatchOptions::for_tests(None)
}

/// `text` cut into pieces of `lines` whole lines each, as a stream arrives
/// in rounds.
pub(super) fn line_chunks(text: &[u8], lines: usize) -> Vec<Vec<u8>> {
    let all: Vec<&[u8]> = text.split_inclusive(|&b| b == b'\n').collect();
    all.chunks(lines).map(|c| c.concat()).collect()
}

/// [`plan_beside_and_after`] on each stream (seed, text); the transactions
/// forgotten and the streams where an anomaly was found, in all.
pub(super) fn plan_beside_and_after_all(
    streams: impl IntoIterator<Item = (u64, Vec<u8>)>,
    new: impl Fn() -> Watcher,
) -> (usize, usize) {
    let (mut forgotten, mut flagged) = (0, 0);
    for (seed, text) in streams {
        let (f, a) = plan_beside_and_after(&text, &new, &format!("seed {seed}"));
        forgotten += f;
        flagged += usize::from(a);
    }
    (forgotten, flagged)
}

/// Feeds `text` in rounds of 300 lines to two watchers from `new`, one
/// planning each collection beside the round's check (`round_check.rs`:
/// `prepare`, then `apply`) and one after it (`collect`), and asserts that
/// they forget the same transactions round by round, report the same
/// anomalies and end in the same final map. Returns what was forgotten and
/// whether an anomaly was found (after which neither collects).
fn plan_beside_and_after(text: &[u8], new: impl Fn() -> Watcher, what: &str) -> (usize, bool) {
    let (mut beside, mut after) = (new(), new());
    after.plan_beside_max_txns = 0;
    let starts = |w: &Watcher| w.store.txns.keys().copied().collect::<Vec<u64>>();
    let (mut forgotten, mut last) = (0, (None, None));
    let chunks = line_chunks(text, 300);
    let n = chunks.len();
    for (i, chunk) in chunks.into_iter().enumerate() {
        beside.ingest(chunk.clone()).unwrap();
        after.ingest(chunk).unwrap();
        if i + 1 == n {
            beside.end_of_input().unwrap();
            after.end_of_input().unwrap();
        }
        let (b, a) = (beside.round().unwrap(), after.round().unwrap());
        assert_eq!(
            (b.collected.ok, b.collected.failed),
            (a.collected.ok, a.collected.failed),
            "{what}, round {i}"
        );
        assert_eq!(starts(&beside), starts(&after), "{what}, round {i}");
        assert_eq!(b.new, a.new, "{what}, round {i}");
        forgotten += b.collected.ok;
        last = (b.outcome, a.outcome);
    }
    let flagged = beside.flagged;
    assert_eq!(flagged, after.flagged, "{what}");
    let (b, a) = (beside.finish(last.0), after.finish(last.1));
    assert_eq!(format!("{b:?}"), format!("{a:?}"), "{what}");
    (forgotten, flagged)
}

/// [`plan_beside_and_after`] for the list-append collector, on generated
/// strict-serializable streams with crashed and failed transactions:
/// valid ones, and ones with a stale read and a lost update.
#[test]
fn list_collection_planned_beside_the_check_forgets_what_planning_after_it_forgets() {
    use crate::gen::{Fault, GenOptions, Mode};
    let streams = [
        (1, vec![]),
        (2, vec![]),
        (3, vec![Fault::StaleRead]),
        (4, vec![Fault::LostUpdate]),
    ];
    let texts = streams.into_iter().map(|(seed, faults)| {
        let gen = GenOptions {
            faults,
            workload: Workload::ListAppend,
            mode: Mode::StrictSerializable,
            txns: 3000,
            processes: 5,
            keys: 8,
            fail_fraction: 0.03,
            info_fraction: 0.01,
            seed,
            ..GenOptions::default()
        };
        let mut text = Vec::new();
        crate::gen::generate(&gen, &mut text).unwrap();
        (seed, text)
    });
    let new = || Watcher::new(WatchOptions::for_tests(Some(Workload::ListAppend)));
    let (forgotten, flagged) = plan_beside_and_after_all(texts, new);
    assert!(forgotten >= 4000 && flagged == 2, "{forgotten} {flagged}");
}

/// Appends 1, 2 to key 5 and reads them back in three rounds; the first
/// two transactions are collected, and later reads are compared with the
/// collected prefix: extending it is fine, contradicting it is a rejection.
#[test]
fn collected_prefix_trims_and_rejects() {
    let mut w = Watcher::new(opts());
    let h =
        "{:index 0, :type :invoke, :process 0, :f :txn, :value [[:append 5 1] [:append 5 2]]}\n\
             {:index 1, :type :ok, :process 0, :f :txn, :value [[:append 5 1] [:append 5 2]]}\n\
             {:index 2, :type :invoke, :process 1, :f :txn, :value [[:r 5 nil]]}\n\
             {:index 3, :type :ok, :process 1, :f :txn, :value [[:r 5 [1 2]]]}\n";
    w.ingest(h.as_bytes().to_vec()).unwrap();
    let r = w.round().unwrap();
    assert!(r.new.is_empty());
    assert_eq!(r.collected.ok, 2);
    assert_eq!(w.retained(), 0);
    let Collector::List(g) = &mut w.collector else {
        panic!("list-append under strict-serializable collects")
    };
    let mut ok = vec![read(5, &[1, 2, 3])];
    let a = g.admit(true, &mut ok);
    assert!(a.changed && a.rejected.is_empty() && !a.revealed);
    assert_eq!(ok, vec![read(5, &[3])]);
    for bad in [&[1][..], &[2, 1], &[1, 3, 2]] {
        let mut m = vec![read(5, bad)];
        let a = g.admit(true, &mut m);
        assert!(a.changed);
        assert_eq!(a.rejected.len(), 1, "{bad:?}");
        assert_eq!(m[0].arg, Arg::Nil);
    }
    let mut other = vec![read(6, &[1])];
    assert_eq!(g.admit(true, &mut other), Default::default());
    let late = "{:index 4, :type :invoke, :process 2, :f :txn, :value [[:r 5 nil]]}\n\
                {:index 5, :type :ok, :process 2, :f :txn, :value [[:r 5 [1]]]}\n";
    w.ingest(late.as_bytes().to_vec()).unwrap();
    let r = w.round().unwrap();
    assert_eq!(r.new.len(), 1);
    assert_eq!(r.new[0].0, COLLECTED_READ);
    assert!(w.flagged());
    assert!(matches!(w.finish(None), Final::Recheck(_)));
}

/// A transaction concurrent with a pending invocation is kept: the pending
/// one may still read an older list legally.
#[test]
fn pending_invocation_blocks_collection() {
    let mut w = Watcher::new(opts());
    let h = "{:index 0, :type :invoke, :process 1, :f :txn, :value [[:r 5 nil]]}\n\
             {:index 1, :type :invoke, :process 0, :f :txn, :value [[:append 5 1]]}\n\
             {:index 2, :type :ok, :process 0, :f :txn, :value [[:append 5 1]]}\n\
             {:index 3, :type :invoke, :process 2, :f :txn, :value [[:r 5 nil]]}\n\
             {:index 4, :type :ok, :process 2, :f :txn, :value [[:r 5 [1]]]}\n";
    w.ingest(h.as_bytes().to_vec()).unwrap();
    let r = w.round().unwrap();
    assert_eq!(r.collected.ok, 0);
    let done = "{:index 5, :type :ok, :process 1, :f :txn, :value [[:r 5 []]]}\n";
    w.ingest(done.as_bytes().to_vec()).unwrap();
    let r = w.round().unwrap();
    assert!(
        r.new.is_empty(),
        "reading [] concurrently is fine: {:?}",
        r.new
    );
    assert_eq!(r.collected.ok, 3);
}

/// Two concurrent appends nobody read are collected as an unordered block;
/// a later read fixes their order, which the collector cannot judge any
/// more, so the verdict is left to a check of the whole history.
#[test]
fn loose_block_revealed_defers_to_whole_check() {
    let mut w = Watcher::new(opts());
    let h = "{:index 0, :type :invoke, :process 0, :f :txn, :value [[:append 5 1]]}\n\
             {:index 1, :type :invoke, :process 1, :f :txn, :value [[:append 5 2]]}\n\
             {:index 2, :type :ok, :process 0, :f :txn, :value [[:append 5 1]]}\n\
             {:index 3, :type :ok, :process 1, :f :txn, :value [[:append 5 2]]}\n";
    w.ingest(h.as_bytes().to_vec()).unwrap();
    assert_eq!(w.round().unwrap().collected.ok, 2);
    let Collector::List(g) = &w.collector else {
        panic!()
    };
    assert_eq!(
        g.bases[&Atom::int(5).unwrap()]
            .loose
            .as_ref()
            .map(|l| l.owners.len()),
        Some(2)
    );
    let late = "{:index 4, :type :invoke, :process 2, :f :txn, :value [[:r 5 nil]]}\n\
                {:index 5, :type :ok, :process 2, :f :txn, :value [[:r 5 [2 1 ]]]}\n";
    w.ingest(late.as_bytes().to_vec()).unwrap();
    let r = w.round().unwrap();
    assert!(r.new.is_empty());
    assert!(!w.flagged());
    assert!(matches!(w.finish(None), Final::Recheck(_)));
    // Only one of the two: a stale read, rejected at once.
    let stale = "{:index 6, :type :invoke, :process 3, :f :txn, :value [[:r 5 nil]]}\n\
                 {:index 7, :type :ok, :process 3, :f :txn, :value [[:r 5 [2]]]}\n";
    w.ingest(stale.as_bytes().to_vec()).unwrap();
    assert_eq!(w.round().unwrap().new[0].0, COLLECTED_READ);
}

/// Two concurrent transactions append to keys 5 and 6, unread, and are
/// collected as loose blocks; reads that order them one way on 5 and the
/// other way on 6 are a G0 among collected transactions: rejected at once.
#[test]
fn opposite_orders_of_collected_blocks_are_rejected() {
    let mut w = Watcher::new(opts());
    let h =
        "{:index 0, :type :invoke, :process 0, :f :txn, :value [[:append 5 1] [:append 6 1]]}\n\
             {:index 1, :type :invoke, :process 1, :f :txn, :value [[:append 5 2] [:append 6 2]]}\n\
             {:index 2, :type :ok, :process 0, :f :txn, :value [[:append 5 1] [:append 6 1]]}\n\
             {:index 3, :type :ok, :process 1, :f :txn, :value [[:append 5 2] [:append 6 2]]}\n";
    w.ingest(h.as_bytes().to_vec()).unwrap();
    assert_eq!(w.round().unwrap().collected.ok, 2);
    let late = "{:index 4, :type :invoke, :process 2, :f :txn, :value [[:r 5 nil] [:r 6 nil]]}\n\
                {:index 5, :type :ok, :process 2, :f :txn, :value [[:r 5 [1 2]] [:r 6 [2 1]]]}\n";
    w.ingest(late.as_bytes().to_vec()).unwrap();
    let r = w.round().unwrap();
    assert_eq!(r.new.len(), 1, "{:?}", r.new);
    assert_eq!(r.new[0].0, COLLECTED_READ);
    assert!(w.flagged());
}

/// A crashed append nobody read is set aside while key 5's (unread) base
/// is collected; a later read that puts it before the collected append is
/// not rejected (the crashed append may have taken effect first) but
/// leaves the verdict to a check of the whole history.
#[test]
fn read_of_a_set_aside_info_append_defers_to_whole_check() {
    let mut w = Watcher::new(opts());
    let h = "{:index 0, :type :invoke, :process 2, :f :txn, :value [[:append 5 9]]}\n\
             {:index 1, :type :info, :process 2, :f :txn, :value [[:append 5 9]]}\n\
             {:index 2, :type :invoke, :process 0, :f :txn, :value [[:append 5 1]]}\n\
             {:index 3, :type :ok, :process 0, :f :txn, :value [[:append 5 1]]}\n";
    w.ingest(h.as_bytes().to_vec()).unwrap();
    let r = w.round().unwrap();
    assert!(r.new.is_empty(), "{:?}", r.new);
    assert!(r.collected.ok > 0, "{:?}", r.collected);
    assert!(!w.deferred);
    let more = "{:index 4, :type :invoke, :process 1, :f :txn, :value [[:r 5 nil]]}\n\
                {:index 5, :type :ok, :process 1, :f :txn, :value [[:r 5 [9 1]]]}\n";
    w.ingest(more.as_bytes().to_vec()).unwrap();
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
