//! `jepsen.checker/set-full` (with elle-cli's options: not linearizable):
//! `:add` ops add one element, `:read` ops return the whole set. Per element,
//! from client ops only: *known* (the add's `:ok`, or the first read that
//! saw it), the latest read invocation that saw it (*last present*) and
//! that did not (*last absent*). An element is **stable** if it was last
//! seen after it was last missed, **lost** if it was known and last missed
//! after it was known and after it was last seen, else **never read**.
//! Any lost element makes the history invalid; no stable element at all
//! makes it unknown.
//!
//! Result (a Clojure hash map, printed in its order): `:valid?
//! :attempt-count :stable-count :lost-count :lost :never-read-count
//! :never-read :stale-count :stale :worst-stale`, `:stable-latencies` /
//! `:lost-latencies` (quantiles in ms) when there are any, and
//! `:duplicated-count :duplicated`. Jepsen 0.3.11 keeps an element as
//! duplicated only when it appears *fewer than once* in a read (a slip for
//! "more than once"), so these are always 0 and `{}`; so are ours.

use super::{clj_map, clj_sort, unknown_error, JHistory, JOp};
use crate::edn::{pr_str, Value};
use crate::model::OpType;
use hashbrown::{HashMap, HashSet};

/// Per-element state.
#[derive(Clone, Default)]
struct Element<'a> {
    /// `None` for a completion whose add was never invoked (Jepsen then
    /// holds a bare map, or nil, instead of an element record).
    element: Option<Value>,
    known: Option<&'a JOp>,
    last_present: Option<&'a JOp>,
    last_absent: Option<&'a JOp>,
}

/// Checks a set-full history.
pub(super) fn check(h: &JHistory) -> Value {
    let mut order: Vec<Value> = Vec::new();
    let mut elements: HashMap<Value, Element> = HashMap::new();
    for (i, op) in h.ops.iter().enumerate() {
        if !matches!(op.process(), Value::Int(_)) {
            continue;
        }
        if op.is_f("add") {
            let v = op.value();
            if op.op_type == OpType::Invoke {
                if !elements.contains_key(v) {
                    order.push(v.clone());
                }
                elements.insert(
                    v.clone(),
                    Element {
                        element: Some(v.clone()),
                        ..Element::default()
                    },
                );
            } else {
                let e = elements.entry(v.clone()).or_insert_with(|| {
                    order.push(v.clone());
                    Element::default()
                });
                if op.op_type == OpType::Ok && e.known.is_none() {
                    e.known = Some(op);
                }
            }
        } else if op.is_f("read") && op.op_type == OpType::Ok {
            let Some(inv) = h.invocation(i) else {
                return unknown_error(format!(
                    "the :ok read at :index {} has no invocation",
                    op.index
                ));
            };
            let seen: HashSet<&Value> = match op.value() {
                Value::Nil => HashSet::new(),
                Value::Vector(xs) | Value::List(xs) | Value::Set(xs) => xs.iter().collect(),
                v => {
                    return unknown_error(format!(
                        "the read at :index {} returned {}, not a collection",
                        op.index,
                        pr_str(v)
                    ))
                }
            };
            for (k, e) in elements.iter_mut() {
                if e.element.is_none() {
                    return unknown_error(format!(
                        "element {} completed an add that was never invoked",
                        pr_str(k)
                    ));
                }
                let later = |last: Option<&JOp>| last.is_none_or(|l| l.index < inv.index);
                if seen.contains(k) {
                    e.known = e.known.or(Some(op));
                    if later(e.last_present) {
                        e.last_present = Some(inv);
                    }
                } else if later(e.last_absent) {
                    e.last_absent = Some(inv);
                }
            }
        }
    }
    if let Err(e) = clj_sort(&mut order) {
        return unknown_error(e);
    }
    let results: Vec<ElementResult> = order.iter().map(|k| element_result(&elements[k])).collect();
    aggregate(&results)
}

/// One element's outcome.
struct ElementResult {
    element: Value,
    outcome: &'static str,
    stable_latency: Option<i64>,
    lost_latency: Option<i64>,
    map: Value,
}

fn op_or_nil(op: Option<&JOp>) -> Value {
    op.map_or(Value::Nil, |o| o.map.clone())
}

fn element_result(e: &Element) -> ElementResult {
    let index = |o: Option<&JOp>| o.map_or(-1, |o| o.index);
    let stable = e.last_present.is_some() && index(e.last_absent) < index(e.last_present);
    let lost = e.known.is_some()
        && e.last_absent.is_some()
        && index(e.last_present) < index(e.last_absent)
        && index(e.known) < index(e.last_absent);
    let known_time = e.known.map_or(0, |k| k.time);
    // Latencies in whole ms (Jepsen: (long (/ nanos 1000000))).
    let latency = |from: Option<&JOp>| {
        let t = from.map_or(0, |o| o.time.saturating_add(1));
        t.saturating_sub(known_time).max(0) / 1_000_000
    };
    let stable_latency = stable.then(|| latency(e.last_absent));
    let lost_latency = lost.then(|| latency(e.last_present));
    let outcome = if stable {
        "stable"
    } else if lost {
        "lost"
    } else {
        "never-read"
    };
    let element = e.element.clone().unwrap_or(Value::Nil);
    let opt_int = |x: Option<i64>| x.map_or(Value::Nil, Value::Int);
    let map = Value::kw_map(vec![
        ("element", element.clone()),
        ("outcome", Value::kw(outcome)),
        ("stable-latency", opt_int(stable_latency)),
        ("lost-latency", opt_int(lost_latency)),
        ("known", op_or_nil(e.known)),
        ("last-absent", op_or_nil(e.last_absent)),
    ]);
    ElementResult {
        element,
        outcome,
        stable_latency,
        lost_latency,
        map,
    }
}

/// Jepsen's `frequency-distribution` at 0, 0.5, 0.95, 0.99 and 1, as a
/// sorted map.
fn quantiles(mut xs: Vec<i64>) -> Value {
    xs.sort_unstable();
    let n = xs.len();
    let points: [(Value, f64); 5] = [
        (Value::Int(0), 0.0),
        (Value::Float("0.5".into()), 0.5),
        (Value::Float("0.95".into()), 0.95),
        (Value::Float("0.99".into()), 0.99),
        (Value::Int(1), 1.0),
    ];
    Value::Map(
        points
            .into_iter()
            .map(|(k, p)| {
                let idx = ((n as f64 * p).floor() as usize).min(n - 1);
                (k, Value::Int(xs[idx]))
            })
            .collect(),
    )
}

fn aggregate(rs: &[ElementResult]) -> Value {
    let with = |o: &'static str| rs.iter().filter(move |r| r.outcome == o);
    let sorted_elements = |o: &'static str| -> Result<Value, String> {
        let mut xs: Vec<Value> = with(o).map(|r| r.element.clone()).collect();
        clj_sort(&mut xs)?;
        Ok(Value::List(xs))
    };
    let stale: Vec<&ElementResult> = with("stable")
        .filter(|r| r.stable_latency.is_some_and(|l| l > 0))
        .collect();
    let mut worst = stale.clone();
    worst.sort_by_key(|r| r.stable_latency);
    worst.reverse();
    worst.truncate(8);
    let mut stale_elements: Vec<Value> = stale.iter().map(|r| r.element.clone()).collect();
    let (lost, never_read) = match (
        sorted_elements("lost"),
        sorted_elements("never-read"),
        clj_sort(&mut stale_elements),
    ) {
        (Ok(l), Ok(n), Ok(())) => (l, n),
        (Err(e), _, _) | (_, Err(e), _) | (_, _, Err(e)) => return unknown_error(e),
    };
    let lost_count = with("lost").count();
    let stable_count = with("stable").count();
    let valid = if lost_count > 0 {
        Value::Bool(false)
    } else if stable_count == 0 {
        Value::kw("unknown")
    } else {
        Value::Bool(true)
    };
    let count = |n: usize| Value::Int(n as i64);
    let mut entries = vec![
        ("valid?", valid),
        ("attempt-count", count(rs.len())),
        ("stable-count", count(stable_count)),
        ("lost-count", count(lost_count)),
        ("lost", lost),
        ("never-read-count", count(with("never-read").count())),
        ("never-read", never_read),
        ("stale-count", count(stale.len())),
        ("stale", Value::List(stale_elements)),
        (
            "worst-stale",
            Value::List(worst.iter().map(|r| r.map.clone()).collect()),
        ),
    ];
    let stable_latencies: Vec<i64> = rs.iter().filter_map(|r| r.stable_latency).collect();
    let lost_latencies: Vec<i64> = rs.iter().filter_map(|r| r.lost_latency).collect();
    if !stable_latencies.is_empty() {
        entries.push(("stable-latencies", quantiles(stable_latencies)));
    }
    if !lost_latencies.is_empty() {
        entries.push(("lost-latencies", quantiles(lost_latencies)));
    }
    entries.push(("duplicated-count", Value::Int(0)));
    entries.push(("duplicated", Value::Map(Vec::new())));
    clj_map(entries)
}
