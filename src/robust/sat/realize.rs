//! Realizing a proof query's pattern in a *closed* execution: n instance
//! slots that are the whole execution (ar = slot order), dependencies
//! forced both ways (so D is the execution's, Def. 3, up to the
//! footprints), the pattern's positions placed on some of the slots, and
//! every model confirmed by concrete replay (refuted ones teach the solver
//! their footprints, as in the bounded check). A confirmed answer is a real
//! execution in which the pattern holds, so *no* encoding sound for the
//! program can refute the pattern: this is how a failed proof is told
//! apart from a loose encoding.

use super::{encode, refute, run, Answer, Enc};
use crate::robust::exec::{axioms_hold_at, dense_dependencies, replay, Execution};
use crate::robust::interp::Analysis;
use crate::robust::syntax::{Axiom, Program};
use batsat::{lbool, Lit, SolverInterface};
use std::time::Instant;

/// A pattern over dependency-graph positions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Pattern {
    /// φ_SP's: a dependency path of `edges` edges through `edges + 1`
    /// distinct instances with no forward chord; with `backward`, no
    /// backward edge either but last → first (the shortest-path query of
    /// [`super::Query::ShortestPath`], which reads the path as part of a
    /// minimal cycle).
    ChordlessPath {
        /// The path's edges.
        edges: usize,
        /// Also no backward chord.
        backward: bool,
    },
    /// Lemma 11's condition 2 broken (φ_Ind's second pattern): p0 → p1 →
    /// p2 with p2 ar-before both others.
    IndPath,
    /// Lemma 11's condition 1 broken for these types (φ_Ind's first
    /// pattern): p0, of one of them, → p1 with p1 ar-before p0.
    IndEdge(Vec<usize>),
}

impl Pattern {
    /// The number of positions.
    pub fn size(&self) -> usize {
        match self {
            Pattern::ChordlessPath { edges, .. } => edges.saturating_add(1),
            Pattern::IndPath => 3,
            Pattern::IndEdge(_) => 2,
        }
    }
    /// (p, q, whether D(p, q) must hold or must not).
    fn constraints(&self) -> Vec<(usize, usize, bool)> {
        match *self {
            Pattern::ChordlessPath { edges, backward } => {
                let mut out = Vec::new();
                for p in 0..=edges {
                    for q in p + 1..=edges {
                        out.push((p, q, q == p + 1));
                        if backward && (p, q) != (0, edges) {
                            out.push((q, p, false));
                        }
                    }
                }
                out
            }
            Pattern::IndPath => vec![(0, 1, true), (1, 2, true)],
            Pattern::IndEdge(_) => vec![(0, 1, true)],
        }
    }
}

/// The answer of [`realize`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Realization {
    /// A real execution (ar = slot order) and the slot of each position.
    Found(Execution, Vec<usize>),
    /// No execution of `n` instances has the pattern.
    None,
    /// The deadline passed.
    Unknown,
}

/// Searches the executions of exactly `n` instances for one in which the
/// pattern holds (its positions on distinct slots; the other slots are
/// the instances outside it).
pub fn realize(
    prog: &Program,
    an: &Analysis,
    axioms: &[Axiom],
    n: usize,
    pattern: &Pattern,
    deadline: Option<Instant>,
) -> Realization {
    let m = pattern.size();
    if m > n || n > crate::robust::MAX_K {
        return Realization::None;
    }
    let all = vec![true; prog.txns.len()];
    let Some(mut e) = encode(
        an,
        axioms,
        n,
        &all,
        true,
        prog.txns.len(),
        true,
        true,
        false,
        deadline,
    ) else {
        return Realization::Unknown;
    };
    let pos = place(&mut e, pattern, m);
    loop {
        if deadline.is_some_and(|d| Instant::now() >= d) {
            return Realization::Unknown;
        }
        match run(&mut e, deadline) {
            Answer::Sat(ex, _) => {
                let at: Vec<usize> = pos
                    .iter()
                    .map(|row| {
                        row.iter()
                            .position(|&l| e.s.value_lit(l) == lbool::TRUE)
                            .expect("every position on a slot")
                    })
                    .collect();
                if holds(prog, an, axioms, &ex, pattern, &at) {
                    return Realization::Found(ex, at);
                }
                refute(prog, an, &mut e, &ex);
            }
            Answer::Unsat => return Realization::None,
            Answer::Unknown => return Realization::Unknown,
        }
    }
}

/// The position literals (`pos[p][i]`: position p is slot i, an
/// injection) and the pattern's constraints over them.
fn place(e: &mut Enc, pattern: &Pattern, m: usize) -> Vec<Vec<Lit>> {
    let n = e.n;
    let pos: Vec<Vec<Lit>> = (0..m).map(|_| (0..n).map(|_| e.var()).collect()).collect();
    for row in &pos {
        e.clause(row);
        e.at_most_one(row);
    }
    for i in 0..n {
        let col: Vec<Lit> = pos.iter().map(|row| row[i]).collect();
        e.at_most_one(&col);
    }
    for (p, q, want) in pattern.constraints() {
        for i in 0..n {
            for j in 0..n {
                if i != j {
                    let d = e.d[i][j];
                    e.clause(&[!pos[p][i], !pos[q][j], if want { d } else { !d }]);
                }
            }
        }
    }
    if let Pattern::IndEdge(types) = pattern {
        // p0 of the types, ar-after p1.
        for i in 0..n {
            let mut c = vec![!pos[0][i]];
            // A type the program lacks has no instance.
            c.extend(types.iter().filter_map(|&t| e.typ[i].get(t).copied()));
            e.clause(&c);
            for j in i + 1..n {
                e.clause(&[!pos[0][i], !pos[1][j]]);
            }
        }
    }
    if *pattern == Pattern::IndPath {
        // p2 ar-before p0 and p1: ar is slot order.
        for p in [0, 1] {
            for i in 0..n {
                for j in i + 1..n {
                    e.clause(&[!pos[p][i], !pos[2][j]]);
                }
            }
        }
    }
    pos
}

/// Whether the replayed execution is valid and has the pattern at `at`.
pub fn holds(
    prog: &Program,
    an: &Analysis,
    axioms: &[Axiom],
    ex: &Execution,
    pattern: &Pattern,
    at: &[usize],
) -> bool {
    let reps = replay(prog, an, ex);
    let types: Vec<usize> = ex.descs.iter().map(|&d| an.descs[d].txn).collect();
    // Every slot a committed instance.
    if reps.iter().any(|r| r.fp.aborts)
        || !(0..ex.descs.len()).all(|j| axioms_hold_at(axioms, &types, &ex.vis, &reps, j))
    {
        return false;
    }
    let d = dense_dependencies(&reps);
    let ok = pattern
        .constraints()
        .iter()
        .all(|&(p, q, want)| d[at[p]][at[q]] == want);
    ok && match pattern {
        Pattern::ChordlessPath { .. } => true,
        Pattern::IndPath => at[2] < at[0] && at[2] < at[1],
        Pattern::IndEdge(ts) => at[1] < at[0] && ts.contains(&types[at[0]]),
    }
}
