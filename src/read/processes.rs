//! Per-process positions kept while reading (each process's open
//! invocation, and in a part read in parallel its first op): looked up
//! once or twice per op, so small process ids are kept in a vector by id
//! rather than hashed (Jepsen numbers processes from 0, and a crashed
//! process's successor `concurrency` higher).

use crate::model::NO_OP;
use hashbrown::HashMap;

/// Process ids from 0 up to this are kept by id; others are hashed.
const DENSE: i64 = 1 << 16;

/// A map from process to an op position (never [`NO_OP`]).
#[derive(Default)]
pub(crate) struct ProcessMap {
    /// By process id below [`DENSE`]; [`NO_OP`] where none.
    dense: Vec<u32>,
    /// The other processes.
    sparse: HashMap<i64, u32>,
}

impl ProcessMap {
    /// The slot of a small process id.
    fn slot(p: i64) -> Option<usize> {
        (0..DENSE).contains(&p).then_some(p as usize)
    }

    /// The position kept for `p`.
    pub(crate) fn get(&self, p: i64) -> Option<u32> {
        match Self::slot(p) {
            Some(s) => self.dense.get(s).copied().filter(|&v| v != NO_OP),
            None => self.sparse.get(&p).copied(),
        }
    }

    /// Keeps `v` for `p`; returns what was kept before.
    pub(crate) fn insert(&mut self, p: i64, v: u32) -> Option<u32> {
        debug_assert!(v != NO_OP);
        match Self::slot(p) {
            Some(s) => {
                if s >= self.dense.len() {
                    self.dense.resize(s + 1, NO_OP);
                }
                let old = std::mem::replace(&mut self.dense[s], v);
                (old != NO_OP).then_some(old)
            }
            None => self.sparse.insert(p, v),
        }
    }

    /// Keeps `v` for `p` unless something is kept already.
    pub(crate) fn insert_if_absent(&mut self, p: i64, v: u32) {
        if self.get(p).is_none() {
            self.insert(p, v);
        }
    }

    /// Forgets `p`; returns what was kept.
    pub(crate) fn remove(&mut self, p: i64) -> Option<u32> {
        match Self::slot(p) {
            Some(s) => {
                let old = std::mem::replace(self.dense.get_mut(s)?, NO_OP);
                (old != NO_OP).then_some(old)
            }
            None => self.sparse.remove(&p),
        }
    }

    /// Every process and its position: small ids in order, then the
    /// others in no particular order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (i64, u32)> + '_ {
        let dense = self.dense.iter().enumerate();
        dense
            .filter(|&(_, &v)| v != NO_OP)
            .map(|(p, &v)| (p as i64, v))
            .chain(self.sparse.iter().map(|(&p, &v)| (p, v)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The map behaves as a hash map would, for small, big and negative
    /// process ids alike.
    #[test]
    fn process_map_is_a_map() {
        let mut m = ProcessMap::default();
        let mut reference: std::collections::BTreeMap<i64, u32> = Default::default();
        let ids = [0, 1, 7, 65_535, 65_536, -1, 1 << 40, 3];
        for (step, &p) in ids.iter().cycle().take(200).enumerate() {
            let v = step as u32;
            match step % 4 {
                0 | 1 => assert_eq!(m.insert(p, v), reference.insert(p, v)),
                2 => assert_eq!(m.remove(p), reference.remove(&p)),
                _ => {
                    m.insert_if_absent(p, v);
                    reference.entry(p).or_insert(v);
                }
            }
            for &q in &ids {
                assert_eq!(m.get(q), reference.get(&q).copied(), "{q}");
            }
            let mut all: Vec<(i64, u32)> = m.iter().collect();
            all.sort_unstable();
            let want: Vec<(i64, u32)> = reference.iter().map(|(&p, &v)| (p, v)).collect();
            assert_eq!(all, want);
        }
    }
}
