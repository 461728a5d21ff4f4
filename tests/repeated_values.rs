//! Repeated written values decided exactly (`test-histories/repeated-values/`):
//! a read has a *set* of candidate writers, and an anomaly is reported only
//! when every choice has it. Each `NAME.edn` has a `NAME.expected` file with
//! one line per model, `MODEL RESULT-MAP`, which both `--algorithm auto` (the
//! default, which sends these histories to the exact checker) and
//! `--algorithm sat` must print character for character. The expected maps
//! were derived by hand (see `test-histories/README.md`), not copied from a
//! run.

mod common;

use ellery::check::result::Expectations;
use ellery::edn::pr_str;
use ellery::infer::rw_register::RwOptions;
use ellery::model::History;
use ellery::read::read_history_file;
use ellery::{Algorithm, CheckOptions, Workload};
use std::path::{Path, PathBuf};

/// How many histories the directory holds (a lost file is noticed).
const EXPECTED_CASES: usize = 9;

/// `h` checked as an rw-register history under `model` with `algorithm`:
/// the printed result map, or the error.
fn checked(h: &History, model: &'static str, algorithm: Algorithm) -> Result<String, String> {
    let opts = CheckOptions {
        expectations: Expectations {
            models: Some(vec![model]),
            anomalies: vec![],
        },
        algorithm,
        ..CheckOptions::default()
    };
    ellery::check(
        h,
        &CheckOptions {
            workload: Some(Workload::RwRegister),
            rw: RwOptions::default(),
            ..opts.clone()
        },
    )
    .map(|out| pr_str(&out.result))
    .map_err(|e| e.to_string())
}

fn case_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("test-histories/repeated-values")
}

#[test]
fn every_model_gives_the_expected_map_on_both_exact_paths() {
    let names = common::case_names(&case_dir());
    assert_eq!(names.len(), EXPECTED_CASES, "{names:?}");
    let mut checked = 0;
    for name in names {
        let h = read_history_file(&case_dir().join(format!("{name}.edn"))).expect("readable");
        let expected = std::fs::read_to_string(case_dir().join(format!("{name}.expected")))
            .expect("expected file");
        for line in expected.lines() {
            let (model, map) = line.split_once(' ').expect("MODEL MAP");
            let model = ellery::consistency::parse_models(&[model]).expect("model")[0];
            for algorithm in [Algorithm::Auto, Algorithm::Sat] {
                let opts = CheckOptions {
                    expectations: Expectations {
                        models: Some(vec![model]),
                        anomalies: vec![],
                    },
                    algorithm,
                    ..CheckOptions::default()
                };
                let out = ellery::check(
                    &h,
                    &CheckOptions {
                        workload: Some(Workload::RwRegister),
                        rw: RwOptions::default(),
                        ..opts.clone()
                    },
                )
                .unwrap_or_else(|e| panic!("{name} {model}: {e}"));
                assert_eq!(
                    pr_str(&out.result),
                    map,
                    "{name} under {model}, {algorithm:?}"
                );
                checked += 1;
            }
        }
    }
    assert_eq!(checked, EXPECTED_CASES * 7 * 2);
}

/// The six-line history: process 0's final write of 3 explains the
/// read, although process 2 also wrote 3 (as an intermediate value). Elle's
/// inference reports G1b; ellery's default must not, under any model.
#[test]
fn a_value_also_written_as_an_intermediate_one_is_no_g1b() {
    let h = read_history_file(&case_dir().join("intermediate-and-final-same-value.edn"))
        .expect("readable");
    let infer = CheckOptions {
        algorithm: Algorithm::Infer,
        ..CheckOptions::default()
    };
    let elle = ellery::check(
        &h,
        &CheckOptions {
            workload: Some(Workload::RwRegister),
            rw: RwOptions::default(),
            ..infer.clone()
        },
    )
    .expect("checkable");
    assert!(pr_str(&elle.result).starts_with("{:valid? false, :anomaly-types (:G1b)"));
    for model in ellery::consistency::all_models().iter().copied() {
        let out = checked(&h, model, Algorithm::Auto).unwrap_or_else(|e| panic!("{model}: {e}"));
        assert_eq!(out, "{:valid? true}", "{model}");
    }
}

/// `ellery gen --values N` repeats written values; a strict-serializable
/// database's histories stay valid under every model on the default path
/// (any false alarm here would be a checker bug), and the generator
/// refuses repeated values where its faults rely on unique ones.
#[test]
fn generated_histories_with_repeated_values_are_valid() {
    use ellery::gen::{generate, Fault, GenOptions, Mode, Workload as GenWorkload};
    for seed in 0..12 {
        let g = GenOptions {
            workload: GenWorkload::RwRegister,
            mode: Mode::StrictSerializable,
            txns: 120,
            processes: 4,
            keys: 3,
            values: 3,
            fail_fraction: 0.1,
            info_fraction: 0.1,
            seed,
            ..GenOptions::default()
        };
        let mut text = Vec::new();
        generate(&g, &mut text).expect("generated");
        let h = ellery::read::read_history_bytes(text, "gen.edn", ellery::model::Format::Edn)
            .expect("readable");
        assert!(ellery::check::sat::values_repeat(&h), "seed {seed}");
        for model in [
            "strict-serializable",
            "serializable",
            "snapshot-isolation",
            "consistent-view",
            "read-committed",
        ] {
            let out = checked(&h, model, Algorithm::Auto).expect("checkable");
            assert_eq!(out, "{:valid? true}", "seed {seed} {model}");
        }
    }
    let faulty = GenOptions {
        workload: GenWorkload::RwRegister,
        values: 3,
        processes: 2,
        faults: vec![Fault::ALL[0]],
        ..GenOptions::default()
    };
    assert!(generate(&faulty, &mut Vec::new()).is_err());
}

/// A list of models whose classes differ per order (plain serializable,
/// and read committed with real-time order) is decided one class at a
/// time, then jointly at the strongest with every order: here each holds
/// alone (T1 and T2 may read different versions of 1 without real time;
/// read committed forbids no rw cycle) but the joint check (strict
/// serializability) does not, so ellery does not claim either verdict.
#[test]
fn an_undecided_model_combination_is_unknown() {
    let h = read_history_file(&case_dir().join("lost-update-avoidable.edn")).expect("readable");
    let expectations = Expectations {
        models: Some(vec!["serializable", "strong-read-committed"]),
        anomalies: vec![],
    };
    for algorithm in [Algorithm::Auto, Algorithm::Sat] {
        let opts = CheckOptions {
            expectations: expectations.clone(),
            algorithm,
            ..CheckOptions::default()
        };
        let out = ellery::check(
            &h,
            &CheckOptions {
                workload: Some(Workload::RwRegister),
                rw: RwOptions::default(),
                ..opts.clone()
            },
        )
        .expect("checkable");
        assert_eq!(
            pr_str(&out.result),
            "{:valid? :unknown, :cause :undecided-model-combination}",
            "{algorithm:?}"
        );
    }
    for model in ["serializable", "strong-read-committed"] {
        assert_eq!(
            checked(&h, model, Algorithm::Sat).expect("checkable"),
            "{:valid? true}"
        );
    }
}
