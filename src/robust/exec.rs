//! Concrete executions: instances in arbitration order (slot order), a
//! visibility relation, the replay that gives each instance its view and
//! footprint, the model axioms over them, and the dependency graph with its
//! cycles classified in Elle's vocabulary.

use super::interp::{run_concrete, Analysis, Desc, Footprint, AV};
use super::syntax::{Axiom, Model, Program, Scope};

/// A concrete execution: instances in ar order, with visibility.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Execution {
    /// Descriptor index per slot.
    pub descs: Vec<usize>,
    /// `vis[j]`: bit i set when instance i (< j) is visible to j.
    pub vis: Vec<u64>,
}

/// One replayed instance.
#[derive(Clone, Debug)]
pub struct Replayed {
    /// Its footprint (all entries sure).
    pub fp: Footprint,
    /// Per key read: the instance read from (None: the initial state).
    pub sources: Vec<(usize, Option<usize>)>,
    /// An aborted instance (`fp.aborts`; its footprint and `sources` are
    /// empty: it is no part of the execution): the sources of the reads
    /// it made before aborting, which decided that it aborts.
    pub abort_sources: Vec<(usize, Option<usize>)>,
}

/// Replays instance `j` of a prefix: its view is the initial state
/// overwritten by the visible instances' writes in ar order.
pub fn replay_one(
    prog: &Program,
    an: &Analysis,
    desc: &Desc,
    vis: u64,
    earlier: &[Replayed],
) -> Replayed {
    let mut view = an.uni.init.clone();
    let mut src: Vec<Option<usize>> = vec![None; view.len()];
    for (i, r) in earlier.iter().enumerate() {
        if vis >> i & 1 == 1 {
            for (&k, &(v, _)) in &r.fp.writes {
                view[k] = match v {
                    AV::Known(x) => x,
                    AV::Unknown => None,
                };
                src[k] = Some(i);
            }
        }
    }
    let mut fp = run_concrete(prog, &an.uni, desc, &view);
    let sources = fp.reads.keys().map(|&k| (k, src[k])).collect();
    if fp.aborts {
        fp.reads.clear();
        fp.read_vals.clear();
        return Replayed {
            fp,
            sources: Vec::new(),
            abort_sources: sources,
        };
    }
    Replayed {
        fp,
        sources,
        abort_sources: Vec::new(),
    }
}

/// Replays a whole execution.
pub fn replay(prog: &Program, an: &Analysis, ex: &Execution) -> Vec<Replayed> {
    let mut out: Vec<Replayed> = Vec::new();
    for (j, &d) in ex.descs.iter().enumerate() {
        let r = replay_one(prog, an, &an.descs[d], ex.vis[j], &out);
        out.push(r);
    }
    out
}

/// Whether an axiom with this scope constrains a pair (a, b) of types.
pub fn pair_scoped(scope: Scope, a: usize, b: usize) -> bool {
    match scope {
        Scope::Global => true,
        Scope::Type(t) => a == t || b == t,
        Scope::Pair(x, y) => (a == x && b == y) || (a == y && b == x),
    }
}

/// Whether an axiom with this scope constrains an observer of type `c`.
pub fn observer_scoped(scope: Scope, c: usize) -> bool {
    match scope {
        Scope::Global => true,
        Scope::Type(t) => c == t,
        Scope::Pair(x, y) => c == x || c == y,
    }
}

/// Whether the axioms hold at slot `j` (all constraints whose ar-last
/// instance is `j`), given its replay.
pub fn axioms_hold_at(
    axioms: &[Axiom],
    types: &[usize],
    vis: &[u64],
    reps: &[Replayed],
    j: usize,
) -> bool {
    let v = |a: usize, b: usize| vis[b] >> a & 1 == 1;
    for ax in axioms {
        let (ser, psi, pc, cc) = match ax.model {
            Model::Ec => (false, false, false, false),
            Model::Cc => (false, false, false, true),
            Model::Pc => (false, false, true, false),
            Model::Psi => (false, true, false, true),
            Model::Si => (false, true, true, false),
            Model::Ser => (true, false, false, false),
        };
        for a in 0..j {
            if ser && pair_scoped(ax.scope, types[a], types[j]) && !v(a, j) {
                return false;
            }
            if psi && pair_scoped(ax.scope, types[a], types[j]) && !v(a, j) {
                let ww = reps[a]
                    .fp
                    .writes
                    .keys()
                    .any(|k| reps[j].fp.writes.contains_key(k));
                if ww {
                    return false;
                }
            }
            if (pc || cc) && observer_scoped(ax.scope, types[j]) && !v(a, j) {
                for b in a + 1..j {
                    if v(b, j) && (pc || v(a, b)) {
                        return false;
                    }
                }
            }
        }
    }
    true
}

/// Dependency kinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Dep {
    /// Write-write.
    Ww,
    /// Write-read.
    Wr,
    /// Read-write (anti-dependency).
    Rw,
}

impl Dep {
    /// Elle's name.
    pub fn name(self) -> &'static str {
        match self {
            Dep::Ww => "ww",
            Dep::Wr => "wr",
            Dep::Rw => "rw",
        }
    }
}

/// A dependency edge, on one key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Edge {
    /// From slot.
    pub from: usize,
    /// To slot.
    pub to: usize,
    /// Kind.
    pub dep: Dep,
    /// Key id.
    pub key: usize,
}

/// The dependency graph as Elle builds it from a list-append history: wr
/// from the version read, ww between consecutive versions, rw from a reader
/// to the version after the one it read (none when that is its own). Its
/// reachability equals that of the paper's Def. 3 relations.
pub fn dependencies(reps: &[Replayed]) -> Vec<Edge> {
    let mut keys: Vec<usize> = reps
        .iter()
        .flat_map(|r| r.fp.writes.keys().copied())
        .collect();
    keys.sort_unstable();
    keys.dedup();
    let mut edges = Vec::new();
    for &k in &keys {
        let writers: Vec<usize> = (0..reps.len())
            .filter(|&i| reps[i].fp.writes.contains_key(&k))
            .collect();
        for w in writers.windows(2) {
            edges.push(Edge {
                from: w[0],
                to: w[1],
                dep: Dep::Ww,
                key: k,
            });
        }
        for (j, r) in reps.iter().enumerate() {
            let Some(&(_, src)) = r.sources.iter().find(|(kk, _)| *kk == k) else {
                continue;
            };
            if let Some(s) = src {
                edges.push(Edge {
                    from: s,
                    to: j,
                    dep: Dep::Wr,
                    key: k,
                });
            }
            let next = writers.iter().copied().find(|&w| src.is_none_or(|s| w > s));
            if let Some(n) = next.filter(|&n| n != j) {
                edges.push(Edge {
                    from: j,
                    to: n,
                    dep: Dep::Rw,
                    key: k,
                });
            }
        }
    }
    edges.sort_unstable();
    edges
}

/// The paper's dependency relation D (Def. 3, irreflexive part) as a
/// matrix over slots: ww between *every* two writers of a key in ar order,
/// wr from the version read, rw from a reader to *every* writer ar-after
/// the version it read (every writer when it read the initial state: the
/// initial state as an ar-first writer). Denser than [`dependencies`]
/// (same reachability): chords, which the shortest-path method is about,
/// are counted on this one.
pub fn dense_dependencies(reps: &[Replayed]) -> Vec<Vec<bool>> {
    let n = reps.len();
    let mut d = vec![vec![false; n]; n];
    for (j, r) in reps.iter().enumerate() {
        for &k in r.fp.writes.keys() {
            for (i, w) in reps.iter().enumerate().take(j) {
                if w.fp.writes.contains_key(&k) {
                    d[i][j] = true;
                }
            }
        }
        for &(k, src) in &r.sources {
            if let Some(s) = src {
                d[s][j] = true;
            }
            for (w, rep) in reps.iter().enumerate() {
                if w != j && src.is_none_or(|s| w > s) && rep.fp.writes.contains_key(&k) {
                    d[j][w] = true;
                }
            }
        }
    }
    d
}

/// Elle's cycle anomaly types, weakest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum CycleType {
    /// Only ww.
    G0,
    /// ww and wr, some wr.
    G1c,
    /// Exactly one rw.
    GSingle,
    /// Two or more rw, no two adjacent.
    GNonadjacent,
    /// Two or more rw, some adjacent.
    G2,
}

impl CycleType {
    /// Elle's keyword for an item-level (key-value) cycle.
    pub fn elle_name(self) -> &'static str {
        match self {
            CycleType::G0 => "G0",
            CycleType::G1c => "G1c",
            CycleType::GSingle => "G-single-item",
            CycleType::GNonadjacent => "G-nonadjacent-item",
            CycleType::G2 => "G2-item",
        }
    }
}

/// Classifies a cycle (edges in order).
pub fn classify(cycle: &[Edge]) -> CycleType {
    let rw: Vec<bool> = cycle.iter().map(|e| e.dep == Dep::Rw).collect();
    let n_rw = rw.iter().filter(|&&r| r).count();
    match n_rw {
        0 if cycle.iter().all(|e| e.dep == Dep::Ww) => CycleType::G0,
        0 => CycleType::G1c,
        1 => CycleType::GSingle,
        _ if (0..rw.len()).any(|i| rw[i] && rw[(i + 1) % rw.len()]) => CycleType::G2,
        _ => CycleType::GNonadjacent,
    }
}

/// The paper's name for a cycle's shape, when it has one.
pub fn description(cycle: &[Edge]) -> Option<&'static str> {
    let deps: Vec<Dep> = cycle.iter().map(|e| e.dep).collect();
    match (cycle.len(), classify(cycle)) {
        (2, CycleType::GSingle) if deps.contains(&Dep::Ww) && cycle[0].key == cycle[1].key => {
            Some("lost update")
        }
        (2, CycleType::G2) if cycle[0].key != cycle[1].key => Some("write skew"),
        (4, CycleType::GNonadjacent) if !deps.contains(&Dep::Ww) => Some("long fork"),
        _ => None,
    }
}

/// The weakest-typed cycle of the graph (then the shortest, then the first
/// in slot order), if any. Executions have at most a handful of instances
/// (the bound k), so every simple cycle is enumerated: the typed search in
/// `crate::graph` works on history graphs and their SCCs, not on this.
pub fn best_cycle(n: usize, edges: &[Edge]) -> Option<Vec<Edge>> {
    // Per ordered pair, the preferred edge: ww, then wr, then rw (fewest rw
    // edges gives the weakest type).
    let mut best: Vec<Vec<Option<Edge>>> = vec![vec![None; n]; n];
    for e in edges {
        let slot = &mut best[e.from][e.to];
        if slot.is_none_or(|b| (e.dep, e.key) < (b.dep, b.key)) {
            *slot = Some(*e);
        }
    }
    let mut found: Option<(CycleType, usize, Vec<Edge>)> = None;
    let mut path: Vec<Edge> = Vec::new();
    let mut on = vec![false; n];
    for start in 0..n {
        on[start] = true;
        dfs(start, start, &best, &mut on, &mut path, &mut found);
        on[start] = false;
    }
    found.map(|(_, _, c)| c)
}

fn dfs(
    start: usize,
    at: usize,
    best: &[Vec<Option<Edge>>],
    on: &mut [bool],
    path: &mut Vec<Edge>,
    found: &mut Option<(CycleType, usize, Vec<Edge>)>,
) {
    for next in start..best.len() {
        let Some(e) = best[at][next] else { continue };
        path.push(e);
        if next == start {
            let t = classify(path);
            if found
                .as_ref()
                .is_none_or(|(ft, fl, _)| (t, path.len()) < (*ft, *fl))
            {
                *found = Some((t, path.len(), path.clone()));
            }
        } else if !on[next] {
            on[next] = true;
            dfs(start, next, best, on, path, found);
            on[next] = false;
        }
        path.pop();
    }
}
