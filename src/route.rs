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
//!   otherwise `infer`; for list-append, always `infer`: the version order
//!   is read off the lists, so the inference is already exact, it is as fast
//!   as `mini`, and it gives Elle's own answers (the MT path differs from
//!   Elle in small ways, e.g. no wr edge from an intermediate read, and
//!   thin-air reads as G1a).
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
//! Which path ran, and why, is printed on standard error with `--verbose`;
//! the result map's keys never depend on it.

use crate::error::InputError;
use crate::infer::mini::{self, MtWorkload, NotMini};
use crate::infer::rw_register::RwOptions;
use crate::model::{History, OpType};
use crate::pipeline::{self, CheckOptions, Outcome};

pub use crate::check::outcome::Algorithm;

/// The transactional workloads routing knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Workload {
    /// Elle's list-append.
    ListAppend,
    /// Elle's rw-register.
    RwRegister,
}

impl Workload {
    fn mt(self) -> MtWorkload {
        match self {
            Workload::ListAppend => MtWorkload::ListAppend,
            Workload::RwRegister => MtWorkload::RwRegister,
        }
    }
}

/// Checks a history with the algorithm `opts.algorithm` selects.
pub fn check(
    h: &History,
    opts: &CheckOptions,
    workload: Workload,
    rw: &RwOptions,
) -> Result<Outcome, InputError> {
    let infer = |why: String| {
        if opts.verbose {
            eprintln!("ellery: {}: algorithm infer ({why})", h.origin);
        }
        match workload {
            Workload::ListAppend => pipeline::check_list_append(h, opts),
            Workload::RwRegister => pipeline::check_rw_register(h, opts, rw),
        }
    };
    // Predicate micro-ops (`:rp`/`:wp`, issue 18): only the exact checker
    // reads them, under `auto` too.
    if h.has_predicates() && matches!(opts.algorithm, Algorithm::Auto | Algorithm::Sat) {
        if opts.verbose {
            eprintln!("ellery: {}: algorithm sat (predicate micro-ops)", h.origin);
        }
        return crate::check::sat::check_history(h, opts);
    }
    match opts.algorithm {
        Algorithm::Infer => infer("--algorithm infer".into()),
        Algorithm::Sat if workload == Workload::RwRegister => {
            validate(h, workload)?;
            crate::check::sat::check_history(h, opts)
        }
        Algorithm::Lwt | Algorithm::Sat => Err(InputError {
            kind: Default::default(),
            file: h.origin.clone(),
            line: 1,
            column: 1,
            message: match opts.algorithm {
                Algorithm::Lwt => "--algorithm lwt applies to cas-register histories (-m cas-register), not to transactional ones (for these: auto, infer, mini, sat)",
                _ => "--algorithm sat applies to -m rw-register only",
            }
            .to_string(),
        }),
        Algorithm::Mini => {
            validate(h, workload)?;
            match check_mini(h, opts, workload, "--algorithm mini") {
                Ok(o) => Ok(o),
                Err(e) => Err(h.error_at(
                    e.pos,
                    format!(
                        "--algorithm mini: not a mini-transaction history with unique values: {}",
                        e.reason
                    ),
                )),
            }
        }
        Algorithm::Auto if workload == Workload::ListAppend && opts.confirm_with_sat => {
            if opts.verbose {
                eprintln!("ellery: {}: algorithm infer (auto: list-append histories use Elle's inference, exact for lists, plus reads of elements nobody appended)", h.origin);
            }
            pipeline::check_list_append_exact(h, opts)
        }
        Algorithm::Auto if workload == Workload::ListAppend => infer(
            "auto: list-append histories use Elle's inference, exact for lists and Elle-identical"
                .into(),
        ),
        Algorithm::Auto => {
            validate(h, workload)?;
            let exact = opts.confirm_with_sat;
            let why = if !exact {
                None
            } else if crate::check::sat::strongest(opts)
                < Some(crate::check::sat::Isolation::ReadCommitted)
            {
                // Elle orders a version a transaction read before the one it
                // wrote, which only G1c-free models guarantee.
                Some("the models forbid no G1c cycle, which the inference's version orders assume; the exact check is cheap here")
            } else {
                crate::check::sat::inference_misreads(h)
            };
            if let Some(why) = why {
                if opts.verbose {
                    eprintln!("ellery: {}: algorithm sat (auto: {why})", h.origin);
                }
                return crate::check::sat::check_history(h, opts);
            }
            match check_mini(
                h,
                opts,
                workload,
                "auto: every committed transaction is a mini-transaction with unique values",
            ) {
                Ok(o) => Ok(o),
                Err(e) => {
                    let why = format!(
                        "auto: the op at index {} is why the mini-transaction path does not apply: {}",
                        h.ops[e.pos].index, e.reason
                    );
                    auto_register(h, opts, infer(why))
                }
            }
        }
    }
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
) -> Result<Outcome, InputError> {
    use crate::check::sat::{self, Isolation};
    use crate::pipeline::Validity;
    let say = |what: &str| {
        if opts.verbose {
            eprintln!("ellery: {}: {what}", h.origin);
        }
    };
    // With unique values the inference is exact below consistent view (a
    // topological order of its acyclic graph gives the versions) unless an
    // `:info` writer's edges are missing from it.
    let needs_confirmation = match sat::strongest(opts) {
        Some(c) if c >= Isolation::ConsistentView => true,
        Some(Isolation::ReadCommitted) => h.ops.iter().any(|o| o.op_type == OpType::Info),
        _ => false,
    };
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
            let limit = if sat::orders_sessions(opts) {
                AUTO_SAT_MAX_OPS
            } else {
                AUTO_SAT_MAX_OPS_WITHOUT_SESSIONS
            };
            if h.ops.len() > limit {
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

/// The workload's own input checks, which hold on both paths.
fn validate(h: &History, workload: Workload) -> Result<(), InputError> {
    match workload {
        Workload::ListAppend => crate::infer::list_append::validate(h),
        Workload::RwRegister => crate::infer::rw_register::validate(h),
    }
}

/// The mini-transaction path, or why it does not apply.
pub fn check_mini(
    h: &History,
    opts: &CheckOptions,
    workload: Workload,
    why: &str,
) -> Result<Outcome, NotMini> {
    let clock = std::time::Instant::now();
    let analysis = mini::analyze_with(
        h,
        workload.mt(),
        pipeline::extra_graph(opts),
        mini::immediate_for(&opts.expectations),
    )?;
    if opts.verbose {
        let s = &analysis.stats;
        eprintln!(
            "ellery: {}: algorithm mini ({why}); {} committed and {} observed indeterminate transactions, {} data edges, {} divergent versions; built in {:.3} s",
            h.origin,
            s.committed,
            s.observed_info,
            s.data_edges,
            s.divergences,
            clock.elapsed().as_secs_f64()
        );
    }
    Ok(pipeline::check_inferred(
        h,
        opts,
        &analysis.inference,
        clock,
    ))
}

/// Checks a cas-register history with the algorithm `opts.algorithm`
/// selects: `auto` (the chain per key where it applies, else the search) or
/// `lwt` (the chain on every key, else an error naming the op).
pub fn check_cas_register(h: &History, opts: &CheckOptions) -> Result<Outcome, InputError> {
    let why = match opts.algorithm {
        Algorithm::Auto => {
            "auto: per key, the lwt chain where written values are unique, else the wgl search (see :analyzer)"
        }
        Algorithm::Lwt => {
            let regs = crate::infer::register::registers(h)?;
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
        a => {
            return Err(InputError {
                kind: Default::default(),
                file: h.origin.clone(),
                line: 1,
                column: 1,
                message: format!(
                    "--algorithm {} applies to transactional histories (list-append, rw-register); cas-register histories take auto or lwt",
                    a.name()
                ),
            })
        }
    };
    if opts.verbose {
        eprintln!(
            "ellery: {}: algorithm {} ({why})",
            h.origin,
            opts.algorithm.name()
        );
    }
    pipeline::check_cas_register(h, opts)
}
