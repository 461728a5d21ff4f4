//! The rough edges of `ellery check` a new user hit (issue 20): output of
//! several histories, standard input, refused usage, warnings, errors that
//! name the right workload, escaped error text, directory walks, and the
//! help texts.

mod common;

use common::{s, Scratch};
use std::io::Write;
use std::process::{Command, Output, Stdio};

fn ellery(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ellery"))
        .args(args)
        .output()
        .expect("ellery runs")
}

fn ellery_stdin(args: &[&str], input: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ellery"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("ellery runs");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input)
        .expect("write stdin");
    child.wait_with_output().expect("ellery finishes")
}

fn out(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

const G1C: &str = "\
{:index 0, :time 0, :type :invoke, :process 0, :f :txn, :value [[:append :x 1] [:r :y nil]]}
{:index 1, :time 1, :type :invoke, :process 1, :f :txn, :value [[:append :y 1] [:r :x nil]]}
{:index 2, :time 2, :type :ok, :process 0, :f :txn, :value [[:append :x 1] [:r :y [1]]]}
{:index 3, :time 3, :type :ok, :process 1, :f :txn, :value [[:append :y 1] [:r :x [1]]]}
";

const VALID: &str = "\
{:index 0, :time 0, :type :invoke, :process 0, :f :txn, :value [[:append :x 1]]}
{:index 1, :time 1, :type :ok, :process 0, :f :txn, :value [[:append :x 1]]}
{:index 2, :time 2, :type :invoke, :process 1, :f :txn, :value [[:r :x nil]]}
{:index 3, :time 3, :type :ok, :process 1, :f :txn, :value [[:r :x [1]]]}
";

const CAS: &str = "\
{:index 0, :type :invoke, :process 0, :f :write, :value 1}
{:index 1, :type :ok, :process 0, :f :write, :value 1}
{:index 2, :type :invoke, :process 1, :f :cas, :value [1 2]}
{:index 3, :type :ok, :process 1, :f :cas, :value [1 2]}
";

#[test]
fn json_over_several_histories_is_keyed_by_path() {
    let t = Scratch::new("json-many");
    let a = t.file("a.edn", G1C);
    let b = t.file("b.edn", VALID);
    let one = ellery(&["check", "--output", "json", s(&a)]);
    let many = ellery(&["check", "-q", "--output", "json", s(&a), s(&b)]);
    assert_eq!(many.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_str(&out(&many)).expect("one JSON document");
    let keys: Vec<&String> = v.as_object().expect("an object").keys().collect();
    assert_eq!(keys, [s(&a), s(&b)]);
    let single: serde_json::Value = serde_json::from_str(&out(&one)).expect("JSON");
    assert_eq!(v[s(&a)], single);
    assert_eq!(v[s(&b)], serde_json::json!({"valid?": true}));
    // The single-history output is the result itself, unchanged.
    assert!(out(&one).starts_with("{\"valid?\":false,"), "{}", out(&one));

    let lines = ellery(&["check", "-q", "--output", "jsonl", s(&a), s(&b)]);
    let records: Vec<serde_json::Value> = out(&lines)
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    assert_eq!(records.len(), 2);
    assert_eq!(records[0]["path"], s(&a));
    assert_eq!(records[0]["valid?"], false);
    assert_eq!(
        records[1],
        serde_json::json!({"path": s(&b), "valid?": true})
    );
    let one_line = ellery(&["check", "--output", "jsonl", s(&b)]);
    assert_eq!(out(&one_line), "{\"valid?\":true}\n");
}

#[test]
fn standard_input_may_be_json() {
    let json = br#"[{"type":"invoke","f":"txn","value":[["append","x",1]],"process":0,"index":0},
{"type":"ok","f":"txn","value":[["append","x",1]],"process":0,"index":1},
{"type":"invoke","f":"txn","value":[["r","x",null]],"process":1,"index":2},
{"type":"ok","f":"txn","value":[["r","x",[1]]],"process":1,"index":3}]"#;
    let o = ellery_stdin(&["check", "-"], json);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert_eq!(out(&o), "{:valid? true}\n");
    let o = ellery_stdin(&["check", "-"], VALID.as_bytes());
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
}

#[test]
fn refused_usage() {
    let t = Scratch::new("usage");
    let a = t.file("a.edn", G1C);
    let file = t.file("not-a-dir", "");
    for (args, message) in [
        (
            vec!["check", "-", "-"],
            "standard input (-) is named more than once",
        ),
        (
            vec!["check", "-c", "", s(&a)],
            "expected at least one consistency model after -c",
        ),
        (vec!["check", "-d", s(&file), s(&a)], "expected a directory"),
    ] {
        let o = ellery(&args);
        assert_eq!(o.status.code(), Some(3), "{args:?}");
        assert_eq!(out(&o), "", "{args:?}");
        assert!(err(&o).contains(message), "{args:?}: {}", err(&o));
    }
}

#[test]
fn flags_the_workload_ignores_are_warned_about_once() {
    let t = Scratch::new("warn");
    let a = t.file("a.edn", CAS);
    let b = t.file("b.edn", CAS);
    let o = ellery(&[
        "check",
        "-q",
        "-m",
        "cas-register",
        "-c",
        "serializable",
        "--wfr-keys",
        s(&a),
        s(&b),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert_eq!(
        err(&o),
        "ellery: warning: -c, --wfr-keys do nothing for the cas-register workload\n"
    );
    let g = t.file("g.edn", G1C);
    let o = ellery(&["check", "--wfr-keys", s(&g)]);
    assert!(
        err(&o).contains("--wfr-keys does nothing for the list-append workload"),
        "{}",
        err(&o)
    );
    let o = ellery(&["check", s(&g)]);
    assert_eq!(err(&o), "");
}

#[test]
fn a_history_of_another_workload_is_named() {
    let t = Scratch::new("workload");
    let cas = t.file("cas.edn", CAS);
    let o = ellery(&["check", "-m", "list-append", s(&cas)]);
    assert_eq!(o.status.code(), Some(3));
    assert_eq!(out(&o), "", "no verdict next to the error");
    assert!(
        err(&o).contains("this is a cas-register history: use -m cas-register"),
        "{}",
        err(&o)
    );
    // elle-cli mode keeps Elle's (and elle-cli's) :unknown verdict.
    let o = ellery(&["-m", "list-append", s(&cas)]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(out(&o), format!("{} \t unknown\n", s(&cas)));
    assert!(err(&o).contains("use -m cas-register"), "{}", err(&o));
    let multi = t.file(
        "multi.edn",
        "{:index 0, :type :invoke, :process 0, :f :txn, :value [[:write :x 1]]}\n\
         {:index 1, :type :ok, :process 0, :f :txn, :value [[:write :x 1]]}\n",
    );
    let o = ellery(&["check", s(&multi)]);
    assert_eq!(o.status.code(), Some(3));
    assert!(
        err(&o).contains("Knossos multi-register history"),
        "{}",
        err(&o)
    );
    assert!(!err(&o).contains("list-append"), "{}", err(&o));
}

#[test]
fn error_text_escapes_control_characters() {
    let o = ellery_stdin(&["check", "-"], b"{:a \x01\x02\n\x03");
    assert_eq!(o.status.code(), Some(3));
    let e = err(&o);
    assert_eq!(e.lines().count(), 1, "{e:?}");
    assert!(!e.trim_end().chars().any(char::is_control), "{e:?}");
    assert!(e.contains("\\x03"), "{e:?}");
}

#[test]
fn directory_walks_skip_result_maps() {
    let t = Scratch::new("walk");
    t.file("h/a.edn", G1C);
    t.file(
        "h/a.expected.edn",
        "{:valid? false, :anomaly-types [:G1c]}\n",
    );
    t.file("h/results.json", "{\"valid?\": true}\n");
    t.file("h/run/results2.edn", "{:valid? true, :count 3}\n");
    let o = ellery(&["check", "-q", "--output", "summary", s(&t.0.join("h"))]);
    assert_eq!(o.status.code(), Some(1), "{}", err(&o));
    assert_eq!(out(&o).lines().count(), 1, "{}", out(&o));
    assert!(out(&o).contains("a.edn\tinvalid"), "{}", out(&o));
    assert!(
        err(&o).contains("note: skipped 3 files holding result maps, not histories"),
        "{}",
        err(&o)
    );
    // A result map named on the command line is still an error.
    let o = ellery(&["check", s(&t.0.join("h/a.expected.edn"))]);
    assert_eq!(o.status.code(), Some(3));
}

#[test]
fn help_texts() {
    let top = out(&ellery(&["--help"]));
    assert!(top.contains("elle-cli mode"), "{top}");
    assert!(top.contains("255"), "{top}");
    let gen = out(&ellery(&["gen", "--help"]));
    assert!(!gen.contains("[`"), "rustdoc links in: {gen}");
    let o = ellery(&[
        "gen",
        "-w",
        "rw-register",
        "--fault",
        "dirty-write",
        "-n",
        "20",
    ]);
    assert_ne!(o.status.code(), Some(0));
    assert!(err(&o).contains("--fault dirty-write"), "{}", err(&o));
    assert!(!err(&o).contains("DirtyWrite"), "{}", err(&o));
}
