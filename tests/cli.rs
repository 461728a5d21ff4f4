//! The `ellery` binary: exit codes, error reporting, output formats, the
//! elle-cli compatible mode, `-d DIR` explanation files and `ellery gen`.
//! Histories are written inline into per-test temporary directories.

mod common;

use common::{s, Scratch};
use std::io::Write;
use std::process::{Command, Output, Stdio};

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

fn ellery(args: &[&str]) -> Output {
    ellery_stdin(args, None)
}

fn ellery_stdin(args: &[&str], stdin: Option<&[u8]>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ellery"))
        .args(args)
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("ellery binary runs");
    if let Some(bytes) = stdin {
        let mut pipe = child.stdin.take().expect("stdin pipe");
        let bytes = bytes.to_vec();
        // Write from a thread so a large input cannot deadlock against a
        // full stdout pipe.
        let writer = std::thread::spawn(move || pipe.write_all(&bytes));
        let out = child.wait_with_output().expect("ellery finishes");
        writer
            .join()
            .expect("writer thread")
            .expect("stdin written");
        return out;
    }
    child.wait_with_output().expect("ellery finishes")
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).expect("UTF-8 stdout")
}

fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).expect("UTF-8 stderr")
}

// ---------------------------------------------------------------------------
// Histories
// ---------------------------------------------------------------------------

/// Two processes, strictly sequential: an append, then a read that sees it.
const VALID: &str = "\
{:index 0, :time 10, :type :invoke, :process 0, :f :txn, :value [[:append :x 1]]}
{:index 1, :time 20, :type :ok, :process 0, :f :txn, :value [[:append :x 1]]}
{:index 2, :time 30, :type :invoke, :process 1, :f :txn, :value [[:r :x nil] [:append :y 5]]}
{:index 3, :time 40, :type :ok, :process 1, :f :txn, :value [[:r :x [1]] [:append :y 5]]}
";

/// Elle README's demo: a G1c cycle.
const G1C: &str = "[{:process 0, :type :ok, :value [[:append :x 1] [:r :y [1]]]}
 {:process 1, :type :ok, :value [[:append :x 2] [:append :y 1]]}
 {:process 2, :type :ok, :value [[:r :x [1 2]]]}]
";

/// Elle's result for the G1c demo under `serializable` (elle-compat.md
/// §2.4), with ops in the key order current Elle prints.
const G1C_RESULT: &str = "{:valid? false, :anomaly-types (:G1c), :anomalies {:G1c [{:cycle \
[{:index 1, :time -1, :type :ok, :process 1, :f nil, :value [[:append :x 2] [:append :y 1]]} \
{:index 0, :time -1, :type :ok, :process 0, :f nil, :value [[:append :x 1] [:r :y [1]]]} \
{:index 1, :time -1, :type :ok, :process 1, :f nil, :value [[:append :x 2] [:append :y 1]]}], \
:steps ({:type :wr, :key :y, :value 1, :a-mop-index 1, :b-mop-index 1} \
{:type :ww, :key :x, :value 1, :value' 2, :a-mop-index 0, :b-mop-index 0}), :type :G1c}]}, \
:not #{:read-committed}, \
:also-not #{:causal-cerone :consistent-view :cursor-stability :forward-consistent-view \
:monotonic-atomic-view :monotonic-snapshot-read :monotonic-view :parallel-snapshot-isolation \
:prefix :read-atomic :repeatable-read :serializable :snapshot-isolation :strong-read-committed \
:strong-serializable :strong-session-read-committed :strong-session-serializable \
:strong-session-snapshot-isolation :strong-snapshot-isolation :update-atomic :update-serializable}}";

/// Ops without `:process`: Elle analyses nothing.
const NO_PROCESS: &str = "[{:type :invoke, :f :txn, :value [[:append 1 1]]}
 {:type :ok, :f :txn, :value [[:append 1 1]]}
 {:type :invoke, :f :txn, :value [[:r 1 nil]]}
 {:type :ok, :f :txn, :value [[:r 1 [1]]]}]
";

const EMPTY_GRAPH: &str = "{:valid? :unknown, :anomaly-types (:empty-transaction-graph), \
:anomalies {:empty-transaction-graph true}, :not #{}, :also-not #{}}";

/// Write skew (G2-item over initial states) plus an internal read that
/// misses the txn's own append: exercises `:elle.list-append/init` and `...`.
const SKEW: &str = "[{:process 0, :type :ok, :value [[:r :x []] [:append :y 1]]}
 {:process 1, :type :ok, :value [[:r :y []] [:append :x 1]]}
 {:process 2, :type :ok, :value [[:append :z 1] [:r :z []]]}]
";

// ---------------------------------------------------------------------------
// Exit codes and result maps
// ---------------------------------------------------------------------------

#[test]
fn valid_history_exits_0() {
    let t = Scratch::new("valid");
    let p = t.file("valid.edn", VALID);
    let o = ellery(&["check", s(&p)]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), "{:valid? true}\n");
    assert_eq!(stderr(&o), "");
}

#[test]
fn g1c_demo_exits_1_with_elles_exact_map() {
    let t = Scratch::new("g1c");
    let p = t.file("g1c.edn", G1C);
    let o = ellery(&["check", "-c", "serializable", s(&p)]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(stdout(&o), format!("{G1C_RESULT}\n"));
    assert_eq!(stderr(&o), "");
    // A leading colon on the model name is accepted too.
    let o2 = ellery(&["check", "-c", ":serializable", s(&p)]);
    assert_eq!(o2.status.code(), Some(1));
    assert_eq!(o2.stdout, o.stdout);
}

#[test]
fn history_without_processes_exits_2_with_a_note() {
    let t = Scratch::new("unknown");
    let p = t.file("no-process.edn", NO_PROCESS);
    let o = ellery(&["check", s(&p)]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(stdout(&o), format!("{EMPTY_GRAPH}\n"));
    assert_eq!(
        stderr(&o),
        format!(
            "ellery: {}: all 4 ops lack an integer :process and were ignored (as Elle does)\n",
            p.display()
        )
    );
}

#[test]
fn several_files_combine_exit_codes() {
    let t = Scratch::new("many");
    let valid = t.file("valid.edn", VALID);
    let g1c = t.file("g1c.edn", G1C);
    let unknown = t.file("unknown.edn", NO_PROCESS);
    let bad = t.file("bad.edn", "[{:process 0, :type :ok");

    let o = ellery(&["check", "-c", "serializable", s(&valid), s(&unknown)]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stdout(&o),
        format!(
            ";; {}\n{{:valid? true}}\n;; {}\n{EMPTY_GRAPH}\n",
            valid.display(),
            unknown.display()
        )
    );

    let o = ellery(&[
        "check",
        "-c",
        "serializable",
        s(&unknown),
        s(&g1c),
        s(&valid),
    ]);
    assert_eq!(o.status.code(), Some(1));

    // Bad input wins over everything, but the good files are still reported
    // (`-q`: no final summary, so the error is the only stderr line).
    let o = ellery(&[
        "check",
        "-q",
        "-c",
        "serializable",
        s(&g1c),
        s(&bad),
        "--output",
        "summary",
    ]);
    assert_eq!(o.status.code(), Some(3));
    assert_eq!(stdout(&o), format!("{}\tinvalid\t:G1c\n", g1c.display()));
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
}

// ---------------------------------------------------------------------------
// Bad input: exit 3, nothing on stdout, one located line on stderr
// ---------------------------------------------------------------------------

/// Checks a bad file and returns its one stderr line after asserting exit
/// code 3, an empty stdout and the `ellery: <file>:<line>:<col>: ` prefix.
fn bad_input(contents: &str, line: u32, column: u32) -> String {
    let t = Scratch::new("bad");
    let p = t.file("bad.edn", contents);
    let o = ellery(&["check", s(&p)]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert_eq!(stdout(&o), "");
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    let prefix = format!("ellery: {}:{line}:{column}: ", p.display());
    assert!(
        err.starts_with(&prefix),
        "want prefix {prefix:?}, got {err:?}"
    );
    assert!(err.ends_with('\n'));
    err[prefix.len()..].trim_end().to_string()
}

#[test]
fn unterminated_vector_is_located() {
    let msg = bad_input(
        "[{:process 0, :type :ok, :value [[:append :x 1]]}\n {:process 1, :type :ok, :value [[:r :x [1]]]}\n",
        3,
        1,
    );
    assert_eq!(
        msg,
        "expected ] to close [ at line 1, column 1, found end of input"
    );
}

#[test]
fn non_map_element_is_located() {
    let msg = bad_input(
        "[{:process 0, :type :ok, :value [[:append :x 1]]}\n 42]\n",
        2,
        2,
    );
    assert_eq!(msg, "expected an op map, found 42");
}

#[test]
fn unknown_op_type_is_located() {
    let msg = bad_input(
        "{:process 0, :type :ok, :value [[:append :x 1]]}\n{:process 1, :type :okk, :value [[:r :x [1]]]}\n",
        2,
        20,
    );
    assert!(msg.contains(":okk"), "{msg}");
    assert!(msg.contains(":invoke :ok :fail :info"), "{msg}");
}

#[test]
fn double_invocation_is_located() {
    let msg = bad_input(
        "{:process 0, :type :invoke, :value [[:append :x 1]]}\n{:process 0, :type :invoke, :value [[:r :x nil]]}\n",
        2,
        1,
    );
    assert!(msg.contains("process 0"), "{msg}");
    assert!(msg.contains("line 1"), "names the open invocation: {msg}");
}

#[test]
fn missing_file_exits_3() {
    let t = Scratch::new("missing");
    let p = t.0.join("does-not-exist.edn");
    let o = ellery(&["check", s(&p)]);
    assert_eq!(o.status.code(), Some(3));
    assert_eq!(stdout(&o), "");
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with(&format!("ellery: {}: ", p.display())),
        "{err}"
    );
    assert!(err.contains("No such file or directory"), "{err}");
}

#[test]
fn unknown_consistency_model_lists_the_valid_names() {
    let t = Scratch::new("model");
    let p = t.file("g1c.edn", G1C);
    let o = ellery(&["check", "-c", "serializable,serializible", s(&p)]);
    assert_eq!(o.status.code(), Some(3));
    assert_eq!(stdout(&o), "");
    let err = stderr(&o);
    assert!(
        err.starts_with("ellery: Unknown consistency model (:serializible); known models are:"),
        "{err}"
    );
    for name in [
        ":serializable",
        ":strict-serializable",
        ":snapshot-isolation",
        ":read-committed",
        ":PL-SS",
        ":parallel-snapshot-isolation",
    ] {
        assert!(err.contains(&format!("{name} ")) || err.contains(&format!("{name}}}")));
    }
    let listed = &err[err.find("known models are:").expect("list")..];
    assert!(!listed.contains(":serializible"), "{err}");
}

#[test]
fn unknown_anomaly_name_is_rejected() {
    let t = Scratch::new("anomaly");
    let p = t.file("g1c.edn", G1C);
    let o = ellery(&["check", "-a", "G1x", s(&p)]);
    assert_eq!(o.status.code(), Some(3));
    assert_eq!(stdout(&o), "");
    let err = stderr(&o);
    assert!(
        err.starts_with("ellery: Unknown anomaly type (:G1x); known anomaly types are:"),
        "{err}"
    );
    assert!(
        err.contains(":G1c ") && err.contains(":lost-update "),
        "{err}"
    );
    // A known name is accepted.
    let o = ellery(&["check", "-a", "G1c", s(&p)]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
}

#[test]
fn usage_errors_exit_3() {
    let o = ellery(&["check"]);
    assert_eq!(o.status.code(), Some(3));
    assert_eq!(stdout(&o), "");
    let t = Scratch::new("usage");
    let p = t.file("valid.edn", VALID);
    let o = ellery(&["check", "--output", "xml", s(&p)]);
    assert_eq!(o.status.code(), Some(3));
    assert_eq!(stdout(&o), "");
    let o = ellery(&["check", "-s", "soon", s(&p)]);
    assert_eq!(o.status.code(), Some(3));
}

// ---------------------------------------------------------------------------
// Output formats
// ---------------------------------------------------------------------------

fn json(bytes: &[u8]) -> serde_json::Value {
    serde_json::from_slice(bytes).expect("valid JSON")
}

/// Every string in a JSON document, object keys included.
fn all_strings(v: &serde_json::Value, out: &mut Vec<String>) {
    match v {
        serde_json::Value::String(st) => out.push(st.clone()),
        serde_json::Value::Array(xs) => xs.iter().for_each(|x| all_strings(x, out)),
        serde_json::Value::Object(m) => {
            for (k, x) in m {
                out.push(k.clone());
                all_strings(x, out);
            }
        }
        _ => {}
    }
}

#[test]
fn json_output_drops_namespaces() {
    let t = Scratch::new("json");
    let g1c = t.file("g1c.edn", G1C);
    // `json` is elle-cli's `-v` layout (clojure.data.json/pprint)...
    let pretty = ellery(&["check", "-c", "serializable", "--output", "json", s(&g1c)]);
    assert_eq!(pretty.status.code(), Some(1));
    assert!(stdout(&pretty).starts_with("{\"valid?\":false,\n \"anomaly-types\":[\"G1c\"],\n"));
    assert_eq!(
        json(&pretty.stdout)["anomaly-types"],
        serde_json::json!(["G1c"])
    );
    // ... and `jsonl` the same document on one line.
    let o = ellery(&["check", "-c", "serializable", "--output", "jsonl", s(&g1c)]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(stdout(&o).lines().count(), 1, "one JSON document per line");
    assert_eq!(json(&o.stdout), json(&pretty.stdout));
    let v = json(&o.stdout);
    assert_eq!(v["valid?"], serde_json::json!(false));
    assert_eq!(v["anomaly-types"], serde_json::json!(["G1c"]));
    assert_eq!(v["not"], serde_json::json!(["read-committed"]));
    assert_eq!(v["also-not"].as_array().expect("array").len(), 21);
    let cycle = &v["anomalies"]["G1c"][0]["cycle"];
    assert_eq!(
        cycle[0],
        serde_json::json!({"index": 1, "time": -1, "type": "ok", "process": 1, "f": null,
                           "value": [["append", "x", 2], ["append", "y", 1]]})
    );
    // Key order follows Elle's op order.
    assert!(stdout(&o).contains(
        r#"{"index":1,"time":-1,"type":"ok","process":1,"f":null,"value":[["append","x",2],["append","y",1]]}"#
    ));

    let skew = t.file("skew.edn", SKEW);
    let o = ellery(&["check", "-c", "serializable", "--output", "jsonl", s(&skew)]);
    assert_eq!(o.status.code(), Some(1));
    let v = json(&o.stdout);
    assert_eq!(v["valid?"], serde_json::json!(false));
    assert_eq!(
        v["anomaly-types"],
        serde_json::json!(["G2-item", "internal"])
    );
    let step = &v["anomalies"]["G2-item"][0]["steps"][0];
    assert_eq!(step["type"], serde_json::json!("rw"));
    assert_eq!(step["value"], serde_json::json!("init"));
    assert_eq!(
        v["anomalies"]["internal"][0]["expected"],
        serde_json::json!(["...", 1])
    );
    let mut strings = Vec::new();
    all_strings(&v, &mut strings);
    assert!(strings.contains(&"init".to_string()));
    for st in &strings {
        assert!(
            !st.starts_with(':') && !st.contains('/'),
            "keyword leaked: {st}"
        );
    }

    let valid = t.file("valid.edn", VALID);
    let o = ellery(&["check", "--output", "json", s(&valid)]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(stdout(&o), "{\"valid?\":true}\n");
}

#[test]
fn summary_output_is_one_tab_separated_line_per_file() {
    let t = Scratch::new("summary");
    let g1c = t.file("g1c.edn", G1C);
    let valid = t.file("valid.edn", VALID);
    let unknown = t.file("unknown.edn", NO_PROCESS);
    let skew = t.file("skew.edn", SKEW);
    let o = ellery(&[
        "check",
        "-c",
        "serializable",
        "--output",
        "summary",
        s(&g1c),
        s(&valid),
        s(&unknown),
        s(&skew),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stdout(&o),
        format!(
            "{}\tinvalid\t:G1c\n{}\tvalid\n{}\tunknown\t:empty-transaction-graph\n{}\tinvalid\t:G2-item :internal\n",
            g1c.display(),
            valid.display(),
            unknown.display(),
            skew.display()
        )
    );
}

// ---------------------------------------------------------------------------
// elle-cli mode
// ---------------------------------------------------------------------------

#[test]
fn elle_cli_mode_lines_and_exit_codes() {
    let t = Scratch::new("ellecli");
    let g1c = t.file("g1c.edn", G1C);
    let valid = t.file("valid.edn", VALID);
    let unknown = t.file("unknown.edn", NO_PROCESS);

    let o = ellery(&["-m", "list-append", "-c", "serializable", s(&g1c)]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(stdout(&o), format!("{} \t false\n", g1c.display()));

    let o = ellery(&["-m", "list-append", s(&valid)]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(stdout(&o), format!("{} \t true\n", valid.display()));

    // Unknown is not a failure for elle-cli.
    let o = ellery(&["-m", "list-append", s(&unknown)]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(stdout(&o), format!("{} \t unknown\n", unknown.display()));

    let o = ellery(&[
        "-m",
        "list-append",
        "--consistency-models",
        "serializable",
        s(&valid),
        s(&unknown),
        s(&g1c),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stdout(&o),
        format!(
            "{} \t true\n{} \t unknown\n{} \t false\n",
            valid.display(),
            unknown.display(),
            g1c.display()
        )
    );
}

#[test]
fn elle_cli_mode_bad_input_exits_255() {
    let t = Scratch::new("ellecli-bad");
    let g1c = t.file("g1c.edn", G1C);
    let bad = t.file("bad.edn", "[{:process 0, :type :okk, :value []}]");
    let missing = t.0.join("missing.edn");
    for args in [
        vec!["-m", "list-append", s(&bad)],
        vec!["-m", "list-append", s(&missing)],
        vec!["-m", "list-append", "-c", "serializible", s(&g1c)],
        vec!["-m", "list-append", "-f", "yaml", s(&g1c)],
        vec!["-m", "rw-register", s(&g1c)],
    ] {
        let o = ellery(&args);
        assert_eq!(o.status.code(), Some(255), "{args:?}: {}", stderr(&o));
        assert_eq!(stdout(&o), "", "{args:?}");
        assert!(stderr(&o).starts_with("ellery: "), "{args:?}");
    }
}

#[test]
fn elle_cli_verbose_prints_the_analysis_as_json() {
    let t = Scratch::new("ellecli-json");
    let g1c = t.file("g1c.edn", G1C);
    let o = ellery(&["-m", "list-append", "-c", "serializable", "-v", s(&g1c)]);
    assert_eq!(o.status.code(), Some(1));
    let text = stdout(&o);
    assert!(text.lines().count() > 20, "pretty-printed: {text}");
    let v = json(&o.stdout);
    assert_eq!(v["valid?"], serde_json::json!(false));
    assert_eq!(v["anomaly-types"], serde_json::json!(["G1c"]));
    // Same analysis as `check` with elle-cli's default `-a G0`.
    let c = ellery(&[
        "check",
        "-c",
        "serializable",
        "-a",
        "G0",
        "--output",
        "json",
        s(&g1c),
    ]);
    assert_eq!(json(&c.stdout), v);
    // Newer elle-cli spelling.
    let o2 = ellery(&[
        "-m",
        "list-append",
        "-c",
        "serializable",
        "--output",
        "json",
        s(&g1c),
    ]);
    assert_eq!(o2.stdout, o.stdout);
}

/// Write skew between two concurrent mini-transactions (rw-register).
const MT_SKEW: &str = "\
{:index 0, :type :invoke, :process 0, :f :txn, :value [[:r :x nil] [:r :y nil] [:w :y 1]]}
{:index 1, :type :invoke, :process 1, :f :txn, :value [[:r :y nil] [:r :x nil] [:w :x 1]]}
{:index 2, :type :ok, :process 0, :f :txn, :value [[:r :x nil] [:r :y nil] [:w :y 1]]}
{:index 3, :type :ok, :process 1, :f :txn, :value [[:r :y nil] [:r :x nil] [:w :x 1]]}
";

/// A blind write: not a mini-transaction.
const BLIND: &str = "[{:process 0, :type :ok, :f :txn, :value [[:w :x 1]]}
 {:process 1, :type :ok, :f :txn, :value [[:r :x 1]]}]";

/// A cas register whose value 1 is written twice.
const CAS_REPEATED: &str = "{:process 0, :type :invoke, :f :write, :value 1}
{:process 0, :type :ok, :f :write, :value 1}
{:process 1, :type :invoke, :f :cas, :value [1 2]}
{:process 1, :type :ok, :f :cas, :value [1 2]}
{:process 0, :type :invoke, :f :cas, :value [2 1]}
{:process 0, :type :ok, :f :cas, :value [2 1]}
";

/// elle-cli mode takes `--algorithm` with `check`'s semantics and errors
/// (bad input exits 255 there).
#[test]
fn elle_cli_mode_takes_algorithm() {
    let t = Scratch::new("ellecli-alg");
    let skew = t.file("skew.edn", MT_SKEW);
    let blind = t.file("blind.edn", BLIND);
    let cas = t.file("cas.edn", CAS_REPEATED);
    let rw = ["-m", "rw-register", "-c", "serializable"];
    for alg in ["auto", "mini"] {
        let o = ellery(&[&rw[..], &["--algorithm", alg, s(&skew)]].concat());
        assert_eq!(o.status.code(), Some(1), "{alg}: {}", stderr(&o));
        assert_eq!(stdout(&o), format!("{} \t false\n", skew.display()));
        // The same analysis as `check --algorithm`.
        let v = ellery(&[&rw[..], &["-v", "--algorithm", alg, s(&skew)]].concat());
        let c = ellery(&[
            "check",
            "-m",
            "rw-register",
            "-c",
            "serializable",
            "-a",
            "G0",
            "--algorithm",
            alg,
            "--output",
            "json",
            s(&skew),
        ]);
        assert_eq!(json(&v.stdout), json(&c.stdout), "{alg}");
        assert_eq!(
            json(&v.stdout)["anomaly-types"],
            serde_json::json!(["G2-item"])
        );
    }
    // Auto falls back to the inference; an explicit mini says why not.
    let o = ellery(&[&rw[..], &["--algorithm", "auto", s(&blind)]].concat());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    for (args, message) in [
        (
            vec!["--algorithm", "mini", s(&blind)],
            "--algorithm mini: not a mini-transaction history with unique values: not a mini-transaction: [:w :x 1] is a blind write",
        ),
        (
            vec!["--algorithm", "lwt", s(&blind)],
            "--algorithm lwt applies to cas-register histories",
        ),
    ] {
        let o = ellery(&[&rw[..], &args[..]].concat());
        assert_eq!(o.status.code(), Some(255), "{args:?}");
        assert_eq!(stdout(&o), "");
        assert!(stderr(&o).contains(message), "{args:?}: {}", stderr(&o));
    }
    // cas-register: lwt needs unique values; the transactional algorithms
    // do not apply.
    let o = ellery(&["-m", "cas-register", "--algorithm", "auto", s(&cas)]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    for (alg, message) in [
        (
            "lwt",
            "cas.edn:5:1: --algorithm lwt: the unique-value chain does not apply to this op: it writes a value another op wrote",
        ),
        ("mini", "--algorithm mini applies to transactional histories"),
    ] {
        let o = ellery(&["-m", "cas-register", "--algorithm", alg, s(&cas)]);
        assert_eq!(o.status.code(), Some(255), "{alg}");
        assert!(stderr(&o).contains(message), "{alg}: {}", stderr(&o));
        // `check` gives the same error, exit 3.
        let o = ellery(&["check", "-m", "cas-register", "--algorithm", alg, s(&cas)]);
        assert_eq!(o.status.code(), Some(3), "{alg}");
        assert!(stderr(&o).contains(message), "{alg}: {}", stderr(&o));
    }
    // An unknown algorithm is a usage error: 255, elle-cli mode's one error
    // code (issue 20; elle-cli 0.1.9 itself exits 1 on option errors, which
    // reads as "invalid").
    let o = ellery(&[&rw[..], &["--algorithm", "fast", s(&skew)]].concat());
    assert_eq!(o.status.code(), Some(255));
}

/// `--verbose` names the path that ran and why, for cas registers too.
#[test]
fn verbose_says_which_algorithm_ran() {
    let t = Scratch::new("verbose-alg");
    let skew = t.file("skew.edn", MT_SKEW);
    let blind = t.file("blind.edn", BLIND);
    let cas = t.file("cas.edn", CAS_REPEATED);
    let unique = t.file("unique.edn", &CAS_REPEATED.replace("[2 1]", "[2 3]"));
    for (args, line) in [
        (
            vec!["-m", "rw-register", s(&skew)],
            "algorithm mini (auto: every committed transaction is a mini-transaction with unique values)",
        ),
        (
            vec!["-m", "rw-register", s(&blind)],
            "algorithm infer (auto: the op at index 0 is why the mini-transaction path does not apply: not a mini-transaction: [:w :x 1] is a blind write",
        ),
        (
            vec!["-m", "cas-register", s(&cas)],
            "algorithm auto (auto: per key, the lwt chain where written values are unique, else the wgl search (see :analyzer))",
        ),
        (
            vec!["-m", "cas-register", "--algorithm", "lwt", s(&unique)],
            "algorithm lwt (--algorithm lwt: every key's written values are unique)",
        ),
    ] {
        let o = ellery(&[&["check", "--verbose"][..], &args[..]].concat());
        assert!(o.status.code() == Some(0) || o.status.code() == Some(1));
        assert!(stderr(&o).contains(line), "{args:?}: {}", stderr(&o));
    }
}

// ---------------------------------------------------------------------------
// Explanation files
// ---------------------------------------------------------------------------

#[test]
fn directory_gets_one_explanation_file_per_type() {
    let t = Scratch::new("dir");
    let g1c = t.file("g1c.edn", G1C);
    let out = t.0.join("out");
    let o = ellery(&["check", "-c", "serializable", "-d", s(&out), s(&g1c)]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(stdout(&o), format!("{G1C_RESULT}\n"));
    let mut files: Vec<String> = std::fs::read_dir(&out)
        .expect("directory written")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    // The explanation, the SCC and cycle plots, and the HTML report.
    assert_eq!(files, ["G1c", "G1c.txt", "index.html", "sccs"]);
    let text = std::fs::read_to_string(out.join("G1c.txt")).expect("G1c.txt");
    assert_eq!(
        text,
        "G1c #0\n\
Let:\n  \
T1 = {:index 1, :time -1, :type :ok, :process 1, :f nil, :value [[:append :x 2] [:append :y 1]]}\n  \
T2 = {:index 0, :time -1, :type :ok, :process 0, :f nil, :value [[:append :x 1] [:r :y [1]]]}\n\
\n\
Then:\n  \
- T1 < T2, because T2 observed T1's append of 1 to key :y.\n  \
- However, T2 < T1, because T1 appended 2 after T2 appended 1 to :x: a contradiction!"
    );

    // Two cycle types, two files.
    let skew = t.file("skew.edn", SKEW);
    let out2 = t.0.join("out2");
    let o = ellery(&["check", "-c", "serializable", "-d", s(&out2), s(&skew)]);
    assert_eq!(o.status.code(), Some(1));
    let text = std::fs::read_to_string(out2.join("G2-item.txt")).expect("G2-item.txt");
    assert!(text.starts_with("G2-item #0\nLet:\n"), "{text}");
    assert!(
        text.contains("observed the initial (nil) state of :x, which T2 created by appending 1"),
        "{text}"
    );
    assert!(text.ends_with(": a contradiction!"), "{text}");

    // A valid history writes no explanation, only the HTML report.
    let valid = t.file("valid.edn", VALID);
    let out3 = t.0.join("out3");
    let o = ellery(&["check", "-d", s(&out3), s(&valid)]);
    assert_eq!(o.status.code(), Some(0));
    let written: Vec<String> = std::fs::read_dir(&out3)
        .expect("directory written")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(written, ["index.html"]);
}

// ---------------------------------------------------------------------------
// `ellery gen`
// ---------------------------------------------------------------------------

fn gen(args: &[&str]) -> Vec<u8> {
    let mut all = vec!["gen"];
    all.extend_from_slice(args);
    let o = ellery(&all);
    assert_eq!(o.status.code(), Some(0), "gen {args:?}: {}", stderr(&o));
    assert!(!o.stdout.is_empty());
    o.stdout
}

/// `ellery check [extra] -` on `history`; returns (exit code, stdout).
fn check_stdin(history: &[u8], extra: &[&str]) -> (Option<i32>, String) {
    let mut args = vec!["check"];
    args.extend_from_slice(extra);
    args.push("-");
    let o = ellery_stdin(&args, Some(history));
    (o.status.code(), stdout(&o))
}

#[test]
fn gen_is_deterministic() {
    let a = gen(&["-n", "300", "--seed", "42"]);
    let b = gen(&["-n", "300", "--seed", "42"]);
    let c = gen(&["-n", "300", "--seed", "43"]);
    assert!(a == b, "same seed, different bytes");
    assert!(a != c, "different seeds, same bytes");
    let text = String::from_utf8(a).expect("UTF-8");
    // One op per line: 300 invocations and 300 completions.
    assert_eq!(text.lines().count(), 600);
    assert!(text.starts_with("{:index 0, "), "{}", &text[..80]);
    let f1 = gen(&["-n", "300", "--seed", "42", "--fault", "write-skew"]);
    let f2 = gen(&["-n", "300", "--seed", "42", "--fault", "write-skew"]);
    assert!(f1 == f2);
}

#[test]
fn gen_strict_serializable_round_trips_as_valid() {
    let h = gen(&["-n", "2000", "--seed", "3"]);
    let (code, out) = check_stdin(&h, &[]);
    assert_eq!(code, Some(0), "{out}");
    assert_eq!(out, "{:valid? true}\n");
}

#[test]
fn gen_modes_are_valid_under_their_model_only() {
    for (mode, own, stronger, types) in [
        (
            "serializable",
            "serializable",
            "strict-serializable",
            ":G-nonadjacent-item-realtime :G-single-item-realtime",
        ),
        (
            "snapshot-isolation",
            "snapshot-isolation",
            "serializable",
            ":G2-item",
        ),
        (
            "read-committed",
            "read-committed",
            "snapshot-isolation",
            ":G-single-item :lost-update",
        ),
    ] {
        let h = gen(&["-n", "1000", "--seed", "5", "--mode", mode]);
        let (code, out) = check_stdin(&h, &["-c", own, "--output", "summary"]);
        assert_eq!((code, out.as_str()), (Some(0), "-\tvalid\n"), "{mode}");
        let (code, out) = check_stdin(&h, &["-c", stronger, "--output", "summary"]);
        assert_eq!(code, Some(1), "{mode} under {stronger}");
        assert_eq!(
            out,
            format!("-\tinvalid\t{types}\n"),
            "{mode} under {stronger}"
        );
    }
}

/// Each injected fault, checked under the default strict-serializable,
/// yields exactly these anomaly types (the generator's expectations, from
/// Elle's golden outputs, agree for every fault).
const FAULTS: [(&str, &str); 7] = [
    ("aborted-read", ":G1a"),
    ("intermediate-read", ":G-single-item :G1b"),
    ("lost-update", ":G-single-item :lost-update"),
    ("write-skew", ":G2-item"),
    ("stale-read", ":G-single-item-realtime"),
    ("cyclic-information-flow", ":G1c"),
    ("dirty-write", ":G0"),
];

#[test]
fn gen_faults_round_trip_as_invalid() {
    let mut wrong = Vec::new();
    for (fault, types) in FAULTS {
        for seed in ["1", "9"] {
            let h = gen(&["-n", "500", "--seed", seed, "--fault", fault]);
            let (code, out) = check_stdin(&h, &["--output", "summary"]);
            let want = format!("-\tinvalid\t{types}\n");
            if code != Some(1) || out != want {
                wrong.push(format!(
                    "{fault} seed {seed}: want exit 1 {want:?}, got {code:?} {out:?}"
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// `--sat-timeout` bounds the SAT checker in both modes: past it the
/// verdict is unknown (exit 2 for `check`; elle-cli's `unknown` line, exit
/// 0), never a hang and never a claim.
#[test]
fn sat_timeout_gives_unknown() {
    let t = Scratch::new("sat-timeout");
    let gen = ellery(&[
        "gen",
        "-w",
        "rw-register",
        "-n",
        "5000",
        "-k",
        "10",
        "--seed",
        "3",
    ]);
    assert_eq!(gen.status.code(), Some(0), "{}", stderr(&gen));
    let h = t.file("h.edn", &stdout(&gen));
    let sat = [
        "-m",
        "rw-register",
        "-c",
        "serializable",
        "--algorithm",
        "sat",
    ];
    let o = ellery(&[&["check"], &sat[..], &["--sat-timeout", "1", s(&h)]].concat());
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(stdout(&o), "{:valid? :unknown, :cause :timeout}\n");
    let o = ellery(&[&sat[..], &["--sat-timeout", "1", s(&h)]].concat());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), format!("{} \t unknown\n", h.display()));
    // Without the limit the same history is decided (a serializable database).
    let o = ellery(&[&["check"], &sat[..], &["--sat-timeout", "0", s(&h)]].concat());
    assert_eq!(stdout(&o), "{:valid? true}\n", "{}", stderr(&o));
}

/// Keys of two types in a list-append history: exit 3 with the position of
/// the first op using the second type, and no verdict.
#[test]
fn list_append_keys_of_mixed_types_are_an_input_error() {
    let t = Scratch::new("mixed-keys");
    let h = t.file(
        "h.edn",
        "{:type :invoke, :process 0, :f :txn, :value [[:append 1 1]]}
{:type :ok, :process 0, :f :txn, :value [[:append 1 1]]}
{:type :invoke, :process 0, :f :txn, :value [[:append :x 2] [:r 1 nil]]}
{:type :ok, :process 0, :f :txn, :value [[:append :x 2] [:r 1 [1]]]}
",
    );
    let o = ellery(&["check", s(&h)]);
    assert_eq!(o.status.code(), Some(3));
    assert_eq!(stdout(&o), "");
    assert_eq!(
        stderr(&o),
        format!(
            "ellery: {}:3:1: expected every key to be an integer like the first key, 1, found :x, which is a keyword\n",
            h.display()
        )
    );
}
