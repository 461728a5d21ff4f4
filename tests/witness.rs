//! `auto`'s serial witness on generated rw-register histories (issue 23),
//! end to end: the version chains confirm the inference's valid verdict, so
//! no SAT confirmation runs, and the result map is byte for byte the
//! inference's.

use std::path::PathBuf;
use std::process::{Command, Output};

fn ellery(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ellery"))
        .args(args)
        .output()
        .expect("ellery runs")
}

/// A generated strict-serializable rw-register history, in this test's own
/// scratch file.
fn generated(n: usize, seed: u64) -> PathBuf {
    let path =
        PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("witness-rw-{n}-{seed}.edn"));
    let out = ellery(&[
        "gen",
        "-w",
        "rw-register",
        "-n",
        &n.to_string(),
        "--seed",
        &seed.to_string(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::write(&path, &out.stdout).expect("scratch file written");
    path
}

/// Generated histories of several sizes: the version chains confirm each
/// (see `src/check/witness/chains.rs`).
#[test]
fn auto_confirms_generated_histories_by_version_chains() {
    for (n, seed) in [(500, 1), (1000, 4), (3000, 10), (20_000, 2)] {
        let file = generated(n, seed);
        let file = file.to_str().expect("utf-8 path");
        let auto = ellery(&["check", "--verbose", file]);
        let infer = ellery(&["check", "--algorithm", "infer", file]);
        let stderr = String::from_utf8_lossy(&auto.stderr);
        assert_eq!(auto.status.code(), Some(0), "{n}/{seed}: {stderr}");
        assert!(
            stderr.contains(
                "confirmed by a serial witness (every key's version order completed into a chain)"
            ),
            "{n}/{seed}: {stderr}"
        );
        assert!(!stderr.contains("algorithm sat"), "{n}/{seed}: {stderr}");
        assert_eq!(infer.status.code(), Some(0));
        assert_eq!(
            String::from_utf8_lossy(&auto.stdout),
            String::from_utf8_lossy(&infer.stdout),
            "{n}/{seed}: result maps differ"
        );
        assert!(String::from_utf8_lossy(&auto.stdout).contains(":valid? true"));
    }
}
