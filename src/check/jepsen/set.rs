//! `jepsen.checker/set`: `:add` operations followed by a final `:read`.
//! Every acknowledged add must be in the last `:ok` read, and the read may
//! hold only elements some add attempted.
//!
//! Result (11 keys, so a Clojure hash map, printed in its order):
//! `:valid?`, the counts `:attempt-count :acknowledged-count :ok-count
//! :lost-count :recovered-count :unexpected-count`, and `:ok :lost
//! :unexpected :recovered` as Jepsen's compact interval strings
//! (`"#{0..2 5}"`). Without an `:ok` read: `{:valid? :unknown, :error "Set
//! was never read"}`.

use super::{clj_map, clj_sort, distinct, unknown_error, JHistory};
use crate::edn::{pr_str, Value};
use crate::model::OpType;
use hashbrown::HashSet;

/// Checks a set history.
pub(super) fn check(h: &JHistory) -> Value {
    let attempts: HashSet<Value> = h
        .ops
        .iter()
        .filter(|o| o.op_type == OpType::Invoke && o.is_f("add"))
        .map(|o| o.value().clone())
        .collect();
    let adds: HashSet<Value> = h
        .ops
        .iter()
        .filter(|o| o.op_type == OpType::Ok && o.is_f("add"))
        .map(|o| o.value().clone())
        .collect();
    let final_read = h
        .ops
        .iter()
        .rev()
        .find(|o| o.op_type == OpType::Ok && o.is_f("read"))
        .map(|o| o.value());
    let final_read = match final_read {
        None | Some(Value::Nil) => {
            return Value::kw_map(vec![
                ("valid?", Value::kw("unknown")),
                ("error", Value::Str("Set was never read".into())),
            ])
        }
        Some(Value::Vector(xs) | Value::List(xs) | Value::Set(xs)) => distinct(xs.iter().cloned()),
        Some(v) => {
            return unknown_error(format!(
                "the final read's value {} is not a collection",
                pr_str(v)
            ))
        }
    };
    let in_final: HashSet<&Value> = final_read.iter().collect();
    let ok: Vec<Value> = final_read
        .iter()
        .filter(|v| attempts.contains(*v))
        .cloned()
        .collect();
    let unexpected: Vec<Value> = final_read
        .iter()
        .filter(|v| !attempts.contains(*v))
        .cloned()
        .collect();
    let lost: Vec<Value> = adds
        .iter()
        .filter(|v| !in_final.contains(v))
        .cloned()
        .collect();
    let recovered: Vec<Value> = ok.iter().filter(|v| !adds.contains(*v)).cloned().collect();
    let strs = [&ok, &lost, &unexpected, &recovered].map(|s| interval_set_str(s.clone()));
    let [ok_s, lost_s, unexpected_s, recovered_s] = match strs {
        [Ok(a), Ok(b), Ok(c), Ok(d)] => [a, b, c, d],
        [a, b, c, d] => {
            let e = [a, b, c, d]
                .into_iter()
                .find_map(Result::err)
                .unwrap_or_default();
            return unknown_error(e);
        }
    };
    let count = |s: &[Value]| Value::Int(s.len() as i64);
    clj_map(vec![
        (
            "valid?",
            Value::Bool(lost.is_empty() && unexpected.is_empty()),
        ),
        ("attempt-count", count(&distinct(attempts.iter().cloned()))),
        ("acknowledged-count", count(&distinct(adds.iter().cloned()))),
        ("ok-count", count(&ok)),
        ("lost-count", count(&lost)),
        ("recovered-count", count(&recovered)),
        ("unexpected-count", count(&unexpected)),
        ("ok", Value::Str(ok_s)),
        ("lost", Value::Str(lost_s)),
        ("unexpected", Value::Str(unexpected_s)),
        ("recovered", Value::Str(recovered_s)),
    ])
}

/// `jepsen.util/integer-interval-set-str`: the sorted elements, runs of
/// consecutive integers written `a..b`, inside `#{…}`; an error where Jepsen
/// would throw (elements that do not sort, or a run over a non-integer).
pub(crate) fn interval_set_str(mut set: Vec<Value>) -> Result<String, String> {
    if set.contains(&Value::Nil) {
        let items: Vec<String> = set.iter().map(pr_str).collect();
        return Ok(format!("#{{{}}}", items.join(" ")));
    }
    clj_sort(&mut set)?;
    let mut runs: Vec<(Value, Value)> = Vec::new();
    for v in set {
        if let Some((_, end)) = runs.last_mut() {
            match (&*end, &v) {
                (Value::Int(e), Value::Int(c)) if e.checked_add(1) == Some(*c) => {
                    *end = v;
                    continue;
                }
                (Value::Int(_), _) => {}
                (e, _) => return Err(format!("cannot increment {} (not an integer)", pr_str(e))),
            }
        }
        runs.push((v.clone(), v));
    }
    let str_of = |v: &Value| match v {
        Value::Str(s) => s.clone(),
        other => pr_str(other),
    };
    let parts: Vec<String> = runs
        .iter()
        .map(|(s, e)| {
            if s == e {
                str_of(s)
            } else {
                format!("{}..{}", str_of(s), str_of(e))
            }
        })
        .collect();
    Ok(format!("#{{{}}}", parts.join(" ")))
}
