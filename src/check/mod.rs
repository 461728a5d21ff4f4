//! Cycle anomalies: for each strongly connected component of the dependency
//! graph, Elle's cycle-exists checks, then a search for each cycle anomaly
//! type from most to least severe, bounded by the cycle-search timeout.

pub mod dot;
pub mod jepsen;
pub mod linearizable;
pub mod mutex;
pub mod outcome;
pub mod result;
pub mod sat;
pub mod witness;

use crate::consistency::{self as cm, Subgraph};
use crate::edn::order::{bifurcan_order, bifurcan_spread};
use crate::edn::Value;
use crate::graph::scc::{
    nontrivial_sccs, nontrivial_sccs_among, nontrivial_sccs_unmerged, peeled_with,
};
use crate::graph::search::{
    constrained_search, elle_search, Budget, CycleSpec, RwMode, SearchGraph, SearchOutcome,
};
use crate::graph::{DiGraph, Rels, UnmergedGraph};
use crate::infer::order_graphs::{mark_realtime_endpoints, RealtimePositions};
use crate::infer::txn::ExtraGraph;
use crate::infer::{Inference, Step, StepKind};
use crate::model::History;
use hashbrown::HashMap;
use std::time::{Duration, Instant};

/// Options for the cycle search.
#[derive(Clone, Debug)]
pub struct CycleOptions {
    /// Anomaly types worth searching for / reporting.
    pub reportable: Vec<&'static str>,
    /// Time allowed per SCC.
    pub timeout: Duration,
    /// Elle-order search budget (path extensions per anomaly type) before
    /// switching to ellery's polynomial search.
    pub elle_steps: u64,
    /// Receives a line about each search (`--verbose`); `None`: none.
    pub trace: Option<fn(&str)>,
}

/// One explained cycle, ready for the result map and explanation files.
#[derive(Clone, Debug)]
pub struct ExplainedCycle {
    /// Anomaly type, e.g. `G-single-item-realtime`.
    pub kind: String,
    /// Transactions (op positions), first repeated at the end.
    pub ops: Vec<u32>,
    /// One step per consecutive pair.
    pub steps: Vec<Step>,
}

impl ExplainedCycle {
    /// The anomaly map Elle prints: `{:cycle [...], :steps (...), :type :T}`.
    pub fn to_value(&self, h: &History) -> Value {
        Value::Map(vec![
            (
                Value::kw("cycle"),
                Value::Vector(self.ops.iter().map(|&o| h.op_value(o as usize)).collect()),
            ),
            (
                Value::kw("steps"),
                Value::List(self.steps.iter().map(|s| s.data.clone()).collect()),
            ),
            (Value::kw("type"), Value::kw(&self.kind)),
        ])
    }
}

/// An anomaly found by the cycle checker.
#[derive(Clone, Debug)]
pub enum CycleCase {
    /// A cycle of some type.
    Cycle(ExplainedCycle),
    /// A model's subgraph has a cycle somewhere (Elle's `-cycle-exists`).
    Exists {
        /// The anomaly type, e.g. `PL-2-cycle-exists`.
        kind: &'static str,
        /// The anomaly map.
        value: Value,
    },
    /// The search ran out of time.
    Timeout(Value),
}

impl CycleCase {
    /// The anomaly type this case is filed under.
    pub fn kind(&self) -> &str {
        match self {
            CycleCase::Cycle(c) => &c.kind,
            CycleCase::Exists { kind, .. } => kind,
            CycleCase::Timeout(_) => "cycle-search-timeout",
        }
    }
}

/// Classifies a cycle's steps as Elle does (G0, G1c, G-single-item, G2-item,
/// G-nonadjacent-item, with -process/-realtime suffixes).
pub fn classify(steps: &[Step]) -> String {
    let kinds: Vec<StepKind> = steps.iter().map(|s| s.kind).collect();
    let name = classify_kinds(&kinds);
    // A step through a predicate's view makes the cycle Adya's
    // predicate-level anomaly (`G-single`, not `G-single-item`).
    match steps
        .iter()
        .any(|s| matches!(s.text, crate::infer::StepText::Predicate { .. }))
    {
        true => name.replacen("-item", "", 1),
        false => name,
    }
}

/// [`classify`] on the kinds of a cycle's steps, in cycle order (shared by
/// every checker that reports cycles).
pub fn classify_kinds(steps: &[StepKind]) -> String {
    let count = |k: StepKind| steps.iter().filter(|&&s| s == k).count();
    let (rw, wr) = (count(StepKind::Rw), count(StepKind::Wr));
    let adjacent_rw = !steps.is_empty()
        && (0..steps.len()).any(|i| {
            let prev = steps[(i + steps.len() - 1) % steps.len()];
            prev == StepKind::Rw && steps[i] == StepKind::Rw
        });
    let base = if rw == 1 {
        "G-single-item"
    } else if rw > 1 {
        if adjacent_rw {
            "G2-item"
        } else {
            "G-nonadjacent-item"
        }
    } else if wr > 0 {
        "G1c"
    } else {
        // Only ww edges: every cycle Elle searches has a data edge.
        "G0"
    };
    let suffix = if count(StepKind::Realtime) > 0 {
        "-realtime"
    } else if count(StepKind::Process) > 0 {
        "-process"
    } else {
        ""
    };
    format!("{base}{suffix}")
}

/// Elle's search specification for a cycle anomaly type, and the type a
/// found cycle must be classified as (if any).
pub fn cycle_spec(kind: &str) -> (CycleSpec, Option<String>) {
    let (base, variant) = if let Some(b) = kind.strip_suffix("-process") {
        (b, Some(Rels::PROCESS))
    } else if let Some(b) = kind.strip_suffix("-realtime") {
        (b, Some(Rels::REALTIME))
    } else {
        (kind, None)
    };
    let w = Rels::WW.union(Rels::WWP);
    let wr = w.union(Rels::WR).union(Rels::WRP);
    let (mut legal, mut required, want_rw, mode, extra, typed) = match base {
        "G0" => (w, vec![], 0, RwMode::None, Rels::NONE, false),
        "G1c" => (
            wr,
            vec![Rels::WR.union(Rels::WRP)],
            0,
            RwMode::None,
            Rels::NONE,
            false,
        ),
        "G-single-item" => (wr, vec![], 1, RwMode::Single, Rels::RW, true),
        "G-single" => (wr, vec![], 1, RwMode::Single, Rels::ANY_RW, true),
        "G-nonadjacent-item" => (wr, vec![], 2, RwMode::NonadjacentFree, Rels::RW, true),
        "G-nonadjacent" => (wr, vec![], 2, RwMode::NonadjacentFree, Rels::ANY_RW, true),
        "G2-item" => (wr.union(Rels::RW), vec![], 2, RwMode::None, Rels::RW, true),
        _ => (
            wr.union(Rels::ANY_RW),
            vec![],
            2,
            RwMode::None,
            Rels::ANY_RW,
            true,
        ),
    };
    if let Some(v) = variant {
        legal = legal.union(v);
        required.push(v);
    }
    let search_rels = required.iter().fold(legal.union(extra), |a, &r| a.union(r));
    let spec = CycleSpec {
        legal,
        required,
        want_rw,
        rw_mode: mode,
        search_rels,
    };
    (spec, typed.then(|| kind.to_string()))
}

/// A strongly connected component prepared for searching.
struct Component<'a> {
    /// Global op positions of the local vertices.
    verts: Vec<u32>,
    /// The component's graph in local ids.
    graph: DiGraph,
    /// Bifurcan hashes of local vertices.
    hashes: Vec<u32>,
    history: &'a History,
    inference: &'a Inference<'a>,
    projections: HashMap<Rels, SearchGraph>,
}

impl Component<'_> {
    fn projected(&mut self, rels: Rels) -> &SearchGraph {
        if !self.projections.contains_key(&rels) {
            let g = self.graph.project(rels);
            let sg = SearchGraph::new(&g, self.hashes.clone());
            self.projections.insert(rels, sg);
        }
        &self.projections[&rels]
    }

    fn explain(&self, local_cycle: &[u32]) -> Option<ExplainedCycle> {
        let ops: Vec<u32> = local_cycle
            .iter()
            .map(|&v| self.verts[v as usize])
            .collect();
        let mut steps = Vec::with_capacity(ops.len());
        for w in ops.windows(2) {
            steps.push(self.inference.explain(self.history, w[0], w[1])?);
        }
        Some(ExplainedCycle {
            kind: classify(&steps),
            ops,
            steps,
        })
    }

    fn subgraph(&self, sg: &Subgraph) -> DiGraph {
        match sg {
            Subgraph::Rels(bits) => self.graph.project(Rels(*bits)),
            Subgraph::Union(parts) => {
                let mut acc = DiGraph::from_edges(self.graph.len(), Vec::new());
                for p in parts {
                    acc = acc.union(&self.subgraph(p));
                }
                acc
            }
            Subgraph::Extension(a, b) => self.subgraph(a).extension(&self.subgraph(b)),
        }
    }

    /// Elle's `cycle-exists-cases`.
    fn cycle_exists(&self) -> Vec<(&'static str, &'static str, Value)> {
        let mut out = Vec::new();
        let mut redundant: Vec<&'static str> = Vec::new();
        for spec in cm::cycle_exists_specs() {
            if redundant.contains(&spec.model) {
                continue;
            }
            let g = self.subgraph(&spec.subgraph);
            let mut sccs = nontrivial_sccs(&g);
            if sccs.is_empty() {
                continue;
            }
            order_sccs(&mut sccs, |v| {
                self.history.ops[self.verts[v as usize] as usize].index
            });
            sccs.sort_by_key(|c| c.len());
            let scc = &sccs[0];
            let mut indices: Vec<i64> = scc
                .iter()
                .map(|&v| self.history.ops[self.verts[v as usize] as usize].index as i64)
                .collect();
            indices.sort_unstable();
            let value = Value::Map(vec![
                (Value::kw("type"), Value::kw(spec.anomaly_type)),
                (Value::kw("not"), Value::kw(spec.friendly_model)),
                (
                    Value::kw("subgraph"),
                    friendly_value(&spec.subgraph.friendly()),
                ),
                (Value::kw("scc-size"), Value::Int(scc.len() as i64)),
                (
                    Value::kw("scc"),
                    Value::Set(indices.into_iter().map(Value::Int).collect()),
                ),
            ]);
            out.push((spec.anomaly_type, spec.friendly_model, value));
            if let Ok(ms) = cm::all_impossible_models(&[spec.model]) {
                redundant.extend(ms);
            }
        }
        out
    }

    /// Elle's `fallback-cycle`: a depth-first walk from the first vertex
    /// until it meets itself.
    fn fallback_cycle(&mut self) -> Vec<u32> {
        let g = self.projected(Rels(0xff));
        let start = g.vertices()[0];
        let mut path = vec![start];
        let mut seen: HashMap<u32, usize> = HashMap::new();
        seen.insert(start, 0);
        loop {
            let last = *path.last().expect("non-empty");
            let outs = g.out_in_order(last);
            if let Some(&i) = outs.iter().find_map(|w| seen.get(w)) {
                let mut c = path[i..].to_vec();
                c.push(path[i]);
                return c;
            }
            let next = outs
                .iter()
                .copied()
                .find(|w| !seen.contains_key(w))
                .expect("strongly connected");
            seen.insert(next, path.len());
            path.push(next);
        }
    }
}

fn friendly_value(f: &cm::FriendlySubgraph) -> Value {
    match f {
        cm::FriendlySubgraph::Keyword(k) => Value::kw(k),
        cm::FriendlySubgraph::Vector(items) => {
            Value::Vector(items.iter().map(friendly_value).collect())
        }
        cm::FriendlySubgraph::Nil => Value::Nil,
    }
}

/// Orders SCCs as Bifurcan's set of SCCs iterates them (hashed by the sum of
/// their members' hashes).
fn order_sccs(sccs: &mut [Vec<u32>], index: impl Fn(u32) -> u64) {
    let hashes: Vec<u32> = sccs
        .iter()
        .map(|c| {
            let sum: i64 = c
                .iter()
                .map(|&v| crate::edn::order::murmur3_long(index(v) as i64) as i64)
                .sum();
            bifurcan_spread(sum as i32)
        })
        .collect();
    let mut order: Vec<usize> = (0..sccs.len()).collect();
    bifurcan_order(&mut order, |i| hashes[i]);
    let sorted: Vec<Vec<u32>> = order
        .iter()
        .map(|&i| std::mem::take(&mut sccs[i]))
        .collect();
    for (slot, c) in sccs.iter_mut().zip(sorted) {
        *slot = c;
    }
}

/// The cycle checker's findings for one history.
pub struct CycleAnalysis {
    /// Anomaly cases in Elle's order.
    pub cases: Vec<CycleCase>,
    /// Vertices of the dependency graph (0 means an empty graph).
    pub vertex_count: usize,
    /// The whole dependency graph (vertices are op positions), its
    /// parallel edges merged, when it has a nontrivial SCC; otherwise
    /// empty (no SCC or cycle reads it, and merging a big graph's rows
    /// costs: issue 23).
    pub graph: DiGraph,
    /// Its strongly connected components, in Elle's order.
    pub sccs: Vec<Vec<u32>>,
}

/// Finds cycle anomalies in every SCC of the inferred graph.
pub fn cycle_cases(
    history: &History,
    inference: &Inference<'_>,
    opts: &CycleOptions,
) -> CycleAnalysis {
    cycle_cases_in(
        history,
        inference,
        inference.graph_without_realtime(history),
        opts,
    )
}

/// [`cycle_cases`] on the inference's graph built already, without its
/// real-time edges ([`Inference::graph_without_realtime`]; its edge list
/// may then be gone: issue 23, memory). Those are added only when the
/// graph has a cycle: peeling with the real-time order kept as positions
/// ([`peeled_with`]) settles an acyclic graph without them, and leaves
/// the vertices the SCC search then walks.
pub fn cycle_cases_in(
    history: &History,
    inference: &Inference<'_>,
    graph: UnmergedGraph,
    opts: &CycleOptions,
) -> CycleAnalysis {
    let n = history.ops.len();
    let realtime =
        (inference.order == ExtraGraph::Realtime).then(|| RealtimePositions::new(history));
    // Every endpoint of an edge, plus the inference's edgeless vertices;
    // counted beside the SCCs (issue 23: 0.04 s of a 1M-transaction
    // rw-register check, on one core).
    let count = || {
        let mut seen = vec![false; n];
        for (a, b, _) in graph.edges() {
            seen[a as usize] = true;
            seen[b as usize] = true;
        }
        if realtime.is_some() {
            mark_realtime_endpoints(history, &mut seen);
        }
        for &v in &inference.vertices {
            if let Some(s) = seen.get_mut(v as usize) {
                *s = true;
            }
        }
        seen.iter().filter(|&&s| s).count()
    };
    /// The SCCs, or what peeling with the real-time order left (`None`:
    /// nothing, no cycle).
    enum Peeled {
        Sccs(Vec<Vec<u32>>),
        Left(Option<Vec<u32>>),
    }
    let peel = || match &realtime {
        Some(order) => Peeled::Left(peeled_with(&graph, order)),
        None => Peeled::Sccs(nontrivial_sccs_unmerged(&graph)),
    };
    let (found, vertex_count) = crate::par::join(peel, count);
    let (mut sccs, graph) = match found {
        Peeled::Sccs(sccs) => (sccs, graph),
        Peeled::Left(None) => (Vec::new(), graph),
        Peeled::Left(Some(left)) => {
            // The listed edges reach what the order did: peeling them
            // would leave the same vertices.
            let graph = graph.extended(|sources, f| {
                ExtraGraph::Realtime.for_each_edge_from(history, sources, f)
            });
            (nontrivial_sccs_among(&graph, &left), graph)
        }
    };
    order_sccs(&mut sccs, |v| history.ops[v as usize].index);
    let graph = if sccs.is_empty() {
        DiGraph::default()
    } else {
        graph.merged()
    };
    if !sccs.is_empty() {
        // Before any search's clock starts: an explainer that builds its
        // tables when first asked (a big rw-register history's) would
        // otherwise spend a deadline-bound search's time (issue 23).
        inference.prepare_explainers(history);
    }
    let cases = search_sccs(history, inference, &graph, &sccs, opts);
    CycleAnalysis {
        cases,
        vertex_count,
        graph,
        sccs,
    }
}

/// The cycle cases of every SCC of `graph` (merged), in the SCCs' order.
/// The SCCs are independent (issue 23): two workers take them in turn
/// from a shared counter when the thread budget has a core free, each
/// SCC's search with its own deadline as before; the cases and each
/// SCC's trace lines (said once all are searched) go in the SCCs' order,
/// so output is the same on any number of threads.
fn search_sccs(
    history: &History,
    inference: &Inference<'_>,
    graph: &DiGraph,
    sccs: &[Vec<u32>],
    opts: &CycleOptions,
) -> Vec<CycleCase> {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let work = || {
        let mut done = Vec::new();
        loop {
            let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let Some(scc) = sccs.get(i) else {
                return done;
            };
            let hashes = scc
                .iter()
                .map(|&v| crate::edn::order::bifurcan_op_hash(history.ops[v as usize].index))
                .collect();
            let mut comp = Component {
                verts: scc.clone(),
                graph: graph.induced(scc),
                hashes,
                history,
                inference,
                projections: HashMap::new(),
            };
            let mut lines = Vec::new();
            let cases = search_component(&mut comp, opts, &mut lines);
            done.push((i, cases, lines));
        }
    };
    let (mut searched, other) = if sccs.len() > 1 {
        crate::par::join(work, work)
    } else {
        (work(), Vec::new())
    };
    searched.extend(other);
    searched.sort_unstable_by_key(|s| s.0);
    let mut cases = Vec::new();
    for (_, found, lines) in searched {
        if let Some(trace) = opts.trace {
            lines.iter().for_each(|l| trace(l));
        }
        cases.extend(found);
    }
    cases
}

/// The cycle cases of one SCC; with [`CycleOptions::trace`], a line per
/// search into `lines`.
fn search_component(
    comp: &mut Component<'_>,
    opts: &CycleOptions,
    lines: &mut Vec<String>,
) -> Vec<CycleCase> {
    let started = Instant::now();
    let deadline = started + opts.timeout;
    let exists = comp.cycle_exists();
    let nots: Vec<&str> = exists.iter().map(|(_, m, _)| *m).collect();
    let mut redundant: std::collections::BTreeSet<String> =
        cm::impossible_cycle_anomalies_given_cycle_exists(&nots)
            .unwrap_or_default()
            .into_iter()
            .map(String::from)
            .collect();
    let mut searched: Vec<&'static str> = Vec::new();
    let mut found: Vec<ExplainedCycle> = Vec::new();
    let reportable = &opts.reportable;
    let _ = reportable;
    for kind in cm::cycle_anomaly_search_order() {
        if redundant.contains(kind) {
            continue;
        }
        searched.push(kind);
        let (spec, typed) = cycle_spec(kind);
        let mut budget = Budget {
            deadline: Some(deadline),
            steps: opts.elle_steps,
        };
        let outcome = {
            let g = comp.projected(spec.search_rels);
            elle_search(g, &spec, &mut budget)
        };
        if opts.trace.is_some() {
            lines.push(format!(
                "scc of {}: {kind}: elle-order search {:?} after {} steps",
                comp.verts.len(),
                match &outcome {
                    SearchOutcome::Found(c) => format!("found {} ops", c.len()),
                    other => format!("{other:?}"),
                },
                opts.elle_steps - budget.steps
            ));
        }
        let cycle = match outcome {
            SearchOutcome::Found(c) => comp
                .explain(&c)
                .filter(|ex| typed.as_ref().is_none_or(|t| *t == ex.kind)),
            SearchOutcome::NotFound => None,
            SearchOutcome::Exhausted => {
                let mut budget = Budget {
                    deadline: Some(deadline),
                    steps: u64::MAX,
                };
                let comp_ref: &Component = comp;
                let mut accept = |c: &[u32]| {
                    comp_ref
                        .explain(c)
                        .is_some_and(|ex| typed.as_ref().is_none_or(|t| *t == ex.kind))
                };
                let g = comp_ref
                    .projections
                    .get(&spec.search_rels)
                    .expect("projected above");
                match constrained_search(g, &spec, &mut budget, &mut accept) {
                    SearchOutcome::Found(c) => comp.explain(&c),
                    SearchOutcome::NotFound => None,
                    SearchOutcome::Exhausted => {
                        return timeout_cases(comp, exists, searched, found);
                    }
                }
            }
        };
        if let Some(ex) = cycle {
            redundant.extend(
                cm::all_implied_anomalies(&[kind])
                    .into_iter()
                    .map(String::from),
            );
            found.push(ex);
        }
    }
    let mut out: Vec<CycleCase> = exists
        .into_iter()
        .map(|(kind, _, value)| CycleCase::Exists { kind, value })
        .collect();
    out.extend(found.into_iter().map(CycleCase::Cycle));
    out
}

fn timeout_cases(
    comp: &mut Component<'_>,
    exists: Vec<(&'static str, &'static str, Value)>,
    searched: Vec<&'static str>,
    found: Vec<ExplainedCycle>,
) -> Vec<CycleCase> {
    let current = *searched.last().expect("searching something");
    let done: Vec<Value> = searched[..searched.len() - 1]
        .iter()
        .filter(|t| !found.iter().any(|f| f.kind == **t))
        .map(|t| Value::kw(t))
        .collect();
    let mut out = vec![CycleCase::Timeout(Value::Map(vec![
        (Value::kw("type"), Value::kw("cycle-search-timeout")),
        (Value::kw("anomaly-spec-type"), Value::kw(current)),
        (Value::kw("does-not-contain"), Value::List(done)),
        (Value::kw("scc-size"), Value::Int(comp.verts.len() as i64)),
    ]))];
    let fallback = comp.fallback_cycle();
    if let Some(ex) = comp.explain(&fallback) {
        out.push(CycleCase::Cycle(ex));
    }
    out.extend(
        exists
            .into_iter()
            .map(|(kind, _, value)| CycleCase::Exists { kind, value }),
    );
    out.extend(found.into_iter().map(CycleCase::Cycle));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gen::Rng;

    /// Whether a simple cycle (vertices, first repeated last) can take one
    /// relationship per edge so that it meets `spec`: every edge legal or an
    /// allowed rw, each required set hit, the rw count and adjacency rules.
    fn satisfies(g: &DiGraph, cycle: &[u32], spec: &CycleSpec) -> bool {
        let edges: Vec<Rels> = cycle
            .windows(2)
            .map(|w| g.edge(w[0], w[1]).unwrap_or(Rels::NONE))
            .collect();
        let choices: Vec<Vec<Rels>> = edges.iter().map(|r| r.singles().collect()).collect();
        if choices.iter().any(|c| c.is_empty()) {
            return false;
        }
        let mut pick = vec![0usize; edges.len()];
        loop {
            let chosen: Vec<Rels> = pick.iter().zip(&choices).map(|(&i, c)| c[i]).collect();
            let rw_allowed = spec.rw_mode != RwMode::None || spec.legal.intersects(Rels::RW);
            let ok_edges = chosen
                .iter()
                .all(|r| r.intersects(spec.legal) || (r.intersects(Rels::ANY_RW) && rw_allowed));
            let rws: Vec<bool> = chosen.iter().map(|r| r.intersects(Rels::ANY_RW)).collect();
            let rw_count = rws.iter().filter(|&&b| b).count();
            let required = spec
                .required
                .iter()
                .all(|req| chosen.iter().any(|r| r.intersects(*req)));
            let count_ok = match spec.rw_mode {
                RwMode::Single => rw_count == 1,
                _ => rw_count >= spec.want_rw as usize,
            };
            let adjacency_ok = spec.rw_mode != RwMode::NonadjacentFree
                || (0..rws.len()).all(|i| !(rws[i] && rws[(i + 1) % rws.len()]));
            if ok_edges && required && count_ok && adjacency_ok {
                return true;
            }
            // Next combination.
            let mut i = 0;
            loop {
                if i == pick.len() {
                    return false;
                }
                pick[i] += 1;
                if pick[i] < choices[i].len() {
                    break;
                }
                pick[i] = 0;
                i += 1;
            }
        }
    }

    fn simple_cycles(g: &DiGraph) -> Vec<Vec<u32>> {
        fn dfs(g: &DiGraph, start: u32, path: &mut Vec<u32>, out: &mut Vec<Vec<u32>>) {
            let last = *path.last().expect("path");
            for w in g.out_ids(last).to_vec() {
                if w == start {
                    let mut c = path.clone();
                    c.push(start);
                    out.push(c);
                } else if w > start && !path.contains(&w) {
                    path.push(w);
                    dfs(g, start, path, out);
                    path.pop();
                }
            }
        }
        let mut out = Vec::new();
        for s in 0..g.len() as u32 {
            dfs(g, s, &mut vec![s], &mut out);
        }
        out
    }

    #[test]
    fn searches_agree_with_brute_force_on_random_graphs() {
        let kinds = cm::cycle_anomaly_search_order();
        let palette = [Rels::WW, Rels::WR, Rels::RW, Rels::REALTIME, Rels::PROCESS];
        let mut rng = Rng::new(7);
        for round in 0..400 {
            let n = 2 + (rng.next_u64() % 5) as usize;
            let mut edges = Vec::new();
            for a in 0..n as u32 {
                for b in 0..n as u32 {
                    if a != b && rng.next_u64() % 100 < 40 {
                        let mut r = Rels::NONE;
                        for p in palette {
                            if rng.next_u64().is_multiple_of(3) {
                                r = r.union(p);
                            }
                        }
                        if r.is_empty() {
                            r = palette[(rng.next_u64() % 5) as usize];
                        }
                        edges.push((a, b, r));
                    }
                }
            }
            let g = DiGraph::from_edges(n, edges);
            let cycles = simple_cycles(&g);
            let hashes: Vec<u32> = (0..n as u64)
                .map(crate::edn::order::bifurcan_op_hash)
                .collect();
            for kind in &kinds {
                let (spec, _) = cycle_spec(kind);
                let projected = g.project(spec.search_rels);
                let sg = SearchGraph::new(&projected, hashes.clone());
                let exists = cycles.iter().any(|c| satisfies(&projected, c, &spec));
                let mut budget = Budget {
                    deadline: None,
                    steps: u64::MAX,
                };
                match elle_search(&sg, &spec, &mut budget) {
                    SearchOutcome::Found(c) => {
                        assert!(
                            satisfies(&projected, &c, &spec),
                            "round {round} {kind}: elle-order search found {c:?}, which does not satisfy"
                        );
                    }
                    SearchOutcome::NotFound => {}
                    SearchOutcome::Exhausted => panic!("unbounded budget"),
                }
                let mut accept = |c: &[u32]| satisfies(&projected, c, &spec);
                match constrained_search(&sg, &spec, &mut budget, &mut accept) {
                    SearchOutcome::Found(c) => assert!(satisfies(&projected, &c, &spec)),
                    SearchOutcome::NotFound => assert!(
                        !exists,
                        "round {round} {kind}: polynomial search missed a cycle in {g:?}"
                    ),
                    SearchOutcome::Exhausted => {}
                }
            }
        }
    }

    #[test]
    fn classification_follows_elle() {
        let step = |kind| Step {
            kind,
            data: Value::Nil,
            text: crate::infer::StepText::Process { process: 0 },
        };
        use StepKind::*;
        let cases: Vec<(Vec<StepKind>, &str)> = vec![
            (vec![Ww, Ww], "G0"),
            (vec![Ww, Wr], "G1c"),
            (vec![Rw, Wr], "G-single-item"),
            (vec![Rw, Rw], "G2-item"),
            (vec![Rw, Ww, Rw, Wr], "G-nonadjacent-item"),
            (vec![Rw, Ww, Wr, Rw], "G2-item"),
            (vec![Ww, Process], "G0-process"),
            (vec![Wr, Process, Realtime], "G1c-realtime"),
            (vec![Rw, Realtime], "G-single-item-realtime"),
        ];
        for (kinds, want) in cases {
            let steps: Vec<Step> = kinds.into_iter().map(step).collect();
            assert_eq!(classify(&steps), want);
        }
    }
}
