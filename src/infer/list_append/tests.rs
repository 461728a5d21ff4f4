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
