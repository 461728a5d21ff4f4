//! Comparing an Elle result with ellery's: verdict, anomaly types, `:not`,
//! `:also-not`, cases per anomaly type, and a unified diff of the two maps
//! in a normalised, line-per-item form.

use crate::edn::{pr_str, Value};
use similar::TextDiff;
use std::collections::BTreeSet;

/// Finds the Elle result inside `v`: `v` itself when it looks like one, or
/// the map under `key` (a `/`-separated path of keyword names, e.g.
/// `workload` or `elle/list-append`), or else the first nested map (in
/// key order, depth first) that carries `:anomaly-types` — as in a Jepsen
/// `results.edn`, where the checker's result sits under its key.
pub fn find_result<'a>(v: &'a Value, key: Option<&str>) -> Option<&'a Value> {
    if let Some(path) = key {
        let mut cur = v;
        for part in path.split('/').filter(|p| !p.is_empty()) {
            let part = part.trim_start_matches(':');
            cur = match cur {
                Value::Map(entries) => entries.iter().find_map(|(k, val)| match k {
                    Value::Keyword(n) | Value::Str(n) if n == part => Some(val),
                    _ => None,
                })?,
                _ => return None,
            };
        }
        return Some(cur);
    }
    fn search(v: &Value) -> Option<&Value> {
        let Value::Map(entries) = v else {
            return None;
        };
        if v.get_kw("anomaly-types").is_some() {
            return Some(v);
        }
        entries.iter().find_map(|(_, val)| search(val))
    }
    search(v).or_else(|| v.get_kw("valid?").map(|_| v))
}

/// What two results say, side by side.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    /// Elle's and ellery's `:valid?`.
    pub verdict: (String, String),
    /// Anomaly types only Elle / only ellery reports.
    pub types: (Vec<String>, Vec<String>),
    /// `:not` models only Elle / only ellery reports.
    pub not: (Vec<String>, Vec<String>),
    /// `:also-not` models only Elle / only ellery reports.
    pub also_not: (Vec<String>, Vec<String>),
    /// Case counts that differ: (type, Elle's count, ellery's count).
    pub counts: Vec<(String, usize, usize)>,
    /// What both report: anomaly types, `:not`, `:also-not`, and the case
    /// counts that agree (shown in the report, so that "same" says what is
    /// the same).
    pub shared: Shared,
    /// Unified diff of the normalised maps (empty when they are equal).
    pub diff: String,
}

/// The items two results share (see [`Comparison::shared`]).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Shared {
    /// Anomaly types both report.
    pub types: Vec<String>,
    /// `:not` models both report.
    pub not: Vec<String>,
    /// `:also-not` models both report.
    pub also_not: Vec<String>,
    /// Case counts both report: (type, count).
    pub counts: Vec<(String, usize)>,
}

/// `only elle: …; only ellery: …; both: …` with the empty parts left out
/// (`none` when all are empty).
fn sides(a: &[String], b: &[String], both: &[String]) -> String {
    let parts: Vec<String> = [("only elle", a), ("only ellery", b), ("both", both)]
        .iter()
        .filter(|(_, xs)| !xs.is_empty())
        .map(|(what, xs)| format!("{what}: {}", xs.join(" ")))
        .collect();
    if parts.is_empty() {
        "none".into()
    } else {
        parts.join("; ")
    }
}

impl Comparison {
    /// Whether the two results agree on verdict, anomaly types, `:not` and
    /// `:also-not` (the cycles themselves may legitimately differ).
    pub fn agrees(&self) -> bool {
        self.verdict.0 == self.verdict.1
            && self.types.0.is_empty()
            && self.types.1.is_empty()
            && self.not.0.is_empty()
            && self.not.1.is_empty()
            && self.also_not.0.is_empty()
            && self.also_not.1.is_empty()
    }

    /// Whether the normalised maps are identical.
    pub fn identical(&self) -> bool {
        self.diff.is_empty()
    }

    /// A human-readable report.
    pub fn report(&self) -> String {
        let mut s = String::new();
        let line = |s: &mut String, what: &str, same: bool, detail: String| {
            let status = if same { "same" } else { "DIFFERENT" };
            s.push_str(&format!("{what:<15}{status:<11}{detail}\n"));
        };
        line(
            &mut s,
            "verdict",
            self.verdict.0 == self.verdict.1,
            format!("elle {}, ellery {}", self.verdict.0, self.verdict.1),
        );
        for (what, (a, b), both) in [
            ("anomaly-types", &self.types, &self.shared.types),
            ("not", &self.not, &self.shared.not),
            ("also-not", &self.also_not, &self.shared.also_not),
        ] {
            let same = a.is_empty() && b.is_empty();
            let detail = if same {
                if both.is_empty() {
                    "none".to_string()
                } else {
                    both.join(" ")
                }
            } else {
                sides(a, b, both)
            };
            line(&mut s, what, same, detail);
        }
        let mut parts: Vec<String> = self
            .counts
            .iter()
            .map(|(t, a, b)| format!("{t}: elle {a}, ellery {b}"))
            .collect();
        parts.extend(self.shared.counts.iter().map(|(t, n)| format!("{t}: {n}")));
        let detail = if parts.is_empty() {
            "none".to_string()
        } else {
            parts.join("; ")
        };
        line(&mut s, "cases", self.counts.is_empty(), detail);
        if !self.diff.is_empty() {
            s.push('\n');
            s.push_str(&self.diff);
        }
        s
    }
}

fn names(v: Option<&Value>) -> BTreeSet<String> {
    match v {
        Some(Value::Vector(xs) | Value::List(xs) | Value::Set(xs)) => xs
            .iter()
            .map(|x| match x {
                Value::Keyword(k) | Value::Str(k) => k.clone(),
                other => pr_str(other),
            })
            .collect(),
        _ => BTreeSet::new(),
    }
}

fn only(a: &BTreeSet<String>, b: &BTreeSet<String>) -> (Vec<String>, Vec<String>) {
    (
        a.difference(b).cloned().collect(),
        b.difference(a).cloned().collect(),
    )
}

fn counts(v: &Value) -> Vec<(String, usize)> {
    match v.get_kw("anomalies") {
        Some(Value::Map(entries)) => entries
            .iter()
            .map(|(k, cases)| {
                let name = match k {
                    Value::Keyword(n) | Value::Str(n) => n.clone(),
                    other => pr_str(other),
                };
                let n = match cases {
                    Value::Vector(xs) | Value::List(xs) => xs.len(),
                    _ => 1,
                };
                (name, n)
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// One line per item: top-level keys in a fixed order, sets sorted, each
/// anomaly case on its own line.
pub fn normalise(v: &Value) -> String {
    let mut out = String::new();
    let Value::Map(entries) = v else {
        return pr_str(v) + "\n";
    };
    let mut keys: Vec<&(Value, Value)> = entries.iter().collect();
    let rank = |k: &Value| match k {
        Value::Keyword(n) => match n.as_str() {
            "valid?" => 0,
            "anomaly-types" => 1,
            "not" => 2,
            "also-not" => 3,
            "anomalies" => 4,
            _ => 5,
        },
        _ => 6,
    };
    keys.sort_by(|a, b| {
        rank(&a.0)
            .cmp(&rank(&b.0))
            .then(pr_str(&a.0).cmp(&pr_str(&b.0)))
    });
    for (k, val) in keys {
        match (k, val) {
            (Value::Keyword(n), Value::Map(anoms)) if n == "anomalies" => {
                let mut anoms: Vec<&(Value, Value)> = anoms.iter().collect();
                anoms.sort_by_key(|(t, _)| pr_str(t));
                for (t, cases) in anoms {
                    match cases {
                        Value::Vector(xs) | Value::List(xs) => {
                            for (i, c) in xs.iter().enumerate() {
                                out.push_str(&format!(
                                    ":anomalies {} #{i} {}\n",
                                    pr_str(t),
                                    pr_str(c)
                                ));
                            }
                        }
                        other => {
                            out.push_str(&format!(":anomalies {} {}\n", pr_str(t), pr_str(other)))
                        }
                    }
                }
            }
            (k, Value::Set(xs) | Value::Vector(xs) | Value::List(xs))
                if rank(k) >= 1 && rank(k) <= 3 =>
            {
                let mut items: Vec<String> = xs.iter().map(pr_str).collect();
                items.sort();
                out.push_str(&format!("{} {}\n", pr_str(k), items.join(" ")));
            }
            (k, v) => out.push_str(&format!("{} {}\n", pr_str(k), pr_str(v))),
        }
    }
    out
}

/// Compares Elle's result with ellery's.
pub fn compare(elle: &Value, ellery: &Value) -> Comparison {
    let verdict = |v: &Value| {
        v.get_kw("valid?")
            .map(pr_str)
            .unwrap_or_else(|| "nil".into())
    };
    let ce = counts(elle);
    let cy = counts(ellery);
    let mut count_diffs = Vec::new();
    let mut shared_counts = Vec::new();
    let all: BTreeSet<&String> = ce.iter().chain(cy.iter()).map(|(t, _)| t).collect();
    for t in all {
        let a = ce.iter().find(|(x, _)| x == t).map_or(0, |(_, n)| *n);
        let b = cy.iter().find(|(x, _)| x == t).map_or(0, |(_, n)| *n);
        if a != b {
            count_diffs.push((t.clone(), a, b));
        } else {
            shared_counts.push((t.clone(), a));
        }
    }
    let both = |k: &str| -> Vec<String> {
        names(elle.get_kw(k))
            .intersection(&names(ellery.get_kw(k)))
            .cloned()
            .collect()
    };
    let (ne, ny) = (normalise(elle), normalise(ellery));
    let diff = if ne == ny {
        String::new()
    } else {
        TextDiff::from_lines(&ne, &ny)
            .unified_diff()
            .context_radius(2)
            .header("elle", "ellery")
            .to_string()
    };
    Comparison {
        verdict: (verdict(elle), verdict(ellery)),
        types: only(
            &names(elle.get_kw("anomaly-types")),
            &names(ellery.get_kw("anomaly-types")),
        ),
        not: only(&names(elle.get_kw("not")), &names(ellery.get_kw("not"))),
        also_not: only(
            &names(elle.get_kw("also-not")),
            &names(ellery.get_kw("also-not")),
        ),
        counts: count_diffs,
        shared: Shared {
            types: both("anomaly-types"),
            not: both("not"),
            also_not: both("also-not"),
            counts: shared_counts,
        },
        diff,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::edn::parse_one;

    fn v(s: &str) -> Value {
        parse_one(s.as_bytes()).expect("edn")
    }

    #[test]
    fn finds_the_checker_result_in_jepsen_results() {
        let results = v("{:valid? false, :stats {:valid? true, :count 3}, :workload {:valid? false, :anomaly-types [:G1c], :not #{:read-committed}}}");
        let found = find_result(&results, None).expect("found");
        assert_eq!(
            found.get_kw("anomaly-types").map(pr_str).as_deref(),
            Some("[:G1c]")
        );
        let by_key = find_result(&results, Some("stats")).expect("found");
        assert_eq!(pr_str(by_key), "{:valid? true, :count 3}");
        let valid = v("{:valid? true}");
        assert_eq!(find_result(&valid, None), Some(&valid));
    }

    #[test]
    fn agreement_ignores_cycle_choice_but_the_diff_shows_it() {
        let a = v("{:valid? false, :anomaly-types (:G1c), :anomalies {:G1c [{:cycle [1 2 1]}]}, :not #{:read-committed}, :also-not #{:serializable}}");
        let b = v("{:valid? false, :anomaly-types (:G1c), :anomalies {:G1c [{:cycle [2 1 2]}]}, :not #{:read-committed}, :also-not #{:serializable}}");
        let c = compare(&a, &b);
        assert!(c.agrees());
        assert!(!c.identical());
        assert!(
            c.diff.contains("-:anomalies :G1c #0 {:cycle [1 2 1]}"),
            "{}",
            c.diff
        );
        assert!(
            c.diff.contains("+:anomalies :G1c #0 {:cycle [2 1 2]}"),
            "{}",
            c.diff
        );
    }

    #[test]
    fn disagreements_are_named() {
        let a = v("{:valid? false, :anomaly-types [:G2-item], :anomalies {:G2-item [1 2]}, :not #{:repeatable-read}, :also-not #{}}");
        let b = v("{:valid? true}");
        let c = compare(&a, &b);
        assert!(!c.agrees());
        assert_eq!(c.verdict, ("false".to_string(), "true".to_string()));
        assert_eq!(c.types, (vec!["G2-item".to_string()], vec![]));
        assert_eq!(c.not, (vec!["repeatable-read".to_string()], vec![]));
        assert_eq!(c.counts, vec![("G2-item".to_string(), 2, 0)]);
        assert!(c
            .report()
            .starts_with("verdict        DIFFERENT  elle false, ellery true\n"));
    }
}
