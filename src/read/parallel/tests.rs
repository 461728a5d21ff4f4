use super::*;
use crate::model::{MopArg, MopFn};

#[test]
fn cuts_fall_on_line_starts_and_increase() {
    let src = b"{:a 1}\n{:a 2}\n{:a 3}\n{:a 4}\n";
    let c = cuts(src, 4);
    assert!(!c.is_empty());
    assert!(c.windows(2).all(|w| w[0] < w[1]));
    assert!(c.iter().all(|&i| src[i] == b'{' && src[i - 1] == b'\n'));
}

/// Everything the reader fills in, printed (the interner through the
/// values of the atoms the ops use).
fn fingerprint(h: &crate::model::History) -> String {
    // Lists by their elements: a part shares read lists only with
    // the reads before it in the same part.
    let mops: Vec<String> = h
        .mops
        .iter()
        .map(|m| match m.arg() {
            MopArg::List { .. } => format!("{:?} {:?} {:?}", m.f(), m.key(), h.list(m.arg())),
            arg => format!("{:?} {:?} {arg:?}", m.f(), m.key()),
        })
        .collect();
    // Lines as `History::line` gives them (parts leave them unnumbered,
    // and it counts each from the start: about 500 of them).
    let ops: Vec<_> = h
        .ops
        .iter()
        .map(|o| crate::model::Op {
            span: crate::model::Span { line: 0, ..o.span },
            ..*o
        })
        .collect();
    let stride = (h.ops.len() / 500).max(1);
    let lines: Vec<u32> = (0..h.ops.len())
        .step_by(stride)
        .map(|i| h.line(i))
        .collect();
    let mut s = format!(
        "{:?}\n{lines:?}\n{:?}\n{:?}\n{:?}\n{} {} {:?}\n",
        ops,
        h.pair,
        mops,
        h.other_values,
        h.interner.len(),
        h.non_client_ops,
        h.nil_atom
    );
    for m in &h.mops {
        s += &format!("{:?} ", h.interner.value(m.key()));
    }
    for p in &h.predicates {
        s += &format!("{:?} {:?} ", p.form, p.pred);
        for (k, v) in &p.rows {
            s += &format!(
                "{:?}={:?} ",
                h.interner.value(*k),
                v.map(|v| h.interner.value(v))
            );
        }
        s += &format!("{:?} ", p.write.map(|w| w.map(|v| h.interner.value(v))));
    }
    for op in &h.ops {
        s += &format!("{:?} ", h.interner.value(op.f));
    }
    s
}

fn generated(seed: u64, workload: crate::gen::Workload) -> Vec<u8> {
    let opts = crate::gen::GenOptions {
        workload,
        txns: 300,
        seed,
        info_fraction: 0.1,
        fail_fraction: 0.1,
        ..Default::default()
    };
    let mut out = Vec::new();
    crate::gen::generate(&opts, &mut out).expect("generated");
    out
}

#[test]
fn parts_read_exactly_as_one_pass() {
    for seed in 0..20 {
        for w in [
            crate::gen::Workload::ListAppend,
            crate::gen::Workload::RwRegister,
        ] {
            let src = generated(seed, w);
            for parts in [2, 3, 7] {
                assert!(cuts(&src, parts).len() >= parts - 1, "cut into {parts}");
            }
            reads_as_one_pass(&src, &[2, 3, 7], &format!("seed {seed}"));
        }
    }
}

/// Reads `src` in one pass and cut into each of `parts` parts, asserts
/// the same history every time (`case` names it), and returns it.
fn reads_as_one_pass(src: &[u8], parts: &[usize], case: &str) -> crate::model::History {
    let one = crate::read::read_history_bytes(src.to_vec(), "h", crate::model::Format::Edn)
        .expect("reads");
    for &n in parts {
        let many = crate::read::read_edn_in_parts(src.to_vec(), "h", n).expect("reads");
        assert_eq!(fingerprint(&one), fingerprint(&many), "{case} parts {n}");
    }
    one
}

#[test]
fn predicate_histories_read_exactly_as_one_pass() {
    for seed in 0..5 {
        let opts = crate::gen::predicates::PredGenOptions {
            txns: 300,
            seed,
            ..Default::default()
        };
        let mut src = Vec::new();
        crate::gen::predicates::generate_predicates(&opts, &mut src).expect("generated");
        for parts in [2, 5] {
            assert!(!cuts(&src, parts).is_empty());
        }
        let one = reads_as_one_pass(&src, &[2, 5], &format!("seed {seed}"));
        assert!(one.has_predicates());
    }
}

/// Micro-op functions outside the built-ins keep one name per value on
/// every path, first seen in any part (issue 23 made names 4-byte
/// slots, which the join maps).
#[test]
fn other_functions_read_exactly_as_one_pass() {
    let fns = [
        "[:cas 1 [1 2]]",
        "[:foo :k 1]",
        "[:r 1 2]",
        "[:bar 2 3]",
        "[:foo :j nil]",
    ];
    let mut src = String::new();
    for i in 0..200 {
        let m = fns[(i / 40) % fns.len()];
        let (p, t) = (i % 5, 2 * i);
        src += &format!("{{:index {t}, :type :invoke, :process {p}, :f :txn, :value [{m}]}}\n");
        src += &format!(
            "{{:index {}, :type :ok, :process {p}, :f :txn, :value [{m}]}}\n",
            t + 1
        );
    }
    let src = src.into_bytes();
    let one = crate::read::read_history_bytes(src.clone(), "h", crate::model::Format::Edn)
        .expect("reads");
    let name = |h: &crate::model::History, i: usize| match h.mops[i].f() {
        MopFn::Other(n) => crate::edn::pr_str(&h.interner.fn_value(n)),
        f => format!("{f:?}"),
    };
    let names: std::collections::BTreeSet<String> =
        (0..one.mops.len()).map(|i| name(&one, i)).collect();
    assert_eq!(
        names.into_iter().collect::<Vec<_>>(),
        [":bar", ":cas", ":foo", "Read"]
    );
    for parts in [2, 3, 7] {
        assert!(cuts(&src, parts).len() >= parts - 1, "cut into {parts}");
        let many = crate::read::read_edn_in_parts(src.clone(), "h", parts).expect("reads");
        assert_eq!(fingerprint(&one), fingerprint(&many), "parts {parts}");
        for i in 0..one.mops.len() {
            assert_eq!(name(&one, i), name(&many, i), "parts {parts}, micro-op {i}");
        }
    }
}

#[test]
fn errors_are_the_one_pass_errors() {
    let ok = b"{:index 0 :type :invoke :process 0 :f :txn :value [[:r 1 nil]]}\n";
    let cases: Vec<Vec<u8>> = vec![
        // A string with a line starting with `{` inside it.
        [&ok[..], b"{:index 1 :type :ok :process 0 :f :txn :value [[:r 1 nil]] :note \"a\n{:b 1}\"}\n"].concat(),
        // A parse error in a later part.
        [&ok[..], b"{:index 1 :type :ok :process 0 :f :txn :value [[:r 1 nil]]}\n{:index 2 :type :bogus}\n"].concat(),
        // An index error that only joining sees.
        [&ok[..], b"{:index 0 :type :ok :process 0 :f :txn :value [[:r 1 nil]]}\n"].concat(),
        // A double invocation across parts.
        [&ok[..], b"{:index 1 :type :invoke :process 0 :f :txn :value [[:r 1 nil]]}\n"].concat(),
        // Unclosed map at the end.
        [&ok[..], b"{:index 1 :type :ok\n{:index 2}"].concat(),
    ];
    for src in cases {
        let one = crate::read::read_history_bytes(src.clone(), "h", crate::model::Format::Edn);
        for parts in [2, 3] {
            let many = crate::read::read_edn_in_parts(src.clone(), "h", parts);
            match (&one, &many) {
                (Ok(a), Ok(b)) => assert_eq!(fingerprint(a), fingerprint(b)),
                (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
                _ => panic!("one pass {one:?} vs parts {many:?}"),
            }
        }
    }
}

/// `text` with each `:process N` made `N * 70001 - 5`: negative and big
/// process ids, which the reader keeps apart from small ones.
fn spread_processes(text: &str) -> String {
    text.lines()
        .map(|l| {
            let at = l.find(":process ").expect("has :process") + ":process ".len();
            let end = at + l[at..].find(',').expect("a comma after");
            let p: i64 = l[at..end].parse().expect("an integer process");
            format!("{}{}{}\n", &l[..at], p * 70_001 - 5, &l[end..])
        })
        .collect()
}

/// Without `:index` (dense indices, shifted at each join) and with
/// ops of processes whose invocation and completion fall in different
/// parts: the parts join exactly as one pass reads; also with negative
/// and big process ids.
#[test]
fn unindexed_and_straddling_histories_read_exactly_as_one_pass() {
    for seed in 0..10 {
        let src = generated(seed, crate::gen::Workload::ListAppend);
        let text = String::from_utf8(src).expect("utf-8");
        let text = if seed % 2 == 1 {
            spread_processes(&text)
        } else {
            text
        };
        let unindexed: String = text
            .lines()
            .map(|l| {
                let cut = l.find(":time").expect("has :time");
                format!("{{{}\n", &l[cut..])
            })
            .collect();
        let src = unindexed.into_bytes();
        let one = crate::read::read_history_bytes(src.clone(), "h", crate::model::Format::Edn)
            .expect("reads");
        assert!(one.ops.iter().enumerate().all(|(i, o)| o.index == i as u64));
        for parts in [2, 5, 11] {
            let mut b = crate::read::Builder::new(
                crate::model::SourceText::Bytes(std::sync::Arc::new(src.clone())),
                "h",
                crate::model::Format::Edn,
            );
            assert!(read(&src, &mut b, parts), "parts {parts} join");
            let many = b.finish();
            assert_eq!(fingerprint(&one), fingerprint(&many), "seed {seed}");
            // Some pair straddles a cut.
            let c = cuts(&src, parts);
            let straddles = (0..many.ops.len()).any(|i| {
                many.completion_of(i).is_some_and(|j| {
                    let (a, b) = (many.ops[i].span.start, many.ops[j].span.start);
                    c.iter().any(|&x| a < x as u64 && x as u64 <= b)
                })
            });
            assert!(straddles, "seed {seed} parts {parts}");
        }
    }
}

/// An error in the second part names its own line and column, as the
/// one-pass reader does; so does a double invocation across the cut.
#[test]
fn an_error_in_part_two_names_its_line_and_column() {
    let line = |i: usize, t: &str| {
        format!("{{:index {i}, :type :{t}, :process 0, :f :txn, :value [[:r 1 nil]]}}\n")
    };
    let mut src = String::new();
    for i in 0..40 {
        src += &line(i, if i % 2 == 0 { "invoke" } else { "ok" });
    }
    let mut bad = src.clone();
    bad += "{:index 40, :type :invoke, :process 0, :f :txn, :value [[:r 1 nil] [:r 2 }\n";
    let e = crate::read::read_edn_in_parts(bad.into_bytes(), "h.edn", 2).expect_err("parse error");
    assert_eq!(e.line, 41, "{e}");
    assert_eq!(e.column, 74, "{e}");
    assert!(
        e.to_string()
            .starts_with("h.edn:41:74: expected ] to close [ at line 41, column 68"),
        "{e}"
    );
    // Line 40 completes line 39's invocation; line 41 invokes, line
    // 42 (in the last part) invokes again.
    // Line 41 is long, so the cut in two falls right after it.
    let mut twice = src.clone();
    let pad = "x".repeat(2 * src.len());
    twice += &line(40, "invoke").replace("}\n", &format!(" :note \"{pad}\"}}\n"));
    let second = twice.len();
    twice += &line(41, "invoke");
    assert_eq!(cuts(twice.as_bytes(), 2), vec![second]);
    let e =
        crate::read::read_edn_in_parts(twice.into_bytes(), "h.edn", 2).expect_err("pairing error");
    assert_eq!((e.line, e.column), (42, 1), "{e}");
    assert!(
        e.message
            .contains("process 0 invoked again at line 42 before its invocation at line 41"),
        "{e}"
    );
}

#[test]
fn blocks_read_exactly_as_one_pass() {
    let dir = std::env::temp_dir().join(format!("ellery-blocks-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    for seed in 0..10 {
        let src = generated(seed, crate::gen::Workload::ListAppend);
        let path = dir.join(format!("h{seed}.edn"));
        std::fs::write(&path, &src).expect("written");
        let one = crate::read::read_history_bytes(src.clone(), "h", crate::model::Format::Edn)
            .expect("reads");
        for (block, parts) in [
            (4096, None),
            (10_000, Some(2)),
            (1 << 20, None),
            (1 << 20, Some(3)),
        ] {
            let mut many = read_file(&path, "h", block, parts).expect("read in blocks");
            many.source = crate::model::SourceText::File(path.clone());
            assert_eq!(
                fingerprint(&one),
                fingerprint(&many),
                "seed {seed} block {block}"
            );
            let lines: Vec<u32> = one.ops.iter().map(|o| o.span.line).collect();
            let got: Vec<u32> = (0..many.ops.len()).map(|i| many.line(i)).collect();
            assert_eq!(lines, got);
        }
    }
    // What the block reader refuses, the whole read answers.
    let bad = dir.join("bad.edn");
    std::fs::write(&bad, b"{:index 0 :type :invoke :process 0 :f :txn :value [[:r 1 nil]]}\n{:index 0 :type :ok :process 0 :f :txn :value [[:r 1 nil]]}\n").expect("written");
    // Both lines fit in one block (4096) or each in its own (100): the
    // block reader itself must refuse the repeated index.
    for block in [4096, 100] {
        assert!(read_file(&bad, "bad", block, None).is_none(), "{block}");
        let e = crate::read::read_edn_file_in_blocks(&bad, block).expect_err("index error");
        assert!(e.to_string().contains(":index greater"), "{e}");
    }
    // A line longer than a block: refused, and the whole read reads it.
    let long = dir.join("long.edn");
    let src = b"{:index 0 :type :invoke :process 0 :f :txn :value [[:r 1 nil]]}\n{:index 1 :type :ok :process 0 :f :txn :value [[:r 1 nil]]}\n";
    std::fs::write(&long, src).expect("written");
    assert!(read_file(&long, "long", 32, None).is_none());
    let one = crate::read::read_history_bytes(src.to_vec(), "h", crate::model::Format::Edn)
        .expect("reads");
    let whole = crate::read::read_edn_file_in_blocks(&long, 32).expect("whole read");
    assert_eq!(fingerprint(&one), fingerprint(&whole));
    // The first block is a quarter of the others: a first line longer
    // than that grows it (not refused); blocks that end exactly where
    // the file does, or one byte before or after, read it all.
    let n = src.len();
    for block in [
        3 * n / 2,
        4 * n,
        4 * n - 4,
        4 * n + 4,
        n,
        n - 1,
        n + 1,
        2 * n,
    ] {
        let mut many = read_file(&long, "long", block, None).expect("read in blocks");
        many.source = crate::model::SourceText::File(long.clone());
        assert_eq!(fingerprint(&one), fingerprint(&many), "block {block}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// Parts leave their ops' lines unnumbered, and `History::line` counts
/// them: blank lines, comment lines and op maps spread over several lines,
/// in every part, give the one-pass reader's lines.
#[test]
fn parts_lines_count_as_one_pass() {
    let mut src = String::new();
    for i in 0..60 {
        let t = if i % 2 == 0 { "invoke" } else { "ok" };
        match i % 5 {
            0 => src += "\n",
            1 => src += "; a comment line\n\n",
            2 => src += "\r\n",
            _ => {}
        }
        if i % 7 == 3 {
            src += &format!("{{:index {i}, :type :{t},\n :process 0, :f :txn,\n :value [[:r 1 nil]\n [:append 2 {i}]]}}\n");
        } else {
            src +=
                &format!("{{:index {i}, :type :{t}, :process 0, :f :txn, :value [[:r 1 nil]]}}\n");
        }
    }
    let src = src.into_bytes();
    let one = crate::read::read_history_bytes(src.clone(), "h", crate::model::Format::Edn)
        .expect("reads");
    let lines: Vec<u32> = one.ops.iter().map(|o| o.span.line).collect();
    // Line 2: the first op follows a blank line; later ones spread.
    assert_eq!(lines[..4], [2, 5, 7, 8]);
    assert_eq!(lines.len(), 60);
    for parts in [2, 3, 7, 13] {
        assert!(cuts(&src, parts).len() + 1 >= parts.min(4), "parts {parts}");
        let many = crate::read::read_edn_in_parts(src.clone(), "h", parts).expect("reads");
        assert!(many.ops.iter().all(|o| o.span.line == 0), "parts {parts}");
        let got: Vec<u32> = (0..many.ops.len()).map(|i| many.line(i)).collect();
        assert_eq!(lines, got, "parts {parts}");
        assert_eq!(fingerprint(&one), fingerprint(&many), "parts {parts}");
    }
}

#[test]
fn a_vector_history_is_not_cut() {
    assert!(cuts(b"[{:a 1}\n{:a 2}]", 2).is_empty());
    assert!(cuts(b"{:a 1}\n{:a 2}", 1).is_empty());
}

/// A file read through its mapping reads as its bytes in memory do: the
/// same tables, lines, op texts and errors, whether or not it is cut into
/// parts; `check` takes that path from `MAP_FROM_BYTES`, and the history
/// then prints its ops from the mapping.
#[test]
fn mapped_files_read_exactly_as_their_bytes() {
    use crate::model::{Format, SourceText};
    let dir = std::env::temp_dir().join(format!("ellery-mapped-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let mut cases: Vec<(String, Vec<u8>)> = Vec::new();
    for seed in 0..4 {
        for w in [
            crate::gen::Workload::ListAppend,
            crate::gen::Workload::RwRegister,
        ] {
            cases.push((format!("{w:?} {seed}"), generated(seed, w)));
        }
    }
    let one_line = generated(9, crate::gen::Workload::ListAppend);
    let mut vector = b"[".to_vec();
    vector.extend_from_slice(&one_line);
    vector.extend_from_slice(b"]");
    cases.push(("a vector of ops".into(), vector));
    let mut bad = one_line.clone();
    let mid = bad.len() / 2;
    bad[mid] = b'}';
    cases.push(("a bad byte".into(), bad));
    let mut cut = one_line.clone();
    cut.truncate(cut.len() - 10);
    cases.push(("a cut last line".into(), cut));
    for (i, (case, src)) in cases.iter().enumerate() {
        let path = dir.join(format!("h{i}.edn"));
        std::fs::write(&path, src).expect("written");
        let name = path.display().to_string();
        let bytes = crate::read::read_history_bytes(src.clone(), &name, Format::Edn);
        let mapped = crate::read::read_edn_file_mapped(&path);
        match (bytes, mapped) {
            (Ok(a), Ok(b)) => {
                assert_eq!(fingerprint(&a), fingerprint(&b), "{case}");
                assert!(matches!(b.source, SourceText::Mapped(_)), "{case}");
                for (x, y) in a.ops.iter().zip(&b.ops) {
                    assert_eq!(x.span.line, y.span.line, "{case}");
                    assert_eq!(a.source.slice(x.span), b.source.slice(y.span), "{case}");
                }
                for pos in [0, a.ops.len() / 2, a.ops.len() - 1] {
                    assert_eq!(a.op_value(pos), b.op_value(pos), "{case}");
                }
            }
            (Err(a), Err(b)) => assert_eq!(crate::error::Error::from(a).to_string(), b.to_string()),
            (a, b) => panic!("{case}: {:?} against {:?}", a.map(|_| ()), b.map(|_| ())),
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// `check`'s own path for a file from `MAP_FROM_BYTES` on: read from the
/// mapping (cut into parts when the thread budget allows), kept as the
/// source, and the same history as its bytes read in memory.
#[test]
fn a_file_over_the_mapping_bound_is_read_from_its_mapping() {
    use crate::model::{Format, SourceText};
    let opts = crate::gen::GenOptions {
        workload: crate::gen::Workload::ListAppend,
        txns: 80_000,
        seed: 5,
        ..Default::default()
    };
    let mut src = Vec::new();
    crate::gen::generate(&opts, &mut src).expect("generated");
    assert!(
        src.len() >= super::super::MAP_FROM_BYTES,
        "{} bytes",
        src.len()
    );
    let dir = std::env::temp_dir().join(format!("ellery-map-bound-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("h.edn");
    std::fs::write(&path, &src).expect("written");
    let name = path.display().to_string();
    let one = crate::read::read_history_bytes(src, &name, Format::Edn).expect("reads");
    let mapped = crate::read::read_history_file(&path).expect("reads");
    assert!(matches!(mapped.source, SourceText::Mapped(_)));
    assert_eq!(fingerprint(&one), fingerprint(&mapped));
    let lines = |h: &crate::model::History| h.ops.iter().map(|o| o.span.line).collect::<Vec<_>>();
    assert_eq!(lines(&one), lines(&mapped));
    for pos in [0, one.ops.len() / 3, one.ops.len() - 1] {
        assert_eq!(one.op_value(pos), mapped.op_value(pos));
    }
    std::fs::remove_dir_all(&dir).ok();
}
