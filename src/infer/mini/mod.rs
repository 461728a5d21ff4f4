//! Mini-transaction (MT) histories, after Wei et al., "Boosting End-to-End
//! Database Isolation Checking via Mini-Transactions" (MTC, ICDE 2025).
//!
//! A **mini-transaction** (Definition 8) has one or two reads and at most two
//! writes, and every write follows a read of the same key in the same
//! transaction (read-modify-write). In an **MT history** (Definition 9) every
//! committed or indeterminate transaction is an MT and no value is written
//! twice to a key. Then the dependency graph is fixed:
//!
//! * **wr**: a read of `k = v` comes from the one transaction whose final
//!   write of `k` is `v` (unique values);
//! * **ww**: a writer of `k` immediately follows the version of `k` it read
//!   (RMW), so every ww edge coincides with a wr edge, except from the
//!   initial state, which is no transaction;
//! * **rw**: every other reader of that version precedes the writer (never
//!   the writer itself: the `T ≠ S` guard the paper's Algorithm 1 omits).
//!
//! Two writers that read the same version is the paper's DIVERGENCE, Elle's
//! `lost-update`. That single graph, plus process or real-time order, is
//! handed to the ordinary cycle search, so cycles are reported in Elle's
//! vocabulary; the tests (`tests/mini/decide.rs`) hold the paper's linear-time decision
//! procedures for SER, SI and SSER on the same graph.
//!
//! **Workloads.** For rw-register histories the version of a read is the
//! value read (`nil` is the initial state). For list-append histories the
//! version of a read is the last element of the list (`nil` or `[]` is the
//! initial state), an `[:append k e]` creates version `e`, and each read list
//! must be the chain of read-modify-writes that ends in its last element
//! (otherwise the history leaves the fast path: see [`NotMini`]). Under that
//! condition a list-append MT history is equivalent to the register history
//! of its last elements.
//!
//! **Pre-checks** (the paper's footnote 1) are reported with Elle's own
//! cases: `internal` (not-my-own-write, not-my-last-write, non-repeatable
//! read), `G1a` (aborted read), `G1b` (intermediate read), `lost-update`
//! (divergence); list-append also `future-read`, `incompatible-order` and
//! `dirty-update`. Two additions Elle's rw-register checker does not make:
//! a read of a value the transaction itself writes later is `future-read`
//! (`{:op :mop :element}`), and a read of a value nobody wrote (thin air) is
//! `G1a` with `:writer nil`; for lists, one case per element nobody appended
//! (`{:op :mop :writer nil :element}`, see
//! [`list_append::thin_air_reads`]), and such a read's order is not checked.
//!
//! **Indeterminate transactions.** An `:info` transaction whose write was
//! read by a committed transaction (for lists: shown in a committed read)
//! committed, so all its final writes are versions with the edges a
//! committed writer's get: wr into their readers, ww and rw onward, and ww
//! and rw into it from the version each write followed. Its own reads are
//! unknown, so that version is the element before it in a list that shows
//! it, or else the key's last version (the end of the chain of
//! read-modify-writes from the initial state), where it must be under any
//! model that proscribes G-single (see `attach_info`; two such writes on
//! one key leave the fast path, their order being a choice). Unobserved
//! `:info` writes are dropped (assuming they did not happen only removes
//! constraints), as are `:fail`ed ones (which only serve to name G1a).
//!
//! **Dependencies.** What both workloads share comes from [`super::txn`];
//! the pre-checks' cases are each workload's own finders
//! ([`super::list_append`], [`super::rw_register`]): this path is an
//! algorithm over both workloads, and Elle's cases are defined there.

use super::list_append;
use super::rw_register;
use super::txn::{lost_updates, ExtraGraph, ReadsCounted};
use super::{Anomalies, Inference, PairExplainer, Refusal, Step, StepKind, StepText};
use crate::edn::{pr_str, Value};
use crate::graph::Rels;
use crate::model::{Atom, History, Mop, MopArg, MopFn, OpType, Workload, NO_OP};
use hashbrown::HashMap;

mod boundary;
mod edges;
pub mod elle_subgraph;
mod explain;
mod info;
mod lists;
pub mod shapes;
mod versions;

use boundary::placed_pairs;
pub use boundary::placement_boundary;
use edges::{data_edges, push_succ};
use explain::MiniExplainer;
use info::attach_info;
use lists::{append_pred, check_list, list_thin_air};
use shapes::{check_shapes, note_writes};
use versions::Versions;

/// Why a history is not an MT history the fast path can decide: the
/// offending op (a position in `History::ops`) and the reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NotMini {
    /// Position of an offending op.
    pub pos: usize,
    /// What is wrong, as a sentence fragment.
    pub reason: String,
}

/// A version of a key: `None` is the initial state, else the value (list
/// element) that created it.
pub type Ver = Option<Atom>;

/// One transaction of the MT graph (at most two reads and two writes,
/// stored inline).
#[derive(Clone, Copy, Debug, Default)]
pub struct MtTxn {
    reads: [(Atom, Ver); 2],
    writes: [(Atom, Atom, Ver, bool); 2],
    /// Version slots of the reads (see `Versions`).
    read_slots: [u32; 2],
    nreads: u8,
    nwrites: u8,
    /// An observed `:info` transaction.
    info: bool,
}

impl MtTxn {
    /// External reads `(key, version)` whose source is a committed
    /// transaction or the initial state.
    pub fn reads(&self) -> &[(Atom, Ver)] {
        &self.reads[..self.nreads as usize]
    }

    /// Final writes `(key, value, version read before it, whether that
    /// version is known)`; unknown for `:info` transactions.
    pub fn writes(&self) -> &[(Atom, Atom, Ver, bool)] {
        &self.writes[..self.nwrites as usize]
    }

    fn push_read(&mut self, r: (Atom, Ver), slot: u32) {
        self.reads[self.nreads as usize] = r;
        self.read_slots[self.nreads as usize] = slot;
        self.nreads += 1;
    }

    fn push_write(&mut self, w: (Atom, Atom, Ver, bool)) {
        if (self.nwrites as usize) < 2 {
            self.writes[self.nwrites as usize] = w;
            self.nwrites += 1;
        }
    }
}

/// Counts describing an MT graph, for `--verbose`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MtStats {
    /// Committed (`:ok`) transactions.
    pub committed: usize,
    /// `:info` transactions whose writes were observed.
    pub observed_info: usize,
    /// Versions read-modify-written by two or more transactions.
    pub divergences: usize,
    /// wr, ww and rw edges.
    pub data_edges: usize,
}

/// The MT dependency graph of a history, as an [`Inference`] plus counts.
pub struct MiniAnalysis {
    /// Edges, anomalies and explainers for the pipeline's cycle search.
    pub inference: Inference<'static>,
    /// Counts.
    pub stats: MtStats,
    /// Whether some version was read-modify-written twice (DIVERGENCE).
    pub divergent: bool,
    /// Transaction pairs (op positions, sorted) whose edge rests on an
    /// `:info` write's placement after its key's last version (see
    /// [`placement_boundary`]).
    pub placed: Vec<(u32, u32)>,
}

/// A write's record in the unique-value index.
#[derive(Clone, Copy, Debug)]
struct WriteRec {
    /// The writing op, or [`NONE`] for a slot nobody wrote.
    pos: u32,
    /// Position of the mop in its op.
    mop: u32,
    status: OpType,
    /// The transaction's last write of the key.
    last: bool,
}

const NONE: u32 = u32::MAX;

const EMPTY: WriteRec = WriteRec {
    pos: NONE,
    mop: 0,
    status: OpType::Invoke,
    last: false,
};

/// Global positions of the micro-ops of a transaction (see [`txn_mops`]).
fn txn_mop_range(h: &History, i: usize) -> std::ops::Range<usize> {
    let range = |op: &crate::model::Op| match op.value {
        crate::model::OpValue::Mops { start, len } => start as usize..(start + len) as usize,
        _ => 0..0,
    };
    let r = range(&h.ops[i]);
    if r.is_empty() {
        if let Some(inv) = h.invocation_of(i) {
            return range(&h.ops[inv]);
        }
    }
    r
}

/// The read-modify-writers of one version: the first inline, the others
/// (a DIVERGENCE) in an overflow list.
#[derive(Clone, Copy, Debug)]
struct Succ {
    first: u32,
    more: u32,
}

fn is_write(f: MopFn) -> bool {
    matches!(f, MopFn::Write | MopFn::Append)
}

/// The version a read micro-op observed.
fn read_version(h: &History, m: &Mop) -> Ver {
    match m.arg() {
        MopArg::Nil | MopArg::Pred(_) => None,
        MopArg::Atom(a) => Some(a),
        MopArg::List { .. } => h.list(m.arg()).last().copied(),
    }
}

/// The micro-ops of a completion, or of its invocation when the completion
/// carries none (Jepsen's `:info`/`:fail` completions sometimes do not).
fn txn_mops(h: &History, i: usize) -> &[Mop] {
    &h.mops[txn_mop_range(h, i)]
}

/// The micro-ops of op `i` whose writes enter the unique-value index: a
/// completion's (any outcome), or an invocation's that never completed.
fn indexed_mops(h: &History, i: usize) -> std::ops::Range<usize> {
    match h.ops[i].op_type {
        OpType::Invoke if h.pair[i] != NO_OP => 0..0,
        _ => txn_mop_range(h, i),
    }
}

/// Builds the MT graph of `h`, or says why `h` is not an MT history with
/// unique values (the fast path's preconditions). `extra` adds process or
/// real-time order, as for the workload inferences.
pub fn analyze(h: &History, w: Workload, extra: ExtraGraph) -> Result<MiniAnalysis, Refusal> {
    analyze_with(h, w, extra, true)
}

/// Whether [`analyze_with`] may take every read-modify-write as immediately
/// following the version it read, for a check of these models and extra
/// anomalies (a check's expectations): some expected model proscribes
/// G-single-item (no models: Elle's default, strict serializability), or an
/// anomaly looked for (`-a`) is a cycle with an rw edge (G-single,
/// G-nonadjacent, G2 and their variants).
pub fn immediate_for(models: Option<&[&str]>, anomalies: &[&str]) -> bool {
    use crate::consistency::{all_implied_anomalies, anomalies_prohibited_by};
    let models: &[&str] = models.unwrap_or(&["strict-serializable"]);
    anomalies_prohibited_by(models).map_or(true, |a| a.contains("G-single-item"))
        || all_implied_anomalies(anomalies).iter().any(|a| {
            ["G-single", "G-nonadjacent", "G2"]
                .iter()
                .any(|p| a.starts_with(p))
        })
}

/// [`analyze`], saying whether the checked models make every
/// read-modify-write immediately follow the version it read (`immediate`):
/// true when some checked model proscribes G-single (`consistent-view`,
/// `repeatable-read`, snapshot isolation, serializability and everything
/// stronger), since a version between the one read and the write, or a
/// second writer of the same version, is a G-single cycle. Only then is an
/// observed `:info` transaction's write of a key whose predecessor no read
/// reveals placed after the key's last version (see `attach_info`);
/// under weaker models its place in the version order is free, so no edge
/// enters it there. [`analyze`] assumes `true`.
pub fn analyze_with(
    h: &History,
    w: Workload,
    extra: ExtraGraph,
    immediate: bool,
) -> Result<MiniAnalysis, Refusal> {
    // A cas-register history leaves the path at its first op, which is no
    // vector of micro-ops.
    build(h, w, extra, immediate).map_err(Refusal::NotApplicable)
}

/// The unique-value index: every written `(key, value)`'s slot and record.
struct Index {
    versions: Versions,
    recs: Vec<WriteRec>,
    /// List-append: the version each committed append followed, by slot
    /// (read where the list checks need it, without revisiting the writer).
    preds: Vec<Ver>,
}

/// Phase 1 of [`build`]: shapes, then the unique-value index over every
/// write of every transaction (any outcome; invocations only when never
/// completed).
fn index_writes(h: &History, w: Workload) -> Result<Index, NotMini> {
    let n = h.ops.len();
    let not = |pos: usize, reason: String| NotMini { pos, reason };
    let shape_error = check_shapes(h, w);
    let indexed = shape_error.as_ref().map_or(n, |e| e.pos);
    // Key ids for the micro-ops the index reads: all, or those of the ops
    // before the one that is no mini-transaction.
    let mops = if indexed == n {
        h.mops.len()
    } else {
        (0..indexed)
            .map(|i| indexed_mops(h, i).end)
            .max()
            .unwrap_or(0)
    };
    let mut versions = Versions::new(h, mops);
    note_writes(h, &mut versions, indexed);
    versions.assign();
    let mut recs: Vec<WriteRec> = vec![EMPTY; versions.writes as usize];
    let list = w == Workload::ListAppend;
    let mut preds: Vec<Ver> = vec![None; if list { recs.len() } else { 0 }];
    for (i, op) in h.ops.iter().enumerate().take(indexed) {
        let range = indexed_mops(h, i);
        let mops = &h.mops[range.clone()];
        for (j, g) in range.enumerate() {
            let m = &mops[j];
            let MopArg::Atom(v) = m.arg() else { continue };
            if !is_write(m.f()) {
                continue;
            }
            let s = versions.slot_or_new(versions.mop_kid[g], v) as usize;
            if s >= recs.len() {
                recs.resize(s + 1, EMPTY); // a new slot of a hashed key
                if list {
                    preds.resize(s + 1, None);
                }
            }
            let prev = recs[s].pos;
            if prev != NONE {
                return Err(not(
                    i,
                    format!(
                        "values are not unique: key {} was written {} by the ops at indices {} and {}",
                        pr_str(&h.atom_value(m.key())),
                        pr_str(&h.atom_value(v)),
                        h.ops[prev as usize].index,
                        op.index
                    ),
                ));
            }
            recs[s] = WriteRec {
                pos: i as u32,
                mop: j as u32,
                status: op.op_type,
                last: !mops[j + 1..]
                    .iter()
                    .any(|m2| is_write(m2.f()) && m2.key() == m.key()),
            };
            if list && op.op_type == OpType::Ok {
                preds[s] = append_pred(h, &mops[..j], m.key());
            }
        }
    }
    if let Some(e) = shape_error {
        return Err(e);
    }
    Ok(Index {
        versions,
        recs,
        preds,
    })
}

/// What phase 2 of [`build`] finds: the committed transactions' nodes,
/// external reads and final writes, and the read-modify-writers of each
/// version.
struct Committed {
    /// Node of each op (`NONE`: none).
    node: Vec<u32>,
    txns: Vec<MtTxn>,
    /// rw-register: reads of the transaction's own later write.
    future: Vec<Value>,
    /// Reads of a value nobody wrote.
    thin_air: Vec<Value>,
    /// Version slot → RMW writers of that version.
    succ: Vec<Succ>,
    more: Vec<Vec<u32>>,
    /// List-append: the version each element appended by an `:info`
    /// transaction followed (by slot), from the first list that shows it.
    pred_of: HashMap<u32, Ver>,
    stats: MtStats,
    /// A write after a read with no committed source: Elle's lost-update
    /// check must then look beyond the divergences of the MT graph.
    bad_rmw: bool,
}

/// Phase 2 of [`build`]: external reads of committed transactions and
/// their sources.
fn committed_reads(h: &History, w: Workload, ix: &Index) -> Result<Committed, NotMini> {
    let n = h.ops.len();
    let (versions, recs, preds) = (&ix.versions, &ix.recs, &ix.preds);
    let mut node: Vec<u32> = vec![NONE; n];
    let mut txns: Vec<MtTxn> = Vec::new();
    let mut future: Vec<Value> = Vec::new();
    let mut thin_air: Vec<Value> = Vec::new();
    // Version slot → RMW writers of that version.
    let mut succ: Vec<Succ> = vec![
        Succ {
            first: NONE,
            more: NONE
        };
        versions.len()
    ];
    let mut more: Vec<Vec<u32>> = Vec::new();
    // List-append: the version each element appended by an `:info`
    // transaction followed (by slot), from the first list that shows it.
    let mut pred_of: HashMap<u32, Ver> = HashMap::new();
    let mut stats = MtStats::default();
    // A write after a read with no committed source: Elle's lost-update
    // check must then look beyond the divergences of the MT graph.
    let mut bad_rmw = false;
    // Per ok transaction: (key id, version, version slot or NONE when
    // its source is not committed) of first reads; (key id, key, value)
    // of final writes.
    let mut first_read: Vec<(u32, Ver, u32)> = Vec::with_capacity(2);
    let mut final_write: Vec<(u32, Atom, Atom)> = Vec::with_capacity(2);
    // List-append: `check_list`'s buffer of element slots.
    let mut list_slots: Vec<u32> = Vec::new();
    for (i, op) in h.ops.iter().enumerate() {
        if op.op_type != OpType::Ok {
            continue;
        }
        stats.committed += 1;
        // Each `:ok` op is visited once, before `attach_info` adds the
        // `:info` nodes: its node is new.
        let t = txns.len();
        node[i] = t as u32;
        txns.push(MtTxn::default());
        let range = txn_mop_range(h, i);
        let mops = &h.mops[range.clone()];
        first_read.clear();
        final_write.clear();
        for (j, g) in range.enumerate() {
            let m = &mops[j];
            let kid = versions.mop_kid[g];
            if m.f() != MopFn::Read {
                let MopArg::Atom(x) = m.arg() else { continue };
                match final_write.iter_mut().find(|p| p.0 == kid) {
                    Some(p) => p.2 = x,
                    None => final_write.push((kid, m.key(), x)),
                }
                continue;
            }
            if final_write.iter().any(|p| p.0 == kid) || first_read.iter().any(|r| r.0 == kid) {
                continue; // internal reads: Elle's internal check
            }
            let v = read_version(h, m);
            let good =
                read_has_source(h, w, ix, (i, mops, j, kid), v, (&mut future, &mut thin_air))?;
            let slot = match good {
                true => versions.version(kid, v).expect("a committed version"),
                false => NONE,
            };
            first_read.push((kid, v, slot));
            if good {
                txns[t].push_read((m.key(), v), slot);
                if w == Workload::ListAppend {
                    let index = (versions, &recs[..], &preds[..]);
                    check_list(h, i, m, kid, index, &mut pred_of, &mut list_slots)?;
                }
            }
        }
        // Final writes, each after the version first read (its source).
        for &(kid, k, x) in final_write.iter() {
            let (_, v, slot) = *first_read
                .iter()
                .find(|r| r.0 == kid)
                .expect("MT: read before write");
            txns[t].push_write((k, x, v, slot != NONE));
            if slot == NONE {
                bad_rmw = true;
                continue;
            }
            push_succ(&mut succ, &mut more, slot, i as u32);
        }
    }
    Ok(Committed {
        node,
        txns,
        future,
        thin_air,
        succ,
        more,
        pred_of,
        stats,
        bad_rmw,
    })
}

/// Whether the external read `mops[j]` (key id `kid`) of the committed op
/// `i`, of version `v`, has a committed source (phase 2 of [`build`]): not the
/// transaction's own later write (rw-register: a `future-read` case), not
/// thin air (a `G1a` case with `:writer nil`), not a failed or intermediate
/// write. A source that never completed leaves the fast path.
fn read_has_source(
    h: &History,
    w: Workload,
    ix: &Index,
    (i, mops, j, kid): (usize, &[Mop], usize, u32),
    v: Ver,
    (future, thin_air): (&mut Vec<Value>, &mut Vec<Value>),
) -> Result<bool, NotMini> {
    let not = |pos: usize, reason: String| NotMini { pos, reason };
    let m = &mops[j];
    let written = |kid: u32, x: Atom| {
        ix.versions
            .slot(kid, x)
            .filter(|&s| ix.recs[s as usize].pos != NONE)
    };
    // A read of the transaction's own later write.
    let own_later = v.is_some_and(|x| {
        mops[j + 1..]
            .iter()
            .any(|m2| is_write(m2.f()) && m2.key() == m.key() && m2.arg() == MopArg::Atom(x))
    });
    let mut good = true;
    if own_later {
        good = false;
        if w == Workload::RwRegister {
            future.push(Value::kw_map(vec![
                ("op", h.op_value(i)),
                ("mop", h.mop_value(m)),
                ("element", h.atom_value(v.expect("own write"))),
            ]));
        }
    } else if let Some(x) = v {
        match written(kid, x) {
            None => {
                good = false;
                thin_air.push(Value::kw_map(vec![
                    ("op", h.op_value(i)),
                    ("mop", h.mop_value(m)),
                    ("writer", Value::Nil),
                ]));
            }
            Some(s) => {
                let rec = ix.recs[s as usize];
                match rec.status {
                    OpType::Fail => good = false,
                    OpType::Invoke => {
                        return Err(not(
                            i,
                            format!(
                            "it read {} = {}, written by the op at index {}, which never completed",
                            pr_str(&h.atom_value(m.key())),
                            pr_str(&h.atom_value(x)),
                            h.ops[rec.pos as usize].index
                        ),
                        ))
                    }
                    _ if !rec.last => good = false,
                    _ => {}
                }
            }
        }
    }
    Ok(good)
}

/// [`analyze_with`]'s body, whose refusals are all [`NotMini`], in four
/// phases: the unique-value index ([`index_writes`]), the committed
/// transactions' reads ([`committed_reads`]), the observed `:info` writers
/// ([`attach_info`]), the data edges ([`data_edges`]); then the non-cycle
/// anomalies.
fn build(
    h: &History,
    w: Workload,
    extra: ExtraGraph,
    immediate: bool,
) -> Result<MiniAnalysis, NotMini> {
    let ix = index_writes(h, w)?;
    let (versions, recs) = (&ix.versions, &ix.recs);

    // The non-cycle anomalies and the order graph do not depend on the MT
    // graph: found on the other core meanwhile when one is free (the same
    // output either way).
    let (graph, (mut anomalies, order, thin_air)) = crate::par::join(
        || mt_graph(h, w, immediate, &ix),
        || {
            let order = extra.edges(h);
            let thin_air = match w {
                Workload::ListAppend => list_thin_air(h, versions, recs),
                _ => Vec::new(),
            };
            (pre_check_anomalies(h, w), order, thin_air)
        },
    );
    let (c, mut edges, placed) = graph?;
    edges.extend(order);
    let divergent = c.stats.divergences > 0;

    // 4. Non-cycle anomalies, with Elle's own cases, in Elle's order.
    let mop_fn = if w == Workload::ListAppend {
        MopFn::Append
    } else {
        MopFn::Write
    };
    if divergent || c.bad_rmw {
        anomalies.add_nonempty("lost-update", lost_updates(h, mop_fn, ReadsCounted::First));
    }
    if w == Workload::ListAppend {
        anomalies.add_nonempty("G1a", thin_air)
    } else {
        anomalies.add_nonempty("future-read", c.future);
        anomalies.add_seq_nonempty("G1a", c.thin_air);
    }

    let mut explainers: Vec<Box<dyn PairExplainer>> = vec![Box::new(MiniExplainer {
        workload: w,
        node: c.node,
        txns: c.txns,
    })];
    extra.add_explainer(&mut explainers);
    Ok(MiniAnalysis {
        inference: Inference {
            edges,
            order: ExtraGraph::None,
            anomalies,
            vertices: Vec::new(),
            explainers,
        },
        stats: c.stats,
        divergent,
        placed,
    })
}

/// Phases 2 and 3 of [`build`]: the committed transactions' reads, the
/// observed `:info` writers and the data edges, with the pairs whose edge
/// rests on an `:info` write's placement.
#[allow(clippy::type_complexity)]
fn mt_graph(
    h: &History,
    w: Workload,
    immediate: bool,
    ix: &Index,
) -> Result<(Committed, Vec<(u32, u32, Rels)>, Vec<(u32, u32)>), NotMini> {
    let n = h.ops.len();
    let (versions, recs) = (&ix.versions, &ix.recs);
    let mut c = committed_reads(h, w, ix)?;
    let mut edges: Vec<(u32, u32, Rels)> = Vec::new();

    // 2b. Observed `:info` writers (see `attach_info`).
    let ok_nodes: Vec<u32> = (0..n as u32)
        .filter(|&i| c.node[i as usize] != NONE)
        .collect();
    let placements = attach_info(
        h,
        w,
        immediate,
        (versions, &recs[..]),
        &ok_nodes,
        &c.pred_of,
        (&mut c.node, &mut c.txns),
        (&mut c.succ, &mut c.more),
        &mut edges,
    )?;
    c.stats.observed_info = c.txns.len() - ok_nodes.len();

    // `push_succ` opens one overflow list per version it gives a second
    // read-modify-writer: those versions are the divergences.
    c.stats.divergences = c.more.len();
    data_edges(&ok_nodes, &c, recs, &mut edges);
    c.stats.data_edges = edges.len();
    let placed = placed_pairs(&placements, &ok_nodes, &c, recs);
    Ok((c, edges, placed))
}

/// The pre-checks whose cases are Elle's own functions, in Elle's order
/// (the MT graph adds lost-update, future-read and thin-air G1a after them).
fn pre_check_anomalies(h: &History, w: Workload) -> Anomalies {
    let mut anomalies = Anomalies::default();
    match w {
        // `analyze_with` refuses cas-register histories.
        Workload::RwRegister | Workload::CasRegister => {
            anomalies.add_seq_nonempty("internal", rw_register::internal_cases(h));
            anomalies.add_seq_nonempty("G1a", rw_register::g1a_cases(h));
            anomalies.add_seq_nonempty("G1b", rw_register::g1b_cases(h));
        }
        Workload::ListAppend => {
            anomalies.add_nonempty("incompatible-order", list_append::incompatible_cases(h));
            let (internal, future) = list_append::internal_cases(h);
            anomalies.add_nonempty("internal", internal);
            anomalies.add_nonempty("future-read", future);
            anomalies.add_nonempty("dirty-update", list_append::dirty_updates(h));
            anomalies.add_nonempty("G1a", list_append::g1a_cases(h));
            anomalies.add_nonempty("G1b", list_append::g1b_cases(h));
        }
    }
    anomalies
}
