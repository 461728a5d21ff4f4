//! Whole histories: every key checked (in parallel), and the result map.

use super::{check_key, KeyResult, LinOptions, Verdict};
use crate::check::linearizable::register::{registers, KeyHistory, Registers};
use crate::edn::Value;
use crate::error::InputError;
use crate::model::History;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Checks every key of `regs` (in parallel) and returns per-key results in
/// key order.
pub fn check_keys(regs: &Registers, opts: &LinOptions) -> Vec<KeyResult> {
    let keys = &regs.keys;
    let threads = match opts.threads {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        t => t,
    }
    .min(keys.len())
    .max(1);
    if threads == 1 {
        return keys.iter().map(|k| check_key(&k.ops, opts)).collect();
    }
    // Largest keys first, so one big key does not finish last.
    let mut order: Vec<usize> = (0..keys.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(keys[i].ops.len()));
    let next = AtomicUsize::new(0);
    let mut results: Vec<Option<KeyResult>> = vec![None; keys.len()];
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    let mut done = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(&k) = order.get(i) else { break };
                        done.push((k, check_key(&keys[k].ops, opts)));
                    }
                    done
                })
            })
            .collect();
        for h in handles {
            for (k, r) in h.join().expect("linearizability worker") {
                results[k] = Some(r);
            }
        }
    });
    results
        .into_iter()
        .map(|r| r.expect("every key checked"))
        .collect()
}

/// Checks a cas-register history and returns its result map (see the module
/// documentation). Fails on input that is not a cas-register history.
pub fn check_history(history: &History, opts: &LinOptions) -> Result<Value, InputError> {
    let regs = registers(history)?;
    let results = check_keys(&regs, opts);
    if !regs.independent {
        return Ok(result_value(history, &regs.keys[0], &results[0]));
    }
    let mut per_key = Vec::new();
    let mut failures = Vec::new();
    let mut valids = Vec::new();
    for (k, r) in regs.keys.iter().zip(&results) {
        let key = k.key.clone().unwrap_or(Value::Nil);
        if matches!(r.verdict, Verdict::Invalid(_)) {
            failures.push(key.clone());
        }
        valids.push(&r.verdict);
        per_key.push((key, result_value(history, k, r)));
    }
    Ok(Value::Map(vec![
        (Value::kw("valid?"), merge_valid(valids)),
        (Value::kw("results"), Value::Map(per_key)),
        (Value::kw("failures"), Value::Vector(failures)),
    ]))
}

fn merge_valid<'a>(verdicts: impl IntoIterator<Item = &'a Verdict>) -> Value {
    let mut unknown = false;
    for v in verdicts {
        match v {
            Verdict::Invalid(_) => return Value::Bool(false),
            Verdict::Unknown(_) => unknown = true,
            Verdict::Valid => {}
        }
    }
    if unknown {
        Value::kw("unknown")
    } else {
        Value::Bool(true)
    }
}

/// Values in a stable, readable order: `nil` first, then integers
/// numerically, then the rest by printed form.
fn sorted_values(values: impl Iterator<Item = Value>) -> Vec<Value> {
    let mut vs: Vec<Value> = values.collect();
    vs.sort_by_cached_key(|v| match v {
        Value::Nil => (0, 0, String::new()),
        Value::Int(n) => (1, *n, String::new()),
        other => (2, 0, crate::edn::pr_str(other)),
    });
    vs
}

/// The result map of one key.
pub(crate) fn result_value(history: &History, k: &KeyHistory, r: &KeyResult) -> Value {
    let ops = &k.ops;
    let analyzer = (Value::kw("analyzer"), Value::kw(r.analyzer));
    match &r.verdict {
        Verdict::Valid => Value::Map(vec![(Value::kw("valid?"), Value::Bool(true)), analyzer]),
        Verdict::Unknown(cause) => Value::Map(vec![
            (Value::kw("valid?"), Value::kw("unknown")),
            analyzer,
            (Value::kw("cause"), Value::kw(cause)),
        ]),
        Verdict::Invalid(f) => {
            let op = &ops[f.op];
            let at = if op.ok() { op.complete } else { op.invoke };
            let previous = ops
                .iter()
                .filter(|o| o.ok() && o.complete < at)
                .map(|o| o.complete)
                .max();
            let mut entries = vec![
                (Value::kw("valid?"), Value::Bool(false)),
                analyzer,
                (Value::kw("op"), history.op_value(at as usize)),
                (
                    Value::kw("previous-ok"),
                    previous.map_or(Value::Nil, |p| history.op_value(p as usize)),
                ),
                (
                    Value::kw("last-consistent-states"),
                    Value::Vector(sorted_values(
                        f.states.iter().map(|&s| k.values[s as usize].clone()),
                    )),
                ),
            ];
            if let Some(cause) = f.cause {
                entries.push((Value::kw("cause"), Value::kw(cause)));
            }
            Value::Map(entries)
        }
    }
}
