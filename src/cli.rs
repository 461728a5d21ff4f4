//! Command-line interface: a thin layer over [`crate::route`].
//!
//! Two dialects:
//! * `ellery check [OPTIONS] FILES…` — ellery's own, with exit codes
//!   0 (all valid), 1 (some invalid), 2 (some unknown, none invalid),
//!   3 (bad input or usage), 4 (an internal error in some history; the
//!   others are still checked).
//! * `ellery -m MODEL [elle-cli options] FILES…` — elle-cli's models
//!   (list-append, rw-register, cas-register, mutex, bank, counter, set,
//!   set-full, long-fork), flags, output lines (`path \t true`) and exit
//!   codes (1 if any history is invalid, else 0; 255 on bad input, usage
//!   errors or an internal error), so scripts only change the name.

mod check_cmd;
mod check_extras;
mod diff_cmd;
mod elle_cli;
mod gen_cmd;
mod models;
mod progress;
mod robust_cmd;
mod watch_cmd;

// What the other commands share with `check` (they name it `super::…`).
use check_cmd::{check_caught, Failed, Job, PEER_DEFAULT_MODEL};

use crate::check::result::Expectations;
use crate::consistency as cm;
use crate::error::EXIT_BAD_INPUT;
use crate::infer::rw_register::RwOptions;
use crate::model::Format;
use crate::report::plot::PlotFormat;
use crate::route::{Outcome, Validity};
use clap::{Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

const EXIT_CODES: &str = "Exit codes: 0 every history valid; 1 some history invalid; \
2 some history unknown (none invalid); 3 bad input or usage; 4 an internal error \
in some history (a bug: the other histories are still checked; takes precedence).";

/// The top-level help's footer: elle-cli mode, then `check`'s exit codes.
const TOP_HELP: &str = "elle-cli mode: without a subcommand, `ellery -m MODEL [elle-cli options] FILES…` \
is a drop-in for elle-cli: its models (list-append, rw-register, cas-register, mutex, bank, counter, \
set, set-full, long-fork), flags, output lines and exit codes (0 no history invalid, 1 some history \
invalid, 255 bad input or usage); see `ellery -m list-append --help`.

Exit codes of check: 0 every history valid; 1 some history invalid; 2 some history unknown \
(none invalid); 3 bad input or usage; 4 an internal error in some history (a bug: the other \
histories are still checked; takes precedence).";

/// ellery: Elle's answers for Jepsen histories, fast.
#[derive(Parser, Debug)]
#[command(name = "ellery", version, about, after_help = TOP_HELP)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Check histories and print Elle's result map.
    #[command(after_help = EXIT_CODES)]
    Check(CheckArgs),
    /// Generate a Jepsen history from a simulated database.
    Gen(gen_cmd::GenArgs),
    /// Compare an Elle result with ellery's (exit 0 if they agree on the
    /// verdict, anomaly types, :not and :also-not; 1 if not; 3 on bad input;
    /// 4 on an internal error).
    Diff(diff_cmd::DiffArgs),
    /// Static robustness of transactional programs under a weak model
    /// (exit 0 robust, 1 not robust, 2 unknown, 3 bad input).
    Robust(robust_cmd::RobustArgs),
    /// Check a growing history online, in rounds (exit codes as check).
    #[command(after_help = EXIT_CODES)]
    Watch(watch_cmd::WatchArgs),
}

/// `-m`'s values: the library's [`crate::model::Workload`]s that
/// [`crate::check()`] checks, Jepsen's other models (checked by the CLI),
/// and `auto` (detect) — the clap mapping, not another workload type.
#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
enum ModelArg {
    /// Detect from the history: `:read`/`:write`/`:cas` ops → cas-register;
    /// `:append` micro-ops → list-append; `:w` micro-ops → rw-register.
    Auto,
    /// Elle's list-append workload.
    ListAppend,
    /// Elle's rw-register workload.
    RwRegister,
    /// Knossos's cas-register: linearizability of `:read`/`:write`/`:cas`
    /// registers (`-c linearizable`, the only model that applies).
    CasRegister,
    /// Knossos's mutex: linearizability of `:acquire`/`:release` on one lock.
    Mutex,
    /// Jepsen's bank: every read sums to the total (`-o`, `-n`).
    Bank,
    /// Jepsen's counter: reads within the bounds of the adds.
    Counter,
    /// Jepsen's set: the final read holds every acknowledged add.
    Set,
    /// Jepsen's set-full: every added element stable, none lost.
    SetFull,
    /// Jepsen's long-fork: reads of each key group totally ordered (`-g`).
    LongFork,
}

impl ModelArg {
    /// The library's workload this is, for those [`crate::check()`] checks
    /// (`None`: detect it, or one of Jepsen's other models, which the CLI
    /// checks itself).
    fn model(self) -> Option<crate::model::Workload> {
        match self {
            ModelArg::ListAppend => Some(crate::model::Workload::ListAppend),
            ModelArg::RwRegister => Some(crate::model::Workload::RwRegister),
            ModelArg::CasRegister => Some(crate::model::Workload::CasRegister),
            ModelArg::Auto
            | ModelArg::Mutex
            | ModelArg::Bank
            | ModelArg::Counter
            | ModelArg::Set
            | ModelArg::SetFull
            | ModelArg::LongFork => None,
        }
    }
}

/// Output formats.
#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
enum OutputFormat {
    /// Elle's result map, as Clojure prints it.
    Edn,
    /// The result map as elle-cli's `-v` JSON, laid out exactly as
    /// clojure.data.json/pprint does (namespaces dropped, sets as arrays).
    Json,
    /// The same JSON on one line per history (for `jq` and log pipelines).
    Jsonl,
    /// One line per history: path, verdict, anomaly types.
    Summary,
}

/// `-f`'s values: the library's [`Format`], mapped to clap here so the
/// model knows nothing of the command line.
impl ValueEnum for Format {
    fn value_variants<'a>() -> &'a [Self] {
        &[
            Format::Edn,
            Format::Json,
            Format::Dbcop,
            Format::Cobra,
            Format::Text,
        ]
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        let help = match self {
            Format::Edn => "Jepsen EDN",
            Format::Json => "elle-cli's JSON",
            Format::Dbcop => "dbcop's `history.bincode` (or a directory holding one)",
            Format::Cobra => "A directory of Cobra `T<N>.log` client logs",
            Format::Text => "`r(key,value,session,txn)` / `w(...)` lines (PolySI, Plume)",
        };
        Some(clap::builder::PossibleValue::new(self.name()).help(help))
    }
}

/// What a check looks for, as `check` and `watch` take it.
#[derive(clap::Args, Debug)]
struct ModelArgs {
    /// Consistency models expected to hold (comma-separated).
    #[arg(short = 'c', long = "consistency-models", value_delimiter = ',')]
    consistency_models: Vec<String>,
    /// Extra anomalies to look for (comma-separated).
    #[arg(short = 'a', long, value_delimiter = ',')]
    anomalies: Vec<String>,
    /// Time allowed to search one strongly connected component, in ms.
    #[arg(short = 's', long = "cycle-search-timeout", default_value_t = 1000)]
    cycle_search_timeout: u64,
}

#[derive(clap::Args, Debug)]
struct CheckArgs {
    /// Workload (default: detected from the history's operations).
    #[arg(short = 'm', long = "model", value_enum, default_value = "auto")]
    workload: ModelArg,
    #[command(flatten)]
    models: ModelArgs,
    /// Write explanation files (`<anomaly>.txt`) into this directory.
    #[arg(short = 'd', long)]
    directory: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value = "edn")]
    output: OutputFormat,
    /// Input format (default: detected; peer formats are read as
    /// rw-register histories).
    #[arg(short = 'f', long, value_enum)]
    format: Option<Format>,
    /// Report progress and phase timings on standard error.
    #[arg(long)]
    verbose: bool,
    /// Checking algorithm: auto (mini-transaction fast path when it applies),
    /// infer, mini, sat (rw-register serializability), lwt (cas-register:
    /// the unique-value chain on every key).
    #[arg(long, value_enum, default_value = "auto")]
    algorithm: crate::route::Algorithm,
    #[command(flatten)]
    rw: RwFlags,
    #[command(flatten)]
    jepsen: models::JepsenFlags,
    /// Plot format for SCC and cycle plots under `--directory`.
    #[arg(short = 'p', long = "plot-format", value_enum, default_value = "svg")]
    plot_format: PlotFormat,
    /// Time allowed to render one plot, in ms.
    #[arg(short = 't', long = "plot-timeout", default_value_t = 5000)]
    plot_timeout: u64,
    /// Plots whose DOT source is larger than this are skipped.
    #[arg(short = 'b', long = "max-plot-bytes", default_value_t = 65536)]
    max_plot_bytes: usize,
    /// Time allowed for a cas-register linearizability search, in ms
    /// (0: no limit); past it the verdict is unknown.
    #[arg(long = "linearizable-timeout", default_value_t = 60000)]
    linearizable_timeout: u64,
    /// Time allowed for the SAT checker (`--algorithm sat`, or `auto`
    /// confirming a valid rw-register verdict), in ms (0: no limit); past it
    /// the verdict is unknown (under auto: the inference's answer stands).
    #[arg(long = "sat-timeout", default_value_t = 60000)]
    sat_timeout: u64,
    /// Check this many histories at once (default: one per core).
    #[arg(short = 'j', long)]
    jobs: Option<usize>,
    /// No progress display and no final summary on standard error.
    #[arg(short = 'q', long)]
    quiet: bool,
    #[command(flatten)]
    memory: MemoryFlag,
    /// History files, or directories to search (Jepsen stores: each run's
    /// `history.edn`; elsewhere `*.edn` and `*.json`). `-` reads standard
    /// input.
    #[arg(required = true)]
    files: Vec<PathBuf>,
}

/// The memory guard (see [`crate::limits`]).
#[derive(clap::Args, Debug, Clone)]
struct MemoryFlag {
    /// Refuse (as bad input) an EDN or JSON history whose estimated peak
    /// memory, 4 × its size + 64 MB (12 × for the Jepsen models), exceeds
    /// SIZE (e.g. 512M, 8G; `none`: no limit). Default: the memory
    /// available (MemAvailable).
    #[arg(long = "max-memory", value_name = "SIZE", value_parser = crate::limits::parse_limit)]
    max_memory: Option<crate::limits::MemoryLimit>,
}

impl MemoryFlag {
    fn limit(&self) -> crate::limits::MemoryLimit {
        self.max_memory.unwrap_or_default()
    }
}

/// Elle's rw-register options (ignored by other workloads).
#[derive(clap::Args, Debug, Clone, Copy)]
struct RwFlags {
    /// rw-register: assume each key is linearizable and infer version order
    /// from real-time order (Elle's `:linearizable-keys?`).
    #[arg(long)]
    linearizable_keys: bool,
    /// rw-register: assume each key is sequentially consistent and infer
    /// version order from process order (Elle's `:sequential-keys?`).
    #[arg(long)]
    sequential_keys: bool,
    /// rw-register: assume writes follow reads within a transaction (Elle's
    /// `:wfr-keys?`).
    #[arg(long)]
    wfr_keys: bool,
}

impl RwFlags {
    fn options(self) -> RwOptions {
        RwOptions {
            linearizable_keys: self.linearizable_keys,
            sequential_keys: self.sequential_keys,
            wfr_keys: self.wfr_keys,
        }
    }
}

/// Runs the CLI with the process arguments and returns the exit code.
pub fn main() -> i32 {
    let args: Vec<String> = std::env::args().collect();
    run(&args)
}

/// Runs the CLI with explicit arguments (first is the program name).
pub fn run(args: &[String]) -> i32 {
    let first = args.get(1).map(String::as_str);
    let subcommand = matches!(
        first,
        Some(
            "check"
                | "gen"
                | "diff"
                | "robust"
                | "watch"
                | "help"
                | "--help"
                | "-h"
                | "--version"
                | "-V"
        ) | None
    );
    if let Err(e) = crate::limits::check_solver_env() {
        eprintln!("ellery: {e}");
        return if subcommand { EXIT_BAD_INPUT } else { 255 };
    }
    if !subcommand {
        return elle_cli::run_elle_cli(args);
    }
    let cli = match Cli::try_parse_from(args) {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { EXIT_BAD_INPUT } else { 0 };
            let _ = e.print();
            return code;
        }
    };
    match cli.command {
        Command::Check(a) => check_cmd::run_check(a),
        Command::Gen(g) => gen_cmd::run(g),
        Command::Diff(d) => diff_cmd::run_diff(d),
        Command::Robust(r) => robust_cmd::run_robust(r),
        Command::Watch(w) => watch_cmd::run_watch(w),
    }
}

fn expectations(models: &[String], anomalies: &[String]) -> Result<Expectations, String> {
    let models: Vec<&str> = models.iter().map(String::as_str).collect();
    let anomalies: Vec<&str> = anomalies.iter().map(String::as_str).collect();
    Ok(Expectations {
        models: if models.is_empty() {
            None
        } else {
            Some(cm::parse_models(&models)?)
        },
        anomalies: cm::parse_anomalies(&anomalies)?,
    })
}
