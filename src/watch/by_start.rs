//! A map from stream positions to values, kept as one vector sorted by
//! position: what [`super::store::Store`] keeps its transactions in.
//!
//! Transactions arrive in stream order (each new one starts after every
//! other), so nearly every insertion is a push at the end; a held op fed
//! later ([`super::hold`]) is the rare insertion in the middle. A removed
//! entry leaves a hole that is closed when holes are over half the vector,
//! so that removing one transaction stays cheap. Against a `BTreeMap` of the
//! same transactions (about 200 bytes each), iterating is a walk over one
//! vector and forgetting most of a round is one [`ByStart::retain`] pass:
//! on the fenced 1M stream the map's insertions and its rebuild after
//! forgetting were a tenth of the serial work (issue 17).
//!
//! ```
//! use ellery::watch::by_start::ByStart;
//! let mut m = ByStart::default();
//! m.insert(4, "b");
//! m.insert(1, "a");
//! m.insert(9, "c");
//! assert_eq!(m.remove(&4), Some("b"));
//! assert_eq!(m.iter().collect::<Vec<_>>(), [(&1, &"a"), (&9, &"c")]);
//! ```

use std::ops::Index;

/// Values by position, in position order (module docs).
#[derive(Clone, Debug)]
pub struct ByStart<V> {
    /// Sorted by position; `None`: a removed entry not yet closed up.
    slots: Vec<(u64, Option<V>)>,
    /// How many slots are `None`.
    holes: usize,
}

impl<V> Default for ByStart<V> {
    fn default() -> Self {
        ByStart {
            slots: Vec::new(),
            holes: 0,
        }
    }
}

impl<V> ByStart<V> {
    /// How many values there are.
    pub fn len(&self) -> usize {
        self.slots.len() - self.holes
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Where `key`'s slot is, or would be.
    ///
    /// Searched from the end in growing steps, then by halves within the
    /// last step: a completion's transaction started a few dozen slots
    /// back, and a plain binary search over the whole vector missed the
    /// cache at each of its steps (a fifth of the intake on the fenced 1M
    /// stream).
    fn find(&self, key: u64) -> Result<usize, usize> {
        // Every slot from `hi` on has a greater position.
        let mut hi = self.slots.len();
        let mut step = 1;
        while hi > 0 {
            let probe = hi.saturating_sub(step);
            if self.slots[probe].0 <= key {
                return match self.slots[probe..hi].binary_search_by_key(&key, |s| s.0) {
                    Ok(i) => Ok(probe + i),
                    Err(i) => Err(probe + i),
                };
            }
            hi = probe;
            step *= 2;
        }
        Err(0)
    }

    /// The value at `key`.
    pub fn get(&self, key: &u64) -> Option<&V> {
        let at = self.find(*key).ok()?;
        self.slots[at].1.as_ref()
    }

    /// The value at `key`, to change.
    pub fn get_mut(&mut self, key: &u64) -> Option<&mut V> {
        let at = self.find(*key).ok()?;
        self.slots[at].1.as_mut()
    }

    /// Puts `value` at `key`; returns the value it replaces.
    pub fn insert(&mut self, key: u64, value: V) -> Option<V> {
        match self.find(key) {
            Ok(at) => {
                let old = self.slots[at].1.replace(value);
                if old.is_none() {
                    self.holes -= 1;
                }
                old
            }
            Err(at) => {
                self.slots.insert(at, (key, Some(value)));
                None
            }
        }
    }

    /// Takes the value at `key` out.
    pub fn remove(&mut self, key: &u64) -> Option<V> {
        let at = self.find(*key).ok()?;
        let old = self.slots[at].1.take()?;
        self.holes += 1;
        if self.holes * 2 > self.slots.len() {
            self.close_holes();
        }
        Some(old)
    }

    fn close_holes(&mut self) {
        self.slots.retain(|s| s.1.is_some());
        self.holes = 0;
    }

    /// Keeps the values for which `keep` holds, visiting them in position
    /// order.
    pub fn retain(&mut self, mut keep: impl FnMut(&u64, &mut V) -> bool) {
        self.slots.retain_mut(|(k, v)| match v {
            Some(v) => keep(k, v),
            None => false,
        });
        self.holes = 0;
    }

    /// `(position, value)` in position order.
    pub fn iter(&self) -> Iter<'_, V> {
        Iter(self.slots.iter())
    }

    /// `(position, value)` in position order, values to change.
    pub fn iter_mut(&mut self) -> impl DoubleEndedIterator<Item = (&u64, &mut V)> {
        self.slots
            .iter_mut()
            .filter_map(|(k, v)| v.as_mut().map(|v| (&*k, v)))
    }

    /// The positions, in order.
    pub fn keys(&self) -> impl DoubleEndedIterator<Item = &u64> {
        self.iter().map(|(k, _)| k)
    }

    /// The values, in position order.
    pub fn values(&self) -> impl DoubleEndedIterator<Item = &V> {
        self.iter().map(|(_, v)| v)
    }

    /// The values, in position order, to change.
    pub fn values_mut(&mut self) -> impl DoubleEndedIterator<Item = &mut V> {
        self.iter_mut().map(|(_, v)| v)
    }
}

impl<V> Index<&u64> for ByStart<V> {
    type Output = V;

    /// The value at `key`; panics if there is none (as a map's index does).
    fn index(&self, key: &u64) -> &V {
        match self.get(key) {
            Some(v) => v,
            None => panic!("no entry at position {key}"),
        }
    }
}

/// The iterator of [`ByStart::iter`].
pub struct Iter<'a, V>(std::slice::Iter<'a, (u64, Option<V>)>);

impl<'a, V> Iterator for Iter<'a, V> {
    type Item = (&'a u64, &'a V);

    fn next(&mut self) -> Option<Self::Item> {
        self.0.by_ref().find_map(|(k, v)| Some((k, v.as_ref()?)))
    }
}

impl<V> DoubleEndedIterator for Iter<'_, V> {
    fn next_back(&mut self) -> Option<Self::Item> {
        self.0
            .by_ref()
            .rev()
            .find_map(|(k, v)| Some((k, v.as_ref()?)))
    }
}

impl<'a, V> IntoIterator for &'a ByStart<V> {
    type Item = (&'a u64, &'a V);
    type IntoIter = Iter<'a, V>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl<V> FromIterator<(u64, V)> for ByStart<V> {
    /// From pairs in any order (a later one at the same position wins).
    fn from_iter<I: IntoIterator<Item = (u64, V)>>(pairs: I) -> Self {
        let mut m = ByStart::default();
        for (k, v) in pairs {
            m.insert(k, v);
        }
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// Random insertions (mostly at the end), removals, replacements and
    /// retains leave the same contents, in the same order, as a `BTreeMap`.
    #[test]
    fn behaves_as_an_ordered_map() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = move |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        for round in 0..200 {
            let mut ours = ByStart::default();
            let mut map = BTreeMap::new();
            let mut top = 0u64;
            for step in 0..300 {
                match next(10) {
                    0..=4 => {
                        top += 1 + next(3);
                        assert_eq!(ours.insert(top, step), map.insert(top, step));
                    }
                    5 => {
                        let k = next(top + 2);
                        assert_eq!(ours.insert(k, step), map.insert(k, step));
                    }
                    6 | 7 => {
                        let k = next(top + 2);
                        assert_eq!(ours.remove(&k), map.remove(&k));
                    }
                    8 => {
                        let k = next(top + 2);
                        if let (Some(a), Some(b)) = (ours.get_mut(&k), map.get_mut(&k)) {
                            *a += 1;
                            *b += 1;
                        }
                        assert_eq!(ours.get(&k), map.get(&k));
                    }
                    _ => {
                        let cut = next(7);
                        let mut seen = Vec::new();
                        ours.retain(|&k, v| {
                            seen.push(k);
                            *v += 1;
                            (k + *v as u64) % 7 != cut
                        });
                        map.retain(|&k, v| {
                            *v += 1;
                            (k + *v as u64) % 7 != cut
                        });
                        assert!(seen.windows(2).all(|w| w[0] < w[1]), "retain in order");
                    }
                }
                assert_eq!(ours.len(), map.len(), "round {round} step {step}");
                assert!(ours.iter().eq(map.iter()), "round {round} step {step}");
                assert!(ours.iter().rev().eq(map.iter().rev()));
                assert!(ours.holes * 2 <= ours.slots.len());
            }
            let rebuilt: ByStart<_> = map.clone().into_iter().rev().collect();
            assert!(rebuilt.iter().eq(map.iter()));
        }
    }
}
