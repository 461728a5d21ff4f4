use super::*;
use crate::check::result::Expectations;
use crate::model::Format;
use crate::read::read_history_bytes;
use crate::{Algorithm, CheckOptions, Workload};

/// Builds a history of sequential transactions from `(process, type,
/// txn)` triples: each is invoked (reads as nil) and completed before the
/// next begins.
fn sequential(txns: &[(i64, &str, &str)]) -> History {
    let mut text = String::new();
    for (p, t, txn) in txns {
        let mut inv = String::new();
        for mop in txn.split("] [") {
            let mop = mop.trim_matches(|c| c == '[' || c == ']');
            let parts: Vec<&str> = mop.split(' ').collect();
            if parts[0] == ":r" {
                inv.push_str(&format!("[:r {} nil]", parts[1]));
            } else {
                inv.push_str(&format!("[{mop}]"));
            }
        }
        text.push_str(&format!(
            "{{:type :invoke, :process {p}, :f :txn, :value [{inv}]}}\n{{:type :{t}, :process {p}, :f :txn, :value [{txn}]}}\n"
        ));
    }
    read_history_bytes(text.into_bytes(), "t.edn", Format::Edn).expect("readable")
}

fn check(h: &History, models: Option<Vec<&'static str>>, rw: RwOptions) -> Value {
    let opts = CheckOptions {
        expectations: Expectations {
            models,
            anomalies: vec![],
        },
        ..CheckOptions::default()
    };
    crate::check(
        h,
        &CheckOptions {
            algorithm: Algorithm::Infer,
            workload: Some(Workload::RwRegister),
            rw,
            ..opts.clone()
        },
    )
    .expect("analyzable")
    .result
}

/// Every accepted version-graph edge, as (key, from, to) values, and the
/// cyclic-versions cases.
fn val_edges(h: &History, opts: &RwOptions) -> (Vec<(Atom, Val, Val)>, Vec<Value>) {
    let (ext, ids) = Ext::new(h);
    let (g, cyclic) = version_graphs(h, &ext, &ids, opts);
    let mut out = Vec::new();
    for &k in &g.keys {
        for &(a, b) in &g.edges[k as usize] {
            out.push((ids.key(k), ids.val(k, a), ids.val(k, b)));
        }
    }
    (out, cyclic)
}

fn anomalies(result: &Value) -> String {
    pr_str(result.get_kw("anomalies").unwrap_or(&Value::Nil))
}

#[test]
fn initial_state_orders_nil_before_every_value() {
    let h = sequential(&[(0, "ok", "[:w :x 1]"), (1, "ok", "[:r :x 1]")]);
    let (g, cyclic) = val_edges(&h, &RwOptions::default());
    assert!(cyclic.is_empty());
    let x = h.interner.lookup(&Value::kw("x")).expect("key");
    assert_eq!(g, vec![(x, None, Atom::int(1))]);
}

#[test]
fn wfr_links_a_read_to_the_same_txns_write() {
    let h = sequential(&[(0, "ok", "[:w :x 1]"), (1, "ok", "[:r :x 1] [:w :x 2]")]);
    let opts = RwOptions {
        wfr_keys: true,
        ..RwOptions::default()
    };
    let (g, _) = val_edges(&h, &opts);
    let x = h.interner.lookup(&Value::kw("x")).expect("key");
    assert!(g.contains(&(x, Atom::int(1), Atom::int(2))));
    // Without the option, 1 and 2 are unordered.
    let (g, _) = val_edges(&h, &RwOptions::default());
    assert!(!g.contains(&(x, Atom::int(1), Atom::int(2))));
}

#[test]
fn sequential_keys_find_g0_through_process_order() {
    // Elle's rw-register checker test "G0": only process order reveals
    // that x went 1, 2 and y went 1, 2.
    let h = sequential(&[
        (0, "ok", "[:w :x 1] [:w :y 2]"),
        (1, "ok", "[:w :x 2] [:w :y 1]"),
        (0, "ok", "[:r :x 2]"),
        (1, "ok", "[:r :y 2]"),
    ]);
    let plain = check(&h, Some(vec!["serializable"]), RwOptions::default());
    assert_eq!(pr_str(&plain), "{:valid? true}");
    let seq = RwOptions {
        sequential_keys: true,
        ..RwOptions::default()
    };
    let r = check(&h, Some(vec!["serializable"]), seq);
    assert_eq!(pr_str(r.get_kw("anomaly-types").expect("types")), "(:G0)");
    let a = anomalies(&r);
    assert!(
        a.contains("{:key :x, :value 1, :value' 2, :type :ww, :a-mop-index 0, :b-mop-index 0}"),
        "{a}"
    );
    assert!(
        a.contains("{:key :y, :value 1, :value' 2, :type :ww, :a-mop-index 1, :b-mop-index 1}"),
        "{a}"
    );
}

#[test]
fn linearizable_keys_report_cyclic_versions_and_drop_the_source() {
    // Elle's "Read read returns what was just been written": x is set to
    // 1, then read as 2, then as 1 again.
    let h = sequential(&[
        (0, "ok", "[:w :x 1]"),
        (0, "ok", "[:r :x 2]"),
        (0, "ok", "[:r :x 1]"),
    ]);
    let lin = RwOptions {
        linearizable_keys: true,
        ..RwOptions::default()
    };
    let r = check(&h, None, lin);
    assert_eq!(
        anomalies(&r),
        "{:cyclic-versions [{:key :x, :scc #{1 2}, :sources [:initial-state :linearizable-keys]}]}"
    );
    assert_eq!(
        pr_str(r.get_kw("not").expect("not")),
        "#{:read-uncommitted}"
    );
}

#[test]
fn cyclic_versions_sort_by_size_when_nil_is_involved() {
    // Elle's scc-sort-bug test: real time says x went 1 then nil (a
    // stale read), and 3 then 4, while writes-follow-reads says 4 then 3.
    let h = sequential(&[
        (0, "ok", "[:r :x 1]"),
        (0, "ok", "[:r :x nil]"),
        (0, "ok", "[:r :x 4] [:w :x 3]"),
        (0, "ok", "[:w :x 4]"),
    ]);
    let opts = RwOptions {
        wfr_keys: true,
        linearizable_keys: true,
        ..RwOptions::default()
    };
    let r = check(&h, Some(vec!["strong-serializable"]), opts);
    assert_eq!(
        pr_str(r.get_kw("anomaly-types").expect("types")),
        "(:G1c-realtime :cyclic-versions)"
    );
    let a = anomalies(&r);
    assert!(
        a.contains(":cyclic-versions [{:key :x, :scc #{nil 1}, :sources [:initial-state :wfr-keys :linearizable-keys]} {:key :x, :scc #{4 3}, :sources [:initial-state :wfr-keys :linearizable-keys]}]"),
        "{a}"
    );
}

#[test]
fn a_txn_whose_only_edge_is_to_itself_is_still_a_vertex() {
    // rw from the txn's own read of nil to its own write: Elle removes
    // the self-edge but keeps the vertex, so the graph is not empty.
    let h = sequential(&[(0, "ok", "[:r :x nil] [:w :x 1]")]);
    assert_eq!(
        pr_str(&check(&h, None, RwOptions::default())),
        "{:valid? true}"
    );
    let h = sequential(&[(0, "ok", "[:w :x 1]")]);
    let r = check(&h, Some(vec!["serializable"]), RwOptions::default());
    assert_eq!(
        pr_str(r.get_kw("anomaly-types").expect("types")),
        "(:empty-transaction-graph)"
    );
}

#[test]
fn lost_update_and_internal_cases() {
    let h = sequential(&[
        (0, "ok", "[:r :x 0] [:w :x 1]"),
        (1, "ok", "[:r :x 0] [:w :x 2]"),
        (2, "ok", "[:w :y 5] [:r :y 6]"),
    ]);
    let r = check(&h, None, RwOptions::default());
    let a = anomalies(&r);
    assert!(
        a.contains(":lost-update [{:key :x, :value 0, :txns ["),
        "{a}"
    );
    assert!(a.contains(":internal ({:op {"), "{a}");
    assert!(a.contains(":mop [:r :y 6], :expected 5}"), "{a}");
}

/// A key read and written thousands of times: its groups are found by the
/// value read (a scan of the key's values per transaction made this
/// quadratic: 50,000 such transactions took 1.4 s), and exactly the values
/// read by two writers are lost updates, each with its transactions in
/// history order.
#[test]
fn lost_updates_on_a_long_read_modify_write_chain() {
    let mut txns: Vec<(i64, &str, String)> = (0..3000)
        .map(|i| (0, "ok", format!("[:r :x {i}] [:w :x {}]", i + 1)))
        .collect();
    txns.insert(500, (1, "ok", "[:r :x 100] [:w :x 10000]".into()));
    txns.push((1, "ok", "[:r :x 2000] [:w :x 10001]".into()));
    txns.push((1, "ok", "[:r :x 2000] [:r :y 7] [:w :x 10002]".into()));
    let refs: Vec<(i64, &str, &str)> = txns.iter().map(|(p, t, v)| (*p, *t, v.as_str())).collect();
    let h = sequential(&refs);
    let cases =
        crate::infer::txn::lost_updates(&h, MopFn::Write, crate::infer::txn::ReadsCounted::First);
    let mut found: Vec<(String, usize)> = cases
        .iter()
        .map(|c| {
            let txns = match c.get_kw("txns") {
                Some(Value::Vector(t)) => t.len(),
                other => panic!("{other:?}"),
            };
            (pr_str(c.get_kw("value").expect("value")), txns)
        })
        .collect();
    found.sort();
    assert_eq!(found, [("100".to_string(), 2), ("2000".to_string(), 3)]);
}

/// Elle counts a transaction's first read of a key even after its own
/// write of it; counting external reads only leaves that transaction out
/// of its group, and a group left with one transaction is no lost update.
#[test]
fn external_reads_leave_out_a_read_of_the_own_write() {
    use crate::infer::txn::{lost_updates, ReadsCounted};
    let h = sequential(&[
        (
            0,
            "ok",
            "[:w :x 1] [:r :x 1] [:w :x 2] [:w :y 1] [:r :y 1] [:w :y 2]",
        ),
        (1, "ok", "[:r :x 1] [:w :x 3]"),
        (1, "ok", "[:r :x 1] [:r :x 1] [:w :x 4]"),
        (2, "ok", "[:r :y 1] [:w :y 3]"),
    ]);
    // Per case: key, value and the indices of its transactions.
    let groups = |counted| {
        lost_updates(&h, MopFn::Write, counted)
            .iter()
            .map(|c| {
                let Some(Value::Vector(txns)) = c.get_kw("txns") else {
                    panic!("{c:?}")
                };
                let at = |t: &Value| pr_str(t.get_kw("index").expect("index"));
                (
                    pr_str(c.get_kw("key").expect("key")),
                    pr_str(c.get_kw("value").expect("value")),
                    txns.iter().map(at).collect::<Vec<_>>(),
                )
            })
            .collect::<Vec<_>>()
    };
    let (x, y, one) = (":x".to_string(), ":y".to_string(), "1".to_string());
    let mut elle = groups(ReadsCounted::First);
    elle.sort();
    assert_eq!(
        elle,
        [
            (
                x.clone(),
                one.clone(),
                vec!["1".into(), "3".into(), "5".into()]
            ),
            (y, one.clone(), vec!["1".into(), "7".into()]),
        ]
    );
    assert_eq!(
        groups(ReadsCounted::External),
        [(x, one, vec!["3".to_string(), "5".to_string()])]
    );
}

#[test]
fn elle_errors_become_input_errors() {
    // Checks `src` as an rw-register history; the input error it must give.
    let input_error = |src: &str, what: &str| {
        let h =
            read_history_bytes(src.as_bytes().to_vec(), "h.edn", Format::Edn).expect("readable");
        crate::check(
            &h,
            &CheckOptions {
                algorithm: Algorithm::Infer,
                workload: Some(Workload::RwRegister),
                rw: RwOptions::default(),
                ..CheckOptions::default()
            },
        )
        .expect_err(what)
        .into_input()
        .expect("an input error")
    };
    // A value written twice and read.
    let e = input_error(
        "{:type :ok, :process 0, :value [[:w :x 1]]}\n{:type :ok, :process 1, :value [[:w :x 1]]}\n{:type :ok, :process 2, :value [[:r :x 1]]}\n",
        "duplicate write",
    );
    assert_eq!((e.line, e.column), (2, 1), "{e}");
    assert!(e.message.contains("more than one op"), "{e}");
    // Keys of two types (Elle's assert-type-sanity).
    let e = input_error(
        "{:type :ok, :process 0, :value [[:w :x 1]]}\n  {:type :ok, :process 1, :value [[:w \"x\" 2]]}\n",
        "mixed keys",
    );
    assert_eq!((e.line, e.column), (2, 3), "{e}");
    // Micro-ops other than :r and :w.
    let e = input_error(
        "{:type :ok, :process 0, :value [[:append :x 1]]}\n",
        "append",
    );
    assert!(e.message.contains(":append"), "{e}");
}

#[test]
fn linearizable_keys_never_fire_on_strict_serializable_histories() {
    use crate::gen::{generate, GenOptions, Workload};
    for seed in 0..15 {
        let opts = GenOptions {
            workload: Workload::RwRegister,
            txns: 200,
            processes: 5,
            fail_fraction: 0.1,
            info_fraction: 0.1,
            seed,
            ..GenOptions::default()
        };
        let mut bytes = Vec::new();
        generate(&opts, &mut bytes).expect("generated");
        let h = read_history_bytes(bytes, "gen", Format::Edn).expect("readable");
        let all = RwOptions {
            linearizable_keys: true,
            sequential_keys: true,
            wfr_keys: true,
        };
        assert_eq!(
            pr_str(&check(&h, None, all)),
            "{:valid? true}",
            "seed {seed}"
        );
    }
}

/// A transaction longer than the scan threshold finds its keys through the
/// slot map: the same first contradicting read as a short one.
#[test]
fn internal_cases_of_long_transactions() {
    let mut mops: Vec<String> = (0..20).map(|k| format!("[:w {k} {k}]")).collect();
    mops.push("[:r 3 3]".into());
    mops.push("[:r 7 8]".into());
    mops.push("[:r 9 1]".into());
    let h = sequential(&[(0, "ok", &mops.join(" "))]);
    let cases = internal_cases(&h);
    assert_eq!(cases.len(), 1);
    assert_eq!(
        crate::edn::pr_str(&cases[0]).split(", :mop ").nth(1),
        Some("[:r 7 8], :expected 7}")
    );
}

/// `AtomIds` numbers atoms by first appearance whichever table finds them:
/// small integers, integers too far ahead for the vector (then reached by
/// it as it grows), negative ones and interned atoms.
#[test]
fn atom_ids_number_by_first_appearance() {
    let mut interner = crate::model::Interner::default();
    let s = interner.atom(&Value::Str("a".into()));
    let int = |n: i64| Atom::int(n).expect("small");
    let order = [
        int(1),
        int(1000),
        int(2),
        s,
        int(-5),
        int(1000),
        int(3),
        int(1),
        s,
        int(-5),
        int(2),
    ];
    let mut ids = AtomIds::default();
    let mut next = 0u32;
    let mut got = Vec::new();
    // Grow the vector past 1000 before it is seen again.
    let fill: Vec<Atom> = (4..1100).map(int).collect();
    for (i, &a) in order.iter().enumerate() {
        if i == 5 {
            for &f in &fill {
                ids.id(f, || {
                    next += 1;
                    next - 1
                });
            }
        }
        got.push(ids.id(a, || {
            next += 1;
            next - 1
        }));
    }
    // 1, 1000, 2, "a", -5 get 0..5; the fill's 4..1100 get 5..1100 but
    // for 1000 (already 1); then 3 is new: 1100.
    assert_eq!(got, vec![0, 1, 2, 3, 4, 1, 1100, 0, 3, 4, 2]);
    assert!(ids.dense.len() > 1000, "the vector grew past 1000");
    let found: Vec<Option<u32>> = [int(1), int(1000), s, int(-5), int(3), int(5000), int(-6)]
        .iter()
        .map(|&a| ids.get(a))
        .collect();
    assert_eq!(
        found,
        vec![Some(0), Some(1), Some(3), Some(4), Some(1100), None, None]
    );
}

/// `AtomIds`' vector stays within a constant factor of the ids it holds,
/// whatever the integers: doubling values (1, 2, 4, … 2^40, 41 atoms) used
/// to grow it to the largest one (2^40 entries, 4 TB: the allocation
/// aborts the process), as each stayed within twice the vector's length.
#[test]
fn atom_ids_vector_is_bounded_by_the_ids_held() {
    let mut ids = AtomIds::default();
    let mut next = 0u32;
    for k in 0..=40 {
        let a = Atom::int(1i64 << k).expect("small");
        let id = ids.id(a, || {
            next += 1;
            next - 1
        });
        assert_eq!(id, k as u32);
        assert!(
            ids.dense.len() <= 8 * next as usize + 64,
            "{} entries for {next} ids",
            ids.dense.len()
        );
    }
    for k in 0..=40 {
        assert_eq!(ids.get(Atom::int(1i64 << k).expect("small")), Some(k));
    }
}

/// A big history's explainer computes its tables again when first asked
/// (issue 23: memory); it explains every edge as one that kept them. The
/// order graph's edges come with the graph (`Inference::order`): the same
/// graph as the listed edges, which list the data edges then the order's.
#[test]
fn recomputed_tables_explain_as_kept_ones_and_order_edges_join_the_graph() {
    let h = sequential(&[
        (0, "ok", "[:w :x 1] [:r :y nil]"),
        (1, "ok", "[:r :x 1] [:w :y 2]"),
        (0, "ok", "[:r :y 2] [:w :x 3]"),
        (1, "ok", "[:r :x nil] [:w :y 4]"),
    ]);
    let opts = RwOptions::default();
    let inf = analyze(&h, ExtraGraph::Realtime, &opts).expect("analyzable");
    assert_eq!(inf.order, ExtraGraph::Realtime);
    let (ext, ids) = Ext::new(&h);
    let (graphs, _) = version_graphs(&h, &ext, &ids, &opts);
    let kept = RegisterExplainer::new(&opts, Some(Tables { ext, ids, graphs }));
    let recomputed = RegisterExplainer::new(&opts, None);
    let g = inf.graph(&h).merged();
    let mut explained = 0;
    for (a, b, _) in g.edges() {
        let step = kept.explain(&h, a, b).map(|s| s.data);
        assert_eq!(recomputed.explain(&h, a, b).map(|s| s.data), step);
        explained += usize::from(step.is_some());
    }
    assert!(explained >= 4, "{explained}");
    let data = inf.edges.clone();
    let all = inf.all_edges(&h);
    assert_eq!(all[..data.len()], data[..]);
    let order = crate::infer::order_graphs::realtime_edges(&h);
    assert!(!order.is_empty());
    assert_eq!(all[data.len()..], order[..]);
    let listed = crate::graph::DiGraph::from_edge_slice(h.ops.len(), &all);
    assert_eq!(
        listed.edges().collect::<Vec<_>>(),
        g.edges().collect::<Vec<_>>()
    );
}

/// `validate` cut in two halves reports what one pass does: the first
/// error in op order, keys compared with the history's first key.
#[test]
fn validation_in_halves_reports_the_first_error() {
    let cases = [
        // Mixed key types, the second type only in the second half.
        "{:type :ok, :process 0, :value [[:w :x 1]]}\n{:type :ok, :process 1, :value [[:w :y 2]]}\n{:type :ok, :process 2, :value [[:w \"x\" 2]]}\n{:type :ok, :process 3, :value [[:w 5 2]]}\n",
        // No micro-op before the second half, which then holds both types.
        "{:type :ok, :process 0, :value []}\n{:type :ok, :process 1, :value []}\n{:type :ok, :process 2, :value [[:w :x 1]]}\n{:type :ok, :process 3, :value [[:w 5 2]]}\n",
        // An error in each half: the first half's is reported.
        "{:type :ok, :process 0, :value [[:append :x 1]]}\n{:type :ok, :process 1, :value []}\n{:type :ok, :process 2, :value [[:w \"x\" 1]]}\n{:type :ok, :process 3, :value 5}\n",
        // The first half's key is an inline integer, the second half's a
        // big one (another class), then a keyword.
        "{:type :ok, :process 0, :value [[:w 1 1]]}\n{:type :ok, :process 1, :value [[:w 2 1]]}\n{:type :ok, :process 2, :value [[:w 3 1]]}\n{:type :ok, :process 3, :value [[:w :k 1]]}\n",
        "{:type :ok, :process 0, :value [[:w 1 1]]}\n{:type :ok, :process 1, :value [[:w 2 1]]}\n{:type :ok, :process 2, :value [[:r 3 1]]}\n{:type :ok, :process 3, :value [[:w 4 1]]}\n",
    ];
    let mut errors = 0;
    for text in cases {
        let h =
            read_history_bytes(text.as_bytes().to_vec(), "t.edn", Format::Edn).expect("readable");
        let whole = validate_splitting_from(&h, usize::MAX)
            .err()
            .map(|e| e.to_string());
        let halves = validate_splitting_from(&h, 0).err().map(|e| e.to_string());
        assert_eq!(halves, whole, "{text}");
        errors += usize::from(whole.is_some());
    }
    assert_eq!(errors, 4);
}

/// The wr edges cut in two halves are one pass's: the same edges in op
/// order, and the first error in op order when values repeat in both.
#[test]
fn wr_edges_in_halves_are_one_passes() {
    let ok = |p: usize, txn: &str| format!("{{:type :ok, :process {p}, :value [{txn}]}}\n");
    let cases = [
        // Edges in both halves, a self-read in the second.
        [
            ok(0, "[:w :x 1]"),
            ok(1, "[:r :x 1] [:w :y 1]"),
            ok(2, "[:r :y 1] [:w :x 2]"),
            ok(3, "[:r :z 1] [:w :z 1] [:r :x 2]"),
        ],
        // A repeated value read in each half: the first half's read is
        // the error.
        [
            ok(0, "[:w :x 1]"),
            ok(1, "[:r :x 1]"),
            ok(2, "[:w :x 1] [:w :y 2]"),
            ok(3, "[:r :y 2] [:w :y 2]"),
        ],
        // Only in the second half.
        [
            ok(0, "[:w :x 1]"),
            ok(1, "[:r :x 1]"),
            ok(2, "[:w :y 2]"),
            ok(3, "[:r :y 2] [:w :y 2]"),
        ],
    ];
    let mut errors = Vec::new();
    for ops in cases {
        let text = ops.concat();
        let h = read_history_bytes(text.into_bytes(), "t.edn", Format::Edn).expect("readable");
        let (ext, ids) = Ext::new(&h);
        let writers = SlotIndex::new(&ids, &ext, Ext::writes, None);
        let show = |r: Result<edges::Edges, Refusal>| match r {
            Ok((e, v)) => format!("{e:?} {v:?}"),
            Err(Refusal::Input(e)) => e.to_string(),
            Err(_) => "refused".into(),
        };
        let whole = show(wr_edges(&h, &ext, &ids, &writers, usize::MAX));
        let halves = show(wr_edges(&h, &ext, &ids, &writers, 0));
        assert_eq!(halves, whole, "{ops:?}");
        errors.push(whole);
    }
    assert!(errors[0].starts_with("[(0, 1, "), "{}", errors[0]);
    assert!(errors[0].ends_with(" [3]"), "{}", errors[0]);
    assert!(errors[1].contains("read at index 1"), "{}", errors[1]);
    assert!(errors[2].contains("read at index 3"), "{}", errors[2]);
}
