//! Reading one big EDN history on several cores.
//!
//! A Jepsen history is one op map per line, so it can be cut at line starts
//! (`\n{`) into parts that [`super::fast`] reads at the same time, each into
//! its own value tables and interner. The parts are then joined in file
//! order: interned atoms are renumbered into the first part's interner
//! (slots follow first use, so the atoms equal a one-pass read's), table
//! offsets are shifted, and the ops are pushed through the one
//! [`Builder`], which assigns indices and pairs invocations exactly as the
//! sequential reader does.
//!
//! Why a cut is safe: a part is accepted only if it reads completely as op
//! maps. The first part starts where the file does; if it reads
//! completely, its last form ended before the cut (a newline), so the
//! second part starts where a one-pass reader would be, and so on. A cut
//! inside a string or a multi-line form leaves the part before it
//! unfinished, which is a parse error; on any parse error the whole
//! history is read again sequentially, which reports the first error
//! exactly as always. The result is therefore the sequential reader's,
//! errors included.

use super::{fast, Builder, RawOp};
use crate::edn::ParseError;
use crate::model::{Atom, History, Mop, MopArg, MopFn, OpValue};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Below this many bytes per part, a second thread costs more than it saves.
pub(super) const MIN_PART_BYTES: usize = 8 << 20;

/// Histories being read right now in this process: with `-j` several
/// histories already share the cores, and each gets its share.
static READING: AtomicUsize = AtomicUsize::new(0);

/// How many parts to read `len` bytes in: one, unless `ELLERY_READ_THREADS`
/// asks for more (then the cores free for this history, no more than one
/// part per [`MIN_PART_BYTES`]).
///
/// One by default because it does not pay yet: on this project's 2-core
/// machine, 1M list-append transactions (289 MB) read in 0.86 s on one
/// thread and in 0.86 s cut in two: the parts take 0.37–0.59 s, but
/// joining them (pairing and indexing every op on one thread, copying the
/// second part's tables) takes 0.25–0.33 s. Pairing inside the parts would
/// make the join a concatenation.
pub(super) fn parts_for(len: usize) -> usize {
    let Some(cores) = std::env::var("ELLERY_READ_THREADS")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
    else {
        return 1;
    };
    let readers = READING.load(Ordering::Relaxed).max(1);
    (cores / readers).min(len / MIN_PART_BYTES).max(1)
}

/// Counts a history as being read while alive.
pub(super) struct Reading;

impl Reading {
    /// Starts counting.
    pub(super) fn start() -> Reading {
        READING.fetch_add(1, Ordering::Relaxed);
        Reading
    }
}

impl Drop for Reading {
    fn drop(&mut self) {
        READING.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Where to cut `src` into about `parts` parts: offsets of `{` that start a
/// line, increasing. Empty when the history is not one op map per line.
fn cuts(src: &[u8], parts: usize) -> Vec<usize> {
    let first = src.iter().position(|c| !c.is_ascii_whitespace());
    if parts < 2 || first.is_none_or(|i| src[i] != b'{') {
        return Vec::new();
    }
    let step = src.len() / parts;
    let mut cuts = Vec::with_capacity(parts - 1);
    let finder = memchr::memmem::Finder::new(b"\n{");
    let mut from = 0;
    for k in 1..parts {
        let target = (k * step).max(from);
        match finder.find(&src[target..]) {
            Some(p) => {
                from = target + p + 1;
                cuts.push(from);
            }
            None => break,
        }
    }
    cuts.dedup();
    cuts
}

/// Reads `src` in `parts` parts into `b`. `None` when the history cannot be
/// cut or a part does not read cleanly: `b` is then untouched and the
/// caller reads sequentially. Errors from joining (indices, pairing) are
/// the sequential reader's, in file order.
pub(super) fn read(src: &[u8], b: &mut Builder, parts: usize) -> Option<Result<(), ParseError>> {
    let cuts = cuts(src, parts);
    if cuts.is_empty() {
        return None;
    }
    read_parts(src, 0, &cuts, b)
}

/// Reads `src` (which starts at file offset `base`), cut at `cuts`, into
/// `b`: the parts on their own threads, then joined in order. `None` when a
/// part does not read cleanly (`b` untouched).
fn read_parts(
    src: &[u8],
    base: u64,
    cuts: &[usize],
    b: &mut Builder,
) -> Option<Result<(), ParseError>> {
    let mut bounds = Vec::with_capacity(cuts.len() + 1);
    let mut start = 0;
    for &c in cuts {
        bounds.push((start, c));
        start = c;
    }
    bounds.push((start, src.len()));
    let read_one = |(start, end): (usize, usize), mut part: Builder| {
        let ops = fast::read_part(&src[..end], base, start, &mut part).ok()?;
        part.h.mops.shrink_to_fit();
        part.h.elements.shrink_to_fit();
        Some((part, ops))
    };
    // `cuts` is never empty (both callers check), so there are two parts or more.
    let results: Vec<Option<(Builder, Vec<RawOp>)>> = std::thread::scope(|scope| {
        let handles: Vec<_> = bounds
            .iter()
            .map(|&bound| {
                let part = b.empty_like();
                scope.spawn(move || read_one(bound, part))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().ok().flatten())
            .collect()
    });
    if results.iter().any(Option::is_none) {
        return None;
    }
    for (part, ops) in results.into_iter().flatten() {
        let res = if b.is_fresh() {
            adopt(src, b, part, ops)
        } else {
            join(src, b, part, ops)
        };
        if let Err(e) = res {
            return Some(Err(e));
        }
    }
    Some(Ok(()))
}

/// Makes the first part's tables the history's: no copy, no renumbering
/// (both interners began with `nil`, so its atoms are already right).
/// Later parts are appended and dropped one by one, so the peak stays
/// near the finished tables' size.
fn adopt(src: &[u8], b: &mut Builder, part: Builder, ops: Vec<RawOp>) -> Result<(), ParseError> {
    b.h.interner = part.h.interner;
    b.h.mops = part.h.mops;
    b.h.elements = part.h.elements;
    b.h.other_values = part.h.other_values;
    b.h.predicates = part.h.predicates;
    b.h.ops.reserve(ops.len());
    b.h.pair.reserve(ops.len());
    for op in ops {
        b.push(src, op)?;
    }
    Ok(())
}

/// How many bytes of a big file to hold at once when reading it in blocks.
pub(super) const BLOCK_BYTES: usize = 64 << 20;

/// Reads a big one-op-per-line EDN file in blocks of [`BLOCK_BYTES`] (each
/// cut into `parts` parts read in parallel; `None`: [`parts_for`]), so the
/// file's text is never in memory whole (it is re-read by span to print
/// ops). `None` when the file is not
/// one op per line or anything goes wrong (a parse error, an index or
/// pairing error, an I/O error): the caller then reads it whole, which
/// reports the first error with its exact line and column.
pub(super) fn read_file(
    path: &std::path::Path,
    origin: &str,
    block_bytes: usize,
    parts: Option<usize>,
) -> Option<History> {
    use std::io::Read;
    let mut file = std::fs::File::open(path).ok()?;
    let mut b = Builder::new(
        std::sync::Arc::new(Vec::new()),
        origin,
        crate::model::Format::Edn,
    );
    let _reading = Reading::start();
    let mut block: Vec<u8> = Vec::with_capacity(block_bytes);
    let (mut base, mut line) = (0u64, 1u32);
    let mut eof = false;
    while !eof {
        let have = block.len();
        block.resize(have.max(block_bytes), 0);
        let mut filled = have;
        while filled < block.len() {
            match file.read(&mut block[filled..]) {
                Ok(0) => {
                    eof = true;
                    break;
                }
                Ok(n) => filled += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => return None,
            }
        }
        block.truncate(filled);
        // Whole lines only; the rest starts the next block.
        let end = if eof {
            block.len()
        } else {
            memchr::memrchr(b'\n', &block).map_or(0, |p| p + 1)
        };
        if end == 0 && !eof {
            return None; // a line longer than a block
        }
        let text = &block[..end];
        if base == 0 && !starts_with_op(text) {
            return None;
        }
        let parts = parts.unwrap_or_else(|| parts_for(text.len()));
        let cut = if parts > 1 {
            cuts(text, parts)
        } else {
            Vec::new()
        };
        let first_new = b.h.ops.len();
        if cut.is_empty() {
            fast::read_block(text, base, &mut b).ok()?;
        } else {
            read_parts(text, base, &cut, &mut b)?.ok()?;
        }
        line = number_lines(&mut b.h.ops[first_new..], text, base, line);
        base += end as u64;
        block.drain(..end);
    }
    Some(b.finish_numbered())
}

/// Whether `text` (after whitespace) starts with an op map.
fn starts_with_op(text: &[u8]) -> bool {
    text.iter()
        .find(|c| !c.is_ascii_whitespace())
        .is_none_or(|&c| c == b'{')
}

/// Sets the lines of `ops`, all in `text` (file offset `base`, whose first
/// line is `line`); returns the line after `text`.
fn number_lines(ops: &mut [crate::model::Op], text: &[u8], base: u64, mut line: u32) -> u32 {
    let mut newlines = memchr::memchr_iter(b'\n', text);
    let mut next = newlines.next();
    for op in ops {
        let at = (op.span.start - base) as usize;
        while next.is_some_and(|p| p < at) {
            line += 1;
            next = newlines.next();
        }
        op.span.line = line;
    }
    while next.is_some() {
        line += 1;
        next = newlines.next();
    }
    line
}

/// Appends one part's tables and ops to `b`, renumbering its atoms.
fn join(src: &[u8], b: &mut Builder, part: Builder, ops: Vec<RawOp>) -> Result<(), ParseError> {
    let table = b.h.interner.absorb(&part.h.interner);
    let atom = |a: Atom| a.interned_slot().map_or(a, |s| table[s]);
    let (mops0, elements0) = (b.h.mops.len() as u32, b.h.elements.len() as u32);
    let others0 = b.h.other_values.len() as u32;
    let predicates0 = b.h.predicates.len() as u32;
    b.h.elements.reserve_exact(part.h.elements.len());
    b.h.mops.reserve_exact(part.h.mops.len());
    b.h.elements
        .extend(part.h.elements.iter().map(|&a| atom(a)));
    b.h.mops.extend(part.h.mops.iter().map(|m| Mop {
        f: match m.f {
            MopFn::Other(a) => MopFn::Other(atom(a)),
            f => f,
        },
        key: atom(m.key),
        arg: match m.arg {
            MopArg::Atom(a) => MopArg::Atom(atom(a)),
            MopArg::List { start, len } => MopArg::List {
                start: start + elements0,
                len,
            },
            MopArg::Pred(i) => MopArg::Pred(i + predicates0),
            MopArg::Nil => MopArg::Nil,
        },
    }));
    b.h.predicates
        .extend(part.h.predicates.into_iter().map(|mut p| {
            for (key, value) in &mut p.rows {
                *key = atom(*key);
                *value = value.map(atom);
            }
            p.write = p.write.map(|w| w.map(atom));
            p
        }));
    b.h.other_values.extend(part.h.other_values);
    for mut op in ops {
        op.f = atom(op.f);
        op.value = match op.value {
            OpValue::Mops { start, len } => OpValue::Mops {
                start: start + mops0,
                len,
            },
            OpValue::Other(i) => OpValue::Other(i + others0),
            OpValue::Nil => OpValue::Nil,
        };
        b.push(src, op)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_fall_on_line_starts_and_increase() {
        let src = b"{:a 1}\n{:a 2}\n{:a 3}\n{:a 4}\n";
        let c = cuts(src, 4);
        assert!(!c.is_empty());
        assert!(c.windows(2).all(|w| w[0] < w[1]));
        assert!(c.iter().all(|&i| src[i] == b'{' && src[i - 1] == b'\n'));
    }

    /// Everything the reader fills in, printed (the interner through the
    /// values of the atoms the ops use).
    fn fingerprint(h: &crate::model::History) -> String {
        let mut s = format!(
            "{:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{} {} {:?}\n",
            h.ops,
            h.pair,
            h.mops,
            h.elements,
            h.other_values,
            h.interner.len(),
            h.non_client_ops,
            h.nil_atom
        );
        for m in &h.mops {
            s += &format!("{:?} ", h.interner.value(m.key));
        }
        for p in &h.predicates {
            s += &format!("{:?} {:?} ", p.form, p.pred);
            for (k, v) in &p.rows {
                s += &format!(
                    "{:?}={:?} ",
                    h.interner.value(*k),
                    v.map(|v| h.interner.value(v))
                );
            }
            s += &format!("{:?} ", p.write.map(|w| w.map(|v| h.interner.value(v))));
        }
        for op in &h.ops {
            s += &format!("{:?} ", h.interner.value(op.f));
        }
        s
    }

    fn generated(seed: u64, workload: crate::gen::Workload) -> Vec<u8> {
        let opts = crate::gen::GenOptions {
            workload,
            txns: 300,
            seed,
            info_fraction: 0.1,
            fail_fraction: 0.1,
            ..Default::default()
        };
        let mut out = Vec::new();
        crate::gen::generate(&opts, &mut out).expect("generated");
        out
    }

    #[test]
    fn parts_read_exactly_as_one_pass() {
        for seed in 0..20 {
            for w in [
                crate::gen::Workload::ListAppend,
                crate::gen::Workload::RwRegister,
            ] {
                let src = generated(seed, w);
                let one =
                    crate::read::read_history_bytes(src.clone(), "h", crate::model::Format::Edn)
                        .expect("reads");
                for parts in [2, 3, 7] {
                    assert!(cuts(&src, parts).len() >= parts - 1, "cut into {parts}");
                    let many =
                        crate::read::read_edn_in_parts(src.clone(), "h", parts).expect("reads");
                    assert_eq!(
                        fingerprint(&one),
                        fingerprint(&many),
                        "seed {seed} parts {parts}"
                    );
                }
            }
        }
    }

    #[test]
    fn predicate_histories_read_exactly_as_one_pass() {
        for seed in 0..5 {
            let opts = crate::gen::predicates::PredGenOptions {
                txns: 300,
                seed,
                ..Default::default()
            };
            let mut src = Vec::new();
            crate::gen::predicates::generate_predicates(&opts, &mut src).expect("generated");
            let one = crate::read::read_history_bytes(src.clone(), "h", crate::model::Format::Edn)
                .expect("reads");
            assert!(one.has_predicates());
            for parts in [2, 5] {
                assert!(!cuts(&src, parts).is_empty());
                let many = crate::read::read_edn_in_parts(src.clone(), "h", parts).expect("reads");
                assert_eq!(
                    fingerprint(&one),
                    fingerprint(&many),
                    "seed {seed} parts {parts}"
                );
            }
        }
    }

    #[test]
    fn errors_are_the_one_pass_errors() {
        let ok = b"{:index 0 :type :invoke :process 0 :f :txn :value [[:r 1 nil]]}\n";
        let cases: Vec<Vec<u8>> = vec![
            // A string with a line starting with `{` inside it.
            [&ok[..], b"{:index 1 :type :ok :process 0 :f :txn :value [[:r 1 nil]] :note \"a\n{:b 1}\"}\n"].concat(),
            // A parse error in a later part.
            [&ok[..], b"{:index 1 :type :ok :process 0 :f :txn :value [[:r 1 nil]]}\n{:index 2 :type :bogus}\n"].concat(),
            // An index error that only joining sees.
            [&ok[..], b"{:index 0 :type :ok :process 0 :f :txn :value [[:r 1 nil]]}\n"].concat(),
            // A double invocation across parts.
            [&ok[..], b"{:index 1 :type :invoke :process 0 :f :txn :value [[:r 1 nil]]}\n"].concat(),
            // Unclosed map at the end.
            [&ok[..], b"{:index 1 :type :ok\n{:index 2}"].concat(),
        ];
        for src in cases {
            let one = crate::read::read_history_bytes(src.clone(), "h", crate::model::Format::Edn);
            for parts in [2, 3] {
                let many = crate::read::read_edn_in_parts(src.clone(), "h", parts);
                match (&one, &many) {
                    (Ok(a), Ok(b)) => assert_eq!(fingerprint(a), fingerprint(b)),
                    (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
                    _ => panic!("one pass {one:?} vs parts {many:?}"),
                }
            }
        }
    }

    #[test]
    fn blocks_read_exactly_as_one_pass() {
        let dir = std::env::temp_dir().join(format!("ellery-blocks-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        for seed in 0..10 {
            let src = generated(seed, crate::gen::Workload::ListAppend);
            let path = dir.join(format!("h{seed}.edn"));
            std::fs::write(&path, &src).expect("written");
            let one = crate::read::read_history_bytes(src.clone(), "h", crate::model::Format::Edn)
                .expect("reads");
            for (block, parts) in [
                (4096, None),
                (10_000, Some(2)),
                (1 << 20, None),
                (1 << 20, Some(3)),
            ] {
                let many = read_file(&path, "h", block, parts).expect("read in blocks");
                assert_eq!(
                    fingerprint(&one),
                    fingerprint(&many),
                    "seed {seed} block {block}"
                );
                let lines: Vec<u32> = one.ops.iter().map(|o| o.span.line).collect();
                let got: Vec<u32> = many.ops.iter().map(|o| o.span.line).collect();
                assert_eq!(lines, got);
            }
        }
        // What the block reader refuses, the whole read answers.
        let bad = dir.join("bad.edn");
        std::fs::write(&bad, b"{:index 0 :type :invoke :process 0 :f :txn :value [[:r 1 nil]]}\n{:index 0 :type :ok :process 0 :f :txn :value [[:r 1 nil]]}\n").expect("written");
        // Both lines fit in one block (4096) or each in its own (100): the
        // block reader itself must refuse the repeated index.
        for block in [4096, 100] {
            assert!(read_file(&bad, "bad", block, None).is_none(), "{block}");
            let e = crate::read::read_edn_file_in_blocks(&bad, block).expect_err("index error");
            assert!(e.to_string().contains(":index greater"), "{e}");
        }
        // A line longer than a block: refused, and the whole read reads it.
        let long = dir.join("long.edn");
        let src = b"{:index 0 :type :invoke :process 0 :f :txn :value [[:r 1 nil]]}\n{:index 1 :type :ok :process 0 :f :txn :value [[:r 1 nil]]}\n";
        std::fs::write(&long, src).expect("written");
        assert!(read_file(&long, "long", 32, None).is_none());
        let one = crate::read::read_history_bytes(src.to_vec(), "h", crate::model::Format::Edn)
            .expect("reads");
        let whole = crate::read::read_edn_file_in_blocks(&long, 32).expect("whole read");
        assert_eq!(fingerprint(&one), fingerprint(&whole));
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn a_vector_history_is_not_cut() {
        assert!(cuts(b"[{:a 1}\n{:a 2}]", 2).is_empty());
        assert!(cuts(b"{:a 1}\n{:a 2}", 1).is_empty());
    }
}
