//! Routing: which algorithm checks a history (`--algorithm`).
//!
//! * `infer`: the workload's Elle-style inference ([`crate::infer`]).
//! * `mini`: the mini-transaction fast path ([`crate::infer::mini`]); its
//!   preconditions (every committed or indeterminate transaction a
//!   mini-transaction, unique written values, list reads that are chains of
//!   read-modify-writes) must hold, else the check fails with the reason and
//!   the offending op.
//! * `auto` (the default): for rw-register, `mini` when its preconditions
//!   hold (it is exact where Elle's version-order inference is partial),
//!   otherwise `infer`; for list-append, `infer`: the version order is read
//!   off the lists, so the inference is exact (but for the order of appends
//!   no read reveals, which `auto` decides by trying each order where the
//!   models tell them apart), and it gives Elle's own answers (the MT path
//!   differs from Elle in small ways, e.g. no wr edge from an intermediate
//!   read). One exception (issue 23): on a list-append MT history, under
//!   models where no order of appends is a choice, the MT path (linear, 2–3
//!   times faster) runs first, and its answer stands when it finds nothing
//!   at all, which the inference then finds too
//!   ([`mini::elle_subgraph`]); otherwise the inference answers.
//! * `lwt`: cas-register histories only: the lightweight-transaction chain
//!   (MTC's VL-LWT) on every key; a key whose values are not unique (or
//!   that has a write of `nil`, or two blind writes in effect) is an error
//!   naming the op. `auto` on cas-register histories takes the chain per
//!   key where it applies and the Wing–Gong/Lowe search elsewhere (the
//!   result's `:analyzer` says which); `infer`, `mini` and `sat` do not
//!   apply to them.
//! * `sat`: every model decided exactly on rw-register histories, repeated
//!   values included ([`crate::check::sat`]); `--sat-timeout` bounds it.
//!   Under `auto`, rw-register histories whose written values repeat go
//!   straight to it (Elle's inference takes one writer per value), and
//!   those that are not mini-transactions get it where the inference cannot
//!   decide (see [`AUTO_SAT_MAX_OPS`] and
//!   [`AUTO_SAT_MAX_OPS_WITHOUT_SESSIONS`]).
//!
//! Which path ran, and why, goes to [`CheckOptions::trace`] (the CLI prints
//! it on standard error with `--verbose`); the result map's keys never
//! depend on it. An algorithm that does not apply to the workload is a
//! usage error ([`CheckError::Usage`]), whatever the history holds.
//!
//! This is the one orchestrator: it picks the algorithm (above) and runs
//! the whole check of one history with it (inference, cycle search, result
//! map: `check_inferred`). Only the command line and the library's entry
//! point call it; the algorithms below it share their option and outcome
//! types through [`crate::check::outcome`], not through this module.

// Long (about 1,200 lines with its tests): the per-workload hooks sit next to the one check
// tail, `check_inferred`, that they call; their logic lives in the
// algorithms' own modules.

use crate::check::result::result_map;
use crate::check::{cycle_cases_in, CycleCase, CycleOptions, ExplainedCycle};
use crate::consistency as cm;
use crate::edn::Value;
use crate::error::{CheckError, InputError};
use crate::infer::list_append;
use crate::infer::mini;
use crate::infer::rw_register;
use crate::infer::txn::ExtraGraph;
use crate::infer::{Inference, Refusal};
use crate::model::{History, OpType, Workload};

pub use crate::check::outcome::{Algorithm, CheckOptions, Outcome, Validity};

/// Checks a history: its workload is `opts.workload`, or detected from its
/// operations; the algorithm is `opts.algorithm` (see the module doc). This
/// is the library's entry point, [`crate::check()`].
pub fn check(h: &History, opts: &CheckOptions) -> Result<Outcome, CheckError> {
    let _running = crate::par::Checking::start();
    let workload = opts.workload.unwrap_or_else(|| Workload::detect(h));
    if let Some(message) = misuse(workload, opts.algorithm) {
        return Err(CheckError::Usage {
            file: h.origin.clone(),
            message,
        });
    }
    Ok(match workload {
        Workload::CasRegister => check_cas_register(h, opts),
        w => check_transactional(h, opts, w),
    }?)
}

/// Why `algorithm` does not apply to `workload`, if it does not: a usage
/// error, whatever the history holds.
fn misuse(workload: Workload, algorithm: Algorithm) -> Option<String> {
    match (workload, algorithm) {
        (Workload::CasRegister, Algorithm::Auto | Algorithm::Lwt) => None,
        (Workload::CasRegister, a) => Some(format!(
            "--algorithm {} applies to transactional histories (list-append, rw-register); cas-register histories take auto or lwt",
            a.name()
        )),
        (_, Algorithm::Lwt) => Some("--algorithm lwt applies to cas-register histories (-m cas-register), not to transactional ones (for these: auto, infer, mini, sat)".into()),
        (Workload::ListAppend, Algorithm::Sat) => {
            Some("--algorithm sat applies to -m rw-register only".into())
        }
        _ => None,
    }
}

/// What an analyzer's refusal means for a check: Elle's own `:unknown`
/// result map, or an error naming the op.
fn refused(h: &History, r: Refusal) -> Result<Outcome, InputError> {
    match r {
        Refusal::Unanalyzable(u) => Ok(Outcome {
            problem: u.problem,
            ..Outcome::from_result(u.result)
        }),
        Refusal::Input(e) => Err(e),
        Refusal::NotApplicable(n) => Err(h.error_at(n.pos, n.reason)),
    }
}

/// Checks a list-append or rw-register history with the algorithm
/// `opts.algorithm` selects.
fn check_transactional(
    h: &History,
    opts: &CheckOptions,
    workload: Workload,
) -> Result<Outcome, InputError> {
    let infer = |why: String| {
        opts.say(|| format!("{}: algorithm infer ({why})", h.origin));
        match workload {
            Workload::ListAppend => check_list_append(h, opts),
            Workload::RwRegister => check_rw_register(h, opts),
            Workload::CasRegister => unreachable!("routed to check_cas_register"),
        }
    };
    // Predicate micro-ops (`:rp`/`:wp`, issue 18): only the exact checker
    // reads them, under `auto` too.
    if h.has_predicates() && matches!(opts.algorithm, Algorithm::Auto | Algorithm::Sat) {
        opts.say(|| format!("{}: algorithm sat (predicate micro-ops)", h.origin));
        return crate::check::sat::check_history(h, opts);
    }
    if h.has_predicates()
        && workload == Workload::RwRegister
        && matches!(opts.algorithm, Algorithm::Infer)
    {
        // `--algorithm infer`: predicate dependencies where certain.
        opts.say(|| format!("{}: algorithm infer (predicate rows as reads)", h.origin));
        return check_rw_register_predicates(h, opts);
    }
    match opts.algorithm {
        Algorithm::Infer => infer("--algorithm infer".into()),
        // `misuse` took sat on list-append histories.
        Algorithm::Sat => {
            validate(h, workload)?;
            crate::check::sat::check_history(h, opts)
        }
        Algorithm::Lwt => unreachable!("misuse refuses lwt on transactional histories"),
        Algorithm::Mini => {
            validate(h, workload)?;
            match check_mini(h, opts, workload, "--algorithm mini") {
                Ok(o) => Ok(o),
                Err(Refusal::NotApplicable(e)) => Err(h.error_at(
                    e.pos,
                    format!(
                        "--algorithm mini: not a mini-transaction history with unique values: {}",
                        e.reason
                    ),
                )),
                Err(r) => refused(h, r),
            }
        }
        Algorithm::Auto if workload == Workload::ListAppend && opts.confirm_with_sat => {
            validate(h, workload)?;
            if let Some(o) = list_append_by_mini(h, opts) {
                return Ok(o);
            }
            opts.say(|| format!("{}: algorithm infer (auto: list-append histories use Elle's inference, exact for lists, plus reads of elements nobody appended and the orders of appends no read reveals)", h.origin));
            check_list_append_exact(h, opts)
        }
        Algorithm::Auto if workload == Workload::ListAppend => infer(
            "auto: list-append histories use Elle's inference, exact for lists and Elle-identical"
                .into(),
        ),
        Algorithm::Auto => {
            validate(h, workload)?;
            let orders = witness_orders(h, opts);
            let not_mini = mini::shapes::refused_early(h, workload, EARLY_PROBE_OPS);
            // Where the first ops already show that the MT path does not
            // apply, the version chains start now, beside the misread scan
            // as well as the inference (that scan was a tenth of `auto` on
            // a generated 200k history; issue 23).
            match orders.filter(|_| not_mini) {
                Some(orders) => crate::par::start_beside(
                    || chains_witness(h, orders),
                    |later| auto_rw_register(h, opts, workload, ChainsFrom::Started(later), true),
                ),
                None => {
                    let chains = orders.map_or(ChainsFrom::Skipped, ChainsFrom::Beside);
                    auto_rw_register(h, opts, workload, chains, not_mini)
                }
            }
        }
    }
}

/// Ops `auto` looks at for a shape the MT path refuses before it starts
/// the version chains early: histories that are no MT histories mostly
/// show it at their first transactions.
const EARLY_PROBE_OPS: usize = 1_000;

/// `auto` on an rw-register history: the exact checker where the misread
/// scan says the inference's version orders cannot be trusted, else the MT
/// path where it applies, else the inference (its lost-update check
/// counting external reads only) confirmed by a serial witness or the
/// exact checker ([`auto_register`]). `not_mini`: the first ops showed
/// that the MT path does not apply.
///
/// Where the version chains started early, the scan waits: a valid
/// inferred verdict those chains confirm is exact whatever the scan would
/// say (a serial witness replayed; had the scan sent the history to the
/// exact checker, it would have found the same witness valid), so the
/// inference runs first, assuming no G1a/G1b case, and the scan only when
/// the chains do not confirm it (issue 23: the scan made `auto` on a
/// generated valid 200k history 1.5 times the inference).
// Long (about 100 lines): the two orders of scan and inference share
// every step after them; apart, each would repeat the other's tail.
fn auto_rw_register(
    h: &History,
    opts: &CheckOptions,
    workload: Workload,
    chains: ChainsFrom<'_>,
    not_mini: bool,
) -> Result<Outcome, InputError> {
    use crate::check::sat::{self, Misread};
    use crate::infer::txn::ReadsCounted;
    let exact = opts.confirm_with_sat;
    if exact && sat::strongest(opts) < Some(sat::Isolation::ReadCommitted) {
        // Elle orders a version a transaction read before the one it
        // wrote, which only G1c-free models guarantee.
        let why = "the models forbid no G1c cycle, which the inference's version orders assume; the exact check is cheap here";
        opts.say(|| format!("{}: algorithm sat (auto: {why})", h.origin));
        return sat::check_history(h, opts);
    }
    let chains_first = exact && not_mini && matches!(chains, ChainsFrom::Started(_));
    let scan = || sat::inference_misreads_keeping_cases(h);
    // What the scan found, once it ran; a reason not to trust the
    // inference sends the history to the exact checker.
    let to_sat = |misread: Option<Misread>| {
        let why = misread
            .filter(|&m| m != Misread::OwnWriteRead)
            .map(Misread::reason)?;
        opts.say(|| format!("{}: algorithm sat (auto: {why})", h.origin));
        Some(sat::check_history(h, opts))
    };
    // Reads from thin air the inference reports itself, as G1a cases
    // ([`sat::thin_air_cases`]): then its G1a/G1b cases, else `None`.
    let thin_air = |misread: Option<Misread>| {
        let cases = (misread == Some(Misread::ThinAir))
            .then(|| sat::thin_air_cases(h))
            .flatten()?;
        opts.say(|| {
            format!(
                "{}: auto: reads of values nobody wrote are G1a cases the inference reports",
                h.origin
            )
        });
        Some(cases)
    };
    // Elle's G1a/G1b cases, when the scan computed them, go to the
    // inference (issue 23: computed once), and so does the inference's
    // first step, numbering the external reads and writes, run beside the
    // scan where the inference will surely follow (issue 23: the scan's
    // pass over the writes has one core).
    // The lost-update check counts external reads only: Elle also counts a
    // read that follows the transaction's own write (the misread scan's
    // `OwnWriteRead`), which reports lost updates no resolution has.
    let known_with = |dirty, numbered| rw_register::Known {
        dirty,
        numbered,
        lost_update_reads: ReadsCounted::External,
    };
    let known = if chains_first {
        known_with(Some([Vec::new(), Vec::new()]), None)
    } else if exact {
        let ((misread, dirty), numbered) = if not_mini {
            let (found, numbered) = crate::par::join(scan, || rw_register::number(h));
            (found, Some(numbered))
        } else {
            (scan(), None)
        };
        match thin_air(misread) {
            Some(cases) => known_with(Some(cases), numbered),
            None => match to_sat(misread) {
                // The numbering is the inference's, which does not run.
                Some(exact) => return exact,
                None => known_with(dirty, numbered),
            },
        }
    } else {
        known_with(None, None)
    };
    match check_mini(
        h,
        opts,
        workload,
        "auto: every committed transaction is a mini-transaction with unique values",
    ) {
        // Not met where the chains went first (the first ops refused the
        // MT path), but then the scan would still decide.
        Ok(o) if chains_first => to_sat(scan().0).unwrap_or(Ok(o)),
        Ok(o) => Ok(o),
        Err(Refusal::NotApplicable(e)) => {
            let why = format!(
                "auto: the op at index {} is why the mini-transaction path does not apply: {}",
                h.ops[e.pos].index, e.reason
            );
            opts.say(|| format!("{}: algorithm infer ({why})", h.origin));
            let (mut inferred, mut edges, chains) =
                rw_register_beside_chains(h, opts, chains, known);
            let confirmed = matches!(&inferred, Ok(o) if o.validity == Validity::Valid)
                && chains.as_ref().is_some_and(|c| c.confirmed);
            if chains_first && !confirmed {
                let (found, mut dirty) = scan();
                if let Some(cases) = thin_air(found) {
                    dirty = Some(cases);
                } else if let Some(exact) = to_sat(found) {
                    return exact;
                }
                // The inference assumed no G1a/G1b case; with some it
                // runs again, knowing them.
                if dirty
                    .as_ref()
                    .is_some_and(|d| d.iter().any(|c| !c.is_empty()))
                {
                    let known = known_with(dirty, None);
                    (inferred, edges) = rw_register_keeping_edges(h, opts, true, known);
                }
            }
            auto_register(h, opts, inferred, &edges, chains)
        }
        Err(r) => refused(h, r),
    }
}

/// `auto` on a list-append MT history (issue 23): the MT path's answer
/// when it is `{:valid? true}` with no cycle, which Elle's inference then
/// gives too (see [`mini::elle_subgraph`]); `None` sends the history to the
/// inference (Elle's cases and cycles). Only for models where the
/// inference's answer needs no choice of append orders and every
/// read-modify-write immediately follows its version.
fn list_append_by_mini(h: &History, opts: &CheckOptions) -> Option<Outcome> {
    use mini::elle_subgraph as sub;
    let exp = &opts.expectations;
    if list_append_orders_matter(opts)
        || !mini::immediate_for(exp.models.as_deref(), &exp.anomalies)
        // Most list-append histories show at their first transactions that
        // they are no MT histories; for the others the analysis checks
        // every shape itself (a full scan here first was 4% of `auto` on a
        // 1M MT history, issue 23).
        || mini::shapes::refused_early(h, Workload::ListAppend, EARLY_PROBE_OPS)
        || !sub::info_reads_nothing(h)
    {
        return None;
    }
    let clock = std::time::Instant::now();
    let extra = extra_graph(opts);
    let analysis = mini::analyze_with(h, Workload::ListAppend, extra, true).ok()?;
    if !sub::has_shared_edge(&analysis.inference) {
        return None;
    }
    let why = "auto: a list-append MT history; its answer stands when it finds nothing";
    opts.say(|| format!("{}: algorithm mini ({why})", h.origin));
    let o = check_inferred(h, opts, &analysis.inference, clock);
    let clean = o.result == Value::kw_map(vec![("valid?", Value::Bool(true))]);
    if clean && o.cycles.is_empty() && o.plots.is_empty() {
        return Some(o);
    }
    opts.say(|| {
        format!(
            "{}: the MT path found something; Elle's inference reports it",
            h.origin
        )
    });
    None
}

/// Histories at most this many ops long get the SAT checker's confirmation
/// of a valid inferred verdict under `--algorithm auto` when the checked
/// models order each process's transactions: 200,000 generated
/// transactions confirm in 1.8 s (serializable) to 3.3 s (snapshot
/// isolation) and under 700 MB. `--algorithm sat` has no limit.
pub const AUTO_SAT_MAX_OPS: usize = 400_000;

/// [`AUTO_SAT_MAX_OPS`] for models without session order (Elle's
/// `serializable`, `snapshot-isolation`): far fewer orders are known, so
/// the polygraph is bigger (a generated 50,000-transaction history, 100,000
/// ops: about 1.2 GB).
pub const AUTO_SAT_MAX_OPS_WITHOUT_SESSIONS: usize = 100_000;

/// Cycle conflicts `auto`'s confirmation may raise per independent part
/// before it gives up and the inference's answer stands. Without session
/// order the search can grow faster than the history (generated
/// serializable histories of 10,000 / 30,000 / 50,000 transactions: 1,400 /
/// 8,500 / 13,400 conflicts, 1.0 / 4.3 / 8.7 s; VeriStrong's BL-10k:
/// 33,000, 8 s), while real violations are usually found with few (Cobra's
/// 37,000-transaction yuga-G2-a: none, 0.2 s). A conflict count, unlike a
/// time limit, gives the same answer on every machine.
pub const AUTO_SAT_CONFLICT_BUDGET: usize = 20_000;

/// `auto` for rw-register histories the mini-transaction path cannot take.
/// Elle's inference answers first. Where it cannot decide, and the SAT
/// checker decides the requested models, the SAT checker does: when written
/// values repeat (the inference gives up), and when the inference finds
/// nothing (its version orders are partial, so it can miss cycles; the SAT
/// checker's counterexample replaces the valid verdict, a SAT timeout keeps
/// it). Inferred anomalies stand as Elle reports them: their edges are facts.
fn auto_register(
    h: &History,
    opts: &CheckOptions,
    inferred: Result<Outcome, InputError>,
    edges: &[(u32, u32, crate::graph::Rels)],
    chains: Option<Chains>,
) -> Result<Outcome, InputError> {
    use crate::check::sat;
    let say = |what: &str| {
        opts.say(|| format!("{}: {what}", h.origin));
    };
    let needs_confirmation = needs_confirmation(h, opts);
    match inferred {
        Err(e) if e.kind == crate::error::InputErrorKind::RepeatedValues => {
            say("algorithm sat (auto: written values repeat, so the inference cannot tell which write a read saw)");
            sat::check_history(h, opts)
        }
        Ok(o)
            if opts.confirm_with_sat
                && sat::decides(opts)
                && o.validity != Validity::Invalid
                && (needs_confirmation || o.validity == Validity::Unknown) =>
        {
            let limit = auto_sat_limit(opts);
            // A serial witness confirms a valid verdict in about linear
            // time (issue 23). Over the limit nothing confirms anyway and
            // the answer is the same, so a witness that fails there (the
            // generated 1M history: 5.7 s of CPU) would only cost.
            if o.validity == Validity::Valid && h.ops.len() <= limit {
                use crate::check::witness::{self, Candidate};
                let clock = std::time::Instant::now();
                // The first attempt's chains ran beside the inference when
                // a core was free.
                let mut beside = chains;
                let mut before = 0.0;
                let first = witness_attempts(opts);
                let found = first.iter().find_map(|&real_time| {
                    let orders = witness::Orders { real_time };
                    // A witness that also respects real time is one for a
                    // model without it, and keeping real time is what lets
                    // the chains place writers on histories from real
                    // databases (`watch`'s rounds under
                    // strong-session-serializable): tried first where the
                    // history records real time.
                    let by = if first.len() > 1 && real_time {
                        " with real time"
                    } else {
                        ""
                    };
                    let mut trace = |line: String| say(&format!("witness{by}: {line}"));
                    let chained = match beside.take() {
                        Some(c) => {
                            c.lines.into_iter().for_each(&mut trace);
                            before = c.took;
                            c.confirmed
                        }
                        None => witness::confirm_by_chains(h, orders, &mut trace),
                    };
                    if chained {
                        Some(Candidate::Chains)
                    } else {
                        witness::confirm_by_others(h, edges, orders, &mut trace)
                    }
                });
                let took = before + clock.elapsed().as_secs_f64();
                if let Some(c) = found {
                    say(&format!(
                        "confirmed by a serial witness ({}) in {took:.3} s; no SAT confirmation needed",
                        c.name()
                    ));
                    return Ok(o);
                }
                say(&format!(
                    "no serial witness found in {took:.3} s; confirming with the SAT checker"
                ));
            }
            if h.ops.len() > limit {
                if confirmed_with_session_order(h, opts, &o) {
                    return Ok(o);
                }
                say(&format!(
                    "no exact confirmation: {} ops, over auto's limit of {limit} for these models (--algorithm sat checks it)",
                    h.ops.len()
                ));
                return Ok(o);
            }
            say("algorithm sat (auto: confirming the inference's verdict exactly)");
            let budget =
                AUTO_SAT_CONFLICT_BUDGET.min(opts.sat_conflict_budget.unwrap_or(usize::MAX));
            let exact = sat::check_history(
                h,
                &CheckOptions {
                    sat_conflict_budget: Some(budget),
                    ..opts.clone()
                },
            )?;
            match exact.validity {
                Validity::Invalid => {
                    say("the SAT checker found a cycle the inferred version orders do not show");
                    Ok(exact)
                }
                Validity::Unknown => {
                    say(&format!("the SAT checker gave up (its timeout, or {budget} cycle conflicts in one part); the inference's answer stands"));
                    Ok(o)
                }
                // An inferred unknown (Elle's empty transaction graph) is
                // what the exact checker says.
                Validity::Valid if o.validity == Validity::Unknown => Ok(exact),
                Validity::Valid => Ok(o),
            }
        }
        other => other,
    }
}

/// Whether `auto` confirms a valid inferred verdict exactly: with unique
/// values the inference is exact below consistent view (a topological
/// order of its acyclic graph gives the versions) unless an `:info`
/// writer's edges are missing from it.
fn needs_confirmation(h: &History, opts: &CheckOptions) -> bool {
    use crate::check::sat::{self, Isolation};
    match sat::strongest(opts) {
        Some(c) if c >= Isolation::ConsistentView => true,
        Some(Isolation::ReadCommitted) => h.ops.iter().any(|o| o.op_type == OpType::Info),
        _ => false,
    }
}

/// The most ops `auto` confirms a verdict of exactly, for these models.
fn auto_sat_limit(opts: &CheckOptions) -> usize {
    if crate::check::sat::orders_sessions(opts) {
        AUTO_SAT_MAX_OPS
    } else {
        AUTO_SAT_MAX_OPS_WITHOUT_SESSIONS
    }
}

/// The witness attempts `auto` makes, in order, by whether each keeps
/// real-time order: the one the checked models need (real time when some
/// model keeps it), and where none does but the history records real
/// time, first one that keeps it (see [`auto_register`]).
fn witness_attempts(opts: &CheckOptions) -> &'static [bool] {
    let real_time = crate::check::sat::constraints(&opts.expectations.prohibited())
        .iter()
        .any(|c| c.real_time);
    if !real_time && opts.real_time_recorded {
        &[true, false]
    } else if real_time {
        &[true]
    } else {
        &[false]
    }
}

/// The orders `auto`'s first serial witness attempt respects when
/// [`auto_register`] would look for one on a valid verdict (the
/// confirmation applies and the history is within the limit), else
/// `None`.
fn witness_orders(h: &History, opts: &CheckOptions) -> Option<crate::check::witness::Orders> {
    (opts.confirm_with_sat
        && crate::check::sat::decides(opts)
        && needs_confirmation(h, opts)
        && h.ops.len() <= auto_sat_limit(opts))
    .then(|| crate::check::witness::Orders {
        real_time: witness_attempts(opts).first() == Some(&true),
    })
}

/// What the version-chain witness found beside the inference.
struct Chains {
    /// Its order replayed: a serial witness.
    confirmed: bool,
    /// Its `--verbose` lines, told after the inference's.
    lines: Vec<String>,
    /// Seconds it took.
    took: f64,
}

/// Where `auto`'s version-chain witness comes from.
enum ChainsFrom<'scope> {
    /// None (`auto` would not look for a witness).
    Skipped,
    /// Run beside the inference, with these orders.
    Beside(crate::check::witness::Orders),
    /// Started already ([`crate::par::start_beside`]).
    Started(crate::par::Later<'scope, Chains>),
}

/// The version-chain witness, timed, with its `--verbose` lines kept.
fn chains_witness(h: &History, orders: crate::check::witness::Orders) -> Chains {
    let clock = std::time::Instant::now();
    let mut lines = Vec::new();
    let confirmed = crate::check::witness::confirm_by_chains(h, orders, &mut |l| lines.push(l));
    let took = clock.elapsed().as_secs_f64();
    Chains {
        confirmed,
        lines,
        took,
    }
}

/// The rw-register inference ([`check_rw_register`]) and the version-chain
/// witness, which needs nothing from it (issue 23: `auto` at the
/// inference's price): started already, or beside it on a free core. On
/// one core the witness runs after the inference, and only on a valid
/// verdict. The inference's edges are listed only when the other
/// candidates may need them (a valid verdict the chains did not confirm).
fn rw_register_beside_chains(
    h: &History,
    opts: &CheckOptions,
    chains: ChainsFrom<'_>,
    known: rw_register::Known,
) -> (Result<Outcome, InputError>, Edges, Option<Chains>) {
    if let ChainsFrom::Skipped = chains {
        let (inferred, edges) = rw_register_keeping_edges(h, opts, true, known);
        return (inferred, edges, None);
    }
    let clock = std::time::Instant::now();
    starting(opts, "inferring dependencies");
    let infer = || match rw_register::analyze_knowing(h, extra_graph(opts), &opts.rw, known) {
        Ok(inference) => (
            Ok(check_inferred(h, opts, &inference, clock)),
            Some(inference),
        ),
        Err(r) => (refused(h, r), None),
    };
    let valid = |(inferred, _): &(Result<Outcome, InputError>, _)| matches!(inferred, Ok(o) if o.validity == Validity::Valid);
    let ((inferred, inference), chains) = match chains {
        ChainsFrom::Skipped => unreachable!("returned above"),
        ChainsFrom::Beside(orders) => {
            crate::par::beside(infer, || chains_witness(h, orders), valid)
        }
        ChainsFrom::Started(later) => {
            let done = infer();
            // Only a valid verdict asks for the chains (a deferred witness
            // runs then); otherwise started ones finish beside what
            // follows (the exact checker, say) and are dropped.
            let chains = valid(&done).then(|| later.get());
            (done, chains)
        }
    };
    // Only a valid verdict's confirmation reads them ([`auto_register`]).
    let wanted = matches!(&inferred, Ok(o) if o.validity == Validity::Valid)
        && !chains.as_ref().is_some_and(|c| c.confirmed);
    let edges = match inference {
        Some(i) if wanted => i.all_edges(h),
        _ => Vec::new(),
    };
    (inferred, edges, chains)
}

/// `auto`'s confirmation of a valid inferred verdict under models without
/// session order on histories over [`AUTO_SAT_MAX_OPS_WITHOUT_SESSIONS`]:
/// the exact check of `strong-session-serializable` instead, which forbids
/// every anomaly the requested models do, so its "valid" is theirs, and
/// whose known orders keep the polygraph small (a generated
/// 100,000-transaction history: 1.4 s, 230 MB). False when it does not
/// apply or does not confirm (the inference's answer then stands, as
/// before).
fn confirmed_with_session_order(h: &History, opts: &CheckOptions, inferred: &Outcome) -> bool {
    use crate::check::sat;
    const STRONGER: &str = "strong-session-serializable";
    if inferred.validity != Validity::Valid || h.ops.len() > AUTO_SAT_MAX_OPS {
        return false;
    }
    let stronger = CheckOptions {
        expectations: crate::check::result::Expectations {
            models: Some(vec![STRONGER]),
            anomalies: opts.expectations.anomalies.clone(),
        },
        sat_conflict_budget: Some(
            AUTO_SAT_CONFLICT_BUDGET.min(opts.sat_conflict_budget.unwrap_or(usize::MAX)),
        ),
        ..opts.clone()
    };
    let wanted = opts.expectations.prohibited();
    let covered = stronger.expectations.prohibited();
    if !wanted.iter().all(|a| covered.contains(a)) || !sat::decides(&stronger) {
        return false;
    }
    opts.say(|| {
        format!(
            "{}: algorithm sat (auto: over the limit without session order; confirming under the stronger {STRONGER})",
            h.origin
        )
    });
    let valid = sat::check_history(h, &stronger).is_ok_and(|e| e.validity == Validity::Valid);
    if valid {
        opts.say(|| {
            format!(
                "{}: valid under {STRONGER}, so under the requested models",
                h.origin
            )
        });
    }
    valid
}

/// The workload's own input checks, which hold on both paths.
fn validate(h: &History, workload: Workload) -> Result<(), InputError> {
    match workload {
        Workload::ListAppend => crate::infer::list_append::validate(h),
        Workload::RwRegister => crate::infer::rw_register::validate(h),
        Workload::CasRegister => Ok(()),
    }
}

/// The mini-transaction path, or why it does not apply.
fn check_mini(
    h: &History,
    opts: &CheckOptions,
    workload: Workload,
    why: &str,
) -> Result<Outcome, Refusal> {
    let clock = std::time::Instant::now();
    let analysis = mini::analyze_with(
        h,
        workload,
        extra_graph(opts),
        mini::immediate_for(
            opts.expectations.models.as_deref(),
            &opts.expectations.anomalies,
        ),
    )?;
    opts.say(|| {
        let s = &analysis.stats;
        format!(
            "{}: algorithm mini ({why}); {} committed and {} observed indeterminate transactions, {} data edges, {} divergent versions; built in {:.3} s",
            h.origin,
            s.committed,
            s.observed_info,
            s.data_edges,
            s.divergences,
            clock.elapsed().as_secs_f64()
        )
    });
    let mut outcome = check_inferred(h, opts, &analysis.inference, clock);
    let cycles = outcome.cycles.iter().map(|c| (c.kind.as_str(), &c.ops[..]));
    mini::placement_boundary(&mut outcome.result, cycles, &analysis.placed);
    Ok(outcome)
}

/// Checks a cas-register history with the algorithm `opts.algorithm`
/// selects: `auto` (the chain per key where it applies, else the search) or
/// `lwt` (the chain on every key, else an error naming the op).
fn check_cas_register(h: &History, opts: &CheckOptions) -> Result<Outcome, InputError> {
    let why = match opts.algorithm {
        Algorithm::Auto => {
            "auto: per key, the lwt chain where written values are unique, else the wgl search (see :analyzer)"
        }
        Algorithm::Lwt => {
            let regs = crate::check::linearizable::register::registers(h)?;
            for k in &regs.keys {
                if let Err(r) = crate::check::linearizable::chain_or_refusal(&k.ops) {
                    let key = k
                        .key
                        .as_ref()
                        .map_or(String::new(), |k| format!(" (key {})", crate::edn::pr_str(k)));
                    return Err(h.error_at(
                        k.ops[r.op].invoke as usize,
                        format!(
                            "--algorithm lwt: the unique-value chain does not apply to this op{key}: {}",
                            r.reason
                        ),
                    ));
                }
            }
            "--algorithm lwt: every key's written values are unique"
        }
        a => unreachable!("misuse refuses --algorithm {} on cas-register histories", a.name()),
    };
    opts.say(|| format!("{}: algorithm {} ({why})", h.origin, opts.algorithm.name()));
    cas_register_search(h, opts)
}

// The whole check of one history: inference, cycle search, result map.

/// Checks a list-append history as `elle.list-append/check` does. Fails only
/// on input no list-append analysis can use (see
/// [`list_append::validate`]).
fn check_list_append(
    history: &History,
    opts: &CheckOptions,
) -> Result<Outcome, crate::error::InputError> {
    list_append::validate(history)?;
    let clock = std::time::Instant::now();
    starting(opts, "inferring dependencies");
    match list_append::analyze(history, extra_graph(opts)) {
        Ok(inference) => Ok(check_inferred(history, opts, &inference, clock)),
        Err(r) => refused(history, r),
    }
}

/// [`check_list_append`], plus the reads of elements nobody appended (`G1a`
/// with `:writer nil`; Elle has no check for them), and, where the models
/// tell them apart, every order of the appends no read reveals
/// ([`list_append::decide_open_orders`]): `--algorithm auto`.
fn check_list_append_exact(
    history: &History,
    opts: &CheckOptions,
) -> Result<Outcome, crate::error::InputError> {
    list_append::validate(history)?;
    let clock = std::time::Instant::now();
    starting(opts, "inferring dependencies");
    let extra = extra_graph(opts);
    let inference = match list_append::analyze_exact(history, extra) {
        Ok(i) => i,
        Err(r) => return refused(history, r),
    };
    let outcome = check_inferred(history, opts, &inference, clock);
    if outcome.validity != Validity::Valid || !list_append_orders_matter(opts) {
        return Ok(outcome);
    }
    use list_append::OrderDecision as D;
    // Each order's check, without its phase lines (up to thousands).
    let quiet = CheckOptions {
        trace: None,
        progress: None,
        ..opts.clone()
    };
    let decided = match list_append::decide_open_orders(history, extra, &inference, |inf| {
        let o = check_inferred(history, &quiet, inf, clock);
        let passes = (o.validity != Validity::Unknown).then_some(o.validity == Validity::Valid);
        (passes, o)
    }) {
        Ok(d) => d,
        Err(r) => return refused(history, r),
    };
    opts.say(|| format!("{}: {}", history.origin, decided.describe()));
    let unknown = |cause: &str| {
        let map = vec![
            ("valid?", Value::kw("unknown")),
            ("cause", Value::kw(cause)),
        ];
        Outcome::from_result(Value::kw_map(map))
    };
    Ok(match decided {
        D::NoChoice | D::SomeOrderPasses(_) => outcome,
        D::EveryOrderFails(_, o) => o,
        D::Undecided(_) => unknown("cycle-search-timeout"),
        D::TooMany(_) => unknown("too-many-unrevealed-append-orders"),
    })
}

/// Whether the requested models can tell orders of unrevealed appends
/// apart: only when they forbid some cycles with rw edges but not all
/// (snapshot isolation, consistent view), or mix classes. Elle's graph
/// decides the rest exactly: if its relevant edges are acyclic, ordering
/// the appends by a topological order keeps them so.
fn list_append_orders_matter(opts: &CheckOptions) -> bool {
    use crate::check::sat::{constraints, Isolation};
    let cs = constraints(&opts.expectations.prohibited());
    cs.len() > 1
        || cs.iter().any(|c| {
            matches!(
                c.isolation,
                Isolation::SnapshotIsolation | Isolation::ConsistentView
            )
        })
}

/// Tells the progress display (if any) that a phase starts.
fn starting(opts: &CheckOptions, phase: &str) {
    if let Some(p) = opts.progress {
        p(phase)
    }
}

/// Checks a read-write register history as `elle.rw-register/check` does,
/// with Elle's rw-register options (`opts.rw`). Fails on input Elle's
/// checker throws on (see [`rw_register::analyze`]).
fn check_rw_register(history: &History, opts: &CheckOptions) -> Result<Outcome, InputError> {
    rw_register_keeping_edges(history, opts, false, rw_register::Known::default()).0
}

/// [`check_rw_register`] for a history with predicate micro-ops
/// (`crate::infer::predicates`).
fn check_rw_register_predicates(
    history: &History,
    opts: &CheckOptions,
) -> Result<Outcome, crate::error::InputError> {
    let clock = std::time::Instant::now();
    starting(opts, "inferring dependencies");
    let (view, origin) = crate::check::sat::inference_view(history);
    match crate::infer::predicates::analyze(history, &view, origin, extra_graph(opts), &opts.rw) {
        Ok(inference) => Ok(check_inferred(&view, opts, &inference, clock)),
        Err(r) => refused(&view, r),
    }
}

/// Dependency edges between completion positions.
type Edges = Vec<(u32, u32, crate::graph::Rels)>;

/// [`check_rw_register`], also returning the inference's edges when
/// `auto` calls (empty when it refused) for its serial witness; `auto`
/// also ran `validate` already, and may know Elle's G1a/G1b cases and
/// the numbered external reads and writes (`known`).
fn rw_register_keeping_edges(
    history: &History,
    opts: &CheckOptions,
    auto: bool,
    known: rw_register::Known,
) -> (Result<Outcome, InputError>, Edges) {
    let clock = std::time::Instant::now();
    starting(opts, "inferring dependencies");
    let analyzed = if auto {
        rw_register::analyze_knowing(history, extra_graph(opts), &opts.rw, known)
    } else {
        rw_register::analyze(history, extra_graph(opts), &opts.rw)
    };
    match analyzed {
        // Only `auto_register`'s serial witness reads the edges, and only
        // up to its size limit: a bigger history's edge list goes once the
        // graph holds them, and its real-time edges are never listed
        // (issue 23: memory).
        Ok(inference) if auto && history.ops.len() <= AUTO_SAT_MAX_OPS => {
            let o = check_inferred(history, opts, &inference, clock);
            (Ok(o), inference.all_edges(history))
        }
        Ok(mut inference) => {
            let graph = inference.graph_without_realtime(history);
            inference.edges = Vec::new();
            let o = check_inferred_with(history, opts, &inference, graph, clock);
            (Ok(o), Vec::new())
        }
        Err(r) => (refused(history, r), Vec::new()),
    }
}

/// The order graph Elle adds for the reportable anomalies: real-time if any
/// `-realtime` type is reportable, else process if any `-process` type is.
pub(crate) fn extra_graph(opts: &CheckOptions) -> ExtraGraph {
    let reportable = opts.expectations.reportable();
    if reportable
        .iter()
        .any(|t| cm::realtime_anomaly_types().contains(t))
    {
        ExtraGraph::Realtime
    } else if reportable
        .iter()
        .any(|t| cm::process_anomaly_types().contains(t))
    {
        ExtraGraph::Process
    } else {
        ExtraGraph::None
    }
}

/// The workload-independent tail of a check: cycle search over the inferred
/// graph, then Elle's anomaly map and result map.
pub(crate) fn check_inferred(
    history: &History,
    opts: &CheckOptions,
    inference: &Inference<'_>,
    clock: std::time::Instant,
) -> Outcome {
    check_inferred_with(
        history,
        opts,
        inference,
        inference.graph_without_realtime(history),
        clock,
    )
}

/// [`check_inferred`] on the inference's graph, built already.
fn check_inferred_with(
    history: &History,
    opts: &CheckOptions,
    inference: &Inference<'_>,
    graph: crate::graph::UnmergedGraph,
    clock: std::time::Instant,
) -> Outcome {
    let exp = &opts.expectations;
    let reportable = exp.reportable();
    let phase = |name: &str| {
        opts.say(|| format!("{name} done at {:.3} s", clock.elapsed().as_secs_f64()));
    };
    let copts = CycleOptions {
        reportable: reportable.clone(),
        timeout: opts.cycle_search_timeout,
        elle_steps: opts.elle_steps,
        trace: opts.trace,
    };
    phase("inference");
    starting(opts, "searching for cycles");
    let analysis = cycle_cases_in(history, inference, graph, &copts);
    let (cases, vertices) = (&analysis.cases, analysis.vertex_count);
    phase("cycle search");
    let mut all: Vec<(String, Vec<Value>)> = Vec::new();
    let mut push = |k: &str, v: Value| match all.iter_mut().find(|(t, _)| t == k) {
        Some((_, vs)) => vs.push(v),
        None => all.push((k.to_string(), vec![v])),
    };
    if vertices == 0 {
        push("empty-transaction-graph", Value::Bool(true));
    }
    let mut cycles = Vec::new();
    for case in cases {
        match case {
            CycleCase::Cycle(c) => {
                push(&c.kind, c.to_value(history));
                if reportable.contains(&c.kind.as_str()) {
                    cycles.push(c.clone());
                }
            }
            CycleCase::Exists { kind, value } => push(kind, value.clone()),
            CycleCase::Timeout(v) => push("cycle-search-timeout", v.clone()),
        }
    }
    for (k, vs) in inference.anomalies.entries() {
        for v in vs {
            push(k, v.clone());
        }
    }
    let seqs: Vec<&str> = inference
        .anomalies
        .types()
        .filter(|t| inference.anomalies.is_seq(t))
        .collect();
    let result = result_map(exp, &all, &seqs);
    let plots = match opts.plot_max_bytes {
        Some(max) => plot_sources(history, inference, &analysis, &cycles, max),
        None => Vec::new(),
    };
    Outcome {
        cycles,
        plots,
        incompatible_keys: inference
            .anomalies
            .get("incompatible-order")
            .into_iter()
            .flatten()
            .filter_map(|case| case.get_kw("key").cloned())
            .collect(),
        ..Outcome::from_result(result)
    }
}

/// DOT sources for every SCC (`sccs/<i>`) and every reported cycle
/// (`<type>/<i>`), as Elle plots them.
fn plot_sources(
    history: &History,
    inference: &crate::infer::Inference<'_>,
    analysis: &crate::check::CycleAnalysis,
    cycles: &[ExplainedCycle],
    max_bytes: usize,
) -> Vec<(String, Option<String>)> {
    let out = |v: u32| analysis.graph.out_ids(v).to_vec();
    let explain = |a: u32, b: u32| inference.explain(history, a, b);
    let dot = |ops: &[u32]| crate::check::dot::dot_source(history, ops, &out, &explain, max_bytes);
    let mut plots = Vec::new();
    for (i, scc) in analysis.sccs.iter().enumerate() {
        plots.push((format!("sccs/{i}"), dot(scc)));
    }
    let mut seen: Vec<&str> = Vec::new();
    for c in cycles {
        let i = seen.iter().filter(|k| **k == c.kind).count();
        seen.push(&c.kind);
        plots.push((format!("{}/{i}", c.kind), dot(&c.ops)));
    }
    plots
}

/// Checks a cas-register history for linearizability (Knossos's
/// `cas-register` model; see [`crate::check::linearizable`] for the
/// algorithms and the result map). Fails on input that is not a
/// cas-register history (unknown `:f`, a `:cas` value that is not
/// `[old new]`, …), pointing at the op.
fn cas_register_search(
    history: &History,
    opts: &CheckOptions,
) -> Result<Outcome, crate::error::InputError> {
    use crate::check::linearizable::{check_history, LinOptions};
    let started = std::time::Instant::now();
    let lin = LinOptions {
        deadline: opts.linearizable_timeout.map(|t| started + t),
        ..LinOptions::default()
    };
    let result = check_history(history, &lin)?;
    opts.say(|| {
        format!(
            "linearizability checked in {:.3} s",
            started.elapsed().as_secs_f64()
        )
    });
    Ok(Outcome::from_result(result))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Format;
    use crate::read::read_history_bytes;
    use std::sync::Mutex;

    fn history(text: &str) -> History {
        read_history_bytes(text.as_bytes().to_vec(), "h.edn", Format::Edn).expect("readable")
    }

    const APPEND: &str = "{:type :invoke, :process 0, :f :txn, :value [[:append :x 1]]}\n\
                          {:type :ok, :process 0, :f :txn, :value [[:append :x 1]]}\n";

    /// An algorithm that does not apply to the workload is a usage error
    /// naming the file, not an input error at line 1, column 1.
    #[test]
    fn misused_algorithms_are_usage_errors() {
        let h = history(APPEND);
        for (algorithm, message) in [
            (Algorithm::Lwt, "--algorithm lwt applies to cas-register histories (-m cas-register), not to transactional ones (for these: auto, infer, mini, sat)"),
            (Algorithm::Sat, "--algorithm sat applies to -m rw-register only"),
        ] {
            let opts = CheckOptions {
                algorithm,
                ..CheckOptions::default()
            };
            let e = check(&h, &opts).expect_err("misuse");
            assert_eq!(
                e,
                CheckError::Usage {
                    file: "h.edn".into(),
                    message: message.into()
                }
            );
            assert_eq!(e.to_string(), format!("h.edn: {message}"));
        }
        let cas = CheckOptions {
            workload: Some(Workload::CasRegister),
            algorithm: Algorithm::Mini,
            ..CheckOptions::default()
        };
        assert_eq!(
            check(&h, &cas).expect_err("misuse").to_string(),
            "h.edn: --algorithm mini applies to transactional histories (list-append, rw-register); cas-register histories take auto or lwt"
        );
    }

    static LINES: Mutex<Vec<String>> = Mutex::new(Vec::new());

    fn keep(line: &str) {
        LINES.lock().expect("not poisoned").push(line.to_string());
    }

    /// `--verbose` lines go to the trace callback, in order.
    #[test]
    fn trace_receives_the_verbose_lines() {
        let h = history(APPEND);
        let opts = CheckOptions {
            algorithm: Algorithm::Infer,
            trace: Some(keep),
            ..CheckOptions::default()
        };
        let o = check(&h, &opts).expect("checkable");
        // One transaction: Elle's empty transaction graph.
        assert_eq!(o.validity, Validity::Unknown);
        let lines = LINES.lock().expect("not poisoned").clone();
        assert_eq!(lines[0], "h.edn: algorithm infer (--algorithm infer)");
        assert!(lines[1].starts_with("inference done at "), "{lines:?}");
        assert!(lines[2].starts_with("cycle search done at "), "{lines:?}");
        assert_eq!(lines.len(), 3, "{lines:?}");
    }

    /// `auto` starts the version chains before its misread scan only where
    /// the first ops show the MT path cannot apply (a blind write); an MT
    /// history keeps both cores for that path.
    #[test]
    fn auto_starts_the_chains_early_only_where_the_mt_path_cannot_apply() {
        let blind = history(
            "{:type :invoke, :process 0, :f :txn, :value [[:w 1 1]]}\n\
             {:type :ok, :process 0, :f :txn, :value [[:w 1 1]]}\n",
        );
        let mt = history(
            "{:type :invoke, :process 0, :f :txn, :value [[:r 1 nil] [:w 1 1]]}\n\
             {:type :ok, :process 0, :f :txn, :value [[:r 1 nil] [:w 1 1]]}\n",
        );
        let early = |h| mini::shapes::refused_early(h, Workload::RwRegister, EARLY_PROBE_OPS);
        assert!(early(&blind));
        assert!(!early(&mt));
        assert!(!mini::shapes::refused_early(
            &blind,
            Workload::RwRegister,
            0
        ));
    }

    static CHAINS_FIRST_LINES: Mutex<Vec<String>> = Mutex::new(Vec::new());

    fn keep_chains_first(line: &str) {
        let mut lines = CHAINS_FIRST_LINES.lock().expect("not poisoned");
        lines.push(line.to_string());
    }

    /// Where the chains start early (a blind write first), `auto` infers
    /// before its misread scan, assuming no G1a/G1b case (issue 23). A
    /// read of a failed write then leaves the chains unconfirmed, the scan
    /// finds Elle's G1a case, and the inference runs again knowing it:
    /// Elle's answer, not the exact checker's (which the missing case
    /// would reach). A value a failed transaction also wrote is read from
    /// the committed writer: the chains confirm, and no scan sends it to
    /// the exact checker.
    #[test]
    fn the_inference_goes_before_the_scan_where_the_chains_started() {
        let g1a = history(
            "{:type :invoke, :process 0, :f :txn, :value [[:w 1 1] [:w 2 1]]}\n\
             {:type :fail, :process 0, :f :txn, :value [[:w 1 1] [:w 2 1]]}\n\
             {:type :invoke, :process 1, :f :txn, :value [[:r 1 nil] [:w 2 2]]}\n\
             {:type :ok, :process 1, :f :txn, :value [[:r 1 1] [:w 2 2]]}\n",
        );
        let repeat = history(
            "{:type :invoke, :process 0, :f :txn, :value [[:w 1 1]]}\n\
             {:type :fail, :process 0, :f :txn, :value [[:w 1 1]]}\n\
             {:type :invoke, :process 1, :f :txn, :value [[:w 1 1] [:w 2 1]]}\n\
             {:type :ok, :process 1, :f :txn, :value [[:w 1 1] [:w 2 1]]}\n\
             {:type :invoke, :process 2, :f :txn, :value [[:r 1 nil] [:r 2 nil]]}\n\
             {:type :ok, :process 2, :f :txn, :value [[:r 1 1] [:r 2 1]]}\n",
        );
        let auto = CheckOptions {
            trace: Some(keep_chains_first),
            ..CheckOptions::default()
        };
        let infer = CheckOptions {
            algorithm: Algorithm::Infer,
            ..CheckOptions::default()
        };
        let printed = |h, opts| crate::edn::pr_str(&check(h, opts).expect("checkable").result);
        let elle = printed(&g1a, &infer);
        assert!(elle.contains(":G1a"), "{elle}");
        assert_eq!(printed(&g1a, &auto), elle);
        assert_eq!(printed(&repeat, &auto), "{:valid? true}");
        let lines = CHAINS_FIRST_LINES.lock().expect("not poisoned").clone();
        assert!(
            !lines.iter().any(|l| l.contains("algorithm sat")),
            "{lines:?}"
        );
        let confirmed = "confirmed by a serial witness (every key's version order";
        assert_eq!(
            lines.iter().filter(|l| l.contains(confirmed)).count(),
            1,
            "{lines:?}"
        );
    }

    /// `auto`'s version chains beside the inference (issue 23): they
    /// confirm a valid history, and then the inference's edges are not
    /// listed; when they fail (write skew the inference misses), the edges
    /// are there for the other candidates; without a confirmation to make,
    /// the chains do not run. Started before the inference, the same.
    #[test]
    fn chains_run_beside_the_inference_and_edges_only_when_they_fail() {
        let opts = CheckOptions::default();
        let valid = history(
            "{:type :invoke, :process 0, :f :txn, :value [[:w 1 1] [:w 2 1]]}\n\
             {:type :ok, :process 0, :f :txn, :value [[:w 1 1] [:w 2 1]]}\n\
             {:type :invoke, :process 1, :f :txn, :value [[:r 1 nil] [:w 2 2]]}\n\
             {:type :ok, :process 1, :f :txn, :value [[:r 1 1] [:w 2 2]]}\n",
        );
        let orders = witness_orders(&valid, &opts);
        assert_eq!(
            orders,
            Some(crate::check::witness::Orders { real_time: true })
        );
        let beside = |h, orders: Option<_>, opts| {
            rw_register_beside_chains(
                h,
                opts,
                orders.map_or(ChainsFrom::Skipped, ChainsFrom::Beside),
                Default::default(),
            )
        };
        let (o, edges, chains) = beside(&valid, orders, &opts);
        assert_eq!(o.expect("checked").validity, Validity::Valid);
        let chains = chains.expect("the chains ran");
        assert!(chains.confirmed);
        assert!(edges.is_empty(), "{edges:?}");
        assert!(
            chains
                .lines
                .iter()
                .any(|l| l.starts_with("chains: placing done (")),
            "{:?}",
            chains.lines
        );
        let skew = history(
            "{:type :invoke, :process 0, :f :txn, :value [[:w 1 1] [:w 2 1]]}\n\
             {:type :invoke, :process 1, :f :txn, :value [[:w 1 2] [:w 2 2]]}\n\
             {:type :ok, :process 0, :f :txn, :value [[:w 1 1] [:w 2 1]]}\n\
             {:type :ok, :process 1, :f :txn, :value [[:w 1 2] [:w 2 2]]}\n\
             {:type :invoke, :process 2, :f :txn, :value [[:r 1 nil] [:r 2 nil]]}\n\
             {:type :ok, :process 2, :f :txn, :value [[:r 1 1] [:r 2 2]]}\n",
        );
        let (o, edges, chains) = beside(&skew, witness_orders(&skew, &opts), &opts);
        assert_eq!(o.expect("checked").validity, Validity::Valid);
        assert!(!chains.expect("the chains ran").confirmed);
        assert!(!edges.is_empty());
        // Started before the inference (`auto` on a history that shows at
        // once that the MT path does not apply): the same answers.
        for (h, confirmed) in [(&valid, true), (&skew, false)] {
            let orders = witness_orders(h, &opts).expect("confirmation applies");
            let (o, edges, chains) = crate::par::start_beside(
                || chains_witness(h, orders),
                |later| {
                    rw_register_beside_chains(
                        h,
                        &opts,
                        ChainsFrom::Started(later),
                        Default::default(),
                    )
                },
            );
            assert_eq!(o.expect("checked").validity, Validity::Valid);
            assert_eq!(chains.expect("the chains ran").confirmed, confirmed);
            assert_eq!(edges.is_empty(), confirmed);
        }
        // `--algorithm infer`'s models need no confirmation.
        let weak = CheckOptions {
            expectations: crate::check::result::Expectations {
                models: Some(vec!["read-committed"]),
                anomalies: Vec::new(),
            },
            ..CheckOptions::default()
        };
        assert_eq!(witness_orders(&valid, &weak), None);
        let (_, edges, chains) = beside(&valid, None, &weak);
        assert!(chains.is_none());
        assert!(!edges.is_empty());
    }
}

#[cfg(test)]
mod mt_tests;
