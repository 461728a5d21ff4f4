//! The view values of two-valued keys tied to visibility and arbitration
//! (the proofs' open encoding), the view facts the next-version relation
//! compares, and the encoder's unit tests.

use super::{late, observer_scope, Enc};
use crate::robust::interp::{Analysis, Footprint, AV};
use crate::robust::syntax::{Axiom, Model, Scope};
use batsat::Lit;
use std::time::Instant;

/// Ties the cases' view values of two-valued keys
/// ([`Analysis::two_valued`]: every writer writes v, the initial value is
/// another) to visibility. `rv` says the slot's view holds v. Sound for
/// every execution, the slots being any of its instances: (a) a slot
/// writer of the key visible to a slot makes some writer visible, so the
/// ar-latest visible one, which wrote v, decides the view; (b) a slot whose
/// view holds v sees some writer w, possibly outside the slots; under a
/// model that makes vis(w, a) ∧ vis(a, i) imply vis(w, i) for observer i
/// (cc and psi by transitivity, pc and si since vis ⊆ ar, serializable
/// when the pair (w, i) is surely in scope) i's view holds v too; (c) and
/// (d) below.
pub(super) fn view_values(
    e: &mut Enc,
    an: &Analysis,
    axioms: &[Axiom],
    cases: &[Vec<(Lit, &Footprint)>],
    rws: &[(usize, usize, usize, Lit)],
    deadline: Option<Instant>,
) -> bool {
    let n = e.n;
    let mut ks: Vec<usize> = cases
        .iter()
        .flatten()
        .flat_map(|(_, fp)| fp.views.keys().copied())
        .collect();
    ks.sort_unstable();
    ks.dedup();
    for k in ks {
        if late(deadline) {
            return false;
        }
        let Some((init, v)) = an.two_valued[k] else {
            continue;
        };
        let rv: Vec<Lit> = (0..n).map(|_| e.var()).collect();
        for i in 0..n {
            for &(c, fp) in &cases[i] {
                match fp.views.get(&k) {
                    Some(&x) if x == v => e.clause(&[!c, rv[i]]),
                    Some(&x) if x == init => e.clause(&[!c, !rv[i]]),
                    Some(_) => e.clause(&[!c]),
                    None => {}
                }
            }
        }
        let ki = e.keys.binary_search(&k).ok();
        if let Some(ki) = ki {
            let once = crate::robust::rules::on(crate::robust::rules::WRITTEN_ONCE)
                && written_once(an, axioms, k, init);
            for i in 0..n {
                for b in (0..n).filter(|&b| b != i) {
                    let vbi = e.vw[ki][b][i];
                    e.clause(&[!vbi, rv[i]]);
                    if once {
                        // (d) The key's one writer: if b writes it, a view
                        // holding v sees b.
                        let (b_writes, b_visible_to_i) = (e.w[b][ki], e.vis[b][i]);
                        e.clause(&[!b_writes, !rv[i], b_visible_to_i]);
                    }
                }
            }
        }
        // (c) i →rw j on the key with i's view holding v: i read a real
        // writer's version, which j overwrote, so that writer is ar-before
        // j; where the write-conflict axiom (psi, si; serializable) covers
        // the pair, it is visible to j, whose view then holds v.
        for &(_, i, j, rw) in rws.iter().filter(|x| Some(x.0) == ki) {
            for ax in axioms {
                let scope = match (ax.model, ax.scope) {
                    (Model::Psi | Model::Si | Model::Ser, Scope::Global) => vec![],
                    (Model::Psi | Model::Si | Model::Ser, Scope::Type(t)) => vec![!e.typ[j][t]],
                    _ => continue,
                };
                let mut c = vec![!rw, !rv[i], rv[j]];
                c.extend(scope);
                e.clause(&c);
            }
        }
        for ax in axioms {
            for i in 0..n {
                let scopes = match (ax.model, ax.scope) {
                    (Model::Ec, _) | (Model::Ser, Scope::Pair(..)) => continue,
                    (Model::Ser, Scope::Global) => vec![vec![]],
                    (Model::Ser, Scope::Type(t)) => vec![vec![e.typ[i][t]]],
                    _ => observer_scope(e, ax.scope, i),
                };
                for a in (0..n).filter(|&a| a != i) {
                    for sc in &scopes {
                        let mut c = vec![!rv[a], !e.vis[a][i], rv[i]];
                        c.extend(sc.iter().map(|&l| !l));
                        e.clause(&c);
                    }
                }
            }
        }
    }
    true
}

/// (d) Whether two-valued key `k` has at most one writer in every
/// execution: every committed run that writes it (any descriptor, as the
/// instances outside the slots may be any) holds the initial value in its
/// view, and the write-conflict axiom (psi, si, serializable: global, or
/// scoped to either type or to the pair) covers every pair of its writers'
/// types. Of two writers one then sees the other, so its view holds v, not
/// the initial value: no second writer commits. Then a view holding v has
/// a visible writer, which is *the* writer: a slot that writes the key is
/// visible to every slot whose view holds v. (An id created by an INSERT
/// guarded by `IF old != NULL THEN ABORT` and never deleted: a view that
/// finds the record sees its one creator.)
fn written_once(an: &Analysis, axioms: &[Axiom], k: usize, init: Option<i64>) -> bool {
    let mut types: Vec<usize> = Vec::new();
    for d in 0..an.descs.len() {
        for fp in open_cases(an, d) {
            if fp.aborts || !fp.writes.contains_key(&k) {
                continue;
            }
            if fp.views.get(&k) != Some(&init) {
                return false;
            }
            types.push(an.descs[d].txn);
        }
    }
    types.sort_unstable();
    types.dedup();
    let covers = |t1: usize, t2: usize| {
        axioms.iter().any(|ax| {
            matches!(ax.model, Model::Psi | Model::Si | Model::Ser)
                && match ax.scope {
                    Scope::Global => true,
                    Scope::Type(t) => t == t1 || t == t2,
                    Scope::Pair(x, y) => (x, y) == (t1, t2) || (y, x) == (t1, t2),
                }
        })
    };
    types
        .iter()
        .all(|&t1| types.iter().all(|&t2| covers(t1, t2)))
}

/// The next-version relation (Elle's: ww between consecutive writers of a
/// key, rw from a reader to the first writer after the version it read;
/// wr as before). It is a subset of the paper's D (Def. 3) whose
/// transitive closure contains D, so an execution has a cycle in one iff
/// in the other, and Lemma 11 applied to it proves what it proves for D:
/// the inductive queries use it (fewer edges, so fewer paths break the
/// lemma's conditions). Besides dropping the forcing of ww and rw: where
/// the write-conflict axiom covers the overwriter j (psi, si, serializable,
/// global or scoped to j's type), j sees every earlier writer of the key,
/// so its view holds the version of its predecessor, which is the version
/// a reader i with i →rw j read: i's and j's views of the key agree, and
/// cases whose view facts differ exclude the edge (a Delivery that read
/// order 1 absent does not →rw the one that deletes it, which read it
/// present).
pub(super) fn next_version(
    e: &mut Enc,
    axioms: &[Axiom],
    cases: &[Vec<(Lit, &Footprint)>],
    rws: &[(usize, usize, usize, Lit)],
) {
    for &(ki, i, j, rw) in rws {
        let k = e.keys[ki];
        for ax in axioms {
            let scope = match (ax.model, ax.scope) {
                (Model::Psi | Model::Si | Model::Ser, Scope::Global) => vec![],
                (Model::Psi | Model::Si | Model::Ser, Scope::Type(t)) => vec![!e.typ[j][t]],
                _ => continue,
            };
            for &(ci, fi) in &cases[i] {
                let Some(a) = fi.facts.get(&k) else { continue };
                for &(cj, fj) in &cases[j] {
                    if fj.facts.get(&k).is_some_and(|b| b != a) {
                        let mut c = vec![!rw, !ci, !cj];
                        c.extend(scope.iter().copied());
                        e.clause(&c);
                    }
                }
            }
        }
    }
}

/// The footprint cases the open encoding gives descriptor `d`.
fn open_cases(an: &Analysis, d: usize) -> Vec<&Footprint> {
    let alts = if an.value_alts[d].is_empty() {
        &an.alts[d]
    } else {
        &an.value_alts[d]
    };
    if alts.is_empty() {
        vec![&an.footprints[d]]
    } else {
        alts.iter().collect()
    }
}

/// First writers (the inductive queries; needs the write-conflict axiom
/// and prefix consistency globally: si, or psi with pc, or serializable).
/// Let slot j write key c with its view of c initial, where no footprint
/// writes c's initial value (or an unknown one): every writer of c
/// ar-before j would be visible to j and leave another value, so j is
/// ar-before every other writer of c. Let slot i's view hold v for key x,
/// v not x's initial value, where every footprint case that may write v
/// to x surely writes c: the ar-latest writer of x visible to i wrote v,
/// so it writes c, so it is j or ar-after j, and by prefix consistency i
/// sees j. (A Delivery whose view holds order 2 sees the New-Order of
/// order 1, the first to advance the counter.)
pub(super) fn first_writers(
    e: &mut Enc,
    an: &Analysis,
    axioms: &[Axiom],
    cases: &[Vec<(Lit, &Footprint)>],
) {
    let global = |ms: &[Model]| {
        axioms
            .iter()
            .any(|a| a.scope == Scope::Global && ms.contains(&a.model))
    };
    if !crate::robust::rules::on(crate::robust::rules::FIRST_WRITERS) {
        return;
    }
    let conflict = global(&[Model::Psi, Model::Si, Model::Ser]);
    let prefix = global(&[Model::Pc, Model::Si, Model::Ser]);
    if !(conflict && prefix) {
        return;
    }
    let all: Vec<&Footprint> = (0..an.descs.len())
        .flat_map(|d| open_cases(an, d))
        .filter(|fp| !fp.aborts)
        .collect();
    // Keys c whose writers never leave the initial value (nor an unknown).
    let fresh = |c: usize| {
        all.iter().all(|fp| match fp.writes.get(&c) {
            Some(&(AV::Known(x), _)) => x != an.uni.init[c],
            Some(&(AV::Unknown, _)) => false,
            None => true,
        })
    };
    // Whether every case that may write v to x surely writes c.
    let carries = |x: usize, v: Option<i64>, c: usize| {
        all.iter().all(|fp| match fp.writes.get(&x) {
            Some(&(w, _)) if w == AV::Known(v) || w == AV::Unknown => {
                fp.writes.get(&c).is_some_and(|&(_, sure)| sure)
            }
            _ => true,
        })
    };
    let n = e.n;
    for j in 0..n {
        for &(cj, fj) in &cases[j] {
            for (&c, &cv) in &fj.facts {
                let Ok(kc) = e.keys.binary_search(&c) else {
                    continue;
                };
                if cv != an.uni.init[c] || !fj.writes.contains_key(&c) || !fresh(c) {
                    continue;
                }
                let wjc = e.w[j][kc];
                for i in (0..n).filter(|&i| i != j) {
                    for &(ci, fi) in &cases[i] {
                        for (&x, &v) in &fi.facts {
                            if v != an.uni.init[x] && carries(x, v, c) {
                                let vji = e.vis[j][i];
                                e.clause(&[!cj, !wjc, !ci, vji]);
                            }
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::*;

    /// The ladder's at-most-one with one literal forced on (exactly one):
    /// as many models as literals, for sizes on both sides of
    /// [`LADDER_FROM`].
    #[test]
    fn exactly_one_has_one_model_per_literal() {
        for d in [1, 2, 5, LADDER_FROM - 1, LADDER_FROM, 13] {
            let mut e = Enc::empty(0);
            let xs: Vec<Lit> = (0..d).map(|_| e.var()).collect();
            e.clause(&xs);
            e.at_most_one(&xs);
            let mut models = 0;
            while e.s.solve_limited(&[]) == lbool::TRUE {
                models += 1;
                let on: Vec<usize> = (0..d)
                    .filter(|&i| e.s.value_lit(xs[i]) == lbool::TRUE)
                    .collect();
                assert_eq!(on.len(), 1, "d = {d}");
                e.clause(&[!xs[on[0]]]);
            }
            assert_eq!(models, d, "d = {d}");
        }
    }
}
