//! Shared helpers for integration tests.

use std::path::PathBuf;

/// The shared corpus directory `../shared/corpus/<sub>`, or `None` (with a
/// message) when it is absent outside CI. Under `CI=true` a missing corpus
/// fails the test loudly.
#[allow(dead_code)]
pub fn corpus_dir(sub: &str) -> Option<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/corpus")
        .join(sub);
    if dir.is_dir() {
        return Some(dir);
    }
    if std::env::var("CI").as_deref() == Ok("true") {
        panic!(
            "shared corpus missing at {} (required under CI)",
            dir.display()
        );
    }
    eprintln!("skipping: shared corpus not found at {}", dir.display());
    None
}

/// The 21 models Elle puts in `:also-not` when G1a or G1c rules out
/// read-committed (elle-compat.md §2.4, confirmed against Elle's tests).
#[allow(dead_code)]
pub const G1_ALSO_NOT: [&str; 21] = [
    "causal-cerone",
    "consistent-view",
    "cursor-stability",
    "forward-consistent-view",
    "monotonic-atomic-view",
    "monotonic-snapshot-read",
    "monotonic-view",
    "parallel-snapshot-isolation",
    "prefix",
    "read-atomic",
    "repeatable-read",
    "serializable",
    "snapshot-isolation",
    "strong-read-committed",
    "strong-serializable",
    "strong-session-read-committed",
    "strong-session-serializable",
    "strong-session-snapshot-isolation",
    "strong-snapshot-isolation",
    "update-atomic",
    "update-serializable",
];

/// The case names (history file stems, without `*.expected.edn`) in a
/// `test-histories/<workload>` directory, sorted.
#[allow(dead_code)]
pub fn case_names(dir: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{} is readable: {e}", dir.display()))
        .map(|e| {
            e.expect("directory entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .filter(|n| n.ends_with(".edn") && !n.ends_with(".expected.edn"))
        .map(|n| n.trim_end_matches(".edn").to_string())
        .collect();
    names.sort();
    names
}
