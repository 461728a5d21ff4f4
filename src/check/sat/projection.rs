//! Refuting a history through a *projection* onto a few keys, where the
//! whole polygraph would not fit (issue 18: a 100k-transaction predicate
//! history under `serializable` has 3.0M unreturned rows, each of which
//! may have seen almost every version of its key).
//!
//! The projection onto a key set `K` keeps every transaction's micro-ops
//! on keys of `K`, in program order, and nothing else: an item read or
//! write of such a key, and a predicate's view of it (a returned row: it
//! saw that version; a matched or unreturned one: it saw a version the
//! predicate matches, or does not). The predicates, the key universe and
//! the rows left out because no written version could make a predicate
//! return them are the whole history's (decided before projecting).
//!
//! Soundness: every constraint of the exact checker is a constraint of
//! one key (which version each kept read saw, the version order of the
//! key's writers, which `:info` writers took effect) or of the order of
//! transactions (session order, the initial state first). Take a
//! resolution of the history that the model allows — for serializability
//! a serial order, for snapshot isolation an acyclic induced graph — and
//! keep, for the keys of `K`, the same version orders, the same
//! read-from choices and the same `:info` selections: each kept read is
//! still external (whether a transaction wrote the key earlier is a fact
//! of the same key), sees the same version, and the same versions fit or
//! do not fit its predicate; the projection's dependency edges are a
//! subset of the history's. So the projection has a resolution the model
//! allows whenever the history has one: *a projection that is not
//! serializable (not SI) proves the history is not*. The converse fails
//! (a cycle may need keys outside `K`), so a projection never proves a
//! history valid; when it is valid, a larger `K` is tried, then the full
//! check.
//!
//! Transactions with no micro-op on `K` are dropped. Their only edges
//! are the initial transaction's and session order (without real time),
//! which they pass along: were they kept, a path through them joins two
//! kept transactions of their process that the projection's own session
//! order (consecutive `:ok` transactions of a process among those kept;
//! an `:info` one is in no session order) already joins. So dropping
//! them changes no cycle, and the projection stays small. Real-time
//! order would need its edges between kept transactions recomputed, and
//! a reported cycle then holds edges that are no edges of the history's
//! real-time reduction: projections are not tried under real time, where
//! the windows of `visible_in_real_time` keep the full polygraph small
//! (the README's 100k strict figures).
//!
//! A cycle of the projection (one resolution's, as the full check
//! reports them) is a cycle of the history: its transactions are the
//! history's (ids mapped back) and its edges are justified by micro-ops
//! the projection kept unchanged, which `verify_cycle_with` re-checks on
//! the history; the other violations (an internal disagreement, a view
//! no version fits, a lost update) are facts of one key, true of the
//! history too.
//!
//! Which keys: where the serial witness's replay (completion order)
//! failed (`pred_witness::Failure`): the failing read's key and every key
//! of the reader and of the writer whose version it contradicted; then
//! the keys of every transaction writing one of those; then of every
//! transaction touching one. A round stops growing past a sixteenth of
//! the history's micro-ops, and each solve has a small conflict budget.

use super::history::key_count;
use super::pred_witness::{completion_failures, Failure};
use super::{
    verify_cycle_with, EdgeKind, PredSeen, PredTable, RegHistory, RegTxn, RwMop, SatOptions,
    Verdict, Violation,
};

/// When [`super::check_with_predicates`] looks for a violation in a
/// projection of the history (see the module doc of `projection`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Projection {
    /// Only where the full check would answer unknown for lack of
    /// memory: first when the predicate views alone would not fit the
    /// memory budget ([`crate::limits::solver_budget`]), after building
    /// otherwise when it ran over the budget. Verdicts the full check
    /// reaches are unchanged.
    #[default]
    Auto,
    /// Never.
    Off,
    /// Always first; when no projection refutes the history, the full
    /// check decides. For tests: every verdict stays exact, only which
    /// counterexample is reported may change.
    First,
}

/// Most conflicts one projection's solve may raise: a projection that
/// is hard to decide is not the small counterexample this looks for.
const CONFLICTS: usize = 20_000;

/// Whether to try projections before the full check ([`Projection`]).
pub(super) fn first(h: &RegHistory, preds: &PredTable, opts: &SatOptions) -> bool {
    match opts.projection {
        Projection::Off => false,
        Projection::First => true,
        Projection::Auto => {
            !opts.real_time
                && !preds.preds.is_empty()
                && opts.isolation.has_reads()
                && views_exceed_budget(h, preds, opts)
        }
    }
}

/// Whether the full check is sure to stop over the memory budget where
/// `Builder::class_views_fit` counts the predicate views known by class
/// (no real time): a lower bound of its count exceeds the budget, and no
/// disagreement inside a transaction would make building fail first.
/// One pass, no per-read allocation: on issue 18's 100k history this
/// replaces the half second (and 190 MB) of summarising every read.
fn views_exceed_budget(h: &RegHistory, preds: &PredTable, opts: &SatOptions) -> bool {
    let Some((budget, _)) = crate::limits::solver_budget() else {
        return false;
    };
    let nkeys = key_count(h);
    // Per key, its writers (each transaction once).
    let mut writers = vec![0u64; nkeys];
    let mut mark = vec![0u32; nkeys];
    for (i, t) in h.iter().enumerate() {
        let id = i as u32 + 1;
        for op in &t.ops {
            if let RwMop::Write(k, _) = *op {
                if mark[k as usize] != id {
                    mark[k as usize] = id;
                    writers[k as usize] += 1;
                }
            }
        }
    }
    // Per key of the transaction at hand: whether only class views saw
    // it, and whether a predicate view met another micro-op on it.
    mark.fill(0);
    let mut only_class = vec![false; nkeys];
    let mut mixed = vec![false; nkeys];
    let mut keys: Vec<u64> = Vec::new();
    let mut cands = 0u64;
    for (i, t) in h.iter().enumerate().filter(|(_, t)| t.committed) {
        let id = i as u32 + 1;
        keys.clear();
        for op in &t.ops {
            let (k, class, pred) = match *op {
                RwMop::Write(k, _) | RwMop::Read(k, _) => (k as usize, false, false),
                RwMop::PredRead { key, seen, .. } => {
                    (key as usize, !matches!(seen, PredSeen::Returned(_)), true)
                }
            };
            if mark[k] != id {
                mark[k] = id;
                only_class[k] = class;
                mixed[k] = false;
                keys.push(k as u64);
            } else {
                only_class[k] &= class;
                mixed[k] |= pred || !opts.skip_internal;
            }
        }
        // Building fails on a disagreement before it counts views.
        if keys.iter().any(|&k| mixed[k as usize])
            && super::reads::summarise_reads(t, id, opts.skip_internal, preds).is_err()
        {
            return false;
        }
        cands += (keys.iter())
            .filter(|&&k| only_class[k as usize])
            .map(|&k| writers[k as usize])
            .sum::<u64>();
    }
    // What `Builder` holds when it counts: an initial edge per
    // transaction, session order, a selector per `:info` transaction.
    let committed = h.iter().filter(|t| t.committed).count() as u64;
    let mut processes: Vec<i64> = (h.iter().filter(|t| t.committed))
        .map(|t| t.process)
        .collect();
    processes.sort_unstable();
    processes.dedup();
    let session = match opts.session_order {
        true => committed - processes.len() as u64,
        false => 0,
    };
    let edges = h.len() as u64 + session + cands;
    let vars = h.len() as u64 - committed + cands;
    let need = edges.saturating_mul(super::build::BYTES_PER_EDGE)
        + vars.saturating_mul(super::build::BYTES_PER_VAR);
    need > budget
}

/// A violation of `h` found in a projection onto a few keys, with the
/// number of keys, or `None` (the full check decides). `failures`: the
/// serial witness's, when it was tried; `start`: when the check began
/// (`opts.timeout` counts from there, a full check tried first included).
pub(super) fn refute(
    h: &RegHistory,
    preds: &PredTable,
    opts: &SatOptions,
    failures: Option<&[Failure]>,
    start: std::time::Instant,
) -> Option<(Verdict, usize)> {
    if opts.real_time {
        return None;
    }
    let computed;
    let failures = match failures {
        Some(f) => f,
        None => {
            computed = completion_failures(h, preds);
            &computed[..]
        }
    };
    if failures.is_empty() {
        return None;
    }
    let mut keys = vec![false; key_count(h)];
    for f in failures {
        keys[f.key as usize] = true;
        for t in [f.reader, f.writer].into_iter().filter(|&t| t != 0) {
            add_keys(&mut keys, &h[t as usize - 1]);
        }
    }
    let total: usize = h.iter().map(|t| t.ops.len()).sum();
    let limit = (total / 16).max(1000);
    for round in 0..3 {
        // Nothing new: the same projection, the same answer.
        if round > 0 && !grow(h, &mut keys, round == 1) {
            continue;
        }
        let (sub, kept) = project(h, &keys, limit)?;
        let remaining = opts.timeout.map(|t| t.saturating_sub(start.elapsed()));
        let sub_opts = SatOptions {
            projection: Projection::Off,
            timeout: remaining,
            conflict_budget: Some(opts.conflict_budget.map_or(CONFLICTS, |c| c.min(CONFLICTS))),
            ..*opts
        };
        match solve(&sub, &kept, h, preds, &sub_opts) {
            Some(Verdict::Valid(_)) => {}
            Some(v) => return Some((v, keys.iter().filter(|&&k| k).count())),
            None => return None,
        }
    }
    None
}

/// Solves the projection `sub` (its transaction `i` is `kept[i]` of `h`):
/// a violation mapped back to `h`'s ids, a valid verdict (not mapped), or
/// `None` when undecided.
fn solve(
    sub: &RegHistory,
    kept: &[u32],
    h: &RegHistory,
    preds: &PredTable,
    opts: &SatOptions,
) -> Option<Verdict> {
    let verdict = match super::check_with_predicates(sub, preds, opts).0 {
        Verdict::Unknown => return None,
        Verdict::Valid(order) => return Some(Verdict::Valid(order)),
        Verdict::Invalid(v) => map_violation(v, kept),
    };
    let Violation::Cycle(c) = &verdict else {
        return Some(Verdict::Invalid(verdict));
    };
    if verify_cycle_with(h, preds, c).is_ok() {
        return Some(Verdict::Invalid(verdict));
    }
    // As `check_history` does for the full check: the last conflict can
    // be write-order steps alone; without pruning and the 2-width clauses
    // every refutation ends on a cycle of one resolution.
    let again = SatOptions {
        polarity: super::Polarity::Solver,
        prune: false,
        two_width: false,
        ..*opts
    };
    if let Verdict::Invalid(v) = super::check_with_predicates(sub, preds, &again).0 {
        let v = map_violation(v, kept);
        if matches!(&v, Violation::Cycle(c) if verify_cycle_with(h, preds, c).is_ok()) {
            return Some(Verdict::Invalid(v));
        }
    }
    // Still a refutation (the projection has no resolution); the caller
    // reports the cycle as it does an unverified one of the full check.
    Some(Verdict::Invalid(verdict))
}

/// Marks every key transaction `t` touches.
fn add_keys(keys: &mut [bool], t: &RegTxn) {
    for op in &t.ops {
        keys[op.key() as usize] = true;
    }
}

/// Adds the keys of every transaction that writes a key of `keys`
/// (`writers_only`) or touches one; whether any was added.
fn grow(h: &RegHistory, keys: &mut [bool], writers_only: bool) -> bool {
    let touches = |t: &RegTxn| {
        t.ops.iter().any(|op| match *op {
            RwMop::Write(k, _) => keys[k as usize],
            _ if writers_only => false,
            ref op => keys[op.key() as usize],
        })
    };
    let chosen: Vec<usize> = (0..h.len()).filter(|&i| touches(&h[i])).collect();
    let before = keys.iter().filter(|&&k| k).count();
    for i in chosen {
        add_keys(keys, &h[i]);
    }
    keys.iter().filter(|&&k| k).count() > before
}

/// The projection of `h` onto `keys` and, per transaction of it, its
/// graph id in `h`; `None` when it would hold more than `limit` micro-ops.
fn project(h: &RegHistory, keys: &[bool], limit: usize) -> Option<(RegHistory, Vec<u32>)> {
    let mut sub = Vec::new();
    let mut kept = Vec::new();
    let mut size = 0;
    for (i, t) in h.iter().enumerate() {
        let ops: Vec<RwMop> = (t.ops.iter())
            .filter(|op| keys[op.key() as usize])
            .copied()
            .collect();
        if ops.is_empty() {
            continue;
        }
        size += ops.len();
        if size > limit {
            return None;
        }
        kept.push(i as u32 + 1);
        sub.push(RegTxn {
            process: t.process,
            ops,
            committed: t.committed,
            index: t.index,
            invoked: t.invoked,
            realtime_preds: Vec::new(),
        });
    }
    Some((sub, kept))
}

/// `v` with the projection's graph ids replaced by `h`'s (`kept[i]` is
/// the id of the projection's transaction `i + 1`; 0 stays 0).
fn map_violation(v: Violation, kept: &[u32]) -> Violation {
    let id = |t: u32| match t {
        0 => 0,
        t => kept[t as usize - 1],
    };
    match v {
        Violation::Internal { txn, key } => Violation::Internal { txn: id(txn), key },
        Violation::Unwritten { txn, key, value } => Violation::Unwritten {
            txn: id(txn),
            key,
            value,
        },
        Violation::PredicateUnexplained { txn, key, pred } => Violation::PredicateUnexplained {
            txn: id(txn),
            key,
            pred,
        },
        Violation::LostUpdate { key, value, txns } => Violation::LostUpdate {
            key,
            value,
            txns: txns.into_iter().map(id).collect(),
        },
        Violation::Cycle(c) => Violation::Cycle(
            c.into_iter()
                .map(|mut e| {
                    e.from = id(e.from);
                    e.to = id(e.to);
                    e.kind = match e.kind {
                        EdgeKind::Rw { key, via } => EdgeKind::Rw { key, via: id(via) },
                        EdgeKind::PredRw { key, via, pred } => EdgeKind::PredRw {
                            key,
                            via: id(via),
                            pred,
                        },
                        // Named one by one: a kind that gains an id
                        // must be mapped too.
                        k @ (EdgeKind::Init
                        | EdgeKind::Process
                        | EdgeKind::Realtime
                        | EdgeKind::Wr { .. }
                        | EdgeKind::Ww { .. }
                        | EdgeKind::PredWr { .. }) => k,
                    };
                    e
                })
                .collect(),
        ),
    }
}

#[cfg(test)]
mod tests;
