//! `jepsen.tests.long-fork`: write transactions `[[:w k v]]` each write a
//! fresh key once; read transactions read every key of a group of `n` keys
//! (`-g`). Reads of one group must be totally ordered by what they saw (a
//! key only ever goes from `nil` to its value); two reads each seeing a
//! write the other missed are a long fork, forbidden by snapshot isolation.
//!
//! Result: `{:reads-count :early-read-count :late-read-count}` merged with
//! `{:valid? true}`, `{:valid? false, :forks ([read read] …)}` or, when a key
//! is written twice, `{:valid? :unknown, :error [:multiple-writes k]}`. A
//! read of another number of keys than `n`, or two reads seeing different
//! values of one key, is an illegal history: Jepsen throws, so the result is
//! `{:valid? :unknown, :error …}`. Each fork lists its two reads in the
//! order Jepsen's `(vec #{a b})` gives: that of a two-element Clojure hash
//! set, by the ops' record hashes.

use super::{unknown_error, JHistory, JOp};
use crate::edn::order::{clojure_hasheq, clojure_map_order, hamt_key};
use crate::edn::{pr_str, Value};
use crate::model::OpType;
use hashbrown::HashSet;

/// The micro-ops of a transaction value, or `None` if it is not a
/// collection of `[f k v]` vectors (Jepsen would throw).
fn mops(v: &Value) -> Option<Vec<(&Value, &Value, &Value)>> {
    match v {
        Value::Nil => Some(Vec::new()),
        Value::Vector(xs) | Value::List(xs) => xs
            .iter()
            .map(|m| match m {
                Value::Vector(p) | Value::List(p) => Some((
                    p.first().unwrap_or(&Value::Nil),
                    p.get(1).unwrap_or(&Value::Nil),
                    p.get(2).unwrap_or(&Value::Nil),
                )),
                _ => None,
            })
            .collect(),
        _ => None,
    }
}

fn is_kw(v: &Value, name: &str) -> bool {
    matches!(v, Value::Keyword(k) if k == name)
}

/// Checks a long-fork history with group size `n`.
pub(super) fn check(h: &JHistory, n: i64) -> Value {
    match check_inner(h, n) {
        Ok(v) => v,
        Err(e) => unknown_error(e),
    }
}

/// A read as a map from key to value, keys in Clojure's iteration order.
type ReadMap<'a> = Vec<(&'a Value, &'a Value)>;

fn check_inner(h: &JHistory, n: i64) -> Result<Value, String> {
    let not_txn = |op: &JOp| {
        format!(
            "the :value of the op at :index {} is not a transaction: {}",
            op.index,
            pr_str(op.value())
        )
    };
    // Ok read transactions.
    let mut reads: Vec<(&JOp, ReadMap)> = Vec::new();
    for op in h.ops.iter().filter(|o| o.op_type == OpType::Ok) {
        let ms = mops(op.value()).ok_or_else(|| not_txn(op))?;
        if ms.iter().all(|(f, _, _)| is_kw(f, "r")) {
            let mut m: ReadMap = Vec::new();
            for (_, k, v) in ms {
                match m.iter_mut().find(|(k2, _)| *k2 == k) {
                    Some(e) => e.1 = v,
                    None => m.push((k, v)),
                }
            }
            clojure_map_order(&mut m, |(k, _)| clojure_hasheq(k));
            reads.push((op, m));
        }
    }
    let early = reads
        .iter()
        .filter(|(_, m)| m.iter().all(|(_, v)| **v == Value::Nil))
        .count();
    let late = reads
        .iter()
        .filter(|(_, m)| m.iter().all(|(_, v)| **v != Value::Nil))
        .count();
    let mut out = vec![
        ("reads-count", Value::Int(reads.len() as i64)),
        ("early-read-count", Value::Int(early as i64)),
        ("late-read-count", Value::Int(late as i64)),
    ];
    // Multiple writes to one key.
    let mut written: HashSet<&Value> = HashSet::new();
    for op in h.ops.iter().filter(|o| o.op_type == OpType::Invoke) {
        let Some(ms) = mops(op.value()) else {
            return Err(not_txn(op));
        };
        if ms.len() == 1 && is_kw(ms[0].0, "w") && !written.insert(ms[0].1) {
            out.push(("valid?", Value::kw("unknown")));
            out.push((
                "error",
                Value::Vector(vec![Value::kw("multiple-writes"), ms[0].1.clone()]),
            ));
            return Ok(Value::kw_map(out));
        }
    }
    // Groups of reads by the set of keys they read, in group-by's order.
    let mut groups: Vec<(Vec<&Value>, Vec<usize>)> = Vec::new();
    for (i, (_, m)) in reads.iter().enumerate() {
        let mut keys: Vec<&Value> = m.iter().map(|(k, _)| *k).collect();
        keys.sort_by_cached_key(|k| pr_str(k));
        match groups.iter_mut().find(|(ks, _)| *ks == keys) {
            Some((_, rs)) => rs.push(i),
            None => groups.push((keys, vec![i])),
        }
    }
    clojure_map_order(&mut groups, |(ks, _)| {
        clojure_hasheq(&Value::Set(ks.iter().map(|k| (*k).clone()).collect()))
    });
    for (keys, rs) in &groups {
        if keys.len() as i64 != n {
            let set: Vec<String> = keys.iter().map(|k| pr_str(k)).collect();
            return Err(format!(
                "illegal history: every read in this history should have observed exactly {n} keys, but the read at :index {} observed {} instead: #{{{}}}",
                reads[rs[0]].0.index,
                keys.len(),
                set.join(" ")
            ));
        }
    }
    let mut forks = Vec::new();
    for (_, rs) in &groups {
        for (x, &a) in rs.iter().enumerate() {
            for &b in &rs[x + 1..] {
                if reads[a].0.map == reads[b].0.map {
                    continue;
                }
                if compare(&reads[a].1, &reads[b].1)?.is_none() {
                    // (vec #{a b}): the two ops in hash-set order.
                    let (x, y) = (reads[a].0, reads[b].0);
                    let (x, y) = if hamt_key(op_hash(y)) < hamt_key(op_hash(x)) {
                        (y, x)
                    } else {
                        (x, y)
                    };
                    forks.push(Value::Vector(vec![x.map.clone(), y.map.clone()]));
                }
            }
        }
    }
    if forks.is_empty() {
        out.push(("valid?", Value::Bool(true)));
    } else {
        out.push(("valid?", Value::Bool(false)));
        out.push(("forks", Value::List(forks)));
    }
    Ok(Value::kw_map(out))
}

/// The hash of an op as a `jepsen.history.Op` record: the hash of its
/// class name's symbol, xor the map hash of its entries (Clojure's
/// `defrecord` `hasheq`).
fn op_hash(op: &JOp) -> i32 {
    clojure_hasheq(&Value::Symbol("jepsen.history.Op".into())) ^ clojure_hasheq(&op.map)
}

/// Jepsen's `read-compare`: `Some(-1)` if `a` saw more, `Some(1)` if `b`
/// did, `Some(0)` if equal, `None` if each saw something the other missed;
/// an error when both saw different values of one key.
fn compare(a: &ReadMap, b: &ReadMap) -> Result<Option<i32>, String> {
    let mut res = 0;
    for (k, va) in a {
        let vb = b
            .iter()
            .find(|(k2, _)| k2 == k)
            .map(|(_, v)| *v)
            .ok_or_else(|| {
                format!(
                    "illegal history: two reads of key sets that differ at key {}",
                    pr_str(k)
                )
            })?;
        if *va == vb {
            continue;
        }
        if *vb == Value::Nil {
            if res > 0 {
                return Ok(None);
            }
            res = -1;
        } else if **va == Value::Nil {
            if res < 0 {
                return Ok(None);
            }
            res = 1;
        } else {
            return Err(format!(
                "illegal history: two reads saw distinct values for key {} ({} and {}); this checker assumes only one write occurs per key",
                pr_str(k),
                pr_str(va),
                pr_str(vb)
            ));
        }
    }
    Ok(Some(res))
}
