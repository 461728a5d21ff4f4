//! elle-cli's dialect: `ellery -m MODEL [elle-cli options] FILES…`, with
//! elle-cli's flags, output lines and exit codes (see [`super`]).

use super::models::{elle_cli_workload, JepsenFlags, ELLE_CLI_MODELS};
use super::{check_caught, expectations, Failed, Job, MemoryFlag, RwFlags};
use crate::check::result::Expectations;
use crate::model::Format;
use crate::report::json_pprint::pprint_json;
use crate::report::plot::{PlotFormat, PlotOptions};
use crate::route::{CheckOptions, Validity};
use clap::Parser;
use std::path::PathBuf;
use std::time::Duration;

/// The exit codes of elle-cli mode (elle-cli's own).
const ELLE_CLI_EXIT_CODES: &str = "Exit codes (elle-cli's): 0 no history invalid (each valid or \
unknown); 1 some history invalid; 255 bad input, a usage error or an internal error.";

/// elle-cli's exit code for bad input, usage errors and internal errors.
const EXIT_ELLE_CLI_ERROR: i32 = 255;

/// elle-cli's command line.
#[derive(Parser, Debug)]
#[command(
    name = "ellery",
    about = "elle-cli compatible mode: ellery -m MODEL [options] FILES…",
    version,
    after_help = ELLE_CLI_EXIT_CODES
)]
struct ElleCli {
    /// Model: list-append, rw-register (Elle); cas-register, mutex
    /// (Knossos; `-c` is ignored, linearizable being the only model that
    /// applies); bank, counter, set, set-full, long-fork (Jepsen).
    #[arg(short = 'm', long = "model")]
    model: Option<String>,
    /// Input format: edn, json, dbcop, cobra or text (default: detected).
    #[arg(short = 'f', long = "format")]
    format: Option<String>,
    /// Print the whole analysis as JSON (newer elle-cli also takes `-v
    /// json` / `-v text`, read as `--output`).
    #[arg(short = 'v', long)]
    verbose: bool,
    /// Output: text or json (newer elle-cli).
    #[arg(long)]
    output: Option<String>,
    /// Consistency models (comma-separated).
    #[arg(
        short = 'c',
        long = "consistency-models",
        default_value = "strict-serializable"
    )]
    consistency_models: String,
    /// Anomalies (comma-separated).
    #[arg(short = 'a', long, default_value = "G0")]
    anomalies: String,
    /// Cycle search timeout in ms.
    #[arg(short = 's', long = "cycle-search-timeout", default_value_t = 1000)]
    cycle_search_timeout: u64,
    /// Output directory.
    #[arg(short = 'd', long)]
    directory: Option<PathBuf>,
    /// Plot format (svg or png).
    #[arg(short = 'p', long = "plot-format", default_value = "svg")]
    plot_format: String,
    /// Plot timeout in ms.
    #[arg(short = 't', long = "plot-timeout", default_value_t = 5000)]
    plot_timeout: u64,
    /// Largest plot, in bytes of DOT.
    #[arg(short = 'b', long = "max-plot-bytes", default_value_t = 65536)]
    max_plot_bytes: u64,
    /// Checking algorithm, as for `ellery check --algorithm` (an ellery
    /// extension; elle-cli has no such flag).
    #[arg(long, value_enum, default_value = "auto")]
    algorithm: crate::route::Algorithm,
    /// Time allowed for the SAT checker, in ms (0: no limit), as for
    /// `ellery check --sat-timeout` (an ellery extension).
    #[arg(long = "sat-timeout", default_value_t = 60000)]
    sat_timeout: u64,
    #[command(flatten)]
    rw: RwFlags,
    #[command(flatten)]
    jepsen: JepsenFlags,
    #[command(flatten)]
    memory: MemoryFlag,
    /// History files.
    files: Vec<PathBuf>,
}

fn verdict_word(v: Validity) -> &'static str {
    match v {
        Validity::Valid => "true",
        Validity::Invalid => "false",
        Validity::Unknown => "unknown",
    }
}

/// Newer elle-cli spells `--output FORMAT` as `-v FORMAT`; older ones
/// have a bare `-v`. A `-v` (or `--verbose`) followed by `json` or `text`
/// is the newer form (a file named `json` can still be given as `./json`).
fn normalise_args(args: &[String]) -> Vec<String> {
    let mut out = Vec::with_capacity(args.len());
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        let next = args.get(i + 1).map(String::as_str);
        if i > 0 && (a == "-v" || a == "--verbose") && matches!(next, Some("json" | "text")) {
            out.push(format!("--output={}", next.unwrap_or_default()));
            i += 2;
            continue;
        }
        out.push(a.clone());
        i += 1;
    }
    out
}

pub(super) fn run_elle_cli(args: &[String]) -> i32 {
    let cli = match ElleCli::try_parse_from(normalise_args(args)) {
        Ok(c) => c,
        Err(e) => {
            // Help and version exit 0; option errors are usage errors.
            let code = if e.use_stderr() {
                EXIT_ELLE_CLI_ERROR
            } else {
                0
            };
            let _ = e.print();
            return code;
        }
    };
    let Some(model) = cli.model.as_deref() else {
        eprintln!("ellery: elle-cli mode needs -m MODEL (one of {ELLE_CLI_MODELS}); see ellery -m list-append --help");
        return EXIT_ELLE_CLI_ERROR;
    };
    let workload = match elle_cli_workload(model) {
        Ok(w) => w,
        Err(msg) => {
            eprintln!("ellery: {msg}");
            return EXIT_ELLE_CLI_ERROR;
        }
    };
    if cli.files.is_empty() {
        eprintln!("ellery: no history files given");
        return EXIT_ELLE_CLI_ERROR;
    }
    for flag in cli.jepsen.ignored_by(workload) {
        eprintln!("ellery: warning: {flag} does nothing for the {model} model");
    }
    let split = |s: &str| -> Vec<String> {
        s.split(',')
            .map(|x| x.trim().to_string())
            .filter(|x| !x.is_empty())
            .collect()
    };
    let exp = match expectations(&split(&cli.consistency_models), &split(&cli.anomalies)) {
        Ok(e) => e,
        Err(msg) => {
            eprintln!("ellery: {msg}");
            return EXIT_ELLE_CLI_ERROR;
        }
    };
    let format = match parse_format(cli.format.as_deref()) {
        Ok(f) => f,
        Err(msg) => {
            eprintln!("ellery: {msg}");
            return EXIT_ELLE_CLI_ERROR;
        }
    };
    let json = match cli.output.as_deref() {
        None => cli.verbose,
        Some("json") => true,
        Some("text") => false,
        Some(other) => {
            eprintln!("ellery: unknown output {other} (expected text or json)");
            return EXIT_ELLE_CLI_ERROR;
        }
    };
    let (plot, opts) = plot_and_check_options(&cli, exp);
    let mut any_invalid = false;
    for path in &cli.files {
        // elle-cli has one error code: an internal error is reported as
        // such, and exits like bad input.
        match check_caught(Job {
            path,
            format,
            workload,
            rw: &cli.rw.options(),
            opts: &opts,
            directory: cli.directory.as_deref().map(|d| (d, &plot)),
            memory: cli.memory.limit(),
        }) {
            Err(Failed::Input(msg) | Failed::Internal(msg)) => {
                eprintln!("ellery: {msg}");
                return EXIT_ELLE_CLI_ERROR;
            }
            Ok(o) => {
                // Elle's :unknown verdict stands in elle-cli mode; say why.
                if let Some(p) = o
                    .problem
                    .as_ref()
                    .filter(|_| super::check_extras::wrong_workload(&o))
                {
                    eprintln!("ellery: {p}");
                }
                if o.validity == Validity::Invalid {
                    any_invalid = true;
                }
                if json {
                    print!("{}", pprint_json(&o.result));
                } else {
                    println!("{} \t {}", path.display(), verdict_word(o.validity));
                }
            }
        }
    }
    if any_invalid {
        1
    } else {
        0
    }
}

/// `-f`'s value (elle-cli takes it as a plain string).
fn parse_format(name: Option<&str>) -> Result<Option<Format>, String> {
    let Some(name) = name else {
        return Ok(None);
    };
    <Format as clap::ValueEnum>::value_variants()
        .iter()
        .find(|f| f.name() == name)
        .map(|f| Some(*f))
        .ok_or_else(|| format!("unknown format {name} (expected edn, json, dbcop, cobra or text)"))
}

/// The plot and check options elle-cli's flags ask for.
fn plot_and_check_options(cli: &ElleCli, exp: Expectations) -> (PlotOptions, CheckOptions) {
    let plot = PlotOptions {
        format: match cli.plot_format.as_str() {
            "png" => PlotFormat::Png,
            "dot" => PlotFormat::Dot,
            _ => PlotFormat::Svg,
        },
        timeout: Duration::from_millis(cli.plot_timeout),
        max_bytes: cli.max_plot_bytes as usize,
    };
    let opts = CheckOptions {
        expectations: exp,
        cycle_search_timeout: Duration::from_millis(cli.cycle_search_timeout),
        plot_max_bytes: cli.directory.as_ref().map(|_| plot.max_bytes),
        algorithm: cli.algorithm,
        sat_timeout: (cli.sat_timeout > 0).then(|| Duration::from_millis(cli.sat_timeout)),
        // elle-cli's verdicts: the SAT checker only where elle-cli cannot
        // answer at all (repeated values).
        confirm_with_sat: false,
        jepsen: cli.jepsen.options(),
        // Only the Jepsen flags are warned about (by run_elle_cli): -c and -a
        // always hold elle-cli's defaults here.
        warn_unused_options: false,
        ..CheckOptions::default()
    };
    (plot, opts)
}
