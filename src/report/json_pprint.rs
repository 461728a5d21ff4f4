//! What `clojure.data.json/pprint` (data.json 2.4.0) prints, as elle-cli's
//! `-v` output shows result maps.
//!
//! data.json's pretty printer drives `clojure.pprint` with two format
//! strings:
//!
//! * arrays (vectors, lists, sets): `~<[~;~@{~w~^, ~:_~}~;]~:>` — a logical
//!   block `[ … ]` whose elements are separated by `", "` and a *fill*
//!   conditional newline;
//! * objects: `~<{~;~@{~<~w:~_~w~:>~^, ~_~}~;}~:>` — a logical block
//!   `{ … }` whose entries are separated by `", "` and a *linear* conditional
//!   newline, each entry being its own logical block `key:` *linear newline*
//!   `value`.
//!
//! Everything else is written as one token: data.json's compact JSON for the
//! scalar (`null`, numbers, escaped strings, keywords and symbols by name).
//!
//! The layout is decided by clojure.pprint's pretty writer (an XP-style
//! algorithm with right margin 72 and miser width 40). Its decisions depend
//! on quirks of that implementation — which tokens count as a newline's
//! section, when buffered tokens are flushed, the strict `<` in the fit
//! test, the trailing space of `", "` vanishing at a line break — so this
//! module re-enacts the writer's token buffer step by step rather than
//! approximating it with a simpler layout rule.

use crate::edn::{pr_str, Value};
use std::rc::Rc;

/// `*print-right-margin*`.
const RIGHT_MARGIN: usize = 72;
/// `*print-miser-width*`.
const MISER_WIDTH: usize = 40;

/// What `clojure.data.json/pprint` 2.4.0 prints for this value (followed by
/// a newline, as pprint does).
///
/// Keywords and symbols print by name (namespace dropped), map keys by
/// `name` for keywords and symbols and Clojure's `str` for anything else;
/// strings are escaped with data.json's defaults (`\uXXXX` for every
/// non-ASCII UTF-16 unit, `\/` for `/`). Sets print in their stored order.
///
/// Where data.json would throw instead of printing (characters, infinite or
/// NaN floats, `nil` map keys) this prints something reasonable instead: a
/// one-character string, the strings `"##Inf"`, `"##-Inf"` and `"##NaN"`
/// (EDN's spelling: JSON has no such numbers, and `null` would be taken for
/// nil), and an empty key. Tagged literals print as a JSON string holding
/// their EDN form.
pub fn pprint_json(v: &Value) -> String {
    let mut w = PrettyWriter::new();
    write_value(&mut w, v);
    w.finish()
}

// ---------------------------------------------------------------------------
// data.json's dispatch

fn write_value(w: &mut PrettyWriter, v: &Value) {
    match v {
        Value::Map(entries) => {
            w.start_block("{", "}");
            for (i, (k, v)) in entries.iter().enumerate() {
                w.start_block("", "");
                w.write(&json_string(&key_str(k)));
                w.write(":");
                w.newline(NlKind::Linear);
                write_value(w, v);
                w.end_block();
                if i + 1 < entries.len() {
                    w.write(", ");
                    w.newline(NlKind::Linear);
                }
            }
            w.end_block();
        }
        Value::Vector(items) | Value::List(items) | Value::Set(items) => {
            w.start_block("[", "]");
            for (i, item) in items.iter().enumerate() {
                write_value(w, item);
                if i + 1 < items.len() {
                    w.write(", ");
                    w.newline(NlKind::Fill);
                }
            }
            w.end_block();
        }
        scalar => w.write(&scalar_json(scalar)),
    }
}

/// data.json's compact form of a non-collection value.
fn scalar_json(v: &Value) -> String {
    match v {
        Value::Nil => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Int(n) => n.to_string(),
        Value::BigInt(digits) => bigint_str(digits).into(),
        Value::Float(text) => match float_str(text) {
            Some(s) if !s.contains("Infinity") && !s.contains("NaN") => s,
            // data.json refuses infinite and NaN doubles; JSON has no
            // numbers for them. Their EDN form, as a string, keeps them
            // apart from each other and from nil.
            _ => json_string(crate::edn::json::non_finite_edn(
                crate::edn::json::float_value(text),
            )),
        },
        Value::Str(s) => json_string(s),
        Value::Keyword(n) | Value::Symbol(n) => json_string(name_of(n)),
        // data.json has no writer for characters; a string is the nearest.
        Value::Char(c) => json_string(&c.to_string()),
        other => json_string(&pr_str(other)),
    }
}

/// Clojure's `str` of a big integer: its digits, no `N`.
fn bigint_str(digits: &str) -> &str {
    digits.strip_prefix('+').unwrap_or(digits)
}

/// Clojure's `str` of a stored float text: `Double.toString` for doubles
/// (our stored text already), `BigDecimal.toString` for `…M`, and a
/// ratio's double value for `n/d` (data.json writes ratios as doubles).
/// `None` for texts that are not numbers.
fn float_str(text: &str) -> Option<String> {
    match text {
        "##Inf" => return Some("Infinity".into()),
        "##-Inf" => return Some("-Infinity".into()),
        "##NaN" => return Some("NaN".into()),
        _ => {}
    }
    if let Some(dec) = text.strip_suffix('M') {
        return Some(dec.to_string());
    }
    if let Some((n, d)) = text.split_once('/') {
        let x = n.parse::<f64>().ok()? / d.parse::<f64>().ok()?;
        // `1/0` and `0/0` have no JSON number (the caller spells them).
        return x.is_finite().then(|| crate::edn::java_double(x));
    }
    Some(text.to_string())
}

/// data.json's default key function: `name` for keywords and symbols,
/// `str` for everything else.
fn key_str(k: &Value) -> String {
    match k {
        Value::Keyword(n) | Value::Symbol(n) => name_of(n).to_string(),
        Value::Str(s) => s.clone(),
        // data.json throws on nil keys.
        Value::Nil => String::new(),
        Value::Bool(b) => b.to_string(),
        Value::Int(n) => n.to_string(),
        Value::BigInt(d) => bigint_str(d).to_string(),
        Value::Float(t) => match t.split_once('/') {
            // `str` of a ratio is the ratio itself.
            Some(_) => t.clone(),
            None => float_str(t).unwrap_or_else(|| t.clone()),
        },
        Value::Char(c) => c.to_string(),
        other => pr_str(other),
    }
}

/// Clojure's `name`: the part after the first `/`, unless the whole thing
/// is `/`.
fn name_of(n: &str) -> &str {
    match n.find('/') {
        Some(p) if n != "/" => &n[p + 1..],
        _ => n,
    }
}

/// A JSON string literal as data.json writes it with its default options
/// (`:escape-unicode`, `:escape-js-separators` and `:escape-slash` all
/// true): escapes are per UTF-16 unit, hex digits lower case.
fn json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for unit in s.encode_utf16() {
        match unit {
            0x22 => out.push_str("\\\""),
            0x5c => out.push_str("\\\\"),
            0x2f => out.push_str("\\/"),
            0x08 => out.push_str("\\b"),
            0x0c => out.push_str("\\f"),
            0x0a => out.push_str("\\n"),
            0x0d => out.push_str("\\r"),
            0x09 => out.push_str("\\t"),
            0x20..=0x7f => out.push(unit as u8 as char),
            _ => {
                out.push_str("\\u");
                out.push_str(&format!("{unit:04x}"));
            }
        }
    }
    out.push('"');
    out
}

// ---------------------------------------------------------------------------
// clojure.pprint's pretty writer

/// Kinds of conditional newline data.json uses (`~_` and `~:_`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum NlKind {
    Linear,
    Fill,
}

/// A logical block's state (`clojure.pprint`'s `logical-block` struct).
struct Block {
    parent: Option<usize>,
    start_col: usize,
    indent: usize,
    done_nl: bool,
    intra_block_nl: bool,
    prefix: &'static str,
    suffix: &'static str,
}

enum TokKind {
    /// Text and the trailing whitespace split off it.
    Blob {
        data: String,
        tws: String,
    },
    Newline(NlKind),
    StartBlock,
    EndBlock,
}

/// A buffered token. Tokens are compared by identity, as Clojure's value
/// equality on them amounts to.
struct TokData {
    kind: TokKind,
    block: usize,
    start: usize,
    end: usize,
}

type Tok = Rc<TokData>;

fn is_nl(t: &Tok) -> bool {
    matches!(t.kind, TokKind::Newline(_))
}

fn same_tokens(a: &[Tok], b: &[Tok]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| Rc::ptr_eq(x, y))
}

/// The pretty writer over a column-tracking string.
struct PrettyWriter {
    out: String,
    /// The column writer's current column.
    col: usize,
    blocks: Vec<Block>,
    current: usize,
    /// `:mode :buffering` (set by the first conditional newline and never
    /// reset, as in clojure.pprint).
    buffering: bool,
    trailing_ws: Option<String>,
    buffer: Vec<Tok>,
    pos: usize,
}

impl PrettyWriter {
    fn new() -> Self {
        PrettyWriter {
            out: String::new(),
            col: 0,
            blocks: vec![Block {
                parent: None,
                start_col: 0,
                indent: 0,
                done_nl: false,
                intra_block_nl: false,
                prefix: "",
                suffix: "",
            }],
            current: 0,
            buffering: false,
            trailing_ws: None,
            buffer: Vec::new(),
            pos: 0,
        }
    }

    // --- the column writer underneath

    fn base(&mut self, s: &str) {
        match s.rfind('\n') {
            Some(nl) => self.col = s[nl + 1..].chars().count(),
            None => self.col += s.chars().count(),
        }
        self.out.push_str(s);
    }

    fn write_white_space(&mut self) {
        if let Some(ws) = self.trailing_ws.take() {
            self.base(&ws);
        }
    }

    // --- the writer's entry points

    /// `.write` of a string without newlines.
    fn write(&mut self, s0: &str) {
        let s = s0.trim_end_matches([' ', '\t', '\n', '\u{b}', '\u{c}', '\r']);
        let ws = &s0[s.len()..];
        if !self.buffering {
            self.write_white_space();
            self.base(s);
            self.trailing_ws = Some(ws.to_string());
        } else {
            let start = self.pos;
            self.pos += s0.chars().count();
            self.add_to_buffer(
                TokKind::Blob {
                    data: s.to_string(),
                    tws: ws.to_string(),
                },
                self.current,
                start,
            );
        }
    }

    fn start_block(&mut self, prefix: &'static str, suffix: &'static str) {
        self.blocks.push(Block {
            parent: Some(self.current),
            start_col: 0,
            indent: 0,
            done_nl: false,
            intra_block_nl: false,
            prefix,
            suffix,
        });
        let b = self.blocks.len() - 1;
        self.current = b;
        if !self.buffering {
            self.write_white_space();
            self.base(prefix);
            self.blocks[b].start_col = self.col;
            self.blocks[b].indent = self.col;
        } else {
            let start = self.pos;
            self.pos += prefix.len();
            self.add_to_buffer(TokKind::StartBlock, b, start);
        }
    }

    fn end_block(&mut self) {
        let b = self.current;
        let suffix = self.blocks[b].suffix;
        if !self.buffering {
            self.write_white_space();
            self.base(suffix);
        } else {
            let start = self.pos;
            self.pos += suffix.len();
            self.add_to_buffer(TokKind::EndBlock, b, start);
        }
        self.current = self.blocks[b].parent.unwrap_or(0);
    }

    fn newline(&mut self, kind: NlKind) {
        self.buffering = true;
        let pos = self.pos;
        self.add_to_buffer(TokKind::Newline(kind), self.current, pos);
    }

    /// `(prn)` then the final flush: the output so far plus a newline.
    fn finish(mut self) -> String {
        if self.buffering {
            self.write_line();
            let buf = std::mem::take(&mut self.buffer);
            self.write_tokens(&buf, true);
        } else {
            self.write_white_space();
        }
        self.base("\n");
        self.out
    }

    // --- the buffer

    fn add_to_buffer(&mut self, kind: TokKind, block: usize, start: usize) {
        self.buffer.push(Rc::new(TokData {
            kind,
            block,
            start,
            end: self.pos,
        }));
        if !self.tokens_fit(&self.buffer) {
            self.write_line();
        }
    }

    fn tokens_fit(&self, tokens: &[Tok]) -> bool {
        let len = match (tokens.first(), tokens.last()) {
            (Some(f), Some(l)) => l.end - f.start,
            _ => 0,
        };
        self.col + len < RIGHT_MARGIN
    }

    /// Writes out buffered tokens while they overflow the line. As in
    /// clojure.pprint, this stops once an empty (`nil`) buffer still
    /// overflows, which happens when the column is already past the margin.
    fn write_line(&mut self) {
        let mut was_nil = false;
        while !self.tokens_fit(&self.buffer) {
            let buf = std::mem::take(&mut self.buffer);
            let next = self.write_token_string(&buf);
            if was_nil && next.is_none() {
                break;
            }
            was_nil = next.is_none();
            self.buffer = next.unwrap_or_default();
        }
    }

    /// Writes tokens up to the first newline, decides that newline, and
    /// returns what is left to buffer (`None` for Clojure's `nil`).
    fn write_token_string(&mut self, tokens: &[Tok]) -> Option<Vec<Tok>> {
        let first_nl = tokens.iter().position(is_nl).unwrap_or(tokens.len());
        let (a, b) = tokens.split_at(first_nl);
        self.write_tokens(a, false);
        let newl = b.first()?.clone();
        let lb = newl.block;
        // The section runs to the next newline of a strict ancestor block;
        // the sub-section to the next newline of this block or an ancestor.
        let rest = &b[1..];
        let section_len = rest
            .iter()
            .position(|t| is_nl(t) && self.is_ancestor(t.block, lb))
            .unwrap_or(rest.len());
        let section = &rest[..section_len];
        let remainder = &rest[section_len..];
        let sub_len = rest
            .iter()
            .position(|t| is_nl(t) && (t.block == lb || self.is_ancestor(t.block, lb)))
            .unwrap_or(rest.len());
        let subsection = &rest[..sub_len];
        let do_nl = self.emit_nl_p(&newl, section, subsection);
        let mut result: Vec<Tok> = if do_nl {
            self.emit_nl(lb);
            rest.to_vec()
        } else {
            b.to_vec()
        };
        if !self.tokens_fit(&result) {
            let rem2 = self.write_token_string(section).unwrap_or_default();
            if same_tokens(&rem2, section) {
                self.write_tokens(section, false);
                result = remainder.to_vec();
            } else {
                result = rem2;
                result.extend_from_slice(remainder);
            }
        }
        Some(result)
    }

    fn write_tokens(&mut self, tokens: &[Tok], force_trailing_ws: bool) {
        for t in tokens {
            if !is_nl(t) {
                if let Some(ws) = self.trailing_ws.clone() {
                    self.base(&ws);
                }
            }
            self.write_token(t);
            self.trailing_ws = match &t.kind {
                TokKind::Blob { tws, .. } => Some(tws.clone()),
                _ => None,
            };
        }
        if force_trailing_ws {
            self.write_white_space();
        }
    }

    fn write_token(&mut self, t: &Tok) {
        let b = t.block;
        match &t.kind {
            TokKind::StartBlock => {
                let prefix = self.blocks[b].prefix;
                self.base(prefix);
                self.blocks[b].start_col = self.col;
                self.blocks[b].indent = self.col;
            }
            TokKind::EndBlock => {
                let suffix = self.blocks[b].suffix;
                self.base(suffix);
            }
            TokKind::Blob { data, .. } => self.base(data),
            TokKind::Newline(kind) => {
                if *kind != NlKind::Fill && self.blocks[b].done_nl {
                    self.emit_nl(b);
                } else if let Some(ws) = self.trailing_ws.clone() {
                    self.base(&ws);
                }
                self.trailing_ws = None;
            }
        }
    }

    // --- newline decisions

    /// Whether `ancestor` is a strict ancestor of `block`.
    fn is_ancestor(&self, ancestor: usize, block: usize) -> bool {
        let mut b = self.blocks[block].parent;
        while let Some(p) = b {
            if p == ancestor {
                return true;
            }
            b = self.blocks[p].parent;
        }
        false
    }

    fn linear_nl(&self, lb: usize, section: &[Tok]) -> bool {
        self.blocks[lb].done_nl || !self.tokens_fit(section)
    }

    fn miser_nl(&self, lb: usize, section: &[Tok]) -> bool {
        self.blocks[lb].start_col >= RIGHT_MARGIN - MISER_WIDTH && self.linear_nl(lb, section)
    }

    fn emit_nl_p(&self, newl: &Tok, section: &[Tok], subsection: &[Tok]) -> bool {
        let lb = newl.block;
        match newl.kind {
            TokKind::Newline(NlKind::Linear) => self.linear_nl(lb, section),
            TokKind::Newline(NlKind::Fill) => {
                self.blocks[lb].intra_block_nl
                    || !self.tokens_fit(subsection)
                    || self.miser_nl(lb, section)
            }
            _ => false,
        }
    }

    fn emit_nl(&mut self, lb: usize) {
        self.base("\n");
        self.trailing_ws = None;
        let indent = self.blocks[lb].indent;
        self.base(&" ".repeat(indent));
        self.blocks[lb].intra_block_nl = false;
        self.blocks[lb].done_nl = true;
        let mut p = self.blocks[lb].parent;
        while let Some(b) = p {
            self.blocks[b].done_nl = true;
            self.blocks[b].intra_block_nl = true;
            p = self.blocks[b].parent;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scalars_and_escapes() {
        assert_eq!(pprint_json(&Value::Nil), "null\n");
        assert_eq!(
            pprint_json(&Value::Str("a/b\u{e9}\u{2028}\n\u{1}\u{1f600}".into())),
            "\"a\\/b\\u00e9\\u2028\\n\\u0001\\ud83d\\ude00\"\n"
        );
        assert_eq!(
            pprint_json(&Value::kw("elle.list-append/init")),
            "\"init\"\n"
        );
        assert_eq!(pprint_json(&Value::Vector(vec![])), "[]\n");
        assert_eq!(pprint_json(&Value::Map(vec![])), "{}\n");
    }

    #[test]
    fn long_vector_fills() {
        let v = Value::Vector((0..40).map(Value::Int).collect());
        assert_eq!(
            pprint_json(&v),
            "[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19,\n \
             20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36,\n \
             37, 38, 39]\n"
        );
    }
}
