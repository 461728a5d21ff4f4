//! Deliberate anomaly injection: each [`Fault`] is a short, fixed script of
//! transactions on fresh keys, run while nothing else is in flight.

use super::sim::{Mop, Observed, OpType, Sim};
use super::{Fault, Injection, Workload};
use std::io::{self, Write};

/// Runs one injection of `fault` on the (idle) processes of slots 0 and 1,
/// and records it in the summary.
pub(super) fn inject<W: Write>(sim: &mut Sim<'_, W>, fault: Fault) -> io::Result<()> {
    use OpType::{Fail, Invoke};
    const OK: OpType = OpType::Ok;
    let a = sim.slots[0].pid;
    let b = sim.slots[1].pid;
    let list = sim.opts.workload == Workload::ListAppend;
    // What a read of a key holding these values (in order) observes.
    let seen = |vals: &[u64]| {
        if list {
            Observed::List(vals.to_vec())
        } else {
            Observed::Reg(vals.last().copied())
        }
    };
    let ops = match fault {
        Fault::AbortedRead => {
            let k = sim.fresh_key();
            let v = sim.next_value(k);
            let w = [Mop::write(k, v)];
            let r = [Mop::read(k)];
            sim.emit(a, Invoke, &w, None)?;
            let wf = sim.emit(a, Fail, &w, None)?;
            sim.emit(b, Invoke, &r, None)?;
            let ro = sim.emit(b, OK, &r, Some(&[seen(&[v])]))?;
            vec![wf, ro]
        }
        Fault::IntermediateRead => {
            let k = sim.fresh_key();
            let (v1, v2) = (sim.next_value(k), sim.next_value(k));
            let w = [Mop::write(k, v1), Mop::write(k, v2)];
            let r = [Mop::read(k)];
            sim.emit(a, Invoke, &w, None)?;
            sim.emit(b, Invoke, &r, None)?;
            let ro = sim.emit(b, OK, &r, Some(&[seen(&[v1])]))?;
            let wo = sim.emit(a, OK, &w, Some(&[]))?;
            vec![wo, ro]
        }
        Fault::LostUpdate => {
            let k = sim.fresh_key();
            let (va, vb) = (sim.next_value(k), sim.next_value(k));
            let ta = [Mop::read(k), Mop::write(k, va)];
            let tb = [Mop::read(k), Mop::write(k, vb)];
            sim.emit(a, Invoke, &ta, None)?;
            sim.emit(b, Invoke, &tb, None)?;
            let oa = sim.emit(a, OK, &ta, Some(&[seen(&[])]))?;
            let ob = sim.emit(b, OK, &tb, Some(&[seen(&[])]))?;
            let obs = [Mop::read(k)];
            sim.emit(a, Invoke, &obs, None)?;
            sim.emit(a, OK, &obs, Some(&[seen(&[va, vb])]))?;
            vec![oa, ob]
        }
        Fault::WriteSkew => {
            let (x, y) = (sim.fresh_key(), sim.fresh_key());
            let (vx, vy) = (sim.next_value(x), sim.next_value(y));
            let ta = [Mop::read(y), Mop::write(x, vx)];
            let tb = [Mop::read(x), Mop::write(y, vy)];
            sim.emit(a, Invoke, &ta, None)?;
            sim.emit(b, Invoke, &tb, None)?;
            let oa = sim.emit(a, OK, &ta, Some(&[seen(&[])]))?;
            let ob = sim.emit(b, OK, &tb, Some(&[seen(&[])]))?;
            let obs = [Mop::read(x), Mop::read(y)];
            sim.emit(a, Invoke, &obs, None)?;
            sim.emit(a, OK, &obs, Some(&[seen(&[vx]), seen(&[vy])]))?;
            vec![oa, ob]
        }
        Fault::StaleRead => {
            let k = sim.fresh_key();
            let v = sim.next_value(k);
            let w = [Mop::write(k, v)];
            let r = [Mop::read(k)];
            sim.emit(a, Invoke, &w, None)?;
            let wo = sim.emit(a, OK, &w, Some(&[]))?;
            sim.emit(b, Invoke, &r, None)?;
            let ro = sim.emit(b, OK, &r, Some(&[seen(&[])]))?;
            vec![wo, ro]
        }
        Fault::CyclicInformationFlow => {
            let (x, y) = (sim.fresh_key(), sim.fresh_key());
            let (vx, vy) = (sim.next_value(x), sim.next_value(y));
            let ta = [Mop::write(x, vx), Mop::read(y)];
            let tb = [Mop::write(y, vy), Mop::read(x)];
            sim.emit(a, Invoke, &ta, None)?;
            sim.emit(b, Invoke, &tb, None)?;
            let oa = sim.emit(a, OK, &ta, Some(&[seen(&[vy])]))?;
            let ob = sim.emit(b, OK, &tb, Some(&[seen(&[vx])]))?;
            vec![oa, ob]
        }
        Fault::DirtyWrite => {
            let (x, y) = (sim.fresh_key(), sim.fresh_key());
            let (ax, bx) = (sim.next_value(x), sim.next_value(x));
            let (ay, by) = (sim.next_value(y), sim.next_value(y));
            let ta = [Mop::write(x, ax), Mop::write(y, ay)];
            let tb = [Mop::write(x, bx), Mop::write(y, by)];
            sim.emit(a, Invoke, &ta, None)?;
            sim.emit(b, Invoke, &tb, None)?;
            let oa = sim.emit(a, OK, &ta, Some(&[]))?;
            let ob = sim.emit(b, OK, &tb, Some(&[]))?;
            let obs = [Mop::read(x), Mop::read(y)];
            sim.emit(a, Invoke, &obs, None)?;
            sim.emit(a, OK, &obs, Some(&[seen(&[ax, bx]), seen(&[by, ay])]))?;
            vec![oa, ob]
        }
    };
    sim.summary.injections.push(Injection { fault, ops });
    Ok(())
}
