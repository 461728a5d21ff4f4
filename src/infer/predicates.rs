//! Predicate dependencies for Elle-style inference (`--algorithm infer` on
//! histories with `:rp`/`:wp` micro-ops, issue 18), where they are certain.
//!
//! The inference reads the history's item view
//! (`crate::check::sat::inference_view`): a returned row is a read of
//! its value, a `:wp` writes its value to the rows it matched, and an
//! unreturned row whose version is certain (every value written to the key
//! matches, so only the initial `nil` does not) is a read of `nil`. With
//! unique values these give wr edges and, through the version orders, rw
//! edges exactly as item reads do. Edges whose reason is a predicate's view
//! of a key are explained as predicate steps, so the cycles through them
//! are Adya's `G-single`, `G-nonadjacent`, `G2` (no `-item`;
//! [`crate::check::classify`]).
//!
//! Not inferred: an unreturned row that leaves several versions possible
//! (Vbox's unknown θ-read: a choice, which only the exact checker makes).
//! So the inference may accept a history the exact checker rejects (Vbox's
//! figure 1), as it does for item histories whose version orders it cannot
//! infer.

use super::rw_register::{self, RwOptions};
use super::txn::ExtraGraph;
use super::{Inference, PairExplainer, Refusal, Step, StepKind, StepText};
use crate::edn::Value;
use crate::model::{Atom, History, MopArg, MopFn, OpType, OpValue};

/// Explains a pair as the rw-register explainer does, then restates a wr
/// step into a predicate's view, or an rw step out of one, as a predicate
/// step.
struct PredicateExplainer<'h> {
    /// The history with its predicate micro-ops.
    original: &'h History,
    /// Per micro-op of the item view, the predicate micro-op it came from.
    origin: Vec<Option<u32>>,
    inner: Vec<Box<dyn PairExplainer>>,
}

impl PairExplainer for PredicateExplainer<'_> {
    fn prepare(&self, view: &History) {
        for e in &self.inner {
            e.prepare(view);
        }
    }

    fn explain(&self, view: &History, a: u32, b: u32) -> Option<Step> {
        let step = self.inner.iter().find_map(|e| e.explain(view, a, b))?;
        let (reader, writer) = match step.kind {
            StepKind::Wr => (b, a),
            StepKind::Rw => (a, b),
            _ => return Some(step),
        };
        let Some(key) = step.data.get_kw("key") else {
            return Some(step);
        };
        // The reader's first micro-op on the key made its external read.
        let op = &view.ops[reader as usize];
        let OpValue::Mops { start, .. } = op.value else {
            return Some(step);
        };
        let Some((i, m)) = view
            .mops(op)
            .iter()
            .enumerate()
            .find(|(_, m)| view.atom_value(m.key()) == *key)
        else {
            return Some(step);
        };
        let (Some(p), MopFn::Read) = (self.origin[start as usize + i], m.f()) else {
            return Some(step);
        };
        let atom = |arg: MopArg| match arg {
            MopArg::Atom(a) => Some(a),
            _ => None,
        };
        let value = atom(m.arg());
        Some(match step.kind {
            StepKind::Wr => wr_step(self.original, m.key(), value, p),
            _ => {
                // The writer's final write of the key.
                let later: Option<Option<Atom>> = view
                    .mops(&view.ops[writer as usize])
                    .iter()
                    .rev()
                    .find(|w| w.f() == MopFn::Write && w.key() == m.key())
                    .map(|w| atom(w.arg()));
                let Some(later) = later else {
                    return Some(step);
                };
                rw_step(self.original, m.key(), value, later, p)
            }
        })
    }
}

/// The rw-register inference of a history with predicate micro-ops: its
/// inference on `view` (from `crate::check::sat::inference_view`, with
/// `origin`), whose explanations name the predicates of `h`. Check with
/// `view` as the history (it prints ops from `h`'s source text).
pub fn analyze<'h>(
    h: &'h History,
    view: &History,
    origin: Vec<Option<u32>>,
    extra: ExtraGraph,
    opts: &RwOptions,
) -> Result<Inference<'h>, Refusal> {
    let inner = rw_register::analyze(view, extra, opts)?;
    let mut anomalies = inner.anomalies;
    anomalies.add_seq_nonempty("internal", internal_cases(h));
    Ok(Inference {
        edges: inner.edges,
        order: inner.order,
        anomalies,
        vertices: inner.vertices,
        explainers: vec![Box::new(PredicateExplainer {
            original: h,
            origin,
            inner: inner.explainers,
        })],
    })
}

/// Predicate micro-ops that contradict their own transaction: a returned
/// row the predicate does not match, a row the transaction wrote or read
/// earlier that the predicate should have returned (or matched) and did
/// not, or one it returned (matched) although the earlier value does not
/// match. Elle's `internal` case shape, with the key and the value known
/// before (`:expected`), one case per op.
pub(crate) fn internal_cases(h: &History) -> Vec<Value> {
    let mut out = Vec::new();
    // The transaction's keys so far with their values, in first-touch
    // order, and each key's place in it; the rows of the predicate at hand.
    // Sets, as a table scan's rows are many; reused from op to op.
    let mut state: Vec<(Atom, Option<Atom>)> = Vec::new();
    let mut slot: hashbrown::HashMap<Atom, usize> = hashbrown::HashMap::new();
    let mut rows: hashbrown::HashSet<Atom> = hashbrown::HashSet::new();
    let set = |state: &mut Vec<(Atom, Option<Atom>)>,
               slot: &mut hashbrown::HashMap<Atom, usize>,
               k: Atom,
               v: Option<Atom>| match slot.get(&k) {
        Some(&j) => state[j].1 = v,
        None => {
            slot.insert(k, state.len());
            state.push((k, v));
        }
    };
    let value = |v: Option<Atom>| v.map_or(Value::Nil, |a| h.atom_value(a));
    for (i, op) in h.ops.iter().enumerate() {
        if op.op_type != OpType::Ok {
            continue;
        }
        state.clear();
        slot.clear();
        'mops: for m in h.mops(op) {
            let MopArg::Pred(p) = m.arg() else {
                let v = match m.arg() {
                    MopArg::Atom(a) => Some(a),
                    _ => None,
                };
                set(&mut state, &mut slot, m.key(), v);
                continue;
            };
            let p = &h.predicates[p as usize];
            let holds = |v: Option<Atom>| p.pred.matches(v.map(|a| h.atom_value(a)).as_ref());
            let case = |k: Atom, v: Option<Atom>, what: &str| {
                Value::kw_map(vec![
                    ("op", h.op_value(i)),
                    ("mop", h.mop_value(m)),
                    ("key", h.atom_value(k)),
                    ("expected", value(v)),
                    ("predicate", Value::Str(what.to_string())),
                ])
            };
            for &(k, v) in p.rows.iter().filter(|_| p.write.is_none()) {
                if !holds(v) {
                    out.push(case(k, v, "returned a row the predicate does not match"));
                    break 'mops;
                }
            }
            rows.clear();
            rows.extend(p.rows.iter().map(|r| r.0));
            for &(k, v) in state.iter().filter(|s| p.ranges_over(s.0)) {
                let listed = rows.contains(&k);
                if listed != holds(v) {
                    let what = if listed {
                        "returned or matched a row whose value, as its transaction knew it, does not match"
                    } else {
                        "missed a row whose value, as its transaction knew it, matches"
                    };
                    out.push(case(k, v, what));
                    break 'mops;
                }
            }
            for &(k, v) in &p.rows {
                set(&mut state, &mut slot, k, p.write.unwrap_or(v));
            }
        }
    }
    out
}

/// The predicate micro-op and whether it returned / matched `key`.
fn listed(h: &History, pred: u32, key: Atom) -> (Value, bool, bool) {
    let p = &h.predicates[pred as usize];
    (
        p.form.clone(),
        p.rows.iter().any(|r| r.0 == key),
        p.write.is_some(),
    )
}

/// A wr step into a predicate read: `b`'s predicate saw `a`'s version
/// `key = value` (returned it, matched it, or did not return it).
pub(crate) fn wr_step(h: &History, key: Atom, value: Option<Atom>, pred: u32) -> Step {
    let (form, listed, write) = listed(h, pred, key);
    let (k, v, f) = (
        crate::edn::pr_str(&h.atom_value(key)),
        crate::edn::pr_str(&value.map_or(Value::Nil, |a| h.atom_value(a))),
        crate::edn::pr_str(&form),
    );
    let verb = if write { "write" } else { "read" };
    let template = match (listed, write) {
        (true, false) => format!("{{a}} wrote {k} = {v}, which {{b}}'s predicate read {f} returned"),
        (true, true) => format!(
            "{{b}}'s predicate write {f} matched {k} in the version {{a}} wrote, {k} = {v}"
        ),
        (false, _) => format!(
            "{{b}}'s predicate {verb} {f} did not return {k}, so it saw a version the predicate does not match: {{a}}'s {k} = {v}"
        ),
    };
    Step {
        kind: StepKind::Wr,
        data: Value::kw_map(vec![
            ("type", Value::kw("wr")),
            ("key", h.atom_value(key)),
            ("value", value.map_or(Value::Nil, |a| h.atom_value(a))),
            ("predicate", form),
            ("returned", Value::Bool(listed)),
        ]),
        text: StepText::Predicate { template },
    }
}

/// An rw step out of a predicate read: `a`'s predicate saw `key = value`
/// (returned, matched or missed), and `b` wrote the later version `value2`.
pub(crate) fn rw_step(
    h: &History,
    key: Atom,
    value: Option<Atom>,
    value2: Option<Atom>,
    pred: u32,
) -> Step {
    let (form, listed, write) = listed(h, pred, key);
    let p = &h.predicates[pred as usize];
    let atom = |v: Option<Atom>| v.map_or(Value::Nil, |a| h.atom_value(a));
    let (k, v, v2, f) = (
        crate::edn::pr_str(&h.atom_value(key)),
        crate::edn::pr_str(&atom(value)),
        crate::edn::pr_str(&atom(value2)),
        crate::edn::pr_str(&form),
    );
    let verb = if write { "write" } else { "read" };
    let would = p.pred.matches(value2.map(|a| h.atom_value(a)).as_ref());
    let template = match (listed, would) {
        (false, true) => format!(
            "{{a}}'s predicate {verb} {f} missed {k} (it saw {k} = {v}), and {{b}} set it to {v2}, which the predicate matches: {{b}}'s version came later"
        ),
        (false, false) => format!(
            "{{a}}'s predicate {verb} {f} did not return {k} (it saw {k} = {v}), and {{b}} set it to {v2}, a later version"
        ),
        (true, _) => format!(
            "{{a}}'s predicate {verb} {f} returned {k} = {v}, and {{b}} set it to {v2}, a later version"
        ),
    };
    Step {
        kind: StepKind::Rw,
        data: Value::kw_map(vec![
            ("type", Value::kw("rw")),
            ("key", h.atom_value(key)),
            ("value", atom(value)),
            ("value'", atom(value2)),
            ("predicate", form),
            ("returned", Value::Bool(listed)),
        ]),
        text: StepText::Predicate { template },
    }
}

#[cfg(test)]
mod tests {
    use super::internal_cases;
    use crate::edn::{pr_str, Value};
    use crate::model::Format;

    /// `(key, expected, what)` of each internal case of `text`'s ops.
    fn cases(text: &str) -> Vec<(String, String, String)> {
        let h = crate::read::read_history_bytes(text.as_bytes().to_vec(), "t", Format::Edn)
            .expect("reads");
        internal_cases(&h)
            .iter()
            .map(|c| {
                let get = |k: &str| c.get_kw(k).cloned().unwrap_or(Value::Nil);
                let what = match get("predicate") {
                    Value::Str(s) => s,
                    v => pr_str(&v),
                };
                (pr_str(&get("key")), pr_str(&get("expected")), what)
            })
            .collect()
    }

    fn op(process: u32, index: u32, mops: &str) -> String {
        format!(
            "{{:index {index} :type :invoke :process {process} :f :txn :value [{mops}]}}\n\
             {{:index {} :type :ok :process {process} :f :txn :value [{mops}]}}\n",
            index + 1
        )
    }

    /// A predicate that misses a row its transaction knows matches, or
    /// lists one it knows does not, contradicts the transaction; one that
    /// agrees does not. Short and long (a table's worth of rows) alike.
    #[test]
    fn predicates_contradicting_their_transaction_are_internal() {
        let missed = "missed a row whose value, as its transaction knew it, matches";
        let listed =
            "returned or matched a row whose value, as its transaction knew it, does not match";
        let text = op(0, 0, "[:w :x 1] [:rp [:= 1] {}]")
            + &op(1, 2, "[:w :y 2] [:wp [:= 1] 5 [:y]]")
            + &op(2, 4, "[:w :z 1] [:rp [:= 1] {:z 1}]");
        assert_eq!(
            cases(&text),
            vec![
                (":x".into(), "1".into(), missed.into()),
                (":y".into(), "2".into(), listed.into()),
            ]
        );
        // A :wp sets 40 keys to 5; the :rp after it returns all but key 17.
        let keys: Vec<String> = (0..40).map(|k| k.to_string()).collect();
        let result: Vec<String> = (0..40)
            .filter(|&k| k != 17)
            .map(|k| format!("{k} 5"))
            .collect();
        let mops = format!(
            "[:wp [:all] 5 [{}]] [:rp [:= 5] {{{}}}]",
            keys.join(" "),
            result.join(" ")
        );
        assert_eq!(
            cases(&op(0, 0, &mops)),
            vec![("17".into(), "5".into(), missed.into())]
        );
        let all: Vec<String> = (0..40).map(|k| format!("{k} 5")).collect();
        let mops = format!(
            "[:wp [:all] 5 [{}]] [:rp [:= 5] {{{}}}]",
            keys.join(" "),
            all.join(" ")
        );
        assert_eq!(cases(&op(0, 0, &mops)), vec![]);
    }
}
