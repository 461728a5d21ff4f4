//! Linearizability of cas registers (`-m cas-register`) on Knossos's own
//! histories (`../shared/corpus/knossos`), elle-cli's memstress history, and
//! the binary's exit codes and error positions.

mod common;

use common::corpus_dir;
use ellery::edn::Value;
use ellery::read::read_history_file;
use ellery::{CheckOptions, Validity, Workload};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut fs: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "edn" || e == "json"))
        .collect();
    fs.sort();
    fs
}

fn check(path: &Path) -> (Validity, Value) {
    let h = read_history_file(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let o = ellery::check(
        &h,
        &CheckOptions {
            workload: Some(Workload::CasRegister),
            ..CheckOptions::default()
        },
    )
    .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    (o.validity, o.result)
}

fn ellery(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ellery"))
        .args(args)
        .output()
        .expect("ellery binary runs")
}

#[test]
fn knossos_good_histories_are_linearizable() {
    let Some(dir) = corpus_dir("knossos/cas-register/good") else {
        return;
    };
    let fs = files(&dir);
    assert!(fs.len() >= 100, "{} files", fs.len());
    for f in fs {
        let (v, r) = check(&f);
        assert_eq!(v, Validity::Valid, "{}: {r:?}", f.display());
        assert_eq!(r.get_kw("valid?"), Some(&Value::Bool(true)));
    }
}

#[test]
fn knossos_bad_histories_are_not_linearizable() {
    let Some(dir) = corpus_dir("knossos/cas-register/bad") else {
        return;
    };
    let fs = files(&dir);
    assert_eq!(fs.len(), 7);
    for f in fs {
        let (v, r) = check(&f);
        assert_eq!(v, Validity::Invalid, "{}: {r:?}", f.display());
        assert_eq!(r.get_kw("valid?"), Some(&Value::Bool(false)));
        // The failing op is an :ok completion, printed as a map.
        let op = r.get_kw("op").expect(":op");
        assert_eq!(op.get_kw("type"), Some(&Value::kw("ok")), "{r:?}");
        assert!(r.get_kw("previous-ok").is_some());
        assert!(
            matches!(r.get_kw("last-consistent-states"), Some(Value::Vector(v)) if !v.is_empty())
        );
    }
}

#[test]
fn knossos_failing_ops_are_knossos_s() {
    // Knossos's own tests name the op that cannot be linearized.
    let Some(dir) = corpus_dir("knossos/cas-register/bad") else {
        return;
    };
    let op = |name: &str| {
        let (_, r) = check(&dir.join(name));
        let op = r.get_kw("op").cloned().expect(":op");
        (op.get_kw("process").cloned(), op.get_kw("value").cloned())
    };
    // "If we have another operation here, just *after* the nonlinearizable
    // concurrent ops, wgl used to incorrectly infer that this subsequent op
    // is the problem": the read of 3 is.
    assert_eq!(
        op("rethink-fail-minimal.edn"),
        (Some(Value::Int(1)), Some(Value::Int(3)))
    );
    assert_eq!(
        op("bad-analysis.edn"),
        (Some(Value::Int(21)), Some(Value::Int(2)))
    );
}

#[test]
fn elle_cli_memstress_exits_0() {
    let Some(dir) = corpus_dir("elle-cli/knossos/cas-register/good") else {
        return;
    };
    for name in ["memstress3-9.edn", "memstress3-9.json"] {
        let path = dir.join(name);
        let p = path.to_str().expect("UTF-8 path");
        let o = ellery(&["-m", "cas-register", p]);
        assert_eq!(o.status.code(), Some(0), "{name}: {o:?}");
        assert_eq!(String::from_utf8_lossy(&o.stdout), format!("{p} \t true\n"));
        // And with the model named explicitly.
        let o = ellery(&["-m", "cas-register", "-c", "linearizable", p]);
        assert_eq!(o.status.code(), Some(0), "{name}: {o:?}");
    }
}

#[test]
fn elle_cli_mode_exits_1_on_bad_histories_and_check_mode_prints_the_map() {
    let Some(dir) = corpus_dir("knossos/cas-register/bad") else {
        return;
    };
    let path = dir.join("rethink-fail-minimal.edn");
    let p = path.to_str().expect("UTF-8 path");
    let o = ellery(&["-m", "cas-register", p]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        format!("{p} \t false\n")
    );
    let o = ellery(&["check", "-m", "cas-register", p]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        "{:valid? false, :analyzer :wgl, \
         :op {:index 4, :time -1, :type :ok, :process 1, :f :read, :value 3}, \
         :previous-ok {:index 1, :time -1, :type :ok, :process 0, :f :write, :value 0}, \
         :last-consistent-states [0 4]}\n"
    );
    let o = ellery(&["check", "-m", "cas-register", "--output", "json", p]);
    let json: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON output");
    assert_eq!(json["valid?"], serde_json::Value::Bool(false));
    assert_eq!(json["op"]["value"], serde_json::json!(3));
    assert_eq!(json["last-consistent-states"], serde_json::json!([0, 4]));
}

#[test]
fn multi_register_transactions_are_not_cas_register_input() {
    // Knossos's multi-register history holds `:f :txn` ops over several
    // registers (initial values only in a comment): not this model.
    let Some(dir) = corpus_dir("knossos/multi-register/good") else {
        return;
    };
    let path = dir.join("multi-register.edn");
    let o = ellery(&["check", "-m", "cas-register", path.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(3));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("multi-register.edn:2:2: expected :f to be one of :read :write :cas"),
        "{err}"
    );
}

#[test]
fn bad_input_exits_3_or_255_with_a_position() {
    let dir = std::env::temp_dir().join(format!("ellery-cas-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("bad-cas.edn");
    std::fs::write(
        &path,
        "[{:process 0, :type :invoke, :f :write, :value 1}\n \
         {:process 0, :type :ok, :f :write, :value 1}\n \
         {:process 1, :type :invoke, :f :cas, :value [1 2 3]}]\n",
    )
    .unwrap();
    let p = path.to_str().unwrap();
    let o = ellery(&["check", "-m", "cas-register", p]);
    assert_eq!(o.status.code(), Some(3));
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        format!("ellery: {p}:3:2: expected a :cas value [old new], found [1 2 3]\n")
    );
    assert!(o.stdout.is_empty());
    let o = ellery(&["-m", "cas-register", p]);
    assert_eq!(o.status.code(), Some(255));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn independent_keys_report_the_failing_key() {
    let dir = std::env::temp_dir().join(format!("ellery-cas-ind-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("independent.edn");
    std::fs::write(
        &path,
        "{:process 0, :type :invoke, :f :write, :value [1 5]}\n\
         {:process 0, :type :ok, :f :write, :value [1 5]}\n\
         {:process 1, :type :invoke, :f :read, :value [2 nil]}\n\
         {:process 1, :type :ok, :f :read, :value [2 5]}\n\
         {:process 2, :type :invoke, :f :read, :value [1 nil]}\n\
         {:process 2, :type :ok, :f :read, :value [1 5]}\n",
    )
    .unwrap();
    let o = ellery(&["check", "-m", "cas-register", path.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.starts_with("{:valid? false, :results {1 {:valid? true, :analyzer :lwt-chain}, 2 {:valid? false, :analyzer :lwt-chain, :op {:index 3,"),
        "{out}"
    );
    assert!(
        out.ends_with(":cause :unwritten-read}}, :failures [2]}\n"),
        "{out}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// `ellery gen -w cas-register` writes histories of a linearizable register
/// that check valid, with independent keys too.
#[test]
fn generated_cas_histories_are_linearizable() {
    use std::process::Command;
    let bin = env!("CARGO_BIN_EXE_ellery");
    for (keys, seed) in [("1", "3"), ("4", "5")] {
        let gen = Command::new(bin)
            .args([
                "gen",
                "-w",
                "cas-register",
                "-n",
                "5000",
                "-k",
                keys,
                "--seed",
                seed,
            ])
            .output()
            .expect("gen runs");
        assert!(gen.status.success());
        let out = check_stdin(bin, &["--output", "summary"], &gen.stdout);
        assert_eq!(out.status.code(), Some(0), "keys {keys}");
        assert_eq!(String::from_utf8_lossy(&out.stdout), "-\tvalid\n");
    }
    // A register cannot show write skew; the faults it can show are found.
    let bad = Command::new(bin)
        .args(["gen", "-w", "cas-register", "--fault", "write-skew"])
        .output()
        .expect("gen runs");
    assert_eq!(bad.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&bad.stderr)
        .contains("write-skew cannot be injected into cas-register histories"));
    for fault in ["stale-read", "lost-update", "aborted-read"] {
        let gen = Command::new(bin)
            .args(["gen", "-w", "cas-register", "-n", "500", "-k", "3"])
            .args(["--seed", "8", "--fault", fault])
            .output()
            .expect("gen runs");
        assert!(gen.status.success());
        let out = check_stdin(bin, &[], &gen.stdout);
        assert_eq!(out.status.code(), Some(1), "{fault}");
        // The fault's own key (the first after the 3 random ones) fails.
        let out = String::from_utf8_lossy(&out.stdout).to_string();
        assert!(out.ends_with(", :failures [3]}\n"), "{fault}: {out}");
    }
}

/// `ellery check -m cas-register <args> -` with `input` on standard input.
fn check_stdin(bin: &str, args: &[&str], input: &[u8]) -> std::process::Output {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let mut check = Command::new(bin)
        .args(["check", "-m", "cas-register"])
        .args(args)
        .arg("-")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("check runs");
    check
        .stdin
        .take()
        .expect("stdin")
        .write_all(input)
        .expect("write");
    check.wait_with_output().expect("check finishes")
}
