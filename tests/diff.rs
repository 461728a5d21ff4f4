//! `ellery diff`: hand-made Elle result files compared with ellery's
//! results, directly or by checking the history first.

use std::path::PathBuf;
use std::process::Command;

const HISTORY: &str = "[{:process 0, :type :ok, :value [[:append :x 1] [:r :y [1]]]}\n\
{:process 1, :type :ok, :value [[:append :x 2] [:append :y 1]]}\n\
{:process 2, :type :ok, :value [[:r :x [1 2]]]}]\n";

/// What Elle says for HISTORY under serializable, as a Jepsen test's
/// `results.edn` would hold it under its checker key.
const RESULTS_EDN: &str = "{:valid? false,\n :stats {:valid? true, :count 3},\n :workload\n {:valid? false,\n  :anomaly-types (:G1c),\n  :anomalies {:G1c [{:cycle [], :steps (), :type :G1c}]},\n  :not #{:read-committed},\n  :also-not\n  #{:causal-cerone :consistent-view :cursor-stability :forward-consistent-view\n    :monotonic-atomic-view :monotonic-snapshot-read :monotonic-view\n    :parallel-snapshot-isolation :prefix :read-atomic :repeatable-read\n    :serializable :snapshot-isolation :strong-read-committed :strong-serializable\n    :strong-session-read-committed :strong-session-serializable\n    :strong-session-snapshot-isolation :strong-snapshot-isolation\n    :update-atomic :update-serializable}}}\n";

struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let d = std::env::temp_dir().join(format!("ellery-diff-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).expect("temp dir");
        Scratch(d)
    }
    fn file(&self, name: &str, text: &str) -> String {
        let p = self.0.join(name);
        std::fs::write(&p, text).expect("write");
        p.to_string_lossy().into_owned()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn ellery(args: &[&str]) -> (Option<i32>, String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_ellery"))
        .args(args)
        .output()
        .expect("ellery runs");
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn agreeing_results_exit_zero_and_differing_cycles_show_in_the_diff() {
    let t = Scratch::new("agree");
    let results = t.file("results.edn", RESULTS_EDN);
    let history = t.file("history.edn", HISTORY);
    let (code, out, _) = ellery(&["diff", "--check", "-c", "serializable", &results, &history]);
    assert_eq!(code, Some(0), "{out}");
    // "same" shows what is the same (issue 20: it used to print nothing).
    assert!(
        out.starts_with(
            "verdict        same       elle false, ellery false\n\
anomaly-types  same       G1c\n\
not            same       read-committed\n\
also-not       same       causal-cerone consistent-view "
        ),
        "{out}"
    );
    assert!(
        out.contains("\ncases          same       G1c: 1\n"),
        "{out}"
    );
    // The hand-made Elle cycle is empty, so the maps are not identical:
    assert!(out.contains("--- elle\n+++ ellery\n"), "{out}");
    assert!(
        out.contains("-:anomalies :G1c #0 {:cycle [], :steps (), :type :G1c}"),
        "{out}"
    );
    let (strict, _, _) = ellery(&[
        "diff",
        "--check",
        "--strict",
        "-c",
        "serializable",
        &results,
        &history,
    ]);
    assert_eq!(strict, Some(1));
}

#[test]
fn disagreeing_verdicts_exit_one_and_name_the_differences() {
    let t = Scratch::new("disagree");
    let results = t.file("results.edn", RESULTS_EDN);
    let ours = t.file("ours.edn", "{:valid? true}\n");
    let (code, out, _) = ellery(&["diff", "--key", "workload", &results, &ours]);
    assert_eq!(code, Some(1));
    assert!(
        out.contains("verdict        DIFFERENT  elle false, ellery true\n"),
        "{out}"
    );
    assert!(
        // An empty side is left out, not printed as "only ellery: ".
        out.contains("anomaly-types  DIFFERENT  only elle: G1c\n"),
        "{out}"
    );
    assert!(
        out.contains("cases          DIFFERENT  G1c: elle 1, ellery 0\n"),
        "{out}"
    );
    assert!(
        out.contains("also-not       DIFFERENT  only elle: causal-cerone "),
        "{out}"
    );
}

#[test]
fn bad_inputs_exit_three() {
    let t = Scratch::new("bad");
    let broken = t.file("broken.edn", "{:valid? false");
    let ours = t.file("ours.edn", "{:valid? true}\n");
    let (code, _, err) = ellery(&["diff", &broken, &ours]);
    assert_eq!(code, Some(3));
    assert!(err.contains("broken.edn:1:"), "{err}");
    let nothing = t.file("nothing.edn", "{:stats {:count 1}}\n");
    let (code, _, err) = ellery(&["diff", "--key", "workload", &nothing, &ours]);
    assert_eq!(code, Some(3));
    assert!(
        err.contains("expected an Elle result map under workload"),
        "{err}"
    );
}
