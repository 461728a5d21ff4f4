//! The dense numbering of an MT history's versions (the unique-value
//! index): direct per-key ranges where written values are dense, else
//! hashed.

use super::*;

/// An atom's 64 bits, ordered so that consecutive integers are adjacent.
pub(super) fn atom_bits(a: Atom) -> u64 {
    match a.as_int() {
        Some(n) => (n as u64) ^ (1 << 63),
        None => a.interned_slot().map_or(0, |s| s as u64) | (1 << 62),
    }
}

/// Per key: the raw range of its written values when they are dense enough
/// to index directly (Jepsen writes per-key counters), else hashed.
#[derive(Clone, Copy, Debug)]
pub(super) struct KeyRange {
    pub(super) lo: u64,
    pub(super) hi: u64,
    pub(super) count: u32,
    /// First slot of a direct range, or [`NONE`] when hashed.
    pub(super) base: u32,
}

/// Dense numbering of the versions of an MT history: every written
/// `(key, value)` gets a slot (`0..writes`), and every key's initial state
/// the slot `writes + key id`. Hash maps keyed by `(key, value)` were the
/// fast path's main cost (a cache miss per lookup); with direct per-key
/// ranges, lookups of a key's recent values stay in cache.
pub(super) struct Versions {
    /// Key id of every micro-op in `History::mops`.
    pub(super) mop_kid: Vec<u32>,
    pub(super) ranges: Vec<KeyRange>,
    /// Slots of values of hashed keys.
    pub(super) hashed: HashMap<(u32, Atom), u32>,
    /// Number of write slots.
    pub(super) writes: u32,
}

impl Versions {
    /// Key ids for the first `mops` micro-ops (one hash lookup each, here
    /// only).
    pub(super) fn new(h: &History, mops: usize) -> Versions {
        let mut ids: HashMap<Atom, u32> = HashMap::new();
        // A direct-mapped cache in front of the map: Jepsen keys are mostly
        // small integers, and a few hundred of them are in use at a time.
        const CACHE: usize = 1024;
        let mut cache: Vec<(Atom, u32)> = vec![(Atom::default(), NONE); CACHE];
        let mop_kid = h.mops[..mops.min(h.mops.len())]
            .iter()
            .map(|m| {
                let c = &mut cache[(atom_bits(m.key()) as usize) % CACHE];
                if c.1 != NONE && c.0 == m.key() {
                    return c.1;
                }
                let n = ids.len() as u32;
                let id = *ids.entry(m.key()).or_insert(n);
                *c = (m.key(), id);
                id
            })
            .collect();
        Versions {
            mop_kid,
            ranges: vec![
                KeyRange {
                    lo: u64::MAX,
                    hi: 0,
                    count: 0,
                    base: NONE,
                };
                ids.len()
            ],
            hashed: HashMap::new(),
            writes: 0,
        }
    }

    /// Notes a written value of key `kid` (before [`Versions::assign`]).
    pub(super) fn note(&mut self, kid: u32, v: Atom) {
        let r = &mut self.ranges[kid as usize];
        let b = atom_bits(v);
        r.lo = r.lo.min(b);
        r.hi = r.hi.max(b);
        r.count += 1;
    }

    /// Lays out the direct ranges; keys whose values are sparse are hashed.
    pub(super) fn assign(&mut self) {
        let mut next: u64 = 0;
        for r in &mut self.ranges {
            if r.count == 0 {
                continue;
            }
            let span = r.hi - r.lo;
            if span < 2 * r.count as u64 && next + span + 1 < NONE as u64 / 2 {
                r.base = next as u32;
                next += span + 1;
            }
        }
        self.writes = next as u32;
    }

    /// The slot of a written value, made on first sight (hashed keys).
    pub(super) fn slot_or_new(&mut self, kid: u32, v: Atom) -> u32 {
        let r = self.ranges[kid as usize];
        if r.base != NONE {
            return r.base + (atom_bits(v) - r.lo) as u32;
        }
        let next = self.writes;
        let s = *self.hashed.entry((kid, v)).or_insert(next);
        if s == next {
            self.writes += 1;
        }
        s
    }

    /// The slot of `(kid, v)` if some write created it.
    pub(super) fn slot(&self, kid: u32, v: Atom) -> Option<u32> {
        let r = self.ranges[kid as usize];
        if r.base != NONE {
            let b = atom_bits(v);
            (b >= r.lo && b <= r.hi).then(|| r.base + (b - r.lo) as u32)
        } else if r.count == 0 {
            None
        } else {
            self.hashed.get(&(kid, v)).copied()
        }
    }

    /// The slot of a version: its value's, or the key's initial state.
    pub(super) fn version(&self, kid: u32, v: Ver) -> Option<u32> {
        match v {
            None => Some(self.writes + kid),
            Some(x) => self.slot(kid, x),
        }
    }

    /// Number of version slots (writes, then one initial state per key).
    pub(super) fn len(&self) -> usize {
        self.writes as usize + self.ranges.len()
    }
}
