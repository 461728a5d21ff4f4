//! The rw-register workload on real histories: GRAIL's ArangoDB rw-register
//! histories (`../shared/corpus/grail/rw-register`) all check without error,
//! with Elle's default options and with every version-order source enabled.

mod common;

use common::corpus_dir;
use ellery::infer::rw_register::RwOptions;
use ellery::pipeline::{check_rw_register, CheckOptions};
use ellery::read::read_history_file;

#[test]
fn grail_rw_register_histories_check_without_error() {
    let Some(dir) = corpus_dir("grail/rw-register") else {
        return;
    };
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("readable corpus")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "edn"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no histories in {}", dir.display());
    let all = RwOptions {
        linearizable_keys: true,
        sequential_keys: true,
        wfr_keys: true,
    };
    for path in &files {
        let h = read_history_file(path).expect("readable history");
        for rw in [RwOptions::default(), all] {
            let outcome = check_rw_register(&h, &CheckOptions::default(), &rw)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            assert!(
                outcome.result.get_kw("valid?").is_some(),
                "{}: no verdict",
                path.display()
            );
        }
    }
}

#[test]
fn cli_checks_rw_register_in_both_dialects() {
    let Some(dir) = corpus_dir("elle-golden/histories") else {
        return;
    };
    let valid = dir.join("g23-rw-register-strict-serializable-501.edn");
    let invalid = dir.join("g37-rw-register-lost-update-501.edn");
    let run = |args: &[&str], file: &std::path::Path| {
        let mut v: Vec<String> = std::iter::once("ellery")
            .chain(args.iter().copied())
            .map(String::from)
            .collect();
        v.push(file.display().to_string());
        ellery::cli::run(&v)
    };
    let check = ["check", "-m", "rw-register", "--output", "summary"];
    assert_eq!(run(&check, &valid), 0);
    assert_eq!(run(&check, &invalid), 1);
    let flags = [
        "check",
        "-m",
        "rw-register",
        "--output",
        "summary",
        "--linearizable-keys",
        "--sequential-keys",
        "--wfr-keys",
    ];
    assert_eq!(run(&flags, &valid), 0);
    assert_eq!(run(&["-m", "rw-register"], &valid), 0);
    assert_eq!(run(&["-m", "rw-register", "--wfr-keys"], &invalid), 1);
    // A register history is not a list-append history (non-list reads).
    assert_eq!(run(&["check", "--output", "summary"], &invalid), 3);
    assert_eq!(run(&["-m", "list-append"], &invalid), 255);
}
