//! A serial witness for register histories with predicate micro-ops: the
//! transactions replayed one after another in a candidate order, every
//! read (item, returned row, matched or unreturned row) checked against
//! the state the earlier ones left. A replay that succeeds is a serial
//! execution explaining every read, so the history is serializable (and,
//! when the order also respects session and real-time order, strongly
//! session / strictly serializable): no polygraph is needed. A replay that
//! fails proves nothing; the caller goes on with the exact checker.
//!
//! Without real time the polygraph of a predicate history is huge (every
//! unreturned row may have seen almost every version of its key; the
//! version order of blind writes is free), while the order the database
//! ran is usually close to completion order: the candidate is that order.
//! The replay is the only part soundness rests on.
//!
//! The rows a predicate did not return are those of
//! [`super::reg_history_with_predicates`], which leaves out keys no written
//! version could make the predicate return (true in every order), and,
//! when every model keeps real time, keys whose matching versions real
//! time hides from the read (true in every order that respects real time,
//! which the replay then requires).

use super::{PredSeen, PredTable, RegHistory, RegValue, RwMop, SatOptions};

/// How many failing reads a replay lists before it stops: seeds enough for
/// [`super::projection`], which unites them.
const MAX_FAILURES: usize = 8;

/// A read the replay of a candidate order did not explain: the reader's
/// view of `key` disagreed with the version `writer` (graph id, 0 for the
/// initial state) had left. Seeds [`super::projection`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Failure {
    /// Graph id of the reader.
    pub(super) reader: u32,
    /// The key.
    pub(super) key: u64,
    /// Graph id of the last writer of the key before the reader.
    pub(super) writer: u32,
}

/// The candidate order: transactions by completion, an `:info` one at its
/// invocation when some read observed one of its writes (left out
/// otherwise). `Ok`: graph ids, as [`super::Verdict::Valid`] gives them,
/// when the replay succeeds and the order respects the orders `opts`
/// keeps; `Err`: the first reads the replay failed to explain (empty when
/// only the orders were not respected).
pub(super) fn by_completion(
    h: &RegHistory,
    preds: &PredTable,
    opts: &SatOptions,
) -> Result<Vec<u32>, Vec<Failure>> {
    let order = completion_order(h);
    let failures = replay_failures(h, preds, &order, MAX_FAILURES);
    match failures.is_empty() && respects_orders(h, opts, &order) {
        true => Ok(order),
        false => Err(failures),
    }
}

/// The first reads a replay of [`by_completion`]'s order fails to explain
/// (for a caller that did not try the witness).
pub(super) fn completion_failures(h: &RegHistory, preds: &PredTable) -> Vec<Failure> {
    replay_failures(h, preds, &completion_order(h), MAX_FAILURES)
}

/// [`by_completion`]'s candidate order.
fn completion_order(h: &RegHistory) -> Vec<u32> {
    let observed = observed_writes(h);
    let mut order: Vec<(u64, u32)> = Vec::with_capacity(h.len());
    for (i, t) in h.iter().enumerate() {
        let id = i as u32 + 1;
        if t.committed {
            order.push((2 * t.index + 1, id));
        } else if t.ops.iter().any(|op| match *op {
            RwMop::Write(k, v) => observed.contains(&(k, v)),
            _ => false,
        }) {
            // Took effect at once: before anything completed after it.
            order.push((2 * t.invoked, id));
        }
    }
    order.sort_unstable();
    order.into_iter().map(|(_, id)| id).collect()
}

/// Every `(key, value)` some committed transaction read (item read or
/// returned row), to tell which `:info` writes took effect.
fn observed_writes(h: &RegHistory) -> hashbrown::HashSet<(u64, RegValue)> {
    let mut seen = hashbrown::HashSet::new();
    for t in h.iter().filter(|t| t.committed) {
        for op in &t.ops {
            match *op {
                RwMop::Read(k, v) => {
                    seen.insert((k, v));
                }
                RwMop::PredRead {
                    key,
                    seen: PredSeen::Returned(v),
                    ..
                } => {
                    seen.insert((key, v));
                }
                _ => {}
            }
        }
    }
    seen
}

/// Whether `order` (graph ids) holds every committed transaction and puts
/// each after its session predecessor (with [`SatOptions::session_order`])
/// and its real-time predecessors (with [`SatOptions::real_time`]).
fn respects_orders(h: &RegHistory, opts: &SatOptions, order: &[u32]) -> bool {
    let mut pos = vec![u32::MAX; h.len() + 1];
    for (i, &t) in order.iter().enumerate() {
        pos[t as usize] = i as u32;
    }
    let mut last: hashbrown::HashMap<i64, u32> = Default::default();
    for (i, t) in h.iter().enumerate().filter(|(_, t)| t.committed) {
        let id = i as u32 + 1;
        if pos[id as usize] == u32::MAX {
            return false;
        }
        if let Some(p) = last.insert(t.process, id) {
            if opts.session_order && pos[p as usize] > pos[id as usize] {
                return false;
            }
        }
        let late = |&p: &u32| p != 0 && pos[p as usize] > pos[id as usize];
        if opts.real_time && t.realtime_preds.iter().any(late) {
            return false;
        }
    }
    true
}

/// Whether replaying the transactions of `order` (graph ids) one after
/// another explains every read of the committed ones. An `:info`
/// transaction's writes apply (its reads were not observed).
#[cfg(test)]
pub(super) fn replay(h: &RegHistory, preds: &PredTable, order: &[u32]) -> bool {
    replay_failures(h, preds, order, 1).is_empty()
}

/// The first `max` reads of committed transactions that replaying `order`
/// (graph ids) one after another does not explain. The replay goes on
/// past a failure as if the read had held (the writes apply): the later
/// failures are those of other reads, not echoes of the first.
fn replay_failures(h: &RegHistory, preds: &PredTable, order: &[u32], max: usize) -> Vec<Failure> {
    let keys = super::history::key_count(h);
    // Per key its version and that version's writer (0: initial).
    let mut state: Vec<(RegValue, u32)> = vec![(None, 0); keys];
    let mut failures = Vec::new();
    for &id in order {
        let t = &h[id as usize - 1];
        for op in &t.ops {
            let (key, ok) = match *op {
                RwMop::Write(k, v) => {
                    state[k as usize] = (v, id);
                    continue;
                }
                _ if !t.committed => continue,
                RwMop::Read(k, v) => (k, state[k as usize].0 == v),
                RwMop::PredRead { key, pred, seen } => {
                    let v = state[key as usize].0;
                    let ok = match seen {
                        PredSeen::Returned(r) => r == v && preds.eval(pred, v),
                        PredSeen::Matched => preds.eval(pred, v),
                        PredSeen::Missed => !preds.eval(pred, v),
                    };
                    (key, ok)
                }
            };
            if !ok {
                failures.push(Failure {
                    reader: id,
                    key,
                    writer: state[key as usize].1,
                });
                if failures.len() >= max {
                    return failures;
                }
            }
        }
    }
    failures
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::predicate::{CmpOp, Pred};

    use super::super::tests::committed_txn as txn;

    /// A predicate `[:= 1]` over values 0 and 1 (value ids are the values).
    fn table() -> PredTable {
        PredTable {
            preds: vec![Pred::Cmp(CmpOp::Eq, crate::edn::Value::Int(1))],
            values: vec![crate::edn::Value::Int(0), crate::edn::Value::Int(1)],
        }
    }

    /// The replay checks each kind of view against the state, own writes
    /// included: a missed row whose version matches, a returned row with
    /// another value, and a read of an overwritten value all fail.
    #[test]
    fn replay_checks_every_view() {
        let p = table();
        let missed = |k| RwMop::PredRead {
            key: k,
            pred: 0,
            seen: PredSeen::Missed,
        };
        let returned = |k, v| RwMop::PredRead {
            key: k,
            pred: 0,
            seen: PredSeen::Returned(v),
        };
        let h = vec![
            txn(0, 1, vec![RwMop::Write(0, Some(1))]),
            txn(1, 2, vec![returned(0, Some(1)), missed(1)]),
            txn(0, 3, vec![RwMop::Write(0, Some(0)), missed(0)]),
        ];
        assert!(replay(&h, &p, &[1, 2, 3]));
        // T2 before T1: the row it returned did not hold 1 yet.
        assert!(!replay(&h, &p, &[2, 1, 3]));
        let h2 = vec![
            txn(0, 1, vec![RwMop::Write(1, Some(1))]),
            txn(1, 2, vec![missed(1)]),
        ];
        assert!(!replay(&h2, &p, &[1, 2]));
        assert!(replay(&h2, &p, &[2, 1]));
        let h3 = vec![
            txn(0, 1, vec![RwMop::Write(0, Some(0))]),
            txn(1, 2, vec![RwMop::Write(0, Some(1))]),
            txn(2, 3, vec![RwMop::Read(0, Some(0))]),
        ];
        assert!(!replay(&h3, &p, &[1, 2, 3]));
        assert!(replay(&h3, &p, &[2, 1, 3]));
    }

    /// `:info` transactions: one whose write a committed read (item or
    /// returned row) observed is placed at its invocation with all its
    /// writes (its own reads unchecked); one nobody observed is left out.
    /// Including an observed one can break another read: then no witness.
    #[test]
    fn info_transactions_take_effect_only_when_observed() {
        let p = table();
        let info = |index, invoked, ops| super::super::RegTxn {
            committed: false,
            invoked,
            ..txn(9, index, ops)
        };
        let returned = |k, v| RwMop::PredRead {
            key: k,
            pred: 0,
            seen: PredSeen::Returned(v),
        };
        let opts = SatOptions {
            session_order: true,
            real_time: true,
            ..SatOptions::default()
        };
        // I (id 3, invoked first) writes x = 1 and z = 1; T1 (id 1) reads
        // x = 1, T2 (id 2) returns z = 1; U (id 4, never observed) writes
        // y = 1, which T2 read as nil. I's own (unchecked) read is wrong.
        let h = vec![
            txn(1, 2, vec![RwMop::Read(0, Some(1))]),
            txn(2, 3, vec![returned(2, Some(1)), RwMop::Read(1, None)]),
            info(
                5,
                0,
                vec![
                    RwMop::Read(1, Some(0)),
                    RwMop::Write(0, Some(1)),
                    RwMop::Write(2, Some(1)),
                ],
            ),
            info(6, 1, vec![RwMop::Write(1, Some(1))]),
        ];
        assert_eq!(by_completion(&h, &p, &opts), Ok(vec![3, 1, 2]));
        // Observed through a returned row alone, I still takes effect.
        let mut h2 = h.clone();
        h2[0].ops.clear();
        assert_eq!(by_completion(&h2, &p, &opts), Ok(vec![3, 1, 2]));
        // Once U is observed too (a read of y = 1), T2's nil read of y
        // breaks: no witness (the exact checker decides); the failure
        // names T2's read of y and U, whose version it contradicts.
        let mut h3 = h.clone();
        h3[0].ops.push(RwMop::Read(1, Some(1)));
        let failure = Failure {
            reader: 2,
            key: 1,
            writer: 4,
        };
        assert_eq!(by_completion(&h3, &p, &opts), Err(vec![failure]));
    }

    /// Session and real-time order are checked only when the model keeps
    /// them; a committed transaction left out is no witness.
    #[test]
    fn orders_are_checked_when_kept() {
        let mut h = vec![txn(0, 1, vec![]), txn(0, 2, vec![])];
        h[1].realtime_preds = vec![1];
        let none = SatOptions {
            session_order: false,
            real_time: false,
            ..SatOptions::default()
        };
        let session = SatOptions {
            session_order: true,
            ..none
        };
        let strict = SatOptions {
            real_time: true,
            ..none
        };
        assert!(respects_orders(&h, &none, &[2, 1]));
        assert!(!respects_orders(&h, &session, &[2, 1]));
        assert!(!respects_orders(&h, &strict, &[2, 1]));
        assert!(respects_orders(&h, &strict, &[1, 2]));
        assert!(!respects_orders(&h, &none, &[1]));
    }
}
