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

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Tests and assertions in `ellery.jepsen-test`: (tests, assertions without
/// the rw-register ones, rw-register assertions). Update with the suite.
const TESTS: usize = 11;
const ASSERTIONS: usize = 42;
const RW_REGISTER_ASSERTIONS: usize = 6;

fn under_ci() -> bool {
    std::env::var("CI").as_deref() == Ok("true")
}

/// Skips (returns `None`) with a message, or panics under CI.
fn missing(what: &str) -> Option<PathBuf> {
    if under_ci() {
        panic!("{what} (required under CI: apt-get install clojure)");
    }
    eprintln!("skipping the Jepsen shim test: {what}");
    None
}

/// Clojure's jar, if it and `java` are present.
fn clojure_jar() -> Option<PathBuf> {
    let java = Command::new("java")
        .arg("-version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    if !matches!(java, Ok(s) if s.success()) {
        return missing("`java` not found");
    }
    let jar = std::env::var_os("CLOJURE_JAR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/share/java/clojure.jar"));
    if !jar.is_file() {
        return missing(&format!("Clojure jar not found at {}", jar.display()));
    }
    Some(jar)
}

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

/// The number after `prefix` in `text` (e.g. "Ran " in "Ran 10 tests").
fn number_after(text: &str, prefix: &str) -> Option<usize> {
    let rest = &text[text.find(prefix)? + prefix.len()..];
    let digits: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
    digits.parse().ok()
}

#[test]
fn clojure_suite_passes_against_the_binary() {
    let Some(corpus) = common::corpus_dir("elle-golden") else {
        return;
    };
    let Some(jar) = clojure_jar() else {
        return;
    };
    let corpus_root = corpus.parent().expect("corpus root").to_path_buf();
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let classpath = [
        jar,
        repo.join("compat/jepsen/src"),
        repo.join("compat/jepsen/test"),
    ]
    .iter()
    .map(|p| p.display().to_string())
    .collect::<Vec<_>>()
    .join(":");

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
