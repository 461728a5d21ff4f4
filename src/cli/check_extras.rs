//! What `ellery check` does around the checks themselves: usage it
//! refuses up front, flags the chosen workload ignores, the workload and
//! format a history belongs to, and the output of several histories
//! (JSON keyed by path, JSONL records, summary lines, per-history output
//! directories).

use super::{CheckArgs, ModelArg, Outcome, Validity};
use crate::check::outcome::CheckOptions;
use crate::edn::pr_str;
use crate::edn::Value;
use crate::model::Format;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

/// Usage `ellery check` refuses before checking anything (exit 3): standard
/// input named twice, an empty `-c`, and a `-d` that is an existing file.
pub(super) fn refuse_usage(a: &CheckArgs) -> Result<(), String> {
    if a.files.iter().filter(|f| f.as_os_str() == "-").count() > 1 {
        return Err("standard input (-) is named more than once; it can be read only once".into());
    }
    if a.models
        .consistency_models
        .iter()
        .all(|m| m.trim().is_empty())
        && !a.models.consistency_models.is_empty()
    {
        return Err(
            "expected at least one consistency model after -c (e.g. -c serializable), found none"
                .into(),
        );
    }
    if let Some(d) = &a.directory {
        if d.exists() && !d.is_dir() {
            return Err(format!(
                "-d {}: expected a directory (or a path to create one at), found a file",
                d.display()
            ));
        }
    }
    Ok(())
}

/// The format of a history read from standard input: JSON when its first
/// meaningful bytes are `[{"` or `{"` (an EDN history starts with `{:` or
/// `[{:`), or it is an empty JSON array; else EDN.
pub(super) fn stdin_format(bytes: &[u8]) -> Format {
    let empty_array = bytes
        .iter()
        .filter(|b| !b.is_ascii_whitespace())
        .take(3)
        .eq(b"[]".iter());
    if crate::check::jepsen::looks_like_json(bytes) || empty_array {
        Format::Json
    } else {
        Format::Edn
    }
}

/// Warns once per run about options the workload of a history does not use
/// (`-c`/`-a`/`-d` for the linearizability and Jepsen models, the
/// rw-register key flags elsewhere, the Jepsen flags outside their model).
pub(super) fn warn_ignored(
    workload: ModelArg,
    opts: &CheckOptions,
    rw: &crate::infer::rw_register::RwOptions,
    directory: bool,
) {
    static WARNED: AtomicBool = AtomicBool::new(false);
    if !opts.warn_unused_options {
        return;
    }
    let mut ignored: Vec<&str> = Vec::new();
    let elle = matches!(workload, ModelArg::ListAppend | ModelArg::RwRegister);
    if !elle {
        if opts.expectations.models.is_some() {
            ignored.push("-c");
        }
        if !opts.expectations.anomalies.is_empty() {
            ignored.push("-a");
        }
        if directory {
            ignored.push("-d");
        }
    }
    if workload != ModelArg::RwRegister {
        if rw.wfr_keys {
            ignored.push("--wfr-keys");
        }
        if rw.sequential_keys {
            ignored.push("--sequential-keys");
        }
        if rw.linearizable_keys {
            ignored.push("--linearizable-keys");
        }
    }
    let j = &opts.jepsen;
    if workload != ModelArg::LongFork && j.group_size != 0 {
        ignored.push("-g");
    }
    if workload != ModelArg::Bank
        && (j.negative_balances || j.total_amount.is_some() || j.max_transfer.is_some())
    {
        ignored.push("-n/-o/--max-transfer");
    }
    if !ignored.is_empty() && !WARNED.swap(true, Ordering::Relaxed) {
        eprintln!(
            "ellery: warning: {} {} nothing for the {} workload",
            ignored.join(", "),
            if ignored.len() == 1 { "does" } else { "do" },
            workload_name(workload)
        );
    }
}

/// A workload's `-m` name.
pub(super) fn workload_name(w: ModelArg) -> &'static str {
    match w {
        ModelArg::Auto => "auto",
        ModelArg::ListAppend => "list-append",
        ModelArg::RwRegister => "rw-register",
        ModelArg::CasRegister => "cas-register",
        ModelArg::Mutex => "mutex",
        ModelArg::Bank => "bank",
        ModelArg::Counter => "counter",
        ModelArg::Set => "set",
        ModelArg::SetFull => "set-full",
        ModelArg::LongFork => "long-fork",
    }
}

/// The non-transactional workloads `auto` recognises by their ops:
/// `:acquire`/`:release` → mutex, `:transfer` → bank, `:add` → counter when
/// the `:ok` reads return numbers (or there are none), else set (one `:ok`
/// read) or set-full (several). long-fork histories look like rw-register
/// ones and need `-m long-fork`.
pub(super) fn detect_other(h: &crate::model::History) -> Option<ModelArg> {
    use crate::model::{OpType, OpValue};
    let atom = |name: &str| h.interner.lookup(&Value::kw(name));
    let has = |name: &str| atom(name).is_some_and(|a| h.ops.iter().any(|o| o.f == a));
    if has("acquire") || has("release") {
        return Some(ModelArg::Mutex);
    }
    if has("transfer") {
        return Some(ModelArg::Bank);
    }
    if !has("add") {
        return None;
    }
    let read = atom("read");
    let ok_reads: Vec<&crate::model::Op> = h
        .ops
        .iter()
        .filter(|o| Some(o.f) == read && o.op_type == OpType::Ok)
        .collect();
    let numeric = ok_reads.iter().all(|o| match o.value {
        OpValue::Nil => true,
        OpValue::Other(i) => matches!(h.other_values[i as usize], Value::Int(_)),
        OpValue::Mops { .. } => false,
    });
    Some(if numeric {
        ModelArg::Counter
    } else if ok_reads.len() > 1 {
        ModelArg::SetFull
    } else {
        ModelArg::Set
    })
}

/// When an explicitly chosen workload is not the one the history's
/// operations belong to: a sentence naming the right one.
pub(super) fn workload_hint(chosen: ModelArg, h: &crate::model::History) -> Option<String> {
    if multi_register(h) {
        return Some(
            "this is a Knossos multi-register history ([:read k v] / [:write k v] micro-ops), which ellery has no model for".into(),
        );
    }
    let fits = detect_workload(h);
    (fits != chosen).then(|| {
        format!(
            "this is a {} history: use -m {}",
            workload_name(fits),
            workload_name(fits)
        )
    })
}

/// Whether a history's transactions use Knossos's multi-register micro-ops
/// (`[:read k v]` / `[:write k v]` inside `:txn` ops), which no workload of
/// ellery checks.
pub(super) fn multi_register(h: &crate::model::History) -> bool {
    use crate::model::MopFn;
    let read = h.interner.fn_lookup(&Value::kw("read"));
    let write = h.interner.fn_lookup(&Value::kw("write"));
    if read.is_none() && write.is_none() {
        return false;
    }
    h.ops.iter().any(|op| {
        h.mops(op).iter().any(
            |m| matches!(m.f(), MopFn::Other(name) if Some(name) == read || Some(name) == write),
        )
    })
}

/// Several histories' JSON results as one JSON object keyed by path, in
/// input order, each value laid out as `--output json` lays out one result
/// (clojure.data.json's pprint), indented under its key.
pub(super) fn json_by_path(results: &[(PathBuf, String)]) -> String {
    let mut out = String::from("{");
    for (i, (path, json)) in results.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str("\n ");
        out.push_str(&serde_json::Value::String(path.display().to_string()).to_string());
        out.push_str(":\n  ");
        out.push_str(&json.trim_end().replace('\n', "\n  "));
    }
    out.push_str(if results.is_empty() { "}" } else { "\n}" });
    out
}

/// One JSONL record for a history: its path first, then the result map's
/// keys.
pub(super) fn jsonl_record(path: &Path, result: &Value) -> String {
    let mut record = serde_json::Map::new();
    record.insert(
        "path".into(),
        serde_json::Value::String(path.display().to_string()),
    );
    if let serde_json::Value::Object(m) = crate::edn::value_to_json(result) {
        for (k, v) in m {
            record.insert(k, v);
        }
    }
    serde_json::Value::Object(record).to_string()
}

/// Whether an outcome's problem is that the history belongs to another
/// workload than the one asked for.
pub(super) fn wrong_workload(o: &Outcome) -> bool {
    o.problem
        .as_ref()
        .is_some_and(|p| p.kind == crate::error::InputErrorKind::WrongWorkload)
}

/// The workload a history's operations belong to: first the
/// non-transactional models ([`detect_other`]: mutex, bank,
/// counter, set, set-full), then register operations
/// (`:read`, `:write`, `:cas` with plain values) are a CAS register; micro-op
/// transactions are list-append if any micro-op appends, rw-register if any
/// writes; list-append otherwise (read-only histories check the same way).
pub(super) fn detect_workload(h: &crate::model::History) -> ModelArg {
    if let Some(w) = detect_other(h) {
        return w;
    }
    match crate::model::Workload::detect(h) {
        crate::model::Workload::ListAppend => ModelArg::ListAppend,
        crate::model::Workload::RwRegister => ModelArg::RwRegister,
        crate::model::Workload::CasRegister => ModelArg::CasRegister,
    }
}

/// Where a history's files go under `--directory` when several histories
/// are checked: its path, flattened (`store/t/20240101/history.edn` →
/// `store-t-20240101-history`), made a safe file name (see
/// [`crate::report::names::safe_file_name`]); the caller makes the names of
/// one batch distinct.
pub(super) fn output_subdir(path: &Path) -> String {
    let mut parts: Vec<String> = path
        .with_extension("")
        .components()
        .filter_map(|c| match c {
            std::path::Component::Normal(s) => Some(s.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect();
    if parts.is_empty() {
        parts.push("stdin".into());
    }
    crate::report::names::safe_file_name(&parts.join("-"))
}

pub(super) fn summary_line(path: &Path, o: &Outcome) -> String {
    let types = match o.result.get_kw("anomaly-types") {
        Some(Value::List(ts)) => ts.iter().map(pr_str).collect::<Vec<_>>().join(" "),
        _ => String::new(),
    };
    let word = match o.validity {
        Validity::Valid => "valid",
        Validity::Invalid => "invalid",
        Validity::Unknown => "unknown",
    };
    format!("{}\t{}\t{}", path.display(), word, types)
        .trim_end()
        .to_string()
}
