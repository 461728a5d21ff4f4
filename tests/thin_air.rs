//! Thin-air reads in list-append histories (issue 22 §4): a read showing an
//! element nobody appended. Elle does not look for them (`--algorithm
//! infer` stays Elle's answer); the mini-transaction path and
//! `list_append::analyze_exact` report each such element as G1a with
//! `:writer nil`.

use ellery::check::result::Expectations;
use ellery::edn::{pr_str, Value};
use ellery::infer::list_append::{analyze, analyze_exact, thin_air_reads};
use ellery::infer::rw_register::RwOptions;
use ellery::infer::txn::ExtraGraph;
use ellery::model::{Format, History};
use ellery::read::{read_history_bytes, read_history_file};
use ellery::{Algorithm, CheckOptions, Workload};
use std::path::Path;

fn edn(text: &str) -> History {
    read_history_bytes(text.as_bytes().to_vec(), "inline", Format::Edn).expect("readable")
}

fn printed(h: &History, algorithm: Algorithm) -> String {
    let opts = CheckOptions {
        expectations: Expectations {
            models: Some(ellery::consistency::parse_models(&["serializable"]).expect("model")),
            anomalies: Vec::new(),
        },
        algorithm,
        ..CheckOptions::default()
    };
    let o = ellery::check(
        h,
        &CheckOptions {
            workload: Some(Workload::ListAppend),
            rw: RwOptions::default(),
            ..opts.clone()
        },
    )
    .expect("checkable");
    pr_str(&o.result)
}

fn cases(v: Vec<Value>) -> String {
    pr_str(&Value::Vector(v))
}

/// T1 read the initial state and appended 1; T2 read `[7 1]`, and nobody
/// appended 7.
fn thin_air_read() -> History {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("test-histories/list-append/thin-air-read.edn");
    read_history_file(&path).expect("readable")
}

const CASE: &str = "{:op {:index 3, :time 4000000, :type :ok, :process 1, :f :txn, :value [[:r :x [7 1]]]}, :mop [:r :x [7 1]], :writer nil, :element 7}";

#[test]
fn thin_air_reads_are_found() {
    let h = thin_air_read();
    assert_eq!(cases(thin_air_reads(&h)), format!("[{CASE}]"));
    // Elle's inference does not report them; analyze_exact adds them to G1a.
    let elle = analyze(&h, ExtraGraph::None).expect("analyzable");
    assert!(!elle.anomalies.contains("G1a"));
    let exact = analyze_exact(&h, ExtraGraph::None).expect("analyzable");
    assert_eq!(
        cases(exact.anomalies.get("G1a").expect("G1a").clone()),
        format!("[{CASE}]")
    );
    assert_eq!(exact.edges, elle.edges);
}

/// `--algorithm infer` answers as Elle (valid); the mini-transaction path
/// reports the thin-air element as G1a (and no longer leaves the fast path
/// because the read's order does not match the appends).
#[test]
fn thin_air_read_under_infer_and_mini() {
    let h = thin_air_read();
    assert_eq!(printed(&h, Algorithm::Infer), "{:valid? true}");
    let want = format!("{{:valid? false, :anomaly-types (:G1a), :anomalies {{:G1a [{CASE}]}}, :not #{{:read-committed}}, :also-not #{{:causal-cerone :consistent-view :cursor-stability :forward-consistent-view :monotonic-atomic-view :monotonic-snapshot-read :monotonic-view :parallel-snapshot-isolation :prefix :read-atomic :repeatable-read :serializable :snapshot-isolation :strong-read-committed :strong-serializable :strong-session-read-committed :strong-session-serializable :strong-session-snapshot-isolation :strong-snapshot-isolation :update-atomic :update-serializable}}}}");
    assert_eq!(printed(&h, Algorithm::Mini), want);
    // auto (list-append's inference plus the thin-air check) agrees.
    assert_eq!(printed(&h, Algorithm::Auto), want);
    // A lone read of a thin-air element: G1a, and an empty graph.
    let h = edn("\
{:index 0, :time 0, :type :invoke, :process 1, :f :txn, :value [[:r :x nil]]}
{:index 1, :time 1, :type :ok, :process 1, :f :txn, :value [[:r :x [7]]]}
");
    let want = "{:valid? false, :anomaly-types (:G1a :empty-transaction-graph), :anomalies {:G1a [{:op {:index 1, :time 1, :type :ok, :process 1, :f :txn, :value [[:r :x [7]]]}, :mop [:r :x [7]], :writer nil, :element 7}], :empty-transaction-graph true}, :not #{:read-committed}, :also-not #{:causal-cerone :consistent-view :cursor-stability :forward-consistent-view :monotonic-atomic-view :monotonic-snapshot-read :monotonic-view :parallel-snapshot-isolation :prefix :read-atomic :repeatable-read :serializable :snapshot-isolation :strong-read-committed :strong-serializable :strong-session-read-committed :strong-session-serializable :strong-session-snapshot-isolation :strong-snapshot-isolation :update-atomic :update-serializable}}";
    assert_eq!(printed(&h, Algorithm::Mini), want);
    assert_eq!(printed(&h, Algorithm::Auto), want);
    assert_eq!(
        printed(&h, Algorithm::Infer),
        "{:valid? :unknown, :anomaly-types (:empty-transaction-graph), :anomalies {:empty-transaction-graph true}, :not #{}, :also-not #{}}"
    );
}

/// Elements some op appended are not thin air, whatever its outcome: a
/// `:fail`ed append is Elle's G1a (with its writer), an `:info` or
/// never-completed one may have happened. Only `:ok` reads count, and an
/// element appended to another key is thin air on this one.
#[test]
fn appended_elements_are_not_thin_air() {
    let h = edn("\
{:index 0, :time 0, :type :invoke, :process 0, :f :txn, :value [[:append :x 1]]}
{:index 1, :time 1, :type :fail, :process 0, :f :txn, :value [[:append :x 1]]}
{:index 2, :time 2, :type :invoke, :process 1, :f :txn, :value [[:append :x 2]]}
{:index 3, :time 3, :type :info, :process 1, :f :txn, :value [[:append :x 2]]}
{:index 4, :time 4, :type :invoke, :process 2, :f :txn, :value [[:append :x 3] [:append :y 4]]}
{:index 5, :time 5, :type :invoke, :process 3, :f :txn, :value [[:r :x nil] [:r :y nil]]}
{:index 6, :time 6, :type :ok, :process 3, :f :txn, :value [[:r :x [1 2 3]] [:r :y [4 1]]]}
{:index 7, :time 7, :type :invoke, :process 4, :f :txn, :value [[:r :x nil]]}
{:index 8, :time 8, :type :info, :process 4, :f :txn, :value [[:r :x [9]]]}
");
    assert_eq!(
        cases(thin_air_reads(&h)),
        "[{:op {:index 6, :time 6, :type :ok, :process 3, :f :txn, :value [[:r :x [1 2 3]] [:r :y [4 1]]]}, :mop [:r :y [4 1]], :writer nil, :element 1}]"
    );
}
