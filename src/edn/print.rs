//! The Clojure printer: `pr-str` semantics, byte-exact for the values ellery
//! prints (result maps, ops inside explanations).

use super::Value;
use std::fmt::Write as _;

/// The value as Clojure's `pr-str` would print it.
pub fn pr_str(v: &Value) -> String {
    let mut out = String::new();
    write_edn(&mut out, v);
    out
}

/// Appends the value as Clojure's `pr` would print it. Collections print
/// their elements in stored order (our maps and sets keep source order).
pub fn write_edn(out: &mut String, v: &Value) {
    match v {
        Value::Nil => out.push_str("nil"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Int(n) => {
            let _ = write!(out, "{n}");
        }
        Value::BigInt(digits) => {
            out.push_str(digits);
            out.push('N');
        }
        Value::Float(text) => out.push_str(text),
        Value::Str(s) => write_string(out, s),
        Value::Char(c) => {
            out.push('\\');
            match c {
                '\n' => out.push_str("newline"),
                ' ' => out.push_str("space"),
                '\t' => out.push_str("tab"),
                '\r' => out.push_str("return"),
                '\u{8}' => out.push_str("backspace"),
                '\u{c}' => out.push_str("formfeed"),
                c => out.push(*c),
            }
        }
        Value::Keyword(name) => {
            out.push(':');
            out.push_str(name);
        }
        Value::Symbol(name) => out.push_str(name),
        Value::Vector(items) => write_seq(out, "[", "]", items),
        Value::List(items) => write_seq(out, "(", ")", items),
        Value::Set(items) => write_seq(out, "#{", "}", items),
        Value::Map(entries) => {
            out.push('{');
            for (i, (k, v)) in entries.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_edn(out, k);
                out.push(' ');
                write_edn(out, v);
            }
            out.push('}');
        }
        Value::Tagged(tag, inner) => {
            out.push('#');
            out.push_str(tag);
            // Clojure prints `#object[...]` and records (`#ns.Rec{...}`)
            // with no space; reader tags such as `#inst "..."` get one.
            let glued = matches!((tag.as_str(), &**inner), ("object", Value::Vector(_)))
                || (tag.contains('.') && matches!(**inner, Value::Map(_)));
            if !glued {
                out.push(' ');
            }
            write_edn(out, inner);
        }
    }
}

fn write_seq(out: &mut String, open: &str, close: &str, items: &[Value]) {
    out.push_str(open);
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        write_edn(out, item);
    }
    out.push_str(close);
}

/// Clojure's readable string form: only these six characters and the quote
/// are escaped; everything else is printed raw.
fn write_string(out: &mut String, s: &str) {
    out.push('"');
    let mut last = 0;
    for (i, b) in s.bytes().enumerate() {
        let esc = match b {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\n' => "\\n",
            b'\t' => "\\t",
            b'\r' => "\\r",
            0x08 => "\\b",
            0x0c => "\\f",
            _ => continue,
        };
        out.push_str(&s[last..i]);
        out.push_str(esc);
        last = i + 1;
    }
    out.push_str(&s[last..]);
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::super::parse_one;
    use super::*;

    fn round(src: &str) -> String {
        pr_str(&parse_one(src.as_bytes()).unwrap())
    }

    #[test]
    fn prints_like_clojure() {
        assert_eq!(
            round("{:a 1 :b [1 2] :c (3) :d #{4 5}}"),
            "{:a 1, :b [1 2], :c (3), :d #{4 5}}"
        );
        assert_eq!(round("{}"), "{}");
        assert_eq!(round("[nil true false]"), "[nil true false]");
        assert_eq!(
            round("[1N 99999999999999999999 -5 1.5 2.0E10 1.5M]"),
            "[1N 99999999999999999999N -5 1.5 2.0E10 1.5M]"
        );
        assert_eq!(round(r#""a\"b\\c\n\t\r\b\fé""#), r#""a\"b\\c\n\t\r\b\fé""#);
        assert_eq!(
            round(r"[\a \newline \space \tab \return \backspace \formfeed]"),
            r"[\a \newline \space \tab \return \backspace \formfeed]"
        );
        assert_eq!(round(":elle.list-append/init"), ":elle.list-append/init");
        assert_eq!(round("[... com.foo.Exception]"), "[... com.foo.Exception]");
        assert_eq!(round("#inst \"2020-01-01\""), "#inst \"2020-01-01\"");
        assert_eq!(round("#object [Foo 0x1 \"x\"]"), "#object[Foo 0x1 \"x\"]");
        assert_eq!(
            round("#jepsen.history.Op {:index 1}"),
            "#jepsen.history.Op{:index 1}"
        );
        assert_eq!(round("#uuid \"abc\""), "#uuid \"abc\"");
    }
}
