//! `auto` on list-append MT histories (issue 23): where the MT path answers
//! (see [`crate::infer::mini::elle_subgraph`]), the result is the inference's, byte for
//! byte, on generated histories of every mode, fault and outcome mix.

use crate::check::result::Expectations;
use crate::edn::pr_str;
use crate::gen::{generate, Fault, GenOptions, Mode, Workload as GenWorkload};
use crate::model::{Format, History};
use crate::{Algorithm, CheckOptions, Outcome, Workload};
use std::sync::atomic::{AtomicUsize, Ordering};

static ROUTED: AtomicUsize = AtomicUsize::new(0);
static FELL_BACK: AtomicUsize = AtomicUsize::new(0);

fn count(line: &str) {
    if line.contains("algorithm mini (auto: a list-append MT history") {
        ROUTED.fetch_add(1, Ordering::Relaxed);
    }
    if line.contains("the MT path found something") {
        FELL_BACK.fetch_add(1, Ordering::Relaxed);
    }
}

fn history(text: &str) -> History {
    crate::read::read_history_bytes(text.as_bytes().to_vec(), "h.edn", Format::Edn)
        .expect("readable")
}

fn generated(mode: Mode, txns: usize, seed: u64, faults: Vec<Fault>, info: f64) -> History {
    let o = GenOptions {
        workload: GenWorkload::ListAppend,
        mode,
        txns,
        processes: 4,
        keys: 3,
        max_writes_per_key: 12,
        fail_fraction: 0.05,
        info_fraction: info,
        faults,
        seed,
        mini: true,
        ..GenOptions::default()
    };
    let mut bytes = Vec::new();
    generate(&o, &mut bytes).expect("generated");
    crate::read::read_history_bytes(bytes, "gen", Format::Edn).expect("readable")
}

fn opts(model: &str) -> CheckOptions {
    CheckOptions {
        workload: Some(Workload::ListAppend),
        expectations: Expectations {
            models: Some(crate::consistency::parse_models(&[model]).expect("model")),
            anomalies: Vec::new(),
        },
        algorithm: Algorithm::Auto,
        plot_max_bytes: Some(1 << 20),
        trace: Some(count),
        ..CheckOptions::default()
    }
}

/// Everything of an outcome a user sees: result map, cycles, plots, keys.
fn seen(o: &Outcome) -> String {
    let cycles: Vec<(String, Vec<u32>)> = o
        .cycles
        .iter()
        .map(|c| (c.kind.clone(), c.ops.clone()))
        .collect();
    format!(
        "{}\n{cycles:?}\n{:?}\n{:?}",
        pr_str(&o.result),
        o.plots,
        o.incompatible_keys
    )
}

/// `auto` (which may route to the MT path) against `auto`'s inference path
/// alone (what `auto` ran before issue 23).
fn same_as_inference(h: &History, model: &str) -> String {
    let o = opts(model);
    let new = crate::route::check(h, &o).expect("checkable");
    let old = crate::route::check_list_append_exact(h, &o).expect("checkable");
    assert_eq!(seen(&new), seen(&old), "{model}: {}", h.origin);
    pr_str(&new.result)
}

#[test]
fn auto_on_list_append_mt_histories_answers_as_the_inference() {
    let faults = Fault::ALL;
    let models = [
        "strict-serializable",
        "serializable",
        "strong-session-serializable",
        "repeatable-read",
        "snapshot-isolation",
        "read-committed",
    ];
    let (routed0, fell0) = (
        ROUTED.load(Ordering::Relaxed),
        FELL_BACK.load(Ordering::Relaxed),
    );
    let mut valid = 0;
    for mode in [
        Mode::StrictSerializable,
        Mode::Serializable,
        Mode::SnapshotIsolation,
        Mode::ReadCommitted,
    ] {
        for seed in 0..24u64 {
            let fs = match seed % 3 {
                0 => Vec::new(),
                _ => vec![faults[seed as usize % faults.len()]],
            };
            let info = if seed % 2 == 0 { 0.0 } else { 0.1 };
            let h = generated(mode, 120, seed, fs, info);
            for model in models {
                let r = same_as_inference(&h, model);
                valid += usize::from(r == "{:valid? true}");
            }
        }
    }
    let routed = ROUTED.load(Ordering::Relaxed) - routed0;
    let fell = FELL_BACK.load(Ordering::Relaxed) - fell0;
    // Not vacuous: the MT path answered many checks (those it tried and
    // did not pass on), and passed others on.
    let answered = routed - fell;
    assert!(
        answered >= 60 && fell >= 60 && valid >= answered,
        "{routed} {fell} {valid}"
    );
}

/// Hand-written edge cases: the MT path must not answer where Elle's graph
/// is empty (no read shows an element: Elle's `:unknown`), where an `:info`
/// op carries a read, or where a list repeats an element.
#[test]
fn auto_declines_where_elles_graph_differs() {
    let empty = "{:index 0, :type :invoke, :process 0, :f :txn, :value [[:r :x nil] [:append :x 1]]}\n\
                 {:index 1, :type :ok, :process 0, :f :txn, :value [[:r :x []] [:append :x 1]]}\n\
                 {:index 2, :type :invoke, :process 1, :f :txn, :value [[:r :y nil] [:append :y 1]]}\n\
                 {:index 3, :type :ok, :process 1, :f :txn, :value [[:r :y []] [:append :y 1]]}\n";
    let unrevealed =
        "{:index 0, :type :invoke, :process 0, :f :txn, :value [[:r :x nil] [:append :x 1]]}\n\
                 {:index 1, :type :ok, :process 0, :f :txn, :value [[:r :x []] [:append :x 1]]}\n\
                 {:index 2, :type :invoke, :process 1, :f :txn, :value [[:r :x nil]]}\n\
                 {:index 3, :type :ok, :process 1, :f :txn, :value [[:r :x []]]}\n";
    // Serializable: no process or real-time edges; Elle's graph is empty.
    let declines = |h: &History, model| super::list_append_by_mini(h, &opts(model)).is_none();
    assert!(declines(&history(empty), "serializable"));
    assert_eq!(
        same_as_inference(&history(empty), "serializable"),
        "{:valid? :unknown, :anomaly-types (:empty-transaction-graph), :anomalies {:empty-transaction-graph true}, :not #{}, :also-not #{}}"
    );
    // Elle's rw edge from the read of `[]` to the first append: valid.
    assert_eq!(
        same_as_inference(&history(unrevealed), "serializable"),
        "{:valid? true}"
    );
    let info_read = "{:index 0, :type :invoke, :process 0, :f :txn, :value [[:r :x nil] [:append :x 1]]}\n\
                     {:index 1, :type :ok, :process 0, :f :txn, :value [[:r :x []] [:append :x 1]]}\n\
                     {:index 2, :type :invoke, :process 1, :f :txn, :value [[:r :x nil] [:append :x 2]]}\n\
                     {:index 3, :type :info, :process 1, :f :txn, :value [[:r :x [1]] [:append :x 2]]}\n\
                     {:index 4, :type :invoke, :process 2, :f :txn, :value [[:r :x nil]]}\n\
                     {:index 5, :type :ok, :process 2, :f :txn, :value [[:r :x [1 2]]]}\n";
    let h = history(info_read);
    assert!(!crate::infer::mini::elle_subgraph::info_reads_nothing(&h));
    assert!(declines(&h, "strict-serializable"));
    assert_eq!(
        same_as_inference(&h, "strict-serializable"),
        "{:valid? true}"
    );
    let repeated = "{:index 0, :type :invoke, :process 0, :f :txn, :value [[:r :x nil] [:append :x 1]]}\n\
                    {:index 1, :type :ok, :process 0, :f :txn, :value [[:r :x []] [:append :x 1]]}\n\
                    {:index 2, :type :invoke, :process 1, :f :txn, :value [[:r :x nil]]}\n\
                    {:index 3, :type :ok, :process 1, :f :txn, :value [[:r :x [1 1]]]}\n";
    assert!(declines(&history(repeated), "strict-serializable"));
    let r = same_as_inference(&history(repeated), "strict-serializable");
    assert!(r.starts_with("{:valid? false"), "{r}");
}

/// The MT path checks every transaction's shape itself: a history whose
/// first thousand ops are mini-transactions and whose last is none (a
/// blind append) goes to the inference, as one that is MT throughout is
/// answered by the MT path (issue 23: `auto` no longer scans every shape
/// before the analysis, only the first ops).
#[test]
fn a_late_transaction_of_another_shape_sends_the_history_to_the_inference() {
    let o = GenOptions {
        workload: GenWorkload::ListAppend,
        mode: Mode::StrictSerializable,
        txns: 800,
        processes: 4,
        keys: 3,
        seed: 7,
        mini: true,
        ..GenOptions::default()
    };
    let mut bytes = Vec::new();
    generate(&o, &mut bytes).expect("generated");
    let mt = crate::read::read_history_bytes(bytes.clone(), "gen", Format::Edn).expect("readable");
    let next = mt.ops.last().expect("ops").index + 1;
    assert!(mt.ops.len() > super::EARLY_PROBE_OPS);
    let opts = opts("strict-serializable");
    assert!(super::list_append_by_mini(&mt, &opts).is_some());
    let blind = format!(
        "{{:index {next}, :type :invoke, :process 99, :f :txn, :value [[:append 0 9999]]}}\n\
         {{:index {}, :type :ok, :process 99, :f :txn, :value [[:append 0 9999]]}}\n",
        next + 1
    );
    bytes.extend_from_slice(blind.as_bytes());
    let late = crate::read::read_history_bytes(bytes, "gen", Format::Edn).expect("readable");
    assert!(super::list_append_by_mini(&late, &opts).is_none());
    same_as_inference(&late, "strict-serializable");
}
