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
//! there. The ops' lines are not numbered (a pass over every newline, 7% of
//! reading): [`History::line`] counts an op's when an error names it.
//! The join touches each op once, without
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

mod join;

use crate::model::mapped::FileBytes;

use super::{fast, Builder};
use crate::model::History;
use join::{join, Spare};

/// Below this many bytes per part, a second thread costs more than it saves
/// (at 8 MB, files of 8 to 16 MB were read on one core; two 4.85 MB parts
/// read 1.3 times as fast, issue 23).
pub(super) const MIN_PART_BYTES: usize = 4 << 20;

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
/// On success the ops' lines are left unnumbered (0): finish `b` with
/// [`Builder::finish_unnumbered`].
pub(super) fn read(src: &[u8], b: &mut Builder, parts: usize) -> bool {
    let cuts = cuts(src, parts);
    !cuts.is_empty() && read_parts(src, 0, &cuts, b, &mut Vec::new(), || ()).is_some()
}

/// Reads `src` (which starts at file offset `base`), cut at `cuts`, into
/// `b`: the parts on their own threads, each indexing and pairing its own
/// ops, then joined in order
/// while `beside_joins` runs on the thread the last part was read on (the
/// block reader reads the next block there: the joins are one thread's
/// work). Returns what `beside_joins` returned.
/// `None` when a part does not read cleanly (`beside_joins` then does not
/// run) or the parts do not join (`b` is then to be thrown away).
fn read_parts<R: Send>(
    src: &[u8],
    base: u64,
    cuts: &[usize],
    b: &mut Builder,
    spares: &mut Vec<Spare>,
    beside_joins: impl FnOnce() -> R + Send,
) -> Option<R> {
    let mut bounds = Vec::with_capacity(cuts.len() + 1);
    let mut start = 0;
    for &c in cuts {
        bounds.push((start, c));
        start = c;
    }
    bounds.push((start, src.len()));
    let read_one = |(start, end): (usize, usize), mut part: Builder| {
        fast::read_part(&src[..end], base, start, &mut part).ok()?;
        Some(part)
    };
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
        let first = fast::read_part(&src[..end], base, start, b).ok();
        // Every thread joined (a panic in one is its part's `None`), then
        // the first `None` fails the read.
        let parts: Option<Vec<Builder>> = handles
            .into_iter()
            .map(|h| h.join().ok().flatten())
            .collect::<Vec<_>>()
            .into_iter()
            .collect();
        let ((), parts) = (first?, parts?);
        // The part threads are done: their places are free for this one.
        let beside = scope.spawn(beside_joins);
        let mut joined = Some(());
        for part in parts {
            let Some(spare) = join(b, part) else {
                joined = None;
                break;
            };
            spares.push(spare);
        }
        let r = match beside.join() {
            Ok(r) => r,
            Err(payload) => std::panic::resume_unwind(payload),
        };
        joined.map(|()| r)
    })
}

/// The most bytes of a big file read in one block. Two blocks are held at
/// once: the next is faulted in while the joins of this one's parts run.
pub(super) const BLOCK_BYTES: usize = 32 << 20;

/// Reads a big one-op-per-line EDN file in blocks of up to `block_bytes`
/// (each cut into `parts` parts read in parallel; `None`: [`parts_for`],
/// the thread budget's), so that about two blocks of the file's text are
/// resident at once (it is re-read by span to print ops). The file is
/// mapped, not copied ([`FileBytes`]). With two parts or more, the next
/// block's pages are faulted in while this one's parts are joined (one
/// thread's work), so only the first block's reading has no other work
/// beside it; that block is a quarter of the others (it grows when its
/// first line is longer; it is read in one part: in two, 1M rw-register
/// read 0.95–1.0 times as fast in interleaved runs). `None` when the file is not one op per line or
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
    let len = usize::try_from(file.metadata().ok()?.len()).ok()?;
    let bytes = FileBytes::of(&mut file, len, origin).ok()?;
    let src = bytes.bytes();
    let mut b = Builder::new(
        crate::model::SourceText::default(),
        origin,
        crate::model::Format::Edn,
    );
    let _reading = crate::par::Checking::start();
    // The joined parts' tables, for the next block's parts.
    let mut spares = Vec::new();
    let mut want = (block_bytes / 4).max(1);
    bytes.prefetch(0..want);
    let mut pos = 0usize;
    while pos < src.len() {
        // Whole lines only; the rest starts the next block.
        let limit = src.len().min(pos + want);
        let eof = limit == src.len();
        let end = if eof {
            limit - pos
        } else {
            memchr::memrchr(b'\n', &src[pos..limit]).map_or(0, |p| p + 1)
        };
        if end == 0 {
            if want >= block_bytes {
                return None; // a line longer than a block
            }
            want = block_bytes;
            continue;
        }
        want = block_bytes;
        let text = &src[pos..pos + end];
        if pos == 0 && !starts_with_op(text) {
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
        let (base, next) = (pos as u64, pos + end);
        let bytes = &bytes;
        let fault_in_next = move || bytes.prefetch(next..next + block_bytes);
        if cut.is_empty() {
            fast::read_block(text, base, &mut b).ok()?;
            fault_in_next();
        } else {
            read_parts(text, base, &cut, &mut b, &mut spares, fault_in_next)?;
        }
        bytes.release(pos..next);
        pos = next;
    }
    Some(b.finish_unnumbered())
}

/// Whether `text` (after whitespace) starts with an op map.
fn starts_with_op(text: &[u8]) -> bool {
    text.iter()
        .find(|c| !c.is_ascii_whitespace())
        .is_none_or(|&c| c == b'{')
}

#[cfg(test)]
mod tests;
