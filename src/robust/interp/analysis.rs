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
    /// Per key id: (initial value, the one value every writer writes) when
    /// the footprints write it only with that known value, different from
    /// the initial one. Every view then holds one of the two, the written
    /// one as soon as some writer of the key is visible (the last visible
    /// writer wrote it).
    pub two_valued: Vec<Option<(Option<i64>, Option<i64>)>>,
}

/// The two-valued keys of [`Analysis::two_valued`], from footprints that
/// over-approximate every run (so every real write is among theirs, with
/// the value they give when it is known).
fn two_valued(uni: &Universe, fps: &[Footprint]) -> Vec<Option<(Option<i64>, Option<i64>)>> {
    // Per key: None not written yet, Some(Some(v)) one known value so far,
    // Some(None) several or unknown values.
    let mut seen: Vec<Option<Option<Option<i64>>>> = vec![None; uni.keys()];
    for fp in fps {
        for (&k, &(v, _)) in &fp.writes {
            seen[k] = match (seen[k], v) {
                (None, crate::robust::interp::AV::Known(x)) => Some(Some(x)),
                (Some(Some(y)), crate::robust::interp::AV::Known(x)) if x == y => Some(Some(y)),
                _ => Some(None),
            };
        }
    }
    seen.iter()
        .enumerate()
        .map(|(k, s)| match s {
            Some(Some(v)) if *v != uni.init[k] => Some((uni.init[k], *v)),
            _ => None,
        })
        .collect()
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
    two: &[Option<(Option<i64>, Option<i64>)>],
    d: &Desc,
) -> Vec<Footprint> {
    let mut out = Vec::new();
    let mut stack: Vec<Vec<Option<i64>>> = vec![vec![]];
    while let Some(forced) = stack.pop() {
        let mut ex = Exec::new(prog, uni, None, churn, constant, two, d);
        ex.forced.clone_from(&forced);
        ex.run(&prog.txns[d.txn].body, false);
        match ex.pending {
            Some(cands) => {
                for c in cands.into_iter().rev() {
                    stack.push([forced.clone(), vec![c]].concat());
                }
            }
            None if forced.is_empty() => return Vec::new(),
            None => out.push(ex.fp),
        }
        if out.len() + stack.len() > MAX_ALTERNATIVES {
            return Vec::new();
        }
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
            ex.run(&prog.txns[d.txn].body, false);
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
            for fp in &fps {
                for &k in fp.writes.keys() {
                    constant[k] = false;
                }
            }
            let fps: Vec<Footprint> = descs
                .iter()
                .map(|d| {
                    let mut ex = Exec::new(prog, &uni, None, &ch, &constant, &[], d);
                    ex.run(&prog.txns[d.txn].body, false);
                    ex.fp
                })
                .collect();
            let two = two_valued(&uni, &fps);
            let alts = descs
                .iter()
                .map(|d| {
                    // Value splits multiply the cases: without them when
                    // there would be too many.
                    let a = alternatives(prog, &uni, &ch, &constant, &two, d);
                    if a.is_empty() {
                        alternatives(prog, &uni, &ch, &constant, &[], d)
                    } else {
                        a
                    }
                })
                .collect();
            return Ok(Analysis {
                uni,
                descs,
                footprints: fps,
                alts,
                two_valued: two,
            });
        }
    }
}
