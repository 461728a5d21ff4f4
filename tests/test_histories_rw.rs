//! Hand-written rw-register histories (`test-histories/rw-register/`), one or
//! more per anomaly type and per version-order source, each with the result
//! map Elle 0.2.7's `elle.rw-register/check` would print for it. Every case is
//! checked as a whole map, character for character.
//!
//! Layout of a case `NAME` (see `test-histories/README.md`):
//! - `NAME.edn`: the history (Jepsen EDN);
//! - `NAME.expected.edn`: one line, Elle's result map; or, for histories
//!   Elle cannot analyse, `NAME.expected-error`: `exit N` on the first line
//!   and ellery's whole standard error on the next ones;
//! - `NAME.opts` (optional): CLI flags, `-c MODEL,...`, `-a ANOMALY,...`,
//!   `--wfr-keys`, `--sequential-keys`, `--linearizable-keys`; without it,
//!   Elle's defaults (strict-serializable, no version-order source but the
//!   initial state);
//! - `NAME.files/` (optional): Elle's explanation files (`<type>.txt`) as
//!   written under `--directory`, compared byte for byte.

mod common;

use ellery::edn::pr_str;
use ellery::read::read_history_file;
use ellery::{Algorithm, CheckOptions, Outcome, Workload};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// How many histories `test-histories/rw-register/` holds; update it when
/// adding or removing a case, so that a lost file is noticed.
const EXPECTED_CASES: usize = 25;

/// How many of them have an `.expected-error` instead of a result map.
const EXPECTED_ERROR_CASES: usize = 2;

/// How many explanation files the `.files/` directories hold.
const EXPECTED_EXPLANATION_FILES: usize = 7;

/// Cases whose expected file is what Elle prints but where ellery is known to
/// print something else. The test checks that these still differ, so it fails
/// (and this list must be emptied) once ellery changes.
///
/// - `linearizable-keys-read-then-write`: with `--linearizable-keys`, Elle
///   relates the version a transaction left a key in to the *first* version
///   of that key a later transaction interacted with (its external read, here
///   the same value, so no edge); ellery relates it to the version the later
///   transaction *left* the key in (its write), a deliberate difference (see
///   the README), and so finds a G-single-item that Elle does not.
const KNOWN_DIFFERENCES: &[&str] = &["linearizable-keys-read-then-write"];

fn case_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("test-histories/rw-register")
}

/// Every case name (file stem of a history), sorted.
fn case_names() -> Vec<String> {
    common::case_names(&case_dir())
}

fn opts_of(name: &str) -> String {
    fs::read_to_string(case_dir().join(format!("{name}.opts"))).unwrap_or_default()
}

fn check_case(name: &str) -> Outcome {
    let path = case_dir().join(format!("{name}.edn"));
    let history =
        read_history_file(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let (expectations, rw) = common::options(&opts_of(name));
    let opts = CheckOptions {
        expectations,
        ..CheckOptions::default()
    };
    ellery::check(
        &history,
        &CheckOptions {
            algorithm: Algorithm::Infer,
            workload: Some(Workload::RwRegister),
            rw,
            ..opts.clone()
        },
    )
    .unwrap_or_else(|e| panic!("{name}: {e}"))
}

#[test]
fn hand_written_histories_match_elle_result_maps() {
    let compared =
        common::compare_with_expected(&case_dir(), EXPECTED_CASES, KNOWN_DIFFERENCES, |name, _| {
            pr_str(&check_case(name).result)
        });
    assert_eq!(compared, EXPECTED_CASES - EXPECTED_ERROR_CASES);
}

/// Histories Elle throws on: the binary exits with the expected code and
/// prints exactly the expected message, and nothing on standard output.
#[test]
fn input_errors_give_the_expected_exit_code_and_message() {
    let dir = case_dir();
    let mut compared = 0;
    for name in case_names() {
        let Ok(want) = fs::read_to_string(dir.join(format!("{name}.expected-error"))) else {
            continue;
        };
        compared += 1;
        let (first, message) = want
            .split_once('\n')
            .unwrap_or_else(|| panic!("{name}.expected-error: no message line"));
        let code: i32 = first
            .strip_prefix("exit ")
            .and_then(|c| c.parse().ok())
            .unwrap_or_else(|| panic!("{name}.expected-error: first line {first:?}"));
        let out = Command::new(env!("CARGO_BIN_EXE_ellery"))
            .current_dir(&dir)
            .args(["check", "-q", "-m", "rw-register"])
            .args(opts_of(&name).split_whitespace())
            .arg(format!("{name}.edn"))
            .output()
            .expect("ellery runs");
        assert_eq!(out.status.code(), Some(code), "{name}: exit code");
        assert_eq!(String::from_utf8_lossy(&out.stdout), "", "{name}: stdout");
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            message,
            "{name}: stderr"
        );
    }
    assert_eq!(compared, EXPECTED_ERROR_CASES);
}

/// Elle's explanation files: every `<type>.txt` under `NAME.files/` equals,
/// byte for byte, the file ellery writes, and ellery writes no other one.
#[test]
fn explanation_files_match_elle_byte_for_byte() {
    let dir = case_dir();
    let mut compared = 0;
    let mut failures = Vec::new();
    for name in case_names() {
        let golden = dir.join(format!("{name}.files"));
        if !golden.is_dir() {
            continue;
        }
        let history = read_history_file(&dir.join(format!("{name}.edn"))).expect("history");
        let outcome = check_case(&name);
        let out = std::env::temp_dir().join(format!(
            "ellery-test-histories-rw-{}-{name}",
            std::process::id()
        ));
        let _ = fs::remove_dir_all(&out);
        ellery::report::files::write_files(&out, &history, &outcome, &Default::default())
            .expect("writable temp dir");
        let txt = |d: &Path| -> Vec<String> {
            let mut v: Vec<String> = fs::read_dir(d)
                .expect("readable dir")
                .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
                .filter(|n| n.ends_with(".txt"))
                .collect();
            v.sort();
            v
        };
        let want_files = txt(&golden);
        assert!(!want_files.is_empty(), "{name}.files is empty");
        assert_eq!(txt(&out), want_files, "{name}: explanation files written");
        for file in want_files {
            compared += 1;
            let want = fs::read(golden.join(&file)).expect("golden file");
            let got = fs::read(out.join(&file)).expect("written file");
            if want != got {
                failures.push(format!(
                    "{name}/{file}:\n--- want\n{}\n--- got\n{}",
                    String::from_utf8_lossy(&want),
                    String::from_utf8_lossy(&got)
                ));
            }
        }
        let _ = fs::remove_dir_all(&out);
    }
    assert_eq!(compared, EXPECTED_EXPLANATION_FILES);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
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
        } else if let Some(s) = file.strip_suffix(".expected-error") {
            s
        } else if let Some(s) = file.strip_suffix(".opts") {
            s
        } else if let Some(s) = file.strip_suffix(".files") {
            assert!(dir.join(&file).is_dir(), "{file} is not a directory");
            s
        } else if let Some(s) = file.strip_suffix(".edn") {
            let map = dir.join(format!("{s}.expected.edn")).is_file();
            let err = dir.join(format!("{s}.expected-error")).is_file();
            assert!(
                map != err,
                "{file} needs exactly one of {s}.expected.edn and {s}.expected-error"
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
