//! A transaction's external reads: the first view of each key before any
//! write of its own, refined by later views (item reads, and predicate
//! micro-ops that returned, matched or missed the key), and its final
//! writes; a view that disagrees with an earlier one is an internal
//! inconsistency.

use super::{PredSeen, PredTable, RegTxn, RegValue, RwMop, Violation};

/// What an external read saw of its key.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Seen {
    /// This value.
    Value(RegValue),
    /// A version that each predicate `(id, matches)` classifies so (a
    /// predicate read's unreturned or matched row).
    Class(Vec<(u32, bool)>),
}

/// A transaction's first read of a key before any write of its own to it;
/// `pred` is the predicate micro-op that made it, if one did.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct ExtRead {
    pub(super) key: u64,
    pub(super) seen: Seen,
    pub(super) pred: Option<u32>,
}

/// Whether observation `b` agrees with `a` (the same version seen twice);
/// on agreement `a` becomes what both say.
fn merge(a: &mut Seen, b: &Seen, preds: &PredTable) -> bool {
    match (&mut *a, b) {
        (Seen::Value(x), Seen::Value(y)) => x == y,
        (Seen::Value(x), Seen::Class(cs)) => cs.iter().all(|&(p, m)| preds.eval(p, *x) == m),
        (Seen::Class(cs), Seen::Value(y)) => {
            let ok = cs.iter().all(|&(p, m)| preds.eval(p, *y) == m);
            if ok {
                *a = Seen::Value(*y);
            }
            ok
        }
        (Seen::Class(cs), Seen::Class(ds)) => {
            cs.extend_from_slice(ds);
            true
        }
    }
}

/// The first external read and the final write of each key, and the INT
/// check. Returns `(external reads, final writes)`; the reads of an `:info`
/// transaction are ignored.
#[allow(clippy::type_complexity)]
#[cfg(test)]
pub(super) fn summarise(
    t: &RegTxn,
    id: u32,
) -> Result<(Vec<(u64, RegValue)>, Vec<(u64, RegValue)>), Violation> {
    let (reads, writes) = summarise_reads(t, id, false, &PredTable::default())?;
    let reads = reads
        .into_iter()
        .map(|r| match r.seen {
            Seen::Value(v) => (r.key, v),
            Seen::Class(_) => unreachable!("no predicates"),
        })
        .collect();
    Ok((reads, writes))
}

/// [`summarise`]; with `skip_internal` a read that disagrees with the
/// transaction's own earlier read or write is no violation (it is not
/// external either, so it adds nothing). A predicate's view of a key
/// refines the external read (a value it must have, or classes its
/// version must be in).
#[allow(clippy::type_complexity)]
pub(super) fn summarise_reads(
    t: &RegTxn,
    id: u32,
    skip_internal: bool,
    preds: &PredTable,
) -> Result<(Vec<ExtRead>, Vec<(u64, RegValue)>), Violation> {
    // Per key: what is known, whether written, and its external read's
    // position in `reads`. A predicate read expands to one op per key, so
    // big transactions find keys through a map instead of a scan.
    let mut seen: Vec<(u64, Seen, bool, Option<usize>)> = Vec::new();
    let mut index: Option<hashbrown::HashMap<u64, usize>> =
        (t.ops.len() > 16).then(hashbrown::HashMap::new);
    let find = |seen: &[(u64, Seen, bool, Option<usize>)],
                index: &Option<hashbrown::HashMap<u64, usize>>,
                k: u64| match index {
        Some(m) => m.get(&k).copied(),
        None => seen.iter().position(|s| s.0 == k),
    };
    let mut reads: Vec<ExtRead> = Vec::new();
    for op in &t.ops {
        let (k, obs, pred) = match *op {
            RwMop::Write(k, v) => {
                match find(&seen, &index, k) {
                    Some(i) => {
                        seen[i].1 = Seen::Value(v);
                        seen[i].2 = true;
                    }
                    None => {
                        if let Some(m) = &mut index {
                            m.insert(k, seen.len());
                        }
                        seen.push((k, Seen::Value(v), true, None));
                    }
                }
                continue;
            }
            _ if !t.committed => continue,
            RwMop::Read(k, v) => (k, Seen::Value(v), None),
            RwMop::PredRead { key, pred, seen } => (
                key,
                match seen {
                    PredSeen::Returned(v) => Seen::Value(v),
                    PredSeen::Matched => Seen::Class(vec![(pred, true)]),
                    PredSeen::Missed => Seen::Class(vec![(pred, false)]),
                },
                Some(pred),
            ),
        };
        match find(&seen, &index, k) {
            Some(i) => {
                let s = &mut seen[i];
                // Item-only disagreements are the caller's to report with
                // `skip_internal`; one a predicate takes part in is not.
                let by_predicate = pred.is_some() || matches!(s.1, Seen::Class(_));
                if !merge(&mut s.1, &obs, preds) {
                    if !skip_internal || by_predicate {
                        return Err(Violation::Internal { txn: id, key: k });
                    }
                } else if !s.2 {
                    if let Some(r) = s.3 {
                        reads[r].seen = s.1.clone();
                    }
                }
            }
            None => {
                if let Some(m) = &mut index {
                    m.insert(k, seen.len());
                }
                seen.push((k, obs.clone(), false, Some(reads.len())));
                reads.push(ExtRead {
                    key: k,
                    seen: obs,
                    pred,
                });
            }
        }
    }
    let writes = seen
        .iter()
        .filter(|s| s.2)
        .map(|s| {
            let Seen::Value(v) = s.1 else {
                unreachable!("a written key holds its value")
            };
            (s.0, v)
        })
        .collect();
    Ok((reads, writes))
}
