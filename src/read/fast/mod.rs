//! The streaming EDN history reader.
//!
//! Histories are big (hundreds of MB) and regular, so instead of building a
//! generic value per op we scan the bytes: the six keys Elle cares about are
//! recognised by their bytes, integers are parsed in place, micro-op vectors
//! are decoded straight into [`History::mops`](crate::model::History), and
//! every other key's value is skipped with a balanced scanner. Only values we
//! do not special-case (strings with escapes, maps, tagged literals, ...) go
//! through the generic parser. Each op line is first tried in its usual
//! shape ([`usual`]), then read key by key from where that stopped.

use super::{bad_type, Builder, RawOp};
use crate::edn::parse::{found, is_delim, line_col, parse_value_at, skip_form, skip_ws, token_end};
use crate::edn::ParseError;
use crate::model::{Atom, FnName, Mop, MopArg, MopFn, OpType, OpValue, Span};
use hashbrown::HashMap;

mod tokens;
mod usual;

use tokens::{int_at, key_slot, type_at};

/// Reads every op of an EDN history into `b`.
pub(super) fn read(src: &[u8], b: &mut Builder) -> Result<(), ParseError> {
    // Reserve for a typical history (~130 bytes and ~2.5 micro-ops per op)
    // up front: untouched capacity costs no memory, regrowth costs copies.
    b.h.ops.reserve(src.len() / 100);
    b.h.pair.reserve(src.len() / 100);
    b.h.mops.reserve(src.len() / 40);
    b.h.elements.reserve(src.len() / 40);
    Reader::new(src, b, 0).run()
}

/// Reads as [`read`] does, without the fast path for the usual shape of
/// an op line ([`usual`]): the reference its tests compare with.
#[cfg(test)]
pub(super) fn read_key_by_key(src: &[u8], b: &mut Builder) -> Result<(), ParseError> {
    let mut reader = Reader::new(src, b, 0);
    reader.usual = false;
    reader.run()
}

/// Reads the op maps of `src` (a block of whole lines that starts at file
/// offset `base`) straight into `b`, as [`read`] does for a whole file:
/// the one-thread path of the block reader ([`super::parallel`]). Errors
/// carry positions within the block; the caller re-reads the whole file
/// to report them.
pub(super) fn read_block(src: &[u8], base: u64, b: &mut Builder) -> Result<(), ParseError> {
    Reader::new(src, b, base).op_lines(0)
}

/// Reads the op maps of `src[start..]`, one part of a one-op-per-line
/// history cut at line starts (see [`super::parallel`]), into `b`, a part
/// builder: it pairs and indexes the part's ops on its own, and the join
/// fixes up what depends on the parts before. Spans are offsets in `src`
/// plus `base` (where `src` starts in the file).
pub(super) fn read_part(
    src: &[u8],
    base: u64,
    start: usize,
    b: &mut Builder,
) -> Result<(), ParseError> {
    let len = src.len() - start;
    b.h.ops.reserve(len / 100);
    b.h.pair.reserve(len / 100);
    b.h.mops.reserve(len / 40);
    b.h.elements.reserve(len / 40);
    Reader::new(src, b, base).op_lines(start)
}

struct Reader<'s, 'b> {
    src: &'s [u8],
    b: &'b mut Builder,
    /// Scratch for the balanced scanner.
    stack: Vec<(u8, usize)>,
    /// Atoms of scalar tokens by their raw bytes, so repeated keywords and
    /// strings are interned without building a `Value` each time.
    cache: HashMap<Box<[u8]>, Atom>,
    /// The raw text range and atom of the last `:f` value.
    last_f: (usize, usize, Atom),
    /// Where `src` starts in the file (spans are file offsets).
    base: u64,
    /// Per key, the range in the elements of the longest list read so far:
    /// a read of a prefix of it (about half of a list-append history's
    /// read elements) points into it instead of storing its own copy.
    longest: HashMap<Atom, (u32, u32)>,
    /// The order of the six keys in the last op map that had all six and
    /// no other, the order [`Reader::usual_keys`] tries first.
    order: [u8; 6],
    /// Whether to try the usual shape first ([`usual`]); off only in the
    /// tests that check it changes nothing.
    usual: bool,
}

/// `a == b` for the short tokens the reader compares once an op (an
/// `:f` value such as `:txn`): byte by byte below 16 bytes, where the
/// slices' `==` calls the C library's `memcmp` (2% of reading, issue 23).
#[inline(always)]
fn same_short(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    if a.len() >= 16 {
        return a == b;
    }
    a.iter().zip(b).all(|(x, y)| x == y)
}

fn err(src: &[u8], at: usize, what: &str) -> ParseError {
    ParseError::at(
        src,
        at,
        format!("expected {what}, found {}", found(src, at)),
    )
}

fn unclosed(src: &[u8], at: usize, close: char, open: usize) -> ParseError {
    let (l, c) = line_col(src, open);
    err(
        src,
        at,
        &format!(
            "{close} to close {} at line {l}, column {c}",
            src[open] as char
        ),
    )
}

impl<'s, 'b> Reader<'s, 'b> {
    fn new(src: &'s [u8], b: &'b mut Builder, base: u64) -> Reader<'s, 'b> {
        Reader {
            src,
            b,
            stack: Vec::new(),
            cache: HashMap::new(),
            last_f: (0, 0, Atom::default()),
            base,
            longest: HashMap::new(),
            order: usual::USUAL_ORDER,
            usual: true,
        }
    }

    /// Reads op maps from `start` to the end of `src`, one after another
    /// (a block or part of a one-op-per-line history).
    fn op_lines(&mut self, start: usize) -> Result<(), ParseError> {
        let src = self.src;
        let mut i = self.ws(start)?;
        while i < src.len() {
            i = self.record_map(i).unwrap_or(i);
            if src[i] != b'{' {
                return Err(err(src, i, "an op map"));
            }
            i = self.op(i)?;
            i = self.ws(i)?;
        }
        Ok(())
    }
    #[inline(always)]
    fn ws(&mut self, i: usize) -> Result<usize, ParseError> {
        // Fast path: a single space (the usual separator) then a form.
        match self.src.get(i) {
            Some(b' ') => match self.src.get(i + 1) {
                Some(&c)
                    if !matches!(c, b' ' | b'\t' | b'\n' | b'\r' | b',' | b';' | b'#' | 0x0c) =>
                {
                    Ok(i + 1)
                }
                _ => skip_ws(self.src, i, &mut self.stack),
            },
            Some(&c) if !matches!(c, b'\t' | b'\n' | b'\r' | b',' | b';' | b'#' | 0x0c) => Ok(i),
            _ => skip_ws(self.src, i, &mut self.stack),
        }
    }

    /// The offset of a record's map (`#jepsen.history.Op{...}`), if one
    /// starts at `i`.
    fn record_map(&self, i: usize) -> Option<usize> {
        if self.src.get(i) != Some(&b'#') {
            return None;
        }
        let e = token_end(self.src, i + 1);
        (e > i + 1 && self.src.get(e) == Some(&b'{')).then_some(e)
    }

    fn run(&mut self) -> Result<(), ParseError> {
        let src = self.src;
        let mut i = self.ws(0)?;
        let first = self.record_map(i).unwrap_or(i);
        match src.get(first) {
            None => Ok(()),
            Some(b'{') => {
                i = first;
                loop {
                    i = self.op(i)?;
                    i = self.ws(i)?;
                    if i >= src.len() {
                        return Ok(());
                    }
                    i = self.record_map(i).unwrap_or(i);
                    if src[i] != b'{' {
                        return Err(err(src, i, "an op map"));
                    }
                }
            }
            Some(&open @ (b'[' | b'(')) => {
                let close = if open == b'[' { b']' } else { b')' };
                let open_pos = i;
                i += 1;
                loop {
                    i = self.ws(i)?;
                    let at = self.record_map(i).unwrap_or(i);
                    match src.get(at) {
                        None => return Err(unclosed(src, i, close as char, open_pos)),
                        Some(&c) if c == close => {
                            i += 1;
                            break;
                        }
                        Some(b'{') => i = self.op(at)?,
                        Some(b')' | b']' | b'}') => {
                            return Err(unclosed(src, i, close as char, open_pos))
                        }
                        Some(_) => return Err(err(src, i, "an op map")),
                    }
                }
                i = self.ws(i)?;
                if i < src.len() {
                    let what = format!("end of input after the top-level {}", open as char);
                    return Err(err(src, i, &what));
                }
                Ok(())
            }
            Some(_) => Err(err(src, i, "a map or vector of op maps")),
        }
    }

    /// An integer token at `i` that fits in 64 bits, and its end.
    #[inline(always)]
    fn int(&self, i: usize) -> Option<(i64, usize)> {
        int_at(self.src, i)
    }

    fn is_nil(&self, i: usize) -> bool {
        self.src[i..].starts_with(b"nil") && self.src.get(i + 3).is_none_or(|&c| is_delim(c))
    }

    #[inline(always)]
    /// Fails unless a value (not a closer or the end) starts at `i`.
    fn expect_value(&self, i: usize, key_pos: usize) -> Result<(), ParseError> {
        match self.src.get(i) {
            None | Some(b')' | b']' | b'}') => {
                let key = found(self.src, key_pos);
                Err(err(self.src, i, &format!("a value for key {key}")))
            }
            _ => Ok(()),
        }
    }

    /// Reads the op map whose `{` is at `start`; returns the offset past it.
    // Long (about 125 lines): the hot loop of the fast reader, one match per
    // op-map key, kept in one function for speed and readable as a table.
    fn op(&mut self, start: usize) -> Result<usize, ParseError> {
        let src = self.src;
        let mut i = start + 1;
        let mut seen = 0u8;
        let mut op = RawOp {
            index: None,
            time: -1,
            op_type: OpType::Invoke,
            process: None,
            f: self.b.h.nil_atom,
            value: OpValue::Nil,
            span: Span::default(),
        };
        // The keys in their usual order and shape first; then key by key,
        // from wherever that stopped.
        let mut order = [0u8; 6];
        let (from, mut keys) = if self.usual {
            self.usual_keys(i, &mut op, &mut seen, &mut order)?
        } else {
            (i, 0)
        };
        i = from;
        let mut others = false;
        loop {
            i = self.ws(i)?;
            let Some(&c) = src.get(i) else {
                return Err(unclosed(src, i, '}', start));
            };
            if c == b'}' {
                i += 1;
                break;
            }
            if c != b':' {
                if matches!(c, b')' | b']') {
                    return Err(unclosed(src, i, '}', start));
                }
                // Some other kind of key: skip it and its value.
                others = true;
                let key_pos = i;
                i = skip_form(src, i, &mut self.stack)?;
                i = self.ws(i)?;
                self.expect_value(i, key_pos)?;
                i = skip_form(src, i, &mut self.stack)?;
                continue;
            }
            let (slot, kend) = key_slot(src, i + 1);
            let key_pos = i;
            i = self.ws(kend)?;
            self.expect_value(i, key_pos)?;
            if slot < 6 {
                if seen & (1 << slot) != 0 {
                    let key = found(src, key_pos);
                    return Err(ParseError::at(
                        src,
                        key_pos,
                        format!("expected each key once in an op map, found {key} twice"),
                    ));
                }
                seen |= 1 << slot;
                order[keys] = slot;
                keys += 1;
            } else {
                others = true;
            }
            match slot {
                0 => match self.int(i) {
                    Some((n, e)) if n >= 0 => {
                        op.index = Some(n as u64);
                        i = e;
                    }
                    _ => return Err(err(src, i, "a non-negative integer :index")),
                },
                1 => match self.int(i) {
                    Some((n, e)) => {
                        op.time = n;
                        i = e;
                    }
                    None if self.is_nil(i) => i += 3,
                    None => return Err(err(src, i, "an integer :time")),
                },
                2 => match type_at(src, i) {
                    Some((t, e)) => {
                        op.op_type = t;
                        i = e;
                    }
                    None => return Err(ParseError::at(src, i, bad_type(&found(src, i)))),
                },
                3 => match self.int(i) {
                    Some((n, e)) => {
                        op.process = Some(n);
                        i = e;
                    }
                    None => i = skip_form(src, i, &mut self.stack)?,
                },
                4 => {
                    let (f, e) = self.f_value(i)?;
                    op.f = f;
                    i = e;
                }
                5 => {
                    i = self.value_into(i, &mut op.value)?;
                }
                _ => i = skip_form(src, i, &mut self.stack)?,
            }
        }
        if keys == 6 && !others {
            self.order = order;
        }
        if seen & (1 << 2) == 0 {
            return Err(ParseError::at(
                src,
                start,
                "expected an op map with a :type, found none",
            ));
        }
        let len = u32::try_from(i - start).map_err(|_| {
            ParseError::at(
                src,
                start,
                "expected an op map under 4 GB, found a bigger one",
            )
        })?;
        op.span = Span {
            start: self.base + start as u64,
            len,
            line: 0, // filled in by `Builder::finish`, in one pass
        };
        self.b.push(src, op)?;
        Ok(i)
    }

    /// The `:f` value at `i`, and its end.
    #[inline(always)]
    fn f_value(&mut self, i: usize) -> Result<(Atom, usize), ParseError> {
        // Most histories use one or two :f values: check the last one's
        // bytes before hashing.
        let src = self.src;
        let (ls, le, la) = self.last_f;
        let n = le - ls;
        if n > 0
            && src
                .get(i..i + n)
                .is_some_and(|f| same_short(f, &src[ls..le]))
            && src.get(i + n).is_none_or(|&c| is_delim(c))
        {
            return Ok((la, i + n));
        }
        let (a, e) = self.atom(i)?;
        self.last_f = (i, e, a);
        Ok((a, e))
    }

    /// The atom of the value at `i`, and its end.
    #[inline]
    fn atom(&mut self, i: usize) -> Result<(Atom, usize), ParseError> {
        let src = self.src;
        let c = src[i];
        if c == b'-' || c.is_ascii_digit() {
            if let Some((n, e)) = self.int(i) {
                if let Some(a) = Atom::int(n) {
                    return Ok((a, e));
                }
            }
        }
        match c {
            b'"' => match memchr::memchr2(b'"', b'\\', &src[i + 1..]) {
                Some(p) if src[i + 1 + p] == b'"' => self.cached(i, i + p + 2),
                _ => self.general(i),
            },
            b'(' | b'[' | b'{' | b'#' | b'\\' | b'^' | b'\'' => self.general(i),
            _ => {
                let e = token_end(src, i);
                self.cached(i, e)
            }
        }
    }

    /// The atom of the scalar whose raw text is `src[start..end]`, via the
    /// raw-text cache.
    fn cached(&mut self, start: usize, end: usize) -> Result<(Atom, usize), ParseError> {
        let raw = &self.src[start..end];
        if let Some(&a) = self.cache.get(raw) {
            return Ok((a, end));
        }
        let (v, e) = parse_value_at(self.src, start)?;
        let a = self.b.h.interner.atom(&v);
        if e == end {
            self.cache.insert(raw.into(), a);
        }
        Ok((a, e))
    }

    fn general(&mut self, i: usize) -> Result<(Atom, usize), ParseError> {
        let (v, e) = parse_value_at(self.src, i)?;
        Ok((self.b.h.interner.atom(&v), e))
    }

    /// Reads an op's `:value` at `i` into `out`; returns where it ends.
    /// (Written in place: a returned 12-byte value was copied out of the
    /// callee's result by a load spanning two of its stores, a stall on
    /// every op.)
    fn value_into(&mut self, i: usize, out: &mut OpValue) -> Result<usize, ParseError> {
        if self.src[i] == b'n' && self.is_nil(i) {
            *out = OpValue::Nil;
            return Ok(i + 3);
        }
        if self.src[i] == b'[' {
            let (m0, e0) = (self.b.h.mops.len(), self.b.h.elements.len());
            let p0 = self.b.h.predicates.len();
            if let Some((start, len, end)) = self.mops(i)? {
                *out = OpValue::Mops { start, len };
                return Ok(end);
            }
            self.b.h.mops.truncate(m0);
            self.b.h.elements.truncate(e0);
            self.b.h.predicates.truncate(p0);
            let e0 = e0 as u32;
            self.longest.retain(|_, r| r.0 + r.1 <= e0);
        }
        let (v, e) = parse_value_at(self.src, i)?;
        *out = self
            .b
            .op_value(v)
            .map_err(|m| ParseError::at(self.src, i, m))?;
        Ok(e)
    }

    /// Decodes a micro-op vector at `i`: its micro-ops' start and count
    /// and where it ends; `None` if the value is not one (the caller then
    /// reads it generically).
    fn mops(&mut self, i: usize) -> Result<Option<(u32, u32, usize)>, ParseError> {
        let src = self.src;
        let start = self.b.h.mops.len();
        let mut j = i + 1;
        loop {
            j = self.ws(j)?;
            match src.get(j) {
                Some(b']') => {
                    j += 1;
                    break;
                }
                Some(b'[') => {}
                _ => return Ok(None),
            }
            let open = j;
            if let Some(e) = self.usual.then(|| self.usual_mop(open)).flatten() {
                j = e;
                continue;
            }
            j = self.ws(j + 1)?;
            if src.get(j) != Some(&b':') {
                return Ok(None);
            }
            let fe = token_end(src, j + 1);
            if let w @ (b"rp" | b"wp") = &src[j + 1..fe] {
                j = self.pred_mop(w == b"wp", fe, open)?;
                continue;
            }
            let f = match &src[j + 1..fe] {
                b"r" => MopFn::Read,
                b"append" => MopFn::Append,
                b"w" => MopFn::Write,
                b"" => return Ok(None),
                // The raw-text cache, as for keys: no value per micro-op.
                _ => match FnName::of(self.cached(j, fe)?.0) {
                    Some(name) => MopFn::Other(name),
                    None => return Ok(None),
                },
            };
            j = self.ws(fe)?;
            if matches!(src.get(j), None | Some(b')' | b']' | b'}')) {
                return Ok(None);
            }
            let (key, e) = self.atom(j)?;
            j = self.ws(e)?;
            let arg = match src.get(j) {
                None | Some(b')' | b']' | b'}') => return Ok(None),
                Some(b'n') if self.is_nil(j) => {
                    j += 3;
                    MopArg::Nil
                }
                Some(b'[' | b'(') => {
                    let (arg, e) = self.list(j)?;
                    j = e;
                    match (f, arg) {
                        (MopFn::Read, MopArg::List { start, len }) if len > 0 => {
                            self.share(key, start, len)
                        }
                        _ => arg,
                    }
                }
                Some(_) => {
                    let (a, e) = self.atom(j)?;
                    j = e;
                    MopArg::Atom(a)
                }
            };
            j = self.ws(j)?;
            if src.get(j) != Some(&b']') {
                return Ok(None);
            }
            j += 1;
            self.b.h.mops.push(Mop::new(f, key, arg));
        }
        let len = self.b.h.mops.len() - start;
        Ok(Some((start as u32, len as u32, j)))
    }

    /// Reads the rest of a predicate micro-op (its name ends at `i`, it
    /// opened at `open`) up to its closing `]`; returns the position after.
    fn pred_mop(&mut self, write: bool, i: usize, open: usize) -> Result<usize, ParseError> {
        let src = self.src;
        let mut parts = Vec::new();
        let mut k = i;
        loop {
            k = self.ws(k)?;
            match src.get(k) {
                Some(b']') => break,
                None | Some(b')' | b'}') => return Err(unclosed(src, k, ']', open)),
                Some(_) => {
                    let (v, e) = parse_value_at(src, k)?;
                    parts.push((v, k));
                    k = e;
                }
            }
        }
        let mop = self
            .b
            .pred_mop(write, &parts, open)
            .map_err(|(at, m)| ParseError::at(src, at, m))?;
        self.b.h.mops.push(mop);
        Ok(k + 1)
    }

    /// The list just read into the elements at `start..start + len` (a
    /// read of `key`), stored once: as a range of the longest list read of
    /// `key` so far when it is a prefix of that list (its own copy is
    /// dropped), else as itself, which becomes the longest when it extends
    /// the longest.
    fn share(&mut self, key: Atom, start: u32, len: u32) -> MopArg {
        let els = &mut self.b.h.elements;
        let slice = |s: u32, l: u32| s as usize..(s + l) as usize;
        match self.longest.get_mut(&key) {
            None => {
                self.longest.insert(key, (start, len));
            }
            Some(&mut (ls, ll)) if len <= ll && els[slice(ls, len)] == els[slice(start, len)] => {
                els.truncate(start as usize);
                return MopArg::List { start: ls, len };
            }
            Some(r) => {
                if len > r.1 && els[slice(r.0, r.1)] == els[slice(start, r.1)] {
                    *r = (start, len);
                }
            }
        }
        MopArg::List { start, len }
    }

    /// Reads a list argument (`[1 2]` or `(1 2)`) at `j` into the elements.
    fn list(&mut self, j: usize) -> Result<(MopArg, usize), ParseError> {
        let src = self.src;
        let close = if src[j] == b'[' { b']' } else { b')' };
        let start = self.b.h.elements.len();
        let mut k = j + 1;
        loop {
            k = self.ws(k)?;
            match src.get(k) {
                Some(&c) if c == close => {
                    k += 1;
                    break;
                }
                None | Some(b')' | b']' | b'}') => return Err(unclosed(src, k, close as char, j)),
                Some(&c) => {
                    // Elements are mostly small integers: skip `atom`'s
                    // dispatch for them.
                    let small = match c.is_ascii_digit().then(|| self.int(k)).flatten() {
                        Some((n, e)) => Atom::int(n).map(|a| (a, e)),
                        None => None,
                    };
                    let (a, e) = match small {
                        Some(r) => r,
                        None => self.atom(k)?,
                    };
                    self.b.h.elements.push(a);
                    k = e;
                }
            }
        }
        let len = self.b.h.elements.len() - start;
        Ok((
            MopArg::List {
                start: start as u32,
                len: len as u32,
            },
            k,
        ))
    }
}
