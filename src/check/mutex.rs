//! Knossos's `mutex` model: one lock, free at first; `:acquire` takes it
//! (inconsistent if held), `:release` frees it (inconsistent if free). A
//! history is valid when some linearization of its ops is consistent.
//!
//! The lock is a compare-and-set register, so the check is the
//! cas-register search of [`crate::check::linearizable`]: `:acquire` is
//! `cas free → held`, `:release` is `cas held → free`. As for registers,
//! `:fail` ops did not happen and `:info` (or unfinished) ops may take
//! effect at any time after their invocation, or never. The states in
//! `:last-consistent-states` print as Knossos's `Mutex` record does as a
//! map: `{:locked? false}`.

use crate::check::linearizable::register::{KeyHistory, RegFn, RegOp, NEVER, NIL};
use crate::check::linearizable::{check_key, result_value, LinOptions};
use crate::edn::{pr_str, Value};
use crate::error::InputError;
use crate::model::{History, OpType};

/// The state id of a held lock (free is [`NIL`]).
const HELD: u32 = 1;

/// The lock's ops as register ops; fails on an op other than `:acquire` or
/// `:release` (Knossos's model cannot step it).
pub fn mutex_ops(h: &History) -> Result<KeyHistory, InputError> {
    let acquire = h.interner.lookup(&Value::kw("acquire"));
    let release = h.interner.lookup(&Value::kw("release"));
    let mut ops = Vec::new();
    for (pos, op) in h.ops.iter().enumerate() {
        if op.op_type != OpType::Invoke {
            continue;
        }
        let (a, b) = if Some(op.f) == acquire {
            (NIL, HELD)
        } else if Some(op.f) == release {
            (HELD, NIL)
        } else {
            return Err(h.error_at(
                pos,
                format!(
                    "expected :f to be :acquire or :release (a mutex history), found {}",
                    pr_str(&h.atom_value(op.f))
                ),
            ));
        };
        let complete = match h.completion_of(pos).map(|c| (c, h.ops[c].op_type)) {
            Some((_, OpType::Fail)) => continue,
            Some((c, OpType::Ok)) => c as u32,
            _ => NEVER,
        };
        ops.push(RegOp {
            f: RegFn::Cas,
            a,
            b,
            invoke: pos as u32,
            complete,
        });
    }
    let state = |locked| Value::kw_map(vec![("locked?", Value::Bool(locked))]);
    Ok(KeyHistory {
        key: None,
        ops,
        values: vec![state(false), state(true)],
    })
}

/// Checks a mutex history; the result map is the cas-register checker's
/// (`:valid? :analyzer :op :previous-ok :last-consistent-states`).
pub fn check_mutex(h: &History, opts: &LinOptions) -> Result<Value, InputError> {
    let k = mutex_ops(h)?;
    let r = check_key(&k.ops, opts);
    Ok(result_value(h, &k, &r))
}
