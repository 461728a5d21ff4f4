//! Independent parts of the encoded problem, solved in parallel (the issue's
//! decomposition step; Cobra §4 makes the same observation).
//!
//! Every cycle of a resolution lies inside one strongly connected component
//! of the graph of *all* possible edges (for snapshot isolation, of the
//! layered graph the theory uses). An edge between two components can never
//! be on a cycle, so it is left out; each remaining edge belongs to one
//! component, and its reason's variables tie that component to every other
//! one they also appear in. Variables that share a clause are tied too. The
//! tied groups are the parts: each has its own solver and theory, and the
//! history is serializable iff every part is satisfiable.
//!
//! Parts run on all cores (plain `std::thread::scope` workers pulling from a
//! shared counter: no channel or pool is needed). The answer does not depend
//! on scheduling: when several parts are unsatisfiable the one with the
//! lowest index is reported, and a running part is cancelled only by an
//! unsatisfiable part of lower index.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

use batsat::{lbool, BasicSolver, Lit, SolverInterface, SolverOpts};

use super::encode::Encoding;
use super::polygraph::lit;
use super::theory::{AcyclicTheory, TheoryEdge};
use super::Shape;
use crate::graph::{scc::nontrivial_sccs, DiGraph, Rels};

/// No component / part.
const NONE: u32 = u32::MAX;

/// One independent part: its own vertices, edges, variables and clauses,
/// numbered locally.
pub(super) struct Part {
    /// Number of local vertices (original ones; the theory adds SI twins).
    vertices: usize,
    /// Theory edges over local vertices and local literals; the part's
    /// solver takes them (not a copy: on big histories they are hundreds
    /// of megabytes).
    edges: std::sync::Mutex<Vec<TheoryEdge>>,
    /// Per local edge: its index in [`Encoding::edges`].
    edge_ids: Vec<u32>,
    /// Per local variable: the encoding's solver variable.
    vars: Vec<u32>,
    /// Per local variable: the preferred first value.
    polarity: Vec<Option<bool>>,
    /// Clauses over local literals.
    clauses: Vec<Vec<Lit>>,
}

/// What solving one part gave.
pub(super) enum PartAnswer {
    /// Satisfiable: the value of each local variable.
    Sat(Vec<bool>),
    /// Unsatisfiable, with the last conflict's cycle (indices into
    /// [`Encoding::edges`]); `None` when the clauses alone refuted it.
    Unsat(Option<Vec<u32>>),
    /// Timed out or cancelled.
    Unknown,
}

/// Counters summed over the parts.
#[derive(Default)]
pub(super) struct PartCounters {
    pub(super) theory_conflicts: usize,
    pub(super) conflicts: u64,
    pub(super) decisions: u64,
}

/// Splits the encoding (with `clauses`, its own plus any 2-width ones) into
/// independent parts, over `n` history vertices (`2n` layered ones with
/// `si`). Parts are ordered by their smallest variable, then by their
/// smallest component. `None` once `expired()` (read between the
/// passes, and every [`CLOCK_EVERY`] edges of a pass: on big histories
/// without session order each takes a second or more).
pub(super) fn split(
    enc: &Encoding,
    clauses: Vec<Vec<Lit>>,
    n: usize,
    si: bool,
    expired: &dyn Fn() -> bool,
) -> Option<Vec<Part>> {
    // Long (over 120 lines): components, then per part the renumbered variables,
    // edges and clauses, in one pass over shared index tables.
    let layered = |from: u32, to: u32, rw: bool| -> [(u32, u32); 2] {
        let n = n as u32;
        match (si, rw) {
            (false, _) => [(from, to); 2],
            (true, true) => [(n + from, to); 2],
            (true, false) => [(from, to), (from, n + to)],
        }
    };
    let size = if si { 2 * n } else { n };
    let graph = DiGraph::from_edges(
        size,
        enc.edges
            .iter()
            .flat_map(|e| layered(e.from, e.to, e.rw))
            .map(|(a, b)| (a, b, Rels::WW))
            .collect(),
    );
    if expired() {
        return None;
    }
    let sccs = nontrivial_sccs(&graph);
    drop(graph);
    if expired() {
        return None;
    }
    let mut scc_of = vec![NONE; size];
    for (c, comp) in sccs.iter().enumerate() {
        for &v in comp {
            scc_of[v as usize] = c as u32;
        }
    }
    // Per edge: its component, if it can lie on a cycle.
    let edge_scc: Vec<u32> = enc
        .edges
        .iter()
        .map(|e| {
            layered(e.from, e.to, e.rw)
                .into_iter()
                .find_map(|(a, b)| {
                    let c = scc_of[a as usize];
                    (c != NONE && c == scc_of[b as usize]).then_some(c)
                })
                .unwrap_or(NONE)
        })
        .collect();
    // Union-find over components (ids 0..S) and variables (S..S+V).
    let s = sccs.len();
    let mut uf = UnionFind::new(s + enc.vars());
    for (e, &c) in enc.edges.iter().zip(&edge_scc) {
        if c != NONE {
            for &l in e.reason.iter() {
                uf.union(c as usize, s + l.var().idx() as usize);
            }
        }
    }
    for c in &clauses {
        let first = c.first().expect("pruning leaves no empty clause");
        for l in &c[1..] {
            uf.union(s + first.var().idx() as usize, s + l.var().idx() as usize);
        }
    }
    // Number the parts: roots in order of first appearance, variables
    // first. A variable with no edge on any cycle and no clause needs no
    // solver (any value keeps the graph acyclic).
    let mut in_clause = vec![false; enc.vars()];
    for c in &clauses {
        for l in c {
            in_clause[l.var().idx() as usize] = true;
        }
    }
    let mut has_edge = vec![false; enc.vars()];
    for (e, &c) in enc.edges.iter().zip(&edge_scc) {
        if c != NONE {
            for l in e.reason.iter() {
                has_edge[l.var().idx() as usize] = true;
            }
        }
    }
    let mut part_of_root = vec![NONE; s + enc.vars()];
    let mut parts: Vec<Part> = Vec::new();
    let mut new_part = |root: usize, parts: &mut Vec<Part>| -> u32 {
        if part_of_root[root] == NONE {
            part_of_root[root] = parts.len() as u32;
            parts.push(Part {
                vertices: 0,
                edges: Default::default(),
                edge_ids: Vec::new(),
                vars: Vec::new(),
                polarity: Vec::new(),
                clauses: Vec::new(),
            });
        }
        part_of_root[root]
    };
    let mut local_var = vec![NONE; enc.vars()];
    for v in sweep_order(enc).into_iter().map(|v| v as usize) {
        if !in_clause[v] && !has_edge[v] {
            continue;
        }
        let p = new_part(uf.find(s + v), &mut parts) as usize;
        local_var[v] = parts[p].vars.len() as u32;
        parts[p].vars.push(v as u32);
        parts[p].polarity.push(enc.polarity[v]);
    }
    let scc_part: Vec<u32> = (0..s).map(|c| new_part(uf.find(c), &mut parts)).collect();
    // Local vertices in the encoding's order (so the identity is a
    // topological order of each part's unconditional edges). With SI a
    // vertex and its twin may lie in different parts: it is a vertex of
    // both.
    let part_of_vertex = |v: usize| -> [u32; 2] {
        let at = |x: usize| match scc_of[x] {
            NONE => NONE,
            c => scc_part[c as usize],
        };
        let plain = at(v);
        let twin = if si { at(n + v) } else { NONE };
        [plain, if twin == plain { NONE } else { twin }]
    };
    let mut local_vertex = vec![[NONE; 2]; n];
    for &v in &enc.order {
        for (slot, p) in part_of_vertex(v as usize).into_iter().enumerate() {
            if p != NONE {
                let p = &mut parts[p as usize];
                local_vertex[v as usize][slot] = p.vertices as u32;
                p.vertices += 1;
            }
        }
    }
    let local = |v: u32, p: u32| -> u32 {
        let parts_of = part_of_vertex(v as usize);
        local_vertex[v as usize][if parts_of[0] == p { 0 } else { 1 }]
    };
    let to_local = |l: Lit| lit(local_var[l.var().idx() as usize] as usize, l.sign());
    if expired() {
        return None;
    }
    for (i, (e, &c)) in enc.edges.iter().zip(&edge_scc).enumerate() {
        if i % CLOCK_EVERY == CLOCK_EVERY - 1 && expired() {
            return None;
        }
        if c == NONE {
            continue;
        }
        let pi = scc_part[c as usize];
        let (from, to) = (local(e.from, pi), local(e.to, pi));
        let p = &mut parts[pi as usize];
        p.edges.get_mut().expect("not shared yet").push(TheoryEdge {
            from,
            to,
            rw: e.rw,
            reason: e.reason.map(to_local),
        });
        p.edge_ids.push(i as u32);
    }
    for c in clauses {
        let root = uf.find(s + c[0].var().idx() as usize); // non-empty, as above
        let p = part_of_root[root] as usize;
        parts[p].clauses.push(c.into_iter().map(to_local).collect());
    }
    Some(parts)
}

/// How many edges a pass of [`split`] handles between two readings of the
/// clock.
const CLOCK_EVERY: usize = 1 << 16;

/// The encoding's variables by the known-order position of the later end
/// of the first edge each one guards. Solver variables are numbered in
/// this order, and batsat, while activities are still equal, decides
/// lower numbers first: the search sweeps forward through the history
/// instead of jumping around it (a generated 10,000-transaction history
/// without session order: 8,500 → 1,400 conflicts; VeriStrong's HD-10k
/// SER 6,700 → 4,300, SI 10,100 → 5,800).
fn sweep_order(enc: &Encoding) -> Vec<u32> {
    let pos = crate::graph::positions(&enc.order);
    let mut key = vec![u32::MAX; enc.vars()];
    for e in &enc.edges {
        let at = pos[e.from as usize].max(pos[e.to as usize]);
        for l in e.reason.iter() {
            let k = &mut key[l.var().idx() as usize];
            *k = (*k).min(at);
        }
    }
    let mut order: Vec<u32> = (0..enc.vars() as u32).collect();
    order.sort_by_key(|&v| (key[v as usize], v));
    order
}

/// Solves every part (on all cores) until `deadline`, with the theory's
/// graph `shape`, each part giving up
/// after `conflict_budget` cycle conflicts. Answers are in part order; a
/// part after an unsatisfiable one may be left [`Unknown`].
///
/// [`Unknown`]: PartAnswer::Unknown
pub(super) fn solve_parts(
    parts: &[Part],
    shape: Shape,
    backjump_limit: usize,
    deadline: Option<Instant>,
    conflict_budget: Option<usize>,
) -> (Vec<PartAnswer>, PartCounters) {
    // Largest first, so that a big part does not start last.
    let mut queue: Vec<usize> = (0..parts.len()).collect();
    let size = |p: &Part| p.edges.lock().expect("not taken yet").len() + p.vars.len();
    let sizes: Vec<usize> = parts.iter().map(size).collect();
    queue.sort_by_key(|&p| std::cmp::Reverse(sizes[p]));
    let next = AtomicUsize::new(0);
    let first_unsat = Arc::new(AtomicUsize::new(usize::MAX));
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(parts.len())
        .max(1);
    let work = || {
        let mut done = Vec::new();
        let mut counters = PartCounters::default();
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(&p) = queue.get(i) else {
                break;
            };
            let answer = if first_unsat.load(Ordering::Relaxed) < p {
                PartAnswer::Unknown
            } else {
                let first_unsat = first_unsat.clone();
                let cancelled = move || first_unsat.load(Ordering::Relaxed) < p;
                solve_part(
                    &parts[p],
                    shape,
                    backjump_limit,
                    deadline,
                    conflict_budget,
                    cancelled,
                    &mut counters,
                )
            };
            if matches!(answer, PartAnswer::Unsat(_)) {
                first_unsat.fetch_min(p, Ordering::Relaxed);
            }
            done.push((p, answer));
        }
        (done, counters)
    };
    let results: Vec<(Vec<(usize, PartAnswer)>, PartCounters)> = if workers == 1 {
        vec![work()]
    } else {
        std::thread::scope(|scope| {
            let handles: Vec<_> = (0..workers).map(|_| scope.spawn(work)).collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("part solver panicked"))
                .collect()
        })
    };
    let mut answers: Vec<Option<PartAnswer>> = (0..parts.len()).map(|_| None).collect();
    let mut total = PartCounters::default();
    for (done, counters) in results {
        total.theory_conflicts += counters.theory_conflicts;
        total.conflicts += counters.conflicts;
        total.decisions += counters.decisions;
        for (p, a) in done {
            answers[p] = Some(a);
        }
    }
    let answers = answers
        .into_iter()
        .map(|a| a.expect("every part answered"))
        .collect();
    (answers, total)
}

/// The value of every encoding variable from the parts' answers (`false`
/// for variables in no part: no edge of theirs can be on a cycle), or
/// `None` if some part has no model.
pub(super) fn join_models(
    parts: &[Part],
    answers: &[PartAnswer],
    vars: usize,
) -> Option<Vec<bool>> {
    let mut model = vec![false; vars];
    for (part, answer) in parts.iter().zip(answers) {
        let PartAnswer::Sat(values) = answer else {
            return None;
        };
        for (&v, &b) in part.vars.iter().zip(values) {
            model[v as usize] = b;
        }
    }
    Some(model)
}

/// One part: batsat with the acyclicity theory, until `deadline`,
/// `conflict_budget` cycle conflicts, or `cancelled()`.
fn solve_part(
    part: &Part,
    shape: Shape,
    backjump_limit: usize,
    deadline: Option<Instant>,
    conflict_budget: Option<usize>,
    cancelled: impl Fn() -> bool + 'static,
    counters: &mut PartCounters,
) -> PartAnswer {
    let global = |cycle: Vec<u32>| -> Vec<u32> {
        cycle
            .into_iter()
            .map(|e| part.edge_ids[e as usize])
            .collect()
    };
    let order: Vec<u32> = (0..part.vertices as u32).collect();
    let past = || deadline.is_some_and(|d| Instant::now() >= d);
    // The set-up inserts every unconditional edge: seconds on big parts,
    // so it reads the clock too.
    let mut theory = match AcyclicTheory::new(
        &order,
        std::mem::take(&mut *part.edges.lock().expect("edges taken once")),
        part.vars.len(),
        shape,
        backjump_limit,
        &past,
    ) {
        Ok(Some(t)) => t,
        Ok(None) => return PartAnswer::Unknown,
        Err(cycle) => return PartAnswer::Unsat(Some(global(cycle))),
    };
    // Learnt clauses are kept: batsat's database reduction counts assigned
    // variables as room for learnts; with only open variables in the
    // solver, SI searches that need their theory lemmas thrash without
    // them (the VeriStrong WH history went from 7 s to over 120 s).
    let mut solver = BasicSolver::new(
        SolverOpts {
            min_learnts_lim: i32::MAX,
            ..SolverOpts::default()
        },
        Default::default(),
    );
    let stop = super::deadline_stop(deadline);
    let conflicts = theory.conflicts.clone();
    let over_budget = move || conflict_budget.is_some_and(|b| conflicts.get() >= b);
    solver
        .cb_mut()
        .set_stop(move || cancelled() || over_budget() || stop());
    for p in &part.polarity {
        match p {
            Some(b) => solver.new_var(lbool::new(*b), true),
            None => solver.new_var_default(),
        };
    }
    for c in &part.clauses {
        solver.add_clause_reuse(&mut c.clone());
    }
    let r = solver.solve_limited_th(&mut theory, &[]);
    counters.theory_conflicts += theory.conflicts.get();
    counters.conflicts += solver.num_conflicts();
    counters.decisions += solver.num_decisions();
    if r == lbool::UNDEF {
        return PartAnswer::Unknown;
    }
    if r == lbool::FALSE {
        return PartAnswer::Unsat(theory.last_cycle.take().map(global));
    }
    PartAnswer::Sat(
        (0..part.vars.len())
            .map(|v| solver.value_lit(lit(v, true)) == lbool::TRUE)
            .collect(),
    )
}

/// Disjoint sets with path halving and union by size.
struct UnionFind {
    parent: Vec<u32>,
    size: Vec<u32>,
}

impl UnionFind {
    fn new(n: usize) -> UnionFind {
        UnionFind {
            parent: (0..n as u32).collect(),
            size: vec![1; n],
        }
    }

    fn find(&mut self, mut x: usize) -> usize {
        while self.parent[x] as usize != x {
            let p = self.parent[x] as usize;
            self.parent[x] = self.parent[p];
            x = p;
        }
        x
    }

    fn union(&mut self, a: usize, b: usize) {
        let (mut a, mut b) = (self.find(a), self.find(b));
        if a == b {
            return;
        }
        if self.size[a] < self.size[b] {
            std::mem::swap(&mut a, &mut b);
        }
        self.parent[b] = a as u32;
        self.size[a] += self.size[b];
    }
}

#[cfg(test)]
mod tests {
    use super::super::encode::encode;
    use super::super::{Polarity, SatOptions};
    use super::*;

    /// Splitting reads the clock between its passes and inside the pass
    /// over the edges, and every reading stops it: 300 blind writers of one
    /// key without session order give 89,700 ww edges (more than one
    /// clock interval), so a full run reads the clock at least four times,
    /// and a deadline that passes at the k-th reading gives `None`.
    #[test]
    fn split_stops_at_every_reading_of_the_clock() {
        let h = super::super::tests::blind_writers(300);
        let opts = SatOptions {
            session_order: false,
            ..SatOptions::default()
        };
        let build = super::super::build::build;
        let g = build(&h, &Default::default(), &opts, &|| false)
            .expect("no violation")
            .expect("built");
        let assign = vec![None; g.vars];
        let enc =
            encode(&g, &assign, Polarity::KnownOrder, None, false, &|| false).expect("in time");
        assert!(enc.edges.len() > CLOCK_EVERY, "{}", enc.edges.len());
        let calls = std::cell::Cell::new(0usize);
        let parts = split(&enc, enc.clauses.clone(), g.n, false, &|| {
            calls.set(calls.get() + 1);
            false
        })
        .expect("no deadline");
        assert_eq!(parts.len(), 1);
        let readings = calls.get();
        assert!(readings >= 4, "{readings}");
        for k in 1..=readings {
            calls.set(0);
            let stopped = split(&enc, enc.clauses.clone(), g.n, false, &|| {
                calls.set(calls.get() + 1);
                calls.get() >= k
            });
            assert!(stopped.is_none(), "reading {k}");
            assert_eq!(calls.get(), k);
        }
        // Encoding reads the clock too: an expired deadline stops it.
        assert!(encode(&g, &assign, Polarity::KnownOrder, None, false, &|| true).is_none());
    }

    /// The theory's set-up reads the clock before it starts and every
    /// `SETUP_CLOCK_EVERY` unconditional edges: a chain of 10,000 of them
    /// reads it three times, and a deadline passing at any reading stops
    /// the set-up (`Ok(None)`); without a deadline the set-up completes,
    /// and a cycle of unconditional edges is still reported.
    #[test]
    fn theory_setup_stops_at_the_deadline() {
        use super::super::theory::SETUP_CLOCK_EVERY;
        let n = 10_001u32;
        let chain = |close: bool| -> Vec<TheoryEdge> {
            (0..n - 1)
                .map(|v| (v, v + 1))
                .chain(close.then_some((n - 1, 0)))
                .map(|(from, to)| TheoryEdge {
                    from,
                    to,
                    rw: false,
                    reason: super::super::polygraph::Reason::from(&[][..]),
                })
                .collect()
        };
        let order: Vec<u32> = (0..n).collect();
        let shape = Shape {
            si: false,
            single_rw: false,
        };
        let calls = std::cell::Cell::new(0usize);
        let setup = |close: bool, k: usize| {
            calls.set(0);
            AcyclicTheory::new(&order, chain(close), 0, shape, 100, &|| {
                calls.set(calls.get() + 1);
                calls.get() >= k
            })
        };
        assert!(matches!(setup(false, usize::MAX), Ok(Some(_))));
        let readings = calls.get();
        assert_eq!(readings, 1 + (n as usize - 1) / SETUP_CLOCK_EVERY);
        for k in 1..=readings {
            assert!(matches!(setup(false, k), Ok(None)), "reading {k}");
            assert_eq!(calls.get(), k);
        }
        match setup(true, usize::MAX) {
            Err(cycle) => assert_eq!(cycle.len(), n as usize),
            Ok(_) => panic!("the closed chain is a cycle"),
        }
    }
}
