//! Minimal printer used until the full printer lands.

use super::Value;

/// Clojure `pr-str`.
pub fn pr_str(v: &Value) -> String {
    let mut s = String::new();
    write_edn(&mut s, v);
    s
}

/// Appends Clojure's printed form of `v` to `out`.
pub fn write_edn(out: &mut String, v: &Value) {
    match v {
        Value::Nil => out.push_str("nil"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Int(n) => out.push_str(&n.to_string()),
        Value::BigInt(s) => {
            out.push_str(s);
            out.push('N')
        }
        Value::Float(s) => out.push_str(s),
        Value::Str(s) => {
            out.push('"');
            for c in s.chars() {
                match c {
                    '"' => out.push_str("\\\""),
                    '\\' => out.push_str("\\\\"),
                    '\n' => out.push_str("\\n"),
                    '\t' => out.push_str("\\t"),
                    '\r' => out.push_str("\\r"),
                    c => out.push(c),
                }
            }
            out.push('"');
        }
        Value::Char(c) => {
            out.push('\\');
            out.push(*c)
        }
        Value::Keyword(k) => {
            out.push(':');
            out.push_str(k)
        }
        Value::Symbol(s) => out.push_str(s),
        Value::Vector(items) => seq(out, "[", "]", items),
        Value::List(items) => seq(out, "(", ")", items),
        Value::Set(items) => seq(out, "#{", "}", items),
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
        Value::Tagged(t, v) => {
            out.push('#');
            out.push_str(t);
            out.push(' ');
            write_edn(out, v)
        }
    }
}

fn seq(out: &mut String, open: &str, close: &str, items: &[Value]) {
    out.push_str(open);
    for (i, v) in items.iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        write_edn(out, v);
    }
    out.push_str(close);
}
