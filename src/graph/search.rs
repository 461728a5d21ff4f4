//! Cycle search with edge-type constraints.
//!
//! Two searches share one specification ([`CycleSpec`]):
//!
//! * [`elle_search`] walks the graph breadth-first exactly as Elle's
//!   `elle.bfs` does (same vertex order, same path-extension rules), so that
//!   on histories Elle can finish, ellery reports the very cycle Elle reports.
//!   Its cost can grow exponentially with the size of a component, so it runs
//!   under a step budget.
//! * [`constrained_search`] is ellery's own polynomial search over
//!   (vertex, automaton-state) pairs, used when the budget runs out. It finds
//!   a shortest cycle that satisfies the specification, or proves that no
//!   closed walk does.

use super::{DiGraph, Rels};
use crate::edn::order::bifurcan_order;
use std::collections::VecDeque;
use std::time::Instant;

/// How anti-dependency (rw) edges may appear in a cycle, after Elle's
/// `BFSPath$RWMode`.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub enum RwMode {
    /// rw edges only where legal.
    None,
    /// Exactly one rw edge, even if rw is not otherwise legal.
    Single,
    /// rw edges allowed, never two in a row; the last edge was not rw.
    NonadjacentFree,
    /// As `NonadjacentFree`, but the last edge taken was rw.
    NonadjacentTaken,
}

/// What a cycle must look like: Elle's cycle-anomaly specification.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CycleSpec {
    /// Relationships usable as ordinary edges.
    pub legal: Rels,
    /// Each set here must be hit by at least one edge.
    pub required: Vec<Rels>,
    /// How many rw edges are still wanted (1 for "single", 2 for "multiple").
    pub want_rw: u8,
    /// The rw discipline.
    pub rw_mode: RwMode,
    /// Every relationship the search may traverse (the projection Elle
    /// searches).
    pub search_rels: Rels,
}

/// The outcome of a bounded search.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SearchOutcome {
    /// A cycle, as local vertex ids; the first vertex is repeated at the end.
    Found(Vec<u32>),
    /// The search completed and found nothing.
    NotFound,
    /// The step budget or deadline ran out first.
    Exhausted,
}

/// Limits on a search: a deadline and a budget of path extensions.
#[derive(Clone, Copy, Debug)]
pub struct Budget {
    /// Wall-clock deadline.
    pub deadline: Option<Instant>,
    /// Remaining path extensions.
    pub steps: u64,
}

impl Budget {
    fn spend(&mut self, n: u64) -> bool {
        if self.steps < n {
            return false;
        }
        self.steps -= n;
        if self.steps % 4096 < n {
            if let Some(d) = self.deadline {
                if Instant::now() >= d {
                    self.steps = 0;
                    return false;
                }
            }
        }
        true
    }

    /// Whether the deadline has passed.
    pub fn expired(&self) -> bool {
        self.deadline.is_some_and(|d| Instant::now() >= d)
    }
}

/// A graph prepared for Elle-order search: vertices carry the Bifurcan hash
/// of their op index, and adjacency lists are in Bifurcan iteration order.
pub struct SearchGraph {
    hashes: Vec<u32>,
    present: Vec<bool>,
    adj: Vec<Vec<(u32, Rels)>>,
    vertex_order: Vec<u32>,
}

impl SearchGraph {
    /// Prepares `g` (local ids) for search; `hashes[v]` is the Bifurcan hash
    /// of vertex `v`'s op. Vertices without edges are not part of the graph,
    /// as in Elle's projected graphs.
    pub fn new(g: &DiGraph, hashes: Vec<u32>) -> SearchGraph {
        let n = g.len();
        let mut present = vec![false; n];
        for (a, b, _) in g.edges() {
            present[a as usize] = true;
            present[b as usize] = true;
        }
        let mut adj = Vec::with_capacity(n);
        for v in 0..n as u32 {
            let mut out: Vec<(u32, Rels)> = g.out(v).collect();
            bifurcan_order(&mut out, |(w, _)| hashes[w as usize]);
            adj.push(out);
        }
        let mut vertex_order: Vec<u32> = (0..n as u32).filter(|&v| present[v as usize]).collect();
        bifurcan_order(&mut vertex_order, |v| hashes[v as usize]);
        SearchGraph {
            hashes,
            present,
            adj,
            vertex_order,
        }
    }

    /// The subgraph induced by `keep` (as Bifurcan's `select`): same ids,
    /// other vertices dropped, adjacency re-ordered for the smaller sets.
    fn select(&self, keep: &[u32]) -> SearchGraph {
        let n = self.hashes.len();
        let mut member = vec![false; n];
        for &v in keep {
            member[v as usize] = true;
        }
        let mut adj = vec![Vec::new(); n];
        for &v in keep {
            if adj[v as usize].is_empty() {
                let mut out: Vec<(u32, Rels)> = self.adj[v as usize]
                    .iter()
                    .copied()
                    .filter(|&(w, _)| member[w as usize])
                    .collect();
                bifurcan_order(&mut out, |(w, _)| self.hashes[w as usize]);
                adj[v as usize] = out;
            }
        }
        let mut vertex_order: Vec<u32> = (0..n as u32).filter(|&v| member[v as usize]).collect();
        bifurcan_order(&mut vertex_order, |v| self.hashes[v as usize]);
        SearchGraph {
            hashes: self.hashes.clone(),
            present: member,
            adj,
            vertex_order,
        }
    }

    /// Vertices in Bifurcan iteration order.
    pub fn vertices(&self) -> &[u32] {
        &self.vertex_order
    }

    /// Out-neighbours of `v` in Bifurcan iteration order.
    pub fn out_in_order(&self, v: u32) -> Vec<u32> {
        self.adj[v as usize]
            .iter()
            .filter(|&&(w, _)| self.present[w as usize])
            .map(|&(w, _)| w)
            .collect()
    }
}

/// The automaton state of a path (Elle's `BFSPath` without the ops).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
struct PathState {
    want: [Rels; 4],
    want_rw: u8,
    mode: RwMode,
}

impl PathState {
    fn want_mask(&self) -> Rels {
        self.want.iter().fold(Rels::NONE, |a, &r| a.union(r))
    }

    fn check_off(&self, rel: Rels) -> [Rels; 4] {
        let mut want = self.want;
        if let Some(slot) = want.iter_mut().find(|w| w.intersects(rel)) {
            *slot = Rels::NONE;
        }
        want
    }

    fn valid(&self) -> bool {
        self.want_mask().is_empty() && self.want_rw == 0 && self.mode != RwMode::NonadjacentTaken
    }

    /// Takes one single relationship; `None` if the path cannot use it.
    fn step_rel(&self, legal: Rels, rel: Rels) -> Option<PathState> {
        let is_rw = rel.intersects(Rels::ANY_RW);
        if rel.intersects(legal) {
            let want_rw = if is_rw {
                self.want_rw.saturating_sub(1)
            } else {
                self.want_rw
            };
            let mode = match self.mode {
                RwMode::NonadjacentTaken => RwMode::NonadjacentFree,
                m => m,
            };
            Some(PathState {
                want: self.check_off(rel),
                want_rw,
                mode,
            })
        } else if is_rw {
            match self.mode {
                RwMode::None | RwMode::NonadjacentTaken => None,
                RwMode::Single => Some(PathState {
                    want: self.check_off(rel),
                    want_rw: 0,
                    mode: RwMode::None,
                }),
                RwMode::NonadjacentFree => Some(PathState {
                    want: self.check_off(rel),
                    want_rw: self.want_rw.saturating_sub(1),
                    mode: RwMode::NonadjacentTaken,
                }),
            }
        } else {
            None
        }
    }

    /// Every way to extend a path of `len` ops over an edge with `rels`, in
    /// Elle's order: rw relationships, then wanted ones, then the first legal
    /// one.
    fn step(&self, legal: Rels, rels: Rels, len: usize, out: &mut Vec<PathState>) {
        let rw_mask = if self.want_rw > 0
            || self.mode == RwMode::Single
            || self.mode == RwMode::NonadjacentFree
        {
            Rels::ANY_RW
        } else {
            Rels::NONE
        };
        let want = self.want_mask();
        let want_mask = want.difference(rw_mask);
        let legal_mask = legal.difference(rw_mask).difference(want_mask);
        for rel in rels.intersection(rw_mask).singles() {
            if let Some(p) = self.step_rel(legal, rel) {
                out.push(p);
            }
        }
        if self.want_rw > 0 && len == 1 {
            return;
        }
        for rel in rels.intersection(want_mask).singles() {
            if let Some(p) = self.step_rel(legal, rel) {
                out.push(p);
            }
        }
        if !want.is_empty() && len == 1 {
            return;
        }
        for rel in rels.intersection(legal_mask).singles() {
            if let Some(p) = self.step_rel(legal, rel) {
                out.push(p);
                return;
            }
        }
    }
}

impl CycleSpec {
    fn initial_state(&self) -> PathState {
        let mut want = [Rels::NONE; 4];
        for (slot, r) in want.iter_mut().zip(self.required.iter()) {
            *slot = *r;
        }
        PathState {
            want,
            want_rw: self.want_rw,
            mode: self.rw_mode,
        }
    }
}

/// One path in the breadth-first search, stored as a parent-linked arena
/// node.
#[derive(Clone, Copy)]
struct PathNode {
    vertex: u32,
    parent: u32,
    len: u32,
    state: PathState,
}

const ROOT: u32 = u32::MAX;

struct Arena {
    nodes: Vec<PathNode>,
}

impl Arena {
    fn ops(&self, mut id: u32) -> Vec<u32> {
        let mut ops = Vec::new();
        while id != ROOT {
            let n = self.nodes[id as usize];
            ops.push(n.vertex);
            id = n.parent;
        }
        ops.reverse();
        ops
    }

    /// Whether the path's last vertex occurs earlier in it (Elle's `isLoop`).
    fn is_loop(&self, id: u32) -> bool {
        let n = self.nodes[id as usize];
        let mut p = n.parent;
        while p != ROOT {
            let m = self.nodes[p as usize];
            if m.vertex == n.vertex {
                return true;
            }
            p = m.parent;
        }
        false
    }

    fn first(&self, mut id: u32) -> u32 {
        loop {
            let n = self.nodes[id as usize];
            if n.parent == ROOT {
                return n.vertex;
            }
            id = n.parent;
        }
    }
}

/// Searches `g` for a cycle matching `spec` exactly as Elle's `elle.bfs/search`
/// does, within `budget`.
pub fn elle_search(g: &SearchGraph, spec: &CycleSpec, budget: &mut Budget) -> SearchOutcome {
    let init = spec.initial_state();
    for &v in g.vertices() {
        match search_from(g, spec, init, v, budget) {
            SearchOutcome::NotFound => continue,
            other => return other,
        }
    }
    SearchOutcome::NotFound
}

fn search_from(
    g: &SearchGraph,
    spec: &CycleSpec,
    init: PathState,
    start: u32,
    budget: &mut Budget,
) -> SearchOutcome {
    let mut arena = Arena {
        nodes: vec![PathNode {
            vertex: start,
            parent: ROOT,
            len: 1,
            state: init,
        }],
    };
    let mut layer: Vec<u32> = vec![0];
    let mut scratch = Vec::new();
    while !layer.is_empty() {
        let mut open = Vec::with_capacity(layer.len());
        for &id in &layer {
            if arena.is_loop(id) {
                let node = arena.nodes[id as usize];
                if node.state.valid() {
                    if arena.first(id) == node.vertex {
                        return SearchOutcome::Found(arena.ops(id));
                    }
                    match trim_loop(g, spec, init, &arena.ops(id), budget) {
                        SearchOutcome::NotFound => {}
                        other => return other,
                    }
                }
            } else {
                open.push(id);
            }
        }
        let mut next = Vec::new();
        for id in open {
            let node = arena.nodes[id as usize];
            for &(w, rels) in &g.adj[node.vertex as usize] {
                if !g.present[w as usize] {
                    continue;
                }
                scratch.clear();
                node.state
                    .step(spec.legal, rels, node.len as usize, &mut scratch);
                if !budget.spend(1 + scratch.len() as u64) {
                    return SearchOutcome::Exhausted;
                }
                for &s in &scratch {
                    next.push(arena.nodes.len() as u32);
                    arena.nodes.push(PathNode {
                        vertex: w,
                        parent: id,
                        len: node.len + 1,
                        state: s,
                    });
                }
            }
        }
        layer = next;
    }
    SearchOutcome::NotFound
}

/// A loop with a tail: cut the tail off, restrict the graph to the loop's
/// vertices, and search again from each of them in path order.
fn trim_loop(
    g: &SearchGraph,
    spec: &CycleSpec,
    init: PathState,
    ops: &[u32],
    budget: &mut Budget,
) -> SearchOutcome {
    let pin = *ops.last().expect("non-empty path");
    let at = ops.iter().position(|&v| v == pin).expect("pin in path");
    let trimmed = &ops[at..];
    let sub = g.select(trimmed);
    for &v in trimmed {
        match search_from(&sub, spec, init, v, budget) {
            SearchOutcome::NotFound => continue,
            other => return other,
        }
    }
    SearchOutcome::NotFound
}

/// How many further start vertices [`constrained_search`] tries after its
/// first acceptable cycle, looking for a shorter one.
const EXTRA_STARTS: usize = 64;

/// ellery's own search: for each start vertex (in Elle's order), the
/// shortest closed walk through it whose edges satisfy `spec`, found by
/// breadth-first search over (vertex, automaton state) pairs. Simple cycles
/// (or the simple parts of a walk that revisits a vertex) are offered to
/// `accept`; the shortest accepted one among the first few start vertices
/// that yield one is returned. `NotFound` means no closed walk satisfies the
/// specification at all, so no cycle does.
pub fn constrained_search(
    g: &SearchGraph,
    spec: &CycleSpec,
    budget: &mut Budget,
    accept: &mut dyn FnMut(&[u32]) -> bool,
) -> SearchOutcome {
    use hashbrown::HashMap;
    let init = spec.initial_state();
    let mut any_walk = false;
    let mut best: Option<Vec<u32>> = None;
    let mut starts_after_best = 0;
    let mut scratch = Vec::new();
    for &start in g.vertices() {
        if best.is_some() {
            starts_after_best += 1;
            if starts_after_best > EXTRA_STARTS {
                break;
            }
        }
        // BFS over (vertex, state); parents for reconstruction.
        let mut seen: HashMap<(u32, PathState), (u32, PathState)> = HashMap::new();
        let mut queue = VecDeque::new();
        queue.push_back((start, init, 1usize));
        seen.insert((start, init), (u32::MAX, init));
        let mut found: Option<(u32, PathState)> = None;
        'bfs: while let Some((v, s, len)) = queue.pop_front() {
            if best.as_ref().is_some_and(|b| len + 1 >= b.len()) {
                break;
            }
            for &(w, rels) in &g.adj[v as usize] {
                if !g.present[w as usize] {
                    continue;
                }
                scratch.clear();
                s.step(spec.legal, rels, len, &mut scratch);
                if !budget.spend(1 + scratch.len() as u64) {
                    return match best {
                        Some(b) => SearchOutcome::Found(b),
                        None => SearchOutcome::Exhausted,
                    };
                }
                for &s2 in &scratch {
                    if w == start && s2.valid() {
                        found = Some((v, s));
                        break 'bfs;
                    }
                    if w != start && !seen.contains_key(&(w, s2)) {
                        seen.insert((w, s2), (v, s));
                        queue.push_back((w, s2, len + 1));
                    }
                }
            }
        }
        let Some((mut v, mut s)) = found else {
            continue;
        };
        any_walk = true;
        let mut walk = vec![start];
        while v != u32::MAX {
            walk.push(v);
            let (pv, ps) = seen[&(v, s)];
            v = pv;
            s = ps;
        }
        walk.pop();
        walk.push(start);
        walk.reverse();
        let candidates = if is_simple_cycle(&walk) {
            vec![walk]
        } else {
            simple_parts(&walk)
        };
        for c in candidates {
            if best.as_ref().is_none_or(|b| c.len() < b.len()) && accept(&c) {
                best = Some(c);
            }
        }
    }
    match best {
        Some(b) => SearchOutcome::Found(b),
        // Closed walks exist but none yielded an acceptable simple cycle: we
        // cannot say more in polynomial time.
        None if any_walk => SearchOutcome::Exhausted,
        None => SearchOutcome::NotFound,
    }
}

fn is_simple_cycle(walk: &[u32]) -> bool {
    let mut seen = hashbrown::HashSet::new();
    walk[..walk.len() - 1].iter().all(|v| seen.insert(*v))
}

/// Splits a closed walk into the simple cycles it is made of.
fn simple_parts(walk: &[u32]) -> Vec<Vec<u32>> {
    let mut out = Vec::new();
    let mut stack: Vec<u32> = Vec::new();
    for &v in walk {
        if let Some(pos) = stack.iter().position(|&u| u == v) {
            let mut c: Vec<u32> = stack[pos..].to_vec();
            c.push(v);
            out.push(c);
            stack.truncate(pos);
        }
        stack.push(v);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g1c_spec() -> CycleSpec {
        CycleSpec {
            legal: Rels::WW.union(Rels::WWP).union(Rels::WR).union(Rels::WRP),
            required: vec![Rels::WR.union(Rels::WRP)],
            want_rw: 0,
            rw_mode: RwMode::None,
            search_rels: Rels::WW.union(Rels::WWP).union(Rels::WR).union(Rels::WRP),
        }
    }

    #[test]
    fn finds_g1c_and_not_g0() {
        let g = DiGraph::from_edges(2, vec![(0, 1, Rels::WW), (1, 0, Rels::WR)]);
        let sg = SearchGraph::new(&g, vec![10, 20]);
        let mut b = Budget {
            deadline: None,
            steps: 1000,
        };
        match elle_search(&sg, &g1c_spec(), &mut b) {
            SearchOutcome::Found(c) => {
                assert_eq!(c.len(), 3);
                assert_eq!(c[0], c[2]);
            }
            other => panic!("{other:?}"),
        }
        let g0 = CycleSpec {
            legal: Rels::WW.union(Rels::WWP),
            required: vec![],
            want_rw: 0,
            rw_mode: RwMode::None,
            search_rels: Rels::WW.union(Rels::WWP),
        };
        let g = g.project(g0.search_rels);
        let sg = SearchGraph::new(&g, vec![10, 20]);
        assert_eq!(elle_search(&sg, &g0, &mut b), SearchOutcome::NotFound);
    }

    #[test]
    fn single_rw_needs_exactly_one() {
        let spec = CycleSpec {
            legal: Rels::WW.union(Rels::WWP).union(Rels::WR).union(Rels::WRP),
            required: vec![],
            want_rw: 1,
            rw_mode: RwMode::Single,
            search_rels: Rels(0x1f).union(Rels::RW),
        };
        // 0 -rw-> 1 -rw-> 0: two rw edges, not G-single.
        let g = DiGraph::from_edges(2, vec![(0, 1, Rels::RW), (1, 0, Rels::RW)]);
        let sg = SearchGraph::new(&g, vec![1, 2]);
        let mut b = Budget {
            deadline: None,
            steps: 1000,
        };
        assert_eq!(elle_search(&sg, &spec, &mut b), SearchOutcome::NotFound);
        let mut accept = |_: &[u32]| true;
        assert_eq!(
            constrained_search(&sg, &spec, &mut b, &mut accept),
            SearchOutcome::NotFound
        );
        // 0 -rw-> 1 -ww-> 0: G-single.
        let g = DiGraph::from_edges(2, vec![(0, 1, Rels::RW), (1, 0, Rels::WW)]);
        let sg = SearchGraph::new(&g, vec![1, 2]);
        assert!(matches!(
            elle_search(&sg, &spec, &mut b),
            SearchOutcome::Found(_)
        ));
        assert!(matches!(
            constrained_search(&sg, &spec, &mut b, &mut accept),
            SearchOutcome::Found(_)
        ));
    }
}
