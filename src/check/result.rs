//! Elle's result map (`elle.txn/result-map`).

use crate::consistency as cm;
use crate::edn::order::{clojure_hash_order, clojure_hasheq};
use crate::edn::Value;

/// Which models and anomalies the user expects to hold / not to see.
#[derive(Clone, Debug, Default)]
pub struct Expectations {
    /// Consistency models; `None` means Elle's default (strict-serializable).
    pub models: Option<Vec<&'static str>>,
    /// Extra anomalies to look for.
    pub anomalies: Vec<&'static str>,
}

impl Expectations {
    /// Anomaly types that make a history invalid.
    pub fn prohibited(&self) -> Vec<&'static str> {
        let models = self.models.as_deref();
        cm::prohibited_anomaly_types(models, &self.anomalies)
            .map(|s| s.into_iter().collect())
            .unwrap_or_default()
    }

    /// Whether Elle's set of reportable types is a sorted set (so its result
    /// map lists anomalies in keyword order) rather than a hash set. Elle
    /// unions the anomalies implying `anomalies` into the models' sorted set
    /// only when that set is the larger one.
    pub fn reportable_is_sorted(&self) -> bool {
        if self.anomalies.is_empty() {
            return true;
        }
        let models = self
            .models
            .as_deref()
            .unwrap_or(cm::DEFAULT_CONSISTENCY_MODELS);
        let by_models = cm::anomalies_prohibited_by(models)
            .map(|s| s.len())
            .unwrap_or(0);
        cm::all_anomalies_implying(&self.anomalies).len() < by_models
    }

    /// Anomaly types worth reporting (prohibited ones, plus those that make
    /// a result unknown).
    pub fn reportable(&self) -> Vec<&'static str> {
        let models = self.models.as_deref();
        cm::reportable_anomaly_types(models, &self.anomalies)
            .map(|s| s.into_iter().collect())
            .unwrap_or_default()
    }
}

/// Builds Elle's result map from every anomaly found (type → cases, in the
/// order found).
/// Types listed in `seqs` print their cases as a sequence `(…)`, the others
/// as a vector `[…]`.
pub fn result_map(exp: &Expectations, anomalies: &[(String, Vec<Value>)], seqs: &[&str]) -> Value {
    let prohibited = exp.prohibited();
    let reportable = exp.reportable();
    let mut report: Vec<&(String, Vec<Value>)> = anomalies
        .iter()
        .filter(|(k, _)| reportable.contains(&k.as_str()))
        .collect();
    let types: Vec<&str> = report.iter().map(|(k, _)| k.as_str()).collect();
    let drop = cm::remove_redundant_cycle_exists(&types);
    report.retain(|(k, _)| !drop.contains(k.as_str()));
    if report.is_empty() {
        return Value::Map(vec![(Value::kw("valid?"), Value::Bool(true))]);
    }
    let bad = report.iter().any(|(k, _)| prohibited.contains(&k.as_str()));
    // Elle selects reportable keys, in its reportable set's order, into an
    // array map, which becomes a hash map past 8 entries.
    report.sort_by(|a, b| a.0.cmp(&b.0));
    let sorted_types: Vec<Value> = report.iter().map(|(k, _)| Value::kw(k)).collect();
    if report.len() > 8 || !exp.reportable_is_sorted() {
        clojure_hash_order(&mut report, |(k, _)| clojure_hasheq(&Value::kw(k)));
    }
    let all: Vec<&str> = anomalies.iter().map(|(k, _)| k.as_str()).collect();
    let boundary = cm::friendly_boundary(&all);
    let anomaly_value = |cases: &Vec<Value>, k: &str| {
        if k == "empty-transaction-graph" {
            Value::Bool(true)
        } else if seqs.contains(&k) {
            Value::List(cases.clone())
        } else {
            Value::Vector(cases.clone())
        }
    };
    Value::Map(vec![
        (
            Value::kw("valid?"),
            if bad {
                Value::Bool(false)
            } else {
                Value::kw("unknown")
            },
        ),
        (Value::kw("anomaly-types"), Value::List(sorted_types)),
        (
            Value::kw("anomalies"),
            Value::Map(
                report
                    .iter()
                    .map(|(k, v)| (Value::kw(k), anomaly_value(v, k)))
                    .collect(),
            ),
        ),
        (
            Value::kw("not"),
            Value::Set(boundary.not.iter().map(|m| Value::kw(m)).collect()),
        ),
        (
            Value::kw("also-not"),
            Value::Set(boundary.also_not.iter().map(|m| Value::kw(m)).collect()),
        ),
    ])
}
