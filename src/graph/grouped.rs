//! Values grouped by a small dense key, in compressed rows ([`grouped`]):
//! one allocation for every list instead of one per key.

/// Values grouped by a small key (a transaction, a bucket): those of key
/// `t` are `items[start[t]..start[t + 1]]`, in the order they were given.
#[derive(Clone, Debug, Default)]
pub struct Grouped {
    start: Vec<u32>,
    /// The values, key by key.
    pub items: Vec<u32>,
}

impl Grouped {
    /// The values of key `t` (none when `t` is out of range).
    pub fn of(&self, t: u32) -> &[u32] {
        let t = t as usize;
        match (self.start.get(t), self.start.get(t + 1)) {
            (Some(&a), Some(&b)) => &self.items[a as usize..b as usize],
            _ => &[],
        }
    }
}

/// Groups `(key, value)` pairs (keys below `n`; others are dropped) by key,
/// by a counting sort: linear, and stable within a key.
///
/// ```
/// let g = ellery::graph::grouped(3, [(2, 7), (0, 5), (2, 8), (9, 1)].into_iter());
/// assert_eq!(g.of(2), &[7, 8]);
/// assert_eq!(g.of(1), &[] as &[u32]);
/// assert_eq!(g.items, [5, 7, 8]);
/// ```
pub fn grouped(n: usize, pairs: impl Iterator<Item = (u32, u32)> + Clone) -> Grouped {
    let mut start = vec![0u32; n + 1];
    let pairs = pairs.filter(|&(t, _)| (t as usize) < n);
    for (t, _) in pairs.clone() {
        start[t as usize + 1] += 1;
    }
    for i in 1..start.len() {
        start[i] += start[i - 1];
    }
    let mut next = start.clone();
    let mut items = vec![0u32; start[n] as usize];
    for (t, v) in pairs {
        let at = &mut next[t as usize];
        items[*at as usize] = v;
        *at += 1;
    }
    Grouped { start, items }
}
