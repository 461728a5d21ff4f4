//! Mini-transaction shapes (MTC, §2.1): the generator's MT workload.
//!
//! With [`super::GenOptions::mini`] every generated transaction is a
//! mini-transaction: one or two reads, at most two writes, each write after a
//! read of the same key. Shapes are drawn uniformly from the union of the
//! MTC artifact's CobraBench and Jepsen generators, over two distinct keys
//! (1 and 2). Values stay unique per key (the simulator's counters), and
//! injected faults get a read of each key before its first write (see
//! [`rmw`]).

use super::sim::{Kind, Mop, Observed};

/// A shape: `(write?, which key)` per micro-op.
type Shape = &'static [(bool, u8)];

const R: bool = false;
const W: bool = true;

/// The shapes: R1, R1R2, R1R1, R1W1, R1R2W2, R2R1W2, R1R1W1, R2W2R1,
/// R1W1R1, R1R2W1W2, R1R2W2W1, R1W1R2W2, R1R1W1W1, R1W1R1W1, R2W2R2.
pub(super) const SHAPES: [Shape; 15] = [
    &[(R, 1)],
    &[(R, 1), (R, 2)],
    &[(R, 1), (R, 1)],
    &[(R, 1), (W, 1)],
    &[(R, 1), (R, 2), (W, 2)],
    &[(R, 2), (R, 1), (W, 2)],
    &[(R, 1), (R, 1), (W, 1)],
    &[(R, 2), (W, 2), (R, 1)],
    &[(R, 1), (W, 1), (R, 1)],
    &[(R, 1), (R, 2), (W, 1), (W, 2)],
    &[(R, 1), (R, 2), (W, 2), (W, 1)],
    &[(R, 1), (W, 1), (R, 2), (W, 2)],
    &[(R, 1), (R, 1), (W, 1), (W, 1)],
    &[(R, 1), (W, 1), (R, 1), (W, 1)],
    &[(R, 2), (W, 2), (R, 2)],
];

/// Turns a fault script's transaction into a read-modify-write one: a read
/// of each key is inserted before the key's first write unless the key was
/// read already. Inserted reads observe `init` (faults run on fresh keys).
/// `reads` holds what the script's own reads observe (if it is a
/// completion); the result interleaves the inserted observations.
pub(super) fn rmw(
    mops: &[Mop],
    reads: Option<&[Observed]>,
    init: &Observed,
) -> (Vec<Mop>, Option<Vec<Observed>>) {
    let mut out = Vec::with_capacity(mops.len() + 2);
    let mut seen = Vec::with_capacity(mops.len() + 2);
    let mut given = reads.map(|r| r.iter());
    let mut read_keys: Vec<u64> = Vec::new();
    for m in mops {
        match m.kind {
            Kind::Read => {
                read_keys.push(m.key);
                out.push(*m);
                if let Some(g) = given.as_mut() {
                    seen.push(g.next().expect("one observation per read").clone());
                }
            }
            Kind::Write => {
                if !read_keys.contains(&m.key) {
                    read_keys.push(m.key);
                    out.push(Mop::read(m.key));
                    seen.push(init.clone());
                }
                out.push(*m);
            }
        }
    }
    (out, reads.map(|_| seen))
}
