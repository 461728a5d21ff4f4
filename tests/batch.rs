//! Batch runs: directories and Jepsen stores, parallel checks with ordered
//! output, the final summary, per-history output directories.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

const VALID: &str =
    "{:index 0, :time 1, :type :invoke, :process 0, :f :txn, :value [[:append :x 1]]}\n\
{:index 1, :time 2, :type :ok, :process 0, :f :txn, :value [[:append :x 1]]}\n\
{:index 2, :time 3, :type :invoke, :process 1, :f :txn, :value [[:r :x nil]]}\n\
{:index 3, :time 4, :type :ok, :process 1, :f :txn, :value [[:r :x [1]]]}\n";

const G1C: &str = "[{:process 0, :type :ok, :value [[:append :x 1] [:r :y [1]]]}\n\
{:process 1, :type :ok, :value [[:append :x 2] [:append :y 1]]}\n\
{:process 2, :type :ok, :value [[:r :x [1 2]]]}]\n";

struct Store(PathBuf);

impl Store {
    fn new(name: &str) -> Store {
        let root = std::env::temp_dir().join(format!("ellery-batch-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).expect("temp dir");
        Store(root)
    }

    fn put(&self, rel: &str, text: &str) -> PathBuf {
        let p = self.0.join(rel);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(&p, text).expect("write");
        p
    }
}

impl Drop for Store {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn ellery(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_ellery"))
        .args(args)
        .output()
        .expect("ellery runs")
}

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

#[test]
fn a_jepsen_store_is_checked_run_by_run_in_order() {
    let st = Store::new("store");
    let a = st.put("store/append/20240101T000000.000Z/history.edn", VALID);
    st.put(
        "store/append/20240101T000000.000Z/results.edn",
        "{:valid? true}",
    );
    let b = st.put("store/append/20240102T000000.000Z/history.edn", G1C);
    let c = st.put("store/other/20240101T000000.000Z/history.edn", VALID);
    let o = ellery(&[
        "check",
        "-j",
        "2",
        "-c",
        "serializable",
        "--output",
        "summary",
        s(&st.0),
    ]);
    assert_eq!(o.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        stdout,
        format!(
            "{}\tvalid\n{}\tinvalid\t:G1c\n{}\tvalid\n",
            a.display(),
            b.display(),
            c.display()
        )
    );
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains("3 histories in")
            && stderr.contains(": 2 valid, 1 invalid, 0 unknown, 0 unreadable"),
        "{stderr}"
    );
    // --quiet drops the summary; the verdicts stay.
    let q = ellery(&[
        "check",
        "-q",
        "-c",
        "serializable",
        "--output",
        "summary",
        s(&st.0),
    ]);
    assert_eq!(q.stdout, o.stdout);
    assert!(
        q.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&q.stderr)
    );
}

#[test]
fn unreadable_histories_are_counted_and_the_rest_still_checked() {
    let st = Store::new("mixed");
    st.put("runs/a.edn", VALID);
    st.put("runs/b.edn", "{:index 0, :type :ok");
    let o = ellery(&["check", "--output", "summary", s(&st.0.join("runs"))]);
    assert_eq!(o.status.code(), Some(3));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(stdout.lines().count(), 1, "{stdout}");
    assert!(stdout.ends_with("a.edn\tvalid\n"));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.contains("b.edn:1:"), "{stderr}");
    assert!(
        stderr.contains("1 valid, 0 invalid, 0 unknown, 1 unreadable"),
        "{stderr}"
    );
}

#[test]
fn each_history_gets_its_own_output_directory() {
    let st = Store::new("dirs");
    st.put("store/t/1/history.edn", G1C);
    st.put("store/t/2/history.edn", G1C);
    let out = st.0.join("out");
    let o = ellery(&[
        "check",
        "-q",
        "-c",
        "serializable",
        "-p",
        "dot",
        "-d",
        s(&out),
        s(&st.0.join("store")),
    ]);
    assert_eq!(o.status.code(), Some(1));
    let prefix = st.0.join("store");
    let flat = |run: &str| {
        let rel: Vec<String> = prefix
            .join("t")
            .join(run)
            .join("history")
            .components()
            .filter_map(|c| match c {
                std::path::Component::Normal(x) => Some(x.to_string_lossy().into_owned()),
                _ => None,
            })
            .collect();
        out.join(rel.join("-"))
    };
    for run in ["1", "2"] {
        assert!(
            flat(run).join("G1c.txt").is_file(),
            "{}",
            flat(run).display()
        );
    }
}

#[test]
fn an_empty_directory_is_a_usage_error() {
    let st = Store::new("empty");
    std::fs::create_dir_all(st.0.join("nothing")).expect("mkdir");
    let o = ellery(&["check", s(&st.0.join("nothing"))]);
    assert_eq!(o.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no histories found"));
}

/// Without `-m`, each history's workload is detected from its operations:
/// list-append, rw-register and CAS registers in one run.
#[test]
fn workloads_are_detected_per_history() {
    let Some(corpus) = common::corpus_dir(".") else {
        return;
    };
    let files = [
        corpus.join("elle-golden/histories/g05-list-append-snapshot-isolation-501.edn"),
        corpus.join("elle-golden/histories/g39-rw-register-write-skew-501.edn"),
        corpus.join("knossos/cas-register/bad/cas-failure.edn"),
        corpus.join("knossos/cas-register/good/memstress3-9.edn"),
    ];
    let mut args = vec!["check", "-q", "--output", "summary"];
    args.extend(files.iter().map(|f| s(f)));
    let o = ellery(&args);
    assert_eq!(o.status.code(), Some(1));
    let lines: Vec<String> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| l.split('\t').skip(1).collect::<Vec<_>>().join(" "))
        .collect();
    assert_eq!(
        lines,
        ["invalid :G2-item", "invalid :G2-item", "invalid", "valid"]
    );
}
