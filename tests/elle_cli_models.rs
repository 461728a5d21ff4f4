//! elle-cli's non-transactional models (Jepsen's bank, counter, set,
//! set-full, long-fork; Knossos's mutex) and flags, through the binary:
//! elle-cli's exit codes on its own sample histories (`../shared/corpus/
//! elle-cli`) with the key fields of each result, and the hand-written
//! cases of `test-histories/<model>/`, whose whole result maps are
//! compared character by character.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn ellery(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ellery"))
        .args(args)
        .output()
        .expect("ellery runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Runs elle-cli mode with `-v` on a corpus file: (exit code, JSON result).
fn elle_cli_json(args: &[&str], file: &Path) -> (i32, serde_json::Value) {
    let mut all: Vec<&str> = args.to_vec();
    all.push("-v");
    all.push(file.to_str().expect("utf-8 path"));
    let o = ellery(&all);
    let json = serde_json::from_str(&stdout(&o))
        .unwrap_or_else(|e| panic!("{all:?}: JSON ({e}): {}{}", stdout(&o), stderr(&o)));
    (o.status.code().expect("exit code"), json)
}

fn corpus(sub: &str) -> Option<PathBuf> {
    common::corpus_dir("elle-cli").map(|d| d.join(sub))
}

#[test]
fn corpus_verdicts_and_key_fields() {
    let Some(j) = corpus("jepsen") else { return };
    let Some(k) = corpus("knossos") else { return };

    for f in ["counter.edn", "counter.json"] {
        let (code, r) = elle_cli_json(&["-m", "counter"], &j.join(f));
        assert_eq!(code, 0, "{f}");
        assert_eq!(r["valid?"], true);
        assert_eq!(r["reads"], serde_json::json!([]), "no reads in {f}");
        assert_eq!(r["errors"], serde_json::json!([]));
    }

    let (code, r) = elle_cli_json(&["-m", "set"], &j.join("set.edn"));
    assert_eq!(code, 0);
    assert_eq!(r["valid?"], true);
    assert_eq!(r["ok"], "#{0..2}");
    assert_eq!(r["attempt-count"], 3);
    assert_eq!(r["lost-count"], 0);

    for f in ["set_full.edn", "set_full.json"] {
        let (code, r) = elle_cli_json(&["-m", "set-full"], &j.join(f));
        assert_eq!(code, 1, "{f}");
        assert_eq!(r["valid?"], false);
        // Elements are [0 n] tuples, the final read holds bare integers.
        assert_eq!(r["attempt-count"], 293);
        assert_eq!(r["lost-count"], 293);
        assert_eq!(r["stable-count"], 0);
        assert_eq!(r["lost"][0], serde_json::json!([0, 0]));
        assert_eq!(r["duplicated-count"], 0);
    }

    for f in ["bank.edn", "bank.json"] {
        let (code, r) = elle_cli_json(&["-m", "bank"], &j.join(f));
        assert_eq!(code, 0, "{f}");
        assert_eq!(r["valid?"], true);
        assert_eq!(r["read-count"], 168);
        assert_eq!(r["error-count"], 0);
        assert_eq!(r["first-error"], serde_json::Value::Null);
    }
    let (code, r) = elle_cli_json(&["-m", "bank"], &j.join("bank-tidb.edn"));
    assert_eq!(code, 1);
    assert_eq!(r["valid?"], false);
    assert_eq!(r["read-count"], 1805);
    assert_eq!(r["error-count"], 1731);
    assert_eq!(r["errors"]["wrong-total"]["count"], 1731);
    assert_eq!(r["first-error"]["type"], "wrong-total");
    assert_eq!(r["first-error"]["total"], 105);
    assert_eq!(r["first-error"]["op"]["index"], 258);
    let (code, r) = elle_cli_json(&["-m", "bank"], &j.join("bank-neg.edn"));
    assert_eq!(code, 0);
    assert_eq!(r["read-count"], 1);
    let (code, r) = elle_cli_json(&["-m", "bank"], &j.join("bank-negative-balances.json"));
    assert_eq!(code, 1);
    assert_eq!(r["error-count"], 1);
    assert_eq!(r["first-error"]["type"], "negative-value");
    assert_eq!(r["first-error"]["negative"], serde_json::json!([-1]));
    // -n allows it.
    let (code, r) = elle_cli_json(
        &["-m", "bank", "-n"],
        &j.join("bank-negative-balances.json"),
    );
    assert_eq!((code, &r["valid?"]), (0, &serde_json::json!(true)));

    // elle-cli's test runs long-fork with -g 3; its default group size (0)
    // makes every read illegal: unknown, which exits 0.
    let (code, r) = elle_cli_json(&["-m", "long-fork", "-g", "3"], &j.join("long-fork.edn"));
    assert_eq!(code, 1);
    assert_eq!(r["valid?"], false);
    assert_eq!(r["reads-count"], 2);
    let forks = r["forks"].as_array().expect("forks");
    assert_eq!(forks.len(), 1);
    // Jepsen's (vec #{a b}) order: by the ops' record hashes (checked with
    // Clojure 1.11's hash-set of two jepsen.history.Op records).
    assert_eq!(forks[0][0]["index"], 3);
    assert_eq!(forks[0][1]["index"], 1);
    let (code, r) = elle_cli_json(&["-m", "long-fork"], &j.join("long-fork.edn"));
    assert_eq!((code, &r["valid?"]), (0, &serde_json::json!("unknown")));

    for f in ["etcd.edn", "etcd.json"] {
        let (code, r) = elle_cli_json(&["-m", "mutex"], &k.join("mutex/bad").join(f));
        assert_eq!(code, 1, "{f}");
        assert_eq!(r["valid?"], false);
        assert_eq!(r["op"]["index"], 1119);
        assert_eq!(r["op"]["f"], "acquire");
    }
    for f in ["memstress3-9.edn", "memstress3-9.json"] {
        let (code, r) = elle_cli_json(
            &["-m", "cas-register"],
            &k.join("cas-register/good").join(f),
        );
        assert_eq!((code, &r["valid?"]), (0, &serde_json::json!(true)), "{f}");
    }
}

#[test]
fn plain_lines_and_exit_codes() {
    let Some(j) = corpus("jepsen") else { return };
    let set_full = j.join("set_full.edn");
    let set = j.join("set.edn");
    let o = ellery(&["-m", "set-full", set_full.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    // elle-cli's default -c and -a are not the user's: no warning.
    assert_eq!(stderr(&o), "");
    assert_eq!(stdout(&o), format!("{} \t false\n", set_full.display()));
    let o = ellery(&["-m", "set", set.to_str().unwrap()]);
    assert_eq!(
        (o.status.code(), stdout(&o)),
        (Some(0), format!("{} \t true\n", set.display()))
    );
    // Newer elle-cli: -v json / --output json; -v text is the plain line.
    let a = ellery(&["-m", "set", "-v", "json", set.to_str().unwrap()]);
    let b = ellery(&["-m", "set", "--output", "json", set.to_str().unwrap()]);
    assert!(stdout(&a).starts_with('{'), "{}", stdout(&a));
    assert_eq!(stdout(&a), stdout(&b));
    let c = ellery(&["-m", "set", "-v", "text", set.to_str().unwrap()]);
    assert_eq!(stdout(&c), format!("{} \t true\n", set.display()));
    // Flags of other models are accepted, with a warning.
    let o = ellery(&[
        "-m",
        "set",
        "-g",
        "3",
        "--max-transfer",
        "5",
        set.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0));
    assert!(stderr(&o).contains("-g/--group-size"), "{}", stderr(&o));
}

#[test]
fn usage_errors_exit_255() {
    for args in [
        &["-m", "bank", "--no-such-flag", "x.edn"][..],
        &["-m", "nope", "x.edn"],
        &["-m", "comments", "x.edn"],
        &["-m", "bank", "-s", "soon", "x.edn"],
        &["-m", "bank", "/no/such/file.edn"],
        &["-m", "bank"],
        &["-v", "x.edn"],
    ] {
        let o = ellery(args);
        assert_eq!(o.status.code(), Some(255), "{args:?}: {}", stderr(&o));
    }
    let o = ellery(&["-m", "bank", "--help"]);
    assert_eq!(o.status.code(), Some(0));
    let help = stdout(&o);
    assert!(help.contains("255"), "{help}");
    assert!(
        !help.contains("3 bad input"),
        "check's exit codes in: {help}"
    );
    for flag in [
        "--group-size",
        "--allow-negative-balances",
        "--total-amount",
        "--max-transfer",
    ] {
        assert!(help.contains(flag), "{flag} in {help}");
    }
    let o = ellery(&["-m", "bank", "--version"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(stdout(&o).starts_with("ellery "), "{}", stdout(&o));
}

/// How many hand-written cases each model has (a lost file is noticed).
const CASES: &[(&str, usize)] = &[
    ("bank", 5),
    ("counter", 2),
    ("set", 2),
    ("set-full", 2),
    ("long-fork", 4),
    ("mutex", 2),
];

#[test]
fn hand_written_cases() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("test-histories");
    let mut failures = Vec::new();
    for &(model, count) in CASES {
        let dir = root.join(model);
        let names = common::case_names(&dir);
        assert_eq!(names.len(), count, "cases in {}: {names:?}", dir.display());
        for name in names {
            let history = dir.join(format!("{name}.edn"));
            let expected = std::fs::read_to_string(dir.join(format!("{name}.expected.edn")))
                .unwrap_or_else(|e| panic!("{model}/{name}.expected.edn: {e}"));
            let opts =
                std::fs::read_to_string(dir.join(format!("{name}.opts"))).unwrap_or_default();
            let mut args = vec!["check", "-m", model];
            args.extend(opts.split_whitespace());
            args.push(history.to_str().expect("utf-8 path"));
            let o = ellery(&args);
            let want_code = match expected.split(":valid? ").nth(1) {
                Some(v) if v.starts_with("true") => 0,
                Some(v) if v.starts_with("false") => 1,
                _ => 2,
            };
            if stdout(&o).trim_end() != expected.trim_end() || o.status.code() != Some(want_code) {
                failures.push(format!(
                    "{model}/{name}: exit {:?} (want {want_code})\n  got:  {}\n  want: {}\n  {}",
                    o.status.code(),
                    stdout(&o).trim_end(),
                    expected.trim_end(),
                    stderr(&o)
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn check_auto_detects_the_models() {
    let Some(j) = corpus("jepsen") else { return };
    let Some(k) = corpus("knossos") else { return };
    for (file, code, line_start) in [
        (
            j.join("counter.edn"),
            0,
            "{:valid? true, :reads [], :errors ()}",
        ),
        (j.join("set.edn"), 0, "{:ok-count 3, :valid? true,"),
        (
            j.join("bank-tidb.edn"),
            1,
            "{:valid? false, :read-count 1805,",
        ),
        (
            k.join("mutex/bad/etcd.edn"),
            1,
            "{:valid? false, :analyzer :wgl,",
        ),
    ] {
        let o = ellery(&["check", file.to_str().unwrap()]);
        assert_eq!(
            o.status.code(),
            Some(code),
            "{}: {}",
            file.display(),
            stderr(&o)
        );
        assert!(
            stdout(&o).starts_with(line_start),
            "{}: {}",
            file.display(),
            stdout(&o)
        );
    }
    // A model's history under another model names the right one.
    let o = ellery(&[
        "check",
        "-m",
        "list-append",
        j.join("counter.edn").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(3));
    assert!(
        stderr(&o).contains("this is a counter history: use -m counter"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn the_memory_guard_counts_the_generic_ops() {
    // 12 bytes per byte of history, plus 64 MB: a 2 MB history needs about
    // 88 MB, more than 80M, less than 100M.
    let t = common::Scratch::new("memory");
    let mut text = String::new();
    let mut i = 0;
    while text.len() < 2 << 20 {
        text.push_str(&format!(
            "{{:index {i}, :time {i}, :type :invoke, :process 0, :f :add, :value 1}}\n{{:index {}, :time {}, :type :ok, :process 0, :f :add, :value 1}}\n",
            i + 1,
            i + 1
        ));
        i += 2;
    }
    let h = t.file("counter.edn", &text);
    let h = h.to_str().unwrap();
    for (args, code) in [
        (vec!["check", "-m", "counter", "--max-memory", "80M", h], 3),
        (vec!["check", "--max-memory", "80M", h], 3),
        (vec!["-m", "counter", "--max-memory", "80M", h], 255),
        (vec!["check", "-m", "counter", "--max-memory", "100M", h], 0),
    ] {
        let o = ellery(&args);
        assert_eq!(o.status.code(), Some(code), "{args:?}: {}", stderr(&o));
        if code != 0 {
            assert!(stderr(&o).contains("too large to check"), "{}", stderr(&o));
        }
    }
}
