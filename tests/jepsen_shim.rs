//! The Jepsen drop-in (`compat/jepsen/`): runs its Clojure test suite
//! (`ellery.jepsen-test`) on the JVM against this build's binary. That suite
//! checks corpus histories through the shim (`ellery.jepsen/checker` via a
//! stand-in `jepsen.checker` protocol, `list-append-check`,
//! `rw-register-check`) and compares each result map with `=` to the binary's
//! own EDN output and to Elle's answers.
//!
//! Needs `java` and Clojure's jar (Debian: `apt-get install clojure`; the jar
//! is taken from `$CLOJURE_JAR`, else `/usr/share/java/clojure.jar`). Without
//! them the test skips with a message, except under `CI=true`, where it fails.

mod common;

use common::number_after;
use std::path::Path;
use std::process::{Command, Stdio};

/// Tests and assertions in `ellery.jepsen-test`: (tests, assertions without
/// the rw-register ones, rw-register assertions). Update with the suite.
const TESTS: usize = 11;
const ASSERTIONS: usize = 42;
const RW_REGISTER_ASSERTIONS: usize = 6;

/// Whether this build's binary checks rw-register histories (the suite runs
/// its rw-register tests only then).
fn binary_has_rw_register(corpus: &Path) -> bool {
    let h = corpus.join("elle-golden/histories/g23-rw-register-strict-serializable-501.edn");
    let status = Command::new(env!("CARGO_BIN_EXE_ellery"))
        .args(["check", "-m", "rw-register"])
        .arg(&h)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("run ellery");
    status.code() != Some(3)
}

#[test]
fn clojure_suite_passes_against_the_binary() {
    let Some(corpus) = common::corpus_dir("elle-golden") else {
        return;
    };
    let Some(classpath) = common::clojure_classpath() else {
        return;
    };
    let corpus_root = corpus.parent().expect("corpus root").to_path_buf();
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));

    let out = Command::new("java")
        .args([
            "-cp",
            &classpath,
            "clojure.main",
            "-m",
            "ellery.jepsen-test",
        ])
        .current_dir(repo)
        .env("ELLERY_BIN", env!("CARGO_BIN_EXE_ellery"))
        .env("ELLERY_CORPUS_DIR", &corpus_root)
        .env("ELLERY_REPO_DIR", repo)
        .stdin(Stdio::null())
        .output()
        .expect("run java");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let report = format!("--- stdout\n{stdout}\n--- stderr\n{stderr}");
    assert!(
        out.status.success(),
        "the Clojure suite failed ({}):\n{report}",
        out.status
    );

    let rw = binary_has_rw_register(&corpus_root);
    assert_eq!(
        !rw,
        stdout.contains("skipping rw-register"),
        "the suite's rw-register probe disagrees with the binary:\n{report}"
    );
    let expected = ASSERTIONS + if rw { RW_REGISTER_ASSERTIONS } else { 0 };
    assert_eq!(
        number_after(&stdout, "Ran "),
        Some(TESTS),
        "number of tests:\n{report}"
    );
    assert_eq!(
        number_after(&stdout, "tests containing "),
        Some(expected),
        "number of assertions:\n{report}"
    );
    assert!(
        stdout.contains("\n0 failures, 0 errors."),
        "failures reported:\n{report}"
    );
}
