//! elle-cli's bank checker (`elle-cli.bank`, the read half of
//! `jepsen.tests.bank`): every `:ok` `:read` returns a map of account to
//! balance; each must hold only the accounts of the first read, no `nil`
//! balance, sum to the total (`-o`, else the first read's sum) and, unless
//! negative balances are allowed (`-n`), hold no negative balance. The first
//! of these rules a read breaks is its error.
//!
//! Result: `{:valid? :read-count :error-count :first-error :errors}`;
//! `:errors` maps each error type (`:unexpected-key :nil-balance
//! :wrong-total :negative-value`, in order of first occurrence) to `{:count
//! :first :worst :last}` (plus `:lowest :highest` by total for
//! `:wrong-total`); `:first-error` is the error with the lowest op index
//! among each type's first.

use super::{unknown_error, JHistory, JOp, JepsenOptions};
use crate::edn::{pr_str, Value};
use crate::model::OpType;
use std::cmp::Ordering;

/// One read's error.
struct BankError<'a> {
    kind: &'static str,
    op: &'a JOp,
    /// `:unexpected`, `:nils`, `:total` or `:negative`.
    detail: Value,
    /// The sum, for `:wrong-total`.
    total: i64,
    /// Jepsen's `err-badness`.
    badness: f64,
}

impl BankError<'_> {
    fn value(&self) -> Value {
        let detail_key = match self.kind {
            "unexpected-key" => "unexpected",
            "nil-balance" => "nils",
            "wrong-total" => "total",
            _ => "negative",
        };
        Value::kw_map(vec![
            ("type", Value::kw(self.kind)),
            (detail_key, self.detail.clone()),
            ("op", self.op.map.clone()),
        ])
    }
}

fn entries(v: &Value) -> Option<&[(Value, Value)]> {
    match v {
        Value::Map(e) => Some(e),
        Value::Nil => Some(&[]),
        _ => None,
    }
}

fn sum(balances: &[&Value]) -> Result<i64, String> {
    let mut s: i64 = 0;
    for b in balances {
        match b {
            Value::Int(n) => s = s.checked_add(*n).ok_or("long overflow summing balances")?,
            other => return Err(format!("cannot add the balance {}", pr_str(other))),
        }
    }
    Ok(s)
}

/// What is wrong with one read's balances `es`, if anything: (the error
/// kind, its detail, the read's total, how bad it is), as Jepsen's bank
/// checker finds them, in its order.
fn read_error(
    es: &[(Value, Value)],
    accounts: &[&Value],
    total: i64,
    opts: &JepsenOptions,
) -> Result<Option<(&'static str, Value, i64, f64)>, String> {
    let balances: Vec<&Value> = es.iter().map(|(_, v)| v).collect();
    let unexpected: Vec<Value> = es
        .iter()
        .filter(|(k, _)| !accounts.contains(&k))
        .map(|(k, _)| k.clone())
        .collect();
    Ok(if !unexpected.is_empty() {
        let n = unexpected.len() as f64;
        Some(("unexpected-key", Value::List(unexpected), 0, n))
    } else if balances.iter().any(|b| matches!(b, Value::Nil)) {
        // (remove val …) keeps the false balances too.
        let nils: Vec<(Value, Value)> = es
            .iter()
            .filter(|(_, v)| matches!(v, Value::Nil | Value::Bool(false)))
            .cloned()
            .collect();
        let n = nils.len() as f64;
        Some(("nil-balance", Value::Map(nils), 0, n))
    } else {
        let s = sum(&balances)?;
        if s != total {
            // (float (/ (- s total) total)): a ratio, then a float.
            let badness = if total > 0 {
                (((s as f64 - total as f64) / total as f64) as f32).abs() as f64
            } else {
                0.0
            };
            Some(("wrong-total", Value::Int(s), s, badness))
        } else if !opts.negative_balances
            && balances
                .iter()
                .any(|b| matches!(b, Value::Int(n) if *n < 0))
        {
            let neg: Vec<Value> = balances
                .iter()
                .filter(|b| matches!(b, Value::Int(n) if *n < 0))
                .map(|b| (*b).clone())
                .collect();
            let badness = -neg
                .iter()
                .map(|v| match v {
                    Value::Int(n) => *n as f64,
                    _ => 0.0,
                })
                .sum::<f64>();
            Some(("negative-value", Value::List(neg), 0, badness))
        } else {
            None
        }
    })
}

/// Checks a bank history.
pub(super) fn check(h: &JHistory, opts: &JepsenOptions) -> Value {
    match check_inner(h, opts) {
        Ok(v) => v,
        Err(e) => unknown_error(e),
    }
}

fn check_inner(h: &JHistory, opts: &JepsenOptions) -> Result<Value, String> {
    let reads: Vec<&JOp> = h
        .ops
        .iter()
        .filter(|o| o.is_f("read") && o.op_type == OpType::Ok)
        .collect();
    let not_a_map = |op: &JOp| format!("the read at :index {} is not a map", op.index);
    let first = reads.first().map_or(Ok(&[][..]), |o| {
        entries(o.value()).ok_or_else(|| not_a_map(o))
    })?;
    let accounts: Vec<&Value> = first.iter().map(|(k, _)| k).collect();
    let total = match opts.total_amount {
        Some(t) => t,
        None => sum(&first.iter().map(|(_, v)| v).collect::<Vec<_>>())?,
    };
    let mut groups: Vec<(&'static str, Vec<BankError>)> = Vec::new();
    for op in &reads {
        let es = entries(op.value()).ok_or_else(|| not_a_map(op))?;
        let err = read_error(es, &accounts, total, opts)?;
        if let Some((kind, detail, total, badness)) = err {
            let e = BankError {
                kind,
                op,
                detail,
                total,
                badness,
            };
            match groups.iter_mut().find(|(k, _)| *k == kind) {
                Some((_, es)) => es.push(e),
                None => groups.push((kind, vec![e])),
            }
        }
    }
    // util/min-by and max-by keep the first of equals.
    fn extreme<T>(xs: &[T], better: impl Fn(&T, &T) -> bool) -> &T {
        let mut best = &xs[0];
        for x in &xs[1..] {
            if better(x, best) {
                best = x;
            }
        }
        best
    }
    let first_error = groups
        .iter()
        .map(|(_, es)| &es[0])
        .fold(None::<&BankError>, |best, e| match best {
            Some(b) if b.op.index <= e.op.index => Some(b),
            _ => Some(e),
        })
        .map_or(Value::Nil, BankError::value);
    let error_count: usize = groups.iter().map(|(_, es)| es.len()).sum();
    let errors: Vec<(Value, Value)> = groups
        .iter()
        .map(|(kind, es)| {
            let worst = extreme(es, |a, b| {
                a.badness.partial_cmp(&b.badness) == Some(Ordering::Greater)
            });
            let mut m = vec![
                ("count", Value::Int(es.len() as i64)),
                ("first", es[0].value()),
                ("worst", worst.value()),
                ("last", es[es.len() - 1].value()),
            ];
            if *kind == "wrong-total" {
                m.push(("lowest", extreme(es, |a, b| a.total < b.total).value()));
                m.push(("highest", extreme(es, |a, b| a.total > b.total).value()));
            }
            (Value::kw(kind), Value::kw_map(m))
        })
        .collect();
    Ok(Value::kw_map(vec![
        ("valid?", Value::Bool(groups.is_empty())),
        ("read-count", Value::Int(reads.len() as i64)),
        ("error-count", Value::Int(error_count as i64)),
        ("first-error", first_error),
        ("errors", Value::Map(errors)),
    ]))
}
