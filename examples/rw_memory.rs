//! Where a big rw-register check spends its time and memory (issue 23):
//! each step of `ellery check -m rw-register` run on its own, with the
//! bytes allocated (live after the step, and the peak during it) counted by
//! a wrapping global allocator. Heap only: the page-table and stack share
//! of the process's RSS is not counted.
//!
//! Usage: `rw_memory FILE` (e.g. `ellery gen -w rw-register -n 1000000
//! --seed 1 > FILE`). Steps: reading, the passes `auto` runs before the
//! inference (workload detection, validation, the misread scan, the
//! mini-transaction attempt), the inference alone (with real-time edges, as
//! the default models need), then the whole check on the history read.

use ellery::infer::rw_register::{analyze, RwOptions};
use ellery::infer::txn::ExtraGraph;
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::time::Instant;

/// The system allocator, counting live bytes and their peak.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc(layout);
        if !p.is_null() {
            let live = LIVE.fetch_add(layout.size(), Relaxed) + layout.size();
            PEAK.fetch_max(live, Relaxed);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout);
        LIVE.fetch_sub(layout.size(), Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = System.realloc(ptr, layout, new_size);
        if !p.is_null() {
            if new_size >= layout.size() {
                let live =
                    LIVE.fetch_add(new_size - layout.size(), Relaxed) + new_size - layout.size();
                PEAK.fetch_max(live, Relaxed);
            } else {
                LIVE.fetch_sub(layout.size() - new_size, Relaxed);
            }
        }
        p
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// Runs `f`, printing its wall time, the live heap after it and the peak
/// during it (MB).
fn step<T>(name: &str, f: impl FnOnce() -> T) -> T {
    PEAK.store(LIVE.load(Relaxed), Relaxed);
    let t = Instant::now();
    let r = f();
    println!(
        "{name:<28} {:>7.3} s  live {:>7.1} MB  peak {:>7.1} MB",
        t.elapsed().as_secs_f64(),
        LIVE.load(Relaxed) as f64 / 1e6,
        PEAK.load(Relaxed) as f64 / 1e6
    );
    r
}

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: rw_memory FILE");
        std::process::exit(2);
    };
    let h = step("read", || ellery::read::read_path(path.as_ref(), None)).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(3)
    });
    println!(
        "  {} ops, {} micro-ops, {} elements",
        h.ops.len(),
        h.mops.len(),
        h.elements.len()
    );
    let w = step("workload detection", || ellery::Workload::detect(&h));
    println!("  {w:?}");
    let valid = step("validation", || ellery::infer::rw_register::validate(&h));
    println!("  valid input: {}", valid.is_ok());
    let misread = step("misreads (auto's first scan)", || {
        ellery::check::sat::inference_misreads(&h)
    });
    println!("  misread: {misread:?}");
    let mini = step("mini-transaction attempt", || {
        ellery::infer::mini::analyze(&h, w, ExtraGraph::Realtime).map(|_| ())
    });
    println!("  mini applies: {}", mini.is_ok());
    let inference = step("inference (real-time edges)", || {
        analyze(&h, ExtraGraph::Realtime, &RwOptions::default())
    });
    match &inference {
        Ok(i) => println!(
            "  {} data edges (order edges are generated with the graph)",
            i.edges.len()
        ),
        Err(_) => println!("  refused"),
    }
    step("drop inference", || drop(inference));
    let opts = ellery::CheckOptions {
        workload: Some(ellery::Workload::RwRegister),
        ..Default::default()
    };
    let outcome = step("check (the whole of auto)", || ellery::check(&h, &opts));
    match outcome {
        Ok(o) => println!("  valid? {:?}", o.validity),
        Err(e) => println!("  error: {e}"),
    }
}
