//! `--algorithm sat` answers in Elle's vocabulary: the result map for
//! `-m rw-register` histories.

use super::{
    check_serializable, classify_cycle, reg_history, verify_cycle, EdgeKind, Isolation, RegOp,
    RegValue, SatOptions, Verdict, Violation,
};
use crate::model::History;

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

/// `--algorithm sat` for `-m rw-register`: Elle's result map for the
/// models in `opts` (which must be among [`SAT_MODELS`]).
pub fn check_history(
    h: &History,
    opts: &crate::pipeline::CheckOptions,
) -> Result<crate::pipeline::Outcome, crate::error::InputError> {
    use crate::edn::Value;
    use crate::pipeline::{Outcome, Validity};
    let models = opts.expectations.models.clone().unwrap_or_default();
    if models.is_empty() || models.iter().any(|m| !SAT_MODELS.contains(m)) {
        return Err(input_error(
            h,
            "--algorithm sat checks -c serializable or strong-session-serializable only".into(),
        ));
    }
    let (rh, atoms) =
        reg_history(h).map_err(|e| input_error(h, format!("--algorithm sat: {e}")))?;
    // One check at the strongest requested model.
    let has = |names: &[&str]| models.iter().any(|m| names.contains(m));
    let real_time = has(&[
        "strict-serializable",
        "strong-serializable",
        "strong-snapshot-isolation",
    ]);
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
        session_order: real_time
            || has(&[
                "strong-session-serializable",
                "strong-session-snapshot-isolation",
            ]),
        real_time,
        timeout: opts.linearizable_timeout,
        ..SatOptions::default()
    };
    let (verdict, stats) = check_serializable(&rh, &sat_opts);
    if opts.verbose {
        eprintln!("ellery: {}: algorithm sat: {stats:?}", h.origin);
    }
    let op = |id: u32| crate::report::op_value(h, rh[id as usize - 1].index as usize);
    let val = |v: RegValue| v.map_or(Value::Nil, |x| h.atom_value(atoms[x as usize]));
    let key_v = |k: u64| h.atom_value(atoms[k as usize]);
    let fw = |t: u32, k: u64| -> Value {
        if t == 0 {
            return Value::Nil;
        }
        let mut r = Value::Nil;
        for o in &rh[t as usize - 1].ops {
            if let RegOp::Write(kk, v) = *o {
                if kk == k {
                    r = val(v);
                }
            }
        }
        r
    };
    let (anomalies, validity) = match verdict {
        Verdict::Valid(_) => (Vec::new(), Validity::Valid),
        Verdict::Unknown => (Vec::new(), Validity::Unknown),
        Verdict::Invalid(Violation::Internal { txn, key }) => (
            vec![(
                "internal".to_string(),
                vec![Value::kw_map(vec![("op", op(txn)), ("key", key_v(key))])],
            )],
            Validity::Invalid,
        ),
        Verdict::Invalid(Violation::Unwritten { txn, key, value }) => (
            vec![(
                "G1a".to_string(),
                vec![Value::kw_map(vec![
                    ("op", op(txn)),
                    ("key", key_v(key)),
                    ("value", val(value)),
                    ("writer", Value::Nil),
                ])],
            )],
            Validity::Invalid,
        ),
        Verdict::Invalid(Violation::Cycle(c)) => {
            debug_assert!(verify_cycle(&rh, &c).is_ok());
            let mut ops: Vec<Value> = c.iter().map(|e| op(e.from)).collect();
            ops.push(op(c[0].from));
            let steps = c
                .iter()
                .map(|e| match e.kind {
                    EdgeKind::Init => Value::kw_map(vec![("type", Value::kw("init"))]),
                    EdgeKind::Process => Value::kw_map(vec![
                        ("type", Value::kw("process")),
                        ("process", Value::Int(rh[e.from as usize - 1].process)),
                    ]),
                    EdgeKind::Realtime => {
                        let b = rh[e.to as usize - 1].index as usize;
                        let b = h.invocation_of(b).unwrap_or(b);
                        Value::kw_map(vec![
                            ("type", Value::kw("realtime")),
                            ("a'", op(e.from)),
                            ("b", crate::report::op_value(h, b)),
                        ])
                    }
                    EdgeKind::Wr { key, value } => Value::kw_map(vec![
                        ("type", Value::kw("wr")),
                        ("key", key_v(key)),
                        ("value", val(value)),
                    ]),
                    EdgeKind::Ww { key } => Value::kw_map(vec![
                        ("type", Value::kw("ww")),
                        ("key", key_v(key)),
                        ("value", fw(e.from, key)),
                        ("value'", fw(e.to, key)),
                    ]),
                    EdgeKind::Rw { key, via } => Value::kw_map(vec![
                        ("type", Value::kw("rw")),
                        ("key", key_v(key)),
                        ("value", fw(via, key)),
                        ("value'", fw(e.to, key)),
                    ]),
                })
                .collect();
            let kind = classify_cycle(&c);
            let v = Value::kw_map(vec![
                ("cycle", Value::Vector(ops)),
                ("steps", Value::List(steps)),
                ("type", Value::kw(&kind)),
            ]);
            (vec![(kind, vec![v])], Validity::Invalid)
        }
    };
    let result = match validity {
        Validity::Unknown => Value::kw_map(vec![
            ("valid?", Value::kw("unknown")),
            ("cause", Value::kw("timeout")),
        ]),
        _ => crate::check::result::result_map(&opts.expectations, &anomalies, &[]),
    };
    Ok(Outcome {
        result,
        validity,
        cycles: Vec::new(),
        problem: None,
        plots: Vec::new(),
        incompatible_keys: Vec::new(),
    })
}

fn input_error(h: &History, message: String) -> crate::error::InputError {
    crate::error::InputError {
        file: h.origin.clone(),
        line: 1,
        column: 1,
        message,
    }
}
