//! Writes a generated Jepsen history (see `ellery::gen`) to a file.
//!
//! ```text
//! cargo run --release --example gen -- TXNS OUT [--seed N] [--workload list-append|rw-register]
//!     [--mode strict-serializable|serializable|snapshot-isolation|read-committed]
//!     [--processes N] [--keys N] [--max-writes-per-key N] [--max-mops N]
//!     [--read-fraction F] [--fail-fraction F] [--info-fraction F] [--fault NAME]...
//! ```
//!
//! Prints the summary counts and the generation time to stderr.

use ellery::gen::{generate, Fault, GenOptions, Mode, Workload};
use std::time::Instant;

fn usage() -> ! {
    eprintln!(
        "usage: gen TXNS OUT [--seed N] [--workload W] [--mode M] [--processes N] [--keys N] \
         [--max-writes-per-key N] [--max-mops N] [--read-fraction F] [--fail-fraction F] \
         [--info-fraction F] [--fault NAME]..."
    );
    std::process::exit(2)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 2 {
        usage();
    }
    let mut opts = GenOptions {
        txns: args[0].parse().unwrap_or_else(|_| usage()),
        processes: 10,
        keys: 10,
        max_writes_per_key: 32,
        max_mops: 7,
        ..GenOptions::default()
    };
    let out_path = &args[1];
    let mut it = args[2..].iter();
    while let Some(flag) = it.next() {
        let val = it.next().unwrap_or_else(|| usage());
        let num = || val.parse::<u64>().unwrap_or_else(|_| usage());
        let frac = || val.parse::<f64>().unwrap_or_else(|_| usage());
        match flag.as_str() {
            "--seed" => opts.seed = num(),
            "--processes" => opts.processes = num() as usize,
            "--keys" => opts.keys = num() as usize,
            "--max-writes-per-key" => opts.max_writes_per_key = num() as usize,
            "--max-mops" => opts.max_mops = num() as usize,
            "--read-fraction" => opts.read_fraction = frac(),
            "--fail-fraction" => opts.fail_fraction = frac(),
            "--info-fraction" => opts.info_fraction = frac(),
            "--workload" => {
                opts.workload = match val.as_str() {
                    "list-append" => Workload::ListAppend,
                    "rw-register" => Workload::RwRegister,
                    _ => usage(),
                }
            }
            "--mode" => {
                opts.mode = match val.as_str() {
                    "strict-serializable" => Mode::StrictSerializable,
                    "serializable" => Mode::Serializable,
                    "snapshot-isolation" => Mode::SnapshotIsolation,
                    "read-committed" => Mode::ReadCommitted,
                    _ => usage(),
                }
            }
            "--fault" => opts.faults.push(match val.as_str() {
                "G1a" | "aborted-read" => Fault::AbortedRead,
                "G1b" | "intermediate-read" => Fault::IntermediateRead,
                "lost-update" => Fault::LostUpdate,
                "G2-item" | "write-skew" => Fault::WriteSkew,
                "stale-read" => Fault::StaleRead,
                "G1c" | "cyclic-information-flow" => Fault::CyclicInformationFlow,
                "G0" | "dirty-write" => Fault::DirtyWrite,
                _ => usage(),
            }),
            _ => usage(),
        }
    }
    let file = std::fs::File::create(out_path).unwrap_or_else(|e| {
        eprintln!("cannot create {out_path}: {e}");
        std::process::exit(1)
    });
    let mut file = file;
    let start = Instant::now();
    let summary = match generate(&opts, &mut file) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("gen: {e}");
            std::process::exit(1)
        }
    };
    let secs = start.elapsed().as_secs_f64();
    eprintln!(
        "{} txns ({} ok, {} fail, {} info; {} aborts), {} ops, {} keys in {:.3} s ({:.0} txns/s)",
        summary.txns,
        summary.ok,
        summary.fail,
        summary.info,
        summary.aborts,
        summary.ops,
        summary.keys,
        secs,
        summary.txns as f64 / secs
    );
    for inj in &summary.injections {
        eprintln!("injected {:?} at completions {:?}", inj.fault, inj.ops);
    }
}
