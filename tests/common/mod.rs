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
