//! `--algorithm sat` answers in Elle's vocabulary: the result map for
//! `-m rw-register` histories, for every model Elle's lattice knows.
//!
//! A model forbids a set of anomaly types (Elle's `prohibited-anomaly-types`).
//! The cycle types among them come in three variants (plain, `-process`,
//! `-realtime`), and each variant forbids, in the graph with that variant's
//! orders, the cycles of one [`Isolation`] class: G2-item → serializable,
//! G-nonadjacent-item → snapshot isolation, G-single-item → consistent view,
//! G1c → read committed, G0 → read uncommitted. A history is valid when one
//! resolution of its choices (read-from, version order, which `:info`
//! transactions committed) meets every variant's class at once and has no
//! forbidden non-cycle anomaly. Every single model Elle names asks for one
//! class (the variants it forbids are implied by the strongest one); only
//! some lists of several models ask for two, and then ellery decides each
//! alone and the strongest with all orders: invalid if one is violated,
//! valid if the strongest holds, else unknown.
//!
//! The non-cycle anomalies: `internal` (a fact of one transaction), `G1a`
//! and `G1b` ([`super::facts`]: a read no committed final write explains),
//! and below consistent view `lost-update` (two readers of the same
//! version that both write it), which the solver avoids where it can.

use super::{
    check_with_predicates, classify_cycle, predicates, reg_history_with_predicates,
    verify_cycle_with, CycleEdge, EdgeKind, Isolation, RegHistory, RegValue, RwMop, SatOptions,
    Verdict, Violation,
};
use crate::check::outcome::{CheckOptions, Outcome, Validity};
use crate::check::ExplainedCycle;
use crate::edn::Value;
use crate::model::{Atom, History};

/// One class of forbidden cycles in the graph with some orders.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Constraint {
    /// Which cycles are forbidden.
    pub isolation: Isolation,
    /// With each process's order.
    pub session_order: bool,
    /// With real-time order (and session order).
    pub real_time: bool,
}

impl Constraint {
    /// Whether every cycle `other` forbids, `self` forbids too.
    fn implies(self, other: Constraint) -> bool {
        self.isolation >= other.isolation
            && self.session_order >= other.session_order
            && self.real_time >= other.real_time
    }
}

/// The constraints a set of prohibited anomaly types asks for, none implied
/// by another (strongest class first). Empty when no cycle is forbidden.
pub fn constraints(prohibited: &[&str]) -> Vec<Constraint> {
    let class = |suffix: &str| -> Option<Isolation> {
        let has = |t: &str| prohibited.contains(&format!("{t}{suffix}").as_str());
        [
            ("G2-item", Isolation::Serializable),
            ("G-nonadjacent-item", Isolation::SnapshotIsolation),
            ("G-single-item", Isolation::ConsistentView),
            ("G1c", Isolation::ReadCommitted),
            ("G0", Isolation::ReadUncommitted),
        ]
        .into_iter()
        .find(|(t, _)| has(t))
        .map(|(_, c)| c)
    };
    let all: Vec<Constraint> = [
        ("", false, false),
        ("-process", true, false),
        ("-realtime", true, true),
    ]
    .into_iter()
    .filter_map(|(suffix, session_order, real_time)| {
        class(suffix).map(|isolation| Constraint {
            isolation,
            session_order,
            real_time,
        })
    })
    .collect();
    let mut out: Vec<Constraint> = Vec::new();
    for (i, &c) in all.iter().enumerate() {
        let implied = all
            .iter()
            .enumerate()
            .any(|(j, &d)| j != i && d.implies(c) && (d != c || j < i));
        if !implied {
            out.push(c);
        }
    }
    out
}

/// Cycle conflicts each stronger-model attempt may raise per independent
/// part before the requested model is solved as asked. Valid histories
/// rarely need many under the stronger orders (VeriStrong's HD-10k with
/// session order: a few hundred), and giving up early bounds what an
/// attempt costs a history that is valid only under the weaker model.
pub const STRONGER_ATTEMPT_CONFLICTS: usize = 5_000;

/// Stronger constraints to try before `c`, most constrained first (issue
/// 22 §5). A resolution that meets a stronger constraint meets `c` (it
/// forbids every cycle `c` forbids, and the resolutions and non-cycle
/// anomalies do not depend on the constraint), so "valid" carries over,
/// and their extra orders (each process's order; real time, when
/// `real_time` says the history records it) fix most version orders, which
/// the solver then no longer has to choose: VeriStrong's BL-10k is decided
/// under `serializable` in a fraction of a second that way instead of 14 s,
/// and HD-10k instead of not at all. "Invalid" does not carry over: `c`
/// is then solved as asked.
fn stronger_attempts(c: Constraint, real_time: bool) -> Vec<Constraint> {
    if c.isolation == Isolation::ReadUncommitted {
        // Decided without a search.
        return Vec::new();
    }
    let strongest = |real_time| Constraint {
        isolation: Isolation::Serializable,
        session_order: true,
        real_time,
    };
    let mut out: Vec<Constraint> = Vec::new();
    for s in [strongest(c.real_time || real_time), strongest(c.real_time)] {
        if s != c && !out.contains(&s) {
            debug_assert!(s.implies(c));
            out.push(s);
        }
    }
    out
}

/// The first of `attempts` under which `rh` is valid, with that verdict
/// (its serial order), each solved with `base`'s options but its own
/// orders, within its share of the timeout and
/// [`STRONGER_ATTEMPT_CONFLICTS`]; `None` when none is (which says
/// nothing of the requested constraint).
fn stronger_that_holds(
    rh: &RegHistory,
    preds: &predicates::PredTable,
    base: &SatOptions,
    attempts: &[Constraint],
    opts: &CheckOptions,
    origin: &str,
) -> Option<(Constraint, Verdict)> {
    let share = attempts.len() as u32 + 1;
    attempts.iter().copied().find_map(|s| {
        let attempt = SatOptions {
            isolation: s.isolation,
            session_order: s.session_order,
            real_time: s.real_time,
            timeout: opts.sat_timeout.map(|t| t / share),
            conflict_budget: Some(
                STRONGER_ATTEMPT_CONFLICTS.min(opts.sat_conflict_budget.unwrap_or(usize::MAX)),
            ),
            lost_update: false,
            // A projection can only refute, which an attempt cannot use.
            projection: super::Projection::Off,
            ..*base
        };
        let (verdict, stats) = check_with_predicates(rh, preds, &attempt);
        opts.say(|| format!("{origin}: algorithm sat, via {s:?}: {stats:?}"));
        matches!(verdict, Verdict::Valid(_)).then_some((s, verdict))
    })
}

fn requested(opts: &CheckOptions) -> Vec<Constraint> {
    constraints(&opts.expectations.prohibited())
}

/// Whether `--algorithm sat` decides `opts`'s models with one constraint
/// (every single model; see the module doc for lists of several).
pub fn decides(opts: &CheckOptions) -> bool {
    requested(opts).len() <= 1
}

/// Whether the exact check for `opts` includes each process's order.
/// Without it, far fewer orders are known and the search is much harder (a
/// generated 50,000-transaction history: 9 s instead of well under 1 s).
pub fn orders_sessions(opts: &CheckOptions) -> bool {
    requested(opts).iter().any(|c| c.session_order)
}

/// The strongest class `opts` forbids anywhere (`None`: no cycle at all).
pub fn strongest(opts: &CheckOptions) -> Option<Isolation> {
    requested(opts).iter().map(|c| c.isolation).max()
}

/// `--algorithm sat` for `-m rw-register`: Elle's result map for the
/// models and anomalies in `opts`, decided exactly.
pub fn check_history(
    h: &History,
    opts: &CheckOptions,
) -> Result<Outcome, crate::error::InputError> {
    // Long (over 120 lines): one pass from Elle's options to Elle's result map
    // (facts, solving per model class, joint check, report); its steps
    // share many locals and read in order.
    let prohibited = opts.expectations.prohibited();
    let wanted = constraints(&prohibited);
    let real_time = wanted.iter().any(|c| c.real_time);
    let time_window = !wanted.is_empty() && wanted.iter().all(|c| c.real_time);
    let with_predicates = h.has_predicates();
    // The stronger-model attempts may order transactions in real time when
    // the history records it, so its predecessors are computed then too.
    let attempts_real_time = !with_predicates
        && opts.real_time_recorded
        && wanted
            .iter()
            .any(|&c| !stronger_attempts(c, true).is_empty());
    let (rh, atoms, preds) =
        reg_history_with_predicates(h, real_time || attempts_real_time, time_window)
            .map_err(|e| input_error(h, format!("--algorithm sat: {e}")))?;
    // Predicate micro-ops' returned rows are reads and their matched rows
    // writes for the facts (dirty reads, internal consistency).
    let mut items = with_predicates.then(|| predicates::item_view(h));
    let hi = items.as_ref().unwrap_or(h);
    // Facts that hold in every resolution, in Elle's shapes.
    let mut anomalies: Vec<(String, Vec<Value>)> = Vec::new();
    let mut seqs: Vec<&str> = Vec::new();
    let facts = super::facts::facts(hi);
    let mut internal = crate::infer::rw_register::internal_cases(hi);
    if with_predicates {
        internal.extend(crate::infer::predicates::internal_cases(h));
    }
    for (kind, cases) in [
        ("internal", internal),
        ("G1a", facts.g1a),
        ("G1b", facts.g1b),
    ] {
        if !cases.is_empty() {
            anomalies.push((kind.to_string(), cases));
            seqs.push(kind);
        }
    }
    if !facts.lost_updates.is_empty() {
        anomalies.push(("lost-update".to_string(), facts.lost_updates));
    }
    // Only the facts needed the item view.
    items.take();
    // A serial witness (completion order replays) satisfies every model at
    // once: no polygraph needed (issue 23).
    let witnessed = !with_predicates && {
        use crate::check::witness::{by_completion, replay, Orders};
        replay(h, &by_completion(h), Orders { real_time }).is_ok()
    };
    if witnessed {
        opts.say(|| {
            format!(
                "{}: algorithm sat: confirmed by a serial witness (completion order); no SAT search needed",
                h.origin
            )
        });
    }
    // Set when a polygraph would not fit the memory budget.
    let over_budget = std::cell::Cell::new(false);
    let solve = |c: Constraint| {
        if witnessed {
            return Verdict::Valid(Vec::new());
        }
        if c.isolation == Isolation::ReadUncommitted {
            // Only ww cycles count, and the version orders are free: order
            // every key's writers as the (acyclic) session and real-time
            // orders allow.
            return Verdict::Valid(Vec::new());
        }
        let sat_opts = SatOptions {
            isolation: c.isolation,
            session_order: c.session_order,
            real_time: c.real_time,
            timeout: opts.sat_timeout,
            conflict_budget: opts.sat_conflict_budget,
            projection: opts.sat_projection,
            skip_internal: true,
            skip_unexplained: true,
            lost_update: prohibited.contains(&"lost-update")
                && c.isolation < Isolation::ConsistentView,
            ..SatOptions::default()
        };
        if with_predicates
            && !matches!(
                c.isolation,
                Isolation::Serializable | Isolation::SnapshotIsolation
            )
        {
            // Predicate reads are decided for serializability and
            // snapshot isolation only: say unknown rather than guess.
            return Verdict::Unknown;
        }
        let started = std::time::Instant::now();
        if !with_predicates {
            let attempts = stronger_attempts(c, attempts_real_time);
            if let Some((s, verdict)) =
                stronger_that_holds(&rh, &preds, &sat_opts, &attempts, opts, &h.origin)
            {
                opts.say(|| {
                    format!(
                        "{}: algorithm sat: valid under the stronger {s:?}, so under {c:?}",
                        h.origin
                    )
                });
                return verdict;
            }
        }
        // The attempts spent part of `--sat-timeout`: the whole check
        // stays within it.
        let sat_opts = SatOptions {
            timeout: opts
                .sat_timeout
                .map(|t| t.saturating_sub(started.elapsed())),
            ..sat_opts
        };
        let (verdict, stats) = check_with_predicates(&rh, &preds, &sat_opts);
        opts.say(|| format!("{}: algorithm sat, {c:?}: {stats:?}", h.origin));
        if let Some(why) = &stats.over_budget {
            over_budget.set(true);
            opts.say(|| format!("{}: algorithm sat, {c:?}: unknown: {why}", h.origin));
        }
        // The last conflict is the counterexample; with repeated values it
        // can be write-order steps alone that no resolution has. Another
        // search order usually ends on a cycle of one resolution.
        if let Verdict::Invalid(Violation::Cycle(cycle)) = &verdict {
            if verify_cycle_with(&rh, &preds, cycle).is_err() {
                // Without the 2-width clauses every refutation ends on a
                // theory conflict, i.e. a cycle of the graph.
                let again = SatOptions {
                    polarity: crate::check::sat::Polarity::Solver,
                    prune: false,
                    two_width: false,
                    ..sat_opts
                };
                let (retry, _) = check_with_predicates(&rh, &preds, &again);
                if let Verdict::Invalid(Violation::Cycle(c2)) = &retry {
                    if verify_cycle_with(&rh, &preds, c2).is_ok() {
                        opts.say(|| format!("{}: counterexample from a second search", h.origin));
                        return retry;
                    }
                }
            }
        }
        verdict
    };
    let mut verdicts: Vec<Verdict> = wanted.iter().map(|&c| solve(c)).collect();
    let mut unknown_cause = match over_budget.get() {
        true => "memory-budget",
        false => "timeout",
    };
    let unsupported = with_predicates
        && wanted.iter().any(|c| {
            !matches!(
                c.isolation,
                Isolation::Serializable | Isolation::SnapshotIsolation | Isolation::ReadUncommitted
            )
        });
    if unsupported {
        unknown_cause = "predicates-unsupported-model";
    }
    if wanted.len() > 1 && verdicts.iter().all(|v| matches!(v, Verdict::Valid(_))) {
        // Each holds alone; the strongest class with every order holding
        // means one resolution meets them all.
        let joint = Constraint {
            isolation: wanted.iter().map(|c| c.isolation).max().expect("several"),
            session_order: true,
            real_time,
        };
        if !matches!(solve(joint), Verdict::Valid(_)) {
            unknown_cause = "undecided-model-combination";
            verdicts.push(Verdict::Unknown);
        }
    }
    let verdict = verdicts
        .iter()
        .find(|v| matches!(v, Verdict::Invalid(_)))
        .or_else(|| verdicts.iter().find(|v| matches!(v, Verdict::Unknown)))
        .cloned()
        .unwrap_or(Verdict::Valid(Vec::new()));
    let mut cycles = Vec::new();
    let mut validity = Validity::Valid;
    match verdict {
        Verdict::Valid(_) => {}
        Verdict::Unknown => validity = Validity::Unknown,
        // Reported by the facts above (the solver skipped them), except
        // disagreements a predicate takes part in, which only the solver
        // sees.
        Verdict::Invalid(Violation::Internal { txn, key }) => {
            if !anomalies.iter().any(|(k, _)| k == "internal") {
                anomalies.push((
                    "internal".to_string(),
                    vec![Value::kw_map(vec![
                        ("op", h.op_value(rh[txn as usize - 1].index as usize)),
                        ("key", h.atom_value(atoms[key as usize])),
                        (
                            "predicate",
                            Value::Str(
                                "no single version of the key fits what the transaction saw of it"
                                    .into(),
                            ),
                        ),
                    ])],
                ));
                seqs.push("internal");
            }
        }
        Verdict::Invalid(Violation::Unwritten { .. }) => {}
        Verdict::Invalid(Violation::PredicateUnexplained { txn, key, pred }) => {
            let pos = rh[txn as usize - 1].index as usize;
            let mop = h
                .mops(&h.ops[pos])
                .iter()
                .find(|m| m.arg() == crate::model::MopArg::Pred(pred))
                .map_or(Value::Nil, |m| h.mop_value(m));
            anomalies.push((
                "G1a".to_string(),
                vec![Value::kw_map(vec![
                    ("op", h.op_value(pos)),
                    ("mop", mop),
                    ("key", h.atom_value(atoms[key as usize])),
                    ("writer", Value::Nil),
                ])],
            ));
        }
        Verdict::Invalid(Violation::LostUpdate { .. })
            if anomalies.iter().any(|(k, _)| k == "lost-update") => {}
        Verdict::Invalid(Violation::LostUpdate { key, value, txns }) => {
            let val = |v: RegValue| v.map_or(Value::Nil, |x| h.atom_value(atoms[x as usize]));
            let ops = txns
                .iter()
                .map(|&t| h.op_value(rh[t as usize - 1].index as usize))
                .collect();
            anomalies.push((
                "lost-update".to_string(),
                vec![Value::kw_map(vec![
                    ("key", h.atom_value(atoms[key as usize])),
                    ("value", val(value)),
                    ("txns", Value::Vector(ops)),
                ])],
            ));
        }
        Verdict::Invalid(Violation::Cycle(c)) => {
            // A cycle the history does not justify would be a solver bug:
            // say so instead of claiming an anomaly.
            if let Err(why) = verify_cycle_with(&rh, &preds, &c) {
                // The solver's last conflict is no counterexample of one
                // resolution (e.g. write-order literals alone). The facts
                // found above may still prove the verdict; otherwise the
                // result says `:cause :unverified-cycle`, the detail goes to
                // the trace (`--verbose`).
                opts.say(|| format!("{}: unverified SAT cycle: {why}", h.origin));
                let prohibited = opts.expectations.prohibited();
                if !anomalies
                    .iter()
                    .any(|(k, _)| prohibited.contains(&k.as_str()))
                {
                    validity = Validity::Unknown;
                    unknown_cause = "unverified-cycle";
                }
            } else {
                let cycle = explain(h, &rh, &atoms, &c);
                anomalies.push((cycle.kind.clone(), vec![cycle.to_value(h)]));
                cycles.push(cycle);
            }
        }
    }
    let result = match validity {
        Validity::Unknown => Value::kw_map(vec![
            ("valid?", Value::kw("unknown")),
            ("cause", Value::kw(unknown_cause)),
        ]),
        _ => crate::check::result::result_map(&opts.expectations, &anomalies, &seqs),
    };
    let reportable = opts.expectations.reportable();
    cycles.retain(|c| reportable.contains(&c.kind.as_str()));
    let plots = match opts.plot_max_bytes {
        Some(max) => cycles
            .iter()
            .map(|c| (format!("{}/0", c.kind), cycle_dot(h, c, max)))
            .collect(),
        None => Vec::new(),
    };
    Ok(Outcome {
        cycles,
        plots,
        ..Outcome::from_result(result)
    })
}

/// A solver cycle as Elle explains cycles: transactions by op position,
/// steps with Elle's maps and sentences, and the anomaly type.
fn explain(h: &History, rh: &RegHistory, atoms: &[Atom], cycle: &[CycleEdge]) -> ExplainedCycle {
    use crate::infer::order_graphs::{ProcessExplainer, RealtimeExplainer};
    use crate::infer::rw_register::{version_step, wr_step};
    use crate::infer::{PairExplainer, StepKind};
    let pos = |id: u32| rh[id as usize - 1].index as u32;
    let val = |v: RegValue| v.map(|x| atoms[x as usize]);
    // The value transaction `t` finally wrote to `k` (nil for T⊥).
    let final_write = |t: u32, k: u64| -> Option<Atom> {
        if t == 0 {
            return None;
        }
        rh[t as usize - 1]
            .ops
            .iter()
            .rev()
            .find_map(|o| match *o {
                RwMop::Write(kk, v) if kk == k => Some(val(v)),
                _ => None,
            })
            .flatten()
    };
    let steps = cycle
        .iter()
        .map(|e| {
            let (a, b) = (pos(e.from), pos(e.to));
            match e.kind {
                EdgeKind::Wr { key, value } => wr_step(h, a, b, atoms[key as usize], val(value)),
                EdgeKind::Ww { key } => version_step(
                    h,
                    a,
                    b,
                    StepKind::Ww,
                    atoms[key as usize],
                    final_write(e.from, key),
                    final_write(e.to, key),
                ),
                EdgeKind::Rw { key, via } => version_step(
                    h,
                    a,
                    b,
                    StepKind::Rw,
                    atoms[key as usize],
                    final_write(via, key),
                    final_write(e.to, key),
                ),
                EdgeKind::PredWr { key, value, pred } => {
                    crate::infer::predicates::wr_step(h, atoms[key as usize], val(value), pred)
                }
                EdgeKind::PredRw { key, via, pred } => crate::infer::predicates::rw_step(
                    h,
                    atoms[key as usize],
                    final_write(via, key),
                    final_write(e.to, key),
                    pred,
                ),
                EdgeKind::Process => ProcessExplainer
                    .explain(h, a, b)
                    .expect("verified session-order edge"),
                EdgeKind::Realtime => RealtimeExplainer
                    .explain(h, a, b)
                    .expect("verified real-time edge"),
                EdgeKind::Init => unreachable!("the initial transaction is on no cycle"),
            }
        })
        .collect();
    let mut ops: Vec<u32> = cycle.iter().map(|e| pos(e.from)).collect();
    ops.push(ops[0]);
    ExplainedCycle {
        kind: classify_cycle(cycle),
        ops,
        steps,
    }
}

/// The DOT source of a reported cycle: its transactions and its steps.
fn cycle_dot(h: &History, c: &ExplainedCycle, max_bytes: usize) -> Option<String> {
    let next = |a: u32| -> Vec<u32> {
        c.ops
            .windows(2)
            .filter(|w| w[0] == a)
            .map(|w| w[1])
            .collect()
    };
    let step = |a: u32, b: u32| {
        c.ops
            .windows(2)
            .position(|w| w[0] == a && w[1] == b)
            .map(|i| c.steps[i].clone())
    };
    crate::check::dot::dot_source(h, &c.ops[1..], &next, &step, max_bytes)
}

fn input_error(h: &History, message: String) -> crate::error::InputError {
    crate::error::InputError {
        kind: Default::default(),
        file: h.origin.clone(),
        line: 1,
        column: 1,
        message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::result::Expectations;
    use crate::model::Format;
    use std::sync::Mutex;

    fn every_constraint() -> Vec<Constraint> {
        let mut out = Vec::new();
        for isolation in [
            Isolation::ReadUncommitted,
            Isolation::ReadCommitted,
            Isolation::ConsistentView,
            Isolation::SnapshotIsolation,
            Isolation::Serializable,
        ] {
            for (session_order, real_time) in [(false, false), (true, false), (true, true)] {
                out.push(Constraint {
                    isolation,
                    session_order,
                    real_time,
                });
            }
        }
        out
    }

    /// Only constraints that forbid every cycle the requested one forbids
    /// are tried first ("valid" carries over from them and only from them),
    /// none twice, never the requested one itself, and real time only when
    /// the history records it or the model already asks for it.
    #[test]
    fn stronger_attempts_imply_the_requested_constraint() {
        for c in every_constraint() {
            for recorded in [false, true] {
                let attempts = stronger_attempts(c, recorded);
                for (i, s) in attempts.iter().enumerate() {
                    assert!(s.implies(c) && *s != c, "{c:?} via {s:?}");
                    assert!(!attempts[..i].contains(s), "{c:?}: {attempts:?}");
                    assert!(!s.real_time || recorded || c.real_time, "{c:?} via {s:?}");
                }
                let strongest = c.isolation == Isolation::Serializable
                    && c.session_order
                    && (c.real_time || !recorded);
                let expected = match (c.isolation, strongest) {
                    (Isolation::ReadUncommitted, _) | (_, true) => 0,
                    _ if !recorded || c.real_time => 1,
                    _ if c.session_order && c.isolation == Isolation::Serializable => 1,
                    _ => 2,
                };
                assert_eq!(attempts.len(), expected, "{c:?} recorded {recorded}");
            }
        }
    }

    static LINES: Mutex<Vec<String>> = Mutex::new(Vec::new());
    /// Held by each check that reads [`LINES`] (tests run on threads).
    static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

    fn keep(line: &str) {
        LINES.lock().expect("not poisoned").push(line.to_string());
    }

    fn check(text: &str, model: &'static str) -> (String, Vec<String>) {
        let h = crate::read::read_history_bytes(text.as_bytes().to_vec(), "h.edn", Format::Edn)
            .expect("readable");
        let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
        LINES.lock().expect("not poisoned").clear();
        let opts = CheckOptions {
            expectations: Expectations {
                models: Some(vec![model]),
                anomalies: vec![],
            },
            trace: Some(keep),
            ..CheckOptions::default()
        };
        let o = check_history(&h, &opts).expect("checkable");
        let lines = LINES.lock().expect("not poisoned").clone();
        (crate::edn::pr_str(&o.result), lines)
    }

    /// Process 1 reads 3 after process 0 wrote it twice (3, then 1), while
    /// process 2 writes 3 again and completes last: completion order is no
    /// witness, and 3 has two writers to choose from. Serializable with
    /// process 2 first, which real time allows, so the strongest attempt
    /// (session and real-time order) decides it.
    const REPEATED: &str = "\
{:index 0 :type :invoke :process 0 :f :txn :value [[:w :x 3] [:w :x 1]]}
{:index 1 :type :invoke :process 2 :f :txn :value [[:w :x 3]]}
{:index 2 :type :ok :process 0 :f :txn :value [[:w :x 3] [:w :x 1]]}
{:index 3 :type :invoke :process 1 :f :txn :value [[:r :x nil]]}
{:index 4 :type :ok :process 1 :f :txn :value [[:r :x 3]]}
{:index 5 :type :ok :process 2 :f :txn :value [[:w :x 3]]}
";

    #[test]
    fn a_stronger_model_that_holds_decides_a_weaker_one() {
        let (result, lines) = check(REPEATED, "serializable");
        assert_eq!(result, "{:valid? true}");
        assert!(
            lines.iter().any(|l| l.starts_with("h.edn: algorithm sat: valid under the stronger Constraint { isolation: Serializable, session_order: true, real_time: true }")),
            "{lines:?}"
        );
    }

    /// Process 0 writes 1, then reads the initial nil: no serial order
    /// keeps its own order (an anomaly of `strong-session-serializable`),
    /// but running the read first is serializable. The failed attempts
    /// leave the requested model to decide.
    const SESSION_ONLY: &str = "\
{:index 0 :type :invoke :process 0 :f :txn :value [[:w :x 1]]}
{:index 1 :type :ok :process 0 :f :txn :value [[:w :x 1]]}
{:index 2 :type :invoke :process 0 :f :txn :value [[:r :x nil]]}
{:index 3 :type :ok :process 0 :f :txn :value [[:r :x nil]]}
";

    #[test]
    fn a_stronger_model_that_fails_says_nothing_of_a_weaker_one() {
        for model in ["serializable", "snapshot-isolation", "consistent-view"] {
            let (result, lines) = check(SESSION_ONLY, model);
            assert_eq!(result, "{:valid? true}", "{model}");
            assert!(
                !lines.iter().any(|l| l.contains("valid under the stronger")),
                "{model}: {lines:?}"
            );
            assert_eq!(
                lines.iter().filter(|l| l.contains(" via ")).count(),
                2,
                "{model}: {lines:?}"
            );
        }
        let (result, _) = check(SESSION_ONLY, "strong-session-serializable");
        assert!(result.starts_with("{:valid? false"), "{result}");
    }
}
