//! Hand-written list-append histories (`test-histories/list-append/`), one or
//! more per anomaly type, each with the result map Elle 0.2.7 would print for
//! it. Every case is checked as a whole map, character for character.
//!
//! Layout of a case `NAME`:
//! - `NAME.edn`: the history (Jepsen EDN);
//! - `NAME.expected.edn`: one line, Elle's result map;
//! - `NAME.opts` (optional): CLI-style flags, `-c MODEL,...` and/or
//!   `-a ANOMALY,...`; without it, Elle's default (strict-serializable).

mod common;

use ellery::check::result::Expectations;
use ellery::consistency::parse_models;
use ellery::edn::{pr_str, Value};
use ellery::model::Format;
use ellery::read::{read_history_bytes, read_history_file};
use ellery::{Algorithm, CheckOptions, Workload};
use std::fs;
use std::path::{Path, PathBuf};

/// How many cases `test-histories/list-append/` holds; update it when adding
/// or removing a case, so that a lost file is noticed.
const EXPECTED_CASES: usize = 29;

/// Cases whose expected file is what Elle prints but where ellery is known to
/// print something else. The test checks that these still differ, so it fails
/// (and this list must be emptied) once ellery is fixed.
const KNOWN_DIFFERENCES: &[&str] = &[];

fn case_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("test-histories/list-append")
}

/// The expectations of a `.opts` file (list-append takes no key flags).
fn expectations(opts: &str) -> Expectations {
    let (exp, rw) = common::options(opts);
    assert_eq!(
        rw,
        Default::default(),
        "rw-register flags in a list-append .opts"
    );
    exp
}

fn check_file(path: &Path, exp: Expectations) -> String {
    let history =
        read_history_file(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let opts = CheckOptions {
        expectations: exp,
        ..CheckOptions::default()
    };
    pr_str(
        &ellery::check(
            &history,
            &CheckOptions {
                algorithm: Algorithm::Infer,
                workload: Some(Workload::ListAppend),
                ..opts.clone()
            },
        )
        .expect("analyzable")
        .result,
    )
}

#[test]
fn hand_written_histories_match_elle_result_maps() {
    let compared = common::compare_with_expected(
        &case_dir(),
        EXPECTED_CASES,
        KNOWN_DIFFERENCES,
        |name, opts| check_file(&case_dir().join(format!("{name}.edn")), expectations(opts)),
    );
    assert_eq!(compared, EXPECTED_CASES, "every case has an expected map");
}

#[test]
fn every_case_has_an_expected_result() {
    let dir = case_dir();
    for entry in fs::read_dir(&dir).expect("readable") {
        let file = entry
            .expect("entry")
            .file_name()
            .to_string_lossy()
            .into_owned();
        let stem = if let Some(s) = file.strip_suffix(".expected.edn") {
            s
        } else if let Some(s) = file.strip_suffix(".opts") {
            s
        } else if let Some(s) = file.strip_suffix(".edn") {
            assert!(
                dir.join(format!("{s}.expected.edn")).is_file(),
                "{file} has no {s}.expected.edn"
            );
            continue;
        } else {
            panic!("unexpected file {file} in {}", dir.display());
        };
        assert!(
            dir.join(format!("{stem}.edn")).is_file(),
            "{file} has no history {stem}.edn"
        );
    }
}

/// Elle's README demo (three bare `:ok` ops, no `:f`, `:index` or `:time`),
/// checked with `{:consistency-models [:serializable]}`.
#[test]
fn readme_demo_facts() {
    let demo = b"[{:process 0, :type :ok, :value [[:append :x 1] [:r :y [1]]]}\n \
                 {:process 1, :type :ok, :value [[:append :x 2] [:append :y 1]]}\n \
                 {:process 2, :type :ok, :value [[:r :x [1 2]]]}]\n";
    let history =
        read_history_bytes(demo.to_vec(), "readme-demo", Format::Edn).expect("demo parses");
    let opts = CheckOptions {
        expectations: Expectations {
            models: Some(parse_models(&["serializable"]).expect("model")),
            anomalies: vec![],
        },
        ..CheckOptions::default()
    };
    let result = ellery::check(
        &history,
        &CheckOptions {
            algorithm: Algorithm::Infer,
            workload: Some(Workload::ListAppend),
            ..opts.clone()
        },
    )
    .expect("analyzable")
    .result;
    let field = |k: &str| {
        pr_str(
            result
                .get_kw(k)
                .unwrap_or_else(|| panic!("no :{k} in {}", pr_str(&result))),
        )
    };
    assert_eq!(field("valid?"), "false");
    assert_eq!(field("anomaly-types"), "(:G1c)");
    assert_eq!(field("not"), "#{:read-committed}");
    let also_not = common::G1_ALSO_NOT;
    assert_eq!(also_not.len(), 21);
    let want = format!("#{{{}}}", also_not.map(|m| format!(":{m}")).join(" "));
    assert_eq!(field("also-not"), want);
    match result.get_kw("also-not") {
        Some(Value::Set(items)) => assert_eq!(items.len(), 21),
        other => panic!("also-not is not a set: {other:?}"),
    }
    // The one G1c cycle: T1 -wr(y)-> T0 -ww(x)-> T1, ops printed in Op key
    // order with Elle's defaults (:time -1, :f nil).
    let anomalies = field("anomalies");
    assert!(
        anomalies.contains(
            ":steps ({:type :wr, :key :y, :value 1, :a-mop-index 1, :b-mop-index 1} \
             {:type :ww, :key :x, :value 1, :value' 2, :a-mop-index 0, :b-mop-index 0})"
        ),
        "{anomalies}"
    );
    assert!(
        anomalies.starts_with(
            "{:G1c [{:cycle [{:index 1, :time -1, :type :ok, :process 1, :f nil, \
             :value [[:append :x 2] [:append :y 1]]} {:index 0, :time -1, :type :ok, \
             :process 0, :f nil, :value [[:append :x 1] [:r :y [1]]]} {:index 1,"
        ),
        "{anomalies}"
    );
}
