//! Reading one big EDN history on several cores.
//!
//! A Jepsen history is one op map per line, so it can be cut at line starts
//! (`\n{`) into parts that [`super::fast`] reads at the same time: the
//! first straight into the history's [`Builder`] (on the calling thread, as
//! the one-thread reader would), each later one into its own: its own value
//! tables and interner, its ops indexed and paired among themselves. The
//! later parts are then joined in file order, a concatenation: interned atoms are renumbered into the first part's
//! interner (slots follow first use, so the atoms equal a one-pass read's;
//! usually the tables are identical and nothing is renumbered), table
//! offsets and positions are shifted, dense indices are shifted by the ops
//! before, and the one op per process whose pairing depends on the parts
//! before (its first in the part) is paired with the invocation left open
//! there. Each part also numbers its ops' lines on its own thread (the join
//! shifts them by the lines before). The join touches each op once, without
//! hashing, and copies a big part on two threads (its micro-ops and
//! elements beside its ops): it runs after every part is read.
//!
//! Why a cut is safe: a part is accepted only if it reads completely as op
//! maps. The first part starts where the file does; if it reads
//! completely, its last form ended before the cut (a newline), so the
//! second part starts where a one-pass reader would be, and so on. A cut
//! inside a string or a multi-line form leaves the part before it
//! unfinished, which is a parse error. On any error, in a part or at a
//! join (indices that do not grow across a cut, a process invoked again),
//! the whole history is read again sequentially, which reports the first
//! error exactly as always. The result is therefore the sequential
//! reader's, errors included.

use super::{fast, Builder};
use crate::model::{Atom, History, Mop, MopArg, MopFn, Op, OpType, OpValue, NO_OP};

/// Below this many bytes per part, a second thread costs more than it saves.
pub(super) const MIN_PART_BYTES: usize = 8 << 20;

/// The most parts `len` bytes are worth reading in: one per
/// [`MIN_PART_BYTES`], no more than `ELLERY_READ_THREADS` when it is set
/// (a cap; the cores themselves are [`crate::par`]'s budget).
fn parts_wanted(len: usize) -> usize {
    let cap = std::env::var("ELLERY_READ_THREADS")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|&n| n > 0)
        .unwrap_or(usize::MAX);
    cap.min(len / MIN_PART_BYTES).max(1)
}

/// How many parts to read `len` bytes in now, and the budget places for
/// the threads beyond the caller's (hold them while the parts are read):
/// as many as [`parts_wanted`] and [`crate::par`]'s process-wide budget
/// allow, so `check -j N` does not oversubscribe the cores. The caller
/// holds a [`crate::par::Checking`] guard while it reads.
pub(super) fn parts_for(len: usize) -> (usize, crate::par::Helpers) {
    let helpers = crate::par::Helpers::take(parts_wanted(len) - 1);
    (1 + helpers.count(), helpers)
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

/// Reads `src` in `parts` parts into `b`, a fresh builder. `false` when
/// the history cannot be cut, a part does not read cleanly, or the parts
/// do not join (an index or pairing error across a cut): `b` may then hold
/// part of the history, and the caller reads it again sequentially with a
/// fresh builder, which reports the first error exactly.
///
/// On success the ops' lines are set (each part numbers its own, in
/// parallel): finish `b` with [`Builder::finish_numbered`].
pub(super) fn read(src: &[u8], b: &mut Builder, parts: usize) -> bool {
    let cuts = cuts(src, parts);
    !cuts.is_empty() && read_parts(src, 0, &cuts, b, 1, &mut Vec::new(), || ()).is_some()
}

/// Reads `src` (which starts at file offset `base` and line `line`), cut
/// at `cuts`, into `b`: the parts on their own threads, each indexing,
/// pairing and numbering the lines of its own ops, then joined in order
/// while `beside_joins` runs on the thread the last part was read on (the
/// block reader reads the next block there: the joins are one thread's
/// work). Returns the line after `src` and what `beside_joins` returned.
/// `None` when a part does not read cleanly (`beside_joins` then does not
/// run) or the parts do not join (`b` is then to be thrown away).
fn read_parts<R: Send>(
    src: &[u8],
    base: u64,
    cuts: &[usize],
    b: &mut Builder,
    line: u32,
    spares: &mut Vec<Spare>,
    beside_joins: impl FnOnce() -> R + Send,
) -> Option<(u32, R)> {
    let mut bounds = Vec::with_capacity(cuts.len() + 1);
    let mut start = 0;
    for &c in cuts {
        bounds.push((start, c));
        start = c;
    }
    bounds.push((start, src.len()));
    // A later part numbers its lines from 1 (the join shifts them), and
    // says how many lines its text spans.
    let read_one = |(start, end): (usize, usize), mut part: Builder| {
        fast::read_part(&src[..end], base, start, &mut part).ok()?;
        let after = number_lines(&mut part.h.ops, &src[start..end], base + start as u64, 1);
        Some((part, after - 1))
    };
    let first_new = b.h.ops.len();
    // `cuts` is never empty (both callers check), so there are two parts
    // or more. The first is read on this thread straight into `b`, which
    // continues it as the one-thread reader would (its pairing and indices
    // included): only the later parts are copied in by `join`.
    std::thread::scope(|scope| {
        let handles: Vec<_> = bounds[1..]
            .iter()
            .map(|&bound| {
                let part = spares.pop().unwrap_or_default().part_of(b);
                scope.spawn(move || read_one(bound, part))
            })
            .collect();
        let (start, end) = bounds[0];
        let first = fast::read_part(&src[..end], base, start, b)
            .ok()
            .map(|()| number_lines(&mut b.h.ops[first_new..], &src[start..end], base, line));
        // Every thread joined (a panic in one is its part's `None`), then
        // the first `None` fails the read.
        let parts: Option<Vec<(Builder, u32)>> = handles
            .into_iter()
            .map(|h| h.join().ok().flatten())
            .collect::<Vec<_>>()
            .into_iter()
            .collect();
        let (mut line, parts) = (first?, parts?);
        // The part threads are done: their places are free for this one.
        let beside = scope.spawn(beside_joins);
        let mut joined = Some(());
        for (part, lines) in parts {
            let Some(spare) = join(b, part, line - 1) else {
                joined = None;
                break;
            };
            spares.push(spare);
            line += lines;
        }
        let r = match beside.join() {
            Ok(r) => r,
            Err(payload) => std::panic::resume_unwind(payload),
        };
        joined.map(|()| (line, r))
    })
}

/// From this many micro-ops in a part, the join copies it on two threads
/// (below, a thread costs more than it saves).
const JOIN_ON_TWO_THREADS: usize = if cfg!(test) { 64 } else { 1 << 16 };

/// The most bytes of a big file read in one block. Two blocks are held at
/// once: the next is read while the joins of this one's parts run.
pub(super) const BLOCK_BYTES: usize = 32 << 20;

/// Reads a big one-op-per-line EDN file in blocks of up to `block_bytes`
/// (each cut into `parts` parts read in parallel; `None`: [`parts_for`],
/// the thread budget's), so the file's text is never in memory whole (it
/// is re-read by span to print ops). With two parts or more, the next
/// block is read from the file while this one's parts are joined (one
/// thread's work), so only the first block's reading has no other work
/// beside it; that block is a quarter of the others (it grows when its
/// first line is longer). `None` when the file is not one op per line or
/// anything goes wrong (a parse error, an index or pairing error, an I/O
/// error): the caller then reads it whole, which reports the first error
/// with its exact line and column.
pub(super) fn read_file(
    path: &std::path::Path,
    origin: &str,
    block_bytes: usize,
    parts: Option<usize>,
) -> Option<History> {
    let mut file = std::fs::File::open(path).ok()?;
    let mut b = Builder::new(
        std::sync::Arc::new(Vec::new()),
        origin,
        crate::model::Format::Edn,
    );
    let _reading = crate::par::Checking::start();
    let (mut block, mut next) = (Vec::new(), Vec::new());
    // The joined parts' tables, for the next block's parts.
    let mut spares = Vec::new();
    let mut eof = fill(&mut file, &mut block, (block_bytes / 4).max(1))?;
    let (mut base, mut line) = (0u64, 1u32);
    loop {
        // Whole lines only; the rest starts the next block.
        let end = if eof {
            block.len()
        } else {
            memchr::memrchr(b'\n', &block).map_or(0, |p| p + 1)
        };
        if end == 0 && !eof {
            if block.len() >= block_bytes {
                return None; // a line longer than a block
            }
            eof = fill(&mut file, &mut block, block_bytes)?;
            continue;
        }
        let (text, rest) = block.split_at(end);
        if base == 0 && !starts_with_op(text) {
            return None;
        }
        // Budget places are taken per block and given back after it.
        let (parts, _helpers) = match parts {
            Some(n) => (n, None),
            None => {
                let (n, helpers) = parts_for(text.len());
                (n, Some(helpers))
            }
        };
        let cut = if parts > 1 {
            cuts(text, parts)
        } else {
            Vec::new()
        };
        // The next block: this one's unfinished line, then the file's
        // next bytes. `Some(true)`: it is the file's last.
        let file = &mut file;
        let next_block = &mut next;
        let mut read_next = move || -> Option<bool> {
            if eof {
                return Some(true);
            }
            next_block.clear();
            next_block.extend_from_slice(rest);
            fill(file, next_block, block_bytes)
        };
        let first_new = b.h.ops.len();
        let next_eof;
        (line, next_eof) = if cut.is_empty() {
            fast::read_block(text, base, &mut b).ok()?;
            let after = number_lines(&mut b.h.ops[first_new..], text, base, line);
            (after, read_next())
        } else {
            read_parts(text, base, &cut, &mut b, line, &mut spares, read_next)?
        };
        if eof {
            break;
        }
        eof = next_eof?;
        base += end as u64;
        std::mem::swap(&mut block, &mut next);
    }
    Some(b.finish_numbered())
}

/// Appends `file`'s next bytes to `buf` until it holds `want` bytes or the
/// file ends (without zeroing the buffer first); `Some(true)` when the file
/// ended, `None` on an I/O error.
fn fill(file: &mut std::fs::File, buf: &mut Vec<u8>, want: usize) -> Option<bool> {
    use std::io::Read;
    let more = want.saturating_sub(buf.len());
    buf.reserve_exact(more);
    let got = file.take(more as u64).read_to_end(buf).ok()?;
    Some(got < more)
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

/// Appends one part's tables and ops to `b`, renumbering its atoms and
/// shifting its positions: a concatenation, but for the processes whose
/// invocation is still open in `b` (their first op in the part completes
/// it). `None`, before `b` is changed, when the sequential reader would
/// fail at the cut: indices that do not grow across it, a first op without
/// an `:index` where the history's have one, a process invoked again, too
/// many ops. The part's lines (numbered from 1) are shifted by `lines`,
/// the lines before it.
// Long (about 130 lines): the cut checks must all pass before `b` changes,
// and the two copying closures borrow disjoint fields of `b` and `part`.
fn join(b: &mut Builder, part: Builder, lines: u32) -> Option<Spare> {
    let mut p = part;
    let first_of = p.first_of.as_ref()?;
    let indexed = match (b.indexed, p.indexed) {
        (None, x) | (x, None) => x,
        (Some(x), Some(y)) if x == y => Some(x),
        // The part decided otherwise than the history's first op.
        _ => return None,
    };
    if indexed == Some(true)
        && b.last_index
            .is_some_and(|l| p.first_index.is_none_or(|f| f <= l))
    {
        return None;
    }
    let ops0 = b.h.ops.len();
    if ops0 + p.h.ops.len() >= NO_OP as usize {
        return None;
    }
    let mut fixups = Vec::new();
    for (process, &pos) in first_of {
        if let Some(&inv) = b.open.get(process) {
            if p.h.ops[pos as usize].op_type == OpType::Invoke {
                return None; // invoked again before completing
            }
            fixups.push((*process, inv, pos + ops0 as u32));
        }
    }
    // Joinable: from here on `b` changes.
    let ops0 = ops0 as u32;
    let shift_index = if indexed == Some(true) { 0 } else { b.seen };
    b.indexed = indexed;
    b.seen += p.seen;
    b.last_index = p.last_index.or(b.last_index);
    b.h.non_client_ops += p.h.non_client_ops;
    let table = b.h.interner.absorb(&p.h.interner);
    let same = table
        .iter()
        .enumerate()
        .all(|(s, a)| a.interned_slot() == Some(s));
    let atom = |a: Atom| match a.interned_slot() {
        Some(s) if !same => table[s],
        _ => a,
    };
    let table_ref = &table;
    let (mops0, elements0) = (b.h.mops.len() as u32, b.h.elements.len() as u32);
    let others0 = b.h.other_values.len() as u32;
    let predicates0 = b.h.predicates.len() as u32;
    b.h.predicates.extend(
        std::mem::take(&mut p.h.predicates)
            .into_iter()
            .map(|mut p| {
                for (key, value) in &mut p.rows {
                    *key = atom(*key);
                    *value = value.map(atom);
                }
                p.write = p.write.map(|w| w.map(atom));
                p
            }),
    );
    b.h.other_values
        .extend(std::mem::take(&mut p.h.other_values));
    // The two halves of the copy (micro-ops and elements; ops and pairs)
    // write to different tables: a big part's are copied on two threads,
    // since the join runs after every part is read, on one core otherwise.
    let (elements, mops) = (&mut b.h.elements, &mut b.h.mops);
    let (p_elements, p_mops) = (&p.h.elements, &p.h.mops);
    let mut copy_values = move || {
        if same {
            elements.extend_from_slice(p_elements);
        } else {
            elements.reserve_exact(p_elements.len());
            elements.extend(p_elements.iter().map(|&a| atom(a)));
        }
        mops.reserve_exact(p_mops.len());
        mops.extend(p_mops.iter().map(|m| Mop {
            f: match m.f {
                MopFn::Other(name) if !same => MopFn::Other(name.absorbed(table_ref)),
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
    };
    let (ops, pair) = (&mut b.h.ops, &mut b.h.pair);
    let (p_ops, p_pair) = (&p.h.ops, &p.h.pair);
    let mut copy_ops = move || {
        ops.reserve_exact(p_ops.len());
        ops.extend(p_ops.iter().map(|op| Op {
            index: op.index + shift_index,
            f: atom(op.f),
            value: match op.value {
                OpValue::Mops { start, len } => OpValue::Mops {
                    start: start + mops0,
                    len,
                },
                OpValue::Other(i) => OpValue::Other(i + others0),
                OpValue::Nil => OpValue::Nil,
            },
            span: crate::model::Span {
                line: op.span.line + lines,
                ..op.span
            },
            ..*op
        }));
        pair.reserve_exact(p_pair.len());
        pair.extend(
            p_pair
                .iter()
                .map(|&q| if q == NO_OP { q } else { q + ops0 }),
        );
    };
    if p_mops.len() >= JOIN_ON_TWO_THREADS {
        std::thread::scope(|scope| {
            scope.spawn(copy_values);
            copy_ops();
        });
    } else {
        copy_values();
        copy_ops();
    }
    for (process, inv, pos) in fixups {
        b.h.pair[inv as usize] = pos;
        b.h.pair[pos as usize] = inv;
        b.open.remove(&process);
    }
    for (&process, &pos) in &p.open {
        b.open.insert(process, pos + ops0);
    }
    Some(Spare::emptied(&mut p))
}

/// A joined part's biggest tables, emptied but holding their memory, for
/// the next block's part: a fresh part faulted its pages in again in every
/// block (page faults and zeroing were a tenth of a 1M-transaction
/// check's CPU, issue 23).
#[derive(Default)]
struct Spare {
    ops: Vec<Op>,
    pair: Vec<u32>,
    mops: Vec<Mop>,
    elements: Vec<Atom>,
}

impl Spare {
    /// Takes `part`'s tables, emptied.
    fn emptied(part: &mut Builder) -> Spare {
        let mut spare = Spare {
            ops: std::mem::take(&mut part.h.ops),
            pair: std::mem::take(&mut part.h.pair),
            mops: std::mem::take(&mut part.h.mops),
            elements: std::mem::take(&mut part.h.elements),
        };
        spare.ops.clear();
        spare.pair.clear();
        spare.mops.clear();
        spare.elements.clear();
        spare
    }

    /// A part builder like `b`'s [`Builder::empty_like`], its tables these
    /// (empty: the same part as a fresh one).
    fn part_of(self, b: &Builder) -> Builder {
        let mut part = b.empty_like();
        (part.h.ops, part.h.pair) = (self.ops, self.pair);
        (part.h.mops, part.h.elements) = (self.mops, self.elements);
        part
    }
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
        // Lists by their elements: a part shares read lists only with
        // the reads before it in the same part.
        let mops: Vec<String> = h
            .mops
            .iter()
            .map(|m| match m.arg {
                MopArg::List { .. } => format!("{:?} {:?} {:?}", m.f, m.key, h.list(m.arg)),
                arg => format!("{:?} {:?} {arg:?}", m.f, m.key),
            })
            .collect();
        let mut s = format!(
            "{:?}\n{:?}\n{:?}\n{:?}\n{} {} {:?}\n",
            h.ops,
            h.pair,
            mops,
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

    /// Micro-op functions outside the built-ins keep one name per value on
    /// every path, first seen in any part (issue 23 made names 4-byte
    /// slots, which the join maps).
    #[test]
    fn other_functions_read_exactly_as_one_pass() {
        let fns = [
            "[:cas 1 [1 2]]",
            "[:foo :k 1]",
            "[:r 1 2]",
            "[:bar 2 3]",
            "[:foo :j nil]",
        ];
        let mut src = String::new();
        for i in 0..200 {
            let m = fns[(i / 40) % fns.len()];
            let (p, t) = (i % 5, 2 * i);
            src += &format!("{{:index {t}, :type :invoke, :process {p}, :f :txn, :value [{m}]}}\n");
            src += &format!(
                "{{:index {}, :type :ok, :process {p}, :f :txn, :value [{m}]}}\n",
                t + 1
            );
        }
        let src = src.into_bytes();
        let one = crate::read::read_history_bytes(src.clone(), "h", crate::model::Format::Edn)
            .expect("reads");
        let name = |h: &crate::model::History, i: usize| match h.mops[i].f {
            MopFn::Other(n) => crate::edn::pr_str(&h.interner.fn_value(n)),
            f => format!("{f:?}"),
        };
        let names: std::collections::BTreeSet<String> =
            (0..one.mops.len()).map(|i| name(&one, i)).collect();
        assert_eq!(
            names.into_iter().collect::<Vec<_>>(),
            [":bar", ":cas", ":foo", "Read"]
        );
        for parts in [2, 3, 7] {
            assert!(cuts(&src, parts).len() >= parts - 1, "cut into {parts}");
            let many = crate::read::read_edn_in_parts(src.clone(), "h", parts).expect("reads");
            assert_eq!(fingerprint(&one), fingerprint(&many), "parts {parts}");
            for i in 0..one.mops.len() {
                assert_eq!(name(&one, i), name(&many, i), "parts {parts}, micro-op {i}");
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

    /// Without `:index` (dense indices, shifted at each join) and with
    /// ops of processes whose invocation and completion fall in different
    /// parts: the parts join exactly as one pass reads.
    #[test]
    fn unindexed_and_straddling_histories_read_exactly_as_one_pass() {
        for seed in 0..10 {
            let src = generated(seed, crate::gen::Workload::ListAppend);
            let text = String::from_utf8(src).expect("utf-8");
            let unindexed: String = text
                .lines()
                .map(|l| {
                    let cut = l.find(":time").expect("has :time");
                    format!("{{{}\n", &l[cut..])
                })
                .collect();
            let src = unindexed.into_bytes();
            let one = crate::read::read_history_bytes(src.clone(), "h", crate::model::Format::Edn)
                .expect("reads");
            assert!(one.ops.iter().enumerate().all(|(i, o)| o.index == i as u64));
            for parts in [2, 5, 11] {
                let mut b = crate::read::Builder::new(
                    std::sync::Arc::new(src.clone()),
                    "h",
                    crate::model::Format::Edn,
                );
                assert!(read(&src, &mut b, parts), "parts {parts} join");
                let many = b.finish();
                assert_eq!(fingerprint(&one), fingerprint(&many), "seed {seed}");
                // Some pair straddles a cut.
                let c = cuts(&src, parts);
                let straddles = (0..many.ops.len()).any(|i| {
                    many.completion_of(i).is_some_and(|j| {
                        let (a, b) = (many.ops[i].span.start, many.ops[j].span.start);
                        c.iter().any(|&x| a < x as u64 && x as u64 <= b)
                    })
                });
                assert!(straddles, "seed {seed} parts {parts}");
            }
        }
    }

    /// An error in the second part names its own line and column, as the
    /// one-pass reader does; so does a double invocation across the cut.
    #[test]
    fn an_error_in_part_two_names_its_line_and_column() {
        let line = |i: usize, t: &str| {
            format!("{{:index {i}, :type :{t}, :process 0, :f :txn, :value [[:r 1 nil]]}}\n")
        };
        let mut src = String::new();
        for i in 0..40 {
            src += &line(i, if i % 2 == 0 { "invoke" } else { "ok" });
        }
        let mut bad = src.clone();
        bad += "{:index 40, :type :invoke, :process 0, :f :txn, :value [[:r 1 nil] [:r 2 }\n";
        let e =
            crate::read::read_edn_in_parts(bad.into_bytes(), "h.edn", 2).expect_err("parse error");
        assert_eq!(e.line, 41, "{e}");
        assert_eq!(e.column, 74, "{e}");
        assert!(
            e.to_string()
                .starts_with("h.edn:41:74: expected ] to close [ at line 41, column 68"),
            "{e}"
        );
        // Line 40 completes line 39's invocation; line 41 invokes, line
        // 42 (in the last part) invokes again.
        // Line 41 is long, so the cut in two falls right after it.
        let mut twice = src.clone();
        let pad = "x".repeat(2 * src.len());
        twice += &line(40, "invoke").replace("}\n", &format!(" :note \"{pad}\"}}\n"));
        let second = twice.len();
        twice += &line(41, "invoke");
        assert_eq!(cuts(twice.as_bytes(), 2), vec![second]);
        let e = crate::read::read_edn_in_parts(twice.into_bytes(), "h.edn", 2)
            .expect_err("pairing error");
        assert_eq!((e.line, e.column), (42, 1), "{e}");
        assert!(
            e.message
                .contains("process 0 invoked again at line 42 before its invocation at line 41"),
            "{e}"
        );
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
        // The first block is a quarter of the others: a first line longer
        // than that grows it (not refused); blocks that end exactly where
        // the file does, or one byte before or after, read it all.
        let n = src.len();
        for block in [
            3 * n / 2,
            4 * n,
            4 * n - 4,
            4 * n + 4,
            n,
            n - 1,
            n + 1,
            2 * n,
        ] {
            let many = read_file(&long, "long", block, None).expect("read in blocks");
            assert_eq!(fingerprint(&one), fingerprint(&many), "block {block}");
        }
        std::fs::remove_dir_all(&dir).ok();
    }

    /// Each part numbers its own lines and the join shifts them: blank
    /// lines, comment lines and op maps spread over several lines, in
    /// every part, give the one-pass reader's lines.
    #[test]
    fn parts_number_lines_as_one_pass() {
        let mut src = String::new();
        for i in 0..60 {
            let t = if i % 2 == 0 { "invoke" } else { "ok" };
            match i % 5 {
                0 => src += "\n",
                1 => src += "; a comment line\n\n",
                2 => src += "\r\n",
                _ => {}
            }
            if i % 7 == 3 {
                src += &format!("{{:index {i}, :type :{t},\n :process 0, :f :txn,\n :value [[:r 1 nil]\n [:append 2 {i}]]}}\n");
            } else {
                src += &format!(
                    "{{:index {i}, :type :{t}, :process 0, :f :txn, :value [[:r 1 nil]]}}\n"
                );
            }
        }
        let src = src.into_bytes();
        let one = crate::read::read_history_bytes(src.clone(), "h", crate::model::Format::Edn)
            .expect("reads");
        let lines: Vec<u32> = one.ops.iter().map(|o| o.span.line).collect();
        // Line 2: the first op follows a blank line; later ones spread.
        assert_eq!(lines[..4], [2, 5, 7, 8]);
        assert_eq!(lines.len(), 60);
        for parts in [2, 3, 7, 13] {
            assert!(cuts(&src, parts).len() + 1 >= parts.min(4), "parts {parts}");
            let many = crate::read::read_edn_in_parts(src.clone(), "h", parts).expect("reads");
            let got: Vec<u32> = many.ops.iter().map(|o| o.span.line).collect();
            assert_eq!(lines, got, "parts {parts}");
            assert_eq!(fingerprint(&one), fingerprint(&many), "parts {parts}");
        }
    }

    #[test]
    fn a_vector_history_is_not_cut() {
        assert!(cuts(b"[{:a 1}\n{:a 2}]", 2).is_empty());
        assert!(cuts(b"{:a 1}\n{:a 2}", 1).is_empty());
    }
}
