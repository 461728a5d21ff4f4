//! The memory guard: a history too large for the memory at hand is refused
//! with a clear error before reading, instead of being killed by the
//! kernel's OOM killer halfway through.
//!
//! The estimate is [`BYTES_PER_INPUT_BYTE`] times the file's size plus
//! [`BASE_BYTES`]: measured peak memory is 2.5–3.8 times the EDN size for
//! generated list-append and rw-register histories of 300,000 to 2,000,000
//! transactions (600–850 bytes per transaction), with the inference.
//! Only EDN and JSON files are estimated (not standard input or the peer
//! formats).

use std::path::Path;

/// Estimated peak memory per byte of EDN or JSON input.
pub const BYTES_PER_INPUT_BYTE: u64 = 4;

/// Memory a check takes whatever the input (program, tables).
pub const BASE_BYTES: u64 = 64 << 20;

/// What histories are measured against.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum MemoryLimit {
    /// The memory available when the history is about to be read
    /// (`MemAvailable` in `/proc/meminfo`; no limit where that is unknown).
    #[default]
    Available,
    /// At most this many bytes.
    Bytes(u64),
    /// No limit.
    None,
}

/// Parses `--max-memory`: a number of bytes with an optional `K`, `M`, `G`
/// or `T` suffix (powers of 1024; decimals allowed, e.g. `1.5G`), or
/// `none`.
pub fn parse_limit(text: &str) -> Result<MemoryLimit, String> {
    let t = text.trim();
    if t.eq_ignore_ascii_case("none") {
        return Ok(MemoryLimit::None);
    }
    let (number, unit) = match t.char_indices().find(|(_, c)| c.is_ascii_alphabetic()) {
        Some((i, _)) => t.split_at(i),
        None => (t, ""),
    };
    let shift = match unit.to_ascii_uppercase().trim_end_matches(['B', 'I']) {
        "" => 0,
        "K" => 10,
        "M" => 20,
        "G" => 30,
        "T" => 40,
        _ => return Err(bad_limit(text)),
    };
    let x: f64 = number.trim().parse().map_err(|_| bad_limit(text))?;
    if !x.is_finite() || x < 0.0 {
        return Err(bad_limit(text));
    }
    Ok(MemoryLimit::Bytes((x * (1u64 << shift) as f64) as u64))
}

fn bad_limit(text: &str) -> String {
    format!("--max-memory: expected a size such as 512M, 8G or 1.5G, or none; found {text:?}")
}

/// `MemAvailable` from `/proc/meminfo`, in bytes.
pub fn mem_available() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    parse_mem_available(&info)
}

fn parse_mem_available(info: &str) -> Option<u64> {
    let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// The estimated peak memory of checking a history of `size` bytes.
pub fn estimate(size: u64) -> u64 {
    size.saturating_mul(BYTES_PER_INPUT_BYTE)
        .saturating_add(BASE_BYTES)
}

/// Whether the history in `path` (EDN or JSON) fits `limit`; the error
/// names the file, the estimate and the limit.
pub fn check_fits(path: &Path, limit: MemoryLimit) -> Result<(), String> {
    let Ok(meta) = std::fs::metadata(path) else {
        // The reader reports missing files.
        return Ok(());
    };
    if !meta.is_file() {
        return Ok(());
    }
    let (cap, what) = match limit {
        MemoryLimit::None => return Ok(()),
        MemoryLimit::Bytes(b) => (b, "the --max-memory limit"),
        MemoryLimit::Available => match mem_available() {
            Some(b) => (b, "the memory available (MemAvailable)"),
            None => return Ok(()),
        },
    };
    fits(path, meta.len(), cap, what)
}

fn fits(path: &Path, size: u64, cap: u64, what: &str) -> Result<(), String> {
    let need = estimate(size);
    if need <= cap {
        return Ok(());
    }
    let mb = |b: u64| b.div_ceil(1 << 20);
    Err(format!(
        "{}: too large to check: about {} MB needed ({BYTES_PER_INPUT_BYTE} × its {} MB, plus {} MB), more than {what}, {} MB; --max-memory SIZE sets the limit (none: no limit)",
        path.display(),
        mb(need),
        mb(size),
        mb(BASE_BYTES),
        mb(cap)
    ))
}

/// The limit the exact (SAT) checker measures its polygraph against
/// ([`solver_budget`]); the command line sets it from `--max-memory`.
static SOLVER_LIMIT: std::sync::Mutex<MemoryLimit> = std::sync::Mutex::new(MemoryLimit::Available);

/// Environment variable that overrides the SAT checker's memory limit
/// (same syntax as `--max-memory`; tests set a tiny one).
pub const SOLVER_LIMIT_ENV: &str = "ELLERY_SAT_MAX_MEMORY";

/// Whether [`SOLVER_LIMIT_ENV`], if set, is a size `--max-memory` accepts:
/// the command line refuses a bad one as a usage error (exit 3) rather
/// than let [`solver_budget`] ignore it.
pub fn check_solver_env() -> Result<(), String> {
    match std::env::var_os(SOLVER_LIMIT_ENV) {
        None => Ok(()),
        Some(t) => {
            let text = t.to_string_lossy();
            parse_limit(&text).map(|_| ()).map_err(|_| {
                format!("{SOLVER_LIMIT_ENV}: expected a size such as 512M, 8G or 1.5G, or none; found {text:?}")
            })
        }
    }
}

/// Sets the limit [`solver_budget`] starts from (the CLI passes
/// `--max-memory`; the default is the memory available).
pub fn set_solver_limit(limit: MemoryLimit) {
    *SOLVER_LIMIT.lock().unwrap_or_else(|e| e.into_inner()) = limit;
}

/// The most the exact checker's polygraph may take by default
/// ([`solver_budget`]): polygraphs that need more are almost always
/// undecidable in the time allowed anyway (issue 18: a 100k predicate
/// history under `serializable` wanted over 8 GB).
pub const DEFAULT_SOLVER_BYTES: u64 = 4 << 30;

/// The bytes the exact checker's polygraph (and the phases after it) may
/// still take, and what sets them: [`SOLVER_LIMIT_ENV`] if set, else the
/// limit of [`set_solver_limit`] less what the process already holds
/// (`VmRSS`), or by default half the memory available now, at most
/// [`DEFAULT_SOLVER_BYTES`]. `None`: no limit. Unlike
/// [`check_fits`], which refuses a file before reading, this turns a
/// polygraph that would not fit into an unknown verdict.
pub fn solver_budget() -> Option<(u64, &'static str)> {
    let (limit, what) = match std::env::var(SOLVER_LIMIT_ENV)
        .ok()
        .and_then(|t| parse_limit(&t).ok())
    {
        Some(l) => (l, SOLVER_LIMIT_ENV),
        None => (
            *SOLVER_LIMIT.lock().unwrap_or_else(|e| e.into_inner()),
            "--max-memory",
        ),
    };
    match limit {
        MemoryLimit::None => None,
        MemoryLimit::Bytes(b) => Some((b.saturating_sub(resident().unwrap_or(0)), what)),
        MemoryLimit::Available => Some(match mem_available() {
            Some(b) if b / 2 < DEFAULT_SOLVER_BYTES => (
                b / 2,
                "half the memory available (--max-memory SIZE sets a limit)",
            ),
            _ => (
                DEFAULT_SOLVER_BYTES,
                "the default limit (--max-memory SIZE sets one)",
            ),
        }),
    }
}

/// The process's resident memory (`VmRSS` of `/proc/self/status`), in
/// bytes.
fn resident() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Makes the C allocator map big blocks on their own and hand them straight
/// back to the system, and keep smaller ones for reuse.
///
/// glibc serves allocations below a threshold from per-thread arenas and
/// raises that threshold (up to 32 MB) each time a big block is freed, so
/// the tables built on the parallel reader's threads stayed resident after
/// they were joined: 1M rw-register transactions peaked at 685 MB instead
/// of 567 MB. A fixed threshold maps every big table on its own and unmaps
/// it when freed. The threshold is [`crate::alloc::ADVISE_FROM_BYTES`], the
/// size from which blocks get huge pages: a block mapped on its own below
/// it would be faulted in page by page each time it is made again. At 1 MB,
/// `ellery watch`'s pieces of input and per-round tables (1–4 MB) were
/// mapped, faulted in and unmapped every round (issue 17, 29 Nov: 4 MB, with
/// as much kept at the heap's top, took the fenced 1M stream from 14.6 to
/// 12.6 s and 2.7 to 1.8 s of system CPU at the same 207 MB peak; `check`
/// on 1M list-append 0.94×, +9 MB). Where huge pages are off
/// ([`crate::alloc::huge_pages_pay`]) the threshold stays: at 32 MB the
/// tables kept in the heap took 1M rw-register from 365 to 420–429 MB
/// (issue 23's bound is 400 MB; 30 Nov). Also decides whether big blocks get
/// huge pages ([`crate::alloc::huge_pages_pay`]). Called once by the
/// binary; the thresholds change nothing on other C libraries.
pub fn tune_allocator() {
    crate::alloc::set_huge_pages(crate::alloc::huge_pages_pay());
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        extern "C" {
            fn mallopt(param: i32, value: i32) -> i32;
        }
        /// glibc's `M_TRIM_THRESHOLD` parameter number.
        const M_TRIM_THRESHOLD: i32 = -1;
        /// glibc's `M_MMAP_THRESHOLD` parameter number.
        const M_MMAP_THRESHOLD: i32 = -3;
        let bytes = crate::alloc::ADVISE_FROM_BYTES as i32;
        // SAFETY: mallopt only changes allocator tuning; it is called
        // before any other thread exists.
        unsafe {
            mallopt(M_MMAP_THRESHOLD, bytes);
            mallopt(M_TRIM_THRESHOLD, bytes);
        }
    }
}

/// Hands the C allocator's free pages back to the system (glibc's
/// `malloc_trim`; nothing on other C libraries) when the process holds at
/// least `above` bytes (resident).
///
/// Blocks below [`tune_allocator`]'s threshold come from the heap, and
/// glibc returns a freed page in its middle only when asked: `ellery
/// watch` calls this after each round, whose check frees far more than
/// the rounds keep, so that its resident size is bounded by what it holds
/// or by `above`, not by the largest round's so far. Below `above` the
/// pages stay for the next round: handing them back after every round
/// made each round fault them in again (issue 17: on the fenced 1M stream
/// 3.2 of 16 s of CPU were the kernel's, and the stream took 10% longer).
pub fn release_free_memory(above: u64) {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        extern "C" {
            fn malloc_trim(pad: usize) -> i32;
        }
        if resident().is_some_and(|r| r < above) {
            return;
        }
        // SAFETY: malloc_trim only gives free pages back to the system,
        // under the allocator's own locks; it takes no pointer.
        unsafe {
            malloc_trim(0);
        }
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    let _ = above;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_limit("none"), Ok(MemoryLimit::None));
        assert_eq!(parse_limit("1024"), Ok(MemoryLimit::Bytes(1024)));
        assert_eq!(parse_limit("512M"), Ok(MemoryLimit::Bytes(512 << 20)));
        assert_eq!(parse_limit("8g"), Ok(MemoryLimit::Bytes(8 << 30)));
        assert_eq!(parse_limit("1.5GiB"), Ok(MemoryLimit::Bytes(3 << 29)));
        assert_eq!(parse_limit("2KB"), Ok(MemoryLimit::Bytes(2048)));
        for bad in ["", "M", "-1G", "1X", "1.2.3", "NaN"] {
            assert_eq!(
                parse_limit(bad),
                Err(format!(
                    "--max-memory: expected a size such as 512M, 8G or 1.5G, or none; found {bad:?}"
                ))
            );
        }
    }

    #[test]
    fn the_estimate_is_compared_with_the_limit() {
        let p = Path::new("h.edn");
        assert_eq!(fits(p, 100 << 20, 464 << 20, "x"), Ok(()));
        assert_eq!(
            fits(p, 100 << 20, 400 << 20, "the --max-memory limit"),
            Err("h.edn: too large to check: about 464 MB needed (4 × its 100 MB, plus 64 MB), more than the --max-memory limit, 400 MB; --max-memory SIZE sets the limit (none: no limit)".into())
        );
        assert_eq!(
            parse_mem_available("MemTotal: 10 kB\nMemAvailable:    2048 kB\n"),
            Some(2 << 20)
        );
        assert_eq!(parse_mem_available("MemTotal: 10 kB\n"), None);
    }
}
