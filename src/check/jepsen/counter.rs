//! `jepsen.checker/counter`: a counter starts at 0 and `:add v` (v ≥ 0)
//! increments it. Each `:ok` read must lie between the sum of the adds that
//! completed `:ok` before it was invoked (lower bound) and the sum of every
//! add invoked before it completed that did not fail (upper bound).
//!
//! Result: `{:valid? …, :reads [[lower value upper] …], :errors ([…] …)}`,
//! `:errors` being the reads out of bounds.

use super::{unknown_error, JHistory};
use crate::edn::{pr_str, Value};
use crate::error::InputError;
use crate::model::OpType;
use hashbrown::HashMap;

/// Checks a counter history.
pub(super) fn check(h: &JHistory) -> Result<Value, InputError> {
    let mut lower: i64 = 0;
    let mut upper: i64 = 0;
    // process → (lower bound at invocation, value the read returns)
    let mut pending: HashMap<&Value, (i64, &Value)> = HashMap::new();
    let mut reads: Vec<Value> = Vec::new();
    let overflow = || unknown_error("long overflow summing the adds".into());
    for (i, op) in h.ops.iter().enumerate() {
        // Jepsen asserts this of every op, not only counter ops.
        let value = match op.value() {
            Value::Nil => None,
            Value::Int(n) => Some(*n),
            v => {
                return Err(h.error_at(
                    i,
                    format!(
                        "expected an integer or nil :value (the counter checker asserts it of every op), found {}",
                        pr_str(v)
                    ),
                ))
            }
        };
        match (op.op_type, op.is_f("read"), op.is_f("add")) {
            (OpType::Invoke, true, _) => {
                if let Some(c) = h.completion(i).filter(|c| c.op_type == OpType::Ok) {
                    pending.insert(op.process(), (lower, c.value()));
                }
            }
            (OpType::Ok, true, _) => {
                let r = match pending.remove(op.process()) {
                    Some((l, v)) => vec![Value::Int(l), v.clone(), Value::Int(upper)],
                    // (conj nil upper): a read completing with no invocation.
                    None => vec![Value::Int(upper)],
                };
                reads.push(Value::Vector(r));
            }
            (OpType::Invoke, _, true) => {
                let Some(v) = value else {
                    return Ok(unknown_error(format!(
                        "an :add of nil at :index {}",
                        op.index
                    )));
                };
                if v < 0 {
                    return Err(h.error_at(
                        i,
                        format!("expected a non-negative :add (the counter only grows), found {v}"),
                    ));
                }
                if h.completion(i).map(|c| c.op_type) != Some(OpType::Fail) {
                    upper = match upper.checked_add(v) {
                        Some(u) => u,
                        None => return Ok(overflow()),
                    };
                }
            }
            (OpType::Ok, _, true) => {
                let Some(v) = value else {
                    return Ok(unknown_error(format!(
                        "an :add of nil at :index {}",
                        op.index
                    )));
                };
                lower = match lower.checked_add(v) {
                    Some(l) => l,
                    None => return Ok(overflow()),
                };
            }
            _ => {}
        }
    }
    let mut errors = Vec::new();
    for r in &reads {
        let Value::Vector(xs) = r else { continue };
        let mut ok = true;
        for w in xs.windows(2) {
            match (&w[0], &w[1]) {
                (Value::Int(a), Value::Int(b)) => ok &= a <= b,
                (a, b) => {
                    return Ok(unknown_error(format!(
                        "cannot compare {} with {} (a read of a non-number)",
                        pr_str(a),
                        pr_str(b)
                    )))
                }
            }
        }
        if !ok {
            errors.push(r.clone());
        }
    }
    Ok(Value::kw_map(vec![
        ("valid?", Value::Bool(errors.is_empty())),
        ("reads", Value::Vector(reads)),
        ("errors", Value::List(errors)),
    ]))
}
