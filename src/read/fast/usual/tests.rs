//! The fast path changes nothing: on thousands of random op lines near the
//! usual shape (other key orders, separators and values, duplicated,
//! missing and extra keys, odd micro-ops, single-byte corruptions), the
//! reader with it gives the same history, or the same error at the same
//! line and column, as the reader without it.

use super::super::{read, read_key_by_key};
use crate::edn::ParseError;
use crate::gen::Rng;
use crate::model::{Format, SourceText};
use crate::read::Builder;

/// The history (as the debug text of every table, and the interned values
/// in slot order) or the error.
fn outcome(src: &[u8], usual: bool) -> Result<String, (u32, u32, String)> {
    let mut b = Builder::new(SourceText::default(), "t", Format::Edn);
    let read_one = if usual { read } else { read_key_by_key };
    match read_one(src, &mut b) {
        Ok(()) => {
            let h = b.finish();
            let interned = format!("{:?}", h.interner)
                .split(", slots")
                .next()
                .map(String::from);
            Ok(format!(
                "{:?} {:?} {:?} {:?} {:?} {:?} {} {interned:?}",
                h.ops, h.pair, h.mops, h.elements, h.other_values, h.predicates, h.non_client_ops
            ))
        }
        Err(ParseError {
            line,
            column,
            message,
            ..
        }) => Err((line, column, message)),
    }
}

fn pick<'a>(rng: &mut Rng, options: &[&'a str]) -> &'a str {
    options[rng.below(options.len() as u64) as usize]
}

/// One micro-op, usually in the usual shape.
fn mop(rng: &mut Rng) -> String {
    let f = pick(
        rng,
        &[":r", ":w", ":append", ":r", ":append", ":x", "r", ":rr"],
    );
    let key = pick(
        rng,
        &["1", "2", "0", "-3", "\"k\"", ":k", "99999999999999999999"],
    );
    let arg = match rng.below(8) {
        0 | 1 => "nil".to_string(),
        2 => pick(
            rng,
            &["7", "-1", "\"v\"", ":v", "1.5", "4611686018427387904"],
        )
        .to_string(),
        _ => {
            let n = rng.below(4);
            let els: Vec<String> = (0..n)
                .map(|_| pick(rng, &["1", "2", "3", "-4", "1", "2", "x", "5N"]).to_string())
                .collect();
            let sep = pick(rng, &[" ", " ", " ", "  ", ","]);
            let (open, close) = if rng.chance(0.9) {
                ("[", "]")
            } else {
                ("(", ")")
            };
            format!("{open}{}{close}", els.join(sep))
        }
    };
    let pad = pick(rng, &["", "", "", "", " "]);
    let sep = pick(rng, &[" ", " ", " ", " ", "  ", "\n"]);
    format!("[{pad}{f}{sep}{key} {arg}{pad}]")
}

fn value(rng: &mut Rng) -> String {
    match rng.below(10) {
        0 => "nil".into(),
        1 => pick(rng, &["1", "[]", "{:a 1}", "[1 2]", "#{}", "#_ 1 nil"]).into(),
        _ => {
            let n = rng.below(4);
            let mops: Vec<String> = (0..n).map(|_| mop(rng)).collect();
            format!("[{}]", mops.join(pick(rng, &[" ", " ", " ", ", ", "  "])))
        }
    }
}

/// One op map: the six keys in the usual or another order, sometimes with
/// a key missing, repeated or added, odd separators or values.
fn op_line(rng: &mut Rng, index: u64, order: &[usize; 6]) -> String {
    let mut keys: Vec<usize> = order.to_vec();
    if rng.chance(0.1) {
        let a = rng.below(6) as usize;
        let b = rng.below(6) as usize;
        keys.swap(a, b);
    }
    if rng.chance(0.03) {
        keys.remove(rng.below(6) as usize);
    }
    if rng.chance(0.02) {
        keys.push(rng.below(6) as usize);
    }
    let mut parts = Vec::new();
    for k in keys {
        let v = match k {
            0 => match rng.below(100) {
                0 => "-1".to_string(),
                1 => "x".to_string(),
                _ => index.to_string(),
            },
            1 if rng.chance(0.02) => pick(rng, &["3.5", "999999999999999999999"]).into(),
            1 => pick(rng, &["12", "-5", "nil", "12"]).into(),
            2 if rng.chance(0.02) => ":okk".into(),
            2 => pick(rng, &[":invoke", ":ok", ":fail", ":info", ":invoke", ":ok"]).into(),
            // One process per line mostly: pairing errors are not the point.
            3 if rng.chance(0.9) => (100 + index).to_string(),
            3 => pick(rng, &["0", "1", ":nemesis", "-1"]).into(),
            4 => pick(
                rng,
                &[":txn", ":txn", ":txn", ":read", "\"txn\"", "nil", ":t"],
            )
            .into(),
            _ => value(rng),
        };
        let name = [":index", ":time", ":type", ":process", ":f", ":value"][k];
        let gap = pick(
            rng,
            &[" ", " ", " ", " ", " ", "  ", "\t", " #_ 0 ", " ;c\n"],
        );
        parts.push(format!("{name}{gap}{v}"));
    }
    if rng.chance(0.05) {
        parts.push(pick(rng, &[":error \"e\"", ":error [:x 1]", "\"k\" 1"]).into());
    }
    let sep = if rng.chance(0.9) {
        ", "
    } else {
        pick(rng, &[" ", ",", " , ", ",  "])
    };
    let open = pick(rng, &["{", "{", "{", "{", "{", "{", "{", "{", "{ "]);
    format!("{open}{}}}\n", parts.join(sep))
}

/// Histories of 1 to 8 op lines, a third with one byte corrupted (half of
/// those a bracket, space or colon).
#[test]
fn the_usual_shape_fast_path_reads_every_history_as_the_key_by_key_reader() {
    let mut rng = Rng::new(23);
    let jepsen = [2, 4, 5, 1, 3, 0];
    let (mut read_ok, mut errors) = (0, 0);
    for round in 0..20_000 {
        let order = if round % 3 == 0 {
            jepsen
        } else {
            [0, 1, 2, 3, 4, 5]
        };
        let n = 1 + rng.below(8);
        let mut text: Vec<u8> = (0..n)
            .flat_map(|i| op_line(&mut rng, i, &order).into_bytes())
            .collect();
        if rng.chance(0.33) {
            // Any byte to anything, or a bracket to another bracket (where
            // the shape is decided), or a space or colon to anything.
            let (marks, to): (&[u8], &[u8]) = match rng.below(4) {
                0 | 1 => (b"", b"{}[]()\":;#, \n0-a"),
                2 => (b"{}[]()", b"{}[]()"),
                _ => (b" :", b"{}[]()\":;#, \n0-a"),
            };
            let at: Vec<usize> = (0..text.len())
                .filter(|&i| marks.is_empty() || marks.contains(&text[i]))
                .collect();
            if !at.is_empty() {
                let at = at[rng.below(at.len() as u64) as usize];
                text[at] = to[rng.below(to.len() as u64) as usize];
            }
        }
        let (fast, slow) = (outcome(&text, true), outcome(&text, false));
        assert_eq!(fast, slow, "{}", String::from_utf8_lossy(&text));
        match fast {
            Ok(_) => read_ok += 1,
            Err(_) => errors += 1,
        }
    }
    // Both kinds are well represented (the test is not vacuous).
    assert!(
        read_ok > 5000 && errors > 5000,
        "{read_ok} read, {errors} errors"
    );
}

/// The integer reader (eight bytes at a time up to 7 digits, then
/// unchecked for its first 18 digits) against a checked digit-by-digit
/// reference, on random tokens of 0 to 25 digits with
/// signs, leading zeros and every kind of following byte, at every
/// distance from the end of the text.
#[test]
fn integers_read_as_checked_digit_by_digit() {
    fn reference(src: &[u8], i: usize) -> Option<(i64, usize)> {
        let mut j = i;
        let neg = src.get(j) == Some(&b'-');
        if neg || src.get(j) == Some(&b'+') {
            j += 1;
        }
        let d0 = j;
        let mut n: i64 = 0;
        while let Some(d) = src.get(j).map(|c| c.wrapping_sub(b'0')).filter(|&d| d <= 9) {
            n = n.checked_mul(10)?.checked_add(d as i64)?;
            j += 1;
        }
        let delim = src.get(j).is_none_or(|&c| crate::edn::parse::is_delim(c));
        (j > d0 && delim).then_some((if neg { -n } else { n }, j))
    }
    let mut rng = Rng::new(8);
    let after = b" ,]})\n\t:a/.0\x7f\xff\x00\x2f\x3a";
    for _ in 0..200_000 {
        let mut t = Vec::new();
        match rng.below(4) {
            0 => t.push(b'-'),
            1 => t.push(b'+'),
            _ => {}
        }
        let digits = rng.below(26);
        for k in 0..digits {
            let zero = k == 0 && rng.chance(0.2);
            t.push(if zero {
                b'0'
            } else {
                b'0' + rng.below(10) as u8
            });
        }
        for _ in 0..rng.below(10) {
            t.push(after[rng.below(after.len() as u64) as usize]);
        }
        assert_eq!(super::super::int_at(&t, 0), reference(&t, 0), "{t:?}");
    }
}
