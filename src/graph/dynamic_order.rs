//! Incremental cycle detection: a topological order maintained under edge
//! insertions (Pearce and Kelly's dynamic topological sort) and LIFO edge
//! removals.
//!
//! Each edge carries a `u32` label chosen by the caller (an id into its own
//! edge table); a rejected insertion returns the labels of the path that the
//! new edge would close into a cycle. Removal is last-in first-out, which is
//! what a backtracking search needs and keeps removal O(1): a removed edge is
//! always the last entry of its source's and target's adjacency lists.
//! Removing edges never invalidates a topological order, so removals leave
//! the order alone.
//!
//! Edges live in one arena in insertion order, threaded into per-vertex
//! out- and in-lists (newest first): an insertion appends one slot and
//! updates two list heads, a removal restores them. Per-vertex vectors cost
//! twice the cache misses, and a SAT search inserts and removes the same
//! edges millions of times while searching only a few of them.

/// No edge (end of a list).
const NONE: u32 = u32::MAX;

/// One inserted edge and the next edges of its source's out-list and its
/// target's in-list.
#[derive(Clone, Copy, Debug)]
struct Slot {
    from: u32,
    to: u32,
    label: u32,
    next_out: u32,
    next_in: u32,
}

/// A directed graph on `0..n` with a topological order kept up to date.
#[derive(Clone, Debug)]
pub struct DynamicOrder {
    /// `pos[v]`: the position of `v` in the order (a permutation of `0..n`).
    pos: Vec<u32>,
    /// Inserted edges, oldest first.
    slots: Vec<Slot>,
    /// Per vertex: its newest out-edge and newest in-edge (slot indices).
    head_out: Vec<u32>,
    head_in: Vec<u32>,
    /// Visit marks: `mark[v] == epoch` means visited in the current search.
    mark: Vec<u32>,
    epoch: u32,
    /// Forward-search predecessors `(vertex, label)`.
    pred: Vec<(u32, u32)>,
    forward: Vec<u32>,
    backward: Vec<u32>,
    /// Depth-first stack: a vertex and the next slot of its list to scan.
    work: Vec<(u32, u32)>,
    pool: Vec<u32>,
}

impl DynamicOrder {
    /// An edgeless graph on `0..n`, ordered by id.
    pub fn new(n: usize) -> DynamicOrder {
        DynamicOrder::with_order(&(0..n as u32).collect::<Vec<_>>())
    }

    /// An edgeless graph whose initial order lists the vertices in `order`
    /// (a permutation of `0..order.len()`). Starting from a topological
    /// order of the edges about to be inserted makes each insertion O(1).
    pub fn with_order(order: &[u32]) -> DynamicOrder {
        let n = order.len();
        DynamicOrder {
            pos: super::positions(order),
            slots: Vec::new(),
            head_out: vec![NONE; n],
            head_in: vec![NONE; n],
            mark: vec![0; n],
            epoch: 0,
            pred: vec![(0, 0); n],
            forward: Vec::new(),
            backward: Vec::new(),
            work: Vec::new(),
            pool: Vec::new(),
        }
    }

    /// Makes room for `additional` more edges at once: a big graph built
    /// edge by edge otherwise copies its edges into fresh memory each time
    /// they double (issue 23: page faults are a fifth of the version
    /// chains' time on this host).
    pub fn reserve_edges(&mut self, additional: usize) {
        self.slots.reserve(additional);
    }

    /// Number of vertices.
    pub fn len(&self) -> usize {
        self.pos.len()
    }

    /// Whether there are no vertices.
    pub fn is_empty(&self) -> bool {
        self.pos.is_empty()
    }

    /// Number of edges currently in the graph.
    pub fn edge_count(&self) -> usize {
        self.slots.len()
    }

    /// The position of `v` in the current topological order.
    pub fn position(&self, v: u32) -> u32 {
        self.pos[v as usize]
    }

    /// The edges currently in the graph, `(from, to)`, oldest first.
    pub fn edges(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        self.slots.iter().map(|s| (s.from, s.to))
    }

    /// The vertices in the current topological order.
    pub fn order(&self) -> Vec<u32> {
        let mut order = vec![0u32; self.pos.len()];
        for (v, &p) in self.pos.iter().enumerate() {
            order[p as usize] = v as u32;
        }
        order
    }

    /// Inserts `from → to` with `label`, unless it would close a cycle: then
    /// the graph is unchanged and the error holds the labels of a path
    /// `to ⇝ from` (empty for a self-loop), which with the new edge is the
    /// cycle.
    pub fn add_edge(&mut self, from: u32, to: u32, label: u32) -> Result<(), Vec<u32>> {
        if from == to {
            return Err(Vec::new());
        }
        let (lower, upper) = (self.pos[to as usize], self.pos[from as usize]);
        if lower > upper {
            self.push(from, to, label);
            return Ok(());
        }
        self.next_epoch();
        // Forward from `to` through vertices ordered before `from`.
        if self.search_forward(to, upper, |w| w == from) {
            return Err(self.shortest_path(to, from, lower, upper));
        }
        self.search_backward(from, lower);
        self.reorder();
        self.push(from, to, label);
        Ok(())
    }

    /// Removes the most recently inserted edge still present, returning
    /// `(from, to, label)`.
    pub fn pop_edge(&mut self) -> Option<(u32, u32, u32)> {
        let s = self.slots.pop()?;
        self.head_out[s.from as usize] = s.next_out;
        self.head_in[s.to as usize] = s.next_in;
        Some((s.from, s.to, s.label))
    }

    /// Whether `to` is reachable from `from` (a bounded search: only
    /// vertices ordered between the two are visited).
    pub fn reaches(&mut self, from: u32, to: u32) -> bool {
        if from == to {
            return true;
        }
        let upper = self.pos[to as usize];
        if self.pos[from as usize] > upper {
            return false;
        }
        self.next_epoch();
        self.search_forward(from, upper, |w| w == to)
    }

    /// Whether some vertex of `targets` is reachable from `from`: the same
    /// answer as [`Self::reaches`] for each in turn, by one search bounded
    /// by the furthest of them (a search per target revisits what the
    /// earlier ones saw).
    pub fn reaches_any(&mut self, from: u32, targets: &[u32]) -> bool {
        let lower = self.pos[from as usize];
        let mut upper = None;
        for &t in targets {
            if t == from {
                return true;
            }
            let p = self.pos[t as usize];
            if p > lower {
                upper = Some(upper.map_or(p, |u: u32| u.max(p)));
            }
        }
        let Some(upper) = upper else {
            return false;
        };
        self.next_epoch();
        self.search_forward(from, upper, |w| targets.contains(&w))
    }

    /// Labels of a shortest path `from ⇝ to`, if there is one (empty when
    /// `from == to`).
    pub fn path(&mut self, from: u32, to: u32) -> Option<Vec<u32>> {
        if !self.reaches(from, to) {
            return None;
        }
        let (lower, upper) = (self.pos[from as usize], self.pos[to as usize]);
        Some(self.shortest_path(from, to, lower, upper))
    }

    /// Labels of a shortest path `from ⇝ to` (which must exist), by
    /// breadth-first search: every vertex of such a path is positioned
    /// between the two, so the search stays within `lower..=upper`. Short
    /// cycles make short conflict clauses.
    fn shortest_path(&mut self, from: u32, to: u32, lower: u32, upper: u32) -> Vec<u32> {
        self.next_epoch();
        self.forward.clear();
        self.forward.push(from);
        self.mark[from as usize] = self.epoch;
        let mut head = 0;
        'search: while head < self.forward.len() {
            let v = self.forward[head];
            head += 1;
            let mut i = self.head_out[v as usize];
            while i != NONE {
                let Slot {
                    to: w,
                    label,
                    next_out,
                    ..
                } = self.slots[i as usize];
                i = next_out;
                let p = self.pos[w as usize];
                if self.mark[w as usize] == self.epoch || p < lower || p > upper {
                    continue;
                }
                self.mark[w as usize] = self.epoch;
                self.pred[w as usize] = (v, label);
                if w == to {
                    break 'search;
                }
                self.forward.push(w);
            }
        }
        let mut path = Vec::new();
        let mut v = to;
        while v != from {
            let (p, l) = self.pred[v as usize];
            path.push(l);
            v = p;
        }
        path.reverse();
        path
    }

    fn push(&mut self, from: u32, to: u32, label: u32) {
        let i = self.slots.len() as u32;
        self.slots.push(Slot {
            from,
            to,
            label,
            next_out: self.head_out[from as usize],
            next_in: self.head_in[to as usize],
        });
        self.head_out[from as usize] = i;
        self.head_in[to as usize] = i;
    }

    fn next_epoch(&mut self) {
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            self.mark.fill(0);
            self.epoch = 1;
        }
    }

    /// Depth-first search from `start` over vertices positioned below
    /// `upper`, recording predecessors and the visited set in `forward`.
    /// Returns whether a vertex `is_target` accepts was reached (the
    /// furthest target is the one positioned at `upper`).
    fn search_forward(&mut self, start: u32, upper: u32, is_target: impl Fn(u32) -> bool) -> bool {
        self.forward.clear();
        self.work.clear();
        self.mark[start as usize] = self.epoch;
        self.forward.push(start);
        self.work.push((start, self.head_out[start as usize]));
        while let Some(&mut (v, ref mut next)) = self.work.last_mut() {
            if *next == NONE {
                self.work.pop();
                continue;
            }
            let Slot {
                to: w,
                label,
                next_out,
                ..
            } = self.slots[*next as usize];
            *next = next_out;
            if is_target(w) {
                self.pred[w as usize] = (v, label);
                return true;
            }
            if self.mark[w as usize] != self.epoch && self.pos[w as usize] < upper {
                self.mark[w as usize] = self.epoch;
                self.pred[w as usize] = (v, label);
                self.forward.push(w);
                self.work.push((w, self.head_out[w as usize]));
            }
        }
        false
    }

    /// Depth-first search backwards from `start` over vertices positioned
    /// above `lower`, collecting them in `backward`.
    fn search_backward(&mut self, start: u32, lower: u32) {
        self.backward.clear();
        self.work.clear();
        self.mark[start as usize] = self.epoch;
        self.backward.push(start);
        self.work.push((start, self.head_in[start as usize]));
        while let Some(&mut (_, ref mut next)) = self.work.last_mut() {
            if *next == NONE {
                self.work.pop();
                continue;
            }
            let Slot {
                from: w, next_in, ..
            } = self.slots[*next as usize];
            *next = next_in;
            if self.mark[w as usize] != self.epoch && self.pos[w as usize] > lower {
                self.mark[w as usize] = self.epoch;
                self.backward.push(w);
                self.work.push((w, self.head_in[w as usize]));
            }
        }
    }

    /// Gives the positions of both visited sets, pooled and sorted, first to
    /// the backward set and then to the forward set, each in its old order.
    fn reorder(&mut self) {
        let pos = &self.pos;
        self.forward.sort_unstable_by_key(|&v| pos[v as usize]);
        self.backward.sort_unstable_by_key(|&v| pos[v as usize]);
        self.pool.clear();
        self.pool.extend(
            self.backward
                .iter()
                .chain(&self.forward)
                .map(|&v| pos[v as usize]),
        );
        self.pool.sort_unstable();
        for (&v, &p) in self.backward.iter().chain(&self.forward).zip(&self.pool) {
            self.pos[v as usize] = p;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether `edges` (on `0..n`) contain a cycle, by Kahn's algorithm.
    fn cyclic(n: usize, edges: &[(u32, u32)]) -> bool {
        let mut indeg = vec![0usize; n];
        let mut out = vec![Vec::new(); n];
        for &(a, b) in edges {
            out[a as usize].push(b);
            indeg[b as usize] += 1;
        }
        let mut ready: Vec<u32> = (0..n as u32).filter(|&v| indeg[v as usize] == 0).collect();
        let mut done = 0;
        while let Some(v) = ready.pop() {
            done += 1;
            for &w in &out[v as usize] {
                indeg[w as usize] -= 1;
                if indeg[w as usize] == 0 {
                    ready.push(w);
                }
            }
        }
        done < n
    }

    struct Rng(u64);
    impl Rng {
        fn below(&mut self, n: u64) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0 % n
        }
    }

    fn assert_topological(d: &DynamicOrder, edges: &[(u32, u32)]) {
        for &(a, b) in edges {
            assert!(d.position(a) < d.position(b), "{a}->{b} against the order");
        }
    }

    #[test]
    fn rejects_a_closing_edge_with_its_path() {
        let mut d = DynamicOrder::new(4);
        assert_eq!(d.add_edge(3, 2, 0), Ok(()));
        assert_eq!(d.add_edge(2, 1, 1), Ok(()));
        assert_eq!(d.add_edge(1, 0, 2), Ok(()));
        assert_eq!(d.order(), vec![3, 2, 1, 0]);
        assert_eq!(d.add_edge(0, 3, 3), Err(vec![0, 1, 2]));
        assert_eq!(d.add_edge(1, 1, 4), Err(vec![]));
        assert_eq!(d.edge_count(), 3);
        assert!(d.reaches(3, 0) && !d.reaches(0, 3));
        assert_eq!(d.pop_edge(), Some((1, 0, 2)));
        assert_eq!(d.add_edge(0, 3, 3), Ok(()));
        assert_topological(&d, &[(3, 2), (2, 1), (0, 3)]);
    }

    /// Random insertions agree with a static cycle check, the order stays
    /// topological, and LIFO removals restore earlier states.
    #[test]
    fn agrees_with_a_static_cycle_check_on_random_graphs() {
        let mut rng = Rng(0x2545_F491_4F6C_DD1D);
        let mut rejected = 0;
        for round in 0..400 {
            let n = 2 + rng.below(30) as usize;
            let mut d = DynamicOrder::new(n);
            let mut edges: Vec<(u32, u32)> = Vec::new();
            for step in 0..4 * n {
                if rng.below(5) == 0 && !edges.is_empty() {
                    let (a, b) = edges.pop().expect("edge");
                    assert_eq!(d.pop_edge(), Some((a, b, edges.len() as u32)));
                    continue;
                }
                let (a, b) = (rng.below(n as u64) as u32, rng.below(n as u64) as u32);
                let mut with = edges.clone();
                with.push((a, b));
                let expect_cycle = a == b || cyclic(n, &with);
                match d.add_edge(a, b, edges.len() as u32) {
                    Ok(()) => {
                        assert!(!expect_cycle, "round {round} step {step}: missed cycle");
                        edges.push((a, b));
                    }
                    Err(path) => {
                        assert!(expect_cycle, "round {round} step {step}: false cycle");
                        rejected += 1;
                        // The path runs b ⇝ a along present edges.
                        let mut at = b;
                        for &l in &path {
                            assert_eq!(edges[l as usize].0, at);
                            at = edges[l as usize].1;
                        }
                        assert_eq!(at, a);
                    }
                }
                assert_topological(&d, &edges);
                assert_eq!(d.edge_count(), edges.len());
            }
        }
        assert!(rejected > 1000, "{rejected}");
    }

    /// One search for several targets answers as a search per target.
    #[test]
    fn reaches_any_agrees_with_reaches() {
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        let (mut hits, mut misses) = (0, 0);
        for _ in 0..300 {
            let n = 2 + rng.below(25) as usize;
            let mut d = DynamicOrder::new(n);
            for _ in 0..2 * n {
                let (a, b) = (rng.below(n as u64) as u32, rng.below(n as u64) as u32);
                let _ = d.add_edge(a, b, 0);
            }
            for _ in 0..20 {
                let from = rng.below(n as u64) as u32;
                let targets: Vec<u32> = (0..rng.below(4))
                    .map(|_| rng.below(n as u64) as u32)
                    .collect();
                let each = targets.iter().any(|&t| d.reaches(from, t));
                assert_eq!(d.reaches_any(from, &targets), each, "{from} {targets:?}");
                if each {
                    hits += 1;
                } else {
                    misses += 1;
                }
            }
        }
        assert!(hits > 500 && misses > 500, "{hits} {misses}");
    }
}
