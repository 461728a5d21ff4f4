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

use super::txn::{lost_updates, ExtraGraph, ReadsCounted, TxnMap};
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
///
/// The ops are checked in two halves, on two cores when one is free (issue
/// 23); the first half's error, if any, is the one reported, and the second
/// half compares keys with the history's first key, as one pass would.
pub fn validate(h: &History) -> Result<(), InputError> {
    validate_splitting_from(h, crate::par::SPLIT_FROM)
}

/// [`validate`], the ops cut in two from `split` ops on.
fn validate_splitting_from(h: &History, split: usize) -> Result<(), InputError> {
    super::txn::validate_in_halves(h, split, |r, first_key| validate_ops(h, r, first_key))
}

/// [`validate`] over the ops at `range`; keys must have the class of
/// `first_key` (the history's first).
fn validate_ops(
    h: &History,
    range: std::ops::Range<usize>,
    first_key: Option<Atom>,
) -> Result<(), InputError> {
    let mut keys = super::txn::OneKeyType::new(key_class);
    if let Some(k0) = first_key {
        // Sets the class every key must have; cannot fail.
        let _ = keys.check(h, k0);
    }
    for i in range {
        let Some(op) = h.ops.get(i) else { break };
        if let OpValue::Other(_) = op.value {
            return Err(h.error_at(
                i,
                "expected a vector of [:r k v] / [:w k v] micro-ops as the :value of an rw-register op"
                    .into(),
            ));
        }
        for m in h.mops(op) {
            match m.f() {
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
            if let MopArg::List { .. } = m.arg() {
                return Err(h.error_at(
                    i,
                    format!(
                        "expected a single value or nil in an rw-register micro-op, found {}",
                        pr_str(&h.mop_value(m))
                    ),
                ));
            }
            if let Err((k0, c0, k, class)) = keys.check(h, m.key()) {
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
    /// Each op's type, for the passes that need only that (issue 23).
    types: Vec<OpType>,
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
            types: Vec::with_capacity(n),
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
        let mut key_ids = AtomIds::default();
        let mut val_ids: Vec<AtomIds> = Vec::new();
        let mut intern = |ids: &mut Ids, k: Atom, v: Val| -> Kv {
            let kid = key_ids.id(k, || {
                ids.keys.push(k);
                ids.vals.push(vec![None]);
                val_ids.push(AtomIds::default());
                ids.keys.len() as u32 - 1
            });
            let vid = match v {
                None => NIL,
                Some(a) => val_ids[kid as usize].id(a, || {
                    let vs = &mut ids.vals[kid as usize];
                    vs.push(Some(a));
                    vs.len() as u32 - 1
                }),
            };
            Kv { kid, vid }
        };
        // Per transaction: the keys seen, and each written key's place
        // in `w`.
        let mut seen: TxnMap<()> = TxnMap::default();
        let mut w_at: TxnMap<usize> = TxnMap::default();
        let mut r: Vec<(Atom, Val)> = Vec::new();
        let mut w: Vec<(Atom, Val)> = Vec::new();
        for op in &h.ops {
            ext.types.push(op.op_type);
            ext.r_at.push(ext.reads.len() as u32);
            ext.w_at.push(ext.writes.len() as u32);
            if op.op_type == OpType::Invoke {
                continue;
            }
            seen.clear();
            w_at.clear();
            r.clear();
            w.clear();
            for m in h.mops(op) {
                let v = arg_val(m.arg());
                let first = !seen.contains(m.key());
                match m.f() {
                    MopFn::Read => {
                        if first {
                            r.push((m.key(), v));
                        }
                    }
                    _ => match w_at.get(m.key()) {
                        Some(&at) => w[at].1 = v,
                        None => {
                            w_at.push(m.key(), w.len());
                            w.push((m.key(), v));
                        }
                    },
                }
                if first {
                    seen.push(m.key(), ());
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
    fn last_version(&self, i: usize, k: u32) -> Option<u32> {
        match self.types[i] {
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
    fn first_version(&self, i: usize, k: u32) -> Option<u32> {
        match self.types[i] {
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
    /// The index of `side` (external writes or reads); with `wanted`, of
    /// the slots it marks only (the others look empty).
    fn new(
        ids: &Ids,
        ext: &Ext,
        side: fn(&Ext, usize) -> &[Kv],
        wanted: Option<&[bool]>,
    ) -> SlotIndex {
        let slots = *ids.base.last().expect("base has a final entry") as usize;
        let want = |s: usize| wanted.is_none_or(|w| w.get(s).copied().unwrap_or(false));
        let mut at = vec![0u32; slots + 2];
        for (i, &t) in ext.types.iter().enumerate() {
            if t == OpType::Ok {
                for e in side(ext, i) {
                    let s = ids.slot(e.kid, e.vid);
                    if want(s) {
                        at[s + 2] += 1;
                    }
                }
            }
        }
        for s in 2..at.len() {
            at[s] += at[s - 1];
        }
        let mut ops = vec![0u32; at[slots + 1] as usize];
        for (i, &t) in ext.types.iter().enumerate() {
            if t == OpType::Ok {
                for e in side(ext, i) {
                    let s = ids.slot(e.kid, e.vid);
                    if want(s) {
                        let c = &mut at[s + 1];
                        ops[*c as usize] = i as u32;
                        *c += 1;
                    }
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

mod atom_ids;
mod cases;
mod edges;
mod explain;
#[cfg(test)]
mod tests;
mod versions;

pub(crate) use atom_ids::AtomIds;
pub(crate) use cases::{g1a_cases, g1b_cases, internal_cases, internal_cases_in};
use edges::wr_edges;
pub(crate) use explain::{version_step, wr_step};
use explain::{RegisterExplainer, Tables, RECOMPUTE_TABLES_FROM};
use versions::{version_graphs, VersionGraphs};

/// Runs the full rw-register analysis. Fails when Elle would throw: see
/// [`validate`], and a value externally written to a key by more than one
/// `:ok` transaction when some transaction read it.
pub fn analyze(
    h: &History,
    extra: ExtraGraph,
    opts: &RwOptions,
) -> Result<Inference<'static>, Refusal> {
    validate(h)?;
    analyze_validated(h, extra, opts)
}

/// [`analyze`] of a history [`validate`] accepted already (`auto` checks
/// it first: issue 23, one pass fewer).
pub fn analyze_validated(
    h: &History,
    extra: ExtraGraph,
    opts: &RwOptions,
) -> Result<Inference<'static>, Refusal> {
    analyze_knowing(h, extra, opts, Known::default())
}

/// The external reads and writes of a history, numbered ([`number`]):
/// the first step of the inference, which needs nothing else.
pub struct Numbered {
    ext: Ext,
    ids: Ids,
}

/// Numbers the external reads and writes of `h` (the inference's first
/// step), for [`Known::numbered`].
pub fn number(h: &History) -> Numbered {
    let (ext, ids) = timed("external reads and writes", || Ext::new(h));
    Numbered { ext, ids }
}

/// What `auto` learned before the inference (issue 23: each computed once,
/// and the numbering beside the misread scan, whose writes pass has one
/// core only).
#[derive(Default)]
pub struct Known {
    /// Elle's G1a and G1b cases (`g1a_cases`, `g1b_cases`), from the
    /// misread scan.
    pub dirty: Option<[Vec<Value>; 2]>,
    /// The external reads and writes ([`number`]).
    pub numbered: Option<Numbered>,
    /// Which reads the lost-update check counts: Elle's by default;
    /// `auto` counts external reads only, so that a read following the
    /// transaction's own write reports no lost update (exact, where Elle's
    /// count needed the exact checker).
    pub lost_update_reads: ReadsCounted,
}

/// [`analyze_validated`], given what the caller computed already.
pub fn analyze_knowing(
    h: &History,
    extra: ExtraGraph,
    opts: &RwOptions,
    known: Known,
) -> Result<Inference<'static>, Refusal> {
    let Known {
        dirty,
        numbered,
        lost_update_reads,
    } = known;
    // The non-cycle checks need only the history: beside the numbering
    // when it is still to do, else beside the version graphs after the
    // writer index, with the second half of the internal cases after the
    // reader index (issue 23: a core for each half, ending together; the
    // same result on one thread). The order graph's edges are generated
    // when the graph is built (`Inference::order`), never listed.
    let half = h.ops.len() / 2;
    let cases = || {
        timed("non-cycle cases", || {
            let [g1a, g1b] = dirty.unwrap_or_else(|| [g1a_cases(h), g1b_cases(h)]);
            let internal = internal_cases_in(h, 0..half);
            [
                internal,
                g1a,
                g1b,
                lost_updates(h, MopFn::Write, lost_update_reads),
            ]
        })
    };
    let later_internal = || internal_cases_in(h, half..h.ops.len());
    let (main, cases, later) = match numbered {
        Some(Numbered { ext, ids }) => timed("data edges", || {
            data_edges(h, opts, ext, ids, cases, later_internal)
        }),
        None => {
            let (Numbered { ext, ids }, cases) = crate::par::join(|| number(h), cases);
            timed("data edges", || {
                data_edges(h, opts, ext, ids, || cases, later_internal)
            })
        }
    };
    let (edges, mut vertices, cyclic, explainer) = main?;
    let [mut internal, g1a, g1b, lost] = cases;
    internal.extend(later);
    let mut explainers: Vec<Box<dyn PairExplainer>> = Vec::new();

    let mut anomalies = Anomalies::default();
    anomalies.add_nonempty("cyclic-versions", cyclic);
    anomalies.add_seq_nonempty("internal", internal);
    anomalies.add_seq_nonempty("G1a", g1a);
    anomalies.add_seq_nonempty("G1b", g1b);
    anomalies.add_nonempty("lost-update", lost);

    explainers.push(Box::new(explainer));
    extra.add_explainer(&mut explainers);
    vertices.sort_unstable();
    vertices.dedup();
    Ok(Inference {
        edges,
        order: extra,
        anomalies,
        explainers,
        vertices,
    })
}

/// Runs `f`; with `ELLERY_RW_TIMING` set, says on standard error how long
/// it took (the steps of a big inference, to see where its time goes).
fn timed<T>(step: &str, f: impl FnOnce() -> T) -> T {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    if !*ON.get_or_init(|| std::env::var_os("ELLERY_RW_TIMING").is_some()) {
        return f();
    }
    let t = std::time::Instant::now();
    let r = f();
    eprintln!(
        "ellery: rw-register {step}: {:.3} s",
        t.elapsed().as_secs_f64()
    );
    r
}

/// The data edges of [`analyze`] (wr, then ww and rw from the version
/// graphs) from the external reads and writes `ext` (numbered by `ids`),
/// the ops with a self-dependency (vertices without edges), the
/// cyclic-versions cases and the explainer; an error when a read value has
/// several writers, as in Elle. Also `after_writers`'s and
/// `after_readers`'s results: other work, run after the writer index
/// beside the version graphs and after the reader index.
#[allow(clippy::type_complexity)]
fn data_edges<T: Send, U: Send>(
    h: &History,
    opts: &RwOptions,
    ext: Ext,
    ids: Ids,
    after_writers: impl FnOnce() -> T + Send,
    after_readers: impl FnOnce() -> U + Send,
) -> (
    Result<
        (
            Vec<(u32, u32, Rels)>,
            Vec<u32>,
            Vec<Value>,
            RegisterExplainer,
        ),
        Refusal,
    >,
    T,
    U,
) {
    // The version graphs (and then the reader index, which needs them)
    // beside the writer index and `after_writers`, on two cores when one
    // is free (issue 23).
    let ((graphs, cyclic, readers, later), (writers, after)) = crate::par::join(
        || {
            let (graphs, cyclic) = timed("version graphs", || version_graphs(h, &ext, &ids, opts));
            // Readers matter only at the versions version edges leave (all
            // at `nil` by default): the others are never indexed (most
            // reads are of values nothing follows).
            let readers = timed("reader index", || {
                let mut wanted = vec![false; ids.base.last().map_or(0, |&n| n as usize)];
                for &k in &graphs.keys {
                    for &(v1, _) in &graphs.edges[k as usize] {
                        wanted[ids.slot(k, v1)] = true;
                    }
                }
                SlotIndex::new(&ids, &ext, Ext::reads, Some(&wanted))
            });
            (graphs, cyclic, readers, after_readers())
        },
        || {
            let writers = timed("writer index", || {
                SlotIndex::new(&ids, &ext, Ext::writes, None)
            });
            (writers, after_writers())
        },
    );

    // A big history's explainer computes its tables again if ever asked
    // (issue 23: memory), so each goes after the last step using it: the
    // external writes now, the reads after the wr edges.
    let big = h.ops.len() >= RECOMPUTE_TABLES_FROM;
    let mut ext = ext;
    if big {
        ext.writes = Vec::new();
        ext.w_at = Vec::new();
    }
    // wr edges; a read value with several writers is an error, as in Elle.
    let (mut edges, mut vertices) = match wr_edges(h, &ext, &ids, &writers, crate::par::SPLIT_FROM)
    {
        Ok(found) => found,
        Err(e) => return (Err(e), after, later),
    };

    let ext = (!big).then_some(ext);
    // ww and rw edges from the version graphs' direct edges.
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
    let tables = ext.map(|ext| Tables { ext, ids, graphs });
    let explainer = RegisterExplainer::new(opts, tables);
    (Ok((edges, vertices, cyclic, explainer)), after, later)
}
