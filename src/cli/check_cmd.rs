//! `ellery check`: read each history (any [`Format`]), check it with
//! [`crate::check()`] or one of Jepsen's models, print the results in input
//! order and exit with the worst verdict's code.

use super::{check_extras, expectations, models, CheckArgs, ModelArg, OutputFormat};
use crate::consistency as cm;
use crate::edn::pr_str;
use crate::error::{EXIT_BAD_INPUT, EXIT_INTERNAL, EXIT_INVALID, EXIT_UNKNOWN, EXIT_VALID};
use crate::infer::rw_register::RwOptions;
use crate::model::Format;
use crate::read::{detect_format, read_history_bytes};
use crate::report::files::write_files;
use crate::report::html::Entry;
use crate::report::json_pprint::pprint_json;
use crate::report::plot::PlotOptions;
use crate::route::{CheckOptions, Outcome, Validity};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The peer format to read `path` with: the one asked for, else the one
/// detected (none for standard input or an explicit EDN/JSON).
fn peer_format(path: &Path, format: Option<Format>) -> Option<Format> {
    match format {
        Some(f) => f.is_peer().then_some(f),
        None if path == Path::new("-") => None,
        None => crate::read::peers::detect(path),
    }
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
pub(super) const PEER_DEFAULT_MODEL: &str = "strong-session-serializable";

/// Check options for a peer-format history: [`PEER_DEFAULT_MODEL`] unless
/// models were given, and a note when real-time anomalies would be reported.
fn peer_check_options(path: &Path, opts: &CheckOptions) -> CheckOptions {
    let mut o = opts.clone();
    o.real_time_recorded = false;
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

fn check_one(job: Job) -> Result<Outcome, String> {
    let Job {
        path,
        format,
        workload,
        rw,
        opts,
        directory,
        memory,
    } = job;
    let started = std::time::Instant::now();
    if let Some(p) = opts.progress {
        p("reading");
    }
    inject_panic(path);
    if let Some(m) = models::jepsen_model(workload) {
        check_extras::warn_ignored(workload, opts, rw, directory.is_some());
        return models::check_jepsen(path, format, m, opts, memory);
    }
    let explicit = workload != ModelArg::Auto;
    // The exact checker measures its polygraph against the same limit.
    crate::limits::set_solver_limit(memory);
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
        ModelArg::Auto if peer.is_some() => ModelArg::RwRegister,
        ModelArg::Auto if check_extras::multi_register(&h) => {
            return Err(format!(
                "{}: this is a Knossos multi-register history ([:read k v] / [:write k v] micro-ops), which ellery has no model for",
                h.origin
            ))
        }
        ModelArg::Auto => check_extras::detect_workload(&h),
        w => w,
    };
    check_extras::warn_ignored(workload, opts, rw, directory.is_some());
    if let Some(m) = models::jepsen_model(workload) {
        return models::check_jepsen_read(&h, m, opts, memory);
    }
    if opts.verbose {
        eprintln!("ellery: {}: workload {workload:?}", path.display());
    }
    if workload == ModelArg::Mutex {
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
pub(super) enum Failed {
    Input(String),
    Internal(String),
}

/// One history to check and how ([`check_caught`]).
pub(super) struct Job<'a> {
    /// The history's file (`-` for standard input).
    pub path: &'a Path,
    /// `-f`, or `None` to detect it.
    pub format: Option<Format>,
    /// `-m`.
    pub workload: ModelArg,
    /// Elle's rw-register options.
    pub rw: &'a RwOptions,
    /// The check's options.
    pub opts: &'a CheckOptions,
    /// `-d` and how to plot into it.
    pub directory: Option<(&'a Path, &'a PlotOptions)>,
    /// `--max-memory`.
    pub memory: crate::limits::MemoryLimit,
}

/// [`check_one`], a panic in it becoming this history's internal error.
pub(super) fn check_caught(job: Job) -> Result<Outcome, Failed> {
    let path = job.path;
    match crate::internal::catch(|| check_one(job)) {
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

/// Runs `ellery check`: the options, the batch (checked in parallel,
/// printed in input order) and the summary line; returns the exit code.
pub(super) fn run_check(a: CheckArgs) -> i32 {
    let (mut opts, plot) = match check_options(&a) {
        Ok(o) => o,
        Err(msg) => {
            eprintln!("ellery: {msg}");
            return EXIT_BAD_INPUT;
        }
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
    if !many && !a.quiet && std::io::stderr().is_terminal() {
        opts.progress = Some(show_phase);
    }
    let jobs = a.jobs.unwrap_or_else(|| {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    });
    let progress = super::progress::Progress::new(files.len(), a.quiet);
    let started = std::time::Instant::now();
    let rw_options = a.rw.options();
    let mut tally = Tally::new(&a, &files, &subdirs);
    let items: Vec<(&PathBuf, &String)> = files.iter().zip(&subdirs).collect();
    crate::batch::run_ordered(
        &items,
        jobs,
        |&(path, subdir)| {
            let dir = a
                .directory
                .as_ref()
                .map(|d| if many { d.join(subdir) } else { d.clone() });
            // A panic is this history's internal error; the rest go on.
            let r = check_caught(Job {
                path,
                format: a.format,
                workload: a.workload,
                rw: &rw_options,
                opts: &opts,
                directory: dir.as_deref().map(|d| (d, &plot)),
                memory: a.memory.limit(),
            });
            progress.tick(path);
            r
        },
        |i, r| tally.record(i, r),
    );
    progress.finish();
    tally.finish(opts.progress.is_some(), started)
}

/// The check options and plot options `check`'s flags ask for.
fn check_options(a: &CheckArgs) -> Result<(CheckOptions, PlotOptions), String> {
    check_extras::refuse_usage(a)?;
    let exp = expectations(&a.models.consistency_models, &a.models.anomalies)?;
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
    Ok((opts, plot))
}

/// What `check` has printed and counted so far, history by history in
/// input order.
struct Tally<'a> {
    args: &'a CheckArgs,
    files: &'a [PathBuf],
    subdirs: &'a [String],
    many: bool,
    out: std::io::StdoutLock<'static>,
    /// Valid, invalid, unknown, unreadable, internal errors.
    counts: [usize; 5],
    /// With `--output json` and several histories: printed at the end as
    /// one object keyed by path.
    json_results: Vec<(PathBuf, String)>,
    /// Rows of the batch's index.html (with several histories and -d).
    rows: Vec<Entry>,
}

impl<'a> Tally<'a> {
    fn new(args: &'a CheckArgs, files: &'a [PathBuf], subdirs: &'a [String]) -> Tally<'a> {
        Tally {
            args,
            files,
            subdirs,
            many: files.len() > 1,
            out: std::io::stdout().lock(),
            counts: [0; 5],
            json_results: Vec::new(),
            rows: Vec::new(),
        }
    }

    /// Reports the `i`-th history's result.
    fn record(&mut self, i: usize, r: Result<Outcome, Failed>) {
        let path = &self.files[i];
        let o = match r {
            Err(Failed::Internal(msg)) => {
                eprintln!("ellery: {msg}");
                self.rows.push(Entry::failed(path, &msg));
                self.counts[4] += 1;
                return;
            }
            Err(Failed::Input(msg)) => {
                eprintln!("ellery: {msg}");
                self.rows.push(Entry::failed(path, &msg));
                self.counts[3] += 1;
                return;
            }
            Ok(o) if check_extras::wrong_workload(&o) => {
                if let Some(p) = &o.problem {
                    eprintln!("ellery: {p}");
                    self.rows.push(Entry::failed(path, &p.to_string()));
                }
                self.counts[3] += 1;
                return;
            }
            Ok(o) => o,
        };
        self.rows.push(Entry::checked(path, &self.subdirs[i], &o));
        self.counts[match o.validity {
            Validity::Valid => 0,
            Validity::Invalid => 1,
            Validity::Unknown => 2,
        }] += 1;
        let many = self.many;
        let line = match self.args.output {
            OutputFormat::Edn if many => {
                format!(";; {}\n{}", path.display(), pr_str(&o.result))
            }
            OutputFormat::Edn => pr_str(&o.result),
            OutputFormat::Json if many => {
                // One object keyed by path, printed at the end.
                self.json_results
                    .push((path.clone(), pprint_json(&o.result)));
                return;
            }
            OutputFormat::Json => pprint_json(&o.result).trim_end().to_string(),
            OutputFormat::Jsonl if many => check_extras::jsonl_record(path, &o.result),
            OutputFormat::Jsonl => crate::edn::value_to_json(&o.result).to_string(),
            OutputFormat::Summary => check_extras::summary_line(path, &o),
        };
        let _ = writeln!(self.out, "{line}");
    }

    /// Writes what is written once the batch is done (the batch index, the
    /// JSON object, the summary line) and returns the exit code.
    fn finish(mut self, progress_shown: bool, started: std::time::Instant) -> i32 {
        let (a, many, counts) = (self.args, self.many, self.counts);
        if let (true, Some(d)) = (many, &a.directory) {
            if let Err(e) = crate::report::html::write_batch_index(d, &self.rows) {
                eprintln!("ellery: {}: {e}", d.display());
            }
        }
        if a.output == OutputFormat::Json && many {
            let _ = writeln!(
                self.out,
                "{}",
                check_extras::json_by_path(&self.json_results)
            );
        }
        if progress_shown {
            eprint!("\r\x1b[2K");
        }
        if many && !a.quiet {
            eprintln!(
                "ellery: {} histories in {:.2} s: {} valid, {} invalid, {} unknown, {} unreadable{}",
                self.files.len(),
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
}

/// Prints a `--verbose` line from the library ([`CheckOptions::trace`]).
fn print_trace(line: &str) {
    eprintln!("ellery: {line}");
}

/// Shows the phase a single large check is in, on one terminal line.
fn show_phase(phase: &str) {
    eprint!("\r\x1b[2Kellery: {phase}…");
}
