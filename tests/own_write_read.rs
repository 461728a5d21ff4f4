//! `--algorithm auto` and a transaction that writes a key, reads it back and
//! writes it again: Elle's lost-update check counts that read as a
//! read-modify-write of the transaction's own version, which can only add
//! lost updates that are not there. auto keeps the inference's answer unless
//! it reports `:lost-update`, and then decides exactly.

use std::process::Command;

mod common;

/// T1 = w1 r1 w2; T2 reads T1's intermediate 1 and writes.
const INTERMEDIATE_READ: &str = "\
{:index 0 :type :invoke :process 0 :f :txn :value [[:w 1 1] [:r 1 nil] [:w 1 2]]}
{:index 1 :type :ok :process 0 :f :txn :value [[:w 1 1] [:r 1 1] [:w 1 2]]}
{:index 2 :type :invoke :process 1 :f :txn :value [[:r 1 nil] [:w 1 3]]}
{:index 3 :type :ok :process 1 :f :txn :value [[:r 1 1] [:w 1 3]]}
";

/// T1 = w1 r1 w2; T2 reads T1's final 2.
const FINAL_READ: &str = "\
{:index 0 :type :invoke :process 0 :f :txn :value [[:w 1 1] [:r 1 nil] [:w 1 2]]}
{:index 1 :type :ok :process 0 :f :txn :value [[:w 1 1] [:r 1 1] [:w 1 2]]}
{:index 2 :type :invoke :process 1 :f :txn :value [[:r 1 nil]]}
{:index 3 :type :ok :process 1 :f :txn :value [[:r 1 2]]}
";

fn run(text: &str, algorithm: &str) -> (Option<i32>, String, String) {
    let t = common::Scratch::new("own-write-read");
    let h = t.file("h.edn", text);
    let o = Command::new(env!("CARGO_BIN_EXE_ellery"))
        .args([
            "check",
            "--verbose",
            "--output",
            "summary",
            "-m",
            "rw-register",
        ])
        .args(["--algorithm", algorithm, common::s(&h)])
        .output()
        .expect("run ellery");
    let out = String::from_utf8_lossy(&o.stdout);
    let verdict = out.split('\t').skip(1).collect::<Vec<_>>().join("\t");
    (
        o.status.code(),
        verdict.trim().to_string(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

const QUIRK: &str = "algorithm sat (auto: Elle's lost-update check counts a read that follows the transaction's own write)";

#[test]
fn an_inferred_lost_update_from_the_quirk_is_decided_exactly() {
    let (code, verdict, _) = run(INTERMEDIATE_READ, "infer");
    assert_eq!(
        (code, verdict.as_str()),
        (Some(1), "invalid\t:G1b :lost-update")
    );
    let (code, verdict, err) = run(INTERMEDIATE_READ, "auto");
    assert_eq!(
        (code, verdict.as_str()),
        (Some(1), "invalid\t:G1b"),
        "{err}"
    );
    assert!(err.contains(QUIRK), "{err}");
}

#[test]
fn without_an_inferred_lost_update_the_inference_stands() {
    let (code, verdict, err) = run(FINAL_READ, "auto");
    assert_eq!((code, verdict.as_str()), (Some(0), "valid"), "{err}");
    assert!(!err.contains(QUIRK), "{err}");
}
