//! EDN numbers: reading a numeric token as Clojure does, and printing a
//! double as Java does (so equal doubles print, and compare, equal).

use super::Value;

/// Hex literals (`0x1a2b`, as in `#object[Foo 0x1a2b "..."]`) are kept as
/// symbols so that they print back exactly as Clojure printed them.
pub(super) fn is_hex(text: &str) -> bool {
    let t = text.trim_start_matches(['+', '-']);
    t.len() > 2
        && (t.starts_with("0x") || t.starts_with("0X"))
        && t[2..].bytes().all(|b| b.is_ascii_hexdigit())
}

pub(super) fn all_digits(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

/// Parses a numeric token; `None` if it is malformed.
pub(crate) fn parse_number(text: &str) -> Option<Value> {
    let (neg, body) = match text.as_bytes()[0] {
        b'-' => (true, &text[1..]),
        b'+' => (false, &text[1..]),
        _ => (false, text),
    };
    let sign = if neg { "-" } else { "" };
    if all_digits(body) {
        return Some(match text.trim_start_matches('+').parse::<i64>() {
            Ok(n) => Value::Int(n),
            Err(_) => Value::BigInt(format!("{sign}{}", strip_zeros(body))),
        });
    }
    if let Some(digits) = body.strip_suffix('N') {
        if all_digits(digits) {
            return Some(Value::BigInt(format!("{sign}{}", strip_zeros(digits))));
        }
        return None;
    }
    if let Some((n, d)) = body.split_once('/') {
        if all_digits(n) && all_digits(d) {
            return Some(Value::Float(format!("{sign}{body}")));
        }
        return None;
    }
    let (mant, big) = match body.strip_suffix('M') {
        Some(m) => (m, true),
        None => (body, false),
    };
    // digits [. digits*] [(e|E) [+-] digits]
    let (num, exp) = match mant.find(['e', 'E']) {
        Some(p) => (&mant[..p], Some(&mant[p + 1..])),
        None => (mant, None),
    };
    let (int_part, frac) = match num.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (num, None),
    };
    let ok = all_digits(int_part)
        && frac.is_none_or(|f| f.is_empty() || all_digits(f))
        && exp.is_none_or(|e| all_digits(e.strip_prefix(['+', '-']).unwrap_or(e)));
    if !ok {
        return None;
    }
    if big {
        return Some(Value::Float(format!("{sign}{body}")));
    }
    let x: f64 = format!("{sign}{mant}").parse().ok()?;
    Some(Value::Float(java_double(x)))
}

pub(super) fn strip_zeros(digits: &str) -> &str {
    let t = digits.trim_start_matches('0');
    if t.is_empty() {
        "0"
    } else {
        t
    }
}

/// Formats a double the way Java's `Double.toString` (and so Clojure's `pr`)
/// does: plain decimal for 1e-3 <= |x| < 1e7, else `d.dddE±n`, always with a
/// fractional digit. Infinities and NaN use Clojure's `##` forms.
pub fn java_double(x: f64) -> String {
    if x.is_nan() {
        return "##NaN".into();
    }
    if x.is_infinite() {
        return if x > 0.0 {
            "##Inf".into()
        } else {
            "##-Inf".into()
        };
    }
    let a = x.abs();
    if a == 0.0 || (1e-3..1e7).contains(&a) {
        let s = format!("{x}");
        if s.contains('.') {
            s
        } else {
            format!("{s}.0")
        }
    } else {
        let s = format!("{x:e}");
        let (m, e) = s.split_once('e').unwrap_or((&s, "0"));
        let m = if m.contains('.') {
            m.to_string()
        } else {
            format!("{m}.0")
        };
        format!("{m}E{e}")
    }
}
