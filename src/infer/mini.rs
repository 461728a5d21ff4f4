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
//! vocabulary; [`crate::check::mini`] holds the paper's linear-time decision
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
//! model that proscribes G-single (see [`attach_info`]; two such writes on
//! one key leave the fast path, their order being a choice). Unobserved
//! `:info` writes are dropped (assuming they did not happen only removes
//! constraints), as are `:fail`ed ones (which only serve to name G1a).

use super::list_append::{self, ExtraGraph};
use super::order_graphs::{process_edges, realtime_edges, ProcessExplainer, RealtimeExplainer};
use super::rw_register;
use super::{Anomalies, Inference, PairExplainer, Step, StepKind, StepText};
use crate::edn::{pr_str, Value};
use crate::graph::Rels;
use crate::model::{Atom, History, Mop, MopArg, MopFn, OpType, NO_OP};
use hashbrown::HashMap;

/// Which kind of object the MT history's micro-ops act on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MtWorkload {
    /// `[:r k v]` / `[:w k v]` registers.
    RwRegister,
    /// `[:r k [..]]` / `[:append k e]` lists.
    ListAppend,
}

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

/// An atom's 64 bits, ordered so that consecutive integers are adjacent.
fn atom_bits(a: Atom) -> u64 {
    match a.as_int() {
        Some(n) => (n as u64) ^ (1 << 63),
        None => a.interned_slot().map_or(0, |s| s as u64) | (1 << 62),
    }
}

/// Per key: the raw range of its written values when they are dense enough
/// to index directly (Jepsen writes per-key counters), else hashed.
#[derive(Clone, Copy, Debug)]
struct KeyRange {
    lo: u64,
    hi: u64,
    count: u32,
    /// First slot of a direct range, or [`NONE`] when hashed.
    base: u32,
}

/// Dense numbering of the versions of an MT history: every written
/// `(key, value)` gets a slot (`0..writes`), and every key's initial state
/// the slot `writes + key id`. Hash maps keyed by `(key, value)` were the
/// fast path's main cost (a cache miss per lookup); with direct per-key
/// ranges, lookups of a key's recent values stay in cache.
struct Versions {
    /// Key id of every micro-op in `History::mops`.
    mop_kid: Vec<u32>,
    ranges: Vec<KeyRange>,
    /// Slots of values of hashed keys.
    hashed: HashMap<(u32, Atom), u32>,
    /// Number of write slots.
    writes: u32,
}

impl Versions {
    /// Key ids for every micro-op (one hash lookup each, here only).
    fn new(h: &History) -> Versions {
        let mut ids: HashMap<Atom, u32> = HashMap::new();
        // A direct-mapped cache in front of the map: Jepsen keys are mostly
        // small integers, and a few hundred of them are in use at a time.
        const CACHE: usize = 1024;
        let mut cache: Vec<(Atom, u32)> = vec![(Atom::default(), NONE); CACHE];
        let mop_kid = h
            .mops
            .iter()
            .map(|m| {
                let c = &mut cache[(atom_bits(m.key) as usize) % CACHE];
                if c.1 != NONE && c.0 == m.key {
                    return c.1;
                }
                let n = ids.len() as u32;
                let id = *ids.entry(m.key).or_insert(n);
                *c = (m.key, id);
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
    fn note(&mut self, kid: u32, v: Atom) {
        let r = &mut self.ranges[kid as usize];
        let b = atom_bits(v);
        r.lo = r.lo.min(b);
        r.hi = r.hi.max(b);
        r.count += 1;
    }

    /// Lays out the direct ranges; keys whose values are sparse are hashed.
    fn assign(&mut self) {
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
    fn slot_or_new(&mut self, kid: u32, v: Atom) -> u32 {
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
    fn slot(&self, kid: u32, v: Atom) -> Option<u32> {
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
    fn version(&self, kid: u32, v: Ver) -> Option<u32> {
        match v {
            None => Some(self.writes + kid),
            Some(x) => self.slot(kid, x),
        }
    }

    /// Number of version slots (writes, then one initial state per key).
    fn len(&self) -> usize {
        self.writes as usize + self.ranges.len()
    }
}

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
    match m.arg {
        MopArg::Nil | MopArg::Pred(_) => None,
        MopArg::Atom(a) => Some(a),
        MopArg::List { .. } => h.list(m.arg).last().copied(),
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

/// Checks one transaction against Definition 8 and the workload's micro-op
/// kinds.
fn check_shape(h: &History, w: MtWorkload, mops: &[Mop]) -> Result<(), String> {
    let (mut reads, mut writes) = (0, 0);
    for (j, m) in mops.iter().enumerate() {
        match (w, m.f) {
            (_, MopFn::Read) => reads += 1,
            (MtWorkload::RwRegister, MopFn::Write) | (MtWorkload::ListAppend, MopFn::Append) => {
                writes += 1;
                if !mops[..j]
                    .iter()
                    .any(|r| r.f == MopFn::Read && r.key == m.key)
                {
                    return Err(format!(
                        "{} is a blind write (no earlier read of the key in its transaction)",
                        pr_str(&h.mop_value(m))
                    ));
                }
                if w == MtWorkload::RwRegister && m.arg == MopArg::Nil {
                    return Err("it writes nil, which is the initial state".into());
                }
            }
            _ => {
                return Err(format!(
                    "{} is not a micro-op of this workload",
                    pr_str(&h.mop_value(m))
                ))
            }
        }
    }
    if reads == 0 || reads > 2 || writes > 2 {
        return Err(format!(
            "it has {reads} reads and {writes} writes (a mini-transaction has 1-2 reads and at most 2 writes)"
        ));
    }
    Ok(())
}

/// Pass 1: every op is a transaction of the workload's micro-ops, every
/// committed or indeterminate one a mini-transaction, and every indexed
/// write writes one value. Notes the written values' ranges in `versions`.
/// On failure, the first offending op (the index is then built only for the
/// ops before it, so that an earlier duplicate value is reported first).
fn check_shapes(h: &History, w: MtWorkload, versions: &mut Versions) -> Option<NotMini> {
    let not = |pos: usize, reason: String| Some(NotMini { pos, reason });
    for (i, op) in h.ops.iter().enumerate() {
        if let crate::model::OpValue::Other(_) = op.value {
            return not(i, "its value is not a vector of micro-ops".into());
        }
        if let Some(m) = h.mops(op).iter().find(|m| {
            !matches!(
                (w, m.f),
                (_, MopFn::Read)
                    | (MtWorkload::RwRegister, MopFn::Write)
                    | (MtWorkload::ListAppend, MopFn::Append)
            )
        }) {
            return not(
                i,
                format!(
                    "{} is not a micro-op of this workload",
                    pr_str(&h.mop_value(m))
                ),
            );
        }
        if matches!(op.op_type, OpType::Ok | OpType::Info) {
            if let Err(r) = check_shape(h, w, txn_mops(h, i)) {
                return not(i, format!("not a mini-transaction: {r}"));
            }
        }
        for g in indexed_mops(h, i) {
            let m = &h.mops[g];
            if !is_write(m.f) {
                continue;
            }
            let MopArg::Atom(v) = m.arg else {
                return not(i, "a write of nil or of a list".into());
            };
            versions.note(versions.mop_kid[g], v);
        }
    }
    None
}

/// Builds the MT graph of `h`, or says why `h` is not an MT history with
/// unique values (the fast path's preconditions). `extra` adds process or
/// real-time order, as for the workload inferences.
pub fn analyze(h: &History, w: MtWorkload, extra: ExtraGraph) -> Result<MiniAnalysis, NotMini> {
    analyze_with(h, w, extra, true)
}

/// Whether [`analyze_with`] may take every read-modify-write as immediately
/// following the version it read, for a check with these expectations:
/// some expected model proscribes G-single-item (no models: Elle's default,
/// strict serializability), or an anomaly looked for (`-a`) is a cycle with
/// an rw edge (G-single, G-nonadjacent, G2 and their variants).
pub fn immediate_for(exp: &crate::check::result::Expectations) -> bool {
    use crate::consistency::{all_implied_anomalies, anomalies_prohibited_by};
    let models: &[&str] = exp.models.as_deref().unwrap_or(&["strict-serializable"]);
    anomalies_prohibited_by(models).map_or(true, |a| a.contains("G-single-item"))
        || all_implied_anomalies(&exp.anomalies).iter().any(|a| {
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
/// reveals placed after the key's last version (see [`attach_info`]);
/// under weaker models its place in the version order is free, so no edge
/// enters it there. [`analyze`] assumes `true`.
pub fn analyze_with(
    h: &History,
    w: MtWorkload,
    extra: ExtraGraph,
    immediate: bool,
) -> Result<MiniAnalysis, NotMini> {
    let n = h.ops.len();
    let not = |pos: usize, reason: String| NotMini { pos, reason };
    // 1. Shapes, then the unique-value index over every write of every
    //    transaction (any outcome; invocations only when never completed).
    let mut versions = Versions::new(h);
    let shape_error = check_shapes(h, w, &mut versions);
    versions.assign();
    let indexed = shape_error.as_ref().map_or(n, |e| e.pos);
    let mut recs: Vec<WriteRec> = vec![EMPTY; versions.writes as usize];
    // List-append: the version each committed append followed, by slot
    // (read where the list checks need it, without revisiting the writer).
    let list = w == MtWorkload::ListAppend;
    let mut preds: Vec<Ver> = vec![None; if list { recs.len() } else { 0 }];
    for (i, op) in h.ops.iter().enumerate().take(indexed) {
        let range = indexed_mops(h, i);
        let mops = &h.mops[range.clone()];
        for (j, g) in range.enumerate() {
            let m = &mops[j];
            let MopArg::Atom(v) = m.arg else { continue };
            if !is_write(m.f) {
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
                        pr_str(&h.atom_value(m.key)),
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
                    .any(|m2| is_write(m2.f) && m2.key == m.key),
            };
            if list && op.op_type == OpType::Ok {
                preds[s] = append_pred(h, &mops[..j], m.key);
            }
        }
    }
    if let Some(e) = shape_error {
        return Err(e);
    }
    let written = |kid: u32, x: Atom| {
        versions
            .slot(kid, x)
            .filter(|&s| recs[s as usize].pos != NONE)
    };

    // The non-cycle anomalies do not depend on the graph: find them on the
    // other core meanwhile (joined before returning, so output is unchanged).
    std::thread::scope(|scope| {
        let pre_checks = scope.spawn(|| pre_check_anomalies(h, w));

        // 2. External reads of committed transactions and their sources.
        let mut node: Vec<u32> = vec![NONE; n];
        let mut txns: Vec<MtTxn> = Vec::new();
        let mut edges: Vec<(u32, u32, Rels)> = Vec::new();
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
                if m.f != MopFn::Read {
                    let MopArg::Atom(x) = m.arg else { continue };
                    match final_write.iter_mut().find(|p| p.0 == kid) {
                        Some(p) => p.2 = x,
                        None => final_write.push((kid, m.key, x)),
                    }
                    continue;
                }
                if final_write.iter().any(|p| p.0 == kid) || first_read.iter().any(|r| r.0 == kid) {
                    continue; // internal reads: Elle's internal check
                }
                let v = read_version(h, m);
                // A read of the transaction's own later write.
                let own_later = v.is_some_and(|x| {
                    mops[j + 1..]
                        .iter()
                        .any(|m2| is_write(m2.f) && m2.key == m.key && m2.arg == MopArg::Atom(x))
                });
                let mut good = true;
                if own_later {
                    good = false;
                    if w == MtWorkload::RwRegister {
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
                            let rec = recs[s as usize];
                            match rec.status {
                                OpType::Fail => good = false,
                                OpType::Invoke => {
                                    return Err(not(
                                        i,
                                        format!(
                                            "it read {} = {}, written by the op at index {}, which never completed",
                                            pr_str(&h.atom_value(m.key)),
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
                let slot = match good {
                    true => versions.version(kid, v).expect("a committed version"),
                    false => NONE,
                };
                first_read.push((kid, v, slot));
                if good {
                    txns[t].push_read((m.key, v), slot);
                    if w == MtWorkload::ListAppend {
                        let index = (&versions, &recs[..], &preds[..]);
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

        // 2b. Observed `:info` writers (see `attach_info`).
        let ok_nodes: Vec<u32> = (0..n as u32)
            .filter(|&i| node[i as usize] != NONE)
            .collect();
        attach_info(
            h,
            w,
            immediate,
            (&versions, &recs[..]),
            &ok_nodes,
            &pred_of,
            (&mut node, &mut txns),
            (&mut succ, &mut more),
            &mut edges,
        )?;
        stats.observed_info = txns.len() - ok_nodes.len();

        // 3. wr, ww and rw edges out of the external reads of committed
        //    transactions.
        // `push_succ` opens one overflow list per version it gives a second
        // read-modify-writer: those versions are the divergences.
        stats.divergences = more.len();
        let divergent = stats.divergences > 0;
        for &s in &ok_nodes {
            let t = node[s as usize] as usize;
            for ri in 0..txns[t].reads().len() {
                let v = txns[t].reads()[ri].1;
                let slot = txns[t].read_slots[ri] as usize;
                let writer = recs.get(slot).map_or(NONE, |r| r.pos);
                if v.is_some() {
                    edges.push((writer, s, Rels::WR));
                }
                let sc = succ[slot];
                if sc.first == NONE {
                    continue;
                }
                let rest: &[u32] = if sc.more == NONE {
                    &[]
                } else {
                    &more[sc.more as usize]
                };
                for &b in std::iter::once(&sc.first).chain(rest) {
                    if b == s {
                        // s read-modify-wrote this version: ww from its
                        // writer (none from the initial state).
                        if v.is_some() {
                            edges.push((writer, s, Rels::WW));
                        }
                    } else {
                        edges.push((s, b, Rels::RW));
                    }
                }
            }
        }
        stats.data_edges = edges.len();
        match extra {
            ExtraGraph::None => {}
            ExtraGraph::Process => edges.extend(process_edges(h)),
            ExtraGraph::Realtime => edges.extend(realtime_edges(h)),
        }

        // 4. Non-cycle anomalies, with Elle's own cases, in Elle's order.
        let mut anomalies = pre_checks.join().expect("pre-check thread");
        let mop_fn = match w {
            MtWorkload::RwRegister => MopFn::Write,
            MtWorkload::ListAppend => MopFn::Append,
        };
        if divergent || bad_rmw {
            anomalies.add_nonempty("lost-update", list_append::lost_updates(h, mop_fn));
        }
        match w {
            MtWorkload::RwRegister => {
                anomalies.add_nonempty("future-read", future);
                anomalies.add_seq_nonempty("G1a", thin_air);
            }
            MtWorkload::ListAppend => {
                anomalies.add_nonempty("G1a", list_thin_air(h, &versions, &recs))
            }
        }

        let mut explainers: Vec<Box<dyn PairExplainer>> = vec![Box::new(MiniExplainer {
            workload: w,
            node,
            txns,
        })];
        match extra {
            ExtraGraph::None => {}
            ExtraGraph::Process => explainers.push(Box::new(ProcessExplainer)),
            ExtraGraph::Realtime => explainers.push(Box::new(RealtimeExplainer)),
        }
        Ok(MiniAnalysis {
            inference: Inference {
                edges,
                anomalies,
                vertices: Vec::new(),
                explainers,
            },
            stats,
            divergent,
        })
    })
}

/// List-append thin-air reads, as [`list_append::thin_air_reads`] finds
/// them, without its hash set of every append when the unique-value index
/// already shows a writer for every element of every `:ok` read (the usual
/// case). The index holds only appends of `h.mops`, so an element it lacks
/// is merely a candidate: the exact cases then come from `thin_air_reads`.
fn list_thin_air(h: &History, versions: &Versions, recs: &[WriteRec]) -> Vec<Value> {
    let candidate = h.ops.iter().enumerate().any(|(i, op)| {
        op.op_type == OpType::Ok
            && txn_mop_range(h, i).any(|g| {
                let m = &h.mops[g];
                let kid = versions.mop_kid[g];
                m.f == MopFn::Read
                    && h.list(m.arg).iter().any(|&e| {
                        versions
                            .slot(kid, e)
                            .and_then(|s| recs.get(s as usize))
                            .is_none_or(|r| r.pos == NONE)
                    })
            })
    });
    if candidate {
        list_append::thin_air_reads(h)
    } else {
        Vec::new()
    }
}

/// Records `b` as a read-modify-writer of version `slot`.
fn push_succ(succ: &mut [Succ], more: &mut Vec<Vec<u32>>, slot: u32, b: u32) {
    let sc = &mut succ[slot as usize];
    if sc.first == NONE {
        sc.first = b;
    } else {
        if sc.more == NONE {
            sc.more = more.len() as u32;
            more.push(Vec::new());
        }
        more[sc.more as usize].push(b);
    }
}

/// Observed `:info` writers. An `:info` transaction one of whose writes a
/// committed transaction read (for lists: one of whose elements a committed
/// read shows) committed, so all its final writes are versions, with the
/// edges a committed writer's versions get: wr into their readers (step 3),
/// rw from their readers to their read-modify-writers (step 3), and, into
/// the transaction, ww from the version each write followed and rw from
/// that version's other readers. Its own reads are unknown, so that version
/// is:
///
/// * for lists, the element before its element in any read that shows it
///   (a fact under every model);
/// * otherwise, when `immediate` (see [`analyze_with`]), the key's last
///   version: the end of the chain of read-modify-writes from the initial
///   state. Every write immediately follows the version it read and no
///   version has two such writers, so the versions of a key form one chain
///   from the initial state; a chain that starts at an `:info` write must
///   continue that one. With two such chains on a key their order is a
///   choice no read reveals: the history leaves the fast path. When the
///   initial chain itself forks (a DIVERGENCE, reported as lost-update, a
///   G-single under these models) the write is left unattached.
///
/// Unobserved `:info` writes are dropped: assuming they did not happen only
/// removes constraints.
#[allow(clippy::too_many_arguments)]
fn attach_info(
    h: &History,
    w: MtWorkload,
    immediate: bool,
    (versions, recs): (&Versions, &[WriteRec]),
    ok_nodes: &[u32],
    pred_of: &HashMap<u32, Ver>,
    (node, txns): (&mut [u32], &mut Vec<MtTxn>),
    (succ, more): (&mut [Succ], &mut Vec<Vec<u32>>),
    edges: &mut Vec<(u32, u32, Rels)>,
) -> Result<(), NotMini> {
    let mut observed: Vec<u32> = Vec::new();
    for &s in ok_nodes {
        let t = &txns[node[s as usize] as usize];
        for &slot in &t.read_slots[..t.nreads as usize] {
            if let Some(r) = recs.get(slot as usize) {
                if r.status == OpType::Info {
                    observed.push(r.pos);
                }
            }
        }
    }
    observed.extend(pred_of.keys().map(|&s| recs[s as usize].pos));
    observed.sort_unstable();
    observed.dedup();
    if observed.is_empty() {
        return Ok(());
    }
    // Writes whose predecessor no read reveals: (key id, writer, write).
    let mut orphans: Vec<(u32, u32, usize)> = Vec::new();
    // Writes shown right after a version: (version slot, writer).
    let mut shown_after: Vec<(u32, u32)> = Vec::new();
    for &pos in &observed {
        let u = txns.len();
        node[pos as usize] = u as u32;
        txns.push(MtTxn {
            info: true,
            ..MtTxn::default()
        });
        for (j, g) in txn_mop_range(h, pos as usize).enumerate() {
            let m = &h.mops[g];
            let MopArg::Atom(y) = m.arg else { continue };
            if !is_write(m.f) {
                continue;
            }
            let kid = versions.mop_kid[g];
            let Some(s) = versions.slot(kid, y) else {
                continue;
            };
            let r = recs[s as usize];
            if r.pos != pos || r.mop != j as u32 || !r.last {
                continue;
            }
            // For lists, the element before it, skipping the transaction's
            // own earlier appends.
            let mut shown = match w {
                MtWorkload::ListAppend => pred_of.get(&s).copied(),
                MtWorkload::RwRegister => None,
            };
            while let Some(Some(e)) = shown {
                match versions.slot(kid, e) {
                    Some(es) if recs[es as usize].pos == pos => {
                        shown = pred_of.get(&es).copied();
                    }
                    _ => break,
                }
            }
            let Some(p) = shown else {
                orphans.push((kid, pos, txns[u].writes().len()));
                txns[u].push_write((m.key, y, None, false));
                continue;
            };
            // The element before it in a list: attach there, unless that
            // element is no committed version (thin air, aborted or never
            // completed: reported or rejected elsewhere).
            let ps = versions.version(kid, p).filter(|&ps| {
                p.is_none()
                    || recs
                        .get(ps as usize)
                        .is_some_and(|r| matches!(r.status, OpType::Ok | OpType::Info))
            });
            let Some(ps) = ps else {
                txns[u].push_write((m.key, y, None, false));
                continue;
            };
            txns[u].push_write((m.key, y, p, true));
            push_succ(succ, more, ps, pos);
            shown_after.push((ps, pos));
            if p.is_some() {
                edges.push((recs[ps as usize].pos, pos, Rels::WW));
            }
        }
    }
    // A list shows the element right after the version it followed, so any
    // other read-modify-writer of that version (a DIVERGENCE) appended
    // later. (Two elements shown right after one version are an
    // incompatible order.)
    for &(ps, pos) in &shown_after {
        let sc = succ[ps as usize];
        let rest: &[u32] = if sc.more == NONE {
            &[]
        } else {
            &more[sc.more as usize]
        };
        for &b in std::iter::once(&sc.first).chain(rest) {
            if b != pos {
                edges.push((pos, b, Rels::WW));
            }
        }
    }
    if !immediate {
        return Ok(());
    }
    orphans.sort_unstable();
    for (i, &(kid, pos, wi)) in orphans.iter().enumerate() {
        if let Some(&(kid2, pos2, _)) = orphans.get(i + 1) {
            if kid2 == kid {
                let key = txns[node[pos as usize] as usize].writes()[wi].0;
                return Err(NotMini {
                    pos: pos2 as usize,
                    reason: format!(
                        "it and the op at index {} are indeterminate, both write key {} and were observed, and no read reveals which of their writes of {} came first",
                        h.ops[pos as usize].index,
                        pr_str(&h.atom_value(key)),
                        pr_str(&h.atom_value(key)),
                    ),
                });
            }
        }
        if i > 0 && orphans[i - 1].0 == kid {
            continue;
        }
        let u = node[pos as usize] as usize;
        let key = txns[u].writes()[wi].0;
        // The end of the chain from the initial state.
        let mut slot = versions.writes + kid;
        let mut ver: Ver = None;
        let mut tail = None;
        for _ in 0..succ.len() {
            let sc = succ[slot as usize];
            if sc.more != NONE {
                break; // a divergence
            }
            if sc.first == NONE {
                tail = Some(slot);
                break;
            }
            let b = &txns[node[sc.first as usize] as usize];
            let Some(&(_, x, _, _)) = b.writes().iter().find(|w| w.0 == key) else {
                break;
            };
            let Some(next) = versions.slot(kid, x) else {
                break;
            };
            (slot, ver) = (next, Some(x));
        }
        let Some(t) = tail else { continue };
        txns[u].writes[wi].2 = ver;
        txns[u].writes[wi].3 = true;
        push_succ(succ, more, t, pos);
        if ver.is_some() {
            edges.push((recs[t as usize].pos, pos, Rels::WW));
        }
    }
    Ok(())
}

/// The pre-checks whose cases are Elle's own functions, in Elle's order
/// (the MT graph adds lost-update, future-read and thin-air G1a after them).
fn pre_check_anomalies(h: &History, w: MtWorkload) -> Anomalies {
    let mut anomalies = Anomalies::default();
    match w {
        MtWorkload::RwRegister => {
            anomalies.add_seq_nonempty("internal", rw_register::internal_cases(h));
            anomalies.add_seq_nonempty("G1a", rw_register::g1a_cases(h));
            anomalies.add_seq_nonempty("G1b", rw_register::g1b_cases(h));
        }
        MtWorkload::ListAppend => {
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

/// List-append: checks that the read list `m` (of the op at `i`, key id
/// `kid`) is the chain of read-modify-writes ending in its last element.
/// Elements appended by `:info` transactions take their predecessor from the
/// first list that shows them. Elements nobody committed are left to the
/// G1a/G1b checks; a list with an element nobody appended is not checked.
fn check_list(
    h: &History,
    i: usize,
    m: &Mop,
    kid: u32,
    (versions, recs, preds): (&Versions, &[WriteRec], &[Ver]),
    pred_of: &mut HashMap<u32, Ver>,
    slots: &mut Vec<u32>,
) -> Result<(), NotMini> {
    let list = h.list(m.arg);
    // The elements' slots, in a buffer the caller reuses (no allocation per
    // read on the hot path).
    slots.clear();
    for &e in list {
        match versions
            .slot(kid, e)
            .filter(|&s| recs[s as usize].pos != NONE)
        {
            Some(s) => slots.push(s),
            // A read showing an element nobody appended is a thin-air read
            // (`list_append::thin_air_reads`); its order says nothing.
            None => return Ok(()),
        }
    }
    for (j, (&e, &s)) in list.iter().zip(slots.iter()).enumerate() {
        let before = if j == 0 { None } else { Some(list[j - 1]) };
        let rec = &recs[s as usize];
        match rec.status {
            OpType::Ok => {}
            OpType::Info => {
                // Its predecessor is whatever the first list showing it says.
                let p = *pred_of.entry(s).or_insert(before);
                if p != before {
                    return Err(mismatch(h, i, m, e, p, before));
                }
                continue;
            }
            _ => continue,
        }
        let p = preds[s as usize];
        if p != before {
            return Err(mismatch(h, i, m, e, p, before));
        }
    }
    Ok(())
}

/// The version an `:ok` transaction's append of `k` followed, given the
/// micro-ops before it: its previous append of `k`, else its first read of
/// `k`.
fn append_pred(h: &History, before: &[Mop], k: Atom) -> Ver {
    let mut last_own = None;
    let mut first = None;
    for m in before {
        if m.key != k {
            continue;
        }
        match (m.f, m.arg) {
            (MopFn::Append, MopArg::Atom(a)) => last_own = Some(a),
            (MopFn::Read, _) if first.is_none() => first = Some(read_version(h, m)),
            _ => {}
        }
    }
    last_own.or(first.flatten())
}

fn mismatch(h: &History, i: usize, m: &Mop, e: Atom, p: Ver, before: Ver) -> NotMini {
    let show = |v: Ver| {
        v.map_or("the initial state".to_string(), |a| {
            pr_str(&h.atom_value(a))
        })
    };
    NotMini {
        pos: i,
        reason: format!(
            "its read {} puts {} right after {}, but {} was appended after {} (the read list is not a chain of read-modify-writes)",
            pr_str(&h.mop_value(m)),
            pr_str(&h.atom_value(e)),
            show(before),
            pr_str(&h.atom_value(e)),
            show(p)
        ),
    }
}

/// Explains wr, ww and rw steps of the MT graph (in that order, as Elle's
/// explainers), in the workload's step vocabulary.
struct MiniExplainer {
    workload: MtWorkload,
    node: Vec<u32>,
    txns: Vec<MtTxn>,
}

impl MiniExplainer {
    fn txn(&self, pos: u32) -> Option<&MtTxn> {
        match self.node.get(pos as usize) {
            Some(&t) if t != NONE => Some(&self.txns[t as usize]),
            _ => None,
        }
    }
}

/// Position of the first micro-op of `op` matching `f`, key `k` and, for
/// writes, value `v` / for reads, version `v`.
fn mop_pos(h: &History, op: u32, write: bool, k: Atom, v: Ver) -> Value {
    h.mops(&h.ops[op as usize])
        .iter()
        .position(|m| {
            m.key == k
                && if write {
                    is_write(m.f) && m.arg == v.map_or(MopArg::Nil, MopArg::Atom)
                } else {
                    m.f == MopFn::Read && read_version(h, m) == v
                }
        })
        .map_or(Value::Nil, |i| Value::Int(i as i64))
}

impl PairExplainer for MiniExplainer {
    fn explain(&self, h: &History, a: u32, b: u32) -> Option<Step> {
        let (ta, tb) = (self.txn(a)?, self.txn(b)?);
        let list = self.workload == MtWorkload::ListAppend;
        let ver = |v: Ver| match v {
            Some(x) => h.atom_value(x),
            None => Value::kw("elle.list-append/init"),
        };
        let key = |k: Atom| pr_str(&h.atom_value(k));
        // wr
        for &(k, x, _, _) in ta.writes() {
            if tb.reads().contains(&(k, Some(x))) {
                if !list {
                    // Elle's rw-register step, key order included.
                    return Some(crate::infer::rw_register::wr_step(h, a, b, k, Some(x)));
                }
                let data = Value::kw_map(vec![
                    ("type", Value::kw("wr")),
                    ("key", h.atom_value(k)),
                    ("value", h.atom_value(x)),
                    ("a-mop-index", mop_pos(h, a, true, k, Some(x))),
                    ("b-mop-index", mop_pos(h, b, false, k, Some(x))),
                ]);
                let (key, value) = (key(k), pr_str(&h.atom_value(x)));
                return Some(Step {
                    kind: StepKind::Wr,
                    data,
                    text: StepText::AppendWr { key, value },
                });
            }
        }
        // ww, then rw: b's write of k follows version v of k.
        for kind in [StepKind::Ww, StepKind::Rw] {
            for &(k, y, v, known) in tb.writes() {
                if !known || a == b {
                    continue;
                }
                // The version of a that b's write follows: the one b read,
                // or (lists) an observed `:info` append shown right after
                // the version b read.
                let av = match kind {
                    StepKind::Ww => ta
                        .writes()
                        .iter()
                        .find(|w| {
                            w.0 == k
                                && (v.is_some() && Some(w.1) == v
                                    || list && ta.info && w.3 && w.2 == v)
                        })
                        .map(|w| Some(w.1)),
                    _ => ta.reads().contains(&(k, v)).then_some(v),
                };
                let Some(av) = av else {
                    continue;
                };
                if !list {
                    return Some(crate::infer::rw_register::version_step(
                        h,
                        a,
                        b,
                        kind,
                        k,
                        v,
                        Some(y),
                    ));
                }
                let data = Value::kw_map(vec![
                    ("type", Value::kw(kind.name())),
                    ("key", h.atom_value(k)),
                    ("value", ver(av)),
                    ("value'", h.atom_value(y)),
                    ("a-mop-index", mop_pos(h, a, kind == StepKind::Ww, k, av)),
                    ("b-mop-index", mop_pos(h, b, true, k, Some(y))),
                ]);
                let (key, value, value2) = (key(k), pr_str(&ver(av)), pr_str(&h.atom_value(y)));
                let text = match kind {
                    StepKind::Ww => StepText::AppendWw { key, value, value2 },
                    _ if v.is_none() => StepText::AppendRwInit { key, value2 },
                    _ => StepText::AppendRw { key, value2 },
                };
                return Some(Step { kind, data, text });
            }
        }
        None
    }
}
