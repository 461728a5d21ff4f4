//! A transaction's micro-ops as the witnesses read them: its external
//! reads and the writes it leaves. Most transactions are a few micro-ops,
//! searched in place; a big one's keys are hashed ([`TxnMap`]), since a
//! search per micro-op made a transaction of thousands of keys take
//! seconds.

use super::{reg_value, txn_mops};
use crate::infer::txn::TxnMap;
use crate::model::{Atom, History, Mop, MopFn};

/// Calls `f` on each read of a key the transaction had not written yet
/// (those the state before it must explain).
pub(super) fn external_reads(h: &History, pos: usize, f: impl FnMut(Atom, Option<Atom>)) {
    external_reads_of(txn_mops(h, pos), f);
}

/// [`external_reads`] of a transaction's micro-ops `mops`.
pub(super) fn external_reads_of(mops: &[Mop], mut f: impl FnMut(Atom, Option<Atom>)) {
    external_reads_at(mops, |_, k, v| f(k, v));
}

/// [`external_reads`] of `mops`, each with its micro-op's position: reads
/// of keys the transaction had not written before them. A big
/// transaction's written keys are kept in a [`TxnMap`] (a search of the
/// micro-ops before each read was quadratic in its size); a small one's
/// are searched in place, without an allocation.
pub(super) fn external_reads_at(mops: &[Mop], mut f: impl FnMut(usize, Atom, Option<Atom>)) {
    let read = |m: &Mop| reg_value(m).ok().filter(|_| m.f() == MopFn::Read);
    if mops.len() <= SMALL_TXN {
        for (i, m) in mops.iter().enumerate() {
            let own_write = || {
                mops[..i]
                    .iter()
                    .any(|w| w.f() == MopFn::Write && w.key() == m.key())
            };
            if let Some(v) = read(m).filter(|_| !own_write()) {
                f(i, m.key(), v);
            }
        }
        return;
    }
    let mut written: TxnMap<()> = TxnMap::default();
    for (i, m) in mops.iter().enumerate() {
        if m.f() == MopFn::Write && !written.contains(m.key()) {
            written.push(m.key(), ());
        } else if let Some(v) = read(m).filter(|_| !written.contains(m.key())) {
            f(i, m.key(), v);
        }
    }
}

/// Calls `f` with the position of each write in `mops` that is the last
/// write of its key there (the value the transaction leaves), in order;
/// as [`external_reads_at`], a big transaction's keys are hashed.
pub(super) fn final_writes_at(mops: &[Mop], mut f: impl FnMut(usize)) {
    let write = |m: &Mop| m.f() == MopFn::Write;
    if mops.len() <= SMALL_TXN {
        for (i, m) in mops.iter().enumerate().filter(|(_, m)| write(m)) {
            if !mops[i + 1..].iter().any(|n| write(n) && n.key() == m.key()) {
                f(i);
            }
        }
        return;
    }
    let mut last: TxnMap<usize> = TxnMap::default();
    for (i, m) in mops.iter().enumerate().filter(|(_, m)| write(m)) {
        match last.get_mut(m.key()) {
            Some(at) => *at = i,
            None => last.push(m.key(), i),
        }
    }
    for (i, m) in mops.iter().enumerate().filter(|(_, m)| write(m)) {
        if last.get(m.key()) == Some(&i) {
            f(i);
        }
    }
}

/// Micro-ops up to which a transaction's keys are searched in place.
const SMALL_TXN: usize = 16;
