//! The CLI side of the non-transactional models (Jepsen's bank, counter,
//! set, set-full, long-fork; Knossos's mutex): their flags, shared by
//! `ellery check` and elle-cli mode, and the glue from a path to an
//! [`Outcome`].

use super::ModelArg;
use crate::check::jepsen::{check_file, JepsenModel, JepsenOptions};
use crate::model::Format;
use crate::route::{CheckOptions, Outcome};
use std::path::Path;

/// elle-cli's flags for the Jepsen models.
#[derive(clap::Args, Debug, Clone, Copy)]
pub(super) struct JepsenFlags {
    /// long-fork: number of keys each read observes (elle-cli's default: 0,
    /// which makes every read an illegal history).
    #[arg(short = 'g', long = "group-size", default_value_t = 0)]
    group_size: i64,
    /// bank: allow negative balances.
    #[arg(short = 'n', long = "allow-negative-balances")]
    allow_negative_balances: bool,
    /// bank: the total every read must sum to (default: the first read's
    /// sum).
    #[arg(short = 'o', long = "total-amount")]
    total_amount: Option<i64>,
    /// bank: the largest transfer (accepted for elle-cli's sake; its bank
    /// checker does not use it).
    #[arg(long = "max-transfer")]
    max_transfer: Option<i64>,
}

impl JepsenFlags {
    /// The checker options these flags give.
    pub(super) fn options(self) -> JepsenOptions {
        JepsenOptions {
            group_size: self.group_size,
            negative_balances: self.allow_negative_balances,
            total_amount: self.total_amount,
            max_transfer: self.max_transfer,
        }
    }

    /// Which flags were given that `workload` ignores (for a warning).
    pub(super) fn ignored_by(self, workload: ModelArg) -> Vec<&'static str> {
        let mut out = Vec::new();
        if workload != ModelArg::LongFork && self.group_size != 0 {
            out.push("-g/--group-size (long-fork only)");
        }
        if workload != ModelArg::Bank {
            if self.allow_negative_balances {
                out.push("-n/--allow-negative-balances (bank only)");
            }
            if self.total_amount.is_some() {
                out.push("-o/--total-amount (bank only)");
            }
            if self.max_transfer.is_some() {
                out.push("--max-transfer (bank only)");
            }
        }
        out
    }
}

/// The Jepsen model a workload stands for, if it is one.
pub(super) fn jepsen_model(w: ModelArg) -> Option<JepsenModel> {
    Some(match w {
        ModelArg::Bank => JepsenModel::Bank,
        ModelArg::Counter => JepsenModel::Counter,
        ModelArg::Set => JepsenModel::Set,
        ModelArg::SetFull => JepsenModel::SetFull,
        ModelArg::LongFork => JepsenModel::LongFork,
        _ => return None,
    })
}

/// Peak memory of a Jepsen model per byte of history: its ops are generic
/// maps (measured: 172 MB for a 14.7 MB counter history of 200,000 ops).
const JEPSEN_BYTES_PER_INPUT_BYTE: u64 = 12;

/// Whether a history file fits the memory limit at the Jepsen models'
/// rate (the shared guard, [`crate::limits::check_fits`], assumes the
/// compact model's 4 bytes per byte).
fn jepsen_fits(path: &Path, limit: crate::limits::MemoryLimit) -> Result<(), String> {
    use crate::limits::{mem_available, MemoryLimit, BASE_BYTES};
    let Ok(meta) = std::fs::metadata(path) else {
        return Ok(());
    };
    let cap = match limit {
        MemoryLimit::None => return Ok(()),
        MemoryLimit::Bytes(b) => b,
        MemoryLimit::Available => match mem_available() {
            Some(b) => b,
            None => return Ok(()),
        },
    };
    let need = meta
        .len()
        .saturating_mul(JEPSEN_BYTES_PER_INPUT_BYTE)
        .saturating_add(BASE_BYTES);
    if !meta.is_file() || need <= cap {
        return Ok(());
    }
    let mb = |b: u64| b.div_ceil(1 << 20);
    Err(format!(
        "{}: too large to check: about {} MB needed ({JEPSEN_BYTES_PER_INPUT_BYTE} × its {} MB, plus {} MB), more than the limit, {} MB; --max-memory SIZE sets the limit (none: no limit)",
        path.display(),
        mb(need),
        mb(meta.len()),
        mb(BASE_BYTES),
        mb(cap)
    ))
}

/// Reads and checks `path` with a Jepsen model.
pub(super) fn check_jepsen(
    path: &Path,
    format: Option<Format>,
    model: JepsenModel,
    opts: &CheckOptions,
    memory: crate::limits::MemoryLimit,
) -> Result<Outcome, String> {
    if path != Path::new("-") {
        jepsen_fits(path, memory)?;
    }
    let json = match format {
        None => None,
        Some(Format::Json) => Some(true),
        Some(Format::Edn) => Some(false),
        Some(other) => {
            return Err(format!(
                "{}: the {} model reads EDN or JSON histories, not {other:?}",
                path.display(),
                model.name()
            ))
        }
    };
    let result = check_file(path, json, model, &opts.jepsen)?;
    Ok(Outcome::from_result(result))
}

/// Checks a history already read (under `-m auto`, which found it to be a
/// Jepsen model's) with that model, from the text the reader kept.
pub(super) fn check_jepsen_read(
    h: &crate::model::History,
    model: JepsenModel,
    opts: &CheckOptions,
    memory: crate::limits::MemoryLimit,
) -> Result<Outcome, String> {
    use crate::model::{Format, SourceText};
    if h.origin != "-" {
        jepsen_fits(Path::new(&h.origin), memory)?;
    }
    // The text the reader kept is checked in place; only a big file's is
    // read again.
    let bytes: std::borrow::Cow<'_, [u8]> = match &h.source {
        SourceText::Bytes(_) | SourceText::Mapped(_) => h.source.in_memory().into(),
        SourceText::File(p) => std::fs::read(p)
            .map_err(|e| format!("{}: {e}", p.display()))?
            .into(),
    };
    let json = h.format == Format::Json;
    crate::check::jepsen::check_bytes(&bytes, &h.origin, json, model, &opts.jepsen)
        .map(Outcome::from_result)
}

/// Checks a mutex history (Knossos's `mutex` model).
pub(super) fn check_mutex(
    h: &crate::model::History,
    opts: &CheckOptions,
) -> Result<Outcome, String> {
    let lin = crate::check::linearizable::LinOptions {
        deadline: opts
            .linearizable_timeout
            .map(|t| std::time::Instant::now() + t),
        ..Default::default()
    };
    crate::check::mutex::check_mutex(h, &lin)
        .map(Outcome::from_result)
        .map_err(|e| e.to_string())
}

/// elle-cli's model names, for its usage text and errors.
pub(super) const ELLE_CLI_MODELS: &str =
    "bank, cas-register, counter, list-append, long-fork, mutex, rw-register, set, set-full";

/// The workload for an elle-cli model name; `Err` with the message to print
/// (exit 255) otherwise.
pub(super) fn elle_cli_workload(name: &str) -> Result<ModelArg, String> {
    Ok(match name {
        "list-append" => ModelArg::ListAppend,
        "rw-register" => ModelArg::RwRegister,
        "cas-register" => ModelArg::CasRegister,
        "mutex" => ModelArg::Mutex,
        "bank" => ModelArg::Bank,
        "counter" => ModelArg::Counter,
        "set" => ModelArg::Set,
        "set-full" => ModelArg::SetFull,
        "long-fork" => ModelArg::LongFork,
        "comments" | "sequential" => {
            return Err(format!(
                "model {name} is not supported: elle-cli 0.1.9's {name} checker fails on every history (it exits 255 too)"
            ))
        }
        other => return Err(format!("unknown model {other} (one of {ELLE_CLI_MODELS})")),
    })
}
