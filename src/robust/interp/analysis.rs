//! The analysis of a program: its descriptors (a type with parameter
//! values), the record universe (initial records and the ones INSERTs
//! name), and every descriptor's abstract footprints, whole and split by
//! case for the proofs' encoding.

use super::{Desc, Exec, Footprint, InsertKeyUnknown, Universe};
use crate::robust::syntax::{Program, Stmt};
use std::collections::{BTreeMap, HashMap};

/// Every descriptor of the program, transaction by transaction, parameters
/// in lexicographic order of their domains.
pub fn descriptors(prog: &Program) -> Vec<Desc> {
    let mut out = Vec::new();
    for (ti, t) in prog.txns.iter().enumerate() {
        let mut cur = vec![0usize; t.params];
        loop {
            out.push(Desc {
                txn: ti,
                params: cur
                    .iter()
                    .enumerate()
                    .map(|(i, &c)| t.domains[i][c])
                    .collect(),
            });
            let mut i = t.params;
            loop {
                if i == 0 {
                    break;
                }
                i -= 1;
                cur[i] += 1;
                if cur[i] < t.domains[i].len() {
                    break;
                }
                cur[i] = 0;
                if i == 0 {
                    i = usize::MAX;
                    break;
                }
            }
            if t.params == 0 || i == usize::MAX {
                break;
            }
        }
    }
    out
}

fn churn(stmts: &[Stmt], out: &mut [bool]) {
    for s in stmts {
        match s {
            Stmt::Insert { table, .. } | Stmt::Delete { table, .. } => out[*table] = true,
            Stmt::If(_, a, b) => {
                churn(a, out);
                churn(b, out);
            }
            Stmt::Foreach(_, _, b) => churn(b, out),
            _ => {}
        }
    }
}

fn build_universe(prog: &Program, recs: &[(usize, Vec<i64>)], alive_init: usize) -> Universe {
    let mut u = Universe {
        by_table: vec![Vec::new(); prog.tables.len()],
        index: vec![HashMap::new(); prog.tables.len()],
        ..Default::default()
    };
    let mut sorted: Vec<(usize, (usize, Vec<i64>))> = recs.iter().cloned().enumerate().collect();
    sorted.sort_by(|a, b| a.1.cmp(&b.1));
    for (orig, (table, key)) in sorted {
        let rec = u.recs.len();
        u.index[table].insert(key.clone(), rec);
        u.by_table[table].push(rec);
        u.base.push(u.init.len());
        let t = &prog.tables[table];
        let init = orig < alive_init;
        let mut ki = 0;
        for f in 0..t.fields.len() {
            if t.pk[f] {
                u.init.push(Some(key[ki]));
                ki += 1;
            } else {
                u.init.push(None);
            }
        }
        u.init.push(Some(i64::from(init)));
        u.recs.push((table, key));
    }
    u
}

/// The analysed program: universe, descriptors and their abstract
/// footprints.
#[derive(Clone, Debug)]
pub struct Analysis {
    /// Records and keys.
    pub uni: Universe,
    /// Descriptors.
    pub descs: Vec<Desc>,
    /// Per descriptor: the keys it may read/write (true: surely).
    pub footprints: Vec<Footprint>,
    /// Per descriptor: its footprints split by the results of its MIN/MAX
    /// over key fields (every run has one of them), or empty when it has
    /// no such choice or too many cases ([`MAX_ALTERNATIVES`]).
    pub alts: Vec<Vec<Footprint>>,
    /// Per descriptor: its footprints split also by the view's value of
    /// each two-valued key it reads (for the proofs' open encoding, where
    /// the values tied to visibility prune paths; the bounded check,
    /// exact by replay, keeps the fewer `alts`), or empty: as `alts`.
    pub value_alts: Vec<Vec<Footprint>>,
    /// Per key id: (initial value, the one value every writer writes) when
    /// the footprints write it only with that known value, different from
    /// the initial one. Every view then holds one of the two, the written
    /// one as soon as some writer of the key is visible (the last visible
    /// writer wrote it).
    pub two_valued: Vec<Option<(Option<i64>, Option<i64>)>>,
}

/// The two-valued keys of [`Analysis::two_valued`]: those every writer
/// writes with one known value, other than the initial one.
fn two_valued(
    uni: &Universe,
    written: &[Option<Vec<Option<i64>>>],
) -> Vec<Option<(Option<i64>, Option<i64>)>> {
    written
        .iter()
        .enumerate()
        .map(|(k, w)| match w.as_deref() {
            Some(&[v]) if v != uni.init[k] => Some((uni.init[k], v)),
            _ => None,
        })
        .collect()
}

/// What the abstract runs share.
struct Ctx<'a> {
    prog: &'a Program,
    uni: &'a Universe,
    churn: &'a [bool],
    constant: &'a [bool],
}

/// The footprint cases of `d`, split on the MIN/MAX results and on the
/// reads of keys with few values (`vals`); without the value splits when
/// they would make too many, and the one unsplit footprint when even
/// those are too many or there is no choice.
fn cases_of(cx: &Ctx, vals: &[Option<Vec<Option<i64>>>], d: &Desc) -> Vec<Footprint> {
    let a = alternatives(cx.prog, cx.uni, cx.churn, cx.constant, vals, d);
    // Without value splits the retry would be the same run.
    if a.is_empty() && !vals.is_empty() {
        alternatives(cx.prog, cx.uni, cx.churn, cx.constant, &[], d)
    } else {
        a
    }
}

/// The most values a key may hold to be split on.
const MAX_VALUES: usize = 4;
/// The most rounds of [`value_sets`] before giving up on values.
const MAX_ROUNDS: usize = 8;

/// Per key, the values it can hold in any view (None: unknown or more
/// than [`MAX_VALUES`]), and the values writers give it: the least
/// fixpoint from the initial values, where each round runs every
/// descriptor's cases reading the values found so far and adds what they
/// write. At the fixpoint the sets are an inductive invariant of every
/// execution (each write, reading values in the sets, writes values in
/// them), which is what makes splitting reads on them sound; without a
/// fixpoint in [`MAX_ROUNDS`] rounds no key is split on.
#[allow(clippy::type_complexity)] // two per-key tables of the same shape
fn value_sets(
    cx: &Ctx,
    descs: &[Desc],
) -> (Vec<Option<Vec<Option<i64>>>>, Vec<Option<Vec<Option<i64>>>>) {
    let n = cx.uni.keys();
    let mut vals: Vec<Option<Vec<Option<i64>>>> =
        (0..n).map(|k| Some(vec![cx.uni.init[k]])).collect();
    for _ in 0..MAX_ROUNDS {
        let mut written: Vec<Option<Vec<Option<i64>>>> = vec![Some(vec![]); n];
        for d in descs {
            let mut fps = cases_of(cx, &vals, d);
            if fps.is_empty() {
                let mut ex = Exec::new(cx.prog, cx.uni, None, cx.churn, cx.constant, &vals, d);
                ex.run_top(&cx.prog.txns[d.txn].body);
                fps.push(ex.fp);
            }
            // A case that aborts writes nothing.
            for fp in fps.iter().filter(|fp| !fp.aborts) {
                for (&k, &(v, _)) in &fp.writes {
                    written[k] = match (written[k].take(), v) {
                        (Some(mut w), crate::robust::interp::AV::Known(x)) => {
                            if !w.contains(&x) {
                                w.push(x);
                            }
                            (w.len() <= MAX_VALUES).then_some(w)
                        }
                        _ => None,
                    };
                }
            }
        }
        let mut changed = false;
        for k in 0..n {
            let new = match (&vals[k], &written[k]) {
                (Some(v), Some(w)) => {
                    let mut u = v.clone();
                    u.extend(w.iter().filter(|x| !v.contains(x)));
                    u.sort_unstable();
                    (u.len() <= MAX_VALUES).then_some(u)
                }
                _ => None,
            };
            if new != vals[k] {
                vals[k] = new;
                changed = true;
            }
        }
        if !changed {
            return (vals, written);
        }
    }
    (vec![None; n], vec![None; n])
}

/// The most footprint cases per descriptor.
pub const MAX_ALTERNATIVES: usize = 64;

/// The abstract footprints of `d` for every combination of MIN/MAX results
/// (the paper's value reasoning for aggregates: a run whose MIN is m reads
/// no record beyond m and writes only what that result leads to), found by
/// re-running with the results of the choice points met so far forced.
fn alternatives(
    prog: &Program,
    uni: &Universe,
    churn: &[bool],
    constant: &[bool],
    vals: &[Option<Vec<Option<i64>>>],
    d: &Desc,
) -> Vec<Footprint> {
    let mut out = Vec::new();
    let mut aborted = false;
    let mut stack: Vec<Vec<Option<i64>>> = vec![vec![]];
    while let Some(forced) = stack.pop() {
        let mut ex = Exec::new(prog, uni, None, churn, constant, vals, d);
        ex.forced.clone_from(&forced);
        ex.run_top(&prog.txns[d.txn].body);
        match ex.pending {
            Some(cands) => {
                for c in cands.into_iter().rev() {
                    stack.push([forced.clone(), vec![c]].concat());
                }
            }
            None if forced.is_empty() => return Vec::new(),
            // No committed instance has a case that aborts.
            None if ex.fp.aborts => aborted = true,
            None => out.push(ex.fp),
        }
        if out.len() + stack.len() > MAX_ALTERNATIVES {
            return Vec::new();
        }
    }
    if out.is_empty() && aborted {
        // Every case aborts: one aborting case says so (empty would mean
        // "no split").
        out.push(Footprint {
            aborts: true,
            ..Footprint::default()
        });
    }
    out
}

/// Builds the universe (initial records, then the records INSERTs name,
/// to a fixpoint) and the abstract footprints.
pub fn analyse(prog: &Program) -> Result<Analysis, InsertKeyUnknown> {
    let mut recs: Vec<(usize, Vec<i64>)> = Vec::new();
    let mut init_vals: BTreeMap<(usize, Vec<i64>), Vec<i64>> = BTreeMap::new();
    for init in &prog.inits {
        let t = &prog.tables[init.table];
        let pks = t.pk_fields();
        let mut keys: Vec<Vec<i64>> = vec![vec![]];
        for &f in &pks {
            keys = keys
                .into_iter()
                .flat_map(|k| {
                    init.values[f]
                        .iter()
                        .map(move |&v| [k.clone(), vec![v]].concat())
                })
                .collect();
        }
        for k in keys {
            let vals: Vec<i64> = (0..t.fields.len()).map(|f| init.values[f][0]).collect();
            // `recs` holds exactly the keys `init_vals` held before: no linear scan.
            if init_vals.insert((init.table, k.clone()), vals).is_none() {
                recs.push((init.table, k));
            }
        }
    }
    let n_init = recs.len();
    let mut ch = vec![false; prog.tables.len()];
    for t in &prog.txns {
        churn(&t.body, &mut ch);
    }
    let descs = descriptors(prog);
    loop {
        let mut uni = build_universe(prog, &recs, n_init);
        for ((table, key), vals) in &init_vals {
            let rec = uni.find(*table, key).expect("initial record");
            for (f, v) in vals.iter().enumerate() {
                if !prog.tables[*table].pk[f] {
                    let k = uni.key(rec, f);
                    uni.init[k] = Some(*v);
                }
            }
        }
        let mut fps = Vec::new();
        let mut added = false;
        for d in &descs {
            let mut ex = Exec::new(prog, &uni, None, &ch, &[], &[], d);
            ex.run_top(&prog.txns[d.txn].body);
            if let Some(e) = ex.error {
                return Err(e);
            }
            for r in ex.new_recs {
                if !recs.contains(&r) {
                    recs.push(r);
                    added = true;
                }
            }
            fps.push(ex.fp);
        }
        if !added {
            // Second pass: the keys no footprint above may write are
            // constants (these footprints over-approximate every run, so
            // a key outside all of them keeps its initial value in every
            // execution); reading them as known makes a WHERE on a
            // never-changing field decide, so e.g. a name lookup does not
            // read the Alive flag of a record whose name cannot match.
            let mut constant = vec![true; uni.keys()];
            for fp in fps.iter().filter(|fp| !fp.aborts) {
                for &k in fp.writes.keys() {
                    constant[k] = false;
                }
            }
            let fps: Vec<Footprint> = descs
                .iter()
                .map(|d| {
                    let mut ex = Exec::new(prog, &uni, None, &ch, &constant, &[], d);
                    ex.run_top(&prog.txns[d.txn].body);
                    ex.fp
                })
                .collect();
            let cx = Ctx {
                prog,
                uni: &uni,
                churn: &ch,
                constant: &constant,
            };
            let (mut vals, written) = value_sets(&cx, &descs);
            let two = two_valued(&uni, &written);
            // The value cases split only on the two-valued keys, the ones
            // the encoding ties to visibility: other splits only add
            // cases (the fixpoint above needed them to find the values).
            for (v, t) in vals.iter_mut().zip(&two) {
                if t.is_none() {
                    *v = None;
                }
            }
            let alts: Vec<Vec<Footprint>> = descs.iter().map(|d| cases_of(&cx, &[], d)).collect();
            let value_alts = descs
                .iter()
                .zip(&alts)
                .map(|(d, a)| {
                    let v = cases_of(&cx, &vals, d);
                    // Empty when no different from `alts`.
                    if v.len() == a.len() && v.iter().all(|f| f.views.is_empty()) {
                        Vec::new()
                    } else {
                        v
                    }
                })
                .collect();
            return Ok(Analysis {
                uni,
                descs,
                footprints: fps,
                alts,
                value_alts,
                two_valued: two,
            });
        }
    }
}
