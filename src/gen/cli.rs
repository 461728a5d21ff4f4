//! `ellery gen`: command-line access to the generator.

use super::{generate_fenced, Fault, FenceOptions, GenOptions, Mode, Workload};
use std::io::Write;

/// Arguments of `ellery gen`.
#[derive(clap::Args, Debug)]
pub struct GenArgs {
    /// Workload to generate.
    #[arg(short = 'w', long, value_enum, default_value = "list-append")]
    workload: Workload,
    /// Behaviour of the simulated database.
    #[arg(long, value_enum, default_value = "strict-serializable")]
    mode: Mode,
    /// Number of transactions.
    #[arg(short = 'n', long, default_value_t = 1000)]
    txns: usize,
    /// Concurrent processes.
    #[arg(short = 'p', long, default_value_t = 10)]
    processes: usize,
    /// Active keys.
    #[arg(short = 'k', long, default_value_t = 10)]
    keys: usize,
    /// Most micro-ops per transaction.
    #[arg(long, default_value_t = 4)]
    max_mops: usize,
    /// Fraction of transactions that fail.
    #[arg(long, default_value_t = 0.0)]
    fail_fraction: f64,
    /// Fraction of transactions that crash (`:info`).
    #[arg(long, default_value_t = 0.0)]
    info_fraction: f64,
    /// Faults to inject (repeatable).
    #[arg(long = "fault", value_enum)]
    faults: Vec<Fault>,
    /// Random seed.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Mini-transactions (MTC): 1-2 reads, at most 2 writes, each write
    /// after a read of its key.
    #[arg(long)]
    mini: bool,
    /// Draw written values from 1..=N per key, so that they repeat
    /// (rw-register; 0: every value written once).
    #[arg(long, default_value_t = 0)]
    values: u64,
    /// Each process issues a fence transaction (`[[:r K v] [:w K v']]`)
    /// after every N of its transactions (rw-register; for `ellery
    /// watch`'s garbage collection).
    #[arg(long, value_name = "N")]
    fences: Option<usize>,
    /// The fence key (negative).
    #[arg(long, value_name = "K", default_value_t = -1, allow_hyphen_values = true)]
    fence_key: i64,
}

/// Runs `ellery gen`, writing the history to standard output.
pub fn run(a: GenArgs) -> i32 {
    let opts = GenOptions {
        workload: a.workload,
        mode: a.mode,
        txns: a.txns,
        processes: a.processes.max(1),
        keys: a.keys.max(1),
        max_mops: a.max_mops.max(1),
        fail_fraction: a.fail_fraction,
        info_fraction: a.info_fraction,
        faults: a.faults,
        seed: a.seed,
        mini: a.mini,
        values: a.values,
        ..GenOptions::default()
    };
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let fences = a.fences.map(|every| FenceOptions {
        every,
        key: a.fence_key,
    });
    match generate_fenced(&opts, fences, &mut out).and_then(|_| out.flush()) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("ellery gen: {e}");
            3
        }
    }
}
