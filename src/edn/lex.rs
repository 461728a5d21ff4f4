//! Where an EDN syntax error is (a byte offset, its line and column), and
//! the byte-level lexing that both the generic reader ([`super::parse`])
//! and the fast history reader (`crate::read`) use: delimiters, tokens,
//! whitespace and comments, and skipping a whole form without building it.

use std::fmt;

/// A syntax error, pinned to a byte offset and a 1-based line and column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// Byte offset of the problem in the input.
    pub offset: usize,
    /// 1-based line.
    pub line: u32,
    /// 1-based column, counted in characters.
    pub column: u32,
    /// What was expected and what was found.
    pub message: String,
}

impl ParseError {
    /// An error at `offset` in `src`; the line and column are computed here
    /// (errors are rare, so the O(n) scan is fine).
    pub fn at(src: &[u8], offset: usize, message: impl Into<String>) -> ParseError {
        let (line, column) = line_col(src, offset);
        ParseError {
            offset,
            line,
            column,
            message: message.into(),
        }
    }

    /// The same error as an [`crate::error::InputError`] naming `file`.
    pub fn into_input_error(self, file: &str) -> crate::error::InputError {
        crate::error::InputError {
            kind: Default::default(),
            file: file.to_string(),
            line: self.line,
            column: self.column,
            message: self.message,
        }
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.line, self.column, self.message)
    }
}

impl std::error::Error for ParseError {}

/// The newlines in `bytes` (lines start after them).
pub fn count_newlines(bytes: &[u8]) -> usize {
    memchr::memchr_iter(b'\n', bytes).count()
}

/// 1-based line and column (in characters) of a byte offset.
pub fn line_col(src: &[u8], offset: usize) -> (u32, u32) {
    let offset = offset.min(src.len());
    let before = &src[..offset];
    let line = 1 + count_newlines(before);
    let line_start = memchr::memrchr(b'\n', before).map_or(0, |p| p + 1);
    // Count characters, not bytes: skip UTF-8 continuation bytes.
    let column = 1 + before[line_start..]
        .iter()
        .filter(|&&b| (b & 0xC0) != 0x80)
        .count();
    (line as u32, column as u32)
}

/// Bytes that end a token (symbol, number, keyword, ...).
static DELIM: [bool; 256] = {
    let mut t = [false; 256];
    let ds = b" \t\n\r\x0c,()[]{}\";";
    let mut i = 0;
    while i < ds.len() {
        t[ds[i] as usize] = true;
        i += 1;
    }
    t
};

/// Whether `b` ends a token.
#[inline(always)]
pub(crate) fn is_delim(b: u8) -> bool {
    DELIM[b as usize]
}

/// The end of the token starting at `i` (the first delimiter at or after `i`).
#[inline(always)]
pub(crate) fn token_end(src: &[u8], mut i: usize) -> usize {
    while i < src.len() && !is_delim(src[i]) {
        i += 1;
    }
    i
}

/// Skips whitespace, commas and `;` comments (not `#_`).
#[inline(always)]
pub(crate) fn skip_trivia(src: &[u8], mut i: usize) -> usize {
    while i < src.len() {
        match src[i] {
            b' ' | b'\t' | b'\n' | b'\r' | b',' | 0x0c => i += 1,
            b';' => match memchr::memchr(b'\n', &src[i..]) {
                Some(p) => i += p + 1,
                None => return src.len(),
            },
            _ => break,
        }
    }
    i
}

/// Skips whitespace, comments and `#_ form` discards.
#[inline]
pub(crate) fn skip_ws(
    src: &[u8],
    mut i: usize,
    stack: &mut Vec<(u8, usize)>,
) -> Result<usize, ParseError> {
    loop {
        i = skip_trivia(src, i);
        if i + 1 < src.len() && src[i] == b'#' && src[i + 1] == b'_' {
            i = skip_trivia(src, i + 2);
            i = skip_form(src, i, stack)?;
        } else {
            return Ok(i);
        }
    }
}

/// A short description of what sits at `i`, for "found X" in messages: the
/// whole form when it is short, else its beginning.
pub(crate) fn found(src: &[u8], i: usize) -> String {
    if i >= src.len() {
        return "end of input".to_string();
    }
    let end = match skip_form(src, i, &mut Vec::new()) {
        Ok(e) if e > i => e,
        _ => token_end(src, i).max(i + utf8_len(src[i])).min(src.len()),
    };
    const MAX: usize = 40;
    let text = String::from_utf8_lossy(&src[i..end]);
    if text.chars().count() > MAX {
        let cut: String = text.chars().take(MAX).collect();
        format!("{cut}...")
    } else {
        text.into_owned()
    }
}

pub(crate) fn utf8_len(b: u8) -> usize {
    match b {
        0xF0..=0xFF => 4,
        0xE0..=0xEF => 3,
        0xC0..=0xDF => 2,
        _ => 1,
    }
}

pub(super) fn unterminated_string(src: &[u8], start: usize) -> ParseError {
    let (l, c) = line_col(src, start);
    ParseError::at(
        src,
        start,
        format!("unterminated string starting at line {l}, column {c}"),
    )
}

/// The end of the string literal whose opening quote is at `i`.
#[inline]
pub(crate) fn skip_string(src: &[u8], i: usize) -> Result<usize, ParseError> {
    let mut j = i + 1;
    loop {
        match memchr::memchr2(b'"', b'\\', &src[j.min(src.len())..]) {
            Some(p) if src[j + p] == b'"' => return Ok(j + p + 1),
            Some(p) => j += p + 2,
            None => return Err(unterminated_string(src, i)),
        }
    }
}

/// The end of the character literal whose backslash is at `i`.
pub(super) fn skip_char(src: &[u8], i: usize) -> Result<usize, ParseError> {
    if i + 1 >= src.len() {
        return Err(ParseError::at(
            src,
            i,
            "expected a character after \\, found end of input",
        ));
    }
    let first = i + 1 + utf8_len(src[i + 1]);
    Ok(token_end(src, first.min(src.len())))
}

fn closer_name(c: u8) -> char {
    c as char
}

pub(super) fn unclosed(src: &[u8], at: usize, close: u8, open: usize) -> ParseError {
    let (l, c) = line_col(src, open);
    ParseError::at(
        src,
        at,
        format!(
            "expected {} to close {} at line {l}, column {c}, found {}",
            closer_name(close),
            src[open] as char,
            found(src, at)
        ),
    )
}

/// Skips one form starting at `i` (which must not be whitespace), without
/// building it: a balanced scan aware of strings, chars, comments, discards
/// and tags. `stack` is scratch space, reused to avoid allocation.
pub(crate) fn skip_form(
    src: &[u8],
    mut i: usize,
    stack: &mut Vec<(u8, usize)>,
) -> Result<usize, ParseError> {
    stack.clear();
    // Forms still to skip at depth 0 (`#_` and `^` add one each).
    let mut need = 1usize;
    loop {
        i = skip_trivia(src, i);
        let Some(&b) = src.get(i) else {
            return Err(match stack.last() {
                Some(&(close, open)) => unclosed(src, i, close, open),
                None => ParseError::at(src, i, "expected a value, found end of input"),
            });
        };
        match b {
            b'(' | b'[' | b'{' => {
                let close = match b {
                    b'(' => b')',
                    b'[' => b']',
                    _ => b'}',
                };
                stack.push((close, i));
                i += 1;
                continue;
            }
            b')' | b']' | b'}' => match stack.pop() {
                Some((close, _)) if close == b => i += 1,
                Some((close, open)) => return Err(unclosed(src, i, close, open)),
                None => {
                    return Err(ParseError::at(
                        src,
                        i,
                        format!("expected a value, found {}", b as char),
                    ))
                }
            },
            b'"' => i = skip_string(src, i)?,
            b'\\' => i = skip_char(src, i)?,
            b'#' => match src.get(i + 1) {
                Some(b'{') => {
                    stack.push((b'}', i + 1));
                    i += 2;
                    continue;
                }
                Some(b'_') => {
                    i += 2;
                    if stack.is_empty() {
                        need += 1;
                    }
                    continue;
                }
                Some(b'"') => i = skip_string(src, i + 1)?,
                Some(b'#') => i = token_end(src, i + 2),
                Some(b':') => {
                    // Namespaced map prefix `#:ns`: the map follows.
                    i = token_end(src, i + 2);
                    continue;
                }
                _ => {
                    // A tag: the tagged form follows.
                    i = token_end(src, i + 1);
                    continue;
                }
            },
            b'\'' | b'@' => {
                i += 1;
                continue;
            }
            b'^' => {
                i += 1;
                if stack.is_empty() {
                    need += 1;
                }
                continue;
            }
            _ => i = token_end(src, i + 1),
        }
        if stack.is_empty() {
            need -= 1;
            if need == 0 {
                return Ok(i);
            }
        }
    }
}
