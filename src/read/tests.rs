// Long (about 760 lines): one test per reader behaviour (layouts, values,
// errors, pairing, sharing), all against the same small histories.

use super::*;
use crate::edn::{parse_all, pr_str};
use crate::model::History;

fn read(src: &str) -> History {
    read_history_bytes(src.as_bytes().to_vec(), "t.edn", Format::Edn).unwrap()
}

fn read_err(src: &str) -> (u32, u32, String) {
    let e = read_history_bytes(src.as_bytes().to_vec(), "t.edn", Format::Edn).unwrap_err();
    assert_eq!(e.file, "t.edn");
    (e.line, e.column, e.message)
}

/// An op's value, decoded back to EDN text, so tests can compare exactly.
fn value_text(h: &History, op: &Op) -> String {
    match op.value {
        OpValue::Nil => "nil".into(),
        OpValue::Other(i) => format!("other {}", pr_str(&h.other_values[i as usize])),
        OpValue::Mops { .. } => {
            let mops: Vec<String> = h
                .mops(op)
                .iter()
                .map(|m| {
                    let f = match m.f() {
                        MopFn::Read => ":r".to_string(),
                        MopFn::Append => ":append".to_string(),
                        MopFn::Write => ":w".to_string(),
                        MopFn::Other(name) => {
                            format!("other {}", pr_str(&h.interner.fn_value(name)))
                        }
                        MopFn::PredRead | MopFn::PredWrite => {
                            return pr_str(&h.mop_value(m));
                        }
                    };
                    let arg = match m.arg() {
                        MopArg::Nil | MopArg::Pred(_) => "nil".to_string(),
                        MopArg::Atom(a) => pr_str(&h.atom_value(a)),
                        MopArg::List { .. } => {
                            let els: Vec<String> = h
                                .list(m.arg())
                                .iter()
                                .map(|&a| pr_str(&h.atom_value(a)))
                                .collect();
                            format!("list[{}]", els.join(" "))
                        }
                    };
                    format!("[{f} {} {arg}]", pr_str(&h.atom_value(m.key())))
                })
                .collect();
            format!("mops[{}]", mops.join(" "))
        }
    }
}

/// Every op as one line of text: index time type process f value.
fn summary(h: &History) -> Vec<String> {
    h.ops
        .iter()
        .map(|op| {
            format!(
                "{} {} {} {} {} {}",
                op.index,
                op.time,
                op.op_type.name(),
                op.process,
                pr_str(&h.atom_value(op.f)),
                value_text(h, op)
            )
        })
        .collect()
}

#[test]
fn line_per_op_with_dense_indices() {
    let h = read(
        "{:type :invoke, :f :txn, :value [[:append 1 2] [:r \"k\" nil]], :process 0, :time 5}\n\
         {:type :info, :f :start, :value nil, :process :nemesis}\n\
         \n\
         {:process 0 :type :ok :f :txn :value [[:append 1 2] [:r \"k\" [1 2 :x]]] :time 9}\n",
    );
    assert_eq!(
        summary(&h),
        vec![
            "0 5 invoke 0 :txn mops[[:append 1 2] [:r \"k\" nil]]",
            "2 9 ok 0 :txn mops[[:append 1 2] [:r \"k\" list[1 2 :x]]]",
        ]
    );
    assert_eq!(h.non_client_ops, 1);
    assert_eq!(h.pair, vec![1, 0]);
    assert_eq!(
        h.ops[0].span,
        Span {
            start: 0,
            len: 82,
            line: 1
        }
    );
    assert_eq!(h.ops[1].span.line, 4);
    // The same key reads as the same atom.
    assert_eq!(h.mops(&h.ops[0])[1].key(), h.mops(&h.ops[1])[1].key());
}

#[test]
fn vector_layout_comments_extra_keys() {
    let h = read(
        "; a comment\n[{:index 3, :process 1, :type :invoke, :f :read, :value nil}\n\
         ; between ops\n\
         #_ {:this \"is discarded\"}\n\
         {:index 4 :error [:bad \"}\" \\} {:nested {:x (1 2)}}] :exception {:via [{:type java.lang.Exception :at [a.b c \"D.java\" 1]}]}, \
           :process 1 :type :fail :f :read :debug #object[Foo 0x1a \"x\"] :value 3}\n\
         #jepsen.history.Op{:index 5 :process 2 :type :ok :f :read :value 1/2}\n\
         ] ; trailing comment\n",
    );
    assert_eq!(
        summary(&h),
        vec![
            "3 -1 invoke 1 :read nil",
            "4 -1 fail 1 :read other 3",
            "5 -1 ok 2 :read other 1/2",
        ]
    );
    assert_eq!(h.pair, vec![1, 0, NO_OP]);
    assert_eq!(h.ops[1].span.line, 5);
    assert_eq!(h.ops[2].span.line, 6);
}

#[test]
fn knossos_list_layout_without_index() {
    let h = read("({:process 0 :type :invoke :f :cas :value [1 2]}\n {:process 0, :type :ok, :f :cas, :value [1 2]})");
    assert_eq!(
        summary(&h),
        vec![
            "0 -1 invoke 0 :cas other [1 2]",
            "1 -1 ok 0 :cas other [1 2]"
        ]
    );
}

#[test]
fn value_shapes() {
    let h = read(
        "{:process 0 :type :ok :value []}\n\
         {:process 1 :type :ok :f \"str f\" :value [[:read 1 2] [:write :k nil] [:w 1 (3 4)] [:x [1] {:a 1}]]}\n\
         {:process 2 :type :ok :value [[:r 1]]}\n\
         {:process 3 :type :ok :value [[\"r\" 1 2]]}\n\
         {:process 4 :type :ok :value {:a 1}}\n\
         {:process 5 :type :ok :value \"s\\\"x\"}\n\
         {:process 6 :type :ok :value [[:r 1 2] 3]}\n\
         {:process 7 :type :ok :value [[:r 99999999999999999999 -4611686018427387905] [:append 1.5 \\c]]}\n\
         {:process 8 :type :ok :value #_ 1 [ #_ [:r 1 1] [:r , 2 , [5 #_ 6]] ]}\n",
    );
    assert_eq!(
        summary(&h),
        vec![
            "0 -1 ok 0 nil mops[]",
            "1 -1 ok 1 \"str f\" mops[[other :read 1 2] [other :write :k nil] [:w 1 list[3 4]] [other :x [1] {:a 1}]]",
            "2 -1 ok 2 nil other [[:r 1]]",
            "3 -1 ok 3 nil other [[\"r\" 1 2]]",
            "4 -1 ok 4 nil other {:a 1}",
            "5 -1 ok 5 nil other \"s\\\"x\"",
            "6 -1 ok 6 nil other [[:r 1 2] 3]",
            "7 -1 ok 7 nil mops[[:r 99999999999999999999N -4611686018427387905] [:append 1.5 \\c]]",
            "8 -1 ok 8 nil mops[[:r 2 list[5]]]",
        ]
    );
    // A rejected fast-path attempt leaves no stray micro-ops behind.
    assert_eq!(h.mops.len(), 4 + 2 + 1);
    assert_eq!(h.elements.len(), 2 + 1);
    // Large integers are interned, small ones inline.
    let m = h.mops(&h.ops[7])[0];
    assert!(m.key().as_int().is_none());
    assert!(matches!(m.arg(), MopArg::Atom(a) if a.as_int().is_none()));
}

#[test]
fn pairing() {
    let h = read(
        "{:process 1 :type :ok :f :r}\n\
         {:process 1 :type :invoke :f :r}\n\
         {:process 2 :type :invoke :f :r}\n\
         {:process 1 :type :info :f :r}\n\
         {:process 1 :type :invoke :f :r}\n",
    );
    assert_eq!(h.pair, vec![NO_OP, 3, NO_OP, 1, NO_OP]);
    assert_eq!(h.invocation_of(3), Some(1));
    assert_eq!(h.completion_of(2), None);
    assert_eq!(
        read_err(
            "{:process 3 :type :invoke}\n{:process 4 :type :invoke}\n  {:process 3 :type :invoke}"
        ),
        (
            3,
            3,
            "process 3 invoked again at line 3 before its invocation at line 1 completed".into()
        )
    );
}

#[test]
fn index_rules() {
    assert_eq!(
        read_err("{:index 0 :process 1 :type :invoke}\n{:process 1 :type :ok}"),
        (
            2,
            1,
            "expected an op map with an :index (the first op has one), found one without".into()
        )
    );
    assert_eq!(
        read_err("{:index \"a\" :process 1 :type :invoke}"),
        (
            1,
            9,
            "expected a non-negative integer :index, found \"a\"".into()
        )
    );
    assert_eq!(
        read_err("{:time 1.5 :process 1 :type :invoke}"),
        (1, 8, "expected an integer :time, found 1.5".into())
    );
    // Later indices are ignored when the first op has none.
    let h = read("{:process 1 :type :invoke}\n{:index 7 :process 1 :type :ok}");
    assert_eq!(h.ops[1].index, 1);
}

/// `:index` must grow with file order: a reordered or duplicated line is an
/// input error at that op (the checkers order processes by file position,
/// Elle's explanations by `:index`; the two must agree).
#[test]
fn indices_must_increase() {
    let msg = |last: u64, found: u64| {
        format!("expected an op with an :index greater than the previous op's ({last}), found :index {found} (ops must be in :index order, each once)")
    };
    assert_eq!(
        read_err("{:index 10 :process 0 :type :invoke}\n{:index 11 :process 0 :type :ok}\n  {:index 2 :process 0 :type :invoke}"),
        (3, 3, msg(11, 2))
    );
    // A duplicated line, even of a non-client op.
    let line = "{:index 4 :process :nemesis :type :info}";
    assert_eq!(read_err(&format!("{line}\n{line}")), (2, 1, msg(4, 4)));
    // Gaps are fine.
    let h = read("{:index 3 :process 1 :type :invoke}\n{:index 9 :process 1 :type :ok}");
    assert_eq!((h.ops[0].index, h.ops[1].index), (3, 9));
    // The JSON reader applies the same rule.
    let json = br#"[{"index": 1, "process": 0, "type": "invoke"}, {"index": 1, "process": 0, "type": "ok"}]"#;
    let e = crate::read::read_history_bytes(json.to_vec(), "j", crate::model::Format::Json)
        .expect_err("duplicate index");
    assert_eq!(e.message, msg(1, 1));
}

#[test]
fn errors() {
    assert_eq!(
        read_err("\"foo\""),
        (
            1,
            1,
            "expected a map or vector of op maps, found \"foo\"".into()
        )
    );
    assert_eq!(
        read_err("{:process 1\n :type :okk}"),
        (
            2,
            8,
            "expected :type to be one of :invoke :ok :fail :info, found :okk".into()
        )
    );
    assert_eq!(
        read_err("{:process 1 :type :ok :f :x :value [\n [:r 1 \"abc]]}"),
        (
            2,
            8,
            "unterminated string starting at line 2, column 8".into()
        )
    );
    assert_eq!(
        read_err("{:process 1 :type :ok :error \"abc"),
        (
            1,
            30,
            "unterminated string starting at line 1, column 30".into()
        )
    );
    assert_eq!(
        read_err("[{:process 1 :type :ok}\n {:process 1 :type :ok :value [1 2}]"),
        (
            2,
            35,
            "expected ] to close [ at line 2, column 31, found }".into()
        )
    );
    assert_eq!(
        read_err("[{:process 1 :type :ok}"),
        (
            1,
            24,
            "expected ] to close [ at line 1, column 1, found end of input".into()
        )
    );
    assert_eq!(
        read_err("{:process 1 :type :ok"),
        (
            1,
            22,
            "expected } to close { at line 1, column 1, found end of input".into()
        )
    );
    assert_eq!(
        read_err("[{:process 1 :type :ok}] {:process 2}"),
        (
            1,
            26,
            "expected end of input after the top-level [, found {:process 2}".into()
        )
    );
    assert_eq!(
        read_err("[{:process 1 :type :ok} 5]"),
        (1, 25, "expected an op map, found 5".into())
    );
    assert_eq!(
        read_err("{:process 1 :type :ok} 5"),
        (1, 24, "expected an op map, found 5".into())
    );
    assert_eq!(
        read_err("{:process 1 :type :ok :value}"),
        (1, 29, "expected a value for key :value, found }".into())
    );
    assert_eq!(
        read_err("{:process 1 :type :ok :type :ok}"),
        (
            1,
            23,
            "expected each key once in an op map, found :type twice".into()
        )
    );
    assert_eq!(
        read_err("{:process 1}"),
        (1, 1, "expected an op map with a :type, found none".into())
    );
    assert_eq!(
        read_err("{:process 1 :type :ok :value [[:r 1 (2 3]]}"),
        (
            1,
            41,
            "expected ) to close ( at line 1, column 37, found ]".into()
        )
    );
    assert_eq!(
        read_err("{:process 1 :type :ok ]"),
        (
            1,
            23,
            "expected } to close { at line 1, column 1, found ]".into()
        )
    );
    // Nothing at all is an empty history, not an error.
    assert_eq!(read("  ; nothing\n").ops.len(), 0);
    assert_eq!(read("[]").ops.len(), 0);
}

#[test]
fn json_history() {
    let src = br#"[{"index":0,"process":1,"type":"invoke","value":[["append",253,1],["r","x",null]]},
{"index":1,"process":1,"type":"ok","f":"txn","value":[["append",253,1],["r","x",[1,3]]],"error":{"why":"no"}},
{"index":2,"process":"nemesis","type":"info","value":"x"}]"#;
    let h = read_history_bytes(src.to_vec(), "t.json", Format::Json).unwrap();
    assert_eq!(
        summary(&h),
        vec![
            "0 -1 invoke 1 nil mops[[:append 253 1] [:r \"x\" nil]]",
            "1 -1 ok 1 :txn mops[[:append 253 1] [:r \"x\" list[1 3]]]",
        ]
    );
    assert_eq!(h.non_client_ops, 1);
    assert_eq!(h.ops[1].span.line, 2);
    assert_eq!(
        pr_str(&op_map(&h, &h.ops[1])),
        "{:index 1, :time -1, :type :ok, :process 1, :f :txn, :value [[:append 253 1] [:r \"x\" [1 3]]], :error {:why \"no\"}}"
    );
    let e = read_history_bytes(
        b"[{\"type\":\"okk\",\"process\":1}]".to_vec(),
        "t.json",
        Format::Json,
    )
    .unwrap_err();
    assert_eq!(
        (e.line, e.column, e.message.as_str()),
        (
            1,
            2,
            "expected :type to be one of :invoke :ok :fail :info, found :okk"
        )
    );
    let e =
        read_history_bytes(b"[{\"type\":\"ok\",}]".to_vec(), "t.json", Format::Json).unwrap_err();
    assert_eq!(
        (e.line, e.column, e.message.as_str()),
        (1, 15, "expected a string key, found }")
    );
}

#[test]
fn op_map_order() {
    let h = read(
        "{:type :invoke, :f :txn, :value [[:r 1 nil]], :extra 1, :process 0}\n\
         {:error [:x], :type :ok, :value [[:r 1 [2]]], :process 0, :time 7, :index 9}",
    );
    assert_eq!(
        pr_str(&op_map(&h, &h.ops[0])),
        "{:index 0, :time -1, :type :invoke, :process 0, :f :txn, :value [[:r 1 nil]], :extra 1}"
    );
    // The second op's own :index is ignored (the first op had none).
    assert_eq!(
        pr_str(&op_map(&h, &h.ops[1])),
        "{:index 1, :time 7, :type :ok, :process 0, :f nil, :value [[:r 1 [2]]], :error [:x]}"
    );
}

#[test]
fn formats() {
    assert_eq!(detect_format(Path::new("a/b.json")), Format::Json);
    assert_eq!(detect_format(Path::new("a/b.JSON")), Format::Json);
    assert_eq!(detect_format(Path::new("a/b.edn")), Format::Edn);
    assert_eq!(detect_format(Path::new("history")), Format::Edn);
    assert!(matches!(
        read_history_file(Path::new("/nonexistent/x.edn")),
        Err(Error::Io { .. })
    ));
}

/// The corpus directory, or `None` (with a message) when it is absent
/// outside CI.
fn corpus() -> Option<std::path::PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus");
    if dir.is_dir() {
        return Some(dir);
    }
    if std::env::var("CI").as_deref() == Ok("true") {
        panic!(
            "corpus directory {} is missing (required when CI=true)",
            dir.display()
        );
    }
    eprintln!("skipping: corpus directory {} not found", dir.display());
    None
}

fn files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            files(&p, out);
        } else if matches!(p.extension().and_then(|e| e.to_str()), Some("edn" | "json")) {
            out.push(p);
        }
    }
}

/// The slow path's answer for an EDN history: generic parse, then the
/// shared op builder.
fn read_generic(src: &[u8]) -> Option<History> {
    let forms = parse_all(src).ok()?;
    let ops = match forms.as_slice() {
        [Value::Vector(v)] | [Value::List(v)] => v.clone(),
        _ => forms,
    };
    let mut b = Builder::new(SourceText::Bytes(Arc::new(src.to_vec())), "g", Format::Edn);
    for m in ops {
        let m = match m {
            Value::Tagged(_, inner) => *inner,
            m => m,
        };
        let op = b.raw_op(src, m, Span::default()).ok()?;
        b.push(src, op).ok()?;
    }
    Some(b.finish())
}

#[test]
fn corpus_fast_reader_agrees_with_generic() {
    let Some(dir) = corpus() else { return };
    let mut all = Vec::new();
    files(&dir, &mut all);
    all.sort();
    let mut checked = 0;
    for p in all {
        if p.to_string_lossy().contains("elle-golden/results") {
            continue;
        }
        let bytes = std::fs::read(&p).unwrap();
        let fast = read_history_bytes(bytes.clone(), &p.display().to_string(), detect_format(&p));
        if detect_format(&p) == Format::Json {
            assert!(fast.is_ok(), "{}: {:?}", p.display(), fast.err());
            continue;
        }
        let slow = read_generic(&bytes);
        match (fast, slow) {
            (Ok(f), Some(s)) => {
                assert_eq!(summary(&f), summary(&s), "{}", p.display());
                assert_eq!(f.pair, s.pair, "{}", p.display());
                assert_eq!(f.non_client_ops, s.non_client_ops, "{}", p.display());
                checked += 1;
            }
            (Err(_), None) => {}
            (f, s) => panic!(
                "{}: fast {:?} vs generic ok={}",
                p.display(),
                f.err(),
                s.is_some()
            ),
        }
    }
    assert!(checked > 0);
}

#[test]
fn corpus_huge_scc() {
    let Some(dir) = corpus() else { return };
    let h = read_history_file(&dir.join("elle/huge-scc.edn")).unwrap();
    assert_eq!(h.ops.len() + h.non_client_ops, 20_602);
    assert_eq!(h.non_client_ops, 94);
    assert_eq!(
        h.ops.iter().filter(|o| o.op_type == OpType::Fail).count(),
        7_070
    );
    // 242 :info ops in all, 94 of them the nemesis's.
    assert_eq!(
        h.ops.iter().filter(|o| o.op_type == OpType::Info).count(),
        148
    );
    assert_eq!(h.ops[0].index, 0);
    assert_eq!(
        pr_str(&op_map(&h, &h.ops[0])),
        "{:index 0, :time 14532933, :type :invoke, :process 10, :f :txn, :value [[:append 11 1] [:r 11 nil] [:r 11 nil]]}"
    );
}

/// Elle's own printed result maps read and print back byte for byte.
#[test]
fn corpus_golden_results_round_trip() {
    let Some(dir) = corpus() else { return };
    let mut all = Vec::new();
    files(&dir.join("elle-golden/results"), &mut all);
    let mut checked = 0;
    for p in all
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "edn"))
    {
        let text = std::fs::read_to_string(p).unwrap();
        let v = crate::edn::parse_one(text.as_bytes()).unwrap();
        assert_eq!(pr_str(&v), text.trim_end(), "{}", p.display());
        checked += 1;
    }
    assert!(checked >= 84, "only {checked} result files");
}

/// Truncations and single-byte corruptions of a tricky history never panic:
/// each gives a history or an error.
#[test]
fn malformed_input_never_panics() {
    let base = "; c\n[{:index 0 :type :invoke :f :txn :process 0 :time 1 :value [[:append \"k\" 1] [:r 2 nil]]}\n\
                {:index 1 :type :ok :f :txn :process 0 :error #object[X 0x1 \"a\\\"\"] :x \\} :value [[:append \"k\" 1] [:r 2 (1 2N)]]}\n\
                #jepsen.history.Op{:index 2 :type :info :process :nemesis :value #{1 #_ 2} :m {\"é\" 1.5M}}]\n";
    let bytes = base.as_bytes();
    let replacements = b"{}[]()\"\\:#; \n0a,_^'N";
    for cut in 0..=bytes.len() {
        let _ = read_history_bytes(bytes[..cut].to_vec(), "t", Format::Edn);
        let _ = read_history_bytes(bytes[..cut].to_vec(), "t", Format::Json);
        let _ = crate::edn::parse_all(&bytes[..cut]);
    }
    for i in 0..bytes.len() {
        for &r in replacements.iter().chain([0xff, 0xc3].iter()) {
            let mut b = bytes.to_vec();
            b[i] = r;
            let _ = read_history_bytes(b.clone(), "t", Format::Edn);
            let _ = crate::edn::parse_all(&b);
        }
    }
    let json = br#"[{"index":0,"type":"ok","process":1,"value":[["r","x",[1,2]],["w","\u00e9",null]],"n":-1.5e3}]"#;
    for cut in 0..=json.len() {
        let _ = read_history_bytes(json[..cut].to_vec(), "t", Format::Json);
    }
    for i in 0..json.len() {
        for &r in replacements {
            let mut b = json.to_vec();
            b[i] = r;
            let _ = read_history_bytes(b, "t", Format::Json);
        }
    }
}

#[test]
fn json_lines_layout_and_errors() {
    let src = b"{\"type\":\"invoke\",\"process\":2,\"f\":\"read\",\"value\":null}\n{\"type\":\"ok\",\"process\":2,\"f\":\"read\",\"value\":{\"a\":[1,2]}}\n";
    let h = read_history_bytes(src.to_vec(), "t.json", Format::Json).unwrap();
    assert_eq!(
        summary(&h),
        vec![
            "0 -1 invoke 2 :read nil",
            "1 -1 ok 2 :read other {:a [1 2]}"
        ]
    );
    assert_eq!(h.pair, vec![1, 0]);
    assert_eq!(h.ops[1].span.line, 2);
    let e =
        read_history_bytes(b"[{\"type\":\"ok\"}] x".to_vec(), "t.json", Format::Json).unwrap_err();
    assert_eq!(
        (e.line, e.column, e.message.as_str()),
        (
            1,
            17,
            "expected end of input after the top-level array, found x"
        )
    );
    let e = read_history_bytes(b"[1]".to_vec(), "t.json", Format::Json).unwrap_err();
    assert_eq!(
        (e.line, e.column, e.message.as_str()),
        (1, 2, "expected an op object, found 1")
    );
    let e = read_history_bytes(b"\"x\"".to_vec(), "t.json", Format::Json).unwrap_err();
    assert_eq!(e.message, "expected an array of op objects, found \"x\"");
}

/// Predicate micro-ops read the same through the fast EDN path, the
/// generic path (an odd value elsewhere in the vector) and JSON, and print
/// back as written.
#[test]
fn predicate_mops_read_alike_on_every_path() {
    let edn = "{:index 0 :type :ok :process 0 :f :txn :value [[:rp [:and [:>= 1] [:not [:= 3]]] {:x 1, :y nil}] [:wp [:in #{4 5}] nil [:z]]]}\n";
    let odd = "{:index 0 :type :ok :process 0 :f :txn :value [[:rp [:and [:>= 1] [:not [:= 3]]] {:x 1, :y nil}] [:wp [:in #{4 5}] nil [:z]] [:r :k #{1}]]}\n";
    let json = r#"[{"index":0,"type":"ok","process":0,"f":"txn","value":[["rp",["and",[">=",1],["not",["=",3]]],{"x":1,"y":null}],["wp",["in",[4,5]],null,["z"]]]}]"#;
    let read = |text: &str, format| {
        crate::read::read_history_bytes(text.as_bytes().to_vec(), "t", format).unwrap()
    };
    for (h, n) in [
        (read(edn, Format::Edn), 2),
        (read(odd, Format::Edn), 3),
        (read(json, Format::Json), 2),
    ] {
        assert_eq!(h.predicates.len(), 2);
        let mops = h.mops(&h.ops[0]);
        assert_eq!(mops.len(), n);
        assert_eq!(mops[0].f(), MopFn::PredRead);
        assert_eq!(mops[1].f(), MopFn::PredWrite);
        let p = &h.predicates[0];
        assert!(p.pred.matches(Some(&crate::edn::Value::Int(2))));
        assert!(!p.pred.matches(Some(&crate::edn::Value::Int(3))));
        assert_eq!(p.rows.len(), 2);
        assert_eq!(p.rows[1].1, None);
        assert_eq!(h.predicates[1].write, Some(None));
        let printed = (
            pr_str(&h.mop_value(&mops[0])),
            pr_str(&h.mop_value(&mops[1])),
        );
        if h.format == Format::Edn {
            assert_eq!(
                printed.0,
                "[:rp [:and [:>= 1] [:not [:= 3]]] {:x 1, :y nil}]"
            );
            assert_eq!(printed.1, "[:wp [:in #{4 5}] nil [:z]]");
        } else {
            // JSON keys are strings, in RESULT objects too.
            assert_eq!(
                printed.0,
                r#"[:rp ["and" [">=" 1] ["not" ["=" 3]]] {"x" 1, "y" nil}]"#
            );
            assert_eq!(printed.1, r#"[:wp ["in" [4 5]] nil ["z"]]"#);
        }
    }
}

/// A repeated key in a long RESULT or KEYS (checked through a set) is the
/// same error as in a short one, on the fast and the generic path; distinct
/// keys read.
#[test]
fn repeated_keys_in_long_predicate_rows_are_errors() {
    let keys: Vec<String> = (0..40).map(|k| k.to_string()).collect();
    let result = |ks: &[String]| {
        let rows: Vec<String> = ks.iter().map(|k| format!("{k} 1")).collect();
        format!("{{{}}}", rows.join(" "))
    };
    let op = |mop: String, odd: bool| {
        let tail = if odd { " [:r :k #{1}]" } else { "" };
        format!("{{:index 0 :type :ok :process 0 :f :txn :value [{mop}{tail}]}}\n")
    };
    let read = |text: String| crate::read::read_history_bytes(text.into_bytes(), "t", Format::Edn);
    let mut repeated = keys.clone();
    repeated.push("7".into());
    for odd in [false, true] {
        let h = read(op(format!("[:rp [:< 3] {}]", result(&keys)), odd)).unwrap();
        assert_eq!(h.predicates[0].rows.len(), 40);
        let h = read(op(format!("[:wp [:< 3] 1 [{}]]", keys.join(" ")), odd)).unwrap();
        assert_eq!(h.predicates[0].rows.len(), 40);
        let e = read(op(format!("[:rp [:< 3] {}]", result(&repeated)), odd)).unwrap_err();
        assert!(
            e.message
                .ends_with("expected each key once in [:rp PRED RESULT], found 7 twice"),
            "{}",
            e.message
        );
        let e = read(op(format!("[:wp [:< 3] 1 [{}]]", repeated.join(" ")), odd)).unwrap_err();
        assert!(
            e.message
                .ends_with("expected each key once in [:wp PRED VALUE KEYS], found 7 twice"),
            "{}",
            e.message
        );
    }
}

/// A read of a prefix of the longest list read of its key so far points
/// into that list instead of storing a copy; lists read back whole, and a
/// rejected fast-path attempt (its lists dropped) is never pointed into.
#[test]
fn prefix_reads_share_elements() {
    let src = "{:index 0, :type :ok, :process 0, :f :txn, :value [[:r 1 [5 6]] [:r 2 [5]]]}
{:index 1, :type :ok, :process 0, :f :txn, :value [[:r 1 [5]] [:r 1 [5 6 7]] [:r 1 [5 6]] [:r 1 [6]] [:r 1 []]]}
{:index 2, :type :ok, :process 0, :f :txn, :value [[:r 3 [8 9]] 7]}
{:index 3, :type :ok, :process 0, :f :txn, :value [[:r 3 [8]] [:r 3 [8 9]]]}
";
    let h = read(src);
    let lists: Vec<Vec<i64>> = h
        .mops
        .iter()
        .map(|m| {
            h.list(m.arg())
                .iter()
                .map(|a| a.as_int().expect("int"))
                .collect()
        })
        .collect();
    let expected: Vec<Vec<i64>> = vec![
        vec![5, 6],
        vec![5],
        vec![5],
        vec![5, 6, 7],
        vec![5, 6],
        vec![6],
        vec![],
        vec![8],
        vec![8, 9],
    ];
    assert_eq!(lists, expected);
    // Stored: [5 6], [5] (key 2), [5 6 7], [6], then [8], [8 9] (the
    // rejected attempt's [8 9] is gone).
    assert_eq!(h.elements.len(), 2 + 1 + 3 + 1 + 1 + 2);
    assert_eq!(
        h.list(h.mops[2].arg()).as_ptr(),
        h.list(h.mops[0].arg()).as_ptr()
    );
    assert_eq!(
        h.list(h.mops[4].arg()).as_ptr(),
        h.list(h.mops[3].arg()).as_ptr()
    );
    assert!(matches!(h.other_values[0], Value::Vector(_)));
}

/// Integers around the 18 digits read without overflow checks, and past
/// them up to i64's bounds: the same values as before (and the generic
/// reader's); one digit more is an error for `:time`, a big integer for
/// a list element.
#[test]
fn integer_bounds() {
    let times = [
        ("999999999999999999", Some(999_999_999_999_999_999)),
        ("-999999999999999999", Some(-999_999_999_999_999_999)),
        ("1000000000000000000", Some(1_000_000_000_000_000_000)),
        ("+0012", Some(12)),
        ("9223372036854775807", Some(i64::MAX)),
        ("-9223372036854775807", Some(-i64::MAX)),
        ("000000000000000000000000042", Some(42)),
        ("9223372036854775808", None),
        ("9999999999999999999", None),
        ("99999999999999999999", None),
    ];
    for (t, want) in times {
        let src = format!("{{:type :invoke, :time {t}, :process 0, :value nil}}\n");
        match want {
            Some(n) => assert_eq!(read(&src).ops[0].time, n, "{t}"),
            None => {
                let (l, c, m) = read_err(&src);
                assert_eq!((l, c), (1, 23), "{t}");
                assert_eq!(m, format!("expected an integer :time, found {t}"));
            }
        }
    }
    let h = read(
        "{:type :ok, :process 0, :value [[:r 1 [4611686018427387903 123456789012345678 1234567890123456789 99999999999999999999]]]}\n",
    );
    assert_eq!(
        value_text(&h, &h.ops[0]),
        "mops[[:r 1 list[4611686018427387903 123456789012345678 1234567890123456789 99999999999999999999N]]]"
    );
}
