//! Unit tests of the Clojure semantics the Jepsen models rely on. The hash
//! values were printed by Clojure 1.11.1 (`(hash …)`), the orders by its
//! printer.

use super::*;
use crate::edn::order::clojure_hasheq;

fn kw(s: &str) -> Value {
    Value::kw(s)
}

#[test]
fn hashes_are_clojures() {
    // Keywords whose name hashes negative (Util.hashCombine shifts the
    // signed seed).
    assert_eq!(clojure_hasheq(&kw("index")), -1531685915);
    assert_eq!(clojure_hasheq(&kw("x")), 2099068185);
    assert_eq!(clojure_hasheq(&kw("r")), -471384190);
    assert_eq!(
        clojure_hasheq(&Value::Vector(vec![kw("r"), kw("x")])),
        -1093380327
    );
    assert_eq!(
        clojure_hasheq(&Value::kw_map(vec![("a", Value::Int(1))])),
        1772842048
    );
    assert_eq!(
        clojure_hasheq(&Value::Symbol("jepsen.history.Op".into())),
        679896785
    );
}

fn history(text: &str) -> JHistory {
    read_ops(text.as_bytes(), "t.edn", false).expect("reads")
}

#[test]
fn ops_are_normalised_as_jepsen_history_does() {
    let h = history("[{:type :invoke, :f :read, :value nil}\n {:f :read, :type :ok, :value {0 100, 1 0, 2 0, 3 0, 4 0, 5 0, 6 0, 7 0, 8 0, 9 0}}]");
    assert_eq!(h.ops.len(), 2);
    assert_eq!(h.pair, vec![Some(1), Some(0)]);
    // Dense indices, time -1, process nil; a map of 10 entries in hash order.
    assert_eq!(
        crate::edn::pr_str(&h.ops[1].map),
        "{:index 1, :time -1, :type :ok, :process nil, :f :read, :value {0 100, 7 0, 1 0, 4 0, 6 0, 3 0, 2 0, 9 0, 5 0, 8 0}}"
    );
    // The first op has an :index: every op needs one.
    let e = read_ops(b"{:index 0, :type :ok}\n{:type :ok}\n", "t.edn", false).unwrap_err();
    assert_eq!((e.line, e.column), (2, 1));
    assert!(e.message.contains("without"), "{e}");
    let e = read_ops(b"{:index 0, :type :done}\n", "t.edn", false).unwrap_err();
    assert!(e.message.contains(":type"), "{e}");
}

#[test]
fn json_ops_take_elle_clis_dialect() {
    let h = read_ops(
        br#"[{"type":"ok","f":"read","value":{"0":1,"1":2},"process":0,"index":4}]"#,
        "t.json",
        true,
    )
    .expect("reads");
    assert_eq!(
        crate::edn::pr_str(&h.ops[0].map),
        "{:index 4, :time -1, :type :ok, :process 0, :f :read, :value {:0 1, :1 2}}"
    );
}

#[test]
fn clojure_compare_and_interval_strings() {
    let mut xs = vec![
        Value::Vector(vec![Value::Int(0), Value::Int(10)]),
        Value::Vector(vec![Value::Int(1)]),
        Value::Vector(vec![Value::Int(0), Value::Int(2)]),
    ];
    clj_sort(&mut xs).expect("comparable");
    // Shorter vectors first, then element by element.
    assert_eq!(crate::edn::pr_str(&Value::Vector(xs)), "[[1] [0 2] [0 10]]");
    assert!(clj_sort(&mut [Value::Int(1), kw("a")]).is_err());
    let ints = |v: &[i64]| v.iter().map(|&i| Value::Int(i)).collect::<Vec<_>>();
    assert_eq!(
        set::interval_set_str(ints(&[5, 1, 2, 3, 7, 8])).unwrap(),
        "#{1..3 5 7..8}"
    );
    assert_eq!(set::interval_set_str(Vec::new()).unwrap(), "#{}");
    assert_eq!(
        set::interval_set_str(vec![Value::Str("a".into())]).unwrap(),
        "#{a}"
    );
    assert!(set::interval_set_str(vec![kw("a"), kw("b")]).is_err());
}

#[test]
fn counter_refuses_what_jepsen_asserts() {
    let h = history("{:index 0, :type :invoke, :process 0, :f :add, :value -1}\n");
    let e = check(JepsenModel::Counter, &h, &JepsenOptions::default()).unwrap_err();
    assert_eq!((e.line, e.column), (1, 1));
    assert!(e.message.contains("non-negative"), "{e}");
    let h = history("{:index 0, :type :info, :process :nemesis, :f :start, :value :partition}\n");
    let e = check(JepsenModel::Counter, &h, &JepsenOptions::default()).unwrap_err();
    assert!(e.message.contains(":partition"), "{e}");
}

#[test]
fn set_full_unknown_without_stable_elements() {
    let h = history(
        "{:index 0, :time 0, :type :invoke, :process 0, :f :add, :value 1}\n\
         {:index 1, :time 1, :type :info, :process 0, :f :add, :value 1}\n",
    );
    let r = check(JepsenModel::SetFull, &h, &JepsenOptions::default()).unwrap();
    assert_eq!(r.get_kw("valid?"), Some(&kw("unknown")));
    assert_eq!(
        r.get_kw("never-read"),
        Some(&Value::List(vec![Value::Int(1)]))
    );
}

/// Values Clojure cannot compare (mixed classes, NaN) make `clj_sort` say
/// so; the inconsistent comparisons must not panic the sort.
#[test]
fn clj_sort_of_incomparable_values_is_an_error_not_a_panic() {
    let mut xs: Vec<Value> = (0..200)
        .map(|i| match i % 3 {
            0 => Value::Int(200 - i),
            1 => Value::kw(&format!("k{i}")),
            _ => Value::Float("##NaN".into()),
        })
        .collect();
    assert!(super::clj_sort(&mut xs).is_err());
}

/// Keywords compare as Clojure's do: by namespace (none first), then name.
#[test]
fn clj_compare_orders_keywords_by_namespace_then_name() {
    let mut xs = vec![
        Value::kw("b/a"),
        Value::kw("z"),
        Value::kw("a/z"),
        Value::kw("a"),
    ];
    super::clj_sort(&mut xs).unwrap();
    let names: Vec<String> = xs.iter().map(crate::edn::pr_str).collect();
    assert_eq!(names, [":a", ":z", ":a/z", ":b/a"]);
}

/// An op with thousands of extra keys still has its own `:value` (field
/// positions past 255 once wrapped and read another key's value).
#[test]
fn value_of_an_op_with_many_keys() {
    let extra: String = (0..2000).map(|i| format!(" :k{i} {i}")).collect();
    let src = format!("{{:index 0, :type :invoke, :process 0, :f :add, :value 7{extra}}}\n");
    let h = read_ops(src.as_bytes(), "h.edn", false).unwrap();
    assert_eq!(h.ops[0].value(), &Value::Int(7));
    assert_eq!(h.ops[0].process(), &Value::Int(0));
}
