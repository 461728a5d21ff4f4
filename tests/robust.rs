//! `ellery robust`: the acceptance table of issue 19 (Nagar–Jagannathan's
//! results and the digest's N-1, N-3, N-4 oracles) as exact assertions; the
//! SAT engine against the explicit enumerator on every oracle and on random
//! small programs (`ELLERY_ROBUST_RANDOM_N`, default 40; also monotonicity
//! across models and proof soundness there); every witness as a
//! Jepsen history that `ellery check -c serializable` rejects with the same
//! cycle type; parse errors with line:column; no panic on mutated programs.

#[path = "common/robust.rs"]
mod robust_common;
use robust_common::{env_count, opts};

use ellery::robust::syntax::Model;
use ellery::robust::{self, exec::CycleType, Engine, Loaded, Method, Options, Proof, Verdict};
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

fn program(name: &str) -> (PathBuf, Loaded) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("test-histories/robust")
        .join(name);
    let src = std::fs::read_to_string(&path).unwrap();
    let l = robust::load(&src).unwrap_or_else(|e| panic!("{name}: {e}"));
    (path, l)
}

/// The expected answer of one query.
#[derive(Clone, Debug, PartialEq)]
enum Want {
    /// Not robust: the cycle type, the paper's description, the instances.
    Violation(CycleType, Option<&'static str>, usize),
    /// Robust up to k.
    None,
    /// Proved.
    Proved(Proof),
}

fn answer(l: &Loaded, o: &Options) -> Want {
    match robust::check(l, o).verdict {
        Verdict::NotRobust(w) => Want::Violation(w.kind, w.description, w.exec.descs.len()),
        Verdict::RobustUpTo(k) => {
            assert_eq!(k, o.k);
            Want::None
        }
        Verdict::Proved(p) => Want::Proved(p),
        Verdict::Unknown(why) => panic!("unknown: {why}"),
    }
}

use CycleType::*;
use Model::*;

/// One row of the acceptance table.
type Row = (&'static str, Vec<Model>, usize, Option<Method>, Want);

/// (file, models, k, proof method, expected). The bounded rows are checked
/// with both engines.
fn table() -> Vec<Row> {
    let lost = Want::Violation(GSingle, Some("lost update"), 2);
    let fork = Want::Violation(GNonadjacent, Some("long fork"), 4);
    let skew = Want::Violation(G2, Some("write skew"), 2);
    let mut t = vec![];
    // N-1: bank withdraw.
    for k in 2..=4 {
        t.push(("bank.rob", vec![Ec], k, None, lost.clone()));
        for m in [Psi, Si, Ser] {
            t.push(("bank.rob", vec![m], k, None, Want::None));
        }
    }
    t.push((
        "bank.rob",
        vec![Psi],
        4,
        Some(Method::ShortestPath),
        Want::Proved(Proof::ShortestPath(4)),
    ));
    // The inductive method fails for bank under PSI (digest N-1).
    t.push((
        "bank.rob",
        vec![Psi],
        4,
        Some(Method::Inductive),
        Want::None,
    ));
    t.push((
        "bank.rob",
        vec![Ser],
        4,
        Some(Method::Inductive),
        Want::Proved(Proof::Inductive(vec![vec![0]])),
    ));
    // N-9: the inductive driver still reports the EC lost update.
    t.push((
        "bank.rob",
        vec![Ec],
        4,
        Some(Method::Inductive),
        lost.clone(),
    ));
    // N-3: long fork.
    for m in [Ec, Cc, Psi, Pc, Si, Ser] {
        t.push(("long-fork.rob", vec![m], 3, None, Want::None));
        let k4 = if matches!(m, Ec | Cc | Psi) {
            fork.clone()
        } else {
            Want::None
        };
        t.push(("long-fork.rob", vec![m], 4, None, k4));
    }
    t.push((
        "long-fork.rob",
        vec![Si],
        4,
        Some(Method::Inductive),
        Want::Proved(Proof::Inductive(vec![vec![0]])),
    ));
    // N-4: write skew.
    for m in [Psi, Si] {
        t.push(("write-skew.rob", vec![m], 2, None, skew.clone()));
    }
    t.push(("write-skew.rob", vec![Ser], 2, None, Want::None));
    // TPC-C (§6.1): lost updates under EC at k = 2; under PSI nothing at
    // k = 2, 3 and a long fork at k = 4 (New-Order, Payment, two
    // Order-Status); nothing under SI at k = 4. (PSI is causal: the
    // write-conflict axiom alone admits a 3-instance G-single, as
    // `psi_is_causal` shows.)
    t.push(("tpcc.rob", vec![Ec], 2, None, lost.clone()));
    for k in 2..=3 {
        t.push(("tpcc.rob", vec![Psi], k, None, Want::None));
    }
    t.push(("tpcc.rob", vec![Psi], 4, None, fork.clone()));
    for k in 2..=4 {
        t.push(("tpcc.rob", vec![Si], k, None, Want::None));
    }
    // The same with order ids from the district counter (as TPC-C).
    t.push(("tpcc-counter.rob", vec![Ec], 2, None, lost.clone()));
    t.push(("tpcc-counter.rob", vec![Psi], 3, None, Want::None));
    t.push(("tpcc-counter.rob", vec![Psi], 4, None, fork.clone()));
    t.push(("tpcc-counter.rob", vec![Si], 4, None, Want::None));
    t
}

/// Whether the enumerator's search space is small enough for a test
/// (descriptors^k × visibility relations).
fn enumerable(l: &Loaded, k: usize) -> bool {
    let space = (l.an.descs.len() as f64).powi(k as i32) * 2f64.powi((k * (k - 1) / 2) as i32);
    space <= 300_000.0
}

#[test]
fn acceptance_table() {
    for (file, models, k, prove, want) in table() {
        let (_, l) = program(file);
        let engines: &[Engine] = if prove.is_some() || !enumerable(&l, k) {
            &[Engine::Sat]
        } else {
            &[Engine::Sat, Engine::Enumerate]
        };
        for &e in engines {
            let got = answer(&l, &opts(&models, k, prove, e));
            assert_eq!(got, want, "{file} {models:?} k={k} {prove:?} {e:?}");
        }
    }
}

/// Runs `ellery robust … --witness` and then `ellery check -c
/// serializable` on the history: the checker must reject it with the
/// witness's cycle type.
#[test]
fn witnesses_are_rejected_by_the_checker() {
    let bin = env!("CARGO_BIN_EXE_ellery");
    let dir = std::env::temp_dir().join(format!("ellery-robust-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut n = 0;
    let mut rows = table();
    rows.push((
        "courseware.rob",
        vec![Ec],
        2,
        None,
        Want::Violation(GSingle, None, 2),
    ));
    rows.push((
        "courseware-psi.rob",
        vec![],
        4,
        None,
        Want::Violation(GNonadjacent, None, 4),
    ));
    // Programs with ABORT (`tests/robust_abort.rs`): witnesses of
    // committed instances only.
    for (file, m, k, kind) in [
        ("long-fork-abort.rob", Ec, 6, GNonadjacent),
        ("tpcc-abort.rob", Ec, 2, GSingle),
        ("tpcc-abort.rob", Psi, 4, GNonadjacent),
        ("courseware-abort.rob", Ec, 2, GSingle),
    ] {
        rows.push((file, vec![m], k, None, Want::Violation(kind, None, 0)));
    }
    for (i, (file, models, k, prove, want)) in rows.into_iter().enumerate() {
        let Want::Violation(kind, _, _) = want else {
            continue;
        };
        if prove.is_some() {
            continue;
        }
        let (path, _) = program(file);
        let w = dir.join(format!("w{i}.edn"));
        let ms: Vec<&str> = models.iter().map(|m| m.name()).collect();
        let mut args = vec![
            "robust".to_string(),
            path.to_str().unwrap().to_string(),
            "-k".into(),
            k.to_string(),
            "--witness".into(),
            w.to_str().unwrap().to_string(),
        ];
        if !ms.is_empty() {
            args.extend(["-c".to_string(), ms.join(",")]);
        }
        let out = Command::new(bin).args(&args).output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(1),
            "{file}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let stdout = String::from_utf8(out.stdout).unwrap();
        assert!(
            stdout.contains(&format!(":type :{}", kind.elle_name())),
            "{stdout}"
        );
        let out = Command::new(bin)
            .args([
                "check",
                "-c",
                "serializable",
                "--output",
                "summary",
                w.to_str().unwrap(),
            ])
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(1),
            "{file}: the checker accepts the witness"
        );
        let line = String::from_utf8(out.stdout).unwrap();
        let types: Vec<&str> = line
            .trim()
            .split('\t')
            .nth(2)
            .unwrap_or("")
            .split(' ')
            .collect();
        assert!(
            types.contains(&format!(":{}", kind.elle_name()).as_str()),
            "{file} {models:?} k={k}: static {kind:?}, checker says {line}"
        );
        n += 1;
    }
    assert_eq!(n, 18, "witnesses checked");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn cli_exit_codes_and_outputs() {
    let bin = env!("CARGO_BIN_EXE_ellery");
    let (path, _) = program("bank.rob");
    let p = path.to_str().unwrap();
    let run = |args: &[&str]| {
        let o = Command::new(bin).args(args).output().unwrap();
        (
            o.status.code(),
            String::from_utf8(o.stdout).unwrap(),
            String::from_utf8(o.stderr).unwrap(),
        )
    };
    let (c, out, _) = run(&["robust", p, "-c", "psi", "-k", "3", "--output", "summary"]);
    assert_eq!(
        (c, out.trim_end()),
        (Some(0), format!("{p}\trobust up to k = 3").as_str())
    );
    let (c, out, _) = run(&["robust", p, "-c", "psi", "--prove", "shortest-path"]);
    assert_eq!((c, out.trim_end()), (Some(0), "{:robust? true, :proved true, :method :shortest-path, :path-length 4, :models [\"psi\"], :k 4}"));
    let (c, out, _) = run(&["robust", p, "-c", "ec", "-k", "2", "--output", "json"]);
    assert_eq!(c, Some(1));
    assert!(
        out.starts_with("{\"robust?\":false,\n \"instances\":2,"),
        "{out}"
    );
    let skew = p.replace("bank.rob", "write-skew.rob");
    let (c, out, _) = run(&["robust", &skew, "-c", "si", "-k", "2"]);
    assert_eq!((c, out.trim_end()), (Some(1), "{:robust? false, :instances 2, :witness {:instances [{:id 0, :txn \"TX\", :params {}, :sees [], :reads {\"T[1].v\" 0, \"T[1].Alive\" 1, \"T[2].v\" 0, \"T[2].Alive\" 1}, :writes {\"T[1].v\" -1}} {:id 1, :txn \"TY\", :params {}, :sees [], :reads {\"T[1].v\" 0, \"T[1].Alive\" 1, \"T[2].v\" 0, \"T[2].Alive\" 1}, :writes {\"T[2].v\" -1}}], :vis [], :ar [0 1], :cycle {:type :G2-item, :description \"write skew\", :steps [{:type :rw, :from 0, :to 1, :key \"T[2].v\"} {:type :rw, :from 1, :to 0, :key \"T[1].v\"}]}}, :models [\"si\"], :k 2}"));
    let tpcc = p.replace("bank.rob", "tpcc.rob");
    let (c, out, _) = run(&[
        "robust",
        &tpcc,
        "-c",
        "si",
        "-k",
        "4",
        "--timeout",
        "1",
        "--output",
        "summary",
    ]);
    assert_eq!(c, Some(2), "{out}");
    assert!(
        out.starts_with(&format!("{tpcc}\tunknown: timeout at k = ")),
        "{out}"
    );
    let (c, _, err) = run(&["robust", p, "-c", "nope"]);
    assert_eq!(c, Some(3));
    assert!(err.contains("not a model"), "{err}");
    let (c, _, err) = run(&["robust", p]);
    assert_eq!(c, Some(3));
    assert!(err.contains("no consistency model"), "{err}");
    let (c, _, err) = run(&["robust", "/nonexistent.rob", "-c", "ec"]);
    assert_eq!(c, Some(3), "{err}");
    for k in ["1", "13"] {
        let (c, out, err) = run(&["robust", p, "-c", "ec", "-k", k]);
        assert_eq!((c, out.as_str()), (Some(3), ""), "{err}");
        assert_eq!(
            err,
            format!("ellery: -k {k}: the bound must be between 2 and 12\n")
        );
    }
}

/// The library's bound: above MAX_K (visibility is one 64-bit mask per
/// instance) the answer is unknown, never "robust up to k".
#[test]
fn k_above_max_k_is_unknown() {
    let (_, l) = program("write-skew.rob");
    let o = opts(&[Ser], robust::MAX_K + 1, None, Engine::Enumerate);
    match robust::check(&l, &o).verdict {
        Verdict::Unknown(why) => assert_eq!(
            why,
            format!("k = {} is above the largest bound, 62", robust::MAX_K + 1)
        ),
        v => panic!("{v:?}"),
    }
}

#[test]
fn parse_errors_name_line_and_column() {
    let cases: &[(&str, &str)] = &[
        ("table T (id pk, v)\ntxn A() { SELECT w AS x FROM T; }\n", "2:18: table `T` has no field `w` (fields: id, v)"),
        ("table T (id, v)\n", "1:7: table `T` needs a primary key: mark a field with `pk`"),
        ("table T (id pk, v)\ntxn A(P) { SKIP; }\n", "2:7: parameter `P` has no domain: add `domain P: a..b` before `txn A`"),
        ("table T (id pk, v)\ntxn A() {\n  UPDATE T SET v = y WHERE id = 1;\n}\n", "3:20: unknown variable `y` (parameters, or locals assigned before this point)"),
        ("table T (id pk, v)\ntxn A() { SELECT v AS x FROM U; }\n", "2:30: unknown table `U` (tables are declared with `table` before use)"),
        ("table T (id pk, v)\ntxn A() { SELECT v AS x FROM T WHERE v ~ 1; }\n", "2:40: unexpected character '~'"),
        ("table T (id pk, v)\ntxn A() { IF 1 = 1 THEN { SKIP } \n", "3:1: expected a statement (SELECT, UPDATE, INSERT, DELETE, IF, FOREACH, SKIP, ABORT or `v = e`), found the end of the file"),
        ("table T (id pk, v)\ntxn A() { UPDATE T SET id = 2; }\n", "2:24: `id` cannot be set: key fields and `Alive` are not updated (use INSERT/DELETE)"),
        ("table T (id pk, v)\nmodel A: psi\n", "2:7: unknown transaction `A` (declare it before the `model` line)"),
        ("table T (id pk, v)\ntxn A() { SKIP; }\nmodel (A, A): pc\n", "3:15: a pair of transaction types scopes only `serializable` or `psi`"),
        ("table T (id pk, v)\n", "2:1: expected at least one `txn`, found the end of the file"),
        ("table T (id pk, v)\ntxn A() { INSERT INTO T (v = 1); }\n", "2:11: INSERT INTO T must give key field `id`"),
    ];
    for (src, want) in cases {
        let got = robust::load(src).map(|_| ()).unwrap_err().to_string();
        assert_eq!(&got, want, "{src}");
    }
    // The CLI prefixes the file name.
    let bin = env!("CARGO_BIN_EXE_ellery");
    let dir = std::env::temp_dir().join(format!("ellery-robust-parse-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("bad.rob");
    std::fs::write(&f, cases[0].0).unwrap();
    let o = Command::new(bin)
        .args(["robust", f.to_str().unwrap(), "-c", "ec"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(3));
    assert_eq!(
        String::from_utf8(o.stderr).unwrap(),
        format!("ellery: {}:{}\n", f.display(), cases[0].1)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A range whose width overflows i64 is a parse error, not a panic (debug) or
/// an unbounded allocation (release).
#[test]
fn init_range_wider_than_i64_is_a_parse_error() {
    let src = "table T (id pk, v)\ninit T { id: -9223372036854775807..9223372036854775807, v: 0 }\ntxn A() { SKIP; }\n";
    let got = robust::load(src).map(|_| ()).unwrap_err().to_string();
    assert!(
        got.contains("must be ascending and hold at most 1001 values"),
        "{got}"
    );
}

/// Ranges on several key fields multiply: their product is bounded at parse
/// time instead of building a billion-record universe.
#[test]
fn init_key_product_is_bounded() {
    let src = "table T (id pk, w pk, u pk, v)\ninit T { id: 1..1000, w: 1..1000, u: 1..1000, v: 0 }\ntxn A() { SKIP; }\n";
    let got = robust::load(src).map(|_| ()).unwrap_err().to_string();
    assert_eq!(got, "2:6: init of `T` names more than 10000 records");
    let ok =
        "table T (id pk, w pk, v)\ninit T { id: 1..100, w: 1..100, v: 0 }\ntxn A() { SKIP; }\n";
    assert!(robust::load(ok).is_ok());
}

/// Nesting is bounded at parse time: a file of 100 000 `(` (or NOT, or
/// nested IFs) is a parse error, not a stack overflow that aborts the
/// process; nesting under the bound parses and checks (on a test thread's
/// small stack).
#[test]
fn deep_nesting_is_a_parse_error() {
    let n = 100_000;
    let cases = [
        format!("txn A() {{ x = {}1{} }}", "(".repeat(n), ")".repeat(n)),
        format!("txn A() {{ IF {} 1 = 1 {{ SKIP }} }}", "NOT ".repeat(n)),
        format!(
            "txn A() {{ IF {}1 = 1{} {{ SKIP }} }}",
            "(".repeat(n),
            ")".repeat(n)
        ),
        format!(
            "txn A() {}{{ SKIP }}{}",
            "{ IF 1 = 1 ".repeat(n),
            " }".repeat(n)
        ),
        format!(
            "txn A() {{ DELETE FROM T WHERE {}v = 1{} }}",
            "(".repeat(n),
            ")".repeat(n)
        ),
    ];
    for body in &cases {
        let src = format!("table T (id pk, v)\n{body}\n");
        let got = robust::load(&src).map(|_| ()).unwrap_err().to_string();
        assert!(got.contains("nesting deeper than 128 levels"), "{got}");
    }
    let n = 100;
    let src = format!(
        "table T (id pk, v)\ninit T {{ id: 1, v: 0 }}\ntxn A() {{ SELECT v AS x FROM T WHERE {}id = 1{}; IF {}x = 0{} {{ UPDATE T SET v = {}x + 1{} WHERE id = 1 }} }}\n",
        "(".repeat(n),
        ")".repeat(n),
        "NOT NOT ".repeat(n / 2),
        "",
        "(".repeat(n),
        ")".repeat(n)
    );
    let l = robust::load(&src).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(answer(&l, &opts(&[Ser], 2, None, Engine::Sat)), Want::None);
}

/// The crate's seeded generator, drawing indices.
struct Rng(ellery::gen::Rng);
impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(ellery::gen::Rng::new(seed))
    }
    fn below(&mut self, n: usize) -> usize {
        self.0.below(n as u64) as usize
    }
}

/// A random program over one table of three possible records (two
/// initially alive): 2–3 transaction types, each a few statements among
/// reads, aggregates, conditional and unconditional updates, inserts,
/// deletes and loops; with `aborts`, also `ABORT` under a condition on a
/// value read (or in a loop over rows read), which leaves the draws
/// without it unchanged.
fn random_program(r: &mut Rng, aborts: bool) -> String {
    let mut s = String::from("table T (id pk, v)\ninit T { id: 1..2, v: 0 }\ndomain P: 1..3\n");
    for t in 0..2 + r.below(2) {
        let param = r.below(2) == 0;
        s.push_str(&format!("txn X{t}({}) {{\n", if param { "P" } else { "" }));
        let key = |r: &mut Rng| {
            if param && r.below(2) == 0 {
                "P".to_string()
            } else {
                (1 + r.below(3)).to_string()
            }
        };
        let mut locals: Vec<String> = vec![];
        let mut rows: Vec<String> = vec![];
        for i in 0..1 + r.below(3) {
            match if aborts { r.below(12) } else { r.below(9) } {
                9 | 10 if !locals.is_empty() => {
                    let l = &locals[r.below(locals.len())];
                    let op = ["=", "!=", ">"][r.below(3)];
                    s.push_str(&format!("  IF {l} {op} {} THEN {{ ABORT; }}\n", r.below(3)));
                }
                11 if !rows.is_empty() => {
                    let v = &rows[r.below(rows.len())];
                    s.push_str(&format!(
                        "  FOREACH x IN {v} {{ IF x.v = {} THEN {{ ABORT; }} ELSE {{ UPDATE T SET v = x.v + 1 WHERE id = x.id; }} }}\n",
                        r.below(3)
                    ));
                }
                0 | 1 => {
                    s.push_str(&format!(
                        "  SELECT v AS a{i} FROM T WHERE id = {};\n",
                        key(r)
                    ));
                    locals.push(format!("a{i}"));
                }
                2 => {
                    s.push_str(&format!(
                        "  SELECT id, v AS a{i} FROM T WHERE v < {};\n",
                        1 + r.below(3)
                    ));
                    rows.push(format!("a{i}"));
                }
                3 => {
                    let agg = ["MIN(id)", "MAX(v)", "COUNT(*)"][r.below(3)];
                    s.push_str(&format!("  SELECT {agg} AS a{i} FROM T;\n"));
                    locals.push(format!("a{i}"));
                }
                4 if !locals.is_empty() => {
                    let l = &locals[r.below(locals.len())];
                    s.push_str(&format!("  IF {l} = 0 THEN {{ UPDATE T SET v = {} WHERE id = {}; }} ELSE {{ SKIP; }}\n", 1 + r.below(3), key(r)));
                }
                5 => s.push_str(&format!(
                    "  INSERT INTO T (id = {}, v = {});\n",
                    key(r),
                    r.below(3)
                )),
                6 => s.push_str(&format!("  DELETE FROM T WHERE id = {};\n", key(r))),
                7 if !rows.is_empty() => {
                    let v = &rows[r.below(rows.len())];
                    s.push_str(&format!(
                        "  FOREACH x IN {v} {{ UPDATE T SET v = x.v + 1 WHERE id = x.id; }}\n"
                    ));
                }
                _ => s.push_str(&format!(
                    "  UPDATE T SET v = {} WHERE id = {};\n",
                    1 + r.below(3),
                    key(r)
                )),
            }
        }
        if aborts && r.below(2) == 0 {
            // An abort decided by a read, after the statements (so their
            // writes are undone).
            let k = key(r);
            let op = ["=", "!=", "<"][r.below(3)];
            s.push_str(&format!(
                "  SELECT v AS z FROM T WHERE id = {k};\n  IF z {op} {} THEN {{ ABORT; }}\n",
                r.below(3)
            ));
        }
        s.push_str("}\n");
    }
    s
}

#[test]
fn sat_agrees_with_the_enumerator_on_random_programs() {
    agree_on_random_programs(0x9E37_79B9_7F4A_7C15, false);
}

/// The same with `ABORT` in the programs: the engines agree on which
/// executions of committed instances exist.
#[test]
fn sat_agrees_with_the_enumerator_on_random_programs_with_abort() {
    agree_on_random_programs(0xA807_7ED0_0000_0019, true);
}

fn agree_on_random_programs(seed: u64, aborts: bool) {
    let n: usize = env_count("ELLERY_ROBUST_RANDOM_N", 40);
    let mut r = Rng::new(seed);
    let models = [Ec, Cc, Pc, Psi, Si, Ser];
    let mut with_abort = 0;
    for i in 0..n {
        let src = random_program(&mut r, aborts);
        with_abort += usize::from(src.contains("ABORT"));
        let l = robust::load(&src).unwrap_or_else(|e| panic!("{e}\n{src}"));
        let m = models[i % models.len()];
        for k in 2..=3 {
            let a = answer(&l, &opts(&[m], k, None, Engine::Sat));
            let b = answer(&l, &opts(&[m], k, None, Engine::Enumerate));
            let kind = |w: &Want| matches!(w, Want::Violation(..));
            assert_eq!(
                kind(&a),
                kind(&b),
                "program {i} under {m:?}, k = {k}: sat {a:?}, enumerator {b:?}\n{src}"
            );
            // Smallest witnesses first: the sizes agree.
            if let (Want::Violation(_, _, x), Want::Violation(_, _, y)) = (&a, &b) {
                assert_eq!(x, y, "{src}");
            }
            if m == Ser {
                assert_eq!(a, Want::None, "a violation under serializability\n{src}");
            }
            // Proofs are sound: a proved program has no bounded witness.
            for method in [Method::ShortestPath, Method::Inductive] {
                if let Want::Proved(_) = answer(&l, &opts(&[m], 4, Some(method), Engine::Sat)) {
                    assert!(
                        !kind(&b),
                        "{method:?} proves a program with a witness under {m:?}\n{src}"
                    );
                }
            }
        }
    }
    // The abort variant exercises ABORT in most programs.
    assert!(!aborts || with_abort * 2 >= n, "{with_abort} of {n}");
}

#[test]
fn mutated_programs_never_panic() {
    let alphabet: Vec<char> = "(){};:,.=<>!-+*/0123456789 \nabxyzIFSELECTUPDATEWHEREpkINSERTNULL∈"
        .chars()
        .collect();
    let mut r = Rng::new(12345);
    let n: usize = std::env::var("ELLERY_ROBUST_MUTATIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100);
    for file in [
        "long-fork.rob",
        "tpcc.rob",
        "courseware-psi.rob",
        "tpcc-abort.rob",
    ] {
        let base = std::fs::read_to_string(
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("test-histories/robust")
                .join(file),
        )
        .unwrap();
        let chars: Vec<char> = base.chars().collect();
        for i in 0..n {
            let mut c = chars.clone();
            for _ in 0..1 + r.below(3) {
                let at = r.below(c.len());
                match r.below(3) {
                    0 => {
                        c.remove(at);
                    }
                    1 => c.insert(at, alphabet[r.below(alphabet.len())]),
                    _ => c[at] = alphabet[r.below(alphabet.len())],
                }
            }
            let src: String = c.into_iter().collect();
            if let Ok(l) = robust::load(&src) {
                let o = Options {
                    models: vec![Psi],
                    k: 2 + i % 2,
                    prove: [None, Some(Method::Inductive), Some(Method::ShortestPath)][i % 3],
                    engine: if i % 4 == 0 {
                        Engine::Enumerate
                    } else {
                        Engine::Sat
                    },
                    timeout: Some(Duration::from_millis(200)),
                };
                let _ = robust::check(&l, &o);
            }
        }
    }
    // Domains too large are refused, not enumerated.
    let e = robust::load(
        "table T (id pk, v)\ndomain A: 1..1000\ndomain B: 1..1000\ntxn X(A, B) { SKIP; }\n",
    )
    .unwrap_err();
    assert_eq!(e.to_string(), "4:5: more than 10000 instances to choose from (transaction types × parameter values) by `X`: narrow the domains");
}

/// The k = 2 anomalies of a program, per unordered pair of transaction
/// types (a type with itself included): the witness's cycle type and
/// description.
fn pair_anomalies(
    l: &Loaded,
    models: &[Model],
    engine: Engine,
) -> Vec<(String, String, CycleType, Option<&'static str>)> {
    let nt = l.prog.txns.len();
    let mut out = vec![];
    for a in 0..nt {
        for b in a..nt {
            if let Some(w) = robust_common::pair_witness(l, models, engine, a, b) {
                out.push((
                    l.prog.txns[a].name.clone(),
                    l.prog.txns[b].name.clone(),
                    w.kind,
                    w.description,
                ));
            }
        }
    }
    out
}

/// Courseware under EC at k = 2: the paper's three kinds of anomaly
/// (capacity: Enroll × Enroll; duplicate names: AddStudent × AddStudent,
/// AddCourse × AddCourse; enrolment into a removed course or of a removed
/// student: Enroll × RemCourse, Enroll × RemStudent), plus the double
/// deletes this modelling also reports; both engines.
#[test]
fn courseware_k2_anomalies_under_ec() {
    let (_, l) = program("courseware.rob");
    let want = vec![
        ("AddStudent", "AddStudent", GSingle, Some("lost update")),
        ("AddCourse", "AddCourse", GSingle, Some("lost update")),
        ("RemStudent", "RemStudent", GSingle, Some("lost update")),
        ("RemStudent", "Enroll", G2, Some("write skew")),
        ("RemCourse", "RemCourse", GSingle, Some("lost update")),
        ("RemCourse", "Enroll", G2, Some("write skew")),
        ("Enroll", "Enroll", GSingle, Some("lost update")),
    ];
    let want: Vec<_> = want
        .into_iter()
        .map(|(a, b, t, d)| (a.to_string(), b.to_string(), t, d))
        .collect();
    // Both engines meet the same replay-confirmed anomaly first for every
    // pair (AddCourse × AddCourse: two inserts of one course, a lost
    // update; the paper's two courses with one name is a write skew the
    // search meets later).
    assert_eq!(pair_anomalies(&l, &[Ec], Engine::Sat), want, "Sat");
    assert_eq!(
        pair_anomalies(&l, &[Ec], Engine::Enumerate),
        want,
        "Enumerate"
    );
}

/// The strengthened Courseware: Enroll under PSI gives the paper's long
/// fork at k = 4 (two Enrolls of a new student into a new course, each
/// seeing only one of AddStudent, AddCourse); Enroll under SI has nothing
/// up to k = 5 (the 5-instance G2-item found before came from reading the
/// `Alive` of students a SELECT's WHERE does not match; the paper's
/// footprints read it only for matching records).
#[test]
fn courseware_strengthened() {
    let (_, l) = program("courseware-psi.rob");
    assert_eq!(answer(&l, &opts(&[], 3, None, Engine::Sat)), Want::None);
    assert_eq!(
        answer(&l, &opts(&[], 3, None, Engine::Enumerate)),
        Want::None
    );
    let fork = Want::Violation(GNonadjacent, Some("long fork"), 4);
    assert_eq!(answer(&l, &opts(&[], 4, None, Engine::Sat)), fork);
    let (_, l) = program("courseware-si.rob");
    assert_eq!(answer(&l, &opts(&[], 4, None, Engine::Sat)), Want::None);
    assert_eq!(answer(&l, &opts(&[], 5, None, Engine::Sat)), Want::None);
}

/// Digest N-2: the concrete lost update, without any solver: two withdraws
/// of 50 and 60 from a balance of 100 that see nothing.
#[test]
fn concrete_lost_update() {
    use ellery::robust::exec::{axioms_hold_at, dependencies, replay, Dep, Edge, Execution};
    use ellery::robust::syntax::{Axiom, Scope};
    let src = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("test-histories/robust/bank.rob"),
    )
    .unwrap()
    .replace("domain Amount: {30, 60}", "domain Amount: {50, 60}");
    let l = robust::load(&src).unwrap();
    let d = |id: i64, amount: i64| {
        l.an.descs
            .iter()
            .position(|d| d.params == [id, amount])
            .unwrap()
    };
    let ex = Execution {
        descs: vec![d(1, 50), d(1, 60)],
        vis: vec![0, 0],
    };
    let reps = replay(&l.prog, &l.an, &ex);
    let bal = l.an.uni.key(0, 1);
    assert_eq!(reps[0].fp.read_vals.get(&bal), Some(&Some(100)));
    assert_eq!(reps[1].fp.read_vals.get(&bal), Some(&Some(100)));
    assert_eq!(
        reps[0].fp.writes[&bal].0,
        ellery::robust::interp::AV::Known(Some(50))
    );
    assert_eq!(
        reps[1].fp.writes[&bal].0,
        ellery::robust::interp::AV::Known(Some(40))
    );
    // Elle's edges: ww to the next version, rw from a reader to the version
    // after the one it read (t1's own for t1, so none).
    assert_eq!(
        dependencies(&reps),
        vec![
            Edge {
                from: 0,
                to: 1,
                dep: Dep::Ww,
                key: bal
            },
            Edge {
                from: 1,
                to: 0,
                dep: Dep::Rw,
                key: bal
            }
        ]
    );
    let types = [0, 0];
    let holds = |m: Model| {
        axioms_hold_at(
            &[Axiom {
                model: m,
                scope: Scope::Global,
            }],
            &types,
            &ex.vis,
            &reps,
            1,
        )
    };
    assert!(holds(Ec));
    assert!(!holds(Psi));
    assert!(!holds(Ser));
    assert!(holds(Cc) && holds(Pc));
}

/// Digest N-6: a violation under a model is one under every weaker model
/// (SER ⊑ SI ⊑ PC ⊑ CC ⊑ EC, SI ⊑ PSI ⊑ EC), on random programs at k = 3.
#[test]
fn violations_propagate_to_weaker_models() {
    let n: usize = env_count("ELLERY_ROBUST_RANDOM_N", 40);
    let mut r = Rng::new(0xD1B5_4A32_D192_ED03);
    let weaker = [
        (Ser, Si),
        (Si, Pc),
        (Pc, Cc),
        (Cc, Ec),
        (Si, Psi),
        (Psi, Ec),
    ];
    for _ in 0..n {
        let src = random_program(&mut r, false);
        let l = robust::load(&src).unwrap();
        let bad = |m: Model| {
            matches!(
                answer(&l, &opts(&[m], 3, None, Engine::Sat)),
                Want::Violation(..)
            )
        };
        for (strong, weak) in weaker {
            if bad(strong) {
                assert!(
                    bad(weak),
                    "a violation under {strong:?} but not under {weak:?}\n{src}"
                );
            }
        }
    }
}

/// TPC-C under SI, inductive method (§6.1): with the MIN/MAX result and
/// key-lookup case splits (each Delivery reads no new order beyond its MIN,
/// and reads and writes the same customer) the 2-instance cycle guard is
/// discharged; Lemma 11's two-edge path condition is not, and cannot be by
/// any sound encoding: `tpcc_si_breaks_lemma_11_condition_2` replays a
/// valid SI execution that breaks it.
#[test]
fn tpcc_si_inductive_passes_the_guard() {
    let (_, l) = program("tpcc.rob");
    let delivery = l.prog.txns.iter().position(|t| t.name == "Delivery");
    let d = l.an.descs.iter().position(|d| Some(d.txn) == delivery);
    // MIN = NULL; 1 or 2 with the order's customer 1, 2 or no order row.
    assert_eq!(l.an.alts[d.unwrap()].len(), 7);
    let ax = robust::axioms(&l.prog, &[Si]);
    assert_eq!(
        robust::prove_inductive(&l, &ax, None),
        robust::ProofOutcome::Failed(
            "inductive: a two-edge dependency path ending ar-before both others is not excluded \
             (the encoding allows OrderStatus(2) -> Delivery(1) -> NewOrder(2,1,2,2))"
                .into()
        )
    );
}

/// Courseware under SI, shortest path: the failure names the chordless
/// path the encoding allows at the largest k tried (k = 3 keeps the test
/// short; `tests/robust_realize.rs` shows real chordless paths up to 8
/// edges and more, so the method cannot succeed for this program).
#[test]
fn courseware_si_shortest_path_names_its_path() {
    let (_, l) = program("courseware-si.rob");
    let ax = robust::axioms(&l.prog, &[]);
    assert_eq!(
        robust::prove_shortest_path(&l, &ax, 3, None),
        robust::ProofOutcome::Failed(
            "shortest-path: chordless dependency paths of every length up to 3 edges exist \
             (the encoding allows RemStudent(3) -> RemStudent(3) -> Enroll(3,2) -> AddCourse(2,1))"
                .into()
        )
    );
}

/// Why the paper's inductive proof of TPC-C under SI cannot go through
/// for `tpcc.rob`: a concrete execution, valid under SI, with a two-edge
/// path whose last instance is ar-before both others (Lemma 11's condition
/// 2 fails in a real execution, so no encoding sound for these programs
/// can prove it). In ar order: NewOrder n2 (order 2), NewOrder n1 (order
/// 1, sees n2: both advance the district counter), OrderStatus(1) (sees
/// both), Delivery (sees n2 only: its MIN is order 2, it never sees order
/// 1). OrderStatus →rw Delivery (customer 1's balance) →rw n1 (the new
/// order 1 the Delivery read as absent), and n1 is ar-first of the three.
/// The execution is serializable (no cycle): the path is harmless, but the
/// lemma cannot tell. With the paper's New-Order, which takes the order id
/// from the district counter, ids grow with ar, so n1 would be ar-before
/// n2 and (prefix consistency) visible to the Delivery; excluding the path
/// that way needs n2, a fourth instance outside the three of the pattern.
#[test]
fn tpcc_si_breaks_lemma_11_condition_2() {
    use ellery::robust::exec::{axioms_hold_at, best_cycle, dependencies, replay, Dep, Execution};
    let (_, l) = program("tpcc.rob");
    let desc = |name: &str, params: &[i64]| {
        let t = l.prog.txns.iter().position(|t| t.name == name).unwrap();
        l.an.descs
            .iter()
            .position(|d| d.txn == t && d.params == params)
            .unwrap()
    };
    let ex = Execution {
        descs: vec![
            desc("NewOrder", &[1, 2, 1, 1]),
            desc("NewOrder", &[2, 1, 2, 2]),
            desc("OrderStatus", &[1]),
            desc("Delivery", &[1]),
        ],
        vis: vec![0, 0b001, 0b011, 0b001],
    };
    let reps = replay(&l.prog, &l.an, &ex);
    let types: Vec<usize> = ex.descs.iter().map(|&d| l.an.descs[d].txn).collect();
    let ax = robust::axioms(&l.prog, &[Si]);
    assert!((0..4).all(|j| axioms_hold_at(&ax, &types, &ex.vis, &reps, j)));
    let key = |name: &str| {
        (0..l.an.uni.keys())
            .find(|&k| ellery::robust::witness::key_name(&l.prog, &l.an, k) == name)
            .unwrap()
    };
    let edges = dependencies(&reps);
    let has = |from, to, dep, k: &str| {
        edges
            .iter()
            .any(|e| (e.from, e.to, e.dep, e.key) == (from, to, dep, key(k)))
    };
    assert!(has(2, 3, Dep::Rw, "Customer[1].cbal"), "{edges:?}");
    assert!(has(3, 1, Dep::Rw, "NewOrders[1].Alive"), "{edges:?}");
    // Slot order is ar: n1 (slot 1) is before OrderStatus (2) and the
    // Delivery (3), so ¬ar(2, 1) ∧ ¬ar(3, 1).
    assert_eq!(best_cycle(4, &edges), None);
}

/// `psi` includes causal visibility (Sovran et al.'s PSI, which the paper
/// cites): a reader that sees a writer's effect sees what that writer saw.
/// The causality violation W1 → W2 → R (W2 saw W1, R sees W2 but not W1)
/// is valid under `ec` and invalid under `cc`, `psi`, `si`, in the replay
/// axioms and in both engines (as a 3-instance G-single under `ec` only).
#[test]
fn psi_is_causal() {
    use ellery::robust::exec::Execution;
    use ellery::robust::exec::{axioms_hold_at, best_cycle, classify, dependencies, replay};
    use ellery::robust::syntax::{Axiom, Scope};
    let src = "table X (id pk, v)\ninit X { id: 1..2, v: 0 }\n\
        txn W1() { UPDATE X SET v = 1 WHERE id = 1; }\n\
        txn W2() { SELECT v AS a FROM X WHERE id = 1; UPDATE X SET v = a WHERE id = 2; }\n\
        txn R() { SELECT v AS b FROM X WHERE id = 2; SELECT v AS c FROM X WHERE id = 1; }\n";
    let l = robust::load(src).unwrap();
    let ex = Execution {
        descs: vec![0, 1, 2],
        vis: vec![0, 0b01, 0b10],
    };
    let reps = replay(&l.prog, &l.an, &ex);
    let cycle = best_cycle(3, &dependencies(&reps)).unwrap();
    assert_eq!(classify(&cycle), GSingle);
    for (m, valid) in [(Ec, true), (Cc, false), (Psi, false), (Si, false)] {
        let ax = [Axiom {
            model: m,
            scope: Scope::Global,
        }];
        let ok = (0..3).all(|j| axioms_hold_at(&ax, &[0, 1, 2], &ex.vis, &reps, j));
        assert_eq!(ok, valid, "{m:?}");
    }
    let (_, tp) = program("tpcc.rob");
    for k in [3, 4] {
        let a = answer(&tp, &opts(&[Psi], k, None, Engine::Sat));
        let b = answer(&tp, &opts(&[Psi, Cc], k, None, Engine::Sat));
        assert_eq!(a, b, "k = {k}");
    }
}

/// Never-written keys are constants in the abstract reading: the student
/// names 10 and 11 of students 1 and 2 never change and never equal N = 1,
/// so AddStudent's name lookup does not read their Alive flags (it does
/// read those of students 3 and 4, whose names AddStudent writes).
#[test]
fn courseware_name_lookup_skips_constant_names() {
    let (_, l) = program("courseware-si.rob");
    let student = l.prog.tables.iter().position(|t| t.name == "Student");
    let student = student.expect("Student table");
    let alive = l.prog.tables[student].alive();
    let add = l.prog.txns.iter().position(|t| t.name == "AddStudent");
    let d = l.an.descs.iter().position(|d| Some(d.txn) == add).unwrap();
    let read_alive: Vec<i64> = l.an.uni.by_table[student]
        .iter()
        .filter(|&&rec| {
            let k = l.an.uni.key(rec, alive);
            l.an.footprints[d].reads.contains_key(&k)
        })
        .map(|&rec| l.an.uni.recs[rec].1[0])
        .collect();
    assert_eq!(read_alive, vec![3, 4]);
}

/// The proof methods' refinements (first writers, `IF a = b` pins, the
/// sparser rw relation) against the bounded enumerator, which knows none of
/// them: on random programs, with and without ABORT, under the models where
/// first writers apply (si, serializable, psi with pc) and psi alone, a
/// program proved by either method has no violation of up to 4 instances.
/// Caveat (28 Nov review): with either of the first two rules switched off
/// these programs are proved just as often, so this does not yet show that
/// those rules are sound; `tpcc_abort_si_inductive` is what needs them.
#[test]
fn proofs_agree_with_the_enumerator_up_to_4_on_random_programs() {
    let n: usize = env_count("ELLERY_ROBUST_RANDOM_N", 40);
    let mut r = Rng::new(0x5EED_0019_F1F7_0004);
    let models: [&[Model]; 4] = [&[Si], &[Psi, Pc], &[Ser], &[Psi]];
    let mut proved = 0;
    for i in 0..n {
        let src = random_program(&mut r, i % 2 == 1);
        let l = robust::load(&src).unwrap_or_else(|e| panic!("{e}\n{src}"));
        let m = models[i % models.len()];
        let mut any = false;
        for method in [Method::ShortestPath, Method::Inductive] {
            if let Want::Proved(_) = answer(&l, &opts(m, 4, Some(method), Engine::Sat)) {
                any = true;
            }
        }
        if any {
            proved += 1;
            let b = answer(&l, &opts(m, 4, None, Engine::Enumerate));
            assert!(
                !matches!(b, Want::Violation(..)),
                "program {i} proved under {m:?}, but the enumerator finds {b:?}\n{src}"
            );
        }
    }
    // Most draws are proved, so the check has something to check.
    assert!(proved * 4 >= n, "{proved} of {n} proved");
}
