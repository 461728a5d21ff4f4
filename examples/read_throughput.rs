//! Measures history-reading throughput (MB/s): ellery's reader on bytes in
//! memory (`ellery`: on the cores `ellery::par`'s budget gives it,
//! `ELLERY_THREADS`, capped by `ELLERY_READ_THREADS`; `check` reads
//! big files in blocks instead, see `read::read_edn_file_in_blocks`), cut
//! into exactly N parts read on N
//! threads (`parts=N`; `parts=1` is the one-thread reader), or edn-rs on
//! the same bytes, for comparison.
//!
//! `file` reads FILE as `ellery check FILE` does (big files in blocks).
//!
//! Usage: `read_throughput FILE [ellery|file|parts=N|edn-rs] [RUNS]`. Prints
//! one line per run and the medians (wall time, and the process's CPU time on
//! all its threads: MB per CPU-second is the reader's efficiency, which holds
//! up on a busy shared machine while wall time does not), so scripts can grep
//! `median`.

use ellery::model::Format;
use std::str::FromStr;
use std::time::Instant;

/// The allocator `ellery check` runs with ([`ellery::alloc`]), so the
/// figures are the binary's.
#[global_allocator]
static ALLOC: ellery::alloc::BigPages = ellery::alloc::BigPages;

fn main() {
    ellery::limits::tune_allocator();
    let args: Vec<String> = std::env::args().collect();
    let Some(path) = args.get(1) else {
        eprintln!("usage: read_throughput FILE [ellery|edn-rs] [RUNS]");
        std::process::exit(2);
    };
    let which = args.get(2).map_or("ellery", String::as_str);
    let runs: usize = args.get(3).and_then(|r| r.parse().ok()).unwrap_or(3).max(1);
    // `file` reads the file itself: holding (and copying per run) a copy
    // of its bytes faulted in hundreds of MB the path `check` runs never
    // touches, between the runs being timed.
    let bytes = if which == "file" {
        Vec::new()
    } else {
        std::fs::read(path).unwrap_or_else(|e| {
            eprintln!("{path}: {e}");
            std::process::exit(2)
        })
    };
    let size = match std::fs::metadata(path) {
        Ok(m) => m.len(),
        Err(e) => {
            eprintln!("{path}: {e}");
            std::process::exit(2)
        }
    };
    let mb = size as f64 / 1e6;
    // edn-rs reads one form, so give it the ops wrapped in one vector.
    let wrapped = (which == "edn-rs").then(|| format!("[{}]", String::from_utf8_lossy(&bytes)));
    let (mut wall, mut cpu) = (Vec::new(), Vec::new());
    for run in 0..runs {
        let copy = if which == "file" {
            Vec::new()
        } else {
            bytes.clone()
        };
        let cpu0 = process_cpu_ns();
        let t = Instant::now();
        // Results are dropped after the clock stops: freeing is not reading.
        let (n, keep_edn, keep_history) = match which {
            "edn-rs" => match edn_rs::Edn::from_str(wrapped.as_deref().unwrap_or("")) {
                Ok(edn) => {
                    let n = match &edn {
                        edn_rs::Edn::Vector(v) => v.clone().to_vec().len(),
                        _ => 0,
                    };
                    (n, Some(edn), None)
                }
                Err(e) => {
                    eprintln!("edn-rs: {e:?}");
                    std::process::exit(1)
                }
            },
            w if w.starts_with("parts=") => {
                let parts = w[6..].parse().unwrap_or(1);
                match ellery::read::read_edn_in_parts(copy, path, parts) {
                    Ok(h) => (h.ops.len() + h.non_client_ops, None, Some(h)),
                    Err(e) => {
                        eprintln!("{e}");
                        std::process::exit(1)
                    }
                }
            }
            // The path `ellery check FILE` runs: big files read in blocks
            // straight from the file (the bytes read above are not used).
            "file" => match ellery::read::read_history_file(std::path::Path::new(path)) {
                Ok(h) => (h.ops.len() + h.non_client_ops, None, Some(h)),
                Err(e) => {
                    eprintln!("{e}");
                    std::process::exit(1)
                }
            },
            _ => match ellery::read::read_history_bytes(copy, path, Format::Edn) {
                Ok(h) => (h.ops.len() + h.non_client_ops, None, Some(h)),
                Err(e) => {
                    eprintln!("{e}");
                    std::process::exit(1)
                }
            },
        };
        let secs = t.elapsed().as_secs_f64();
        let cpu_secs = match (cpu0, process_cpu_ns()) {
            (Some(a), Some(b)) => (b - a) as f64 / 1e9,
            _ => f64::NAN,
        };
        drop((keep_edn, keep_history));
        println!(
            "run {run}: {which} read {n} ops, {mb:.1} MB in {secs:.3} s wall ({:.1} MB/s), {cpu_secs:.3} s CPU ({:.1} MB/s)",
            mb / secs,
            mb / cpu_secs
        );
        wall.push(mb / secs);
        cpu.push(mb / cpu_secs);
    }
    println!(
        "median {which}: {:.1} MB/s wall, {:.1} MB/s per CPU-second, over {runs} runs",
        median(wall),
        median(cpu)
    );
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// This process's CPU time in ns, all threads, user and system, to the
/// kernel's tick (Linux only; `None` elsewhere).
fn process_cpu_ns() -> Option<u64> {
    // utime and stime, in clock ticks (100 per second on Linux), of every
    // thread of this process, the finished ones included.
    let s = std::fs::read_to_string("/proc/self/stat").ok()?;
    let fields: Vec<&str> = s.rsplit(')').next()?.split_whitespace().collect();
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    Some(ticks * 10_000_000)
}
