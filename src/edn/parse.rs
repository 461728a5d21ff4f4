//! The generic EDN reader: one recursive-descent reader of every EDN form
//! (its lexing is [`super::lex`], its numbers [`super::number`]).
//!
//! Choices worth knowing:
//! - Non-`M` floats are normalised to Clojure's printed form (`1e10` →
//!   `1.0E10`) so equal doubles compare equal; `M` (BigDecimal) literals and
//!   ratios (`1/2`) are kept as their source text in [`Value::Float`] (Clojure
//!   would print them back the same way, modulo ratio reduction).
//! - `::auto` is kept as `Keyword(":auto")` (there is no namespace to resolve
//!   against), so it prints back as `::auto`.
//! - Regex literals `#"..."` read as `Tagged("regex", Str(raw source))`.
//! - Metadata (`^m x`) is read and dropped; `'x` reads as `(quote x)`.
//! - Lone UTF-16 surrogates in `\u` escapes become U+FFFD (Rust strings cannot
//!   hold them).

use super::lex::{skip_char, unclosed, unterminated_string};
use super::number::is_hex;
use super::Value;

// Where the fast reader (`crate::read`) and the rest of the crate have
// always found the lexing helpers and number reading.
pub(crate) use super::lex::{
    found, is_delim, skip_form, skip_string, skip_trivia, skip_ws, token_end, utf8_len,
};
pub use super::lex::{line_col, ParseError};
pub use super::number::java_double;
pub(crate) use super::number::parse_number;

/// Parses every top-level form in `src`.
pub fn parse_all(src: &[u8]) -> Result<Vec<Value>, ParseError> {
    let mut p = Parser::new(src, 0);
    let mut out = Vec::new();
    loop {
        p.skip_ws()?;
        if p.pos >= src.len() {
            return Ok(out);
        }
        out.push(p.value()?);
    }
}

/// Parses exactly one form (surrounding whitespace and comments allowed).
pub fn parse_one(src: &[u8]) -> Result<Value, ParseError> {
    let mut p = Parser::new(src, 0);
    let v = p.value()?;
    p.skip_ws()?;
    if p.pos < src.len() {
        return Err(p.err(
            p.pos,
            format!("expected end of input, found {}", found(src, p.pos)),
        ));
    }
    Ok(v)
}

/// Parses one form starting at byte `pos`; returns it and the offset just
/// past it. Used by the fast reader for values it does not handle itself.
pub(crate) fn parse_value_at(src: &[u8], pos: usize) -> Result<(Value, usize), ParseError> {
    let mut p = Parser::new(src, pos);
    let v = p.value()?;
    Ok((v, p.pos))
}

/// Deeper nesting than this is refused rather than risking the stack.
const MAX_DEPTH: u32 = 256;

struct Parser<'a> {
    src: &'a [u8],
    pos: usize,
    depth: u32,
    scratch: Vec<(u8, usize)>,
}

impl<'a> Parser<'a> {
    fn new(src: &'a [u8], pos: usize) -> Self {
        Parser {
            src,
            pos,
            depth: 0,
            scratch: Vec::new(),
        }
    }

    fn err(&self, at: usize, msg: impl Into<String>) -> ParseError {
        ParseError::at(self.src, at, msg)
    }

    fn skip_ws(&mut self) -> Result<(), ParseError> {
        self.pos = skip_ws(self.src, self.pos, &mut self.scratch)?;
        Ok(())
    }

    fn value(&mut self) -> Result<Value, ParseError> {
        self.skip_ws()?;
        let start = self.pos;
        let Some(&b) = self.src.get(start) else {
            return Err(self.err(start, "expected a value, found end of input"));
        };
        if self.depth >= MAX_DEPTH {
            return Err(self.err(start, "expected at most 256 levels of nesting, found more"));
        }
        self.depth += 1;
        let v = match b {
            b'(' => Value::List(self.seq(b')')?),
            b'[' => Value::Vector(self.seq(b']')?),
            b'{' => self.map()?,
            b')' | b']' | b'}' => {
                return Err(self.err(start, format!("expected a value, found {}", b as char)))
            }
            b'"' => Value::Str(self.string()?),
            b'\\' => Value::Char(self.character()?),
            b':' => self.keyword()?,
            b'#' => self.dispatch()?,
            b'\'' => {
                self.pos += 1;
                Value::List(vec![Value::Symbol("quote".into()), self.value()?])
            }
            b'^' => {
                self.pos += 1;
                self.value()?; // metadata: dropped
                self.value()?
            }
            _ => self.token()?,
        };
        self.depth -= 1;
        Ok(v)
    }

    /// Reads forms up to `close`; `self.pos` is at the opening bracket.
    fn seq(&mut self, close: u8) -> Result<Vec<Value>, ParseError> {
        let open = self.pos;
        self.pos += 1;
        let mut items = Vec::new();
        loop {
            self.skip_ws()?;
            match self.src.get(self.pos) {
                None => return Err(unclosed(self.src, self.pos, close, open)),
                Some(&c) if c == close => {
                    self.pos += 1;
                    return Ok(items);
                }
                Some(b')' | b']' | b'}') => return Err(unclosed(self.src, self.pos, close, open)),
                Some(_) => items.push(self.value()?),
            }
        }
    }

    fn map(&mut self) -> Result<Value, ParseError> {
        let items = self.seq(b'}')?;
        if items.len() % 2 == 1 {
            return Err(self.err(
                self.pos - 1,
                format!(
                    "expected a value for map key {}, found }}",
                    super::pr_str(&items[items.len() - 1])
                ),
            ));
        }
        let mut entries = Vec::with_capacity(items.len() / 2);
        let mut it = items.into_iter();
        while let (Some(k), Some(v)) = (it.next(), it.next()) {
            entries.push((k, v));
        }
        Ok(Value::Map(entries))
    }

    fn string(&mut self) -> Result<String, ParseError> {
        let start = self.pos;
        let src = self.src;
        let mut out: Vec<u8> = Vec::new();
        let mut j = start + 1;
        loop {
            let Some(p) = memchr::memchr2(b'"', b'\\', &src[j.min(src.len())..]) else {
                return Err(unterminated_string(src, start));
            };
            out.extend_from_slice(&src[j..j + p]);
            j += p;
            if src[j] == b'"' {
                j += 1;
                break;
            }
            // An escape.
            let Some(&e) = src.get(j + 1) else {
                return Err(unterminated_string(src, start));
            };
            let mut push = |c: char| {
                let mut buf = [0u8; 4];
                out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            };
            match e {
                b'"' => push('"'),
                b'\\' => push('\\'),
                b'n' => push('\n'),
                b't' => push('\t'),
                b'r' => push('\r'),
                b'b' => push('\u{8}'),
                b'f' => push('\u{c}'),
                b'u' => {
                    let (c, end) = self.unicode_escape(j)?;
                    push(c);
                    j = end;
                    continue;
                }
                b'0'..=b'7' => {
                    let mut k = j + 1;
                    let mut n = 0u32;
                    while k < src.len() && k < j + 4 && (b'0'..=b'7').contains(&src[k]) {
                        n = n * 8 + (src[k] - b'0') as u32;
                        k += 1;
                    }
                    push(char::from_u32(n).unwrap_or('\u{FFFD}'));
                    j = k;
                    continue;
                }
                _ => {
                    return Err(self.err(
                        j,
                        format!(
                            "expected an escape (one of \\\" \\\\ \\n \\t \\r \\b \\f \\uXXXX), found \\{}",
                            String::from_utf8_lossy(&src[j + 1..(j + 1 + utf8_len(e)).min(src.len())])
                        ),
                    ))
                }
            }
            j += 2;
        }
        self.pos = j;
        String::from_utf8(out).map_err(|e| {
            // Map the bad byte back approximately: report at the string start.
            let _ = e;
            self.err(start, "expected UTF-8 text in string, found invalid bytes")
        })
    }

    /// Reads `\uXXXX` at `j` (the backslash), combining surrogate pairs.
    fn unicode_escape(&self, j: usize) -> Result<(char, usize), ParseError> {
        let hex = |at: usize| -> Result<u32, ParseError> {
            let digits = self.src.get(at..at + 4).unwrap_or(&[]);
            let text = std::str::from_utf8(digits).unwrap_or("");
            if text.len() == 4 && text.bytes().all(|b| b.is_ascii_hexdigit()) {
                Ok(u32::from_str_radix(text, 16).unwrap_or(0))
            } else {
                Err(self.err(
                    at,
                    format!(
                        "expected 4 hex digits after \\u, found {}",
                        found(self.src, at)
                    ),
                ))
            }
        };
        let hi = hex(j + 2)?;
        let mut end = j + 6;
        let c = if (0xD800..0xDC00).contains(&hi) {
            if self.src.get(end..end + 2) == Some(b"\\u") {
                let lo = hex(end + 2)?;
                if (0xDC00..0xE000).contains(&lo) {
                    end += 6;
                    char::from_u32(0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00))
                } else {
                    None
                }
            } else {
                None
            }
        } else {
            char::from_u32(hi)
        };
        Ok((c.unwrap_or('\u{FFFD}'), end))
    }

    fn character(&mut self) -> Result<char, ParseError> {
        let start = self.pos;
        let end = skip_char(self.src, start)?;
        let text = std::str::from_utf8(&self.src[start + 1..end])
            .map_err(|_| self.err(start, "expected a character, found invalid UTF-8"))?;
        self.pos = end;
        let mut chars = text.chars();
        let first = chars.next().unwrap_or(' ');
        if chars.next().is_none() {
            return Ok(first);
        }
        let c = match text {
            "newline" => Some('\n'),
            "space" => Some(' '),
            "tab" => Some('\t'),
            "backspace" => Some('\u{8}'),
            "formfeed" => Some('\u{c}'),
            "return" => Some('\r'),
            _ if text.len() == 5 && text.starts_with('u') => u32::from_str_radix(&text[1..], 16)
                .ok()
                .and_then(char::from_u32),
            _ if text.len() >= 2 && text.len() <= 4 && text.starts_with('o') => {
                u32::from_str_radix(&text[1..], 8)
                    .ok()
                    .and_then(char::from_u32)
            }
            _ => None,
        };
        c.ok_or_else(|| self.err(start, format!("expected a character name, found \\{text}")))
    }

    fn keyword(&mut self) -> Result<Value, ParseError> {
        let start = self.pos;
        let end = token_end(self.src, start + 1);
        self.pos = end;
        let name = std::str::from_utf8(&self.src[start + 1..end])
            .map_err(|_| self.err(start, "expected a keyword, found invalid UTF-8"))?;
        if name.is_empty() || name == ":" {
            return Err(self.err(
                start,
                format!("expected a keyword name, found {}", found(self.src, start)),
            ));
        }
        Ok(Value::Keyword(name.to_string()))
    }

    fn dispatch(&mut self) -> Result<Value, ParseError> {
        let start = self.pos;
        match self.src.get(start + 1) {
            Some(b'{') => {
                self.pos += 1;
                Ok(Value::Set(self.seq(b'}')?))
            }
            Some(b'#') => {
                let end = token_end(self.src, start + 2);
                let text = &self.src[start..end];
                self.pos = end;
                match text {
                    b"##Inf" | b"##-Inf" | b"##NaN" => {
                        Ok(Value::Float(String::from_utf8_lossy(text).into_owned()))
                    }
                    _ => Err(self.err(
                        start,
                        format!(
                            "expected ##Inf, ##-Inf or ##NaN, found {}",
                            String::from_utf8_lossy(text)
                        ),
                    )),
                }
            }
            Some(b'"') => {
                let end = skip_string(self.src, start + 1)?;
                self.pos = end;
                let raw = String::from_utf8_lossy(&self.src[start + 2..end - 1]).into_owned();
                Ok(Value::Tagged("regex".into(), Box::new(Value::Str(raw))))
            }
            Some(b':') => {
                // Namespaced map: `#:ns{:a 1}` qualifies bare keyword keys.
                let end = token_end(self.src, start + 2);
                let ns = String::from_utf8_lossy(&self.src[start + 2..end]).into_owned();
                self.pos = end;
                if self.src.get(end) != Some(&b'{') || ns.is_empty() {
                    return Err(self.err(
                        start,
                        format!(
                            "expected a namespaced map, found {}",
                            found(self.src, start)
                        ),
                    ));
                }
                match self.map()? {
                    Value::Map(entries) => Ok(Value::Map(
                        entries
                            .into_iter()
                            .map(|(k, v)| match k {
                                Value::Keyword(n) if !n.contains('/') => {
                                    (Value::Keyword(format!("{ns}/{n}")), v)
                                }
                                Value::Keyword(n) if n.starts_with("_/") => {
                                    (Value::Keyword(n[2..].to_string()), v)
                                }
                                k => (k, v),
                            })
                            .collect(),
                    )),
                    other => Ok(other),
                }
            }
            _ => {
                let end = token_end(self.src, start + 1);
                if end == start + 1 {
                    return Err(self.err(
                        start,
                        format!("expected a tag after #, found {}", found(self.src, start)),
                    ));
                }
                let tag = String::from_utf8_lossy(&self.src[start + 1..end]).into_owned();
                self.pos = end;
                let v = self.value()?;
                Ok(Value::Tagged(tag, Box::new(v)))
            }
        }
    }

    fn token(&mut self) -> Result<Value, ParseError> {
        let start = self.pos;
        let end = token_end(self.src, start + 1);
        self.pos = end;
        let text = std::str::from_utf8(&self.src[start..end])
            .map_err(|_| self.err(start, "expected a symbol, found invalid UTF-8"))?;
        match text {
            "nil" => return Ok(Value::Nil),
            "true" => return Ok(Value::Bool(true)),
            "false" => return Ok(Value::Bool(false)),
            _ => {}
        }
        let b = text.as_bytes();
        let numeric = b[0].is_ascii_digit()
            || (b.len() > 1 && (b[0] == b'+' || b[0] == b'-') && b[1].is_ascii_digit());
        if numeric && !is_hex(text) {
            parse_number(text)
                .ok_or_else(|| self.err(start, format!("expected a number, found {text}")))
        } else {
            Ok(Value::Symbol(text.to_string()))
        }
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
    fn scalars() {
        let vs = parse_all(b"nil true false 1 -2 +3 9223372036854775808 12N -0N 1.5 1e10 1.50M 1/2 2.5E-5 0.001 ##Inf").unwrap();
        assert_eq!(
            vs,
            vec![
                Nil,
                Bool(true),
                Bool(false),
                Int(1),
                Int(-2),
                Int(3),
                BigInt("9223372036854775808".into()),
                BigInt("12".into()),
                BigInt("-0".into()),
                Float("1.5".into()),
                Float("1.0E10".into()),
                Float("1.50M".into()),
                Float("1/2".into()),
                Float("2.5E-5".into()),
                Float("0.001".into()),
                Float("##Inf".into()),
            ]
        );
    }

    #[test]
    fn strings_chars_keywords_symbols() {
        let vs = parse_all(
            br#""a\"b\\c\n\t\r\b\f\u00e9\ud83d\ude00" \a \newline \space \tab \u0041 \( :elle.list-append/init ::auto ... com.foo.Exception"#,
        )
        .unwrap();
        assert_eq!(
            vs,
            vec![
                Str("a\"b\\c\n\t\r\u{8}\u{c}é😀".into()),
                Char('a'),
                Char('\n'),
                Char(' '),
                Char('\t'),
                Char('A'),
                Char('('),
                kw("elle.list-append/init"),
                kw(":auto"),
                Symbol("...".into()),
                Symbol("com.foo.Exception".into()),
            ]
        );
    }

    #[test]
    fn collections_comments_discard_tags() {
        let v = parse_one(
            b"; head\n{:a [1, 2 (3)], \"k\" #{:x}, [1] {}, #_ :gone :b #inst \"2020\" :o #object[Foo 0x1 \"x\"] :r #jepsen.history.Op{:index 1} :u #weird/tag 5}",
        )
        .unwrap();
        assert_eq!(
            v,
            Map(vec![
                (kw("a"), Vector(vec![Int(1), Int(2), List(vec![Int(3)])])),
                (Str("k".into()), Set(vec![kw("x")])),
                (Vector(vec![Int(1)]), Map(vec![])),
                (kw("b"), Tagged("inst".into(), Box::new(Str("2020".into())))),
                (
                    kw("o"),
                    Tagged(
                        "object".into(),
                        Box::new(Vector(vec![
                            Symbol("Foo".into()),
                            Symbol("0x1".into()),
                            Str("x".into())
                        ]))
                    )
                ),
                (
                    kw("r"),
                    Tagged(
                        "jepsen.history.Op".into(),
                        Box::new(Map(vec![(kw("index"), Int(1))]))
                    )
                ),
                (kw("u"), Tagged("weird/tag".into(), Box::new(Int(5)))),
            ])
        );
        assert_eq!(
            parse_one(b"#:foo{:a 1 :b/c 2}").unwrap(),
            Map(vec![(kw("foo/a"), Int(1)), (kw("b/c"), Int(2))])
        );
    }

    fn err(src: &str) -> (u32, u32, String) {
        let e = parse_all(src.as_bytes()).unwrap_err();
        (e.line, e.column, e.message)
    }

    #[test]
    fn errors() {
        assert_eq!(
            err("[1 2"),
            (
                1,
                5,
                "expected ] to close [ at line 1, column 1, found end of input".into()
            )
        );
        assert_eq!(
            err("\n  (1 2]"),
            (
                2,
                7,
                "expected ) to close ( at line 2, column 3, found ]".into()
            )
        );
        assert_eq!(
            err("x\n  \"abc"),
            (
                2,
                3,
                "unterminated string starting at line 2, column 3".into()
            )
        );
        assert_eq!(err("}"), (1, 1, "expected a value, found }".into()));
        assert_eq!(
            err("{:a}"),
            (1, 4, "expected a value for map key :a, found }".into())
        );
        assert_eq!(err("1x"), (1, 1, "expected a number, found 1x".into()));
        assert_eq!(
            err("\\foo"),
            (1, 1, "expected a character name, found \\foo".into())
        );
        assert_eq!(
            err("#_"),
            (1, 3, "expected a value, found end of input".into())
        );
        assert_eq!(
            err("\"a\\qb\""),
            (
                1,
                3,
                "expected an escape (one of \\\" \\\\ \\n \\t \\r \\b \\f \\uXXXX), found \\q"
                    .into()
            )
        );
        let e = parse_one(b"1 2").unwrap_err();
        assert_eq!(
            (e.line, e.column, e.message.as_str()),
            (1, 3, "expected end of input, found 2")
        );
        let deep = "[".repeat(5000);
        assert!(parse_one(deep.as_bytes()).is_err());
    }

    #[test]
    fn skipping() {
        let src = b"#_ x {:a \"}\" :b \\} :c [1 (2)]} rest";
        let mut st = Vec::new();
        let e = skip_form(src, 0, &mut st).unwrap();
        assert_eq!(&src[e..], b" rest");
        assert_eq!(found(b"{:a 1}", 0), "{:a 1}");
        assert_eq!(found(b"\"foo\" bar", 0), "\"foo\"");
        assert_eq!(found(b"", 0), "end of input");
    }

    #[test]
    fn doubles() {
        assert_eq!(java_double(1.0), "1.0");
        assert_eq!(java_double(1e7), "1.0E7");
        assert_eq!(java_double(1234567.5), "1234567.5");
        assert_eq!(java_double(0.0001), "1.0E-4");
        assert_eq!(java_double(-0.0), "-0.0");
        assert_eq!(java_double(1.5e300), "1.5E300");
    }
}
