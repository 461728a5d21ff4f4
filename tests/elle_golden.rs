//! Byte-level compatibility with Elle: ellery's result maps for the
//! histories in `../shared/corpus/elle-golden` must equal the ones Elle
//! printed, character for character.

mod common;

use common::corpus_dir;
use ellery::check::result::Expectations;
use ellery::edn::pr_str;
use ellery::infer::rw_register::RwOptions;
use ellery::model::History;
use ellery::read::read_history_file;
use ellery::{Algorithm, CheckOptions, Outcome, Workload};
use std::fs;

fn golden_names(workload: &str) -> Vec<String> {
    let Some(dir) = corpus_dir("elle-golden/histories") else {
        return Vec::new();
    };
    let mut names: Vec<String> = fs::read_dir(dir)
        .expect("readable corpus")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(workload) && n.ends_with(".edn"))
        .collect();
    names.sort();
    names
}

/// Checks a history with the workload its golden name says.
fn check(name: &str, h: &History, opts: &CheckOptions) -> Outcome {
    if name.contains("rw-register") {
        ellery::check(
            h,
            &CheckOptions {
                algorithm: Algorithm::Infer,
                workload: Some(Workload::RwRegister),
                rw: RwOptions::default(),
                ..opts.clone()
            },
        )
        .expect("analyzable")
    } else {
        ellery::check(
            h,
            &CheckOptions {
                algorithm: Algorithm::Infer,
                workload: Some(Workload::ListAppend),
                ..opts.clone()
            },
        )
        .expect("analyzable")
    }
}

fn run(name: &str, models: Option<Vec<&'static str>>) -> String {
    let dir = corpus_dir("elle-golden").expect("corpus present");
    let h = read_history_file(&dir.join("histories").join(name)).expect("readable history");
    let opts = CheckOptions {
        expectations: Expectations {
            models,
            anomalies: vec![],
        },
        ..CheckOptions::default()
    };
    pr_str(&check(name, &h, &opts).result)
}

fn expected(name: &str, suffix: &str) -> String {
    let dir = corpus_dir("elle-golden").expect("corpus present");
    let stem = name.trim_end_matches(".edn");
    fs::read_to_string(dir.join("results").join(format!("{stem}.{suffix}.edn")))
        .expect("golden result")
        .trim_end()
        .to_string()
}

/// Every result map of a workload's golden histories, both model sets.
fn results_match(workload: &str, count: usize) {
    let names = golden_names(workload);
    if corpus_dir("elle-golden").is_some() {
        assert_eq!(
            names.len(),
            count,
            "expected {count} {workload} golden histories"
        );
    }
    let mut failures = Vec::new();
    for name in &names {
        for (suffix, models) in [
            ("strict", None),
            ("serializable", Some(vec!["serializable"])),
        ] {
            let got = run(name, models);
            let want = expected(name, suffix);
            if got != want {
                failures.push(format!("{name} ({suffix}):\n  want {want}\n  got  {got}"));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} results differ:\n{}",
        failures.len(),
        names.len() * 2,
        failures.join("\n")
    );
}

/// Every golden explanation file (`<type>.txt`) of a workload's histories.
fn explanation_files_match(workload: &str, count: usize) {
    let Some(dir) = corpus_dir("elle-golden") else {
        return;
    };
    let mut compared = 0;
    let mut failures = Vec::new();
    for name in golden_names(workload) {
        let stem = name.trim_end_matches(".edn");
        let golden = dir.join("results").join(format!("{stem}-files"));
        if !golden.is_dir() {
            continue;
        }
        let h = read_history_file(&dir.join("histories").join(&name)).expect("history");
        let outcome = check(&name, &h, &CheckOptions::default());
        let out = std::env::temp_dir().join(format!("ellery-golden-{}-{stem}", std::process::id()));
        let _ = fs::remove_dir_all(&out);
        ellery::report::files::write_files(&out, &h, &outcome, &Default::default())
            .expect("writable temp dir");
        for entry in fs::read_dir(&golden).expect("golden dir") {
            let path = entry.expect("entry").path();
            if path.extension().is_some_and(|e| e == "txt") {
                compared += 1;
                let want = fs::read(&path).expect("golden file");
                let got = fs::read(out.join(path.file_name().expect("name"))).unwrap_or_default();
                if want != got {
                    failures.push(format!(
                        "{stem}/{}:\n--- want\n{}\n--- got\n{}",
                        path.file_name().expect("name").to_string_lossy(),
                        String::from_utf8_lossy(&want),
                        String::from_utf8_lossy(&got)
                    ));
                }
            }
        }
        let _ = fs::remove_dir_all(&out);
    }
    assert_eq!(compared, count, "expected {count} golden explanation files");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn list_append_results_match_elle_byte_for_byte() {
    results_match("list-append", 22);
}

#[test]
fn list_append_explanation_files_match_elle_byte_for_byte() {
    explanation_files_match("list-append", 14);
}

#[test]
fn rw_register_results_match_elle_byte_for_byte() {
    results_match("rw-register", 20);
}

#[test]
fn rw_register_explanation_files_match_elle_byte_for_byte() {
    explanation_files_match("rw-register", 7);
}
