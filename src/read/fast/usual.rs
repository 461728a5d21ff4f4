//! The reader's fast path for the usual shape of an op line: the six keys
//! in the order the previous op map had them, separated by `, ` and each
//! followed by one space, and micro-ops written `[:r 3 nil]`,
//! `[:w 3 1]`, `[:append 3 1]` or `[:r 3 [1 2]]` with small integers.
//! Almost every line of a Jepsen history has this shape, and checking it
//! is one fixed compare per key where the general loop scans whitespace,
//! recognises the key and checks for duplicates (the reader was about 40%
//! faster per byte with it, issue 23).
//!
//! Why the results are the general reader's: each step is taken only when
//! the text is exactly the usual shape up to and including the start of
//! the value, so the value is read at the position the general loop would
//! read it at, by the same function (its errors included). At the first
//! difference the step changes nothing and the general loop goes on from
//! where the fast path stopped.

use super::{int_at, Reader};
use crate::edn::ParseError;
use crate::model::{Atom, Mop, MopArg, MopFn};

/// The six op keys' slots, in the order the general reader numbers them.
pub(super) const USUAL_ORDER: [u8; 6] = [0, 1, 2, 3, 4, 5];

/// Where the value of key `slot` starts, when the text at `i` is that key
/// written the usual way: `:name ` (the first key, right after `{`) or
/// `, :name ` (a later one), then a byte that starts a value and is not
/// whitespace, a comment, a discard or a closer (the general loop would
/// skip or reject those).
#[inline(always)]
fn key_then_value(src: &[u8], i: usize, slot: u8, first: bool) -> Option<usize> {
    let mut at = i;
    if !first {
        if src.get(at..at + 2)? != b", " {
            return None;
        }
        at += 2;
    }
    let rest = src.get(at..)?;
    let n = match slot {
        0 if rest.starts_with(b":index ") => 7,
        1 if rest.starts_with(b":time ") => 6,
        2 if rest.starts_with(b":type ") => 6,
        3 if rest.starts_with(b":process ") => 9,
        4 if rest.starts_with(b":f ") => 3,
        5 if rest.starts_with(b":value ") => 7,
        _ => return None,
    };
    let v = at + n;
    match src.get(v)? {
        b' ' | b'\t' | b'\n' | b'\r' | b',' | b';' | b'#' | 0x0c | b')' | b']' | b'}' => None,
        _ => Some(v),
    }
}

impl Reader<'_, '_> {
    /// Reads the keys of the op map being read at `i` (just past its `{`)
    /// while they come in the usual order and shape (see the module docs),
    /// into `op`, marking them in `seen` and their slots in `order`;
    /// returns where it stopped and how many keys it read. An error is the
    /// one the general loop reports for the same value.
    #[inline(always)]
    pub(super) fn usual_keys(
        &mut self,
        mut i: usize,
        op: &mut super::RawOp,
        seen: &mut u8,
        order: &mut [u8; 6],
    ) -> Result<(usize, usize), ParseError> {
        let src = self.src;
        let mut k = 0;
        while k < 6 {
            let slot = self.order[k];
            let Some(v) = key_then_value(src, i, slot, k == 0) else {
                break;
            };
            let end = match slot {
                0 => match int_at(src, v) {
                    Some((n, e)) if n >= 0 => {
                        op.index = Some(n as u64);
                        e
                    }
                    _ => break,
                },
                1 => match int_at(src, v) {
                    Some((n, e)) => {
                        op.time = n;
                        e
                    }
                    None => break,
                },
                2 => match super::type_at(src, v) {
                    Some((t, e)) => {
                        op.op_type = t;
                        e
                    }
                    None => break,
                },
                3 => match int_at(src, v) {
                    Some((n, e)) => {
                        op.process = Some(n);
                        e
                    }
                    None => break,
                },
                4 => {
                    let (f, e) = self.f_value(v)?;
                    op.f = f;
                    e
                }
                _ => self.value_into(v, &mut op.value)?,
            };
            *seen |= 1 << slot;
            order[k] = slot;
            i = end;
            k += 1;
        }
        Ok((i, k))
    }

    /// Reads the micro-op whose `[` is at `open` when it is written the
    /// usual way (see the module docs), pushing it; returns the position
    /// past its `]`. `None` when it is not, with nothing read.
    #[inline(always)]
    pub(super) fn usual_mop(&mut self, open: usize) -> Option<usize> {
        let src = self.src;
        let rest = src.get(open + 1..)?;
        let (f, mut j) = if rest.starts_with(b":r ") {
            (MopFn::Read, open + 4)
        } else if rest.starts_with(b":w ") {
            (MopFn::Write, open + 4)
        } else if rest.starts_with(b":append ") {
            (MopFn::Append, open + 9)
        } else {
            return None;
        };
        let key = self.small_int(j)?;
        j = key.1 + 1;
        if src.get(key.1) != Some(&b' ') {
            return None;
        }
        let (arg, end) = match src.get(j)? {
            b'n' if self.is_nil(j) => (MopArg::Nil, j + 3),
            b'[' => {
                let start = self.b.h.elements.len();
                let Some(e) = self
                    .usual_list(j + 1)
                    .filter(|&e| src.get(e) == Some(&b']'))
                else {
                    // Not usual after all: forget the list's elements (no
                    // sharing has seen them yet).
                    self.b.h.elements.truncate(start);
                    return None;
                };
                let len = (self.b.h.elements.len() - start) as u32;
                let start = start as u32;
                match f {
                    MopFn::Read if len > 0 => (self.share(key.0, start, len), e),
                    _ => (MopArg::List { start, len }, e),
                }
            }
            _ => {
                let (a, e) = self.small_int(j)?;
                (MopArg::Atom(a), e)
            }
        };
        if src.get(end) != Some(&b']') {
            return None;
        }
        self.b.h.mops.push(Mop::new(f, key.0, arg));
        Some(end + 1)
    }

    /// Pushes the elements of a list of small integers separated by single
    /// spaces, which starts at `j` (just past its `[`), onto the elements;
    /// returns the position past its `]`. `None` at anything else (the
    /// caller drops what was pushed).
    #[inline(always)]
    fn usual_list(&mut self, mut j: usize) -> Option<usize> {
        let src = self.src;
        if src.get(j) == Some(&b']') {
            return Some(j + 1);
        }
        loop {
            let (a, e) = self.small_int(j)?;
            self.b.h.elements.push(a);
            match src.get(e) {
                Some(b' ') => j = e + 1,
                Some(b']') => return Some(e + 1),
                _ => return None,
            }
        }
    }

    /// A small integer (an inline atom) at `j`, and its end.
    #[inline(always)]
    fn small_int(&self, j: usize) -> Option<(Atom, usize)> {
        let c = *self.src.get(j)?;
        if !(c.is_ascii_digit() || c == b'-') {
            return None;
        }
        let (n, e) = int_at(self.src, j)?;
        Some((Atom::int(n)?, e))
    }
}

#[cfg(test)]
mod tests;
