//! `ellery diff`: compare an Elle result with ellery's.

use super::{check_caught, expectations, Failed, Job, ModelArg};
use crate::edn::Value;
use crate::error::{EXIT_BAD_INPUT, EXIT_INTERNAL, EXIT_INVALID, EXIT_VALID};
use crate::infer::rw_register::RwOptions;
use crate::route::CheckOptions;
use std::path::{Path, PathBuf};

#[derive(clap::Args, Debug)]
pub(super) struct DiffArgs {
    /// Elle's result: a result map, or a Jepsen `results.edn` holding it.
    elle: PathBuf,
    /// ellery's result map; with `--check`, the history to check instead.
    other: PathBuf,
    /// Run ellery on the history given second, then compare.
    #[arg(long)]
    check: bool,
    /// Where Elle's result sits in the first file (e.g. `workload`); by
    /// default the first nested map with `:anomaly-types`.
    #[arg(long)]
    key: Option<String>,
    /// Consistency models (with `--check`).
    #[arg(short = 'c', long = "consistency-models", value_delimiter = ',')]
    consistency_models: Vec<String>,
    /// Extra anomalies (with `--check`).
    #[arg(short = 'a', long, value_delimiter = ',')]
    anomalies: Vec<String>,
    /// Also require the normalised maps to be identical (same cycles).
    #[arg(long)]
    strict: bool,
    /// Also write an HTML report here: `index.html` comparing the two,
    /// each result's page under `elle/` and `ellery/` (with `--check`,
    /// ellery's files too).
    #[arg(short = 'd', long)]
    directory: Option<PathBuf>,
    /// Workload (with `--check`; default: detected from the history).
    #[arg(short = 'm', long = "model", value_enum, default_value = "auto")]
    workload: ModelArg,
}

fn read_result(path: &Path) -> Result<Value, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    crate::edn::parse_one(&bytes)
        .map_err(|e| e.into_input_error(&path.display().to_string()).to_string())
}

pub(super) fn run_diff(d: DiffArgs) -> i32 {
    let elle_file = match read_result(&d.elle) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("ellery: {e}");
            return EXIT_BAD_INPUT;
        }
    };
    let Some(elle) = crate::diff::find_result(&elle_file, d.key.as_deref()) else {
        eprintln!(
            "ellery: {}: expected an Elle result map{}, found none",
            d.elle.display(),
            d.key
                .as_ref()
                .map(|k| format!(" under {k}"))
                .unwrap_or_default()
        );
        return EXIT_BAD_INPUT;
    };
    let ours = if d.check {
        let exp = match expectations(&d.consistency_models, &d.anomalies) {
            Ok(e) => e,
            Err(msg) => {
                eprintln!("ellery: {msg}");
                return EXIT_BAD_INPUT;
            }
        };
        let plot = crate::report::plot::PlotOptions::default();
        let ours_dir = d
            .directory
            .as_ref()
            .map(|dir| dir.join(crate::report::html::DIFF_ELLERY));
        let opts = CheckOptions {
            expectations: exp,
            plot_max_bytes: ours_dir.as_ref().map(|_| plot.max_bytes),
            ..CheckOptions::default()
        };
        match check_caught(Job {
            path: &d.other,
            format: None,
            workload: d.workload,
            rw: &RwOptions::default(),
            opts: &opts,
            directory: ours_dir.as_deref().map(|d| (d, &plot)),
            memory: crate::limits::MemoryLimit::default(),
        }) {
            Ok(o) => o.result,
            Err(Failed::Input(e)) => {
                eprintln!("ellery: {e}");
                return EXIT_BAD_INPUT;
            }
            Err(Failed::Internal(e)) => {
                eprintln!("ellery: {e}");
                return EXIT_INTERNAL;
            }
        }
    } else {
        match read_result(&d.other) {
            Ok(v) => v,
            Err(e) => {
                eprintln!("ellery: {e}");
                return EXIT_BAD_INPUT;
            }
        }
    };
    let c = crate::diff::compare(elle, &ours);
    print!("{}", c.report());
    if let Some(dir) = &d.directory {
        let (elle_name, ours_name) = (d.elle.display().to_string(), d.other.display().to_string());
        if let Err(e) = crate::report::html::write_diff_report(
            dir,
            (&elle_name, elle),
            (&ours_name, &ours),
            d.check,
            &c.report(),
        ) {
            eprintln!("ellery: {}: {e}", dir.display());
            return EXIT_BAD_INPUT;
        }
    }
    let agree = c.agrees() && (!d.strict || c.identical());
    if agree {
        EXIT_VALID
    } else {
        EXIT_INVALID
    }
}
