//! From the pruned polygraph to the solver's input: the theory's edges
//! (reasons reduced by the literals pruning fixed), an initial vertex order,
//! variable polarities, and the 2-width clauses (VeriStrong Algorithm 2).

use batsat::Lit;

use super::polygraph::{lit, value, Polygraph, PROCESS_KIND};
use super::reach::Reach;
use super::theory::TheoryEdge;
use super::Polarity;
use crate::graph::{scc::nontrivial_sccs, DiGraph, Rels};

/// The solver's input apart from the polygraph's own clauses.
pub(super) struct Encoding {
    /// Theory edges; `origin[i]` is the polygraph edge of `edges[i]`.
    pub(super) edges: Vec<TheoryEdge>,
    pub(super) origin: Vec<usize>,
    /// A topological order of the unconditional edges (identity if they
    /// are cyclic: the theory then reports the cycle).
    pub(super) order: Vec<u32>,
    /// Whether `order` is topological (the unconditional edges are acyclic).
    pub(super) acyclic: bool,
    /// Per solver variable: the preferred first value (`None` = solver
    /// default).
    pub(super) polarity: Vec<Option<bool>>,
    /// The polygraph's clauses that pruning left open, without their false
    /// literals.
    pub(super) clauses: Vec<Vec<Lit>>,
    /// Per polygraph variable: its solver variable, `u32::MAX` if pruning
    /// fixed it. Only open variables reach the solver (on the VeriStrong
    /// 10k histories pruning fixes 97%), so its arrays and the theory's
    /// stay small enough for the cache.
    var_map: Vec<u32>,
}

impl Encoding {
    /// Number of solver variables.
    pub(super) fn vars(&self) -> usize {
        self.polarity.len()
    }

    /// A polygraph literal as the solver's literal, or its fixed value.
    pub(super) fn solver_lit(&self, assign: &[Option<bool>], l: Lit) -> Result<Lit, bool> {
        match value(assign, l) {
            Some(b) => Err(b),
            None => Ok(lit(self.var_map[l.var().idx() as usize] as usize, l.sign())),
        }
    }
}

/// Reduces each edge's reason by the fixed literals (dropping edges with a
/// false one) and derives the initial order and the polarities. With
/// `known` (the reachability of the unconditional edges, from pruning;
/// layered as the theory's graph with `si`), conditional edges whose every
/// theory edge already follows an unconditional path are dropped: they can
/// never close a cycle the path would not (on the VeriStrong HD history
/// they are 86% of the conditional edges, and the theory's cost is per
/// edge). `None` once `expired()` (read every [`CLOCK_EVERY`] edges: on
/// big histories without session order the edges are millions).
pub(super) fn encode(
    g: &Polygraph,
    assign: &[Option<bool>],
    polarity: Polarity,
    known: Option<&Reach>,
    si: bool,
    expired: &dyn Fn() -> bool,
) -> Option<Encoding> {
    let n = g.n as u32;
    let implied = |from: u32, to: u32, rw: bool| {
        known.is_some_and(|r| match (si, rw) {
            (false, _) => r.reaches(from, to),
            (true, true) => r.reaches(n + from, to),
            (true, false) => r.reaches(from, to) && r.reaches(from, n + to),
        })
    };
    let mut edges = Vec::new();
    let mut origin = Vec::new();
    for (i, e) in g.edges.iter().enumerate() {
        if i % CLOCK_EVERY == 0 && expired() {
            return None;
        }
        if e.reason.iter().any(|&l| value(assign, l) == Some(false)) {
            continue;
        }
        let reason = e.reason.filter(|l| value(assign, l).is_none());
        let rw = g.is_rw(i);
        if !reason.is_empty() && implied(e.from, e.to, rw) {
            continue;
        }
        edges.push(TheoryEdge {
            from: e.from,
            to: e.to,
            rw,
            reason,
        });
        origin.push(i);
    }
    let known = known_order(g.n, &edges, &g.order_hints, &g.effect_key).or_else(|| {
        // The hints close cycles with the unconditional edges: keep those
        // that do not (a cycle left would lie in one component and consist
        // of unconditional edges).
        let hints = hints_outside_cycles(g.n, &edges, &g.order_hints);
        known_order(g.n, &edges, &hints, &g.effect_key)
    });
    let acyclic = known.is_some();
    let order = known.unwrap_or_else(|| (0..g.n as u32).collect());
    let pos = crate::graph::positions(&order);
    let mut pol: Vec<Option<bool>> = vec![None; g.vars];
    if polarity == Polarity::KnownOrder {
        // A read prefers the latest candidate writer before it, the others
        // not: as if the known order were the serial order.
        for (reader, choice) in &g.wr_choices {
            let latest = choice
                .iter()
                .filter(|&&(t, l)| {
                    value(assign, l).is_none() && pos[t as usize] < pos[*reader as usize]
                })
                .max_by_key(|&&(t, _)| pos[t as usize]);
            for &(t, l) in choice {
                pol[l.var().idx() as usize] = Some(latest.is_some_and(|&(w, _)| w == t));
            }
        }
        // Otherwise the first edge mentioning a variable decides: make it
        // point forward in the known order (VeriStrong's Algorithm 3, fixed
        // once).
        for e in &edges {
            for &l in e.reason.iter() {
                let v = l.var().idx() as usize;
                if pol[v].is_none() {
                    let forward = pos[e.from as usize] < pos[e.to as usize];
                    pol[v] = Some(forward == l.sign());
                }
            }
        }
    }
    let mut var_map = vec![u32::MAX; g.vars];
    let mut polarity = Vec::new();
    for (v, p) in pol.into_iter().enumerate() {
        if assign[v].is_none() {
            var_map[v] = polarity.len() as u32;
            polarity.push(p);
        }
    }
    let mut enc = Encoding {
        edges: Vec::new(),
        origin,
        order,
        acyclic,
        polarity,
        clauses: Vec::new(),
        var_map,
    };
    let to_solver = |l: Lit| enc.solver_lit(assign, l).expect("open literal");
    for e in &mut edges {
        e.reason = e.reason.map(to_solver);
    }
    let clauses = g
        .clauses
        .iter()
        .filter(|c| !c.iter().any(|&l| value(assign, l) == Some(true)))
        .map(|c| {
            c.iter()
                .filter(|&&l| value(assign, l).is_none())
                .map(|&l| to_solver(l))
                .collect()
        })
        .collect();
    enc.edges = edges;
    enc.clauses = clauses;
    Some(enc)
}

/// How many edges [`encode`] handles between two readings of the clock.
const CLOCK_EVERY: usize = 1 << 16;

/// A topological order of the unconditional edges, `None` if they are
/// cyclic. Among ready vertices the smallest id goes first, so the order
/// stays close to the history's (completion) order, a good guess at the
/// serial order.
/// A topological order of the unconditional edges and `hints`.
fn known_order(
    n: usize,
    edges: &[TheoryEdge],
    hints: &[(u32, u32)],
    key: &[u64],
) -> Option<Vec<u32>> {
    let mut adj = known_adjacency(n, edges);
    for &(a, b) in hints {
        adj[a as usize].push(b);
    }
    crate::graph::topological_order_by(
        n,
        |v| adj[v as usize].iter().copied(),
        |v| key.get(v as usize).copied().unwrap_or(0),
    )
}

/// The `hints` that join different strongly connected components of the
/// unconditional edges and the hints.
fn hints_outside_cycles(n: usize, edges: &[TheoryEdge], hints: &[(u32, u32)]) -> Vec<(u32, u32)> {
    if hints.is_empty() {
        return Vec::new();
    }
    let all = edges
        .iter()
        .filter(|e| e.reason.is_empty())
        .map(|e| (e.from, e.to))
        .chain(hints.iter().copied())
        .map(|(a, b)| (a, b, Rels::WW))
        .collect();
    let mut comp = vec![u32::MAX; n];
    for (c, members) in nontrivial_sccs(&DiGraph::from_edges(n, all))
        .iter()
        .enumerate()
    {
        for &v in members {
            comp[v as usize] = c as u32;
        }
    }
    hints
        .iter()
        .copied()
        .filter(|&(a, b)| comp[a as usize] == u32::MAX || comp[a as usize] != comp[b as usize])
        .collect()
}

fn known_adjacency(n: usize, edges: &[TheoryEdge]) -> Vec<Vec<u32>> {
    let mut adj = vec![Vec::new(); n];
    for e in edges.iter().filter(|e| e.reason.is_empty()) {
        adj[e.from as usize].push(e.to);
    }
    adj
}

/// Most reachability memory the 2-width clauses may use, in bytes.
const TWO_WIDTH_MAX_BYTES: usize = 1 << 30;

/// Most memory the transposed bit matrix of the 2-width clauses may take,
/// in bytes: it doubles the matrix (itself up to [`TWO_WIDTH_MAX_BYTES`],
/// or pruning's), so a bigger one is left out and the pairs are tested on
/// the matrix itself (the same clauses, slower).
const TRANSPOSE_MAX_BYTES: usize = 256 << 20;

/// The 2-width clauses: `¬a ∨ ¬b` whenever the conditional edges behind
/// `a` and `b` close a cycle with unconditional paths. Two cases, with the
/// digest's typo fixes (§3.4): one edge whose reason has two literals and
/// whose target reaches its source (covers the rw case, T' ⇝ S with
/// T' ≠ S since derived edges are never self-loops), and two single-literal
/// edges `u1 → v1`, `u2 → v2` with `v1 ⇝ u2` and `v2 ⇝ u1`. With `si` the
/// edges and paths are those of the theory's layered graph (so the cycles
/// are induced ones; the VeriStrong artifact runs the same check on the
/// known induced graph). At most `cap` clauses; none if reachability would
/// not fit in memory. `known` is the unconditional edges' reachability
/// (layered with `si`) when pruning computed it. Stops early (fewer
/// clauses, still sound) once `expired()`.
pub(super) fn two_width_clauses(
    g: &Polygraph,
    enc: &Encoding,
    known: Option<&Reach>,
    si: bool,
    cap: usize,
    expired: &dyn Fn() -> bool,
) -> Vec<Vec<Lit>> {
    // Long (about 180 lines): one pass whose index tables (windows, sources,
    // the transposed matrix) are built for the search right below them and
    // share its clock; split, they would travel as a dozen arguments.
    if !enc.acyclic {
        return Vec::new();
    }
    let n = g.n as u32;
    // The graph's edges `(from, to, encoding edge)` and its order.
    let mut graph: Vec<(u32, u32, usize)> = Vec::new();
    for (i, e) in enc.edges.iter().enumerate() {
        match (si, e.rw) {
            (false, _) => graph.push((e.from, e.to, i)),
            (true, true) => graph.push((n + e.from, e.to, i)),
            (true, false) => {
                graph.push((e.from, e.to, i));
                graph.push((e.from, n + e.to, i));
            }
        }
    }
    let order: Vec<u32> = if si {
        enc.order.iter().flat_map(|&v| [v, n + v]).collect()
    } else {
        enc.order.clone()
    };
    let size = order.len();
    let computed;
    let reach = match known {
        Some(r) => r,
        None => {
            let mut adj: Vec<Vec<(u32, usize)>> = vec![Vec::new(); size];
            for &(from, to, i) in &graph {
                if enc.edges[i].reason.is_empty() {
                    adj[from as usize].push((to, i));
                }
            }
            let session = |i: usize| g.edges[enc.origin[i]].kind == PROCESS_KIND;
            match Reach::new(&adj, &order, TWO_WIDTH_MAX_BYTES, session, n as usize) {
                Some(r) => {
                    computed = r;
                    &computed
                }
                None => return Vec::new(),
            }
        }
    };
    let mut out: Vec<Vec<Lit>> = Vec::new();
    // Single-literal edges: (from, to, literal).
    let mut singles: Vec<(u32, u32, Lit)> = Vec::new();
    for &(from, to, i) in &graph {
        let reason = &enc.edges[i].reason;
        match reason.len() {
            1 => singles.push((from, to, reason[0])),
            2 if reason[0].var() != reason[1].var() && reach.reaches(to, from) => {
                out.push(vec![!reason[0], !reason[1]]);
            }
            _ => {}
        }
    }
    let pos = crate::graph::positions(&order);
    // Unconditional paths run forward in the known order, so in a pair one
    // edge `u1 → v1` runs backward; take it first. The other's source lies
    // after `v1`; if it also lies after `u1`, the other edge runs backward
    // too and the pair is found from its side (`u1` is then in its window).
    // So the second edge's source `w` is positioned in `[pos v1, pos u1]`
    // and reached from `v1`: per vertex of the window, one reachability
    // test, then its single-literal edges (`by_source`).
    let mut by_source: Vec<(u32, usize)> = singles
        .iter()
        .enumerate()
        .map(|(j, &(from, _, _))| (from, j))
        .collect();
    by_source.sort_unstable();
    let mut start = vec![0u32; size + 1];
    for &(from, _) in &by_source {
        start[from as usize + 1] += 1;
    }
    for i in 0..size {
        start[i + 1] += start[i];
    }
    // Vertices with a single-literal edge out, as a bit row: with the
    // bit-matrix layout, a window's sources reached from `v1` are the set
    // bits of `v1`'s row and this mask (no session order: the windows span
    // most of the order, and few of their vertices are reached).
    let mut sources = vec![0u64; size.div_ceil(64)];
    for &(from, _) in &by_source {
        sources[from as usize / 64] |= 1 << (from % 64);
    }
    // With the bit matrix, its transpose: row `u` holds the vertices that
    // reach `u`, so that testing `v2 ⇝ u1` for every pair of a backward
    // edge reads one short row (in cache) instead of a row per pair. The
    // size is checked before allocating ([`TRANSPOSE_MAX_BYTES`]).
    let ancestors: Option<Vec<u64>> = (reach.row(0))
        .filter(|r| size * r.len() * 8 <= TRANSPOSE_MAX_BYTES)
        .map(|r| {
            let words = r.len();
            let mut t = vec![0u64; size * words];
            for a in 0..size {
                let row = reach.row(a as u32).expect("bit matrix");
                for (i, &word) in row.iter().enumerate() {
                    let mut bits = word;
                    while bits != 0 {
                        let b = i * 64 + bits.trailing_zeros() as usize;
                        bits &= bits - 1;
                        t[b * words + a / 64] |= 1 << (a % 64);
                    }
                }
            }
            t
        });
    let reached_by = |v2: u32, u1: u32| match &ancestors {
        Some(t) => {
            let words = t.len() / size;
            t[u1 as usize * words + v2 as usize / 64] >> (v2 % 64) & 1 == 1
        }
        None => reach.reaches(v2, u1),
    };
    // Vertices and pairs looked at, for reading the clock.
    let mut work = 0u64;
    let mut window: Vec<u32> = Vec::new();
    'outer: for &(u1, v1, l1) in &singles {
        let (lo, hi) = (pos[v1 as usize], pos[u1 as usize]);
        if lo > hi {
            continue;
        }
        window.clear();
        match reach.row(v1) {
            Some(row) => {
                for (i, (&r, &m)) in row.iter().zip(&sources).enumerate() {
                    let mut bits = r & m;
                    while bits != 0 {
                        let w = (i * 64 + bits.trailing_zeros() as usize) as u32;
                        bits &= bits - 1;
                        if (lo..=hi).contains(&pos[w as usize]) {
                            window.push(w);
                        }
                    }
                }
                // In window order, as the path layout finds them: under
                // the cap, the same clauses as a scan by position.
                window.sort_unstable_by_key(|&w| pos[w as usize]);
            }
            None => {
                for &w in &order[lo as usize..=hi as usize] {
                    work += 1;
                    if work.is_multiple_of(1 << 16) && expired() {
                        break 'outer;
                    }
                    if start[w as usize] < start[w as usize + 1] && reach.reaches(v1, w) {
                        window.push(w);
                    }
                }
            }
        }
        for &w in &window {
            let range = start[w as usize] as usize..start[w as usize + 1] as usize;
            for &(_, j) in &by_source[range] {
                work += 1;
                if work.is_multiple_of(1 << 16) && expired() {
                    break 'outer;
                }
                let (u2, v2, l2) = singles[j];
                if l1.var() != l2.var() && reached_by(v2, u1) {
                    debug_assert!(reach.reaches(v1, u2));
                    out.push(vec![!l1, !l2]);
                    if out.len() >= cap {
                        break 'outer;
                    }
                }
            }
        }
    }
    for c in &mut out {
        c.sort_unstable();
    }
    out.sort_unstable();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edge(from: u32, to: u32, reason: Vec<Lit>) -> TheoryEdge {
        let reason = super::super::polygraph::Reason::from(&reason[..]);
        TheoryEdge {
            from,
            to,
            rw: false,
            reason,
        }
    }

    /// Session hints that close a cycle with unconditional edges are left
    /// out of the initial order; the others shape it, and effect keys order
    /// what is left free; conditional edges are no obstacle.
    #[test]
    fn order_hints_bend_the_initial_order_unless_they_close_a_cycle() {
        let edges = vec![
            edge(0, 1, vec![]),
            edge(0, 2, vec![]),
            edge(0, 3, vec![]),
            edge(2, 1, vec![]),
            edge(3, 2, vec![lit(0, true)]),
        ];
        assert_eq!(known_order(4, &edges, &[], &[]), Some(vec![0, 2, 1, 3]));
        assert_eq!(
            known_order(4, &edges, &[(3, 2)], &[]),
            Some(vec![0, 3, 2, 1])
        );
        // Effect keys break ties among ready transactions.
        let keys = [0, 5, 9, 1];
        assert_eq!(known_order(4, &edges, &[], &keys), Some(vec![0, 3, 2, 1]));
        let hints = [(1, 2), (3, 2)];
        assert_eq!(known_order(4, &edges, &hints, &[]), None);
        assert_eq!(hints_outside_cycles(4, &edges, &hints), vec![(3, 2)]);
    }

    /// The deadline is read inside a window, not only between edges: 80
    /// blind writers of one key give 6,320 single-literal ww edges (fewer
    /// than the clock-reading interval of 65,536 vertices and pairs looked
    /// at) and over 2 × 65,536 window vertices and pairs, so the clock is
    /// read twice or more in a full run and an expired deadline stops the
    /// search at its first reading. Building the polygraph reads the
    /// deadline too.
    #[test]
    fn two_width_reads_the_deadline_inside_windows() {
        use super::super::SatOptions;
        let h = super::super::tests::blind_writers(80);
        let opts = SatOptions::default();
        let build = super::super::build::build;
        let g = build(&h, &Default::default(), &opts, &|| false).expect("no violation");
        // Past the deadline, building stops at its first reading of the
        // clock (before the first key's version order): no polygraph.
        let built = build(&h, &Default::default(), &opts, &|| true).expect("no violation");
        assert!(built.is_none());
        let g = g.expect("built");
        let assign = vec![None; g.vars];
        let enc =
            encode(&g, &assign, Polarity::KnownOrder, None, false, &|| false).expect("in time");
        let calls = std::cell::Cell::new(0);
        let calls = &calls;
        let count = |stop: bool| {
            move || {
                calls.set(calls.get() + 1);
                stop
            }
        };
        let full = two_width_clauses(&g, &enc, None, false, usize::MAX, &count(false));
        assert!(calls.get() >= 2, "{}", calls.get());
        assert!(full.is_empty(), "no unconditional paths, no clauses");
        calls.set(0);
        two_width_clauses(&g, &enc, None, false, usize::MAX, &count(true));
        assert_eq!(calls.get(), 1);
    }
    /// The 2-width clauses are exactly the pairs of single-literal edges
    /// (different variables) that close a cycle with unconditional paths,
    /// plus the two-literal edges whose target reaches their source: a
    /// brute force over every pair, with reachability by depth-first
    /// search, on random histories with repeated values and sessions.
    #[test]
    fn two_width_clauses_match_a_brute_force() {
        use super::super::{RegTxn, RwMop, SatOptions};
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |m: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % m
        };
        let mut checked = 0;
        for round in 0..200 {
            let h: Vec<RegTxn> = (0..4 + next(8))
                .map(|i| RegTxn {
                    process: next(3) as i64,
                    ops: (0..1 + next(3))
                        .map(|_| match next(2) {
                            0 => RwMop::Read(next(2), Some(next(3)).filter(|&v| v > 0)),
                            _ => RwMop::Write(next(2), Some(1 + next(2))),
                        })
                        .collect(),
                    committed: true,
                    index: 2 * i + 1,
                    invoked: 2 * i,
                    realtime_preds: Vec::new(),
                })
                .collect();
            let opts = SatOptions {
                skip_internal: true,
                skip_unexplained: true,
                ..SatOptions::default()
            };
            let build = super::super::build::build;
            let Ok(Some(g)) = build(&h, &Default::default(), &opts, &|| false) else {
                continue;
            };
            let assign = vec![None; g.vars];
            let enc =
                encode(&g, &assign, Polarity::KnownOrder, None, false, &|| false).expect("in time");
            if !enc.acyclic {
                continue;
            }
            let got = two_width_clauses(&g, &enc, None, false, usize::MAX, &|| false);
            let n = g.n;
            let mut adj = vec![Vec::new(); n];
            for e in enc.edges.iter().filter(|e| e.reason.is_empty()) {
                adj[e.from as usize].push(e.to);
            }
            let reaches = |a: u32, b: u32| {
                let mut seen = vec![false; n];
                let mut stack = vec![a];
                while let Some(v) = stack.pop() {
                    if v == b {
                        return true;
                    }
                    if !std::mem::replace(&mut seen[v as usize], true) {
                        stack.extend(&adj[v as usize]);
                    }
                }
                false
            };
            let mut want: Vec<Vec<Lit>> = Vec::new();
            for e1 in &enc.edges {
                match e1.reason.len() {
                    1 => {
                        for e2 in enc.edges.iter().filter(|e| e.reason.len() == 1) {
                            let (l1, l2) = (e1.reason[0], e2.reason[0]);
                            if l1.var() != l2.var()
                                && reaches(e1.to, e2.from)
                                && reaches(e2.to, e1.from)
                            {
                                let mut c = vec![!l1, !l2];
                                c.sort_unstable();
                                want.push(c);
                            }
                        }
                    }
                    2 if e1.reason[0].var() != e1.reason[1].var() && reaches(e1.to, e1.from) => {
                        let mut c = vec![!e1.reason[0], !e1.reason[1]];
                        c.sort_unstable();
                        want.push(c);
                    }
                    _ => {}
                }
            }
            want.sort_unstable();
            want.dedup();
            assert_eq!(got, want, "round {round}");
            checked += usize::from(!want.is_empty());
        }
        assert!(checked >= 20, "only {checked} histories with clauses");
    }
}
