//! Dense ids for atoms by first appearance ([`AtomIds`]): rw-register's
//! keys and values, the misread scan's and the fence collection's.

use crate::model::Atom;
use hashbrown::HashMap;

/// Dense ids of atoms (keys, or one key's values), given by the caller in
/// order of first appearance. Small non-negative integers (what Jepsen's
/// generators write, usually counting up per key) are found by indexing a
/// vector, everything else by hashing: a 1M-transaction history's values
/// cost a hash lookup each otherwise, most of them cache misses (issue 23).
#[derive(Default)]
pub(crate) struct AtomIds {
    /// Id + 1 of integer atom `n` at `dense[n]` (0: none yet).
    pub(super) dense: Vec<u32>,
    /// Ids of the other atoms, and of integers first seen before `dense`
    /// grew to reach them.
    sparse: HashMap<Atom, u32>,
    /// How many atoms have an id (the bound on `dense`'s growth).
    held: usize,
}

impl AtomIds {
    /// `a`'s id, if it has one.
    #[inline]
    pub(crate) fn get(&self, a: Atom) -> Option<u32> {
        if let Some(n) = a.as_int().filter(|&n| n >= 0) {
            if let Some(&id1) = self.dense.get(n as usize).filter(|&&id1| id1 > 0) {
                return Some(id1 - 1);
            }
        }
        self.sparse.get(&a).copied()
    }

    /// `a`'s id, or `new()`'s when `a` is new.
    #[inline]
    pub(crate) fn id(&mut self, a: Atom, new: impl FnOnce() -> u32) -> u32 {
        let bound = 8 * self.held + 64;
        let held = &mut self.held;
        let new = || {
            *held += 1;
            new()
        };
        let n = match a.as_int() {
            Some(n) if n >= 0 => n as usize,
            _ => return *self.sparse.entry(a).or_insert_with(new),
        };
        let d = &mut self.dense;
        // Grow to reach `n` only while the vector stays within a constant
        // factor of the ids held (at most 32 bytes an id, about a map
        // entry's cost; not a factor of its own length: doubling values
        // would double it with one id each): sparse integers go to the map.
        if n >= d.len() && n < bound {
            d.resize(n + 1, 0);
        }
        match d.get(n) {
            Some(&id1) if id1 > 0 => id1 - 1,
            Some(_) => {
                let id = match self.sparse.get(&a) {
                    Some(&id) => id,
                    None => new(),
                };
                d[n] = id + 1;
                id
            }
            None => *self.sparse.entry(a).or_insert_with(new),
        }
    }
}
