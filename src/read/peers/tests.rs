use super::*;
use crate::edn::pr_str;
use crate::model::Format;
use crate::model::OpType;
use crate::read::op_map;

/// Every op of a history, printed as Elle prints op maps; and checks that
/// the history is exactly what the EDN reader makes of its source text.
fn op_lines(h: &History) -> Vec<String> {
    assert_same_as_edn(h);
    h.ops.iter().map(|op| pr_str(&op_map(h, op))).collect()
}

/// Asserts that a converted history equals the EDN reading of its text.
pub(crate) fn assert_same_as_edn(h: &History) {
    let crate::model::SourceText::Bytes(text) = &h.source else {
        panic!("converted histories keep their text");
    };
    let e = crate::read::read_history_bytes(text.to_vec(), &h.origin, Format::Edn)
        .expect("the converted text is EDN");
    assert_eq!(h.ops, e.ops);
    assert_eq!(h.pair, e.pair);
    assert_eq!(h.mops, e.mops);
    assert_eq!(h.elements, e.elements);
    assert_eq!(h.other_values, e.other_values);
    assert_eq!(h.non_client_ops, e.non_client_ops);
    assert_eq!(h.nil_atom, e.nil_atom);
    assert_eq!(h.format, e.format);
    assert_eq!(h.interner.len(), e.interner.len());
    for op in &h.ops {
        for m in h.mops(op) {
            assert_eq!(h.atom_value(m.key()), e.atom_value(m.key()));
        }
    }
}

/// A dbcop history: per session, per transaction (events, success), where
/// an event is (write, key, value, success).
type DbcopSessions<'a> = &'a [&'a [(&'a [(bool, u64, u64, bool)], bool)]];

/// Encodes a dbcop `history.bincode` (bincode v1, little-endian).
fn dbcop_bytes(sessions: DbcopSessions) -> Vec<u8> {
    let mut b = Vec::new();
    let u = |b: &mut Vec<u8>, v: u64| b.extend_from_slice(&v.to_le_bytes());
    for v in [7, sessions.len() as u64, 3, 2, 2] {
        u(&mut b, v);
    }
    for s in [
        "PostgreSQL",
        "2022-07-22T21:44:17+08:00",
        "2022-07-22T21:44:18+08:00",
    ] {
        u(&mut b, s.len() as u64);
        b.extend_from_slice(s.as_bytes());
    }
    u(&mut b, sessions.len() as u64);
    for s in sessions {
        u(&mut b, s.len() as u64);
        for (events, ok) in s.iter() {
            u(&mut b, events.len() as u64);
            for &(w, k, v, ok) in events.iter() {
                b.push(w as u8);
                u(&mut b, k);
                u(&mut b, v);
                b.push(ok as u8);
            }
            b.push(*ok as u8);
        }
    }
    b
}

fn small_dbcop() -> Vec<u8> {
    dbcop_bytes(&[
        &[
            // Writes 1 to key 0 (a failed event is dropped), reads key 1's
            // initial value.
            (
                &[(true, 0, 1, true), (true, 2, 9, false), (false, 1, 0, true)],
                true,
            ),
            // Aborted.
            (&[(true, 1, 5, true)], false),
        ],
        &[(&[(false, 0, 1, true), (true, 1, 2, true)], true)],
    ])
}

#[test]
fn dbcop_converts_sessions_outcomes_and_initial_reads() {
    let h = parse_dbcop(&small_dbcop(), "h.bincode").unwrap();
    assert_eq!(
        op_lines(&h),
        [
            "{:index 0, :time -1, :type :invoke, :process 1, :f :txn, :value [[:w 0 1] [:r 1 nil]]}",
            "{:index 1, :time -1, :type :invoke, :process 2, :f :txn, :value [[:r 0 nil] [:w 1 2]]}",
            "{:index 2, :time -1, :type :ok, :process 1, :f :txn, :value [[:w 0 1] [:r 1 nil]]}",
            "{:index 3, :time -1, :type :ok, :process 2, :f :txn, :value [[:r 0 1] [:w 1 2]]}",
            "{:index 4, :time -1, :type :invoke, :process 1, :f :txn, :value [[:w 1 5]]}",
            "{:index 5, :time -1, :type :fail, :process 1, :f :txn, :value [[:w 1 5]]}",
        ]
    );
    assert_eq!(h.origin, "h.bincode");
    assert_eq!(h.completion_of(0), Some(2));
    assert_eq!(h.ops[5].op_type, OpType::Fail);
}

#[test]
fn dbcop_errors_name_the_offset_and_what_was_expected() {
    let mut bytes = small_dbcop();
    let e = parse_dbcop(&bytes[..3], "h.bincode").unwrap_err();
    assert_eq!(
        e.to_string(),
        "h.bincode: at byte offset 0: expected the history id (8 bytes), found only 3 bytes before the end of the file"
    );
    // The first event's is-write flag.
    let header = 5 * 8 + 3 * 8 + 10 + 25 + 25 + 8;
    let flag = header + 8 + 8;
    bytes[flag] = 7;
    let e = parse_dbcop(&bytes, "h.bincode").unwrap_err();
    assert_eq!(
        e.to_string(),
        format!("h.bincode: at byte offset {flag}: expected an event's is-write flag (a byte 0 or 1), found 7")
    );
    let mut long = small_dbcop();
    long.push(0);
    let e = parse_dbcop(&long, "h.bincode").unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "h.bincode: at byte offset {}: expected the end of the history, found 1 more bytes",
            long.len() - 1
        )
    );
    // A huge session count is refused before allocating.
    let mut huge = small_dbcop();
    huge[header - 8..header].copy_from_slice(&u64::MAX.to_le_bytes());
    let e = parse_dbcop(&huge, "h.bincode").unwrap_err();
    assert!(
        e.message.starts_with(&format!(
            "at byte offset {}: expected the number of sessions, found 18446744073709551615, more than",
            header - 8
        )),
        "{e}"
    );
}

#[test]
fn dbcop_every_truncation_is_an_error() {
    let bytes = small_dbcop();
    for n in 0..bytes.len() {
        let e = parse_dbcop(&bytes[..n], "h").unwrap_err();
        assert!(e.message.contains("expected"), "{n}: {e}");
        assert_eq!(e.line, 0);
    }
    assert!(parse_dbcop(&bytes, "h").is_ok());
}

#[test]
fn dbcop_garbled_bytes_never_panic() {
    let bytes = small_dbcop();
    for i in 0..bytes.len() {
        for b in [0x00, 0x02, 0x80, 0xff] {
            let mut g = bytes.clone();
            g[i] = b;
            let _ = parse_dbcop(&g, "h");
        }
    }
}

/// A Cobra record.
enum Rec {
    S(i64),
    C(i64),
    W(i64, i64, i64),
    R(i64, i64, i64, i64),
}

fn cobra_bytes(recs: &[Rec]) -> Vec<u8> {
    let mut b = Vec::new();
    for r in recs {
        let (op, fields): (u8, Vec<i64>) = match *r {
            Rec::S(t) => (b'S', vec![t]),
            Rec::C(t) => (b'C', vec![t]),
            Rec::W(w, k, v) => (b'W', vec![w, k, v]),
            Rec::R(t, w, k, v) => (b'R', vec![t, w, k, v]),
        };
        b.push(op);
        for f in fields {
            b.extend_from_slice(&f.to_be_bytes());
        }
    }
    b
}

fn small_cobra() -> (Vec<u8>, Vec<u8>) {
    use Rec::*;
    let t0 = cobra_bytes(&[
        S(100),
        R(cobra::INIT_ID, cobra::INIT_ID, 7, 12345),
        W(1000, 7, 42),
        C(100),
        S(101),
        R(cobra::NULL_ID, cobra::NULL_ID, 8, 0),
        R(200, 2000, 7, 99),
        C(101),
    ]);
    let t3 = cobra_bytes(&[S(200), W(2000, 7, 99), C(200), S(201), R(100, 1000, 7, 42)]);
    (t0, t3)
}

#[test]
fn cobra_converts_write_ids_sentinels_and_open_transactions() {
    let (t0, t3) = small_cobra();
    let h = parse_cobra_logs("dir", &[(0, "dir/T0.log", &t0), (3, "dir/T3.log", &t3)]).unwrap();
    assert_eq!(
        op_lines(&h),
        [
            "{:index 0, :time -1, :type :invoke, :process 0, :f :txn, :value [[:r 7 nil] [:w 7 1000]]}",
            "{:index 1, :time -1, :type :invoke, :process 3, :f :txn, :value [[:w 7 2000]]}",
            "{:index 2, :time -1, :type :ok, :process 0, :f :txn, :value [[:r 7 nil] [:w 7 1000]]}",
            "{:index 3, :time -1, :type :ok, :process 3, :f :txn, :value [[:w 7 2000]]}",
            "{:index 4, :time -1, :type :invoke, :process 0, :f :txn, :value [[:r 8 nil] [:r 7 nil]]}",
            "{:index 5, :time -1, :type :invoke, :process 3, :f :txn, :value [[:r 7 nil]]}",
            "{:index 6, :time -1, :type :ok, :process 0, :f :txn, :value [[:r 8 nil] [:r 7 2000]]}",
            "{:index 7, :time -1, :type :info, :process 3, :f :txn, :value [[:r 7 1000]]}",
        ]
    );
}

#[test]
fn cobra_errors_name_the_log_and_offset() {
    use Rec::*;
    let (t0, _) = small_cobra();
    let e = parse_cobra_logs("d", &[(0, "d/T0.log", &t0[..20])]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "d/T0.log: at byte offset 9: expected a read record (R writer-txn write-id key value) of 33 bytes, found only 11 before the end of the file"
    );
    let mut bad = t0.clone();
    bad[9] = b'X';
    let e = parse_cobra_logs("d", &[(0, "d/T0.log", &bad)]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "d/T0.log: at byte offset 9: expected a record opcode S, C, W or R, found byte 0x58"
    );
    let e = parse_cobra_logs("d", &[(1, "d/T1.log", &cobra_bytes(&[S(1), C(2)]))]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "d/T1.log: at byte offset 9: expected the commit of the open transaction 1, found a commit of 2"
    );
    let e = parse_cobra_logs("d", &[(1, "d/T1.log", &cobra_bytes(&[W(1, 2, 3)]))]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "d/T1.log: at byte offset 0: expected a start record before a write record (W write-id key value), found none"
    );
    let gc = cobra_bytes(&[S(1), R(cobra::INIT_ID, 0x2333_2333, 1, 0)]);
    let e = parse_cobra_logs("d", &[(1, "d/T1.log", &gc)]).unwrap_err();
    assert!(e.message.contains("garbage-collection read"), "{e}");
}

#[test]
fn cobra_truncations_are_errors_or_shorter_histories() {
    let (t0, t3) = small_cobra();
    let boundaries = [0, 9, 42, 67, 76, 85, 118, 151, 160];
    assert_eq!(t0.len(), 160);
    for n in 0..=t0.len() {
        let r = parse_cobra_logs("d", &[(0, "d/T0.log", &t0[..n]), (3, "d/T3.log", &t3)]);
        match r {
            Ok(_) => assert!(boundaries.contains(&n), "{n} is not a record boundary"),
            Err(e) => {
                assert!(!boundaries.contains(&n), "{n}: {e}");
                assert!(e.message.starts_with("at byte offset"), "{e}");
            }
        }
    }
    for i in 0..t0.len() {
        for b in [0x00, b'S', b'C', b'W', b'R', 0xff] {
            let mut g = t0.clone();
            g[i] = b;
            let _ = parse_cobra_logs("d", &[(0, "d/T0.log", &g)]);
        }
    }
}

#[test]
fn text_groups_transactions_by_id_within_sessions() {
    let src = b"w(1,5,3,10)\nr(2,0,3,10)\n\n  r(1,5,4,20) \r\nw(2,6,3,11)\nw(1,7,3,10)\n";
    let h = parse_text(src, "t.txt").unwrap();
    assert_eq!(
        op_lines(&h),
        [
            "{:index 0, :time -1, :type :invoke, :process 3, :f :txn, :value [[:w 1 5] [:r 2 nil] [:w 1 7]]}",
            "{:index 1, :time -1, :type :invoke, :process 4, :f :txn, :value [[:r 1 nil]]}",
            "{:index 2, :time -1, :type :ok, :process 3, :f :txn, :value [[:w 1 5] [:r 2 nil] [:w 1 7]]}",
            "{:index 3, :time -1, :type :ok, :process 4, :f :txn, :value [[:r 1 5]]}",
            "{:index 4, :time -1, :type :invoke, :process 3, :f :txn, :value [[:w 2 6]]}",
            "{:index 5, :time -1, :type :ok, :process 3, :f :txn, :value [[:w 2 6]]}",
        ]
    );
}

#[test]
fn zero_stays_a_value_on_keys_that_write_it() {
    // Key 1 has an explicit initial write of 0; key 2 does not.
    let src = b"w(1,0,0,0)\nr(1,0,1,1)\nr(2,0,1,1)\n";
    let h = parse_text(src, "t.txt").unwrap();
    assert_eq!(
        op_lines(&h)[3],
        "{:index 3, :time -1, :type :ok, :process 1, :f :txn, :value [[:r 1 0] [:r 2 nil]]}"
    );
}

#[test]
fn text_errors_name_line_and_column() {
    let cases: [(&[u8], &str); 6] = [
        (b"w(1,5,3,10)\nx(1,2,3,4)\n", "t.txt:2:1: expected r( or w(, found \"x(1,2,3,4)\""),
        (b"r(1,5,3,10\n", "t.txt:1:11: expected ')', found the end of the line"),
        (b"r(1,a,3,10)\n", "t.txt:1:5: expected a value (an integer), found \"a,3,10)\""),
        (b"r(1,5,3,10) x\n", "t.txt:1:13: expected the end of the line, found \"x\""),
        (
            b"r(1,5,3,10)\nw(1,6,4,10)\n",
            "t.txt:2:9: expected transaction 10 in session 3 (where it began), found it in session 4",
        ),
        (
            b"r(1,99999999999999999999,3,10)\n",
            "t.txt:1:5: expected a value (an integer), found \"99999999999999999999\"",
        ),
    ];
    for (src, want) in cases {
        assert_eq!(parse_text(src, "t.txt").unwrap_err().to_string(), want);
    }
}

#[test]
fn text_truncations_never_panic() {
    let src = b"w(1,5,3,10)\nr(2,0,3,10)\nr(1,5,4,20)\n";
    for n in 0..=src.len() {
        let _ = parse_text(&src[..n], "t.txt");
    }
    // Truncated inside a line: an error at that line.
    let e = parse_text(&src[..17], "t.txt").unwrap_err();
    assert_eq!(e.line, 2);
}

#[test]
fn big_integers_are_interned_as_the_edn_reader_does() {
    use Rec::*;
    let big = i64::MAX - 5;
    let t0 = cobra_bytes(&[S(1), W(big, -big, 3), R(1, i64::MIN, big, 0), C(1)]);
    let h = parse_cobra_logs("d", &[(0, "d/T0.log", &t0)]).unwrap();
    assert_eq!(
        op_lines(&h)[1],
        format!("{{:index 1, :time -1, :type :ok, :process 0, :f :txn, :value [[:w {} {big}] [:r {big} {}]]}}", -big, i64::MIN)
    );
    assert!(h.interner.len() >= 3);
    // An empty transaction.
    let t1 = cobra_bytes(&[S(5), C(5)]);
    let h = parse_cobra_logs("d", &[(1, "d/T1.log", &t1)]).unwrap();
    assert_eq!(
        op_lines(&h),
        [
            "{:index 0, :time -1, :type :invoke, :process 1, :f :txn, :value []}",
            "{:index 1, :time -1, :type :ok, :process 1, :f :txn, :value []}",
        ]
    );
}

#[test]
fn empty_inputs_give_empty_histories() {
    assert!(parse_text(b"", "t").unwrap().ops.is_empty());
    assert!(parse_cobra_logs("d", &[(0, "d/T0.log", &[])])
        .unwrap()
        .ops
        .is_empty());
    assert!(parse_dbcop(&dbcop_bytes(&[]), "h").unwrap().ops.is_empty());
}
