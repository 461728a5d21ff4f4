//! elle-cli's dialect: `ellery -m MODEL [elle-cli options] FILES…`, with
//! elle-cli's flags, output lines and exit codes (see [`super`]).

use super::{
    check_caught, expectations, Failed, InputFormat, MemoryFlag, RwFlags, Workload, EXIT_CODES,
};
use crate::report::json_pprint::pprint_json;
use crate::report::plot::{PlotFormat, PlotOptions};
use crate::route::{CheckOptions, Validity};
use clap::Parser;
use std::path::PathBuf;
use std::time::Duration;

/// elle-cli's command line.
#[derive(Parser, Debug)]
#[command(name = "ellery", about = "elle-cli compatible mode", after_help = EXIT_CODES)]
struct ElleCli {
    /// Model (workload): list-append, rw-register or cas-register (for
    /// cas-register `-c` is ignored: linearizable is the only model that
    /// applies).
    #[arg(short = 'm', long = "model")]
    model: String,
    /// Input format: edn, json, dbcop, cobra or text (default: detected).
    #[arg(short = 'f', long = "format")]
    format: Option<String>,
    /// Print the whole analysis as JSON.
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

pub(super) fn run_elle_cli(args: &[String]) -> i32 {
    let cli = match ElleCli::try_parse_from(args) {
        Ok(c) => c,
        Err(e) => {
            // elle-cli exits 1 on option errors and 0 after printing help.
            let code = if e.use_stderr() { 1 } else { 0 };
            let _ = e.print();
            return code;
        }
    };
    let workload = match cli.model.as_str() {
        "list-append" => Workload::ListAppend,
        "rw-register" => Workload::RwRegister,
        "cas-register" => Workload::CasRegister,
        other => {
            eprintln!(
                "ellery: model {other} is not supported yet (supported: list-append, rw-register, cas-register)"
            );
            return 255;
        }
    };
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
            return 255;
        }
    };
    let format = match cli.format.as_deref() {
        None => None,
        Some("edn") => Some(InputFormat::Edn),
        Some("json") => Some(InputFormat::Json),
        Some("dbcop") => Some(InputFormat::Dbcop),
        Some("cobra") => Some(InputFormat::Cobra),
        Some("text") => Some(InputFormat::Text),
        Some(other) => {
            eprintln!("ellery: unknown format {other} (expected edn, json, dbcop, cobra or text)");
            return 255;
        }
    };
    let json = cli.verbose || cli.output.as_deref() == Some("json");
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
        ..CheckOptions::default()
    };
    let mut any_invalid = false;
    for path in &cli.files {
        // elle-cli has one error code: an internal error is reported as
        // such, and exits like bad input.
        match check_caught(
            path,
            format,
            workload,
            &cli.rw.options(),
            &opts,
            cli.directory.as_deref().map(|d| (d, &plot)),
            cli.memory.limit(),
        ) {
            Err(Failed::Input(msg) | Failed::Internal(msg)) => {
                eprintln!("ellery: {msg}");
                return 255;
            }
            Ok(o) => {
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
