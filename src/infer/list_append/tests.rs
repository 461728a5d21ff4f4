//! Unit tests of the list-append inference's indexes (issue 23's leaner
//! forms must give the answers of the plain ones).

use super::*;
use crate::model::Format;
use crate::read::read_history_bytes;

fn edn(text: &str) -> History {
    read_history_bytes(text.as_bytes().to_vec(), "inline", Format::Edn).expect("readable")
}

/// x: one possible append (1), a failed one (2), reads that disagree and
/// show 7 and 5, which nobody appended; y: one append (8), a read of 9;
/// z: appends 1 2, a failed 3, a read `[1 2 3 4]` (4 from thin air), and
/// 5, which no read shows.
const HISTORY: &str = r#"{:index 0, :type :invoke, :process 0, :f :txn, :value [[:append :x 1]]}
{:index 1, :type :ok, :process 0, :f :txn, :value [[:append :x 1]]}
{:index 2, :type :invoke, :process 1, :f :txn, :value [[:append :x 2]]}
{:index 3, :type :fail, :process 1, :f :txn, :value [[:append :x 2]]}
{:index 4, :type :invoke, :process 2, :f :txn, :value [[:r :x nil] [:r :y nil]]}
{:index 5, :type :ok, :process 2, :f :txn, :value [[:r :x [1 2 7]] [:r :y [9]]]}
{:index 6, :type :invoke, :process 3, :f :txn, :value [[:r :x nil] [:append :y 8]]}
{:index 7, :type :ok, :process 3, :f :txn, :value [[:r :x [1 5]] [:append :y 8]]}
{:index 8, :type :invoke, :process 4, :f :txn, :value [[:append :z 1] [:append :z 2]]}
{:index 9, :type :ok, :process 4, :f :txn, :value [[:append :z 1] [:append :z 2]]}
{:index 10, :type :invoke, :process 5, :f :txn, :value [[:append :z 3]]}
{:index 11, :type :fail, :process 5, :f :txn, :value [[:append :z 3]]}
{:index 12, :type :invoke, :process 6, :f :txn, :value [[:r :z nil]]}
{:index 13, :type :ok, :process 6, :f :txn, :value [[:r :z [1 2 3 4]]]}
{:index 14, :type :invoke, :process 7, :f :txn, :value [[:append :z 5]]}
{:index 15, :type :ok, :process 7, :f :txn, :value [[:append :z 5]]}
"#;

fn elements(cases: &[Value]) -> Vec<String> {
    cases
        .iter()
        .map(|c| match c {
            Value::Map(entries) => pr_str(&entries[3].1),
            other => panic!("a case is a map, not {}", pr_str(other)),
        })
        .collect()
}

#[test]
fn indexed_thin_air_reads_are_the_plain_ones() {
    let h = edn(HISTORY);
    let (idx, _, _) = indexes(&h, |_| {});
    let plain = thin_air_reads(&h);
    let indexed = thin_air_reads_indexed(&h, &idx);
    assert_eq!(elements(&plain), ["7", "9", "5", "4"]);
    assert_eq!(
        pr_str(&Value::Vector(indexed)),
        pr_str(&Value::Vector(plain))
    );
}

#[test]
fn writers_sit_in_the_version_orders_and_elsewhere() {
    let h = edn(HISTORY);
    let (idx, _, _) = indexes(&h, |_| {});
    let atom = |v: Value| h.interner.lookup(&v).expect("interned");
    let (x, z) = (atom(Value::kw("x")), atom(Value::kw("z")));
    let int = |i: i64| atom(Value::Int(i));
    // z's order is the longest read: 1 and 2 written by op 9, 3 (failed)
    // and 4 by no possible op.
    assert_eq!(idx.writer(z, int(1)), Some(9));
    assert_eq!(idx.writer(z, int(2)), Some(9));
    assert_eq!(idx.writer(z, int(3)), None);
    assert_eq!(idx.writer(z, int(4)), None);
    assert_eq!(idx.previous_with_writer(z, int(2)), (Some(int(1)), Some(9)));
    assert_eq!(idx.previous_with_writer(z, int(1)), (None, None));
    // 5 is outside the order: its writer is kept aside, and it comes
    // after the order's last element.
    assert_eq!(idx.writer(z, int(5)), Some(15));
    assert_eq!(idx.previous_with_writer(z, int(5)), (Some(int(4)), None));
    // x's single possible append fixes its order to [1].
    assert_eq!(idx.writer(x, int(1)), Some(1));
    assert_eq!(idx.previous(x, int(1)), None);
}

/// A history of one op per line from `(process, type, value)` rows.
fn ops(rows: &[(u32, &str, &str)]) -> History {
    let text: String = rows
        .iter()
        .enumerate()
        .map(|(i, (p, t, v))| {
            format!("{{:index {i}, :type :{t}, :process {p}, :f :txn, :value {v}}}\n")
        })
        .collect();
    edn(&text)
}

#[test]
fn appends_that_grow_per_key_are_decided_without_the_set_and_others_fall_back_to_it() {
    // Each key's elements grow in history order: no set needed.
    let growing = ops(&[
        (0, "invoke", "[[:append :x 1] [:append :y 1]]"),
        (0, "ok", "[[:append :x 1] [:append :y 1]]"),
        (1, "invoke", "[[:append :x 2] [:append :y 5]]"),
        (1, "ok", "[[:append :x 2] [:append :y 5]]"),
    ]);
    assert!(appends_grow_per_key(&growing));
    assert!(verify(&growing).is_ok());
    // Out of order but distinct: the fast check gives up, the set agrees.
    let shuffled = ops(&[
        (0, "invoke", "[[:append :x 2]]"),
        (1, "invoke", "[[:append :x 1]]"),
        (0, "ok", "[[:append :x 2]]"),
        (1, "ok", "[[:append :x 1]]"),
    ]);
    assert!(!appends_grow_per_key(&shuffled));
    assert!(verify(&shuffled).is_ok());
    // A repeat right after itself does not grow.
    let again = ops(&[
        (0, "invoke", "[[:append :x 1]]"),
        (1, "invoke", "[[:append :x 1]]"),
    ]);
    assert!(!appends_grow_per_key(&again));
    assert!(verify(&again).is_err());
    // A repeat after a smaller element: reported at the repeating op.
    let repeated = ops(&[
        (0, "invoke", "[[:append :x 3]]"),
        (1, "invoke", "[[:append :x 1]]"),
        (2, "invoke", "[[:append :y 1] [:append :x 3]]"),
    ]);
    assert!(!appends_grow_per_key(&repeated));
    let refused = verify(&repeated).expect_err("3 appended to :x twice");
    assert_eq!(
        pr_str(&refused.result),
        "{:valid? :unknown, :type :duplicate-appends, :op {:index 2, :time -1, :type :invoke, \
         :process 2, :f :txn, :value [[:append :y 1] [:append :x 3]]}, :key :x, :value 3, \
         :message \"value 3 appended to key :x multiple times!\"}"
    );
}

#[test]
fn marks_tell_repeats_as_sorting_does_on_random_lists() {
    let mut rng = crate::gen::Rng::new(23);
    let mut marks = cases::Marks::default();
    let mut decided = 0;
    for round in 0..20_000 {
        let len = rng.range(2, 40) as usize;
        // Narrow and wide spans, negative numbers, and now and then an
        // element that is not an inline integer.
        let (base, width) = match round % 4 {
            0 => (0, len as i64),
            1 => (-(rng.below(1000) as i64), 2 * len as i64),
            2 => (rng.below(1 << 40) as i64, 8 * len as i64 + 100),
            _ => (5, len as i64 / 2 + 1),
        };
        let mut xs: Vec<Atom> = (0..len)
            .map(|_| Atom::int(base + rng.below(width as u64) as i64).expect("inline"))
            .collect();
        if rng.chance(0.05) {
            xs.push(crate::model::Interner::default().atom(&Value::kw("k")));
        }
        let mut sorted = xs.clone();
        sorted.sort_unstable();
        let distinct = sorted.windows(2).all(|w| w[0] != w[1]);
        if let Some(answer) = marks.distinct(&xs) {
            assert_eq!(answer, distinct, "{xs:?}");
            decided += 1;
        }
    }
    // Most lists of small integers are decided by the marks.
    assert!(decided > 12_000, "{decided}");
}

#[test]
fn internal_reads_compare_with_this_transactions_own_state_only() {
    // The first txn reads x after appending 1; the second reads x without
    // writing it: no expectation carries over from the first.
    let h = ops(&[
        (0, "invoke", "[[:append :x 1] [:r :x nil]]"),
        (0, "ok", "[[:append :x 1] [:r :x [1]]]"),
        (0, "invoke", "[[:r :y nil] [:r :x nil]]"),
        (0, "ok", "[[:r :y []] [:r :x [2]]]"),
        (1, "invoke", "[[:append :x 3] [:r :x nil]]"),
        (1, "ok", "[[:append :x 3] [:r :x [2 4]]]"),
    ]);
    let (internal, future) = internal_cases(&h);
    assert!(future.is_empty());
    assert_eq!(
        internal.len(),
        1,
        "{}",
        pr_str(&Value::Vector(internal.clone()))
    );
    assert!(pr_str(&internal[0]).contains(":index 5"));
    assert!(pr_str(&internal[0]).contains(":expected [... 3]"));
}

#[test]
fn lost_updates_list_every_transaction_of_a_group_in_history_order() {
    // Three txns read x as [] then append to it; two read y as [1] then
    // append; one reads y as [] alone (a group of one: not reported).
    let h = ops(&[
        (0, "invoke", "[[:r :x nil] [:append :x 1]]"),
        (1, "invoke", "[[:r :x nil] [:append :x 2]]"),
        (2, "invoke", "[[:r :x nil] [:append :x 3]]"),
        (1, "ok", "[[:r :x []] [:append :x 2]]"),
        (0, "ok", "[[:r :x []] [:append :x 1]]"),
        (2, "ok", "[[:r :x []] [:append :x 3]]"),
        (0, "invoke", "[[:r :y nil] [:append :y 1]]"),
        (0, "ok", "[[:r :y []] [:append :y 1]]"),
        (1, "invoke", "[[:r :y nil] [:append :y 2]]"),
        (2, "invoke", "[[:r :y nil] [:append :y 3]]"),
        (1, "ok", "[[:r :y [1]] [:append :y 2]]"),
        (2, "ok", "[[:r :y [1]] [:append :y 3]]"),
    ]);
    let cases =
        crate::infer::txn::lost_updates(&h, MopFn::Append, crate::infer::txn::ReadsCounted::First);
    let summary: Vec<String> = cases
        .iter()
        .map(|c| {
            let Value::Map(entries) = c else {
                panic!("a case is a map")
            };
            let Value::Vector(txns) = &entries[2].1 else {
                panic!(":txns is a vector")
            };
            let indices: Vec<String> = txns
                .iter()
                .map(|t| pr_str(t.get_kw("index").expect("index")))
                .collect();
            format!(
                "{} {} {}",
                pr_str(&entries[0].1),
                pr_str(&entries[1].1),
                indices.join(",")
            )
        })
        .collect();
    assert_eq!(summary.len(), 2, "{summary:?}");
    assert!(summary.contains(&":x [] 3,4,5".to_string()), "{summary:?}");
    assert!(summary.contains(&":y [1] 10,11".to_string()), "{summary:?}");
}

/// `validate` cut in two halves reports what one pass does: the first
/// error in op order, keys compared with the history's first key.
#[test]
fn validation_in_halves_reports_the_first_error() {
    let ok = |p: usize, txn: &str| format!("{{:type :ok, :process {p}, :value [{txn}]}}\n");
    let cases = [
        // Mixed key types, the second type only in the second half.
        [
            ok(0, "[:append :x 1]"),
            ok(1, "[:append :y 2]"),
            ok(2, "[:append \"x\" 2]"),
            ok(3, "[:append 5 2]"),
        ],
        // No micro-op before the second half, which then holds both types.
        [
            ok(0, ""),
            ok(1, ""),
            ok(2, "[:append :x 1]"),
            ok(3, "[:append 5 2]"),
        ],
        // An error in each half: the first half's is reported.
        [
            ok(0, "[:append :x 1]"),
            ok(1, "[:r :x 3]"),
            ok(2, "[:append \"x\" 1]"),
            ok(3, "[:r :y 4]"),
        ],
        // A read of a single value only in the second half.
        [
            ok(0, "[:append 1 1]"),
            ok(1, "[:r 1 [1]]"),
            ok(2, "[:r 2 nil]"),
            ok(3, "[:r 1 7]"),
        ],
        // Valid: integer keys throughout.
        [
            ok(0, "[:append 1 1]"),
            ok(1, "[:r 1 [1]]"),
            ok(2, "[:append 2 1]"),
            ok(3, "[:r 2 [1]]"),
        ],
    ];
    let mut errors = Vec::new();
    for ops in cases {
        let h = edn(&ops.concat());
        let whole = validate_splitting_from(&h, usize::MAX)
            .err()
            .map(|e| e.to_string());
        let halves = validate_splitting_from(&h, 0).err().map(|e| e.to_string());
        assert_eq!(halves, whole, "{ops:?}");
        errors.push(whole.is_some());
    }
    assert_eq!(errors, [true, true, true, true, false]);
}

/// A txn of more than 16 micro-ops (its reads indexed by key) gives the
/// internal and future reads the same txn without its padding reads does
/// (searched in place): the same micro-ops, expected lists and elements.
/// Its first append's element is read only after it: no future read.
#[test]
fn big_txns_give_the_internal_and_future_reads_of_small_ones() {
    let cases = |pad: usize| {
        let padding: String = (100..100 + pad).map(|k| format!(" [:r {k} nil]")).collect();
        let value = format!(
            "[[:append 8 6] [:r 8 [6]] [:append 5 9] [:r 5 [9]]{padding} [:r 7 [3]] [:append 7 3] [:r 5 [8]] [:append 7 4]]"
        );
        let h = edn(&format!(
            "{{:index 0, :type :invoke, :process 0, :f :txn, :value {value}}}\n\
             {{:index 1, :type :ok, :process 0, :f :txn, :value {value}}}\n"
        ));
        let (internal, future) = internal_cases(&h);
        // Each case from its micro-op on (the op itself differs).
        let without_op = |cases: Vec<Value>| -> Vec<String> {
            cases
                .iter()
                .map(|c| {
                    let text = pr_str(c);
                    let at = text.find(":mop").expect("a :mop");
                    text[at..].to_string()
                })
                .collect()
        };
        (without_op(internal), without_op(future), internal_cases(&h))
    };
    let (small_internal, small_future, (si, sf)) = cases(0);
    let (big_internal, big_future, _) = cases(30);
    assert_eq!(si.len(), 1, "{si:?}");
    assert_eq!(sf.len(), 1, "{sf:?}");
    let text = format!("{} {}", pr_str(&si[0]), pr_str(&sf[0]));
    assert!(
        text.contains("[:r 5 [8]]") && text.contains("[:r 7 [3]]"),
        "{text}"
    );
    assert_eq!((big_internal, big_future), (small_internal, small_future));
}

/// A big op that reads one state many times (between reads of another
/// key) is that state's reader once: every append after the state walks
/// its readers for rw edges, so repeats made a txn of thousands of such
/// reads quadratic.
#[test]
fn a_state_read_many_times_by_one_op_has_it_as_one_reader() {
    let reads: String = (0..40).map(|_| " [:r 1 [1]] [:r 2 [1]]").collect();
    let h = edn(&format!(
        "{{:index 0, :type :invoke, :process 0, :f :txn, :value [[:append 1 1] [:append 2 1]]}}\n\
         {{:index 1, :type :ok, :process 0, :f :txn, :value [[:append 1 1] [:append 2 1]]}}\n\
         {{:index 2, :type :invoke, :process 1, :f :txn, :value [{reads}]}}\n\
         {{:index 3, :type :ok, :process 1, :f :txn, :value [{reads}]}}\n\
         {{:index 4, :type :invoke, :process 2, :f :txn, :value [[:r 1 [1]] [:r 1 [1]]]}}\n\
         {{:index 5, :type :ok, :process 2, :f :txn, :value [[:r 1 [1]] [:r 1 [1]]]}}\n"
    ));
    let (_, states, _) = versions::indexes(&h, |_| {});
    let mut readers = states.readers.clone();
    readers.sort_unstable();
    assert_eq!(readers, [3, 3, 5]);
}
