//! The SAT encoding (the paper's §4, grounded): n instance slots, each one
//! descriptor (a transaction type with parameters from the declared
//! domains); per slot and key, read/write literals bounded by the
//! descriptors' abstract footprints; vis and ar; per key the dependency
//! literals constrained by the paper's *necessary* conditions (wr: the
//! writer is visible and no visible writer of the key is ar-later; rw: no
//! visible writer of the key is the overwriter or ar-after it, which is
//! φ_dep) and ww *forced* both ways (two writers of a key are ordered by
//! ar), rw forced when the writer is ar-after the reader; the keys one
//! statement execution writes written together; in the proofs, the view
//! values of two-valued keys tied to visibility (`values`); the model's
//! axioms over vis/ar; and a query. Exactly-one choices use a ladder past
//! a few literals, and the deadline is checked while encoding.
//!
//! Every axiom is universal over instances, so the formula holds of every
//! subset of a valid execution's instances: UNSAT of a query over n slots
//! speaks about every n instances of every execution, which is what the
//! proof methods need. Bounded checks fix ar to slot order (slots are
//! interchangeable) and confirm each model by concrete replay, blocking the
//! model and asking again when the abstraction was too loose (so the
//! bounded answer is exact within the domains).

// Slot-pair matrices (ar, vis, vw, D) are indexed by both slots at once, so
// index loops read clearer than iterators here.
#![allow(clippy::needless_range_loop)]

// Long (about 880 lines): the encoding, its queries and the witness read
// back from a model share the literal tables; the grounding is `interp`,
// the view values are `values`.

use super::exec::{axioms_hold_at, best_cycle, dependencies, replay, Execution};
use super::interp::Analysis;
use super::syntax::{Axiom, Model, Program, Scope};
use batsat::{lbool, BasicSolver, Lit, SolverInterface, SolverOpts};
use std::time::Instant;
use values::{first_writers, next_version, view_values};

mod realize;
mod values;

pub use realize::{holds as realize_holds, realize, Pattern, Realization};

/// A query over the slots.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Query {
    /// φ_Cycle: some dependency cycle among the slots.
    Cycle,
    /// φ_SP: slots 0..n form a dependency path with no forward chord.
    ShortestPath,
    /// φ_Ind, first pattern: an edge from slot 0, of one of these types,
    /// to slot 1 that goes backward in ar.
    IndEdge(Vec<usize>),
    /// φ_Ind, second pattern: a path 0 → 1 → 2 whose end is ar-before
    /// both others.
    IndPath,
    /// Some dependency from slot 0 to slot 1.
    AnyDep,
}

/// A SAT answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Answer {
    /// A model: descriptors per slot, vis as bit masks, ar as a slot order.
    Sat(Execution, Vec<usize>),
    /// No model.
    Unsat,
    /// The deadline passed.
    Unknown,
}

/// From this many literals on, at-most-one constraints use the ladder.
const LADDER_FROM: usize = 8;

/// Whether the deadline has passed (checked between the encoding's layers
/// and per key: a large k spends seconds building clauses).
fn late(deadline: Option<Instant>) -> bool {
    deadline.is_some_and(|d| Instant::now() >= d)
}

struct Enc {
    s: BasicSolver,
    t: Lit,
    n: usize,
    sel: Vec<Vec<Option<Lit>>>,
    typ: Vec<Vec<Lit>>,
    ar: Vec<Vec<Lit>>,
    vis: Vec<Vec<Lit>>,
    d: Vec<Vec<Lit>>,
    /// The written keys, and per slot the read/write literals on them.
    keys: Vec<usize>,
    r: Vec<Vec<Lit>>,
    w: Vec<Vec<Lit>>,
    /// Per key, `vw[b][i]`: b writes the key and is visible to i.
    vw: Vec<Vec<Vec<Lit>>>,
}

impl Enc {
    /// An encoding of `n` slots with nothing but the constant `t` (true).
    fn empty(n: usize) -> Enc {
        let mut s = BasicSolver::new(SolverOpts::default(), Default::default());
        let t = Lit::new(s.new_var_default(), true);
        s.add_clause_reuse(&mut vec![t]);
        Enc {
            s,
            t,
            n,
            sel: vec![],
            typ: vec![],
            ar: vec![],
            vis: vec![],
            d: vec![],
            keys: vec![],
            r: vec![],
            w: vec![],
            vw: vec![],
        }
    }
    fn var(&mut self) -> Lit {
        Lit::new(self.s.new_var_default(), true)
    }
    /// Adds a clause, simplified against the constant `t`.
    fn clause(&mut self, lits: &[Lit]) {
        if lits.contains(&self.t) {
            return;
        }
        let mut c: Vec<Lit> = lits.iter().copied().filter(|&l| l != !self.t).collect();
        self.s.add_clause_reuse(&mut c);
    }
    /// At most one of `lits`: pairwise up to [`LADDER_FROM`] literals
    /// (no new variables), else the sequential (ladder) encoding, 3d
    /// clauses instead of d²/2: `s_i` says some literal up to i holds.
    fn at_most_one(&mut self, lits: &[Lit]) {
        if lits.len() < LADDER_FROM {
            for a in 0..lits.len() {
                for b in a + 1..lits.len() {
                    self.clause(&[!lits[a], !lits[b]]);
                }
            }
            return;
        }
        let mut prev: Option<Lit> = None;
        for (i, &x) in lits.iter().enumerate() {
            if let Some(p) = prev {
                self.clause(&[!x, !p]);
            }
            if i + 1 < lits.len() {
                let s = self.var();
                self.clause(&[!x, s]);
                if let Some(p) = prev {
                    self.clause(&[!p, s]);
                }
                prev = Some(s);
            }
        }
    }
    /// `x ↔ ∧ lits`.
    fn and(&mut self, lits: &[Lit]) -> Lit {
        if lits.contains(&!self.t) {
            return !self.t;
        }
        let x = self.var();
        for &l in lits {
            self.clause(&[!x, l]);
        }
        let mut c: Vec<Lit> = lits.iter().map(|&l| !l).collect();
        c.push(x);
        self.clause(&c);
        x
    }
    /// `x ↔ ∨ lits`.
    fn or(&mut self, lits: &[Lit]) -> Lit {
        if lits.is_empty() {
            return !self.t;
        }
        let x = self.var();
        for &l in lits {
            self.clause(&[!l, x]);
        }
        let mut c = lits.to_vec();
        c.push(!x);
        self.clause(&c);
        x
    }
}

/// The scope literals under which a pair axiom applies to (i, j): a list of
/// alternative conjunctions, each as the literals whose negation is added.
fn pair_scopes(e: &Enc, scope: Scope, i: usize, j: usize) -> Vec<Vec<Lit>> {
    match scope {
        Scope::Global => vec![vec![]],
        Scope::Type(t) => vec![vec![e.typ[i][t]], vec![e.typ[j][t]]],
        Scope::Pair(x, y) => vec![
            vec![e.typ[i][x], e.typ[j][y]],
            vec![e.typ[i][y], e.typ[j][x]],
        ],
    }
}

fn observer_scope(e: &Enc, scope: Scope, c: usize) -> Vec<Vec<Lit>> {
    match scope {
        Scope::Global => vec![vec![]],
        Scope::Type(t) => vec![vec![e.typ[c][t]]],
        Scope::Pair(x, y) => vec![vec![e.typ[c][x]], vec![e.typ[c][y]]],
    }
}

/// Builds the encoding over `n` slots whose descriptors are of the
/// `allowed` types; `fixed_ar`: ar is slot order; `closed`: the slots are
/// the whole execution (the bounded check, exact by replay: the fewer
/// cases without values), else a part of one (the proofs: the value
/// cases, tied to visibility); `exact` (closed, `fixed_ar`): wr and rw
/// forced as well, so D is the execution's (Def. 3) up to the footprints;
/// `next` (open): D is the sparser relation with the same reachability
/// ([`next_version`]). None when the deadline passes first. One long function: its
/// layers (selection, ar/vis, footprints, per-key dependencies, D) each use
/// the literal tables built just before, in this order.
#[allow(clippy::too_many_arguments)] // the encoding's shape, each a plain value
fn encode(
    an: &Analysis,
    axioms: &[Axiom],
    n: usize,
    allowed: &[bool],
    fixed_ar: bool,
    n_types: usize,
    closed: bool,
    exact: bool,
    next: bool,
    deadline: Option<Instant>,
) -> Option<Enc> {
    // Long (about 300 lines): see the doc comment, the layers share the
    // literal tables built just before them.
    let mut e = Enc::empty(n);
    let t = e.t;
    let descs: Vec<usize> = (0..an.descs.len())
        .filter(|&d| allowed[an.descs[d].txn])
        .collect();
    // Descriptor selection: exactly one per slot.
    for _ in 0..n {
        if late(deadline) {
            return None;
        }
        let mut row = vec![None; an.descs.len()];
        for &d in &descs {
            row[d] = Some(e.var());
        }
        let lits: Vec<Lit> = row.iter().flatten().copied().collect();
        e.clause(&lits);
        e.at_most_one(&lits);
        let typ: Vec<Lit> = (0..n_types)
            .map(|ty| {
                let of: Vec<Lit> = descs
                    .iter()
                    .filter(|&&d| an.descs[d].txn == ty)
                    .filter_map(|&d| row[d])
                    .collect();
                e.or(&of)
            })
            .collect();
        e.sel.push(row);
        e.typ.push(typ);
    }
    // ar: a strict total order; vis ⊆ ar.
    let mut ar = vec![vec![!t; n]; n];
    for i in 0..n {
        for j in i + 1..n {
            let l = if fixed_ar { t } else { e.var() };
            ar[i][j] = l;
            ar[j][i] = !l;
        }
    }
    if !fixed_ar {
        for i in 0..n {
            for j in 0..n {
                for k in 0..n {
                    if i != j && j != k && i != k {
                        e.clause(&[!ar[i][j], !ar[j][k], ar[i][k]]);
                    }
                }
            }
        }
    }
    e.ar = ar;
    let mut vis = vec![vec![!t; n]; n];
    for i in 0..n {
        for j in 0..n {
            if i != j && e.ar[i][j] != !t {
                let v = e.var();
                vis[i][j] = v;
                let a = e.ar[i][j];
                e.clause(&[!v, a]);
            }
        }
    }
    e.vis = vis;
    // Footprints: read/write literals per slot and written key.
    let mut keys: Vec<usize> = descs
        .iter()
        .flat_map(|&d| std::iter::once(&an.footprints[d]).chain(&an.alts[d]))
        .flat_map(|fp| fp.writes.keys().copied())
        .collect();
    keys.sort_unstable();
    keys.dedup();
    // A descriptor with MIN/MAX cases: each slot selecting it takes (at
    // least) one case, whose footprint bounds its reads and writes.
    let mut cases: Vec<Vec<(Lit, &super::interp::Footprint)>> = vec![vec![]; n];
    for i in 0..n {
        if late(deadline) {
            return None;
        }
        for &d in &descs {
            let sel = e.sel[i][d].expect("allowed descriptor");
            // The value cases in the open encoding (see `value_alts`).
            let alts = match &an.value_alts[d] {
                v if !closed && !v.is_empty() => v,
                _ => &an.alts[d],
            };
            if alts.is_empty() {
                if an.footprints[d].aborts {
                    // Every run aborts: no committed instance of `d`.
                    e.clause(&[!sel]);
                }
                cases[i].push((sel, &an.footprints[d]));
                continue;
            }
            let mut some = vec![!sel];
            for fp in alts {
                let c = e.var();
                e.clause(&[!c, sel]);
                if fp.aborts {
                    e.clause(&[!c]);
                }
                some.push(c);
                cases[i].push((c, fp));
            }
            e.at_most_one(&some[1..]);
            e.clause(&some);
        }
    }
    let mut r = vec![vec![!t; keys.len()]; n];
    let mut w = vec![vec![!t; keys.len()]; n];
    for i in 0..n {
        // Per written key, [read, write]: the cases that may touch it, and
        // those that surely do. One pass over each case's footprint, not a
        // lookup per (key, case): that was keys × descriptors per slot.
        let mut may = vec![[Vec::new(), Vec::new()]; keys.len()];
        let mut sure = vec![[Vec::new(), Vec::new()]; keys.len()];
        for &(l, fp) in &cases[i] {
            let reads = fp.reads.iter().map(|(&k, &st)| (k, st, 0));
            let writes = fp.writes.iter().map(|(&k, &(_, st))| (k, st, 1));
            for (k, st, rw) in reads.chain(writes) {
                if let Ok(ki) = keys.binary_search(&k) {
                    may[ki][rw].push(l);
                    if st {
                        sure[ki][rw].push(l);
                    }
                }
            }
        }
        for ki in 0..keys.len() {
            for (rw, table) in [(0, &mut r), (1, &mut w)] {
                let may = &mut may[ki][rw];
                if may.is_empty() {
                    continue;
                }
                let x = e.var();
                may.push(!x);
                e.clause(may);
                for &l in &sure[ki][rw] {
                    e.clause(&[!l, x]);
                }
                table[i][ki] = x;
            }
        }
        // A case's write groups: keys one statement execution alone
        // writes are written together or not at all (an INSERT's fields
        // and Alive flag), so one literal of the group stands for all.
        for &(l, fp) in &cases[i] {
            let mut by_group: Vec<(u32, usize)> = fp
                .groups
                .iter()
                .filter_map(|(&k, &g)| Some((g?, keys.binary_search(&k).ok()?)))
                .collect();
            by_group.sort_unstable();
            for pair in by_group.windows(2) {
                let ((g1, k1), (g2, k2)) = (pair[0], pair[1]);
                if g1 == g2 {
                    let (a, b) = (w[i][k1], w[i][k2]);
                    e.clause(&[!l, !a, b]);
                    e.clause(&[!l, a, !b]);
                }
            }
        }
    }
    // Dependencies per key, and D.
    let mut dlits: Vec<Vec<Vec<Lit>>> = vec![vec![vec![]; n]; n];
    // The rw literals, (key index, reader, overwriter, literal).
    let mut rws: Vec<(usize, usize, usize, Lit)> = Vec::new();
    let mut all_vw = Vec::new();
    for ki in 0..keys.len() {
        if late(deadline) {
            return None;
        }
        let mut vw = vec![vec![!t; n]; n];
        for i in 0..n {
            for j in 0..n {
                if i != j {
                    let v = e.vis[i][j];
                    vw[i][j] = e.and(&[w[i][ki], v]);
                }
            }
        }
        all_vw.push(vw.clone());
        for i in 0..n {
            for j in 0..n {
                if i == j {
                    continue;
                }
                // ww(i, j) ↔ W_i ∧ W_j ∧ ar(i, j): forced (only → for
                // consecutive writers: a writer between may be outside).
                let a = e.ar[i][j];
                let ww = if next {
                    let ww = e.var();
                    for l in [w[i][ki], w[j][ki], a] {
                        e.clause(&[!ww, l]);
                    }
                    ww
                } else {
                    e.and(&[w[i][ki], w[j][ki], a])
                };
                dlits[i][j].push(ww);
                // wr(i, j): necessary conditions only.
                if vw[i][j] != !t && r[j][ki] != !t {
                    let wr = e.var();
                    let (rj, vij) = (r[j][ki], vw[i][j]);
                    e.clause(&[!wr, rj]);
                    e.clause(&[!wr, vij]);
                    for m in 0..n {
                        if m != i && m != j {
                            let (vmj, aim) = (vw[m][j], e.ar[i][m]);
                            e.clause(&[!wr, !vmj, !aim]);
                        }
                    }
                    if exact {
                        // Forced: i is the ar-latest visible writer.
                        let mut c = vec![wr, !vij, !rj];
                        c.extend((i + 1..j).map(|m| vw[m][j]));
                        e.clause(&c);
                    }
                    dlits[i][j].push(wr);
                }
                // rw(i, j): i read a version j overwrote.
                if r[i][ki] != !t && w[j][ki] != !t {
                    let rw = e.var();
                    let (ri, wj, vji) = (r[i][ki], w[j][ki], vw[j][i]);
                    e.clause(&[!rw, ri]);
                    e.clause(&[!rw, wj]);
                    e.clause(&[!rw, !vji]);
                    // Forced when j is ar-after i: the version i read was
                    // written by a writer visible to i, so ar-before i and
                    // j (vis ⊆ ar), or is the initial one; j overwrote it.
                    let aij = e.ar[i][j];
                    if !next {
                        e.clause(&[rw, !ri, !wj, !aij]);
                    }
                    for m in 0..n {
                        if m != i && m != j {
                            let (vmi, ajm) = (vw[m][i], e.ar[j][m]);
                            e.clause(&[!rw, !vmi, !ajm]);
                        }
                    }
                    if exact && j < i {
                        // Forced: j is invisible to i and i's source (a
                        // visible writer, or the initial state) is
                        // ar-before j.
                        let mut c = vec![rw, !ri, !wj, vji];
                        c.extend((j + 1..i).map(|m| vw[m][i]));
                        e.clause(&c);
                    }
                    dlits[i][j].push(rw);
                    rws.push((ki, i, j, rw));
                }
            }
        }
        // The PSI axiom needs the per-key writes.
        for ax in axioms {
            if matches!(ax.model, Model::Psi | Model::Si) {
                for i in 0..n {
                    for j in 0..n {
                        if i != j {
                            for sc in pair_scopes(&e, ax.scope, i, j) {
                                let mut c = vec![!w[i][ki], !w[j][ki], !e.ar[i][j], e.vis[i][j]];
                                c.extend(sc.iter().map(|&l| !l));
                                e.clause(&c);
                            }
                        }
                    }
                }
            }
        }
    }
    let mut d = vec![vec![!t; n]; n];
    e.vw = all_vw;
    e.keys = keys;
    (e.r, e.w) = (r, w);
    if !view_values(&mut e, an, axioms, &cases, &rws, deadline) {
        return None;
    }
    if next {
        next_version(&mut e, axioms, &cases, &rws);
        first_writers(&mut e, an, axioms, &cases);
    }
    for i in 0..n {
        for j in 0..n {
            if i != j {
                let lits = std::mem::take(&mut dlits[i][j]);
                d[i][j] = e.or(&lits);
            }
        }
    }
    e.d = d;
    model_axioms(&mut e, axioms, deadline).then_some(e)
}

/// The model axioms; false when the deadline passes first.
fn model_axioms(e: &mut Enc, axioms: &[Axiom], deadline: Option<Instant>) -> bool {
    let n = e.n;
    for ax in axioms {
        let (ser, pc, cc) = match ax.model {
            Model::Ser => (true, false, false),
            Model::Pc | Model::Si => (false, true, false),
            Model::Cc | Model::Psi => (false, false, true),
            Model::Ec => (false, false, false),
        };
        for a in 0..n {
            if late(deadline) {
                return false;
            }
            for b in 0..n {
                if a == b {
                    continue;
                }
                if ser {
                    for sc in pair_scopes(e, ax.scope, a, b) {
                        let mut c = vec![!e.ar[a][b], e.vis[a][b]];
                        c.extend(sc.iter().map(|&l| !l));
                        e.clause(&c);
                    }
                }
                if pc || cc {
                    for c3 in 0..n {
                        if c3 == a || c3 == b {
                            continue;
                        }
                        for sc in observer_scope(e, ax.scope, c3) {
                            let first = if pc { e.ar[a][b] } else { e.vis[a][b] };
                            let mut c = vec![!first, !e.vis[b][c3], e.vis[a][c3]];
                            c.extend(sc.iter().map(|&l| !l));
                            e.clause(&c);
                        }
                    }
                }
            }
        }
    }
    true
}

fn add_query(e: &mut Enc, q: &Query) {
    let n = e.n;
    match q {
        Query::Cycle => {
            // Some nonempty set of slots, each with a D-successor in the
            // set: in a finite graph that is a cycle.
            let on: Vec<Lit> = (0..n).map(|_| e.var()).collect();
            e.clause(&on);
            for i in 0..n {
                let mut succ = vec![!on[i]];
                for j in 0..n {
                    if i != j {
                        let x = e.var();
                        let (oj, dij) = (on[j], e.d[i][j]);
                        e.clause(&[!x, oj]);
                        e.clause(&[!x, dij]);
                        succ.push(x);
                    }
                }
                e.clause(&succ);
            }
        }
        Query::ShortestPath => {
            for i in 0..n {
                for j in i + 1..n {
                    let dij = e.d[i][j];
                    e.clause(&[if j == i + 1 { dij } else { !dij }]);
                    // No backward chord but the closing one: the method
                    // only needs the n consecutive instances of a *minimal*
                    // cycle with at least n instances, and there a backward
                    // edge j → i (other than last → first) would close a
                    // cycle of j - i + 1 < its length instances.
                    if (i, j) != (0, n - 1) {
                        let dji = e.d[j][i];
                        e.clause(&[!dji]);
                    }
                }
            }
            minimal_cycle_reads(e);
        }
        Query::IndEdge(types) => {
            let of: Vec<Lit> = types.iter().map(|&ty| e.typ[0][ty]).collect();
            e.clause(&of);
            let (d01, a01) = (e.d[0][1], e.ar[0][1]);
            e.clause(&[d01]);
            e.clause(&[!a01]);
        }
        Query::IndPath => {
            let (d01, d12, a02, a12) = (e.d[0][1], e.d[1][2], e.ar[0][2], e.ar[1][2]);
            for l in [d01, d12, !a02, !a12] {
                e.clause(&[l]);
            }
        }
        Query::AnyDep => {
            let d01 = e.d[0][1];
            e.clause(&[d01]);
        }
    }
}

/// The shortest-path slots stand for n consecutive instances of a minimal
/// cycle of m ≥ n instances, so a path of L edges from slot i to slot j > i
/// needs L ≥ j - i, and one from j back to i needs L ≥ m - (j - i) ≥
/// n - (j - i) (else it closes a shorter cycle). Two facts of every
/// execution give short paths through instances outside the slots:
/// (1) if b writes x visible to a and a reads x, a read x from b or from a
/// writer s ar-after b (b →ww s →wr a): a path b ⇝ a of ≤ 2 edges;
/// (2) if a reads x and b writes x invisible to a, then a →rw b (a's source
/// is initial or ar-before b) or b →ww s →wr a (the source is ar-after b).
fn minimal_cycle_reads(e: &mut Enc) {
    let n = e.n;
    // Whether a path of `len` edges from slot `from` to slot `to` may exist.
    let ok = |from: usize, to: usize, len: usize| {
        if from < to {
            len >= to - from
        } else {
            len >= n - (from - to)
        }
    };
    for ki in 0..e.keys.len() {
        for b in 0..n {
            for a in 0..n {
                if a == b || e.w[b][ki] == !e.t || e.r[a][ki] == !e.t {
                    continue;
                }
                let (wb, ra, vba, vwba) = (e.w[b][ki], e.r[a][ki], e.vis[b][a], e.vw[ki][b][a]);
                if !ok(b, a, 2) {
                    // (1): b is not visible to a.
                    e.clause(&[!vwba, !ra]);
                    if !ok(a, b, 1) {
                        // (2) too: a reads no key b writes.
                        e.clause(&[!wb, !ra, vba]);
                    }
                }
            }
        }
    }
}

fn extract(e: &Enc) -> (Execution, Vec<usize>) {
    let val = |l: Lit| e.s.value_lit(l) == lbool::TRUE;
    let descs: Vec<usize> = (0..e.n)
        .map(|i| {
            e.sel[i]
                .iter()
                .position(|l| l.is_some_and(val))
                .unwrap_or(0)
        })
        .collect();
    let mut order: Vec<usize> = (0..e.n).collect();
    order.sort_by_key(|&i| (0..e.n).filter(|&j| j != i && val(e.ar[j][i])).count());
    let vis = (0..e.n)
        .map(|j| {
            (0..e.n)
                .filter(|&i| i != j && val(e.vis[i][j]))
                .fold(0u64, |m, i| m | 1 << i)
        })
        .collect();
    (Execution { descs, vis }, order)
}

/// Solves a query over `n` slots of the allowed types (open encoding: the
/// slots may be part of a larger execution).
#[allow(clippy::too_many_arguments)] // the query's parts, each a plain value
pub fn solve(
    prog: &Program,
    an: &Analysis,
    axioms: &[Axiom],
    n: usize,
    allowed: &[bool],
    q: &Query,
    fixed_ar: bool,
    deadline: Option<Instant>,
) -> Answer {
    if !an.descs.iter().any(|d| allowed[d.txn]) {
        return Answer::Unsat;
    }
    // The inductive method's queries on the next-version relation.
    let next = matches!(q, Query::IndEdge(_) | Query::IndPath | Query::AnyDep);
    let Some(mut e) = encode(
        an,
        axioms,
        n,
        allowed,
        fixed_ar,
        prog.txns.len(),
        false,
        false,
        next,
        deadline,
    ) else {
        return Answer::Unknown;
    };
    add_query(&mut e, q);
    run(&mut e, deadline)
}

fn run(e: &mut Enc, deadline: Option<Instant>) -> Answer {
    let stop = crate::check::sat::deadline_stop(deadline);
    e.s.cb_mut().set_stop(stop);
    let r = e.s.solve_limited(&[]);
    if r == lbool::UNDEF {
        Answer::Unknown
    } else if r == lbool::FALSE {
        Answer::Unsat
    } else {
        let (ex, order) = extract(e);
        Answer::Sat(ex, order)
    }
}

/// Bounded check with exactly `k` instances: SAT candidates confirmed by
/// concrete replay (ar = slot order), refuted ones blocked. Returns the
/// confirmed execution, `Unsat`, or `Unknown`; also the number of
/// candidates refuted.
///
/// `pins`: the type of some slots (by index; missing or None: any).
pub fn bounded(
    prog: &Program,
    an: &Analysis,
    axioms: &[Axiom],
    k: usize,
    allowed: &[bool],
    pins: &[Option<usize>],
    deadline: Option<Instant>,
) -> (Answer, usize) {
    if !an.descs.iter().any(|d| allowed[d.txn]) {
        return (Answer::Unsat, 0);
    }
    let Some(mut e) = encode(
        an,
        axioms,
        k,
        allowed,
        true,
        prog.txns.len(),
        true,
        false,
        false,
        deadline,
    ) else {
        return (Answer::Unknown, 0);
    };
    for (i, p) in pins.iter().enumerate().take(k) {
        if let Some(t) = p {
            let l = e.typ[i][*t];
            e.clause(&[l]);
        }
    }
    add_query(&mut e, &Query::Cycle);
    let mut refuted = 0;
    loop {
        // Each solve may end before batsat consults the deadline.
        if deadline.is_some_and(|d| Instant::now() >= d) {
            return (Answer::Unknown, refuted);
        }
        match run(&mut e, deadline) {
            Answer::Sat(ex, order) => {
                if confirmed(prog, an, axioms, &ex) {
                    return (Answer::Sat(ex, order), refuted);
                }
                refuted += 1;
                refute(prog, an, &mut e, &ex);
            }
            other => return (other, refuted),
        }
    }
}

/// A refuted candidate (ar = slot order): its replayed footprints are
/// learnt, and its descriptors with its visibility blocked.
fn refute(prog: &Program, an: &Analysis, e: &mut Enc, ex: &Execution) {
    learn_footprints(prog, an, e, ex);
    let mut block: Vec<Lit> = Vec::new();
    for (i, &d) in ex.descs.iter().enumerate() {
        block.push(!e.sel[i][d].expect("selected descriptor"));
    }
    for j in 0..ex.descs.len() {
        for i in 0..j {
            let v = e.vis[i][j];
            block.push(if ex.vis[j] >> i & 1 == 1 { !v } else { v });
        }
    }
    e.clause(&block);
}

/// Refinement: an instance's footprint is a function of its descriptor and
/// of the values it reads, and each value of the version it reads from: for
/// each key, its source (a visible writer with no visible writer of the key
/// after it, or none: the initial state) and, recursively, what determined
/// the source's footprint. For each instance of the refuted candidate, the
/// replayed footprint is asserted for every model agreeing on that.
fn learn_footprints(prog: &Program, an: &Analysis, e: &mut Enc, ex: &Execution) {
    let reps = replay(prog, an, ex);
    let key_index: std::collections::HashMap<usize, usize> =
        e.keys.iter().enumerate().map(|(i, &k)| (k, i)).collect();
    // The negated premise of each slot (a clause prefix), built in order.
    let mut premises: Vec<Vec<Lit>> = Vec::new();
    for (i, rep) in reps.iter().enumerate() {
        let mut p: Vec<Lit> = vec![!e.sel[i][ex.descs[i]].expect("selected descriptor")];
        let mut deps: u64 = 0;
        // An aborted instance's run is decided by the reads it made
        // before aborting.
        let sources = if rep.fp.aborts {
            &rep.abort_sources
        } else {
            &rep.sources
        };
        for &(k, src) in sources {
            let Some(&ki) = key_index.get(&k) else {
                continue;
            };
            let after = match src {
                Some(s) => {
                    p.push(!e.vw[ki][s][i]);
                    deps |= 1 << s;
                    s + 1
                }
                None => 0,
            };
            for b in after..i {
                p.push(e.vw[ki][b][i]);
            }
        }
        for s in (0..i).filter(|&s| deps >> s & 1 == 1) {
            p.extend(premises[s].iter().copied());
        }
        p.sort_unstable();
        p.dedup();
        if rep.fp.aborts {
            // The same run aborts again: no committed instance there.
            e.clause(&p);
            premises.push(p);
            continue;
        }
        for ki in 0..e.keys.len() {
            let k = e.keys[ki];
            for (lit, holds) in [
                (e.r[i][ki], rep.fp.reads.contains_key(&k)),
                (e.w[i][ki], rep.fp.writes.contains_key(&k)),
            ] {
                let mut c = p.clone();
                c.push(if holds { lit } else { !lit });
                e.clause(&c);
            }
        }
        premises.push(p);
    }
}

/// Whether a candidate (ar = slot order) is a valid, non-serializable
/// execution when replayed.
pub fn confirmed(prog: &Program, an: &Analysis, axioms: &[Axiom], ex: &Execution) -> bool {
    let reps = replay(prog, an, ex);
    let types: Vec<usize> = ex.descs.iter().map(|&d| an.descs[d].txn).collect();
    reps.iter().all(|r| !r.fp.aborts)
        && (0..ex.descs.len()).all(|j| axioms_hold_at(axioms, &types, &ex.vis, &reps, j))
        && best_cycle(ex.descs.len(), &dependencies(&reps)).is_some()
}
