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
    let (stdout, report) = common::run_clojure_suite(
        &classpath,
        "ellery.jepsen-test",
        &[
            ("ELLERY_CORPUS_DIR", corpus_root.as_os_str()),
            ("ELLERY_REPO_DIR", repo.as_os_str()),
        ],
    );

    let rw = binary_has_rw_register(&corpus_root);
    assert_eq!(
        !rw,
        stdout.contains("skipping rw-register"),
        "the suite's rw-register probe disagrees with the binary:\n{report}"
    );
    let expected = ASSERTIONS + if rw { RW_REGISTER_ASSERTIONS } else { 0 };
    common::assert_suite_counts(&stdout, &report, TESTS, expected);
}
