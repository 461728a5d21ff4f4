//! Pass 1's shape checks: every transaction a mini-transaction of the
//! workload's micro-ops (Definition 8).

use super::*;

/// Checks one transaction against Definition 8 and the workload's micro-op
/// kinds.
pub(super) fn check_shape(h: &History, w: Workload, mops: &[Mop]) -> Result<(), String> {
    let (mut reads, mut writes) = (0, 0);
    for (j, m) in mops.iter().enumerate() {
        match (w, m.f()) {
            (_, MopFn::Read) => reads += 1,
            (Workload::RwRegister, MopFn::Write) | (Workload::ListAppend, MopFn::Append) => {
                writes += 1;
                if !mops[..j]
                    .iter()
                    .any(|r| r.f() == MopFn::Read && r.key() == m.key())
                {
                    return Err(format!(
                        "{} is a blind write (no earlier read of the key in its transaction)",
                        pr_str(&h.mop_value(m))
                    ));
                }
                if w == Workload::RwRegister && m.arg() == MopArg::Nil {
                    return Err("it writes nil, which is the initial state".into());
                }
            }
            _ => {
                return Err(format!(
                    "{} is not a micro-op of this workload",
                    pr_str(&h.mop_value(m))
                ))
            }
        }
    }
    if reads == 0 || reads > 2 || writes > 2 {
        return Err(format!(
            "it has {reads} reads and {writes} writes (a mini-transaction has 1-2 reads and at most 2 writes)"
        ));
    }
    Ok(())
}

/// Pass 1: every op is a transaction of the workload's micro-ops, every
/// committed or indeterminate one a mini-transaction, and every indexed
/// write writes one value. On failure, the first offending op (the index is
/// then built only for the ops before it, so that an earlier duplicate
/// value is reported first). Needs no key ids: a history that is not an MT
/// history mostly says so at its first transactions (issue 23: key ids for
/// all of a 1M-transaction history's micro-ops were made first).
pub(super) fn check_shapes(h: &History, w: Workload) -> Option<NotMini> {
    check_shapes_upto(h, w, h.ops.len())
}

/// Whether one of the first `ops` ops already shows that `h` is no MT
/// history of workload `w` (so [`super::analyze`] refuses it): a cheap
/// probe, since such a history mostly says so at its first transactions.
pub fn refused_early(h: &History, w: Workload, ops: usize) -> bool {
    check_shapes_upto(h, w, ops).is_some()
}

/// [`check_shapes`] on the ops before `upto` only.
fn check_shapes_upto(h: &History, w: Workload, upto: usize) -> Option<NotMini> {
    let not = |pos: usize, reason: String| Some(NotMini { pos, reason });
    for (i, op) in h.ops.iter().enumerate().take(upto) {
        if let crate::model::OpValue::Other(_) = op.value {
            return not(i, "its value is not a vector of micro-ops".into());
        }
        if let Some(m) = h.mops(op).iter().find(|m| {
            !matches!(
                (w, m.f()),
                (_, MopFn::Read)
                    | (Workload::RwRegister, MopFn::Write)
                    | (Workload::ListAppend, MopFn::Append)
            )
        }) {
            return not(
                i,
                format!(
                    "{} is not a micro-op of this workload",
                    pr_str(&h.mop_value(m))
                ),
            );
        }
        if matches!(op.op_type, OpType::Ok | OpType::Info) {
            if let Err(r) = check_shape(h, w, txn_mops(h, i)) {
                return not(i, format!("not a mini-transaction: {r}"));
            }
        }
        let range = indexed_mops(h, i);
        if h.mops[range]
            .iter()
            .any(|m| is_write(m.f()) && !matches!(m.arg(), MopArg::Atom(_)))
        {
            return not(i, "a write of nil or of a list".into());
        }
    }
    None
}

/// Notes the values the ops before `upto` write in `versions` (the ops
/// [`check_shapes`] passed).
pub(super) fn note_writes(h: &History, versions: &mut Versions, upto: usize) {
    for i in 0..upto {
        for g in indexed_mops(h, i) {
            let m = &h.mops[g];
            if let (true, MopArg::Atom(v)) = (is_write(m.f()), m.arg()) {
                versions.note(versions.mop_kid[g], v);
            }
        }
    }
}
