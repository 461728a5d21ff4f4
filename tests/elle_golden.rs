//! Byte-level compatibility with Elle: ellery's result maps for the
//! histories in `../shared/corpus/elle-golden` must equal the ones Elle
//! printed, character for character.

mod common;

use common::corpus_dir;
use ellery::check::result::Expectations;
use ellery::edn::pr_str;
use ellery::pipeline::{check_list_append, CheckOptions};
use ellery::read::read_history_file;
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
    pr_str(&check_list_append(&h, &opts).result)
}

fn expected(name: &str, suffix: &str) -> String {
    let dir = corpus_dir("elle-golden").expect("corpus present");
    let stem = name.trim_end_matches(".edn");
    fs::read_to_string(dir.join("results").join(format!("{stem}.{suffix}.edn")))
        .expect("golden result")
        .trim_end()
        .to_string()
}

#[test]
fn list_append_results_match_elle_byte_for_byte() {
    let names = golden_names("list-append");
    if corpus_dir("elle-golden").is_some() {
        assert_eq!(names.len(), 22, "expected 22 list-append golden histories");
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
