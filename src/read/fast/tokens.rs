//! The tokens the reader recognises by their bytes: the six op keys, the
//! op types and integers.

use crate::edn::parse::{is_delim, token_end};
use crate::model::OpType;

/// Which of the six op keys (0..6, or 6 for any other) the keyword name at
/// `i` is, and where the name ends. Compares bytes directly: this runs six
/// times per op.
#[inline(always)]
pub(super) fn key_slot(src: &[u8], i: usize) -> (u8, usize) {
    let rest = &src[i..];
    let (slot, n): (u8, usize) = match rest.first() {
        Some(b'i') if rest.starts_with(b"index") => (0, 5),
        Some(b't') if rest.starts_with(b"time") => (1, 4),
        Some(b't') if rest.starts_with(b"type") => (2, 4),
        Some(b'p') if rest.starts_with(b"process") => (3, 7),
        Some(b'f') => (4, 1),
        Some(b'v') if rest.starts_with(b"value") => (5, 5),
        _ => return (6, token_end(src, i)),
    };
    match src.get(i + n) {
        Some(&c) if !is_delim(c) => (6, token_end(src, i)),
        _ => (slot, i + n),
    }
}

/// The op type keyword at `i`, and its end.
#[inline(always)]
pub(super) fn type_at(src: &[u8], i: usize) -> Option<(OpType, usize)> {
    let rest = &src[i..];
    let (t, n) = if rest.starts_with(b":invoke") {
        (OpType::Invoke, 7)
    } else if rest.starts_with(b":ok") {
        (OpType::Ok, 3)
    } else if rest.starts_with(b":fail") {
        (OpType::Fail, 5)
    } else if rest.starts_with(b":info") {
        (OpType::Info, 5)
    } else {
        return None;
    };
    match src.get(i + n) {
        Some(&c) if !is_delim(c) => None,
        _ => Some((t, i + n)),
    }
}

/// An integer token at `i` of `src` that fits in 64 bits, and its end.
#[inline(always)]
pub(super) fn int_at(src: &[u8], i: usize) -> Option<(i64, usize)> {
    let mut j = i;
    let neg = src.get(j) == Some(&b'-');
    if neg || src.get(j) == Some(&b'+') {
        j += 1;
    }
    let d0 = j;
    if let Some((n, e)) = short_digits(src, d0) {
        if src.get(e).is_none_or(|&c| is_delim(c)) {
            return Some((if neg { -n } else { n }, e));
        }
        return None;
    }
    // 18 digits cannot overflow an i64: no checks on the hot path
    // (indices, times, elements); longer tokens go on checked.
    let fast_end = src.len().min(d0 + 18);
    let mut n: i64 = 0;
    while j < fast_end {
        let d = src[j].wrapping_sub(b'0');
        if d > 9 {
            break;
        }
        n = n * 10 + d as i64;
        j += 1;
    }
    if j == fast_end {
        while j < src.len() {
            let d = src[j].wrapping_sub(b'0');
            if d > 9 {
                break;
            }
            n = n.checked_mul(10)?.checked_add(d as i64)?;
            j += 1;
        }
    }
    if j == d0 || (j < src.len() && !is_delim(src[j])) {
        return None;
    }
    Some((if neg { -n } else { n }, j))
}

/// The value and end of 1 to 7 decimal digits at `j` followed by a
/// non-digit, read eight bytes at a time (indices, processes, keys and
/// values are mostly that short: reading digit by digit was a sixth of
/// the reader's time, issue 23); `None` when fewer than eight bytes
/// remain, none or eight or more digits come: [`int_at`] goes on digit
/// by digit.
#[inline(always)]
fn short_digits(src: &[u8], j: usize) -> Option<(i64, usize)> {
    let bytes: [u8; 8] = src.get(j..j + 8)?.try_into().ok()?;
    let word = u64::from_le_bytes(bytes);
    // Each byte less '0': a digit's value, else a byte whose high bit is
    // set once 0x76 is added (above '9') or already (below '0'). A borrow
    // or carry only reaches later bytes, after the first non-digit.
    let less = word.wrapping_sub(0x3030_3030_3030_3030);
    let non_digit = (less | less.wrapping_add(0x7676_7676_7676_7676)) & 0x8080_8080_8080_8080;
    let len = (non_digit.trailing_zeros() / 8) as usize;
    if len == 0 || len == 8 {
        return None;
    }
    // The digits moved to the high bytes (leading zeros below), then
    // combined in pairs, fours and eights.
    let mut v = (less << (8 * (8 - len))) & 0x0F0F_0F0F_0F0F_0F0F;
    v = (v.wrapping_mul(10 * 256 + 1) >> 8) & 0x00FF_00FF_00FF_00FF;
    v = (v.wrapping_mul(100 * 65536 + 1) >> 16) & 0x0000_FFFF_0000_FFFF;
    v = v.wrapping_mul(10000 * (1 << 32) + 1) >> 32;
    Some((v as i64, j + len))
}
