//! `ellery::report::json_pprint::pprint_json` against the real
//! `clojure.data.json/pprint` 2.4.0 (what elle-cli prints with `-v`).
//!
//! One JVM prints the references for every case: each golden result map in
//! `../shared/corpus/elle-golden/results`, hand-made maps that stress the
//! layout and the string escapes, and ellery's result for Elle's
//! `huge-scc.edn`. The JVM gets each value as EDN in which maps are
//! order-preserving array maps (`#ellery/omap [k v …]`) and sets are
//! vectors, so Clojure walks every collection in the order ellery stores it
//! (data.json prints sets and vectors alike). The golden files are also
//! read as they are, with sets made sorted as Elle builds them, to check
//! the same output arises from Elle's own collections.
//!
//! Without `java` or the Debian jars (`clojure`, `libdata-json-clojure`) the
//! comparison is skipped with a message, unless `CI=true`.

mod common;

use common::corpus_dir;
use ellery::edn::{parse_one, pr_str, Value};
use ellery::read::read_history_file;
use ellery::report::json_pprint::pprint_json;
use ellery::{Algorithm, CheckOptions, Workload};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

const CLOJURE_JAR: &str = "/usr/share/java/clojure.jar";
const DATA_JSON_JAR: &str = "/usr/share/java/data.json.jar";
const MARKER: &str = "@@ellery-json-pprint-end-of-case@@";

/// Prints every form of the file in `args[0]` (order-preserving maps), then
/// every golden file listed in `args[1]` read plainly with its sets sorted,
/// each followed by the marker line.
const SCRIPT: &str = r#"
(require '[clojure.data.json :as json] '[clojure.edn :as edn] '[clojure.java.io :as io])
(def marker "@@ellery-json-pprint-end-of-case@@")
(def readers
  {'ellery/omap (fn [kvs] (clojure.lang.PersistentArrayMap/createAsIfByAssoc (to-array kvs)))})
(defn sortify [x]
  (cond (map? x) (into (empty x)
                       (for [[k v] x]
                         [k (if (and (= k :duplicates) (map? v))
                              (into (sorted-map) (sortify v))
                              (sortify v))]))
        (set? x) (let [s (map sortify x)]
                   (try (into (sorted-set) s) (catch Exception _ (set s))))
        (vector? x) (mapv sortify x)
        (seq? x) (apply list (map sortify x))
        :else x))
(let [[forms-file golden-list] *command-line-args*]
  (with-open [r (java.io.PushbackReader. (io/reader forms-file))]
    (loop []
      (let [v (edn/read {:eof ::eof :readers readers} r)]
        (when-not (= v ::eof)
          (json/pprint v)
          (println marker)
          (recur)))))
  (doseq [path (clojure.string/split-lines (slurp golden-list))
          :when (seq path)]
    (json/pprint (sortify (edn/read-string (slurp path))))
    (println marker)))
(flush)
"#;

/// The value as EDN for the reference JVM: maps as `#ellery/omap [k v …]`
/// (insertion order kept at any size), sets as vectors, keys as they are.
fn reference_edn(out: &mut String, v: &Value) {
    match v {
        Value::Map(entries) => {
            out.push_str("#ellery/omap [");
            for (i, (k, v)) in entries.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                out.push_str(&pr_str(k));
                out.push(' ');
                reference_edn(out, v);
            }
            out.push(']');
        }
        Value::Vector(items) | Value::Set(items) => seq_edn(out, "[", "]", items),
        Value::List(items) => seq_edn(out, "(", ")", items),
        other => out.push_str(&pr_str(other)),
    }
}

fn seq_edn(out: &mut String, open: &str, close: &str, items: &[Value]) {
    out.push_str(open);
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        reference_edn(out, item);
    }
    out.push_str(close);
}

/// Whether the reference implementation can run here; panics under
/// `CI=true` when it cannot.
fn reference_available() -> bool {
    let java = Command::new("java")
        .arg("-version")
        .output()
        .is_ok_and(|o| o.status.success());
    let jars = Path::new(CLOJURE_JAR).is_file() && Path::new(DATA_JSON_JAR).is_file();
    if java && jars {
        return true;
    }
    let why = format!(
        "clojure.data.json reference unavailable (java: {java}, jars {CLOJURE_JAR} and \
         {DATA_JSON_JAR}: {jars}); install the Debian packages clojure and libdata-json-clojure"
    );
    if std::env::var("CI").as_deref() == Ok("true") {
        panic!("{why} (required under CI)");
    }
    eprintln!("skipping: {why}");
    false
}

/// Runs the reference JVM once over the forms and the listed golden files;
/// returns one output per case, in order.
fn reference_outputs(forms: &[Value], golden: &[PathBuf]) -> Vec<String> {
    let dir = std::env::temp_dir().join(format!("ellery-json-pprint-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let script = dir.join("reference.clj");
    let forms_file = dir.join("forms.edn");
    let golden_file = dir.join("golden.txt");
    std::fs::write(&script, SCRIPT).expect("write script");
    let mut text = String::new();
    for f in forms {
        reference_edn(&mut text, f);
        text.push('\n');
    }
    std::fs::write(&forms_file, text).expect("write forms");
    let list: String = golden
        .iter()
        .map(|p| format!("{}\n", p.display()))
        .collect();
    std::fs::write(&golden_file, list).expect("write golden list");

    let out = Command::new("java")
        // Deeply nested cases need more than the default stack.
        .arg("-Xss64m")
        .arg("-cp")
        .arg(format!("{CLOJURE_JAR}:{DATA_JSON_JAR}"))
        .arg("clojure.main")
        .arg(&script)
        .arg(&forms_file)
        .arg(&golden_file)
        .output()
        .expect("run java");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        out.status.success(),
        "reference JVM failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout).expect("ASCII output");
    let mut cases: Vec<String> = stdout
        .split(&format!("{MARKER}\n"))
        .map(str::to_string)
        .collect();
    assert_eq!(
        cases.pop().as_deref(),
        Some(""),
        "output ends with a marker"
    );
    assert_eq!(
        cases.len(),
        forms.len() + golden.len(),
        "one output per case"
    );
    cases
}

fn golden_results() -> Vec<PathBuf> {
    let Some(dir) = corpus_dir("elle-golden/results") else {
        return Vec::new();
    };
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("readable corpus")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "edn"))
        .collect();
    paths.sort();
    paths
}

fn kw(s: &str) -> Value {
    Value::kw(s)
}

fn s(x: &str) -> Value {
    Value::Str(x.to_string())
}

fn map(entries: Vec<(Value, Value)>) -> Value {
    Value::Map(entries)
}

fn ints(r: std::ops::Range<i64>) -> Value {
    Value::Vector(r.map(Value::Int).collect())
}

/// An op map as Elle prints them.
fn op(index: i64, value: Value) -> Value {
    map(vec![
        (kw("index"), Value::Int(index)),
        (kw("time"), Value::Int(1_000_000 + index * 7919)),
        (kw("type"), kw("ok")),
        (kw("process"), Value::Int(index % 5)),
        (kw("f"), kw("txn")),
        (kw("value"), value),
    ])
}

/// Hand-made values for layout and escaping corners.
fn constructed() -> Vec<(String, Value)> {
    let also_not = Value::Set(
        [
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
            "read-committed",
            "repeatable-read",
            "serializable",
            "snapshot-isolation",
            "strong-read-committed",
            "strong-serializable",
            "strong-session-read-committed",
            "strong-session-serializable",
            "strong-session-snapshot-isolation",
            "strong-snapshot-isolation",
            "update-serializable",
        ]
        .iter()
        .map(|n| kw(n))
        .collect(),
    );
    let mut deep = ints(0..3);
    for i in 0..30 {
        deep = if i % 2 == 0 {
            Value::Vector(vec![Value::Int(i), deep, s("x")])
        } else {
            map(vec![
                (kw(&format!("level-{i}")), deep),
                (kw("n"), Value::Int(i)),
            ])
        };
    }
    let long_str: String = (0..12).map(|i| format!("chunk {i} / \"q\" \\ ")).collect();
    let mut cases = vec![
        ("empty map".into(), map(vec![])),
        ("empty vector".into(), Value::Vector(vec![])),
        ("scalar string".into(), s("a/b")),
        ("scalar nil".into(), Value::Nil),
        (
            "21-entry also-not".into(),
            map(vec![
                (kw("valid?"), Value::Bool(false)),
                (kw("anomaly-types"), Value::List(vec![kw("G1c")])),
                (kw("not"), Value::Set(vec![kw("read-committed")])),
                (kw("also-not"), also_not.clone()),
            ]),
        ),
        ("bare also-not".into(), also_not),
        (
            "escapes".into(),
            map(vec![
                (s("key/with \"quotes\"\n"), s(&long_str)),
                (
                    kw("unicode"),
                    Value::Vector(vec![
                        s("caf\u{e9} \u{4e2d}\u{6587} \u{1f600} \u{2028}\u{2029} \u{7f}"),
                        s("\u{0}\u{1}\u{8}\u{9}\u{a}\u{b}\u{c}\u{d}\u{1b}\u{1f}\u{20}"),
                        s("\u{80}\u{ff}\u{100}\u{fff}\u{1000}\u{ffff}"),
                        s(""),
                    ]),
                ),
                (kw("elle.list-append/init"), kw("elle.list-append/init")),
                (
                    kw("symbols"),
                    Value::List(vec![
                        Value::Symbol("...".into()),
                        Value::Symbol("a.b/c".into()),
                    ]),
                ),
            ]),
        ),
        (
            "numbers and odd keys".into(),
            map(vec![
                (Value::Int(1), Value::Float("2.5".into())),
                (Value::Int(-7), Value::Float("1.0E10".into())),
                (Value::Bool(true), Value::Float("-0.0".into())),
                (
                    Value::BigInt("123456789012345678901234567890".into()),
                    Value::BigInt("-98765432109876543210".into()),
                ),
                (s(""), Value::Float("1.5M".into())),
                (
                    Value::Vector(vec![kw("a/b"), s("c")]),
                    Value::Float("1/3".into()),
                ),
                (
                    Value::Float("0.1".into()),
                    Value::Vector(vec![Value::Int(i64::MIN), Value::Int(i64::MAX)]),
                ),
            ]),
        ),
        (
            "nested empty collections".into(),
            map(vec![
                (kw("a"), Value::Vector(vec![])),
                (kw("b"), map(vec![])),
                (kw("c"), Value::Set(vec![])),
                (kw("d"), Value::List(vec![])),
                (
                    kw("e"),
                    Value::Vector(vec![
                        Value::Vector(vec![Value::Vector(vec![map(vec![])])]),
                        map(vec![(kw("x"), Value::Vector(vec![]))]),
                        Value::Vector(vec![]),
                    ]),
                ),
            ]),
        ),
        ("vector of 300 ints".into(), ints(0..300)),
        (
            "vector of big ints".into(),
            ints(1_000_000_000..1_000_000_040),
        ),
        (
            "vectors of vectors".into(),
            Value::Vector((0..25).map(|i| ints(0..(i % 7))).collect()),
        ),
        (
            "long strings in a vector".into(),
            Value::Vector((0..8).map(|i| s(&"abcdefghij".repeat(i * 2 + 1))).collect()),
        ),
        ("deep nesting".into(), deep),
        (
            "map with 12 entries and long values".into(),
            map((0..12)
                .map(|i| {
                    (
                        kw(&format!("key-number-{i}")),
                        if i % 3 == 0 {
                            ints(0..(i * 4))
                        } else if i % 3 == 1 {
                            s(&"v".repeat((i * 9) as usize))
                        } else {
                            op(i, ints(0..i))
                        },
                    )
                })
                .collect()),
        ),
        (
            "cycle with long mops".into(),
            map(vec![(
                kw("G-single"),
                Value::Vector(vec![map(vec![
                    (
                        kw("cycle"),
                        Value::Vector(
                            (0..4)
                                .map(|i| {
                                    op(
                                        i * 1000,
                                        Value::Vector(
                                            (0..6)
                                                .map(|k| {
                                                    Value::Vector(vec![
                                                        kw(if k % 2 == 0 { "r" } else { "append" }),
                                                        Value::Int(k * 11),
                                                        if k % 2 == 0 {
                                                            ints(1..(k * 5 + 2))
                                                        } else {
                                                            Value::Int(k + i)
                                                        },
                                                    ])
                                                })
                                                .collect(),
                                        ),
                                    )
                                })
                                .collect(),
                        ),
                    ),
                    (
                        kw("scc"),
                        Value::Set((0..70).map(|i| Value::Int(i * 13)).collect()),
                    ),
                    (kw("type"), kw("G-single")),
                ])]),
            )]),
        ),
    ];
    // Blocks starting at column 32 or later: miser mode.
    let mut nested = ints(0..25);
    for i in 0..20 {
        nested = Value::Vector(vec![Value::Int(i), nested, ints(0..(i % 4))]);
    }
    cases.push(("deep vectors".into(), nested));
    for depth in [30, 34, 45] {
        let mut v = Value::Vector(vec![ints(0..30), s("tail"), ints(0..5)]);
        for i in 0..depth {
            v = Value::Vector(vec![v, Value::Int(i)]);
        }
        cases.push((format!("vectors {depth} deep (miser)"), v));
        let mut m = map(vec![(kw("xs"), ints(0..20)), (kw("y"), s("why"))]);
        for i in 0..depth {
            m = map(vec![(kw("m"), m), (kw("i"), Value::Int(i))]);
        }
        cases.push((format!("maps {depth} deep (miser)"), m));
    }
    cases.push((
        "late vector (miser)".into(),
        Value::Vector(vec![
            ints(0..12),
            ints(100..130),
            s(&"z".repeat(30)),
            ints(0..40),
            Value::Vector((0..12).map(|i| ints(0..i)).collect()),
            map(vec![(kw("k"), ints(0..30)), (kw("l"), ints(0..3))]),
        ]),
    ));
    // Keys and values of every width around the margin.
    for w in 60..76 {
        cases.push((
            format!("widths {w}"),
            map(vec![
                (kw(&"k".repeat(w - 50)), s(&"x".repeat(w - 20))),
                (
                    kw("v"),
                    Value::Vector((0..3).map(|_| s(&"y".repeat(w - 40))).collect()),
                ),
                (
                    kw("nested"),
                    map(vec![(kw("inner"), ints(0..(w as i64 / 3)))]),
                ),
            ]),
        ));
    }
    cases
}

/// ellery's result for Elle's `huge-scc.edn` with the cycle search timing
/// out at once: deterministic (the default 1 s budget gives different
/// answers to debug and release builds), and long.
fn huge_scc_result() -> Option<Value> {
    let dir = corpus_dir("elle")?;
    let history = read_history_file(&dir.join("huge-scc.edn")).expect("readable huge-scc");
    let opts = CheckOptions {
        cycle_search_timeout: Duration::ZERO,
        ..CheckOptions::default()
    };
    let outcome = ellery::check(
        &history,
        &CheckOptions {
            algorithm: Algorithm::Infer,
            workload: Some(Workload::ListAppend),
            ..opts.clone()
        },
    )
    .expect("analyzable");
    Some(outcome.result)
}

/// The first and last lines of data.json's output for [`huge_scc_result`],
/// recorded from data.json 2.4.0, with the whole output's length and FNV-1a
/// hash.
const HUGE_SCC_HEAD: &str = r#"{"valid?":false,
 "anomaly-types":
 ["G2-item-realtime", "cycle-search-timeout",
  "strong-snapshot-isolation-cycle-exists"],
 "anomalies":
 {"G2-item-realtime":
  [{"cycle":
    [{"index":883,
      "time":5045374171,
      "type":"ok",
      "process":5,
      "f":"txn",
      "value":
      [["append", 9, 63],
       ["r", 13, [2, 3, 1, 9, 8, 4, 11, 10, 12, 13, 14, 15]],
       ["append", 13, 16]]},
     {"index":903,
      "time":5133172054,
      "type":"ok",
      "process":24,
"#;
const HUGE_SCC_TAIL: &str = r#"     4610, 4619, 4634, 4640, 4645, 4647, 4651, 4682, 4703, 4704, 4706,
     4708, 4721, 4728, 4741, 4742, 4778, 4780, 4792, 4797, 4813, 4848,
     4851, 4871, 4876, 4885, 4893, 4907, 4916, 4926, 4936, 4943, 4945,
     4970, 4973, 4979, 5000, 5025, 5033, 5049, 5056, 5066, 5072, 5077,
     5106, 5137, 5150, 5156, 5172, 5173, 5191, 5209, 5223, 5224, 5240,
     5259, 5278]}]},
 "not":["strong-snapshot-isolation"],
 "also-not":["strong-serializable"]}
"#;
const HUGE_SCC_LEN: usize = 105845;
const HUGE_SCC_FNV: u64 = 0x8c8ee7a0b95d5256;

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// A readable report of where two outputs first differ.
fn first_difference(ours: &str, theirs: &str) -> String {
    let mut report = String::new();
    for (i, (a, b)) in ours.lines().zip(theirs.lines()).enumerate() {
        if a != b {
            let _ = write!(
                report,
                "line {}:\n  ellery:    {a:?}\n  data.json: {b:?}",
                i + 1
            );
            return report;
        }
    }
    format!(
        "outputs differ in length: ellery {} lines, data.json {} lines",
        ours.lines().count(),
        theirs.lines().count()
    )
}

#[test]
fn huge_scc_output_is_the_recorded_one() {
    let Some(result) = huge_scc_result() else {
        return;
    };
    let ours = pprint_json(&result);
    assert_eq!(ours.len(), HUGE_SCC_LEN);
    assert!(ours.starts_with(HUGE_SCC_HEAD));
    assert!(ours.ends_with(HUGE_SCC_TAIL));
    assert_eq!(fnv1a(ours.as_bytes()), HUGE_SCC_FNV);
}

#[test]
fn pprint_json_matches_clojure_data_json() {
    let golden = golden_results();
    let mut cases: Vec<(String, Value)> = golden
        .iter()
        .map(|p| {
            let text = std::fs::read(p).expect("readable golden result");
            let v = parse_one(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            assert_eq!(
                pr_str(&v).as_bytes(),
                text.trim_ascii_end(),
                "{}",
                p.display()
            );
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, v)
        })
        .collect();
    if corpus_dir("elle-golden/results").is_some() {
        assert_eq!(golden.len(), 84, "golden result maps");
    }
    cases.extend(constructed());
    let huge = huge_scc_result();
    if let Some(r) = &huge {
        cases.push(("huge-scc (cycle search timed out)".into(), r.clone()));
    }
    if !reference_available() {
        return;
    }
    let forms: Vec<Value> = cases.iter().map(|(_, v)| v.clone()).collect();
    let started = Instant::now();
    let references = reference_outputs(&forms, &golden);
    eprintln!(
        "data.json printed {} references in {:.1} s",
        references.len(),
        started.elapsed().as_secs_f64()
    );
    let (by_order, by_elle) = references.split_at(forms.len());
    if huge.is_some() {
        // The recorded huge-scc output is data.json's own.
        let theirs = &by_order[forms.len() - 1];
        assert_eq!(
            theirs.len(),
            HUGE_SCC_LEN,
            "data.json's huge-scc output length"
        );
        assert_eq!(
            fnv1a(theirs.as_bytes()),
            HUGE_SCC_FNV,
            "data.json's huge-scc output"
        );
    }

    let mut failures = Vec::new();
    for ((name, v), theirs) in cases.iter().zip(by_order) {
        let ours = pprint_json(v);
        if &ours != theirs {
            failures.push(format!("{name}: {}", first_difference(&ours, theirs)));
        }
    }
    // Read by Clojure from the golden file itself, sets sorted as in Elle.
    for ((name, v), theirs) in cases.iter().zip(by_elle) {
        let ours = pprint_json(v);
        if &ours != theirs {
            failures.push(format!(
                "{name} (as Elle's collections): {}",
                first_difference(&ours, theirs)
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} outputs differ from data.json:\n{}",
        failures.len(),
        references.len(),
        failures.join("\n")
    );
}
