//! List-append on the fast path: each read list must be the chain of
//! read-modify-writes ending in its last element; thin-air reads.

use super::*;

/// List-append thin-air reads, as [`list_append::thin_air_reads`] finds
/// them, without its hash set of every append when the unique-value index
/// already shows a writer for every element of every `:ok` read (the usual
/// case). The index holds only appends of `h.mops`, so an element it lacks
/// is merely a candidate: the exact cases then come from `thin_air_reads`.
pub(super) fn list_thin_air(h: &History, versions: &Versions, recs: &[WriteRec]) -> Vec<Value> {
    let candidate = h.ops.iter().enumerate().any(|(i, op)| {
        op.op_type == OpType::Ok
            && txn_mop_range(h, i).any(|g| {
                let m = &h.mops[g];
                let kid = versions.mop_kid[g];
                m.f() == MopFn::Read
                    && h.list(m.arg()).iter().any(|&e| {
                        versions
                            .slot(kid, e)
                            .and_then(|s| recs.get(s as usize))
                            .is_none_or(|r| r.pos == NONE)
                    })
            })
    });
    if candidate {
        list_append::thin_air_reads(h)
    } else {
        Vec::new()
    }
}

/// List-append: checks that the read list `m` (of the op at `i`, key id
/// `kid`) is the chain of read-modify-writes ending in its last element.
/// Elements appended by `:info` transactions take their predecessor from the
/// first list that shows them. Elements nobody committed are left to the
/// G1a/G1b checks; a list with an element nobody appended is not checked.
pub(super) fn check_list(
    h: &History,
    i: usize,
    m: &Mop,
    kid: u32,
    (versions, recs, preds): (&Versions, &[WriteRec], &[Ver]),
    pred_of: &mut HashMap<u32, Ver>,
    slots: &mut Vec<u32>,
) -> Result<(), NotMini> {
    let list = h.list(m.arg());
    // The elements' slots, in a buffer the caller reuses (no allocation per
    // read on the hot path).
    slots.clear();
    for &e in list {
        match versions
            .slot(kid, e)
            .filter(|&s| recs[s as usize].pos != NONE)
        {
            Some(s) => slots.push(s),
            // A read showing an element nobody appended is a thin-air read
            // (`list_append::thin_air_reads`); its order says nothing.
            None => return Ok(()),
        }
    }
    for (j, (&e, &s)) in list.iter().zip(slots.iter()).enumerate() {
        let before = if j == 0 { None } else { Some(list[j - 1]) };
        let rec = &recs[s as usize];
        match rec.status {
            OpType::Ok => {}
            OpType::Info => {
                // Its predecessor is whatever the first list showing it says.
                let p = *pred_of.entry(s).or_insert(before);
                if p != before {
                    return Err(mismatch(h, i, m, e, p, before));
                }
                continue;
            }
            _ => continue,
        }
        let p = preds[s as usize];
        if p != before {
            return Err(mismatch(h, i, m, e, p, before));
        }
    }
    Ok(())
}

/// The version an `:ok` transaction's append of `k` followed, given the
/// micro-ops before it: its previous append of `k`, else its first read of
/// `k`.
pub(super) fn append_pred(h: &History, before: &[Mop], k: Atom) -> Ver {
    let mut last_own = None;
    let mut first = None;
    for m in before {
        if m.key() != k {
            continue;
        }
        match (m.f(), m.arg()) {
            (MopFn::Append, MopArg::Atom(a)) => last_own = Some(a),
            (MopFn::Read, _) if first.is_none() => first = Some(read_version(h, m)),
            _ => {}
        }
    }
    last_own.or(first.flatten())
}

pub(super) fn mismatch(h: &History, i: usize, m: &Mop, e: Atom, p: Ver, before: Ver) -> NotMini {
    let show = |v: Ver| {
        v.map_or("the initial state".to_string(), |a| {
            pr_str(&h.atom_value(a))
        })
    };
    NotMini {
        pos: i,
        reason: format!(
            "its read {} puts {} right after {}, but {} was appended after {} (the read list is not a chain of read-modify-writes)",
            pr_str(&h.mop_value(m)),
            pr_str(&h.atom_value(e)),
            show(before),
            pr_str(&h.atom_value(e)),
            show(p)
        ),
    }
}
