//! Static robustness of transactional programs (Nagar–Jagannathan, CONCUR
//! 2018): can some execution of these programs, allowed by a weak
//! consistency model, be non-serializable?
//!
//! * [`syntax`], [`parse`]: the program language (parser with
//!   line:column errors).
//! * [`interp`]: concrete and abstract readings of a transaction; the record
//!   universe and descriptors (a type with parameters from the domains).
//! * [`exec`]: executions, replay, the model axioms, dependency graphs and
//!   cycles in Elle's vocabulary.
//! * [`sat`]: the bounded encoding on batsat; [`enumerate`]: the
//!   explicit-state enumerator that cross-checks it.
//! * [`witness`]: witnesses as EDN and as Jepsen list-append histories.
//!
//! Models (the paper's axioms; `vis ⊆ ar`, atomic visibility and
//! last-writer-wins always hold): `ec` nothing more; `cc` vis transitive;
//! `pc` ar;vis ⊆ vis; `psi` two writers of a key are visible in ar order,
//! and vis transitive (PSI as the paper's reference for it, Sovran et al.,
//! defines it: the paper's Ψ_PSI states only the write-conflict axiom, but
//! its TPC-C results at k = 3 need causality); `si` = psi ∧ pc; `serializable`
//! vis = ar. Scoped annotations in the program file: `model T: M` applies
//! pair axioms (psi, serializable) to pairs with an instance of T and
//! observer axioms (cc, pc, and si's pc part) to observers of type T;
//! `model (T1, T2): M` (psi or serializable) to pairs of a T1 and a T2.
//! Several models (file and `-c`) hold together.
//!
//! All answers are relative to the declared parameter domains and initial
//! records: the bounded check is exact there (SAT candidates are replayed
//! concretely), and proofs cover every execution whose instances take
//! parameters from the domains.

pub mod enumerate;
pub mod exec;
pub mod interp;
pub mod parse;
pub mod sat;
pub mod syntax;
pub mod witness;

/// Test-only switches, each turning one proof refinement off, so that a
/// test can show the refinement matters (a proof it makes fails without
/// it) and that the random cross-checks reach it. All off (every rule on)
/// unless a test sets them; a test binary that sets them must run alone
/// in its process (they are global). Not part of the interface.
#[doc(hidden)]
pub mod rules {
    use std::sync::atomic::{AtomicU8, Ordering};
    /// The rules turned off, as a bit set of the constants below.
    pub static OFF: AtomicU8 = AtomicU8::new(0);
    /// *First writers* (`sat::values::first_writers`).
    pub const FIRST_WRITERS: u8 = 1;
    /// *An `IF a = b` branch pins `a`* (the abstract reading's refinement).
    pub const IF_PINS: u8 = 2;
    /// *Written once* (a two-valued key with one writer per execution).
    pub const WRITTEN_ONCE: u8 = 4;
    /// Whether `rule` is on.
    pub fn on(rule: u8) -> bool {
        OFF.load(Ordering::Relaxed) & rule == 0
    }
}

use std::time::{Duration, Instant};
use syntax::{Axiom, Model, Program, Scope};

/// A loaded program.
#[derive(Clone, Debug)]
pub struct Loaded {
    /// The program.
    pub prog: Program,
    /// Its analysis.
    pub an: interp::Analysis,
}

/// The largest bound k (and proof path length + 1).
pub const MAX_K: usize = 62;

/// The most descriptors (a type with parameter values) a program may have:
/// every one is analysed, and each is a choice per instance slot.
pub const MAX_DESCRIPTORS: usize = 10_000;

/// Parses and analyses a program; errors name line:column.
pub fn load(src: &str) -> Result<Loaded, syntax::SyntaxError> {
    let prog = syntax::parse(src)?;
    let mut total = 0f64;
    for t in &prog.txns {
        total += t.domains.iter().map(|d| d.len() as f64).product::<f64>();
        if total > MAX_DESCRIPTORS as f64 {
            return Err(syntax::SyntaxError {
                pos: t.pos,
                message: format!(
                    "more than {MAX_DESCRIPTORS} instances to choose from (transaction types × parameter values) by `{}`: narrow the domains",
                    t.name
                ),
            });
        }
    }
    let an = interp::analyse(&prog).map_err(|e| syntax::SyntaxError {
        pos: e.0,
        message:
            "the key of an INSERT must be computable from the parameters (and constants) alone"
                .into(),
    })?;
    Ok(Loaded { prog, an })
}

/// Proof methods (§5.2, §5.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// No chordless k-edge path, and no cycle of ≤ k instances.
    ShortestPath,
    /// Lemma 11, iterated over subsets of the transaction types.
    Inductive,
}

/// Bounded engines.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Engine {
    /// The SAT encoding with concrete confirmation.
    Sat,
    /// The explicit enumerator.
    Enumerate,
}

/// Options of a robustness check.
#[derive(Clone, Debug)]
pub struct Options {
    /// Global models (from `-c`), added to the file's annotations.
    pub models: Vec<Model>,
    /// The bound (instances), and the longest path the shortest-path
    /// method tries.
    pub k: usize,
    /// Prove for all executions.
    pub prove: Option<Method>,
    /// The bounded engine.
    pub engine: Engine,
    /// Give up after this long.
    pub timeout: Option<Duration>,
}

/// The verdict.
#[derive(Clone, Debug)]
pub enum Verdict {
    /// A confirmed witness.
    NotRobust(Box<witness::Witness>),
    /// No violation with at most k instances.
    RobustUpTo(usize),
    /// Proved for all executions.
    Proved(Proof),
    /// Out of time.
    Unknown(String),
}

/// How robustness was proved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Proof {
    /// SP_k and Cycle_k unsatisfiable.
    ShortestPath(usize),
    /// The type subsets removed in turn.
    Inductive(Vec<Vec<usize>>),
}

/// A check's answer, with notes (e.g. why a proof failed).
#[derive(Clone, Debug)]
pub struct Report {
    /// The verdict.
    pub verdict: Verdict,
    /// The axioms in force.
    pub axioms: Vec<Axiom>,
    /// Remarks.
    pub notes: Vec<String>,
}

/// The axioms in force: the file's and the global models.
pub fn axioms(prog: &Program, models: &[Model]) -> Vec<Axiom> {
    let mut out = prog.axioms.clone();
    out.extend(models.iter().map(|&model| Axiom {
        model,
        scope: Scope::Global,
    }));
    out.sort();
    out.dedup();
    out
}

/// The bounded check, 2 to k instances (a smallest witness first).
pub fn bounded(
    l: &Loaded,
    axioms: &[Axiom],
    k: usize,
    engine: Engine,
    deadline: Option<Instant>,
) -> Verdict {
    bounded_among(
        l,
        axioms,
        k,
        engine,
        &vec![true; l.prog.txns.len()],
        &[],
        deadline,
    )
}

/// The bounded check over executions of the `allowed` transaction types
/// only, with the types of some slots pinned (`pins[i]`: slot i's type, in
/// ar order).
pub fn bounded_among(
    l: &Loaded,
    axioms: &[Axiom],
    k: usize,
    engine: Engine,
    allowed: &[bool],
    pins: &[Option<usize>],
    deadline: Option<Instant>,
) -> Verdict {
    for kk in 2..=k {
        let found = match engine {
            Engine::Enumerate => {
                match enumerate::search_exactly(&l.prog, &l.an, axioms, kk, allowed, pins, deadline)
                {
                    enumerate::Bounded::Violation(ex) => Some(ex),
                    enumerate::Bounded::None => None,
                    enumerate::Bounded::Timeout => {
                        return Verdict::Unknown(format!("timeout at k = {kk}"))
                    }
                }
            }
            Engine::Sat => {
                match sat::bounded(&l.prog, &l.an, axioms, kk, allowed, pins, deadline).0 {
                    sat::Answer::Sat(ex, _) => Some(ex),
                    sat::Answer::Unsat => None,
                    sat::Answer::Unknown => {
                        return Verdict::Unknown(format!("timeout at k = {kk}"))
                    }
                }
            }
        };
        if let Some(ex) = found {
            let w = witness::Witness::new(&l.prog, &l.an, ex)
                .expect("a confirmed execution has a cycle");
            return Verdict::NotRobust(Box::new(w));
        }
    }
    Verdict::RobustUpTo(k)
}

/// What a proof method concluded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ProofOutcome {
    /// Robust for all executions.
    Proved(Proof),
    /// The method's conditions fail (why).
    Failed(String),
    /// The deadline passed.
    Timeout,
}

/// The outcome of one proof query (Sat: the model's slots).
enum Q {
    Unsat,
    Sat(exec::Execution),
    Unknown,
}

/// A proof query's model as the path of its slots: `A(1) -> B(2) -> …`.
fn path_names(l: &Loaded, ex: &exec::Execution) -> String {
    let names: Vec<String> = ex
        .descs
        .iter()
        .map(|&d| witness::instance_name(&l.prog, &l.an.descs[d]))
        .collect();
    names.join(" -> ")
}

fn query(
    l: &Loaded,
    axioms: &[Axiom],
    n: usize,
    allowed: &[bool],
    q: &sat::Query,
    fixed: bool,
    deadline: Option<Instant>,
) -> Q {
    match sat::solve(&l.prog, &l.an, axioms, n, allowed, q, fixed, deadline) {
        sat::Answer::Unsat => Q::Unsat,
        sat::Answer::Sat(ex, _) => Q::Sat(ex),
        sat::Answer::Unknown => Q::Unknown,
    }
}

/// The shortest-path method: the least k' ≤ k with φ_SP,k' unsatisfiable,
/// then φ_Cycle,k'.
pub fn prove_shortest_path(
    l: &Loaded,
    axioms: &[Axiom],
    k: usize,
    deadline: Option<Instant>,
) -> ProofOutcome {
    let all = vec![true; l.prog.txns.len()];
    let mut longest = None;
    for kk in 2..=k.max(2) {
        match query(
            l,
            axioms,
            kk + 1,
            &all,
            &sat::Query::ShortestPath,
            false,
            deadline,
        ) {
            Q::Unknown => return ProofOutcome::Timeout,
            Q::Sat(ex) => {
                longest = Some(ex);
                continue;
            }
            Q::Unsat => {}
        }
        return match query(l, axioms, kk, &all, &sat::Query::Cycle, true, deadline) {
            Q::Unknown => ProofOutcome::Timeout,
            Q::Unsat => ProofOutcome::Proved(Proof::ShortestPath(kk)),
            Q::Sat(_) => ProofOutcome::Failed(format!("shortest-path: no chordless {kk}-edge path, but a cycle of at most {kk} instances is not excluded")),
        };
    }
    let eg = longest.map_or(String::new(), |ex| {
        format!(" (the encoding allows {})", path_names(l, &ex))
    });
    ProofOutcome::Failed(format!(
        "shortest-path: chordless dependency paths of every length up to {k} edges exist{eg}"
    ))
}

/// The inductive method: guard with φ_Cycle,2 (Eq. 7 omits 2-cycles), then
/// repeatedly remove the smallest subset T' of the remaining types for
/// which φ_Ind,T' is unsatisfiable, until the remaining types have no
/// dependencies among themselves.
pub fn prove_inductive(l: &Loaded, axioms: &[Axiom], deadline: Option<Instant>) -> ProofOutcome {
    let nt = l.prog.txns.len();
    let mut remaining = vec![true; nt];
    match query(l, axioms, 2, &remaining, &sat::Query::Cycle, true, deadline) {
        Q::Unknown => return ProofOutcome::Timeout,
        Q::Sat(_) => {
            return ProofOutcome::Failed("inductive: a 2-instance cycle is not excluded".into())
        }
        Q::Unsat => {}
    }
    let mut steps = Vec::new();
    loop {
        match query(
            l,
            axioms,
            2,
            &remaining,
            &sat::Query::AnyDep,
            false,
            deadline,
        ) {
            Q::Unknown => return ProofOutcome::Timeout,
            Q::Unsat => return ProofOutcome::Proved(Proof::Inductive(steps)),
            Q::Sat(_) => {}
        }
        match query(l, axioms, 3, &remaining, &sat::Query::IndPath, false, deadline) {
            Q::Unknown => return ProofOutcome::Timeout,
            Q::Sat(ex) => return ProofOutcome::Failed(format!("inductive: a two-edge dependency path ending ar-before both others is not excluded (the encoding allows {})", path_names(l, &ex))),
            Q::Unsat => {}
        }
        let types: Vec<usize> = (0..nt).filter(|&t| remaining[t]).collect();
        if types.len() > 12 {
            return ProofOutcome::Failed(
                "inductive: more than 12 transaction types left to choose subsets from".into(),
            );
        }
        let mut subsets: Vec<Vec<usize>> = (1u32..1 << types.len())
            .map(|m| {
                types
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| m >> i & 1 == 1)
                    .map(|(_, &t)| t)
                    .collect()
            })
            .collect();
        subsets.sort_by(|a, b| a.len().cmp(&b.len()).then_with(|| a.cmp(b)));
        let mut chosen = None;
        for s in subsets {
            match query(
                l,
                axioms,
                2,
                &remaining,
                &sat::Query::IndEdge(s.clone()),
                false,
                deadline,
            ) {
                Q::Unknown => return ProofOutcome::Timeout,
                Q::Unsat => {
                    chosen = Some(s);
                    break;
                }
                Q::Sat(_) => {}
            }
        }
        let Some(s) = chosen else {
            return ProofOutcome::Failed("inductive: every subset of the remaining types has a dependency going backward in ar".into());
        };
        for &t in &s {
            remaining[t] = false;
        }
        steps.push(s);
    }
}

/// Runs a check: the proof when asked (falling back to the bounded check
/// when it fails), else the bounded check.
pub fn check(l: &Loaded, opts: &Options) -> Report {
    let deadline = opts.timeout.map(|t| Instant::now() + t);
    let axioms = axioms(&l.prog, &opts.models);
    let mut notes = Vec::new();
    if opts.k > MAX_K {
        // Visibility is kept as one 64-bit mask per instance.
        let why = format!("k = {} is above the largest bound, {MAX_K}", opts.k);
        return Report {
            verdict: Verdict::Unknown(why),
            axioms,
            notes,
        };
    }
    if let Some(m) = opts.prove {
        let r = match m {
            Method::ShortestPath => prove_shortest_path(l, &axioms, opts.k, deadline),
            Method::Inductive => prove_inductive(l, &axioms, deadline),
        };
        match r {
            ProofOutcome::Timeout => {
                return Report {
                    verdict: Verdict::Unknown("timeout during the proof".into()),
                    axioms,
                    notes,
                }
            }
            ProofOutcome::Proved(p) => {
                return Report {
                    verdict: Verdict::Proved(p),
                    axioms,
                    notes,
                }
            }
            ProofOutcome::Failed(why) => notes.push(format!("not proved: {why}")),
        }
    }
    let verdict = bounded(l, &axioms, opts.k, opts.engine, deadline);
    Report {
        verdict,
        axioms,
        notes,
    }
}
