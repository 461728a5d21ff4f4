//! Version graphs per key: the sources Elle combines (initial state,
//! `:wfr-keys`, `:sequential-keys`, `:linearizable-keys`), each left out
//! where it would make a key's version graph cyclic (`:cyclic-versions`).

use super::*;

/// Version edges per key.
#[derive(Default, Debug)]
pub(super) struct VersionGraphs {
    /// Keys with edges, in the order Elle's merged map first saw them.
    pub(super) keys: Vec<u32>,
    /// Per key id: sorted, deduplicated (from, to) value ids.
    pub(super) edges: Vec<Vec<(u32, u32)>>,
}

impl VersionGraphs {
    pub(super) fn contains(&self, k: u32, a: u32, b: u32) -> bool {
        self.edges[k as usize].binary_search(&(a, b)).is_ok()
    }
}

/// Elle's `cyclic-version-cases` for the keys in `keys` (in order), whose
/// edges `edges_of` gives.
pub(super) fn cyclic_cases<'a>(
    h: &History,
    ids: &Ids,
    edges_of: impl Fn(u32) -> &'a [(u32, u32)],
    keys: &[u32],
    sources: &[&str],
) -> Vec<Value> {
    let mut out = Vec::new();
    for &k in keys {
        let edges = edges_of(k);
        // Edges only out of `nil` (the initial-state source alone, the
        // default) make a star, which has no cycle: no graph to build and
        // search (issue 23: a key of a million-transaction history has
        // hundreds of thousands of values).
        if edges.iter().all(|&(a, b)| a == NIL && b != NIL) {
            continue;
        }
        let vals = &ids.vals[k as usize];
        let es = edges.iter().map(|&(a, b)| (a, b, Rels::WW)).collect();
        let g = crate::graph::DiGraph::from_edges(vals.len(), es);
        let mut sccs: Vec<Vec<Val>> = crate::graph::scc::nontrivial_sccs(&g)
            .into_iter()
            .map(|c| c.into_iter().map(|v| vals[v as usize]).collect())
            .collect();
        if sccs.is_empty() {
            continue;
        }
        for c in sccs.iter_mut() {
            c.sort();
        }
        sccs.sort();
        // Elle sorts by the smallest value; nil or non-numbers make that
        // throw, and it sorts by size instead.
        let numeric = |v: &Val| {
            v.is_some_and(|a| matches!(h.atom_value(a), Value::Int(_) | Value::BigInt(_)))
        };
        if sccs.iter().all(|c| c.iter().all(numeric)) {
            sccs.sort_by_key(|c| {
                c.iter()
                    .filter_map(|v| v.and_then(|a| a.as_int()))
                    .min()
                    .unwrap_or(i64::MAX)
            });
        } else {
            sccs.sort_by_key(|c| c.len());
        }
        for c in sccs {
            let mut members: Vec<Value> = c.iter().map(|&v| val_value(h, v)).collect();
            clojure_hash_order(&mut members, clojure_hasheq);
            out.push(Value::kw_map(vec![
                ("key", h.atom_value(ids.key(k))),
                ("scc", Value::Set(members)),
                (
                    "sources",
                    Value::Vector(sources.iter().map(|s| Value::kw(s)).collect()),
                ),
            ]));
        }
    }
    out
}

/// One version-order source: `(key, from, to)` edges over ids, in the order
/// the source finds them (which fixes the order keys are first seen).
pub(super) type SourceEdges = Vec<(u32, u32, u32)>;

/// `nil` precedes every value some `:ok` or `:info` op wrote or read,
/// bucketed by key directly: each key's values in id order are already
/// sorted and distinct, so this source, the biggest on a million
/// transactions, needs neither an edge list nor a sort (issue 23).
pub(super) fn initial_state_source(ext: &Ext, ids: &Ids) -> Bucketed {
    let nk = ids.keys.len();
    let slots = ids.base.last().map_or(0, |&n| n as usize);
    let mut listed = vec![false; slots];
    let mut order: Vec<u32> = Vec::new();
    let mut at = vec![0u32; nk + 1];
    for (i, &t) in ext.types.iter().enumerate() {
        if !matches!(t, OpType::Ok | OpType::Info) {
            continue;
        }
        let reads: &[Kv] = if t == OpType::Ok { ext.reads(i) } else { &[] };
        for e in ext.writes(i).iter().chain(reads) {
            if e.vid != NIL && !std::mem::replace(&mut listed[ids.slot(e.kid, e.vid)], true) {
                let n = &mut at[e.kid as usize + 1];
                if *n == 0 {
                    order.push(e.kid);
                }
                *n += 1;
            }
        }
    }
    for k in 0..nk {
        at[k + 1] += at[k];
    }
    let mut edges = Vec::with_capacity(at[nk] as usize);
    for k in 0..nk as u32 {
        let base = ids.slot(k, 0);
        let nv = ids.vals[k as usize].len();
        for vid in 1..nv {
            if listed[base + vid] {
                edges.push((NIL, vid as u32));
            }
        }
    }
    Bucketed { order, at, edges }
}

/// A source's edges by key: key `k`'s are `edges[at[k]..at[k + 1]]`, sorted
/// (perhaps with repeats); `order` lists the keys with edges in the order
/// the source first found them (the order of Elle's merged map).
pub(super) struct Bucketed {
    order: Vec<u32>,
    at: Vec<u32>,
    edges: Vec<(u32, u32)>,
}

impl Bucketed {
    /// `edges` bucketed by key (`nk` keys), each key's sorted.
    fn new(edges: SourceEdges, nk: usize) -> Bucketed {
        let mut order: Vec<u32> = Vec::new();
        let mut at = vec![0u32; nk + 1];
        for &(k, _, _) in &edges {
            if at[k as usize + 1] == 0 {
                order.push(k);
            }
            at[k as usize + 1] += 1;
        }
        for k in 0..nk {
            at[k + 1] += at[k];
        }
        let mut fill = at.clone();
        let mut bucket = vec![(0u32, 0u32); edges.len()];
        for &(k, a, b) in &edges {
            bucket[fill[k as usize] as usize] = (a, b);
            fill[k as usize] += 1;
        }
        drop(edges);
        for &k in &order {
            bucket[at[k as usize] as usize..at[k as usize + 1] as usize].sort_unstable();
        }
        Bucketed {
            order,
            at,
            edges: bucket,
        }
    }

    fn of(&self, k: u32) -> &[(u32, u32)] {
        &self.edges[self.at[k as usize] as usize..self.at[k as usize + 1] as usize]
    }
}

pub(super) fn wfr_source(h: &History, ext: &Ext) -> SourceEdges {
    let mut out = Vec::new();
    for (i, op) in h.ops.iter().enumerate() {
        if op.op_type != OpType::Ok {
            continue;
        }
        for e in ext.reads(i) {
            if e.vid == NIL {
                continue;
            }
            if let Some(w) = get(ext.writes(i), e.kid) {
                out.push((e.kid, e.vid, w));
            }
        }
    }
    out
}

/// Elle's `transaction-graph->version-graphs` over the process graph: for
/// each process, consecutive `:ok` transactions touching a key relate the
/// last version the first one saw to the first version the next one saw.
/// (Elle also links `nil` to those versions from transactions that do not
/// touch the key; the initial-state source always contains those edges.)
pub(super) fn sequential_source(h: &History, ext: &Ext) -> SourceEdges {
    let mut out = Vec::new();
    // (process, key) → last ok op touching it.
    let mut last: HashMap<(i64, u32), u32> = HashMap::new();
    let mut done: Vec<u32> = Vec::new();
    for (i, op) in h.ops.iter().enumerate() {
        if op.op_type != OpType::Ok {
            continue;
        }
        done.clear();
        for e in ext.reads(i).iter().chain(ext.writes(i)) {
            let k = e.kid;
            if done.contains(&k) {
                continue;
            }
            done.push(k);
            if let Some(a) = last.insert((op.process, k), i as u32) {
                let v1 = ext.last_version(a as usize, k).expect("ok op");
                let v2 = ext.first_version(i, k).expect("ok op");
                if v1 != v2 {
                    out.push((k, v1, v2));
                }
            }
        }
    }
    out
}

/// Version edges from real-time order under per-key linearizability.
///
/// **Deliberate difference from Elle.** Elle derives these edges by walking
/// its real-time transaction graph (`transaction-graph->version-graphs`),
/// and Elle 0.2.7 reports `:cyclic-versions` (and cycles such as G0 or G1c)
/// on histories that are valid (see the notes on Elle's defects). ellery
/// uses the sound rule directly: when `:ok` transaction A completed before
/// transaction B was invoked and both touched key k, the version A left k
/// in (its external write, or if it only read k, the version it read)
/// precedes the version B left k in (its write, or what it read; for an
/// `:info` B, its write). Per key, only the transitive reduction of that
/// real-time order among the transactions touching k is linked (a sweep over
/// the history, as for the real-time graph itself).
pub(super) fn linearizable_source(h: &History, ext: &Ext, keys: usize) -> SourceEdges {
    let mut out = Vec::new();
    // Key → completed ok ops touching it that no later completed toucher
    // has covered yet.
    let mut frontier: Vec<Vec<u32>> = vec![Vec::new(); keys];
    // Completion → (key, frontier op linked to it) pairs.
    let mut linked: HashMap<u32, Vec<(u32, u32)>> = HashMap::new();
    let keys_of = |i: usize, ks: &mut Vec<u32>| {
        ks.clear();
        let reads: &[Kv] = if h.ops[i].op_type == OpType::Ok {
            ext.reads(i)
        } else {
            &[]
        };
        for e in ext.writes(i).iter().chain(reads) {
            if !ks.contains(&e.kid) {
                ks.push(e.kid);
            }
        }
    };
    let mut ks: Vec<u32> = Vec::new();
    for (i, op) in h.ops.iter().enumerate() {
        match op.op_type {
            OpType::Invoke => {
                let Some(c) = h.completion_of(i) else {
                    continue;
                };
                if !matches!(h.ops[c].op_type, OpType::Ok | OpType::Info) {
                    continue;
                }
                let mut links = Vec::new();
                keys_of(c, &mut ks);
                for &k in &ks {
                    let f = &frontier[k as usize];
                    if f.is_empty() {
                        continue;
                    }
                    let Some(v2) = ext.last_version(c, k) else {
                        continue;
                    };
                    for &a in f {
                        let v1 = ext.last_version(a as usize, k).expect("ok op");
                        if v1 != v2 {
                            out.push((k, v1, v2));
                        }
                        links.push((k, a));
                    }
                }
                if !links.is_empty() {
                    linked.insert(c as u32, links);
                }
            }
            OpType::Ok => {
                let links = linked.remove(&(i as u32)).unwrap_or_default();
                keys_of(i, &mut ks);
                for &k in &ks {
                    let f = &mut frontier[k as usize];
                    if links.iter().any(|&(k2, _)| k2 == k) {
                        f.retain(|a| !links.contains(&(k, *a)));
                    }
                    f.push(i as u32);
                }
            }
            OpType::Fail | OpType::Info => {
                linked.remove(&(i as u32));
            }
        }
    }
    out
}

/// Merges two sorted, disjoint edge lists.
pub(super) fn merge_sorted(a: &[(u32, u32)], b: &[(u32, u32)]) -> Vec<(u32, u32)> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        if a[i] < b[j] {
            out.push(a[i]);
            i += 1;
        } else {
            out.push(b[j]);
            j += 1;
        }
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
    out
}

/// Elle's `version-graphs`: combines sources in order, leaving out any that
/// makes a key's version graph cyclic. Returns the accepted graphs and the
/// cyclic-versions cases.
pub(super) fn version_graphs(
    h: &History,
    ext: &Ext,
    ids: &Ids,
    opts: &RwOptions,
) -> (VersionGraphs, Vec<Value>) {
    let nk = ids.keys.len();
    let mut graphs = VersionGraphs {
        keys: Vec::new(),
        edges: vec![Vec::new(); nk],
    };
    let mut sources: Vec<&str> = Vec::new();
    let mut cases = Vec::new();
    let mut names: Vec<&str> = vec!["initial-state"];
    if opts.wfr_keys {
        names.push("wfr-keys");
    }
    if opts.sequential_keys {
        names.push("sequential-keys");
    }
    if opts.linearizable_keys {
        names.push("linearizable-keys");
    }
    let mut in_graph = vec![false; nk];
    for name in names {
        let mut source = match name {
            "initial-state" => initial_state_source(ext, ids),
            "wfr-keys" => Bucketed::new(wfr_source(h, ext), nk),
            "sequential-keys" => Bucketed::new(sequential_source(h, ext), nk),
            _ => Bucketed::new(linearizable_source(h, ext, nk), nk),
        };
        // Per key, the merged graph wherever the source adds an edge: only
        // those keys can have become cyclic.
        let mut merged: Vec<Option<Vec<(u32, u32)>>> = vec![None; nk];
        let mut fresh: Vec<(u32, u32)> = Vec::new();
        for &k in &source.order {
            let old = &graphs.edges[k as usize];
            fresh.clear();
            let mut prev = None;
            for &e in source.of(k) {
                if prev != Some(e) && old.binary_search(&e).is_err() {
                    fresh.push(e);
                }
                prev = Some(e);
            }
            if !fresh.is_empty() {
                merged[k as usize] = Some(if old.is_empty() {
                    std::mem::take(&mut fresh)
                } else {
                    merge_sorted(old, &fresh)
                });
            }
        }
        let order = std::mem::take(&mut source.order);
        drop(source);
        let mut trial_keys: Vec<u32> = graphs.keys.clone();
        for &k in &order {
            if !in_graph[k as usize] {
                trial_keys.push(k);
            }
        }
        let mut ordered = trial_keys.clone();
        clojure_map_order(&mut ordered, |&k| clojure_hasheq(&h.atom_value(ids.key(k))));
        let check_keys: Vec<u32> = ordered
            .into_iter()
            .filter(|&k| merged[k as usize].is_some())
            .collect();
        let mut trial_sources = sources.clone();
        trial_sources.push(name);
        let cs = cyclic_cases(
            h,
            ids,
            |k| merged[k as usize].as_deref().unwrap_or(&[]),
            &check_keys,
            &trial_sources,
        );
        if cs.is_empty() {
            sources.push(name);
            for (k, m) in merged.into_iter().enumerate() {
                if let Some(m) = m {
                    graphs.edges[k] = m;
                }
            }
            // Elle's merged map keeps first-seen key order.
            graphs.keys = trial_keys
                .into_iter()
                .filter(|&k| !graphs.edges[k as usize].is_empty())
                .collect();
            for &k in &graphs.keys {
                in_graph[k as usize] = true;
            }
        } else {
            cases.extend(cs);
        }
    }
    (graphs, cases)
}
