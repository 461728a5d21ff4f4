//! Exact serializability of read-write register histories with repeated
//! written values, and snapshot isolation: a polygraph (Cobra) /
//! hyper-polygraph (VeriStrong) built from the history, pruned to a fixpoint
//! with bit-row reachability, then solved by `batsat` with an incremental
//! acyclicity theory (`theory`: a dynamic topological order that explains
//! each conflict by the reasons of the cycle's edges).
//!
//! Model (the VeriStrong digest, `shared/notes/seed-004-veristrong.md`):
//! an initial transaction `T⊥` (id 0) writes `nil` to every key and precedes
//! every transaction; a transaction's *external read* of a key is its first
//! read before any write of its own to that key, and its *final write* is the
//! last value it writes. The read-from source of an external read is any
//! other transaction whose final write is the read value (one boolean per
//! candidate when there are several, at least one true); the version order of
//! every pair of writers sharing a key is one boolean per pair (merged over
//! keys, sound because opposite directions form a two-cycle); anti-dependency
//! edges `S →rw T'` are derived from a chosen `T →wr S` and `T →ww T'`, never
//! from a transaction to itself. The history is serializable iff internal
//! consistency holds and some choice makes the graph acyclic.
//!
//! `:info` transactions may or may not have committed: each gets a selector
//! literal, every edge touching it is conditional on that literal, and its
//! reads (not observed) are ignored. This is exact, not merely conservative.
//!
//! Session order (per process) is included when
//! [`SatOptions::session_order`] is set (VeriStrong's SER, Elle's
//! `strong-session-serializable`); Elle's `serializable` leaves it out.
//! Real-time order ([`SatOptions::real_time`], strict serializability) uses
//! each transaction's [`RegTxn::realtime_preds`].
//!
//! Snapshot isolation ([`Isolation::SnapshotIsolation`], VeriStrong
//! appendix A): some resolution's *induced* graph `(so ∪ wr ∪ ww) ; rw?`
//! must be acyclic. Pruning and the 2-width clauses then reason about the
//! induced graph (through the theory's layered graph).

// Over 700 lines: this is the checker's shared surface (history
// conversion, predicate micro-ops included, options, verdicts, edge kinds,
// cycle verification and classification) that every submodule uses; the
// algorithms live in the submodules.

mod build;
mod elle;
mod encode;
mod facts;
mod history;
mod lost_update;
mod polygraph;
mod pred_witness;
mod predicates;
mod projection;
mod prune;
mod reach;
mod reads;
mod split;
mod theory;
mod verify;

use std::time::{Duration, Instant};

use batsat::Lit;

use build::build_within;
pub use elle::{check_history, constraints, decides, orders_sessions, strongest, Constraint};
use encode::{encode, two_width_clauses};
pub use facts::{
    dirty_read_cases, elle_dirty_reads_differ, inference_misreads,
    inference_misreads_keeping_cases, thin_air_cases, values_repeat, ElleDirtyCases, Misread,
};
pub use history::{reg_history, reg_history_with_predicates};
use polygraph::to_cycle;
pub use predicates::{PredSeen, PredTable};
pub use projection::Projection;
// For the inference's predicate dependencies (`crate::infer::predicates`).
pub(crate) use predicates::inference_view;
use prune::prune;
use split::{join_models, solve_parts, split, PartAnswer};
pub use verify::{classify_cycle, verify_cycle, verify_cycle_with};

/// A register value: `None` is `nil`, the initial value of every key.
pub type RegValue = Option<u64>;

/// One micro-op of a register transaction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RwMop {
    /// `[:r key value]`.
    Read(u64, RegValue),
    /// `[:w key value]`.
    Write(u64, RegValue),
    /// A predicate micro-op's view of one key ([`PredTable`] holds the
    /// predicate): a returned row, a row it matched (`:wp`), or a row it
    /// did not return (Vbox's unknown θ-read).
    PredRead {
        /// The key.
        key: u64,
        /// The predicate micro-op (an index into [`History::predicates`](crate::model::History::predicates)).
        pred: u32,
        /// What the predicate said of the key.
        seen: PredSeen,
    },
}

/// A transaction of a register history.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegTxn {
    /// The process (session) that ran it.
    pub process: i64,
    /// Its micro-ops, in program order.
    pub ops: Vec<RwMop>,
    /// `true` for `:ok`; `false` for `:info` (may or may not have happened).
    pub committed: bool,
    /// The position of its completion in [`History::ops`](crate::model::History::ops) (for reports).
    pub index: u64,
    /// The position of its invocation in [`History::ops`](crate::model::History::ops) (its completion's
    /// when unknown). Only a hint: with [`Self::index`] it estimates when
    /// the transaction took effect, which guides the solver's first guesses.
    pub invoked: u64,
    /// Graph ids of committed transactions that completed before this one
    /// was invoked (enough of them for their transitive closure to be the
    /// whole real-time order; used only with [`SatOptions::real_time`]).
    pub realtime_preds: Vec<u32>,
}

/// Transactions in completion order; transaction `i` has graph id `i + 1`
/// (id 0 is the initial transaction).
pub type RegHistory = Vec<RegTxn>;

/// The isolation level to decide: which cycles of a resolution's
/// dependency graph (with the session and real-time edges the options add)
/// are forbidden. Weakest first, so the derived order compares strength.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Isolation {
    /// Cycles of ww edges (Adya's G0, PL-1). The version order is free, so
    /// these exist only through session or real-time order; reads are
    /// ignored.
    ReadUncommitted,
    /// Cycles without rw edges (G0, G1c: PL-2). No rw edges are built.
    ReadCommitted,
    /// Cycles with at most one rw edge (G0, G1c, G-single: PL-2+, Elle's
    /// `consistent-view`, `update-serializable`).
    ConsistentView,
    /// Some resolution's induced graph `(so ∪ wr ∪ ww) ; rw?` is acyclic
    /// (G0, G1c, G-single, G-nonadjacent).
    SnapshotIsolation,
    /// Some resolution's dependency graph is acyclic.
    Serializable,
}

impl Isolation {
    /// Whether the graph has rw edges at all.
    fn has_rw(self) -> bool {
        self >= Isolation::ConsistentView
    }

    /// Whether the graph has wr edges (reads choose their writer).
    fn has_reads(self) -> bool {
        self >= Isolation::ReadCommitted
    }

    /// Whether the pruning, the 2-width clauses and Cobra's write combining
    /// (all argued for plain or induced acyclicity with rw edges) apply.
    fn full(self) -> bool {
        self >= Isolation::SnapshotIsolation
    }
}

/// The graph the pruning and the acyclicity theory reason about: with `si`
/// the layered one (snapshot isolation); with `single_rw` (cycles through
/// at most one rw edge forbidden: [`Isolation::ConsistentView`]) rw edges
/// stay off the paths, and an rw edge `a → b` conflicts with a path
/// `b ⇝ a`.
#[derive(Clone, Copy, Debug)]
pub(super) struct Shape {
    pub(super) si: bool,
    pub(super) single_rw: bool,
}

/// How the solver picks the first value of a variable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Polarity {
    /// batsat's default (false first, then the saved phase).
    Solver,
    /// The value that makes the variable's edge point forward in a
    /// topological order of the edges known after pruning (VeriStrong's
    /// order-guided polarity, fixed once: batsat has no polarity hook, and a
    /// fixed user polarity overrides phase saving). Measured against the
    /// artifact's "order for the first decision, then the saved phase"
    /// (emulated by negating the solver variables the order prefers true):
    /// fixed is far better, e.g. Cobra's chengRW-10000 without session order
    /// 7 s against over 60 s, a generated 10k history 1.3 s against over
    /// 60 s.
    KnownOrder,
}

/// Options of [`check_serializable`].
#[derive(Clone, Copy, Debug)]
pub struct SatOptions {
    /// Serializability or snapshot isolation.
    pub isolation: Isolation,
    /// Include per-process session order.
    pub session_order: bool,
    /// Include real-time order ([`RegTxn::realtime_preds`]).
    pub real_time: bool,
    /// Prune the constraints to a fixpoint before solving.
    pub prune: bool,
    /// Add the 2-width clauses.
    pub two_width: bool,
    /// Initial variable polarity.
    pub polarity: Polarity,
    /// Give up (answer [`Verdict::Unknown`]) after this long.
    pub timeout: Option<Duration>,
    /// Longest backjump, in decision levels, a cycle conflict may cause;
    /// longer ones go back one level (chronological backtracking, by
    /// weakening the learnt clause with the previous decision; see
    /// `theory`). `usize::MAX` leaves batsat's backjumps alone. VeriStrong's
    /// HD-10k history: 2.2M → 0.26M decisions at the default of 100.
    pub backjump_limit: usize,
    /// Give up (answer [`Verdict::Unknown`]) once an independent part has
    /// raised this many cycle conflicts. Unlike [`Self::timeout`] the
    /// answer does not depend on the machine: `--algorithm auto` bounds its
    /// confirmation this way.
    pub conflict_budget: Option<usize>,
    /// Treat a read that disagrees with its own transaction's earlier read
    /// or write as no read at all, instead of answering
    /// [`Violation::Internal`] (the caller reports those itself).
    pub skip_internal: bool,
    /// Treat an external read no (possibly) committed transaction's final
    /// write explains as no read at all, instead of answering
    /// [`Violation::Unwritten`] (the caller reports those itself).
    pub skip_unexplained: bool,
    /// Forbid lost updates: two committed transactions that read a key from
    /// the same writer and both write it (Elle's `lost-update`). Only needed
    /// below [`Isolation::ConsistentView`], whose cycles include them.
    pub lost_update: bool,
    /// When to look for a violation in a projection of the history onto
    /// a few keys ([`Projection`]).
    pub projection: Projection,
}

impl Default for SatOptions {
    fn default() -> Self {
        SatOptions {
            isolation: Isolation::Serializable,
            session_order: true,
            real_time: false,
            prune: true,
            two_width: true,
            polarity: Polarity::KnownOrder,
            timeout: None,
            backjump_limit: 100,
            conflict_budget: None,
            skip_internal: false,
            skip_unexplained: false,
            lost_update: false,
            projection: Projection::Auto,
        }
    }
}

/// Why an edge of a reported cycle exists.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EdgeKind {
    /// The initial transaction precedes everything.
    Init,
    /// Session order: same process, earlier.
    Process,
    /// Real-time order: the source completed before the target began.
    Realtime,
    /// The target's external read of `key` returned `value`, written last by
    /// the source.
    Wr {
        /// The key.
        key: u64,
        /// The value read.
        value: RegValue,
    },
    /// Both write `key`; the source's version comes first.
    Ww {
        /// The key.
        key: u64,
    },
    /// The source read `key` from `via`, whose version the target overwrote.
    Rw {
        /// The key.
        key: u64,
        /// The transaction the source read from.
        via: u32,
    },
    /// The target's predicate micro-op `pred` saw the source's version of
    /// `key` (holding `value`): returned, matched, or not returned.
    PredWr {
        /// The key.
        key: u64,
        /// The value of the version seen.
        value: RegValue,
        /// The predicate micro-op (index of [`History::predicates`](crate::model::History::predicates)).
        pred: u32,
    },
    /// The source's predicate micro-op `pred` saw `via`'s version of `key`,
    /// which the target overwrote.
    PredRw {
        /// The key.
        key: u64,
        /// The transaction whose version the predicate saw.
        via: u32,
        /// The predicate micro-op.
        pred: u32,
    },
}

impl EdgeKind {
    /// Whether this is an anti-dependency (item or predicate).
    pub fn is_rw(self) -> bool {
        matches!(self, EdgeKind::Rw { .. } | EdgeKind::PredRw { .. })
    }
}

/// One edge of a reported cycle, between graph ids (0 = initial transaction,
/// `i + 1` = transaction `i` of the [`RegHistory`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CycleEdge {
    /// Source transaction id.
    pub from: u32,
    /// Target transaction id.
    pub to: u32,
    /// Why the edge exists.
    pub kind: EdgeKind,
}

/// Why a history is not serializable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Violation {
    /// A read inside a transaction disagrees with the transaction's own
    /// earlier write or read of the key.
    Internal {
        /// Graph id of the transaction.
        txn: u32,
        /// The key.
        key: u64,
    },
    /// An external read of a value no (possibly) committed transaction wrote.
    Unwritten {
        /// Graph id of the reader.
        txn: u32,
        /// The key.
        key: u64,
        /// The value read.
        value: RegValue,
    },
    /// A predicate micro-op's view of a key that no (possibly) committed
    /// final write fits: a row a `:wp` matched that no version ever
    /// matched, or views of one key that no single version satisfies.
    PredicateUnexplained {
        /// Graph id of the transaction.
        txn: u32,
        /// The key.
        key: u64,
        /// The predicate micro-op.
        pred: u32,
    },
    /// A cycle in one resolution of the choices (edges in order, the last
    /// one returning to the first's source).
    Cycle(Vec<CycleEdge>),
    /// Every resolution has a lost update ([`SatOptions::lost_update`]):
    /// these committed transactions (graph ids) read `key` and wrote it, and
    /// could not all have read different versions of it. The first group
    /// that takes part.
    LostUpdate {
        /// The key.
        key: u64,
        /// The value they read.
        value: RegValue,
        /// The readers.
        txns: Vec<u32>,
    },
}

/// The answer of [`check_serializable`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Serializable; a witness serial order of graph ids (without 0, and
    /// without `:info` transactions left out).
    Valid(Vec<u32>),
    /// Not serializable.
    Invalid(Violation),
    /// The timeout ran out.
    Unknown,
}

/// Counters of one check.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SatStats {
    /// Boolean variables created.
    pub vars: usize,
    /// Variables fixed by pruning.
    pub pruned: usize,
    /// Pruning passes.
    pub prune_passes: usize,
    /// 2-width clauses added.
    pub two_width: usize,
    /// Conflicts raised by the acyclicity theory.
    pub theory_conflicts: usize,
    /// Conflicts of the solver (Boolean and theory).
    pub conflicts: u64,
    /// Decisions of the solver.
    pub decisions: u64,
    /// Time spent building the polygraph.
    pub build_time: Duration,
    /// Time spent pruning.
    pub prune_time: Duration,
    /// Time spent on the 2-width clauses.
    pub two_width_time: Duration,
    /// Time spent in the solver.
    pub solve_time: Duration,
    /// Independent parts solved (see `split`).
    pub parts: usize,
    /// Edges of the polygraph built.
    pub edges: usize,
    /// Edges left for the theory after pruning (those known paths do not
    /// imply).
    pub theory_edges: usize,
    /// Why building stopped over the memory budget
    /// ([`crate::limits::solver_budget`]); the verdict is then unknown.
    pub over_budget: Option<String>,
    /// Solves: more than one when predicate views were deferred and the
    /// first witness missed some (`predicates::ClassViews`).
    pub rounds: usize,
    /// Keys of the projection that refuted the history ([`Projection`]);
    /// 0 when none did.
    pub projected_keys: usize,
}

/// Checks serializability (or, per [`SatOptions::isolation`], snapshot
/// isolation) of `h`, returning the verdict and counters.
pub fn check_serializable(h: &RegHistory, opts: &SatOptions) -> (Verdict, SatStats) {
    check_with_predicates(h, &PredTable::default(), opts)
}

/// [`check_serializable`] for a history with predicate micro-ops
/// ([`RwMop::PredRead`], whose predicates `preds` holds).
pub fn check_with_predicates(
    h: &RegHistory,
    preds: &PredTable,
    opts: &SatOptions,
) -> (Verdict, SatStats) {
    let start = Instant::now();
    let mut stats = SatStats::default();
    let failures = match predicates::witness(h, preds, opts) {
        Some(Ok(order)) => return (Verdict::Valid(order), stats),
        Some(Err(failures)) => Some(failures),
        None => None,
    };
    // A projection first when the whole polygraph cannot fit (or when
    // asked), after it when building ran over the budget: either way only
    // where the full check would say unknown (see `projection`).
    let first = projection::first(h, preds, opts);
    if first {
        if let Some((verdict, keys)) =
            projection::refute(h, preds, opts, failures.as_deref(), start)
        {
            stats.projected_keys = keys;
            return (verdict, stats);
        }
    }
    let mut rounds = 1;
    let verdict = predicates::solve_deferring(h, preds, opts, &mut rounds, |views| {
        // Counters are per solve (pruning reads its own from them).
        stats = SatStats::default();
        solve(h, preds, opts, start, &mut stats, views)
    });
    stats.rounds = rounds;
    let over = matches!(verdict, Verdict::Unknown) && stats.over_budget.is_some();
    if over && !first && opts.projection != Projection::Off {
        if let Some((verdict, keys)) =
            projection::refute(h, preds, opts, failures.as_deref(), start)
        {
            stats.projected_keys = keys;
            stats.over_budget = None;
            return (verdict, stats);
        }
    }
    (verdict, stats)
}

/// Checks snapshot isolation of `h` (the other options as given).
pub fn check_snapshot_isolation(h: &RegHistory, opts: &SatOptions) -> (Verdict, SatStats) {
    check_serializable(
        h,
        &SatOptions {
            isolation: Isolation::SnapshotIsolation,
            ..*opts
        },
    )
}

// Long (about 120 lines): the phases (build, prune, encode, split, solve)
// in order, each checking the deadline and filling `stats`; splitting them
// up would only pass the same state around.
fn solve(
    h: &RegHistory,
    preds: &PredTable,
    opts: &SatOptions,
    start: Instant,
    stats: &mut SatStats,
    views: Option<&predicates::ClassViews>,
) -> Verdict {
    let si = opts.isolation == Isolation::SnapshotIsolation;
    let single_rw = opts.isolation == Isolation::ConsistentView;
    // The 2-width clauses are argued for plain or layered acyclicity with
    // rw edges.
    let opts = &SatOptions {
        two_width: opts.two_width && opts.isolation.full(),
        ..*opts
    };
    let expired = || opts.timeout.is_some_and(|t| start.elapsed() >= t);
    let phase = Instant::now();
    let mut g = match build_within(h, preds, opts, &expired, &mut stats.over_budget, views) {
        Ok(Some(g)) => g,
        Ok(None) => return Verdict::Unknown,
        Err(v) => return Verdict::Invalid(v),
    };
    stats.build_time = phase.elapsed();
    stats.vars = g.vars;
    stats.edges = g.edges.len();
    let mut assign: Vec<Option<bool>> = vec![None; g.vars];
    let mut known = None;
    if opts.prune {
        let phase = Instant::now();
        let pruned = prune(&g, &mut assign, stats, Shape { si, single_rw }, &expired);
        stats.prune_time = phase.elapsed();
        match pruned {
            Ok(reach) => known = reach,
            Err(v) => return Verdict::Invalid(v),
        }
    }
    if expired() {
        return Verdict::Unknown;
    }
    let Some(mut enc) = encode(&g, &assign, opts.polarity, known.as_ref(), si, &expired) else {
        return Verdict::Unknown;
    };
    g.keep_edges(&mut enc.origin);
    stats.theory_edges = enc.edges.len();
    let mut clauses = std::mem::take(&mut enc.clauses);
    // Each phase can take seconds on big histories without session order:
    // none starts past the deadline.
    if expired() {
        return Verdict::Unknown;
    }
    if opts.two_width {
        let phase = Instant::now();
        let more = two_width_clauses(&g, &enc, known.as_ref(), si, 4 * g.vars + 100_000, &expired);
        stats.two_width_time = phase.elapsed();
        stats.two_width = more.len();
        clauses.extend(more);
    }
    if expired() {
        return Verdict::Unknown;
    }
    let Some(parts) = split(&enc, clauses, g.n, si, &expired) else {
        return Verdict::Unknown;
    };
    // The parts hold their own copies of the edges; only `origin` is read
    // from here on.
    enc.edges = Vec::new();
    stats.parts = parts.len();
    if expired() {
        return Verdict::Unknown;
    }
    let phase = Instant::now();
    let (answers, counters) = solve_parts(
        &parts,
        Shape { si, single_rw },
        opts.backjump_limit,
        opts.timeout.map(|t| start + t),
        opts.conflict_budget,
    );
    stats.solve_time = phase.elapsed();
    stats.theory_conflicts = counters.theory_conflicts;
    stats.conflicts = counters.conflicts;
    stats.decisions = counters.decisions;
    let cycle_of = |edges: &[u32]| -> Vec<CycleEdge> {
        let path: Vec<usize> = edges.iter().map(|&e| enc.origin[e as usize]).collect();
        to_cycle(&g, &path)
    };
    match answers.iter().find(|a| matches!(a, PartAnswer::Unsat(_))) {
        Some(PartAnswer::Unsat(Some(c))) => return Verdict::Invalid(Violation::Cycle(cycle_of(c))),
        // Refuted by the 2-width clauses before any theory conflict: solve
        // again without them to find a cycle to report.
        Some(_) if opts.two_width => {
            return solve(
                h,
                preds,
                &SatOptions {
                    two_width: false,
                    ..*opts
                },
                start,
                stats,
                views,
            )
        }
        // Without 2-width clauses, only the lost-update clauses can refute
        // without a cycle.
        Some(_) => {
            return match g.lost_updates.first() {
                Some(l) => Verdict::Invalid(Violation::LostUpdate {
                    key: l.0,
                    value: l.1,
                    txns: l.2.clone(),
                }),
                None => Verdict::Unknown,
            }
        }
        None => {}
    }
    let Some(model) = join_models(&parts, &answers, enc.vars()) else {
        return Verdict::Unknown;
    };
    witness(&g, &enc, &assign, &model, Shape { si, single_rw })
}

/// The valid verdict for a model of every part: the model's edges (those
/// the encoding dropped follow known paths), sorted topologically: the
/// witness order (with SI, of the layered graph, whose order on the
/// history's vertices is one of the induced graph; with single-rw cycles
/// allowed, of the edges other than rw).
fn witness(
    g: &polygraph::Polygraph,
    enc: &encode::Encoding,
    assign: &[Option<bool>],
    model: &[bool],
    Shape { si, single_rw }: Shape,
) -> Verdict {
    let holds = |l: Lit| match enc.solver_lit(assign, l) {
        Ok(l) => model[l.var().idx() as usize] == l.sign(),
        Err(fixed) => fixed,
    };
    let n = g.n as u32;
    let mut adj: Vec<Vec<u32>> = vec![Vec::new(); if si { 2 * g.n } else { g.n }];
    for &i in &enc.origin {
        let e = &g.edges[i];
        if !e.reason.iter().all(|&l| holds(l)) {
            continue;
        }
        match (si, g.is_rw(i)) {
            (false, true) if single_rw => {}
            (false, _) => adj[e.from as usize].push(e.to),
            (true, true) => adj[(n + e.from) as usize].push(e.to),
            (true, false) => {
                adj[e.from as usize].push(e.to);
                adj[e.from as usize].push(n + e.to);
            }
        }
    }
    // Every part's model is acyclic; were it not (a bug), say unknown
    // rather than claim a witness.
    let Some(order) =
        crate::graph::topological_order(adj.len(), |v| adj[v as usize].iter().copied())
    else {
        return Verdict::Unknown;
    };
    let included = |t: u32| t < n && t != 0 && g.selector[t as usize].is_none_or(holds);
    Verdict::Valid(order.into_iter().filter(|&t| included(t)).collect())
}

/// batsat's stop callback for a deadline. batsat asks before every
/// decision, and reading the clock that often cost 5% of the search, so the
/// clock is read every 64th call. Once past the deadline the answer stays
/// "stop": batsat asks again before resuming, and a `false` then would
/// restart the search instead of ending it.
pub(crate) fn deadline_stop(deadline: Option<Instant>) -> impl Fn() -> bool {
    let calls = std::cell::Cell::new(0u32);
    let stopped = std::cell::Cell::new(false);
    move || {
        calls.set(calls.get().wrapping_add(1));
        if calls.get().is_multiple_of(64) && deadline.is_some_and(|d| Instant::now() >= d) {
            stopped.set(true);
        }
        stopped.get()
    }
}

#[cfg(test)]
mod tests;
