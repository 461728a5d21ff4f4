//! `ellery gen`: command-line access to the generator.

use crate::gen::{generate_fenced, Fault, FenceOptions, GenOptions, Mode, Workload};
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
    /// rw-register histories with predicate reads and writes (`:rp`,
    /// `:wp`) from a strict-serializable database (`gen::predicates`);
    /// `-w`, `--mode`, `--fault` and the fractions above do not apply.
    #[arg(long)]
    predicates: bool,
    /// With `--predicates`: fraction of transactions with a predicate
    /// micro-op.
    #[arg(long, default_value_t = 0.2)]
    pred_fraction: f64,
    /// With `--predicates`: fraction of the value space a range covers.
    #[arg(long, default_value_t = 0.01)]
    pred_width: f64,
    /// With `--predicates`: predicate faults to inject (repeatable).
    #[arg(long = "pred-fault", value_enum)]
    pred_faults: Vec<crate::gen::predicates::PredFault>,
    /// Each process issues a fence transaction (`[[:r K v] [:w K v']]`)
    /// after every N of its transactions (rw-register; for `ellery
    /// watch`'s garbage collection: 20 is Cobra's setting; with 10,
    /// `watch` forgets more each round under `strong-session-serializable`,
    /// and its collection did not stall on the streams measured; README:
    /// How often to fence).
    #[arg(long, value_name = "N")]
    fences: Option<usize>,
    /// The fence key (negative).
    #[arg(long, value_name = "K", default_value_t = -1, allow_hyphen_values = true)]
    fence_key: i64,
}

/// Runs `ellery gen`, writing the history to standard output.
pub fn run(a: GenArgs) -> i32 {
    if a.predicates {
        return run_predicates(a);
    }
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

/// `ellery gen --predicates`.
fn run_predicates(a: GenArgs) -> i32 {
    let opts = crate::gen::predicates::PredGenOptions {
        txns: a.txns,
        processes: a.processes,
        keys: a.keys,
        max_mops: a.max_mops,
        pred_fraction: a.pred_fraction,
        width: a.pred_width,
        faults: a.pred_faults,
        seed: a.seed,
    };
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    match crate::gen::predicates::generate_predicates(&opts, &mut out).and_then(|_| out.flush()) {
        Ok(_) => 0,
        Err(e) => {
            eprintln!("ellery gen: {e}");
            3
        }
    }
}

/// `-w`'s values: the model's [`Workload`], mapped to clap here.
impl clap::ValueEnum for Workload {
    fn value_variants<'a>() -> &'a [Self] {
        &[
            Workload::ListAppend,
            Workload::RwRegister,
            Workload::CasRegister,
        ]
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        let (name, help) = match self {
            Workload::ListAppend => (
                "list-append",
                "Lists of integers: micro-ops `[:append k v]` and `[:r k [v ...]]`",
            ),
            Workload::RwRegister => (
                "rw-register",
                "Registers holding an integer or nil: micro-ops `[:w k v]` and `[:r k v]`",
            ),
            Workload::CasRegister => (
                "cas-register",
                "Knossos-style CAS registers (`:read`, `:write`, `:cas [old new]`, unique \
                 written values; `jepsen.independent` tuples with several keys), from a \
                 linearizable register; modes do not apply, and of the faults only stale-read, \
                 lost-update and aborted-read (see the `cas` module)",
            ),
        };
        Some(clap::builder::PossibleValue::new(name).help(help))
    }
}
