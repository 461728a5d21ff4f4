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

mod check_extras;
mod diff_cmd;
mod elle_cli;
mod models;
mod robust_cmd;
mod watch_cmd;

use crate::check::result::Expectations;
use crate::consistency as cm;
use crate::edn::pr_str;
use crate::error::{EXIT_BAD_INPUT, EXIT_INTERNAL, EXIT_INVALID, EXIT_UNKNOWN, EXIT_VALID};
use crate::infer::rw_register::RwOptions;
use crate::model::Format;
use crate::read::{detect_format, read_history_bytes};
use crate::report::files::write_files;
use crate::report::json_pprint::pprint_json;
use crate::report::plot::{PlotFormat, PlotOptions};
use crate::route::{CheckOptions, Outcome, Validity};
use clap::{Parser, Subcommand, ValueEnum};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

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
    Gen(crate::gen::cli::GenArgs),
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

/// Workloads.
#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
enum Workload {
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

impl Workload {
    /// The library's workload this is, for those [`crate::check()`] checks
    /// (`None`: detect it, or one of Jepsen's other models, which the CLI
    /// checks itself).
    fn model(self) -> Option<crate::model::Workload> {
        match self {
            Workload::ListAppend => Some(crate::model::Workload::ListAppend),
            Workload::RwRegister => Some(crate::model::Workload::RwRegister),
            Workload::CasRegister => Some(crate::model::Workload::CasRegister),
            Workload::Auto
            | Workload::Mutex
            | Workload::Bank
            | Workload::Counter
            | Workload::Set
            | Workload::SetFull
            | Workload::LongFork => None,
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

/// The peer format to read `path` with: the one asked for, else the one
/// detected (none for standard input or an explicit EDN/JSON).
fn peer_format(path: &Path, format: Option<Format>) -> Option<Format> {
    match format {
        Some(f) => f.is_peer().then_some(f),
        None if path == Path::new("-") => None,
        None => crate::read::peers::detect(path),
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
    workload: Workload,
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
        Command::Check(a) => run_check(a),
        Command::Gen(g) => crate::gen::cli::run(g),
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

/// Reads `path` as `format` asked, or as the peer format `peer` (from
/// [`peer_format`], which looks at the file, so it is decided once).
fn read(
    path: &Path,
    format: Option<Format>,
    peer: Option<Format>,
) -> crate::error::Result<crate::model::History> {
    if path != Path::new("-") {
        let format = peer.or(format).unwrap_or_else(|| detect_format(path));
        return crate::read::read_path(path, Some(format));
    }
    if let Some(peer) = peer {
        return Err(crate::error::Error::Usage(format!(
            "the {} format is read from files, not standard input",
            peer.name()
        )));
    }
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut std::io::stdin(), &mut bytes).map_err(|e| {
        crate::error::Error::Io {
            path: "-".into(),
            source: e,
        }
    })?;
    let f = format.unwrap_or_else(|| check_extras::stdin_format(&bytes));
    Ok(read_history_bytes(bytes, "-", f)?)
}

/// The default model for peer formats. Their histories record no real
/// time (the converted history's real-time order is an artefact), and the
/// peers' own "serializable" includes session order: Elle's
/// strong-session-serializable.
const PEER_DEFAULT_MODEL: &str = "strong-session-serializable";

/// Check options for a peer-format history: [`PEER_DEFAULT_MODEL`] unless
/// models were given, and a note when real-time anomalies would be reported.
fn peer_check_options(path: &Path, opts: &CheckOptions) -> CheckOptions {
    let mut o = opts.clone();
    if o.expectations.models.is_none() {
        o.expectations.models = Some(vec![PEER_DEFAULT_MODEL]);
    }
    let realtime = cm::realtime_anomaly_types();
    if o.expectations
        .reportable()
        .iter()
        .any(|t| realtime.contains(t))
    {
        eprintln!(
            "ellery: {}: this format records no real time; real-time anomalies found in it are artefacts of the conversion",
            path.display()
        );
    }
    o
}

fn note_ignored(h: &crate::model::History) {
    if h.non_client_ops > 0 && h.ops.is_empty() {
        eprintln!(
            "ellery: {}: all {} ops lack an integer :process and were ignored (as Elle does)",
            h.origin, h.non_client_ops
        );
    }
}

fn check_one(
    path: &Path,
    format: Option<Format>,
    workload: Workload,
    rw: &RwOptions,
    opts: &CheckOptions,
    directory: Option<(&Path, &PlotOptions)>,
    memory: crate::limits::MemoryLimit,
) -> Result<Outcome, String> {
    let started = std::time::Instant::now();
    if let Some(p) = opts.progress {
        p("reading");
    }
    inject_panic(path);
    if let Some(m) = models::jepsen_model(workload) {
        check_extras::warn_ignored(workload, opts, rw, directory.is_some());
        return models::check_jepsen(path, format, m, opts, memory);
    }
    let explicit = workload != Workload::Auto;
    let peer = peer_format(path, format);
    if peer.is_none() && path != Path::new("-") {
        crate::limits::check_fits(path, memory)?;
    }
    let h = read(path, format, peer).map_err(|e| e.to_string())?;
    let peer_opts;
    let opts = match peer {
        Some(_) => {
            peer_opts = peer_check_options(path, opts);
            &peer_opts
        }
        None => opts,
    };
    if opts.verbose {
        eprintln!(
            "ellery: {}: read {} client ops in {:.3} s",
            path.display(),
            h.ops.len(),
            started.elapsed().as_secs_f64()
        );
    }
    note_ignored(&h);
    let workload = match workload {
        // Peer formats are register reads and writes, even when read-only.
        Workload::Auto if peer.is_some() => Workload::RwRegister,
        Workload::Auto if check_extras::multi_register(&h) => {
            return Err(format!(
                "{}: this is a Knossos multi-register history ([:read k v] / [:write k v] micro-ops), which ellery has no model for",
                h.origin
            ))
        }
        Workload::Auto => check_extras::detect_workload(&h),
        w => w,
    };
    check_extras::warn_ignored(workload, opts, rw, directory.is_some());
    if let Some(m) = models::jepsen_model(workload) {
        return models::check_jepsen_read(&h, m, opts, memory);
    }
    if opts.verbose {
        eprintln!("ellery: {}: workload {workload:?}", path.display());
    }
    if workload == Workload::Mutex {
        return models::check_mutex(&h, opts);
    }
    let Some(model) = workload.model() else {
        unreachable!("detected above; the Jepsen models returned above")
    };
    let opts = CheckOptions {
        workload: Some(model),
        rw: *rw,
        ..opts.clone()
    };
    let mut outcome = crate::check(&h, &opts).map_err(|e| e.to_string())?;
    if let Some(p) = outcome.problem.as_mut() {
        match check_extras::workload_hint(workload, &h).filter(|_| explicit) {
            // The caller decides: bad input for `check`, Elle's verdict
            // (and this line) in elle-cli mode.
            Some(hint) => {
                p.message = format!("{}; {hint}", p.message);
                p.kind = crate::error::InputErrorKind::WrongWorkload;
            }
            None => eprintln!("ellery: {p}"),
        }
    }
    if let Some((d, plot)) = directory {
        let notes =
            write_files(d, &h, &outcome, plot).map_err(|e| format!("{}: {e}", d.display()))?;
        static SAID_NO_GRAPHVIZ: std::sync::atomic::AtomicBool =
            std::sync::atomic::AtomicBool::new(false);
        for n in notes {
            let graphviz = n == crate::report::files::NO_GRAPHVIZ;
            if !graphviz || !SAID_NO_GRAPHVIZ.swap(true, std::sync::atomic::Ordering::Relaxed) {
                eprintln!("ellery: {n}");
            }
        }
    }
    Ok(outcome)
}

/// Why a history has no outcome: bad input, or an internal error (a panic
/// while checking it), each with the line to print.
enum Failed {
    Input(String),
    Internal(String),
}

/// [`check_one`], a panic in it becoming this history's internal error.
fn check_caught(
    path: &Path,
    format: Option<Format>,
    workload: Workload,
    rw: &RwOptions,
    opts: &CheckOptions,
    directory: Option<(&Path, &PlotOptions)>,
    memory: crate::limits::MemoryLimit,
) -> Result<Outcome, Failed> {
    match crate::internal::catch(|| check_one(path, format, workload, rw, opts, directory, memory))
    {
        Ok(r) => r.map_err(Failed::Input),
        Err(panic) => Err(Failed::Internal(crate::internal::message(
            &path.display().to_string(),
            &panic,
        ))),
    }
}

/// A test hook: panics while checking any history whose path contains the
/// value of `ELLERY_INJECT_PANIC`, so tests can show that an internal error
/// in one history is reported for it alone.
fn inject_panic(path: &Path) {
    if let Some(needle) = std::env::var_os("ELLERY_INJECT_PANIC") {
        let needle = needle.to_string_lossy();
        if !needle.is_empty() && path.to_string_lossy().contains(&*needle) {
            panic!("injected panic (ELLERY_INJECT_PANIC={needle})");
        }
    }
}

// Long (about 140 lines): options, the batch and the summary of `check`;
// left whole while the CLI is edited on other branches (issue 16).
fn run_check(a: CheckArgs) -> i32 {
    if let Err(msg) = check_extras::refuse_usage(&a) {
        eprintln!("ellery: {msg}");
        return EXIT_BAD_INPUT;
    }
    let exp = match expectations(&a.models.consistency_models, &a.models.anomalies) {
        Ok(e) => e,
        Err(msg) => {
            eprintln!("ellery: {msg}");
            return EXIT_BAD_INPUT;
        }
    };
    let plot = PlotOptions {
        format: a.plot_format,
        timeout: Duration::from_millis(a.plot_timeout),
        max_bytes: a.max_plot_bytes,
    };
    let opts = CheckOptions {
        expectations: exp,
        cycle_search_timeout: Duration::from_millis(a.models.cycle_search_timeout),
        verbose: a.verbose,
        trace: a.verbose.then_some(print_trace),
        plot_max_bytes: a.directory.as_ref().map(|_| a.max_plot_bytes),
        linearizable_timeout: (a.linearizable_timeout > 0)
            .then(|| Duration::from_millis(a.linearizable_timeout)),
        sat_timeout: (a.sat_timeout > 0).then(|| Duration::from_millis(a.sat_timeout)),
        algorithm: a.algorithm,
        jepsen: a.jepsen.options(),
        ..CheckOptions::default()
    };
    let files = match crate::batch::discover_histories(&a.files) {
        Ok((f, skipped)) => {
            if let Some(first) = skipped.first() {
                eprintln!(
                    "ellery: note: skipped {} file{} holding result maps, not histories (e.g. {})",
                    skipped.len(),
                    if skipped.len() == 1 { "" } else { "s" },
                    first.display()
                );
            }
            f
        }
        Err(e) => {
            eprintln!("ellery: {e}");
            return EXIT_BAD_INPUT;
        }
    };
    if files.is_empty() {
        eprintln!("ellery: no histories found in the given directories");
        return EXIT_BAD_INPUT;
    }
    let many = files.len() > 1;
    let subdirs = crate::report::names::make_unique(
        files
            .iter()
            .map(|f| check_extras::output_subdir(f))
            .collect(),
    );
    let mut opts = opts;
    if !many && !a.quiet && std::io::stderr().is_terminal() {
        opts.progress = Some(show_phase);
    }
    let jobs = a.jobs.unwrap_or_else(|| {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    });
    let progress = crate::batch::Progress::new(files.len(), a.quiet);
    let started = std::time::Instant::now();
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let rw_options = a.rw.options();
    let mut counts = [0usize; 5]; // valid, invalid, unknown, unreadable, internal
    let mut json_results: Vec<(PathBuf, String)> = Vec::new();
    let items: Vec<(&PathBuf, &String)> = files.iter().zip(&subdirs).collect();
    // Rows of the batch's index.html (with several histories and -d).
    let mut rows: Vec<crate::report::html::Entry> = Vec::new();
    crate::batch::run_ordered(
        &items,
        jobs,
        |&(path, subdir)| {
            let dir = a
                .directory
                .as_ref()
                .map(|d| if many { d.join(subdir) } else { d.clone() });
            // A panic is this history's internal error; the rest go on.
            let r = check_caught(
                path,
                a.format,
                a.workload,
                &rw_options,
                &opts,
                dir.as_deref().map(|d| (d, &plot)),
                a.memory.limit(),
            );
            progress.tick(path);
            r
        },
        |i, r| {
            let path = &files[i];
            match r {
                Err(Failed::Internal(msg)) => {
                    eprintln!("ellery: {msg}");
                    rows.push(crate::report::html::Entry::failed(path, &msg));
                    counts[4] += 1;
                }
                Err(Failed::Input(msg)) => {
                    eprintln!("ellery: {msg}");
                    rows.push(crate::report::html::Entry::failed(path, &msg));
                    counts[3] += 1;
                }
                Ok(o) if check_extras::wrong_workload(&o) => {
                    if let Some(p) = &o.problem {
                        eprintln!("ellery: {p}");
                        rows.push(crate::report::html::Entry::failed(path, &p.to_string()));
                    }
                    counts[3] += 1;
                }
                Ok(o) => {
                    rows.push(crate::report::html::Entry::checked(path, &subdirs[i], &o));
                    counts[match o.validity {
                        Validity::Valid => 0,
                        Validity::Invalid => 1,
                        Validity::Unknown => 2,
                    }] += 1;
                    let line = match a.output {
                        OutputFormat::Edn if many => {
                            format!(";; {}\n{}", path.display(), pr_str(&o.result))
                        }
                        OutputFormat::Edn => pr_str(&o.result),
                        OutputFormat::Json if many => {
                            // One object keyed by path, printed at the end.
                            json_results.push((path.clone(), pprint_json(&o.result)));
                            return;
                        }
                        OutputFormat::Json => pprint_json(&o.result).trim_end().to_string(),
                        OutputFormat::Jsonl if many => check_extras::jsonl_record(path, &o.result),
                        OutputFormat::Jsonl => crate::edn::value_to_json(&o.result).to_string(),
                        OutputFormat::Summary => check_extras::summary_line(path, &o),
                    };
                    let _ = writeln!(out, "{line}");
                }
            }
        },
    );
    progress.finish();
    if let (true, Some(d)) = (many, &a.directory) {
        if let Err(e) = crate::report::html::write_batch_index(d, &rows) {
            eprintln!("ellery: {}: {e}", d.display());
        }
    }
    if a.output == OutputFormat::Json && many {
        let _ = writeln!(out, "{}", check_extras::json_by_path(&json_results));
    }
    if opts.progress.is_some() {
        eprint!("\r\x1b[2K");
    }
    if many && !a.quiet {
        eprintln!(
            "ellery: {} histories in {:.2} s: {} valid, {} invalid, {} unknown, {} unreadable{}",
            files.len(),
            started.elapsed().as_secs_f64(),
            counts[0],
            counts[1],
            counts[2],
            counts[3],
            match counts[4] {
                0 => String::new(),
                1 => ", 1 internal error".to_string(),
                n => format!(", {n} internal errors"),
            }
        );
    }
    if counts[4] > 0 {
        EXIT_INTERNAL
    } else if counts[3] > 0 {
        EXIT_BAD_INPUT
    } else if counts[1] > 0 {
        EXIT_INVALID
    } else if counts[2] > 0 {
        EXIT_UNKNOWN
    } else {
        EXIT_VALID
    }
}

/// Prints a `--verbose` line from the library ([`CheckOptions::trace`]).
fn print_trace(line: &str) {
    eprintln!("ellery: {line}");
}

/// Shows the phase a single large check is in, on one terminal line.
fn show_phase(phase: &str) {
    eprint!("\r\x1b[2Kellery: {phase}…");
}
