//! Reading elle-cli JSON histories: a top-level array of op objects (or one
//! object per line). JSON histories are small, so each op goes through the
//! generic JSON parser and the shared slow path.

use super::Builder;
use crate::edn::json::{json_op, JsonParser};
use crate::edn::ParseError;
use crate::model::Span;

/// Reads every op of a JSON history into `b`.
pub(super) fn read(src: &[u8], b: &mut Builder) -> Result<(), ParseError> {
    let mut p = JsonParser::new(src, 0);
    p.skip_ws();
    match p.peek() {
        None => Ok(()),
        Some(b'[') => {
            p.pos += 1;
            p.skip_ws();
            if p.peek() == Some(b']') {
                p.pos += 1;
            } else {
                loop {
                    p.skip_ws();
                    if p.peek() != Some(b'{') {
                        return Err(p.expected("an op object"));
                    }
                    one(src, &mut p, b)?;
                    p.skip_ws();
                    match p.peek() {
                        Some(b',') => p.pos += 1,
                        Some(b']') => {
                            p.pos += 1;
                            break;
                        }
                        _ => return Err(p.expected(", or ]")),
                    }
                }
            }
            p.skip_ws();
            if p.pos < src.len() {
                return Err(p.expected("end of input after the top-level array"));
            }
            Ok(())
        }
        Some(b'{') => loop {
            one(src, &mut p, b)?;
            p.skip_ws();
            match p.peek() {
                None => return Ok(()),
                Some(b'{') => {}
                Some(_) => return Err(p.expected("an op object")),
            }
        },
        Some(_) => Err(p.expected("an array of op objects")),
    }
}

fn one(src: &[u8], p: &mut JsonParser, b: &mut Builder) -> Result<(), ParseError> {
    let start = p.pos;
    let v = json_op(p.value()?);
    let len = u32::try_from(p.pos - start).map_err(|_| {
        ParseError::at(
            src,
            start,
            "expected an op object under 4 GB, found a bigger one",
        )
    })?;
    let span = Span {
        start: start as u64,
        len,
        line: 0, // filled in by `Builder::finish`
    };
    let op = b.raw_op(src, v, span)?;
    b.push(src, op)
}
