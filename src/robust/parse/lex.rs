//! The lexer of the program language: identifiers, integers and symbols,
//! each with its line:column.

use crate::robust::syntax::{Pos, SyntaxError};

#[derive(Clone, Debug, PartialEq)]
pub(super) enum Tok {
    Ident(String),
    Int(i64),
    Sym(&'static str),
    Eof,
}

pub(super) struct Token {
    pub(super) tok: Tok,
    pub(super) pos: Pos,
}

const SYMS: &[&str] = &[
    "..", "<=", ">=", "!=", "<>", "(", ")", "{", "}", ",", ";", ":", "=", "<", ">", "+", "-", "*",
    "/", ".",
];

pub(super) fn lex(src: &str) -> Result<Vec<Token>, SyntaxError> {
    let mut out = Vec::new();
    let chars: Vec<char> = src.chars().collect();
    let (mut i, mut line, mut col) = (0usize, 1u32, 1u32);
    while i < chars.len() {
        let c = chars[i];
        let pos = Pos { line, column: col };
        let adv = |n: usize, i: &mut usize, col: &mut u32| {
            *i += n;
            *col += n as u32;
        };
        if c == '\n' {
            i += 1;
            line += 1;
            col = 1;
        } else if c.is_whitespace() {
            adv(1, &mut i, &mut col);
        } else if c == '#' || (c == '-' && chars.get(i + 1) == Some(&'-')) {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c.is_ascii_digit() {
            let start = i;
            while i < chars.len() && chars[i].is_ascii_digit() {
                i += 1;
            }
            let text: String = chars[start..i].iter().collect();
            col += (i - start) as u32;
            let n = text.parse::<i64>().map_err(|_| SyntaxError {
                pos,
                message: format!("integer {text} does not fit in 64 bits"),
            })?;
            out.push(Token {
                tok: Tok::Int(n),
                pos,
            });
        } else if c.is_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            col += (i - start) as u32;
            out.push(Token {
                tok: Tok::Ident(chars[start..i].iter().collect()),
                pos,
            });
        } else {
            let uni = match c {
                '∈' => Some("IN"),
                '¬' => Some("NOT"),
                '∧' => Some("AND"),
                '∨' => Some("OR"),
                '≤' => Some("<="),
                '≥' => Some(">="),
                '≠' => Some("!="),
                _ => None,
            };
            if let Some(u) = uni {
                let tok = if u.chars().all(char::is_alphabetic) {
                    Tok::Ident(u.to_string())
                } else {
                    Tok::Sym(SYMS.iter().copied().find(|s| *s == u).unwrap_or("="))
                };
                out.push(Token { tok, pos });
                adv(1, &mut i, &mut col);
                continue;
            }
            let rest: String = chars[i..chars.len().min(i + 2)].iter().collect();
            match SYMS.iter().find(|s| rest.starts_with(**s)) {
                Some(s) => {
                    out.push(Token {
                        tok: Tok::Sym(s),
                        pos,
                    });
                    adv(s.len(), &mut i, &mut col);
                }
                None => {
                    return Err(SyntaxError {
                        pos,
                        message: format!("unexpected character {c:?}"),
                    })
                }
            }
        }
    }
    out.push(Token {
        tok: Tok::Eof,
        pos: Pos { line, column: col },
    });
    Ok(out)
}

const KEYWORDS: &[&str] = &[
    "SELECT", "AS", "FROM", "WHERE", "UPDATE", "SET", "INSERT", "INTO", "DELETE", "IF", "THEN",
    "ELSE", "FOREACH", "IN", "SKIP", "ABORT", "MIN", "MAX", "COUNT", "NULL", "AND", "OR", "NOT",
    "TABLE", "INIT", "DOMAIN", "MODEL", "TXN", "PK",
];

pub(super) fn is_keyword(s: &str) -> bool {
    KEYWORDS.iter().any(|k| k.eq_ignore_ascii_case(s))
}
