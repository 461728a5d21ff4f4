//! elle-cli's JSON history dialect, in both directions.
//!
//! Reading uses a small JSON parser of our own rather than `serde_json`, so
//! that numbers keep their exact value (big integers stay [`Value::BigInt`])
//! and every error names a line, column, what was expected and what was found.

use super::parse::{java_double, line_col, ParseError};
use super::{pr_str, Value};

/// Parses JSON in elle-cli's history dialect into EDN values: object keys
/// become keywords, the values of `"type"` and `"f"` become keywords, and a
/// `"value"` that is an array of arrays starting with a string (micro-ops such
/// as `["append","x",1]`) gets that first string as a keyword.
pub fn json_to_value(src: &[u8]) -> Result<Value, ParseError> {
    Ok(json_dialect(parse_json(src)?))
}

/// Parses plain JSON: objects become maps with string keys, arrays vectors,
/// integers [`Value::Int`]/[`Value::BigInt`], other numbers [`Value::Float`]
/// in Clojure's printed form.
pub fn parse_json(src: &[u8]) -> Result<Value, ParseError> {
    let mut p = JsonParser::new(src, 0);
    let v = p.value()?;
    p.skip_ws();
    if p.pos < src.len() {
        return Err(p.expected("end of input"));
    }
    Ok(v)
}

/// Applies elle-cli's dialect to plain JSON values (see [`json_to_value`]).
/// A top-level array is taken as a list of ops; a lone object as one op.
pub fn json_dialect(v: Value) -> Value {
    match v {
        Value::Vector(items) => Value::Vector(items.into_iter().map(json_op).collect()),
        other => json_op(other),
    }
}

/// Converts one op object: keyword keys; `type`/`f` strings → keywords;
/// micro-op names → keywords.
pub(crate) fn json_op(v: Value) -> Value {
    match v {
        Value::Map(entries) => Value::Map(
            entries
                .into_iter()
                .map(|(k, v)| {
                    let name = match &k {
                        Value::Str(s) => s.as_str(),
                        _ => "",
                    };
                    let v = match (name, v) {
                        ("type" | "f", Value::Str(s)) => Value::Keyword(s),
                        ("value", v) => mops_dialect(v),
                        (_, v) => keyword_keys(v),
                    };
                    let k = match k {
                        Value::Str(s) => Value::Keyword(s),
                        k => k,
                    };
                    (k, v)
                })
                .collect(),
        ),
        other => keyword_keys(other),
    }
}

fn mops_dialect(v: Value) -> Value {
    let is_mops = matches!(&v, Value::Vector(items) if items.iter().all(
        |m| matches!(m, Value::Vector(parts) if matches!(parts.first(), Some(Value::Str(_))))
    ));
    match v {
        Value::Vector(items) if is_mops => Value::Vector(
            items
                .into_iter()
                .map(|m| match m {
                    Value::Vector(parts) => Value::Vector(
                        parts
                            .into_iter()
                            .enumerate()
                            .map(|(i, p)| match (i, p) {
                                (0, Value::Str(s)) => Value::Keyword(s),
                                (_, p) => keyword_keys(p),
                            })
                            .collect(),
                    ),
                    other => other,
                })
                .collect(),
        ),
        other => keyword_keys(other),
    }
}

/// Nested objects get keyword keys, as elle-cli reads them.
fn keyword_keys(v: Value) -> Value {
    match v {
        Value::Str(s) => Value::Str(s),
        Value::Map(entries) => Value::Map(
            entries
                .into_iter()
                .map(|(k, v)| {
                    let k = match k {
                        Value::Str(s) => Value::Keyword(s),
                        k => k,
                    };
                    (k, keyword_keys(v))
                })
                .collect(),
        ),
        Value::Vector(items) => Value::Vector(items.into_iter().map(keyword_keys).collect()),
        other => other,
    }
}

/// The JSON that clojure.data.json would write for a value: keywords and
/// symbols by name (namespace dropped), collections as arrays, map keys as
/// names or `str`, tagged literals as their printed EDN. Integers beyond 64
/// bits become the nearest double (serde_json cannot hold them exactly).
/// Infinite and NaN floats become the strings `"##Inf"`, `"##-Inf"` and
/// `"##NaN"` (JSON has no such numbers; `null` would read as nil).
pub fn value_to_json(v: &Value) -> serde_json::Value {
    use serde_json::Value as J;
    match v {
        Value::Nil => J::Null,
        Value::Bool(b) => J::Bool(*b),
        Value::Int(n) => J::from(*n),
        Value::BigInt(d) => match (d.parse::<i64>(), d.parse::<u64>()) {
            (Ok(n), _) => J::from(n),
            (_, Ok(n)) => J::from(n),
            _ => float_json(d.parse::<f64>().unwrap_or(f64::NAN), v),
        },
        Value::Float(t) => float_json(float_value(t), v),
        Value::Str(s) => J::String(s.clone()),
        Value::Char(c) => J::String(c.to_string()),
        Value::Keyword(n) | Value::Symbol(n) => J::String(name_of(n).to_string()),
        Value::Vector(items) | Value::List(items) | Value::Set(items) => {
            J::Array(items.iter().map(value_to_json).collect())
        }
        Value::Map(entries) => J::Object(
            entries
                .iter()
                .map(|(k, v)| (json_key(k), value_to_json(v)))
                .collect(),
        ),
        Value::Tagged(..) => J::String(pr_str(v)),
    }
}

/// `x` as a JSON number; when it is not finite (JSON has no such numbers),
/// a string: `##Inf`, `##-Inf`, `##NaN` for floats, the digits for an
/// integer too large for a double, so it is never taken for nil.
fn float_json(x: f64, v: &Value) -> serde_json::Value {
    match serde_json::Number::from_f64(x) {
        Some(n) => serde_json::Value::Number(n),
        None => serde_json::Value::String(match v {
            Value::Float(_) => non_finite_edn(x).to_string(),
            other => pr_str(other),
        }),
    }
}

/// The numeric value of a stored float text (`1.5`, `1.5M`, `1/2`, `##Inf`).
pub(crate) fn float_value(t: &str) -> f64 {
    let t = t.strip_suffix('M').unwrap_or(t);
    if let Some((n, d)) = t.split_once('/') {
        return n.parse::<f64>().unwrap_or(f64::NAN) / d.parse::<f64>().unwrap_or(f64::NAN);
    }
    match t {
        "##Inf" => f64::INFINITY,
        "##-Inf" => f64::NEG_INFINITY,
        _ => t.parse().unwrap_or(f64::NAN),
    }
}

/// Clojure's `name`: the part after the first `/`, unless the whole thing is `/`.
fn name_of(n: &str) -> &str {
    match n.find('/') {
        Some(p) if n != "/" => &n[p + 1..],
        _ => n,
    }
}

/// clojure.data.json's default key function: `name` for named things, `str`
/// for the rest.
fn json_key(k: &Value) -> String {
    match k {
        Value::Keyword(n) | Value::Symbol(n) => name_of(n).to_string(),
        Value::Str(s) => s.clone(),
        Value::Nil => String::new(),
        Value::Char(c) => c.to_string(),
        other => pr_str(other),
    }
}

/// A JSON parser over bytes that builds [`Value`]s and reports positions.
pub(crate) struct JsonParser<'a> {
    src: &'a [u8],
    /// The next byte to read.
    pub(crate) pos: usize,
    depth: u32,
}

impl<'a> JsonParser<'a> {
    /// A parser positioned at `pos`.
    pub(crate) fn new(src: &'a [u8], pos: usize) -> Self {
        JsonParser { src, pos, depth: 0 }
    }

    /// Skips JSON whitespace.
    pub(crate) fn skip_ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.src.get(self.pos) {
            self.pos += 1;
        }
    }

    /// The byte at the current position, if any.
    pub(crate) fn peek(&self) -> Option<u8> {
        self.src.get(self.pos).copied()
    }

    /// An "expected X, found Y" error at the current position.
    pub(crate) fn expected(&self, what: &str) -> ParseError {
        ParseError::at(
            self.src,
            self.pos,
            format!("expected {what}, found {}", self.found()),
        )
    }

    fn found(&self) -> String {
        let Some(&b) = self.src.get(self.pos) else {
            return "end of input".into();
        };
        if b == b'"' {
            let mut j = self.pos + 1;
            while j < self.src.len() && self.src[j] != b'"' && j < self.pos + 40 {
                j += if self.src[j] == b'\\' { 2 } else { 1 };
            }
            let end = (j + 1).min(self.src.len());
            return String::from_utf8_lossy(&self.src[self.pos..end]).into_owned();
        }
        let mut j = self.pos + 1;
        if b.is_ascii_alphanumeric() || b == b'-' {
            while j < self.src.len()
                && j < self.pos + 40
                && (self.src[j].is_ascii_alphanumeric() || b".+-".contains(&self.src[j]))
            {
                j += 1;
            }
        } else {
            j = (self.pos + super::parse::utf8_len(b)).min(self.src.len());
        }
        String::from_utf8_lossy(&self.src[self.pos..j]).into_owned()
    }

    /// Parses one JSON value (after optional whitespace).
    pub(crate) fn value(&mut self) -> Result<Value, ParseError> {
        self.skip_ws();
        if self.depth >= 256 {
            return Err(self.expected("at most 256 levels of nesting"));
        }
        match self.peek() {
            Some(b'{') => {
                self.depth += 1;
                let v = self.object();
                self.depth -= 1;
                v
            }
            Some(b'[') => {
                self.depth += 1;
                let v = self.array();
                self.depth -= 1;
                v
            }
            Some(b'"') => Ok(Value::Str(self.string()?)),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(b't') => self.literal("true", Value::Bool(true)),
            Some(b'f') => self.literal("false", Value::Bool(false)),
            Some(b'n') => self.literal("null", Value::Nil),
            _ => Err(self.expected("a JSON value")),
        }
    }

    fn literal(&mut self, word: &str, v: Value) -> Result<Value, ParseError> {
        if self.src[self.pos..].starts_with(word.as_bytes()) {
            self.pos += word.len();
            Ok(v)
        } else {
            Err(self.expected("a JSON value"))
        }
    }

    fn object(&mut self) -> Result<Value, ParseError> {
        self.pos += 1;
        let mut entries = Vec::new();
        self.skip_ws();
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return Ok(Value::Map(entries));
        }
        loop {
            self.skip_ws();
            if self.peek() != Some(b'"') {
                return Err(self.expected("a string key"));
            }
            let k = self.string()?;
            self.skip_ws();
            if self.peek() != Some(b':') {
                return Err(self.expected(":"));
            }
            self.pos += 1;
            let v = self.value()?;
            entries.push((Value::Str(k), v));
            self.skip_ws();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(Value::Map(entries));
                }
                _ => return Err(self.expected(", or }")),
            }
        }
    }

    fn array(&mut self) -> Result<Value, ParseError> {
        self.pos += 1;
        let mut items = Vec::new();
        self.skip_ws();
        if self.peek() == Some(b']') {
            self.pos += 1;
            return Ok(Value::Vector(items));
        }
        loop {
            items.push(self.value()?);
            self.skip_ws();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    return Ok(Value::Vector(items));
                }
                _ => return Err(self.expected(", or ]")),
            }
        }
    }

    fn string(&mut self) -> Result<String, ParseError> {
        let start = self.pos;
        let mut out = Vec::new();
        let mut j = start + 1;
        loop {
            let Some(p) = memchr::memchr2(b'"', b'\\', &self.src[j.min(self.src.len())..]) else {
                let (l, c) = line_col(self.src, start);
                return Err(ParseError::at(
                    self.src,
                    start,
                    format!("unterminated string starting at line {l}, column {c}"),
                ));
            };
            out.extend_from_slice(&self.src[j..j + p]);
            j += p;
            if self.src[j] == b'"' {
                self.pos = j + 1;
                break;
            }
            let e = self.src.get(j + 1).copied();
            let c = match e {
                Some(b'"') => '"',
                Some(b'\\') => '\\',
                Some(b'/') => '/',
                Some(b'n') => '\n',
                Some(b't') => '\t',
                Some(b'r') => '\r',
                Some(b'b') => '\u{8}',
                Some(b'f') => '\u{c}',
                Some(b'u') => {
                    let (c, end) = self.unicode(j)?;
                    let mut buf = [0u8; 4];
                    out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                    j = end;
                    continue;
                }
                _ => {
                    self.pos = j + 1;
                    return Err(self.expected("an escape character"));
                }
            };
            let mut buf = [0u8; 4];
            out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            j += 2;
        }
        String::from_utf8(out).map_err(|_| {
            ParseError::at(
                self.src,
                start,
                "expected UTF-8 text in string, found invalid bytes",
            )
        })
    }

    fn unicode(&mut self, j: usize) -> Result<(char, usize), ParseError> {
        let hex = |p: &mut Self, at: usize| -> Result<u32, ParseError> {
            match self_hex(p.src, at) {
                Some(n) => Ok(n),
                None => {
                    p.pos = at;
                    Err(p.expected("4 hex digits"))
                }
            }
        };
        let hi = hex(self, j + 2)?;
        let mut end = j + 6;
        let mut c = char::from_u32(hi);
        if (0xD800..0xDC00).contains(&hi) && self.src.get(end..end + 2) == Some(b"\\u") {
            let lo = hex(self, end + 2)?;
            if (0xDC00..0xE000).contains(&lo) {
                c = char::from_u32(0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00));
                end += 6;
            }
        }
        Ok((c.unwrap_or('\u{FFFD}'), end))
    }

    fn number(&mut self) -> Result<Value, ParseError> {
        let start = self.pos;
        let mut j = start;
        let s = self.src;
        if s.get(j) == Some(&b'-') {
            j += 1;
        }
        let digits = |mut j: usize| {
            while j < s.len() && s[j].is_ascii_digit() {
                j += 1;
            }
            j
        };
        let k = digits(j);
        if k == j {
            self.pos = j;
            return Err(self.expected("a digit"));
        }
        j = k;
        let mut float = false;
        if s.get(j) == Some(&b'.') {
            let k = digits(j + 1);
            if k == j + 1 {
                self.pos = k;
                return Err(self.expected("a digit"));
            }
            j = k;
            float = true;
        }
        if let Some(b'e' | b'E') = s.get(j) {
            j += 1;
            if let Some(b'+' | b'-') = s.get(j) {
                j += 1;
            }
            let k = digits(j);
            if k == j {
                self.pos = k;
                return Err(self.expected("a digit"));
            }
            j = k;
            float = true;
        }
        self.pos = j;
        let text = std::str::from_utf8(&s[start..j]).unwrap_or("0");
        if float {
            Ok(Value::Float(java_double(text.parse().unwrap_or(f64::NAN))))
        } else {
            Ok(text
                .parse::<i64>()
                .map(Value::Int)
                .unwrap_or_else(|_| Value::BigInt(text.to_string())))
        }
    }
}

fn self_hex(src: &[u8], at: usize) -> Option<u32> {
    let d = src.get(at..at + 4)?;
    if d.iter().all(|b| b.is_ascii_hexdigit()) {
        u32::from_str_radix(std::str::from_utf8(d).ok()?, 16).ok()
    } else {
        None
    }
}

/// The EDN form of a number that is not finite: `##Inf`, `##-Inf` or
/// `##NaN`.
pub(crate) fn non_finite_edn(x: f64) -> &'static str {
    if x.is_nan() {
        "##NaN"
    } else if x > 0.0 {
        "##Inf"
    } else {
        "##-Inf"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Value::*;

    fn kw(s: &str) -> Value {
        Keyword(s.into())
    }

    #[test]
    fn dialect() {
        let v = json_to_value(
            br#"[{"type":"ok","f":"txn","value":[["append","x",1],["r","x",[1,2]],["w","y",null]],"process":0,"index":1,"error":{"why":"x"}},
                 {"type":"invoke","f":"cas","value":[1,2.5e0],"time":123456789012345678901}]"#,
        )
        .unwrap();
        assert_eq!(
            v,
            Vector(vec![
                Map(vec![
                    (kw("type"), kw("ok")),
                    (kw("f"), kw("txn")),
                    (
                        kw("value"),
                        Vector(vec![
                            Vector(vec![kw("append"), Str("x".into()), Int(1)]),
                            Vector(vec![kw("r"), Str("x".into()), Vector(vec![Int(1), Int(2)])]),
                            Vector(vec![kw("w"), Str("y".into()), Nil]),
                        ])
                    ),
                    (kw("process"), Int(0)),
                    (kw("index"), Int(1)),
                    (kw("error"), Map(vec![(kw("why"), Str("x".into()))])),
                ]),
                Map(vec![
                    (kw("type"), kw("invoke")),
                    (kw("f"), kw("cas")),
                    (kw("value"), Vector(vec![Int(1), Float("2.5".into())])),
                    (kw("time"), BigInt("123456789012345678901".into())),
                ]),
            ])
        );
    }

    #[test]
    fn json_errors() {
        let e = parse_json(b"[1,\n 2 x]").unwrap_err();
        assert_eq!(
            (e.line, e.column, e.message.as_str()),
            (2, 4, "expected , or ], found x")
        );
        let e = parse_json(b"{\"a\" 1}").unwrap_err();
        assert_eq!(
            (e.line, e.column, e.message.as_str()),
            (1, 6, "expected :, found 1")
        );
        let e = parse_json(b"[\"abc").unwrap_err();
        assert_eq!(
            e.message,
            "unterminated string starting at line 1, column 2"
        );
        let e = parse_json(b"[1] 2").unwrap_err();
        assert_eq!(e.message, "expected end of input, found 2");
        let e = parse_json(b"").unwrap_err();
        assert_eq!(e.message, "expected a JSON value, found end of input");
    }

    #[test]
    fn to_json() {
        let v = super::super::parse_one(
            br##"{:a :elle.list-append/init, "s" [... 1N 1.5 #{1}], 1 nil, [1 2] \c, :t #inst "2020", :l (1)}"##,
        )
        .unwrap();
        assert_eq!(
            value_to_json(&v).to_string(),
            r##"{"a":"init","s":["...",1,1.5,[1]],"1":null,"[1 2]":"c","t":"#inst \"2020\"","l":[1]}"##
        );
    }
}
