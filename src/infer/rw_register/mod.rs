//! Read-write register inference, with the semantics of Elle's
//! `elle.rw-register/check`.
//!
//! Transactions are vectors of `[:w k v]` and `[:r k v]` micro-ops over
//! registers whose writes are assumed unique. What ellery infers, as Elle does:
//!
//! * **External reads and writes** of each transaction: the first micro-op on
//!   a key, when it is a read, is an external read; the last write of a key is
//!   an external write. Only `:ok` transactions are indexed for edges.
//! * **wr edges**: the single `:ok` transaction that externally wrote `k = v`
//!   precedes every `:ok` transaction that externally read `k = v`. Two
//!   writers of a value that someone read is an input error (Elle throws).
//! * **Version graphs** per key, over values (`nil` is the initial state),
//!   combined from sources in this order: `:initial-state` (nil precedes every
//!   value, always), then optionally `:wfr-keys` (a transaction's external
//!   read precedes its own external write), `:sequential-keys` (process order)
//!   and `:linearizable-keys` (real-time order). A source that would make some
//!   key's version graph cyclic is left out, and each cycle is reported as
//!   `:cyclic-versions` `{:key k :scc #{…} :sources [… that source]}`.
//! * **ww / rw edges**: for every version-graph edge `v1 → v2` of key `k`,
//!   writers of `v1` precede writers of `v2` (ww) and readers of `v1` precede
//!   writers of `v2` (rw). Only direct version-graph edges are used (no
//!   transitive closure), exactly as Elle.
//! * **Non-cycle anomalies**: `:internal`, `:G1a`, `:G1b`, `:lost-update`.
//!
//! Elle's `assert-type-sanity` (keys of more than one type) and its crashes on
//! micro-ops other than `:r`/`:w` become [`InputError`]s.

use super::txn::{lost_updates, ExtraGraph};
use super::{Anomalies, Inference, PairExplainer, Refusal, Step, StepKind, StepText};
use crate::edn::order::{clojure_hash_order, clojure_hasheq, clojure_map_order};
use crate::edn::{pr_str, Value};
use crate::error::InputError;
use crate::graph::Rels;
use crate::model::{Atom, History, MopArg, MopFn, OpType, OpValue};
use hashbrown::HashMap;

/// Elle's rw-register options for inferring version orders.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RwOptions {
    /// `:linearizable-keys?`: each key is linearizable, so real-time order
    /// between transactions orders their versions.
    pub linearizable_keys: bool,
    /// `:sequential-keys?`: each key is sequentially consistent, so process
    /// order orders versions.
    pub sequential_keys: bool,
    /// `:wfr-keys?`: within a transaction, writes follow reads.
    pub wfr_keys: bool,
}

/// A register value: `None` is `nil` (the initial state).
type Val = Option<Atom>;

/// The value id of `nil` in every key: values are numbered per key, densely,
/// with 0 for the initial state.
const NIL: u32 = 0;

/// A key and a value, by id: `kid` numbers keys densely in order of first
/// appearance, `vid` numbers a key's values ([`NIL`] is `nil`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Kv {
    kid: u32,
    vid: u32,
}

fn get(m: &[Kv], kid: u32) -> Option<u32> {
    m.iter().find(|e| e.kid == kid).map(|e| e.vid)
}

fn val_value(h: &History, v: Val) -> Value {
    v.map_or(Value::Nil, |a| h.atom_value(a))
}

fn arg_val(arg: MopArg) -> Val {
    match arg {
        MopArg::Atom(a) => Some(a),
        _ => None,
    }
}

/// Elle's `assert-type-sanity` names Java classes; these are the classes the
/// EDN and JSON readers produce.
fn key_class(v: &Value) -> &'static str {
    match v {
        Value::Nil => "nil",
        Value::Bool(_) => "java.lang.Boolean",
        Value::Int(_) => "java.lang.Long",
        Value::BigInt(_) => "clojure.lang.BigInt",
        Value::Float(_) => "java.lang.Double",
        Value::Str(_) => "java.lang.String",
        Value::Char(_) => "java.lang.Character",
        Value::Keyword(_) => "clojure.lang.Keyword",
        Value::Symbol(_) => "clojure.lang.Symbol",
        Value::Vector(_) => "clojure.lang.PersistentVector",
        Value::List(_) => "clojure.lang.PersistentList",
        Value::Map(_) => "clojure.lang.PersistentArrayMap",
        Value::Set(_) => "clojure.lang.PersistentHashSet",
        Value::Tagged(..) => "a tagged literal",
    }
}

/// Rejects histories Elle's rw-register checker cannot analyse (it throws on
/// them): op values that are not micro-op vectors, micro-ops other than `:r`
/// and `:w`, list values, and keys of more than one type (Elle's
/// `assert-type-sanity`). Elle's other sanity rule, at most one Java integer
/// class among values, cannot fail on EDN or JSON input: both readers make
/// every integer a `Long` (or a big integer, which Elle does not count).
pub fn validate(h: &History) -> Result<(), InputError> {
    let mut keys = super::txn::OneKeyType::new(key_class);
    for (i, op) in h.ops.iter().enumerate() {
        if let OpValue::Other(_) = op.value {
            return Err(h.error_at(
                i,
                "expected a vector of [:r k v] / [:w k v] micro-ops as the :value of an rw-register op"
                    .into(),
            ));
        }
        for m in h.mops(op) {
            match m.f {
                MopFn::Read | MopFn::Write => {}
                _ => {
                    return Err(h.error_at(
                        i,
                        format!(
                            "expected only :r and :w micro-ops in an rw-register history, found {}",
                            pr_str(&h.mop_value(m))
                        ),
                    ))
                }
            }
            if let MopArg::List { .. } = m.arg {
                return Err(h.error_at(
                    i,
                    format!(
                        "expected a single value or nil in an rw-register micro-op, found {}",
                        pr_str(&h.mop_value(m))
                    ),
                ));
            }
            if let Err((k0, c0, k, class)) = keys.check(h, m.key) {
                return Err(h.error_at(
                    i,
                    format!(
                        "expected every key to be of one type (Elle's assert-type-sanity): the first key, {}, is a {c0}, but {} is a {class}",
                        pr_str(&k0),
                        pr_str(&k)
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// Keys and values behind the ids of [`Kv`].
struct Ids {
    /// Key by id.
    keys: Vec<Atom>,
    /// Values by key id, then value id (`vals[k][0]` is `None`).
    vals: Vec<Vec<Val>>,
    /// First slot of each key in the flat (key, value) numbering used by
    /// the writer and reader indexes; one more entry: the number of slots.
    base: Vec<u32>,
}

impl Ids {
    fn key(&self, kid: u32) -> Atom {
        self.keys[kid as usize]
    }

    fn val(&self, kid: u32, vid: u32) -> Val {
        self.vals[kid as usize][vid as usize]
    }

    fn slot(&self, kid: u32, vid: u32) -> usize {
        (self.base[kid as usize] + vid) as usize
    }
}

/// External reads and writes of every op (empty for invocations), in
/// Clojure's map order (insertion order up to eight entries, hash order
/// beyond), stored flat: op `i`'s reads are `reads[r_at[i]..r_at[i + 1]]`.
struct Ext {
    r_at: Vec<u32>,
    w_at: Vec<u32>,
    reads: Vec<Kv>,
    writes: Vec<Kv>,
}

fn order_map(h: &History, m: &mut [(Atom, Val)]) {
    clojure_map_order(m, |(k, _)| clojure_hasheq(&h.atom_value(*k)));
}

impl Ext {
    fn new(h: &History) -> (Ext, Ids) {
        let n = h.ops.len();
        let mut ext = Ext {
            r_at: Vec::with_capacity(n + 1),
            w_at: Vec::with_capacity(n + 1),
            reads: Vec::new(),
            writes: Vec::new(),
        };
        let mut ids = Ids {
            keys: Vec::new(),
            vals: Vec::new(),
            base: Vec::new(),
        };
        let mut key_ids: HashMap<Atom, u32> = HashMap::new();
        // Most micro-ops name a value no other one does: size for half of them.
        let mut val_ids: HashMap<(u32, Atom), u32> = HashMap::with_capacity(h.mops.len() / 2);
        let mut intern = |ids: &mut Ids, k: Atom, v: Val| -> Kv {
            let kid = *key_ids.entry(k).or_insert_with(|| {
                ids.keys.push(k);
                ids.vals.push(vec![None]);
                ids.keys.len() as u32 - 1
            });
            let vid = match v {
                None => NIL,
                Some(a) => *val_ids.entry((kid, a)).or_insert_with(|| {
                    let vs = &mut ids.vals[kid as usize];
                    vs.push(Some(a));
                    vs.len() as u32 - 1
                }),
            };
            Kv { kid, vid }
        };
        let mut seen: Vec<Atom> = Vec::new();
        let mut r: Vec<(Atom, Val)> = Vec::new();
        let mut w: Vec<(Atom, Val)> = Vec::new();
        for op in &h.ops {
            ext.r_at.push(ext.reads.len() as u32);
            ext.w_at.push(ext.writes.len() as u32);
            if op.op_type == OpType::Invoke {
                continue;
            }
            seen.clear();
            r.clear();
            w.clear();
            for m in h.mops(op) {
                let v = arg_val(m.arg);
                match m.f {
                    MopFn::Read => {
                        if !seen.contains(&m.key) {
                            r.push((m.key, v));
                        }
                    }
                    _ => match w.iter_mut().find(|(k, _)| *k == m.key) {
                        Some(slot) => slot.1 = v,
                        None => w.push((m.key, v)),
                    },
                }
                if !seen.contains(&m.key) {
                    seen.push(m.key);
                }
            }
            order_map(h, &mut r);
            order_map(h, &mut w);
            for &(k, v) in &r {
                let e = intern(&mut ids, k, v);
                ext.reads.push(e);
            }
            for &(k, v) in &w {
                let e = intern(&mut ids, k, v);
                ext.writes.push(e);
            }
        }
        ext.r_at.push(ext.reads.len() as u32);
        ext.w_at.push(ext.writes.len() as u32);
        let mut total = 0u32;
        for vs in &ids.vals {
            ids.base.push(total);
            total += vs.len() as u32;
        }
        ids.base.push(total);
        (ext, ids)
    }

    fn reads(&self, i: usize) -> &[Kv] {
        &self.reads[self.r_at[i] as usize..self.r_at[i + 1] as usize]
    }

    fn writes(&self, i: usize) -> &[Kv] {
        &self.writes[self.w_at[i] as usize..self.w_at[i + 1] as usize]
    }

    /// The last version of key `k` an op interacted with (Elle's `v1` in
    /// `transaction-graph->version-graphs`): for `:ok`, the external write
    /// or else the external read (nil if neither); for `:info`, the write.
    fn last_version(&self, h: &History, i: usize, k: u32) -> Option<u32> {
        match h.ops[i].op_type {
            OpType::Ok => Some(
                get(self.writes(i), k)
                    .filter(|&v| v != NIL)
                    .or(get(self.reads(i), k).filter(|&v| v != NIL))
                    .unwrap_or(NIL),
            ),
            OpType::Info => get(self.writes(i), k),
            _ => None,
        }
    }

    /// The first version of `k` an op interacted with (Elle's `v2`): for
    /// `:ok`, the external read or else the external write; for `:info`, the
    /// write.
    fn first_version(&self, h: &History, i: usize, k: u32) -> Option<u32> {
        match h.ops[i].op_type {
            OpType::Ok => Some(
                get(self.reads(i), k)
                    .filter(|&v| v != NIL)
                    .or(get(self.writes(i), k).filter(|&v| v != NIL))
                    .unwrap_or(NIL),
            ),
            OpType::Info => get(self.writes(i), k),
            _ => None,
        }
    }
}

/// The `:ok` ops that externally wrote (or read) each (key, value) slot, in
/// history order: `ops[at[s]..at[s + 1]]`.
struct SlotIndex {
    at: Vec<u32>,
    ops: Vec<u32>,
}

impl SlotIndex {
    fn new(h: &History, ids: &Ids, ext: &Ext, side: fn(&Ext, usize) -> &[Kv]) -> SlotIndex {
        let slots = *ids.base.last().expect("base has a final entry") as usize;
        let mut at = vec![0u32; slots + 2];
        for (i, op) in h.ops.iter().enumerate() {
            if op.op_type == OpType::Ok {
                for e in side(ext, i) {
                    at[ids.slot(e.kid, e.vid) + 2] += 1;
                }
            }
        }
        for s in 2..at.len() {
            at[s] += at[s - 1];
        }
        let mut ops = vec![0u32; at[slots + 1] as usize];
        for (i, op) in h.ops.iter().enumerate() {
            if op.op_type == OpType::Ok {
                for e in side(ext, i) {
                    let c = &mut at[ids.slot(e.kid, e.vid) + 1];
                    ops[*c as usize] = i as u32;
                    *c += 1;
                }
            }
        }
        at.pop();
        SlotIndex { at, ops }
    }

    fn get(&self, slot: usize) -> &[u32] {
        &self.ops[self.at[slot] as usize..self.at[slot + 1] as usize]
    }
}

/// Version edges per key.
#[derive(Default, Debug)]
struct VersionGraphs {
    /// Keys with edges, in the order Elle's merged map first saw them.
    keys: Vec<u32>,
    /// Per key id: sorted, deduplicated (from, to) value ids.
    edges: Vec<Vec<(u32, u32)>>,
}

impl VersionGraphs {
    fn contains(&self, k: u32, a: u32, b: u32) -> bool {
        self.edges[k as usize].binary_search(&(a, b)).is_ok()
    }
}

/// Elle's `cyclic-version-cases` for the keys in `keys` (in order), whose
/// edges `edges_of` gives.
fn cyclic_cases<'a>(
    h: &History,
    ids: &Ids,
    edges_of: impl Fn(u32) -> &'a [(u32, u32)],
    keys: &[u32],
    sources: &[&str],
) -> Vec<Value> {
    let mut out = Vec::new();
    for &k in keys {
        let edges = edges_of(k);
        if edges.is_empty() {
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
type SourceEdges = Vec<(u32, u32, u32)>;

fn initial_state_source(h: &History, ext: &Ext) -> SourceEdges {
    let mut out = Vec::new();
    for (i, op) in h.ops.iter().enumerate() {
        if !matches!(op.op_type, OpType::Ok | OpType::Info) {
            continue;
        }
        let reads: &[Kv] = if op.op_type == OpType::Ok {
            ext.reads(i)
        } else {
            &[]
        };
        for e in ext.writes(i).iter().chain(reads) {
            if e.vid != NIL {
                out.push((e.kid, NIL, e.vid));
            }
        }
    }
    out
}

fn wfr_source(h: &History, ext: &Ext) -> SourceEdges {
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
fn sequential_source(h: &History, ext: &Ext) -> SourceEdges {
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
                let v1 = ext.last_version(h, a as usize, k).expect("ok op");
                let v2 = ext.first_version(h, i, k).expect("ok op");
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
fn linearizable_source(h: &History, ext: &Ext, keys: usize) -> SourceEdges {
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
                    let Some(v2) = ext.last_version(h, c, k) else {
                        continue;
                    };
                    for &a in f {
                        let v1 = ext.last_version(h, a as usize, k).expect("ok op");
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
fn merge_sorted(a: &[(u32, u32)], b: &[(u32, u32)]) -> Vec<(u32, u32)> {
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
fn version_graphs(
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
        let edges = match name {
            "initial-state" => initial_state_source(h, ext),
            "wfr-keys" => wfr_source(h, ext),
            "sequential-keys" => sequential_source(h, ext),
            _ => linearizable_source(h, ext, nk),
        };
        // Bucket the edges by key (keeping the order keys first appear).
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
        // Per key, the merged graph wherever the source adds an edge: only
        // those keys can have become cyclic.
        let mut merged: Vec<Option<Vec<(u32, u32)>>> = vec![None; nk];
        let mut fresh: Vec<(u32, u32)> = Vec::new();
        for &k in &order {
            let es = &mut bucket[at[k as usize] as usize..at[k as usize + 1] as usize];
            es.sort_unstable();
            let old = &graphs.edges[k as usize];
            fresh.clear();
            let mut prev = None;
            for &e in es.iter() {
                if prev != Some(e) && old.binary_search(&e).is_err() {
                    fresh.push(e);
                }
                prev = Some(e);
            }
            if !fresh.is_empty() {
                merged[k as usize] = Some(merge_sorted(old, &fresh));
            }
        }
        drop(bucket);
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

/// Elle's `op-internal-case` over every `:ok` op.
pub(crate) fn internal_cases(h: &History) -> Vec<Value> {
    let mut out = Vec::new();
    let mut state: Vec<(Atom, Val)> = Vec::new();
    for (i, op) in h.ops.iter().enumerate() {
        if op.op_type != OpType::Ok {
            continue;
        }
        state.clear();
        for m in h.mops(op) {
            let v = arg_val(m.arg);
            let slot = state.iter().position(|(k, _)| *k == m.key);
            if m.f == MopFn::Read {
                if let Some(j) = slot {
                    if state[j].1 != v {
                        out.push(Value::kw_map(vec![
                            ("op", h.op_value(i)),
                            ("mop", h.mop_value(m)),
                            ("expected", val_value(h, state[j].1)),
                        ]));
                        break;
                    }
                }
            }
            match slot {
                Some(j) => state[j].1 = v,
                None => state.push((m.key, v)),
            }
        }
    }
    out
}

/// Elle's `g1a-cases`: `:ok` reads of values written by `:fail`ed ops.
pub(crate) fn g1a_cases(h: &History) -> Vec<Value> {
    let mut failed: HashMap<(Atom, Val), u32> = HashMap::new();
    for (i, op) in h.ops.iter().enumerate() {
        if op.op_type == OpType::Fail {
            for m in h.mops(op) {
                if m.f == MopFn::Write {
                    failed.insert((m.key, arg_val(m.arg)), i as u32);
                }
            }
        }
    }
    let mut out = Vec::new();
    if failed.is_empty() {
        return out;
    }
    for (i, op) in h.ops.iter().enumerate() {
        if op.op_type != OpType::Ok {
            continue;
        }
        for m in h.mops(op) {
            if m.f != MopFn::Read {
                continue;
            }
            if let Some(&w) = failed.get(&(m.key, arg_val(m.arg))) {
                out.push(Value::kw_map(vec![
                    ("op", h.op_value(i)),
                    ("mop", h.mop_value(m)),
                    ("writer", h.op_value(w as usize)),
                ]));
            }
        }
    }
    out
}

/// Elle's `g1b-cases`: `:ok` reads of values some other op overwrote within
/// its own transaction.
pub(crate) fn g1b_cases(h: &History) -> Vec<Value> {
    let intermediate = super::txn::intermediate_writes(h, MopFn::Write, |m| arg_val(m.arg));
    let mut out = Vec::new();
    if intermediate.is_empty() {
        return out;
    }
    for (i, op) in h.ops.iter().enumerate() {
        if op.op_type != OpType::Ok {
            continue;
        }
        for m in h.mops(op) {
            if m.f != MopFn::Read {
                continue;
            }
            if let Some(&w) = intermediate.get(&(m.key, arg_val(m.arg))) {
                if h.ops[w as usize].index != op.index {
                    out.push(Value::kw_map(vec![
                        ("op", h.op_value(i)),
                        ("mop", h.mop_value(m)),
                        ("writer", h.op_value(w as usize)),
                    ]));
                }
            }
        }
    }
    out
}

/// Runs the full rw-register analysis. Fails when Elle would throw: see
/// [`validate`], and a value externally written to a key by more than one
/// `:ok` transaction when some transaction read it.
pub fn analyze(
    h: &History,
    extra: ExtraGraph,
    opts: &RwOptions,
) -> Result<Inference<'static>, Refusal> {
    validate(h)?;
    let (ext, ids) = Ext::new(h);
    let is_ok = |i: usize| h.ops[i].op_type == OpType::Ok;

    // Indexes of ok ops' external writes and reads.
    let writers = SlotIndex::new(h, &ids, &ext, Ext::writes);
    let readers = SlotIndex::new(h, &ids, &ext, Ext::reads);

    let mut edges: Vec<(u32, u32, Rels)> = Vec::new();
    let mut vertices: Vec<u32> = Vec::new();

    // wr edges; a read value with several writers is an error, as in Elle.
    for i in 0..h.ops.len() {
        if !is_ok(i) {
            continue;
        }
        for e in ext.reads(i) {
            match writers.get(ids.slot(e.kid, e.vid)) {
                [] => {}
                [w] => {
                    if *w == i as u32 {
                        vertices.push(*w);
                    } else {
                        edges.push((*w, i as u32, Rels::WR));
                    }
                }
                ws => {
                    let idx: Vec<String> = ws
                        .iter()
                        .map(|&w| h.ops[w as usize].index.to_string())
                        .collect();
                    let mut error = h.error_at(
                        ws[1] as usize,
                        format!(
                            "expected each value to be written to a key at most once, but key {} had value {} written by more than one op (indices {}), and read at index {}",
                            pr_str(&h.atom_value(ids.key(e.kid))),
                            pr_str(&val_value(h, ids.val(e.kid, e.vid))),
                            idx.join(", "),
                            h.ops[i].index
                        ),
                    );
                    error.kind = crate::error::InputErrorKind::RepeatedValues;
                    return Err(error.into());
                }
            }
        }
    }

    // Version graphs, then ww and rw edges from their direct edges.
    let (graphs, cyclic) = version_graphs(h, &ext, &ids, opts);
    for &k in &graphs.keys {
        for &(v1, v2) in &graphs.edges[k as usize] {
            let w2 = writers.get(ids.slot(k, v2));
            if w2.is_empty() {
                continue;
            }
            let w1 = writers.get(ids.slot(k, v1));
            let r1 = readers.get(ids.slot(k, v1));
            for (from, rel) in [(w1, Rels::WW), (r1, Rels::RW)] {
                for &a in from {
                    for &b in w2 {
                        if a == b {
                            vertices.push(a);
                        } else {
                            edges.push((a, b, rel));
                        }
                    }
                }
            }
        }
    }
    drop(writers);
    drop(readers);

    let mut explainers: Vec<Box<dyn PairExplainer>> = Vec::new();
    extra.add_edges(h, &mut edges);

    let mut anomalies = Anomalies::default();
    anomalies.add_nonempty("cyclic-versions", cyclic);
    anomalies.add_seq_nonempty("internal", internal_cases(h));
    anomalies.add_seq_nonempty("G1a", g1a_cases(h));
    anomalies.add_seq_nonempty("G1b", g1b_cases(h));
    anomalies.add_nonempty("lost-update", lost_updates(h, MopFn::Write));

    explainers.push(Box::new(RegisterExplainer { ext, ids, graphs }));
    extra.add_explainer(&mut explainers);
    vertices.sort_unstable();
    vertices.dedup();
    Ok(Inference {
        edges,
        anomalies,
        explainers,
        vertices,
    })
}

/// Explains wr, ww and rw steps between register transactions, consulted in
/// that order (Elle combines the wr explainer, then ww, then rw).
struct RegisterExplainer {
    ext: Ext,
    ids: Ids,
    graphs: VersionGraphs,
}

/// Elle's `index-of`: the first micro-op equal to `[f k v]`, or nil.
fn mop_index(h: &History, op: u32, f: MopFn, k: Atom, v: Val) -> Value {
    h.mops(&h.ops[op as usize])
        .iter()
        .position(|m| m.f == f && m.key == k && arg_val(m.arg) == v)
        .map_or(Value::Nil, |i| Value::Int(i as i64))
}

/// The wr step `a → b`: `b` read `k = v`, which `a` wrote (Elle's map and
/// sentence, with the micro-op positions).
pub(crate) fn wr_step(h: &History, a: u32, b: u32, k: Atom, v: Val) -> Step {
    Step {
        kind: StepKind::Wr,
        data: Value::kw_map(vec![
            ("type", Value::kw("wr")),
            ("key", h.atom_value(k)),
            ("value", val_value(h, v)),
            ("a-mop-index", mop_index(h, a, MopFn::Write, k, v)),
            ("b-mop-index", mop_index(h, b, MopFn::Read, k, v)),
        ]),
        text: StepText::RegisterWr {
            key: pr_str(&h.atom_value(k)),
            value: pr_str(&val_value(h, v)),
        },
    }
}

/// The ww (`kind` = [`StepKind::Ww`]: `a` wrote `k = va`) or rw (`a` read
/// `k = va`) step `a → b`, where `b` wrote the later version `vb`.
pub(crate) fn version_step(
    h: &History,
    a: u32,
    b: u32,
    kind: StepKind,
    k: Atom,
    va: Val,
    vb: Val,
) -> Step {
    let (kw, a_f) = match kind {
        StepKind::Ww => ("ww", MopFn::Write),
        _ => ("rw", MopFn::Read),
    };
    let key = pr_str(&h.atom_value(k));
    let value = pr_str(&val_value(h, va));
    let value2 = pr_str(&val_value(h, vb));
    Step {
        kind,
        data: Value::kw_map(vec![
            ("key", h.atom_value(k)),
            ("value", val_value(h, va)),
            ("value'", val_value(h, vb)),
            ("type", Value::kw(kw)),
            ("a-mop-index", mop_index(h, a, a_f, k, va)),
            ("b-mop-index", mop_index(h, b, MopFn::Write, k, vb)),
        ]),
        text: match kind {
            StepKind::Ww => StepText::RegisterWw { key, value, value2 },
            _ => StepText::RegisterRw { key, value, value2 },
        },
    }
}

impl RegisterExplainer {
    fn version_step(
        &self,
        h: &History,
        a: u32,
        b: u32,
        a_kvs: &[Kv],
        kind: StepKind,
    ) -> Option<Step> {
        let b_kvs = self.ext.writes(b as usize);
        a_kvs.iter().find_map(|e| {
            let vb = get(b_kvs, e.kid)?;
            self.graphs.contains(e.kid, e.vid, vb).then(|| {
                let k = self.ids.key(e.kid);
                let (va, vb) = (self.ids.val(e.kid, e.vid), self.ids.val(e.kid, vb));
                version_step(h, a, b, kind, k, va, vb)
            })
        })
    }
}

impl PairExplainer for RegisterExplainer {
    fn explain(&self, h: &History, a: u32, b: u32) -> Option<Step> {
        let reads = self.ext.reads(b as usize);
        let wr = self.ext.writes(a as usize).iter().find_map(|e| {
            (get(reads, e.kid) == Some(e.vid))
                .then(|| wr_step(h, a, b, self.ids.key(e.kid), self.ids.val(e.kid, e.vid)))
        });
        wr.or_else(|| self.version_step(h, a, b, self.ext.writes(a as usize), StepKind::Ww))
            .or_else(|| self.version_step(h, a, b, self.ext.reads(a as usize), StepKind::Rw))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::result::Expectations;
    use crate::model::SourceFormat;
    use crate::read::read_history_bytes;
    use crate::{Algorithm, CheckOptions, Workload};

    /// Builds a history of sequential transactions from `(process, type,
    /// txn)` triples: each is invoked (reads as nil) and completed before the
    /// next begins.
    fn sequential(txns: &[(i64, &str, &str)]) -> History {
        let mut text = String::new();
        for (p, t, txn) in txns {
            let mut inv = String::new();
            for mop in txn.split("] [") {
                let mop = mop.trim_matches(|c| c == '[' || c == ']');
                let parts: Vec<&str> = mop.split(' ').collect();
                if parts[0] == ":r" {
                    inv.push_str(&format!("[:r {} nil]", parts[1]));
                } else {
                    inv.push_str(&format!("[{mop}]"));
                }
            }
            text.push_str(&format!(
                "{{:type :invoke, :process {p}, :f :txn, :value [{inv}]}}\n{{:type :{t}, :process {p}, :f :txn, :value [{txn}]}}\n"
            ));
        }
        read_history_bytes(text.into_bytes(), "t.edn", SourceFormat::Edn).expect("readable")
    }

    fn check(h: &History, models: Option<Vec<&'static str>>, rw: RwOptions) -> Value {
        let opts = CheckOptions {
            expectations: Expectations {
                models,
                anomalies: vec![],
            },
            ..CheckOptions::default()
        };
        crate::check(
            h,
            &CheckOptions {
                algorithm: Algorithm::Infer,
                workload: Some(Workload::RwRegister),
                rw,
                ..opts.clone()
            },
        )
        .expect("analyzable")
        .result
    }

    /// Every accepted version-graph edge, as (key, from, to) values, and the
    /// cyclic-versions cases.
    fn val_edges(h: &History, opts: &RwOptions) -> (Vec<(Atom, Val, Val)>, Vec<Value>) {
        let (ext, ids) = Ext::new(h);
        let (g, cyclic) = version_graphs(h, &ext, &ids, opts);
        let mut out = Vec::new();
        for &k in &g.keys {
            for &(a, b) in &g.edges[k as usize] {
                out.push((ids.key(k), ids.val(k, a), ids.val(k, b)));
            }
        }
        (out, cyclic)
    }

    fn anomalies(result: &Value) -> String {
        pr_str(result.get_kw("anomalies").unwrap_or(&Value::Nil))
    }

    #[test]
    fn initial_state_orders_nil_before_every_value() {
        let h = sequential(&[(0, "ok", "[:w :x 1]"), (1, "ok", "[:r :x 1]")]);
        let (g, cyclic) = val_edges(&h, &RwOptions::default());
        assert!(cyclic.is_empty());
        let x = h.interner.lookup(&Value::kw("x")).expect("key");
        assert_eq!(g, vec![(x, None, Atom::int(1))]);
    }

    #[test]
    fn wfr_links_a_read_to_the_same_txns_write() {
        let h = sequential(&[(0, "ok", "[:w :x 1]"), (1, "ok", "[:r :x 1] [:w :x 2]")]);
        let opts = RwOptions {
            wfr_keys: true,
            ..RwOptions::default()
        };
        let (g, _) = val_edges(&h, &opts);
        let x = h.interner.lookup(&Value::kw("x")).expect("key");
        assert!(g.contains(&(x, Atom::int(1), Atom::int(2))));
        // Without the option, 1 and 2 are unordered.
        let (g, _) = val_edges(&h, &RwOptions::default());
        assert!(!g.contains(&(x, Atom::int(1), Atom::int(2))));
    }

    #[test]
    fn sequential_keys_find_g0_through_process_order() {
        // Elle's rw-register checker test "G0": only process order reveals
        // that x went 1, 2 and y went 1, 2.
        let h = sequential(&[
            (0, "ok", "[:w :x 1] [:w :y 2]"),
            (1, "ok", "[:w :x 2] [:w :y 1]"),
            (0, "ok", "[:r :x 2]"),
            (1, "ok", "[:r :y 2]"),
        ]);
        let plain = check(&h, Some(vec!["serializable"]), RwOptions::default());
        assert_eq!(pr_str(&plain), "{:valid? true}");
        let seq = RwOptions {
            sequential_keys: true,
            ..RwOptions::default()
        };
        let r = check(&h, Some(vec!["serializable"]), seq);
        assert_eq!(pr_str(r.get_kw("anomaly-types").expect("types")), "(:G0)");
        let a = anomalies(&r);
        assert!(
            a.contains("{:key :x, :value 1, :value' 2, :type :ww, :a-mop-index 0, :b-mop-index 0}"),
            "{a}"
        );
        assert!(
            a.contains("{:key :y, :value 1, :value' 2, :type :ww, :a-mop-index 1, :b-mop-index 1}"),
            "{a}"
        );
    }

    #[test]
    fn linearizable_keys_report_cyclic_versions_and_drop_the_source() {
        // Elle's "Read read returns what was just been written": x is set to
        // 1, then read as 2, then as 1 again.
        let h = sequential(&[
            (0, "ok", "[:w :x 1]"),
            (0, "ok", "[:r :x 2]"),
            (0, "ok", "[:r :x 1]"),
        ]);
        let lin = RwOptions {
            linearizable_keys: true,
            ..RwOptions::default()
        };
        let r = check(&h, None, lin);
        assert_eq!(
            anomalies(&r),
            "{:cyclic-versions [{:key :x, :scc #{1 2}, :sources [:initial-state :linearizable-keys]}]}"
        );
        assert_eq!(
            pr_str(r.get_kw("not").expect("not")),
            "#{:read-uncommitted}"
        );
    }

    #[test]
    fn cyclic_versions_sort_by_size_when_nil_is_involved() {
        // Elle's scc-sort-bug test: real time says x went 1 then nil (a
        // stale read), and 3 then 4, while writes-follow-reads says 4 then 3.
        let h = sequential(&[
            (0, "ok", "[:r :x 1]"),
            (0, "ok", "[:r :x nil]"),
            (0, "ok", "[:r :x 4] [:w :x 3]"),
            (0, "ok", "[:w :x 4]"),
        ]);
        let opts = RwOptions {
            wfr_keys: true,
            linearizable_keys: true,
            ..RwOptions::default()
        };
        let r = check(&h, Some(vec!["strong-serializable"]), opts);
        assert_eq!(
            pr_str(r.get_kw("anomaly-types").expect("types")),
            "(:G1c-realtime :cyclic-versions)"
        );
        let a = anomalies(&r);
        assert!(
            a.contains(":cyclic-versions [{:key :x, :scc #{nil 1}, :sources [:initial-state :wfr-keys :linearizable-keys]} {:key :x, :scc #{4 3}, :sources [:initial-state :wfr-keys :linearizable-keys]}]"),
            "{a}"
        );
    }

    #[test]
    fn a_txn_whose_only_edge_is_to_itself_is_still_a_vertex() {
        // rw from the txn's own read of nil to its own write: Elle removes
        // the self-edge but keeps the vertex, so the graph is not empty.
        let h = sequential(&[(0, "ok", "[:r :x nil] [:w :x 1]")]);
        assert_eq!(
            pr_str(&check(&h, None, RwOptions::default())),
            "{:valid? true}"
        );
        let h = sequential(&[(0, "ok", "[:w :x 1]")]);
        let r = check(&h, Some(vec!["serializable"]), RwOptions::default());
        assert_eq!(
            pr_str(r.get_kw("anomaly-types").expect("types")),
            "(:empty-transaction-graph)"
        );
    }

    #[test]
    fn lost_update_and_internal_cases() {
        let h = sequential(&[
            (0, "ok", "[:r :x 0] [:w :x 1]"),
            (1, "ok", "[:r :x 0] [:w :x 2]"),
            (2, "ok", "[:w :y 5] [:r :y 6]"),
        ]);
        let r = check(&h, None, RwOptions::default());
        let a = anomalies(&r);
        assert!(
            a.contains(":lost-update [{:key :x, :value 0, :txns ["),
            "{a}"
        );
        assert!(a.contains(":internal ({:op {"), "{a}");
        assert!(a.contains(":mop [:r :y 6], :expected 5}"), "{a}");
    }

    #[test]
    fn elle_errors_become_input_errors() {
        let bytes = |s: &str| s.as_bytes().to_vec();
        // A value written twice and read.
        let h = read_history_bytes(
            bytes("{:type :ok, :process 0, :value [[:w :x 1]]}\n{:type :ok, :process 1, :value [[:w :x 1]]}\n{:type :ok, :process 2, :value [[:r :x 1]]}\n"),
            "dup.edn",
            SourceFormat::Edn,
        )
        .expect("readable");
        let e = crate::check(
            &h,
            &CheckOptions {
                algorithm: Algorithm::Infer,
                workload: Some(Workload::RwRegister),
                rw: RwOptions::default(),
                ..CheckOptions::default()
            },
        )
        .expect_err("duplicate write")
        .into_input()
        .expect("an input error");
        assert_eq!((e.line, e.column), (2, 1), "{e}");
        assert!(e.message.contains("more than one op"), "{e}");
        // Keys of two types (Elle's assert-type-sanity).
        let h = read_history_bytes(
            bytes("{:type :ok, :process 0, :value [[:w :x 1]]}\n  {:type :ok, :process 1, :value [[:w \"x\" 2]]}\n"),
            "mixed.edn",
            SourceFormat::Edn,
        )
        .expect("readable");
        let e = crate::check(
            &h,
            &CheckOptions {
                algorithm: Algorithm::Infer,
                workload: Some(Workload::RwRegister),
                rw: RwOptions::default(),
                ..CheckOptions::default()
            },
        )
        .expect_err("mixed keys")
        .into_input()
        .expect("an input error");
        assert_eq!((e.line, e.column), (2, 3), "{e}");
        // Micro-ops other than :r and :w.
        let h = read_history_bytes(
            bytes("{:type :ok, :process 0, :value [[:append :x 1]]}\n"),
            "append.edn",
            SourceFormat::Edn,
        )
        .expect("readable");
        let e = crate::check(
            &h,
            &CheckOptions {
                algorithm: Algorithm::Infer,
                workload: Some(Workload::RwRegister),
                rw: RwOptions::default(),
                ..CheckOptions::default()
            },
        )
        .expect_err("append")
        .into_input()
        .expect("an input error");
        assert!(e.message.contains(":append"), "{e}");
    }

    #[test]
    fn linearizable_keys_never_fire_on_strict_serializable_histories() {
        use crate::gen::{generate, GenOptions, Workload};
        for seed in 0..15 {
            let opts = GenOptions {
                workload: Workload::RwRegister,
                txns: 200,
                processes: 5,
                fail_fraction: 0.1,
                info_fraction: 0.1,
                seed,
                ..GenOptions::default()
            };
            let mut bytes = Vec::new();
            generate(&opts, &mut bytes).expect("generated");
            let h = read_history_bytes(bytes, "gen", SourceFormat::Edn).expect("readable");
            let all = RwOptions {
                linearizable_keys: true,
                sequential_keys: true,
                wfr_keys: true,
            };
            assert_eq!(
                pr_str(&check(&h, None, all)),
                "{:valid? true}",
                "seed {seed}"
            );
        }
    }
}
