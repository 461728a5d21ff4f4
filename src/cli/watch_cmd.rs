//! `ellery watch`: online checking in rounds (the library is
//! [`crate::watch`]). Each new anomaly is printed as soon as a round finds
//! it, as a one-entry anomalies map (`{:G0 [case]}`); at end of input the
//! final result map, which equals `ellery check`'s for the whole history
//! (see [`crate::watch`] for exactly when and how).

use super::{
    check_caught, expectations, Failed, Job, MemoryFlag, ModelArg, ModelArgs, RwFlags,
    PEER_DEFAULT_MODEL,
};
use crate::edn::{pr_str, Value};
use crate::error::{EXIT_BAD_INPUT, EXIT_INTERNAL, EXIT_INVALID, EXIT_UNKNOWN, EXIT_VALID};
use crate::model::Format;
use crate::report::plot::{PlotFormat, PlotOptions};
use crate::route::{CheckOptions, Outcome, Validity};
use crate::watch::source::{self, Event, Input, SourceOptions};
use crate::watch::{Final, WatchOptions, Watcher};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Output formats of `watch`.
#[derive(Clone, Copy, Debug, clap::ValueEnum, PartialEq, Eq)]
pub(super) enum WatchOutput {
    /// EDN, one map per line.
    Edn,
    /// JSON, one object per line.
    Jsonl,
}

#[derive(clap::Args, Debug)]
pub(super) struct WatchArgs {
    /// Workload (default: detected from the first append or write).
    #[arg(short = 'm', long = "model", value_enum, default_value = "auto")]
    workload: ModelArg,
    #[command(flatten)]
    models: ModelArgs,
    /// Write the final check's explanation files and plots here (when the
    /// history is re-checked at the end, i.e. when an anomaly was found).
    #[arg(short = 'd', long)]
    directory: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value = "edn")]
    output: WatchOutput,
    /// Input format: edn (one op map per line), json (one object per
    /// line), cobra (a directory of Cobra logs, read once).
    #[arg(short = 'f', long, value_enum)]
    format: Option<Format>,
    /// Run a round after at least N new ops (lines). Each round re-checks
    /// what is retained, so rounds of 50,000 ops cost 20-35% less CPU than
    /// rounds of 20,000 (README, watch) for a little more memory.
    #[arg(long = "round", value_name = "N", default_value_t = 50000)]
    round: u64,
    /// Also run a round every T ms when new ops arrived.
    #[arg(long = "round-ms", value_name = "T")]
    round_ms: Option<u64>,
    /// Keep reading at end of file, as `tail -f` does.
    #[arg(long)]
    follow: bool,
    /// With --follow: end after MS without new data (default: never).
    #[arg(long = "follow-idle-ms", value_name = "MS")]
    follow_idle_ms: Option<u64>,
    /// End at the first anomaly (the map printed is that of the anomalies
    /// found, not a check of the whole history).
    #[arg(long)]
    stop_on_first: bool,
    /// Never forget transactions (memory grows with the history).
    #[arg(long)]
    no_gc: bool,
    /// The fence key of rw-register histories (fence transactions
    /// `[[:r K v] [:w K v']]`, the shared fence convention).
    #[arg(long = "fence-key", value_name = "K", default_value_t = -1, allow_hyphen_values = true)]
    fence_key: i64,
    /// Do not copy standard input to a temporary file; then, when an
    /// anomaly is found, the final map lists the anomalies the rounds found
    /// instead of re-checking the whole history.
    #[arg(long)]
    no_spool: bool,
    /// Checking algorithm of each round.
    #[arg(long, value_enum, default_value = "auto")]
    algorithm: crate::route::Algorithm,
    /// Time allowed for the SAT checker, in ms (0: no limit).
    #[arg(long = "sat-timeout", default_value_t = 60000)]
    sat_timeout: u64,
    #[command(flatten)]
    rw: RwFlags,
    /// No progress line.
    #[arg(short = 'q', long)]
    quiet: bool,
    /// Round timings on standard error.
    #[arg(long)]
    verbose: bool,
    #[command(flatten)]
    memory: MemoryFlag,
    /// The history: a file, `-` for standard input, or a Cobra log
    /// directory.
    file: PathBuf,
}

/// Runs `ellery watch`.
pub(super) fn run_watch(a: WatchArgs) -> i32 {
    match run(&a) {
        Ok(code) => code,
        Err(msg) => {
            eprintln!("ellery: {msg}");
            EXIT_BAD_INPUT
        }
    }
}

fn run(a: &WatchArgs) -> Result<i32, String> {
    let exp = expectations(&a.models.consistency_models, &a.models.anomalies)?;
    let check = CheckOptions {
        expectations: exp,
        cycle_search_timeout: Duration::from_millis(a.models.cycle_search_timeout),
        sat_timeout: (a.sat_timeout > 0).then(|| Duration::from_millis(a.sat_timeout)),
        algorithm: a.algorithm,
        ..CheckOptions::default()
    };
    let stdin = a.file == Path::new("-");
    let cobra = a.format == Some(Format::Cobra);
    let (input, format, mut check) = if cobra {
        if a.follow || stdin {
            return Err(
                "the cobra format is read once from a directory (no --follow, no standard input)"
                    .into(),
            );
        }
        let text = cobra_as_edn(&a.file)?;
        // The conversion invents real time (see `peer_check_options`).
        let check = CheckOptions {
            real_time_recorded: false,
            ..check
        };
        (Input::Bytes(text), Format::Edn, check)
    } else {
        let f = match a.format {
            Some(Format::Json) => Format::Json,
            Some(Format::Edn) => Format::Edn,
            None if !stdin => crate::read::detect_format(&a.file),
            None => Format::Edn,
            Some(other) => {
                return Err(format!(
                    "ellery watch reads edn, json or cobra, not {other:?}"
                ))
            }
        };
        let input = if stdin {
            Input::Stdin
        } else {
            Input::File(a.file.clone())
        };
        (input, f, check)
    };
    if cobra && check.expectations.models.is_none() {
        check.expectations.models = Some(vec![PEER_DEFAULT_MODEL]);
    }
    let workload = match a.workload {
        ModelArg::Auto if cobra => Some(crate::model::Workload::RwRegister),
        ModelArg::Auto => None,
        ModelArg::ListAppend => Some(crate::model::Workload::ListAppend),
        ModelArg::RwRegister => Some(crate::model::Workload::RwRegister),
        other => {
            return Err(format!(
                "ellery watch checks list-append and rw-register histories, not {}",
                clap::ValueEnum::to_possible_value(&other)
                    .map_or_else(|| format!("{other:?}"), |v| v.get_name().to_string())
            ))
        }
    };
    // Standard input is copied to a file so that the whole history can be
    // re-checked at the end (module docs of crate::watch).
    let spool_path = (stdin && !a.stop_on_first && !a.no_spool).then(|| {
        std::env::temp_dir().join(format!(
            "ellery-watch-{}.{}",
            std::process::id(),
            format.name()
        ))
    });
    let spool = match &spool_path {
        Some(p) => Some(std::fs::File::create(p).map_err(|e| format!("{}: {e}", p.display()))?),
        None => None,
    };
    let rx = source::spawn(
        input,
        SourceOptions {
            follow: a.follow,
            idle_exit: a.follow_idle_ms.map(Duration::from_millis),
            spool,
        },
    )
    .map_err(|e| format!("{}: {e}", a.file.display()))?;
    let origin = a.file.display().to_string();
    // Only rounds by op count, not on a timer, are cut and read ahead.
    let rx = match a.round_ms {
        None => source::parse_ahead(rx, a.round, origin.clone(), format),
        Some(_) => rx,
    };
    let mut w = Watcher::new(WatchOptions {
        check: check.clone(),
        rw: a.rw.options(),
        workload,
        format,
        origin: origin.clone(),
        collect: !a.no_gc,
        // 20,000 ops without a mention: the key is most likely retired
        // (Jepsen's active keys are mentioned every few dozen ops).
        loose_idle_ops: 20_000,
        // A key no op mentioned for a round is retired enough for a loose
        // fence base (a smaller round re-checks more often anyway).
        fence_idle_ops: 20_000.min(a.round.max(1)),
        fence_key: Value::Int(a.fence_key),
    });
    let code = match watch_loop(a, &mut w, &rx) {
        Err(msg) => Err(msg),
        Ok(Ended::Stopped(code)) => Ok(code),
        Ok(Ended::Input(last)) => {
            let recheck_path = match &spool_path {
                Some(p) => Some(p.clone()),
                None if stdin => None,
                None => Some(a.file.clone()),
            };
            Ok(finish(a, &w, last, recheck_path.as_deref(), &check))
        }
    };
    if let Some(p) = spool_path {
        let _ = std::fs::remove_file(p);
    }
    code
}

/// A Cobra log directory's ops as EDN lines.
fn cobra_as_edn(dir: &Path) -> Result<Vec<u8>, String> {
    let h = crate::read::peers::read_peer(dir, Format::Cobra).map_err(|e| e.to_string())?;
    let mut text = Vec::new();
    for op in &h.ops {
        text.extend_from_slice(pr_str(&h.op_map(op)).as_bytes());
        text.push(b'\n');
    }
    Ok(text)
}

/// How the reading loop ended.
enum Ended {
    /// `--stop-on-first`: the final map is printed; the exit code.
    Stopped(i32),
    /// End of input; the last round's outcome.
    Input(Option<Outcome>),
}

/// Reads and checks until end of input, or the first anomaly with
/// `--stop-on-first`.
fn watch_loop(
    a: &WatchArgs,
    w: &mut Watcher,
    rx: &std::sync::mpsc::Receiver<Event>,
) -> Result<Ended, String> {
    let show = !a.quiet && std::io::stderr().is_terminal();
    let started = Instant::now();
    let mut last_round = Instant::now();
    let tick = Duration::from_millis(a.round_ms.unwrap_or(200).max(1));
    let stdout = std::io::stdout();
    let mut pieces = std::collections::VecDeque::new();
    let mut last: Option<Outcome> = None;
    loop {
        let ended = match pieces
            .pop_front()
            .map(Ok)
            .unwrap_or_else(|| rx.recv_timeout(tick))
        {
            Ok(Event::Data(mut d)) => {
                // At most a round's worth of lines at a time, so rounds
                // are as long as asked whatever the read size.
                let room = a.round.max(1).saturating_sub(w.new_ops()) as usize;
                if let Some(cut) = memchr::memchr_iter(b'\n', &d).nth(room.max(1) - 1) {
                    if cut + 1 < d.len() {
                        pieces.push_front(Event::Data(d.split_off(cut + 1)));
                    }
                }
                w.ingest(d).map_err(|e| e.to_string())?;
                false
            }
            Ok(Event::Piece(p)) => {
                w.ingest_piece(*p).map_err(|e| e.to_string())?;
                false
            }
            Ok(Event::End) | Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => true,
            Ok(Event::Error(e)) => return Err(format!("{}: {e}", a.file.display())),
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => false,
        };
        let due = w.new_ops() >= a.round.max(1)
            || (w.new_ops() > 0
                && a.round_ms
                    .is_some_and(|t| last_round.elapsed() >= Duration::from_millis(t)));
        if !(due || ended) {
            continue;
        }
        if ended {
            // Held reads of writes that never completed are checked too.
            w.end_of_input().map_err(|e| e.to_string())?;
        }
        if ended && w.new_ops() == 0 && last.is_some() {
            if show {
                eprint!("\r\x1b[2K");
            }
            return Ok(Ended::Input(last));
        }
        last_round = Instant::now();
        let t0 = Instant::now();
        let round = w.round().map_err(|e| e.to_string())?;
        for note in std::mem::take(&mut w.notes) {
            eprintln!("ellery: {note}");
        }
        let mut out = stdout.lock();
        if show {
            eprint!("\r\x1b[2K");
        }
        for (t, case) in &round.new {
            let m = Value::Map(vec![(Value::kw(t), Value::Vector(vec![case.clone()]))]);
            let _ = writeln!(out, "{}", line(a.output, &m));
        }
        let _ = out.flush();
        let s = w.stats();
        if a.verbose {
            eprintln!(
                "ellery: round {}: {} txns read, {} retained, {} forgotten, {:.3} s",
                s.rounds,
                s.txns,
                w.retained(),
                s.forgotten,
                t0.elapsed().as_secs_f64()
            );
        }
        if show {
            let rate = s.txns as f64 / started.elapsed().as_secs_f64().max(1e-9);
            eprint!(
                "\rellery watch: {} txns checked, {} retained, {:.0} txn/s, round {}",
                s.txns,
                w.retained(),
                rate,
                s.rounds
            );
        }
        last = round.outcome;
        if a.stop_on_first && !round.new.is_empty() {
            if show {
                eprint!("\r\x1b[2K");
            }
            let o = w.found_map();
            let _ = writeln!(out, "{}", line(a.output, &o.result));
            return Ok(Ended::Stopped(exit_code(o.validity)));
        }
        if ended {
            if show {
                eprint!("\r\x1b[2K");
            }
            return Ok(Ended::Input(last));
        }
    }
}

/// Prints the final result map and returns the exit code.
fn finish(
    a: &WatchArgs,
    w: &Watcher,
    last: Option<Outcome>,
    whole: Option<&Path>,
    check: &CheckOptions,
) -> i32 {
    let out = |v: &Value| println!("{}", line(a.output, v));
    match w.finish(last) {
        Final::Outcome(o) => {
            out(&o.result);
            exit_code(o.validity)
        }
        Final::Valid => {
            out(&Value::kw_map(vec![("valid?", Value::Bool(true))]));
            EXIT_VALID
        }
        Final::Recheck(fallback) => {
            let Some(whole) = whole else {
                eprintln!("ellery: standard input was not kept (--no-spool); the map below lists the anomalies the rounds found");
                out(&fallback.result);
                return exit_code(fallback.validity);
            };
            let plot = PlotOptions {
                format: PlotFormat::Svg,
                timeout: Duration::from_millis(5000),
                max_bytes: 65536,
            };
            let mut opts = check.clone();
            opts.plot_max_bytes = a.directory.as_ref().map(|_| plot.max_bytes);
            let format = match a.format {
                Some(Format::Cobra) => Some(Format::Cobra),
                _ if whole.extension().is_some_and(|e| e == "json") => Some(Format::Json),
                f => f,
            };
            let wl = match a.workload {
                ModelArg::Auto if format == Some(Format::Cobra) => ModelArg::RwRegister,
                wl => wl,
            };
            let dir = a.directory.as_deref().map(|d| (d, &plot));
            match check_caught(Job {
                path: whole,
                format,
                workload: wl,
                rw: &a.rw.options(),
                opts: &opts,
                directory: dir,
                memory: a.memory.limit(),
            }) {
                Ok(o) => {
                    out(&o.result);
                    exit_code(o.validity)
                }
                Err(Failed::Internal(msg)) => {
                    eprintln!("ellery: {msg}");
                    EXIT_INTERNAL
                }
                Err(Failed::Input(msg)) => {
                    eprintln!("ellery: could not re-check the whole history ({msg}); the map below lists the anomalies the rounds found");
                    out(&fallback.result);
                    exit_code(fallback.validity)
                }
            }
        }
    }
}

fn line(format: WatchOutput, v: &Value) -> String {
    match format {
        WatchOutput::Edn => pr_str(v),
        WatchOutput::Jsonl => crate::edn::value_to_json(v).to_string(),
    }
}

fn exit_code(v: Validity) -> i32 {
    match v {
        Validity::Valid => EXIT_VALID,
        Validity::Invalid => EXIT_INVALID,
        Validity::Unknown => EXIT_UNKNOWN,
    }
}
