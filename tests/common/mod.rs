//! Shared helpers for integration tests.

use std::path::PathBuf;

pub mod watch;

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

/// Parses the flags of a test history's `.opts` file (elle-cli's `-c`,
/// `-a` and the rw-register key flags) into Elle's options; the default
/// model is Elle's, strict-serializable.
#[allow(dead_code)]
pub fn options(
    opts: &str,
) -> (
    ellery::check::result::Expectations,
    ellery::infer::rw_register::RwOptions,
) {
    let mut models: Vec<String> = Vec::new();
    let mut anomalies: Vec<String> = Vec::new();
    let mut rw = ellery::infer::rw_register::RwOptions::default();
    let mut words = opts.split_whitespace();
    while let Some(flag) = words.next() {
        match flag {
            "--wfr-keys" => {
                rw.wfr_keys = true;
                continue;
            }
            "--sequential-keys" => {
                rw.sequential_keys = true;
                continue;
            }
            "--linearizable-keys" => {
                rw.linearizable_keys = true;
                continue;
            }
            "--algorithm" => {
                // For the binary; the library comparisons run the inference.
                words.next();
                continue;
            }
            _ => {}
        }
        let (name, inline) = match flag.split_once('=') {
            Some((n, v)) => (n, Some(v.to_string())),
            None => (flag, None),
        };
        let value = inline
            .or_else(|| words.next().map(str::to_string))
            .unwrap_or_else(|| panic!("flag {flag} needs a value"));
        let list = value
            .split(',')
            .filter(|s| !s.is_empty())
            .map(str::to_string);
        match name {
            "-c" | "--consistency-models" => models.extend(list),
            "-a" | "--anomalies" => anomalies.extend(list),
            other => panic!("unsupported flag {other:?} in .opts"),
        }
    }
    if models.is_empty() {
        models.push("strict-serializable".to_string());
    }
    let models: Vec<&str> = models.iter().map(String::as_str).collect();
    let anomalies: Vec<&str> = anomalies.iter().map(String::as_str).collect();
    let exp = ellery::check::result::Expectations {
        models: Some(ellery::consistency::parse_models(&models).expect("known consistency models")),
        anomalies: ellery::consistency::parse_anomalies(&anomalies).expect("known anomalies"),
    };
    (exp, rw)
}

/// Checks every case of `dir` that has a one-line `<name>.expected.edn`
/// against `check(name, opts)` (the printed result map), where `known`
/// lists cases expected to differ (a known difference that starts to match
/// fails too, so the list stays honest). Expects `cases` histories in all;
/// returns how many were compared.
#[allow(dead_code)]
pub fn compare_with_expected(
    dir: &std::path::Path,
    cases: usize,
    known: &[&str],
    check: impl Fn(&str, &str) -> String,
) -> usize {
    let names = case_names(dir);
    assert_eq!(
        names.len(),
        cases,
        "number of cases under {} (found {names:?})",
        dir.display()
    );
    for k in known {
        assert!(
            names.iter().any(|n| n == k),
            "known difference {k} has no history"
        );
    }
    let (mut failures, mut fixed, mut compared) = (Vec::new(), Vec::new(), 0);
    for name in &names {
        let Ok(want) = std::fs::read_to_string(dir.join(format!("{name}.expected.edn"))) else {
            continue;
        };
        compared += 1;
        let want = want.trim_end_matches('\n');
        assert!(
            !want.contains('\n'),
            "{name}.expected.edn must hold exactly one line"
        );
        let opts = std::fs::read_to_string(dir.join(format!("{name}.opts"))).unwrap_or_default();
        let got = check(name, &opts);
        match (got == want, known.contains(&name.as_str())) {
            (true, false) | (false, true) => {}
            (false, false) => failures.push(format!(
                "{name} (opts: {:?}):\n  want {want}\n  got  {got}",
                opts.trim()
            )),
            (true, true) => fixed.push(name.clone()),
        }
    }
    assert!(
        fixed.is_empty(),
        "these known differences now match Elle; remove them from the known differences: {fixed:?}"
    );
    assert!(
        failures.is_empty(),
        "{} of {compared} cases differ from Elle's result map:\n{}",
        failures.len(),
        failures.join("\n")
    );
    compared
}

/// A temporary directory removed on drop, named after the test binary.
#[allow(dead_code)]
pub struct Scratch(pub PathBuf);

#[allow(dead_code)]
impl Scratch {
    pub fn new(tag: &str) -> Scratch {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static N: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "ellery-{}-{}-{}-{tag}",
            env!("CARGO_CRATE_NAME"),
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temp dir");
        Scratch(dir)
    }

    /// Writes `contents` to `name` (parent directories created) inside.
    pub fn file(&self, name: &str, contents: &str) -> PathBuf {
        let p = self.0.join(name);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).expect("mkdir");
        }
        std::fs::write(&p, contents).expect("write temp file");
        p
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A temporary path as a command-line argument.
#[allow(dead_code)]
pub fn s(p: &std::path::Path) -> &str {
    p.to_str().expect("UTF-8 temp path")
}

/// `ellery check --verbose -m rw-register --algorithm ALGORITHM [ARGS…]` on
/// the history `text` (written to a scratch file): exit code, standard
/// output, standard error.
#[allow(dead_code)]
pub fn check_rw_text(text: &str, algorithm: &str, args: &[&str]) -> (Option<i32>, String, String) {
    let t = Scratch::new("rw-text");
    let h = t.file("h.edn", text);
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_ellery"))
        .args(["check", "--verbose", "-m", "rw-register"])
        .args(["--algorithm", algorithm])
        .args(args)
        .arg(&h)
        .output()
        .expect("run ellery");
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// The JVM classpath for the Clojure suites in `compat/jepsen/` (Clojure's
/// jar, the shim's sources and its tests with the stand-in Jepsen
/// namespaces), or `None` with a message when `java` or the jar is missing.
/// Under `CI=true` a missing one fails the test (`.ci/run` installs Debian's
/// `clojure`). The jar is `$CLOJURE_JAR`, else `/usr/share/java/clojure.jar`.
#[allow(dead_code)]
pub fn clojure_classpath() -> Option<String> {
    use std::process::{Command, Stdio};
    let missing = |what: &str| -> Option<String> {
        if std::env::var("CI").as_deref() == Ok("true") {
            panic!("{what} (required under CI: apt-get install clojure)");
        }
        eprintln!("skipping the Clojure suite: {what}");
        None
    };
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
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let parts = [
        jar,
        repo.join("compat/jepsen/src"),
        repo.join("compat/jepsen/test"),
    ];
    Some(
        parts
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(":"),
    )
}

/// The number after `prefix` in `text` (e.g. "Ran " in "Ran 10 tests").
#[allow(dead_code)]
pub fn number_after(text: &str, prefix: &str) -> Option<usize> {
    let rest = &text[text.find(prefix)? + prefix.len()..];
    let digits: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
    digits.parse().ok()
}

/// Runs the Clojure test namespace `ns` (with `clojure_classpath`'s
/// `classpath`) against this build's binary, with `env` added to its
/// environment, and asserts it exited 0. Returns its stdout and a report
/// (stdout and stderr) for assertion messages.
#[allow(dead_code)]
pub fn run_clojure_suite(
    classpath: &str,
    ns: &str,
    env: &[(&str, &std::ffi::OsStr)],
) -> (String, String) {
    use std::process::{Command, Stdio};
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = Command::new("java")
        .args(["-cp", classpath, "clojure.main", "-m", ns])
        .current_dir(repo)
        .env("ELLERY_BIN", env!("CARGO_BIN_EXE_ellery"))
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .output()
        .expect("run java");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let report = format!("--- stdout\n{stdout}\n--- stderr\n{stderr}");
    assert!(
        out.status.success(),
        "the Clojure suite failed ({}):\n{report}",
        out.status
    );
    (stdout, report)
}

/// Asserts a clojure.test summary in `stdout`: `tests` tests, `assertions`
/// assertions, no failure or error.
#[allow(dead_code)]
pub fn assert_suite_counts(stdout: &str, report: &str, tests: usize, assertions: usize) {
    assert_eq!(
        number_after(stdout, "Ran "),
        Some(tests),
        "number of tests:\n{report}"
    );
    assert_eq!(
        number_after(stdout, "tests containing "),
        Some(assertions),
        "number of assertions:\n{report}"
    );
    assert!(
        stdout.contains("\n0 failures, 0 errors."),
        "failures reported:\n{report}"
    );
}

/// A small deterministic generator (xorshift64) for the random predicate
/// histories: the seed fixes the whole stream.
#[allow(dead_code)]
pub struct XorShift(pub u64);

#[allow(dead_code)]
impl XorShift {
    /// The next 64 bits.
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// In `0..n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}
