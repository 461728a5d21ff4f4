//! `--algorithm sat` answers in Elle's vocabulary: the result map for
//! `-m rw-register` histories.

use super::{
    check_serializable, classify_cycle, reg_history, verify_cycle, CycleEdge, EdgeKind, Isolation,
    RegHistory, RegOp, RegValue, SatOptions, Verdict, Violation,
};
use crate::check::ExplainedCycle;
use crate::model::{Atom, History};

/// The models `--algorithm sat` decides: serializability and snapshot
/// isolation, plain (no order between a process's transactions), with
/// session order (`strong-session-`), and with real-time order
/// (`strict-`/`strong-`, which include session order).
pub const SAT_MODELS: [&str; 7] = [
    "serializable",
    "strong-session-serializable",
    "strict-serializable",
    "strong-serializable",
    "snapshot-isolation",
    "strong-session-snapshot-isolation",
    "strong-snapshot-isolation",
];

/// The models a check asks about: `-c`, or Elle's default
/// (strict-serializable).
fn requested_models(opts: &crate::pipeline::CheckOptions) -> Vec<&'static str> {
    opts.expectations
        .models
        .clone()
        .unwrap_or_else(|| vec!["strict-serializable"])
}

/// Whether `--algorithm sat` decides every model `opts` asks about (all
/// among [`SAT_MODELS`]).
pub fn decides(opts: &crate::pipeline::CheckOptions) -> bool {
    let models = requested_models(opts);
    !models.is_empty() && models.iter().all(|m| SAT_MODELS.contains(m))
}

/// Models whose check includes real-time order (and so session order).
const REAL_TIME_MODELS: [&str; 3] = [
    "strict-serializable",
    "strong-serializable",
    "strong-snapshot-isolation",
];

/// Whether the SAT check for `opts` includes each process's order: some
/// requested model has session or real-time order. Without it, far fewer
/// orders are known and the search is much harder (a generated
/// 50,000-transaction history: 9 s instead of well under 1 s).
pub fn orders_sessions(opts: &crate::pipeline::CheckOptions) -> bool {
    requested_models(opts).iter().any(|m| {
        REAL_TIME_MODELS.contains(m)
            || [
                "strong-session-serializable",
                "strong-session-snapshot-isolation",
            ]
            .contains(m)
    })
}

/// `--algorithm sat` for `-m rw-register`: Elle's result map for the
/// models in `opts` (which must be among [`SAT_MODELS`]).
pub fn check_history(
    h: &History,
    opts: &crate::pipeline::CheckOptions,
) -> Result<crate::pipeline::Outcome, crate::error::InputError> {
    use crate::edn::Value;
    use crate::pipeline::{Outcome, Validity};
    let models = requested_models(opts);
    if !decides(opts) {
        return Err(input_error(
            h,
            format!("--algorithm sat checks -c {} only", SAT_MODELS.join(", ")),
        ));
    }
    // One check at the strongest requested model.
    let has = |names: &[&str]| models.iter().any(|m| names.contains(m));
    let real_time = has(&REAL_TIME_MODELS);
    let sat_opts = SatOptions {
        isolation: if has(&[
            "serializable",
            "strong-session-serializable",
            "strict-serializable",
            "strong-serializable",
        ]) {
            Isolation::Serializable
        } else {
            Isolation::SnapshotIsolation
        },
        session_order: orders_sessions(opts),
        real_time,
        timeout: opts.sat_timeout,
        conflict_budget: opts.sat_conflict_budget,
        ..SatOptions::default()
    };
    let (rh, atoms) =
        reg_history(h, real_time).map_err(|e| input_error(h, format!("--algorithm sat: {e}")))?;
    let (verdict, stats) = check_serializable(&rh, &sat_opts);
    if opts.verbose {
        eprintln!("ellery: {}: algorithm sat: {stats:?}", h.origin);
    }
    // Facts Elle reports without any inference (a read disagreeing with
    // its own transaction, reads of failed or intermediate writes), in
    // Elle's own shapes; the solver's verdict comes on top.
    let mut anomalies: Vec<(String, Vec<Value>)> = Vec::new();
    let mut seqs: Vec<&str> = Vec::new();
    for (kind, cases) in [
        ("internal", crate::infer::rw_register::internal_cases(h)),
        ("G1a", crate::infer::rw_register::g1a_cases(h)),
        ("G1b", crate::infer::rw_register::g1b_cases(h)),
    ] {
        if !cases.is_empty() {
            anomalies.push((kind.to_string(), cases));
            seqs.push(kind);
        }
    }
    let mut cycles = Vec::new();
    let mut validity = if anomalies.is_empty() {
        Validity::Valid
    } else {
        Validity::Invalid
    };
    // A solver finding Elle's cases did not already report: one case.
    let txn_case = |txn: u32, key: u64, more: Vec<(&str, Value)>| {
        let mut entries = vec![
            (
                "op",
                crate::report::op_value(h, rh[txn as usize - 1].index as usize),
            ),
            ("key", h.atom_value(atoms[key as usize])),
        ];
        entries.extend(more);
        Value::kw_map(entries)
    };
    match verdict {
        Verdict::Valid(_) => {}
        Verdict::Unknown => validity = Validity::Unknown,
        Verdict::Invalid(Violation::Internal { txn, key }) => {
            validity = Validity::Invalid;
            if !anomalies.iter().any(|(k, _)| k == "internal") {
                anomalies.push(("internal".to_string(), vec![txn_case(txn, key, vec![])]));
                seqs.push("internal");
            }
        }
        Verdict::Invalid(Violation::Unwritten { txn, key, value }) => {
            validity = Validity::Invalid;
            if !anomalies.iter().any(|(k, _)| k == "G1a" || k == "G1b") {
                // Nobody (committed or not) wrote the value: Elle has no
                // name for such a read; ellery reports it as G1a without a
                // writer.
                let val = |v: RegValue| v.map_or(Value::Nil, |x| h.atom_value(atoms[x as usize]));
                let case = txn_case(
                    txn,
                    key,
                    vec![("value", val(value)), ("writer", Value::Nil)],
                );
                anomalies.push(("G1a".to_string(), vec![case]));
                seqs.push("G1a");
            }
        }
        Verdict::Invalid(Violation::Cycle(c)) => {
            // A cycle the history does not justify would be a solver bug:
            // say so instead of claiming an anomaly.
            if let Err(why) = verify_cycle(&rh, &c) {
                eprintln!(
                    "ellery: {}: internal error, unverified SAT cycle: {why}",
                    h.origin
                );
                validity = Validity::Unknown;
            } else {
                validity = Validity::Invalid;
                let cycle = explain(h, &rh, &atoms, &c);
                anomalies.push((cycle.kind.clone(), vec![cycle.to_value(h)]));
                cycles.push(cycle);
            }
        }
    }
    let result = match validity {
        Validity::Unknown => Value::kw_map(vec![
            ("valid?", Value::kw("unknown")),
            ("cause", Value::kw("timeout")),
        ]),
        _ => crate::check::result::result_map(&opts.expectations, &anomalies, &seqs),
    };
    let reportable = opts.expectations.reportable();
    cycles.retain(|c| reportable.contains(&c.kind.as_str()));
    let plots = match opts.plot_max_bytes {
        Some(max) => cycles
            .iter()
            .map(|c| (format!("{}/0", c.kind), cycle_dot(h, c, max)))
            .collect(),
        None => Vec::new(),
    };
    Ok(Outcome {
        result,
        validity,
        cycles,
        problem: None,
        plots,
        incompatible_keys: Vec::new(),
    })
}

/// A solver cycle as Elle explains cycles: transactions by op position,
/// steps with Elle's maps and sentences, and the anomaly type.
fn explain(h: &History, rh: &RegHistory, atoms: &[Atom], cycle: &[CycleEdge]) -> ExplainedCycle {
    use crate::infer::order_graphs::{ProcessExplainer, RealtimeExplainer};
    use crate::infer::rw_register::{version_step, wr_step};
    use crate::infer::{PairExplainer, StepKind};
    let pos = |id: u32| rh[id as usize - 1].index as u32;
    let val = |v: RegValue| v.map(|x| atoms[x as usize]);
    // The value transaction `t` finally wrote to `k` (nil for T⊥).
    let final_write = |t: u32, k: u64| -> Option<Atom> {
        if t == 0 {
            return None;
        }
        rh[t as usize - 1]
            .ops
            .iter()
            .rev()
            .find_map(|o| match *o {
                RegOp::Write(kk, v) if kk == k => Some(val(v)),
                _ => None,
            })
            .flatten()
    };
    let steps = cycle
        .iter()
        .map(|e| {
            let (a, b) = (pos(e.from), pos(e.to));
            match e.kind {
                EdgeKind::Wr { key, value } => wr_step(h, a, b, atoms[key as usize], val(value)),
                EdgeKind::Ww { key } => version_step(
                    h,
                    a,
                    b,
                    StepKind::Ww,
                    atoms[key as usize],
                    final_write(e.from, key),
                    final_write(e.to, key),
                ),
                EdgeKind::Rw { key, via } => version_step(
                    h,
                    a,
                    b,
                    StepKind::Rw,
                    atoms[key as usize],
                    final_write(via, key),
                    final_write(e.to, key),
                ),
                EdgeKind::Process => ProcessExplainer
                    .explain(h, a, b)
                    .expect("verified session-order edge"),
                EdgeKind::Realtime => RealtimeExplainer
                    .explain(h, a, b)
                    .expect("verified real-time edge"),
                EdgeKind::Init => unreachable!("the initial transaction is on no cycle"),
            }
        })
        .collect();
    let mut ops: Vec<u32> = cycle.iter().map(|e| pos(e.from)).collect();
    ops.push(ops[0]);
    ExplainedCycle {
        kind: classify_cycle(cycle),
        ops,
        steps,
    }
}

/// The DOT source of a reported cycle: its transactions and its steps.
fn cycle_dot(h: &History, c: &ExplainedCycle, max_bytes: usize) -> Option<String> {
    let next = |a: u32| -> Vec<u32> {
        c.ops
            .windows(2)
            .filter(|w| w[0] == a)
            .map(|w| w[1])
            .collect()
    };
    let step = |a: u32, b: u32| {
        c.ops
            .windows(2)
            .position(|w| w[0] == a && w[1] == b)
            .map(|i| c.steps[i].clone())
    };
    crate::report::plot::dot_source(h, &c.ops[1..], &next, &step, max_bytes)
}

fn input_error(h: &History, message: String) -> crate::error::InputError {
    crate::error::InputError {
        kind: Default::default(),
        file: h.origin.clone(),
        line: 1,
        column: 1,
        message,
    }
}
