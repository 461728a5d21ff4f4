//! An independent brute-force reference for rw-register histories under
//! every consistency model of Elle's lattice.
//!
//! It enumerates *every* resolution of a tiny history and asks whether one
//! of them is free of the anomalies a model prohibits. Nothing here is
//! clever: no pruning, no inference, no solver. It shares no code with
//! ellery except the lattice (`prohibited_anomaly_types`,
//! `all_implied_anomalies`), which is Elle's data, not a checking algorithm.
//!
//! # Semantics (the specification this file implements)
//!
//! A history is a list of transactions, each with a process, a completion
//! status and the positions of its invocation and completion events.
//!
//! * `:ok` transactions are committed and their reads are known. `:info`
//!   transactions may or may not have committed (a resolution chooses);
//!   their writes are those of the invocation, their reads are unknown and
//!   ignored. `:fail` transactions are aborted; their writes are never
//!   legitimately visible.
//! * Within an `:ok` transaction, a read of `k` after its own write of `k`
//!   must return the last value written, and a read after its own read of
//!   `k` (no write between) must return the same value; otherwise the
//!   history has an `internal` anomaly. Such reads produce no edges. The
//!   *external read* of `k` is the transaction's first micro-op on `k` when
//!   that micro-op is a read.
//! * Each external read of `(k, v)` in transaction `T` chooses a source:
//!   (a) the initial state when `v` is nil; (b) a committed `W != T` whose
//!   *final* write of `k` is `v` (a `wr` edge `W -> T`); (c) an aborted
//!   `W != T` (`:fail`, or `:info` chosen uncommitted) that wrote `v` to `k`
//!   anywhere: `G1a`, no edge; (d) a committed `W != T` that wrote `v` to
//!   `k` only as a non-final write: `G1b`, no edge. A read with no source at
//!   all (nobody else wrote `v`, `v` not nil) is a garbage read, reported as
//!   `G1a`. Decisions: a read of a value only the reader itself writes
//!   (later) is such a garbage read; an aborted transaction's intermediate
//!   write is case (c), `G1a`; a nil read may always choose the initial
//!   state, even when some transaction wrote nil explicitly.
//! * The version order of `k` is any total order of the committed
//!   transactions writing `k`, after the initial state. `ww`: `W1 -> W2`
//!   when `W1` precedes `W2`. `rw`: when `T`'s external read of `k` has
//!   source `S` (case a or b), `T -> W` for every `W != T` after `S`.
//!   ([`EdgeMode::Consecutive`] instead links only adjacent versions, as
//!   Adya's DSG does; a test checks both give the same verdicts.)
//! * Process edges: each `:ok` transaction to the next `:ok` transaction of
//!   the same process. Real-time edges: `A -> B` when `A` is `:ok`, `B` is
//!   committed and `A`'s completion precedes `B`'s invocation.
//! * Simple cycles are classified by their rw edges: none and no wr: `G0`;
//!   none with a wr: `G1c`; one: `G-single-item`; two or more, never two
//!   adjacent (cyclically): `G-nonadjacent-item`; otherwise `G2-item`;
//!   suffixed `-realtime` if a real-time edge is used, else `-process` if a
//!   process edge is used.
//! * `lost-update`: two distinct transactions whose external reads of `k`
//!   have the same (a)/(b) source and which both write `k` (reads after the
//!   transaction's own micro-ops on `k` do not count).
//! * A resolution is: a commit choice for each `:info`, a source for each
//!   external read, a version order per key. Its anomalies are the facts
//!   above plus the types of all simple cycles of its graph.
//! * `valid(h, models)` iff some resolution has no anomaly in
//!   `prohibited_anomaly_types(models)` (an anomaly also counts through
//!   every type it implies).

use std::collections::{BTreeSet, HashMap};
use std::fmt::Write as _;

/// A key.
pub type Key = u8;
/// A value; `None` is nil.
pub type Val = Option<u8>;

/// A micro-operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mop {
    /// `[:r k v]`
    R(Key, Val),
    /// `[:w k v]`
    W(Key, Val),
}

/// How a transaction completed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// `:ok`
    Ok,
    /// `:info`
    Info,
    /// `:fail`
    Fail,
}

/// One transaction: an invocation and its completion.
#[derive(Clone, Debug)]
pub struct Txn {
    /// Its process.
    pub process: u32,
    /// How it completed.
    pub status: Status,
    /// Position of the invocation event in the history.
    pub invoke: usize,
    /// Position of the completion event in the history.
    pub complete: usize,
    /// Micro-ops as completed (reads of non-`:ok` transactions are ignored).
    pub mops: Vec<Mop>,
}

/// A history: transactions with distinct event positions `0..2n`.
#[derive(Clone, Debug, Default)]
pub struct Hist {
    /// The transactions, in any order.
    pub txns: Vec<Txn>,
}

fn val_edn(v: Val) -> String {
    v.map_or("nil".to_string(), |x| x.to_string())
}

fn mops_edn(mops: &[Mop], hide_reads: bool) -> String {
    let parts: Vec<String> = mops
        .iter()
        .map(|m| match *m {
            Mop::R(k, v) => format!("[:r {k} {}]", val_edn(if hide_reads { None } else { v })),
            Mop::W(k, v) => format!("[:w {k} {}]", val_edn(v)),
        })
        .collect();
    format!("[{}]", parts.join(" "))
}

impl Hist {
    /// The history as Jepsen EDN, one op per line.
    pub fn to_edn(&self) -> String {
        let mut events: Vec<(usize, String)> = Vec::new();
        for t in &self.txns {
            events.push((
                t.invoke,
                format!(
                    ":invoke, :process {}, :f :txn, :value {}",
                    t.process,
                    mops_edn(&t.mops, true)
                ),
            ));
            let (ty, value) = match t.status {
                Status::Ok => ("ok", mops_edn(&t.mops, false)),
                Status::Info => ("info", mops_edn(&t.mops, true)),
                Status::Fail => ("fail", mops_edn(&t.mops, true)),
            };
            events.push((
                t.complete,
                format!(":{ty}, :process {}, :f :txn, :value {value}", t.process),
            ));
        }
        events.sort();
        let mut out = String::new();
        for (i, (pos, body)) in events.iter().enumerate() {
            assert_eq!(i, *pos, "event positions must be 0..2n");
            let _ = writeln!(out, "{{:index {i}, :type {body}}}");
        }
        out
    }

    /// A readable name for transaction `t` (its completion index).
    pub fn name(&self, t: usize) -> String {
        format!("T{}", self.txns[t].complete)
    }
}

// ---------------------------------------------------------------------------
// Anomaly bits

/// Cycle base types, in bit order.
pub const BASES: [&str; 5] = [
    "G0",
    "G1c",
    "G-single-item",
    "G-nonadjacent-item",
    "G2-item",
];
/// Cycle suffixes, in bit order.
pub const SUFFIXES: [&str; 3] = ["", "-process", "-realtime"];
/// Bits 0..15 are cycle types (`base * 3 + suffix`); then the facts.
pub const INTERNAL: u32 = 1 << 15;
/// A read of an aborted write (or a garbage read).
pub const G1A: u32 = 1 << 16;
/// A read of an intermediate write.
pub const G1B: u32 = 1 << 17;
/// Two transactions read the same version of `k` and both write `k`.
pub const LOST_UPDATE: u32 = 1 << 18;
/// Number of anomaly bits.
pub const NBITS: usize = 19;

/// The anomaly name of bit `i`.
pub fn bit_name(i: usize) -> String {
    match i {
        0..=14 => format!("{}{}", BASES[i / 3], SUFFIXES[i % 3]),
        15 => "internal".into(),
        16 => "G1a".into(),
        17 => "G1b".into(),
        18 => "lost-update".into(),
        _ => unreachable!(),
    }
}

/// The names of the bits set in `mask`.
pub fn mask_names(mask: u32) -> Vec<String> {
    (0..NBITS)
        .filter(|i| mask & (1 << i) != 0)
        .map(bit_name)
        .collect()
}

/// Edge kinds, as bits of an adjacency cell.
pub const WW: u8 = 1;
/// Write-read.
pub const WR: u8 = 2;
/// Read-write.
pub const RW: u8 = 4;
/// Process order.
pub const PR: u8 = 8;
/// Real time.
pub const RT: u8 = 16;
/// Every kind, in bit order, with its name.
pub const KINDS: [(u8, &str); 5] = [
    (WW, "ww"),
    (WR, "wr"),
    (RW, "rw"),
    (PR, "process"),
    (RT, "realtime"),
];

/// Classifies one simple cycle given the kind of each of its steps, in
/// cycle order. Returns the anomaly bit index.
pub fn classify(steps: &[u8]) -> usize {
    let n = steps.len();
    let rw = steps.iter().filter(|&&s| s == RW).count();
    let wr = steps.iter().filter(|&&s| s == WR).count();
    let adjacent = (0..n).any(|i| steps[i] == RW && steps[(i + 1) % n] == RW);
    let base = match rw {
        0 if wr == 0 => 0,
        0 => 1,
        1 => 2,
        _ if !adjacent => 3,
        _ => 4,
    };
    let suffix = if steps.contains(&RT) {
        2
    } else if steps.contains(&PR) {
        1
    } else {
        0
    };
    base * 3 + suffix
}

/// The union of the types of every simple cycle of the graph `adj`
/// (`adj[a * n + b]` = kinds of the edges `a -> b`): every simple vertex
/// cycle (listed once, from its smallest vertex), with every choice of one
/// edge kind per step.
pub fn cycle_types(n: usize, adj: &[u8]) -> u32 {
    let mut out = 0u32;
    let mut path = vec![0usize];
    for start in 0..n {
        path.clear();
        path.push(start);
        walk(n, adj, start, &mut path, &mut out);
    }
    out
}

fn walk(n: usize, adj: &[u8], start: usize, path: &mut Vec<usize>, out: &mut u32) {
    let last = *path.last().expect("nonempty");
    for next in start..n {
        if adj[last * n + next] == 0 {
            continue;
        }
        if next == start {
            // Close the cycle: every choice of kinds along it.
            let cells: Vec<u8> = (0..path.len())
                .map(|i| adj[path[i] * n + path.get(i + 1).copied().unwrap_or(start)])
                .collect();
            let mut steps = vec![0u8; cells.len()];
            choose(&cells, 0, &mut steps, out);
        } else if !path.contains(&next) {
            path.push(next);
            walk(n, adj, start, path, out);
            path.pop();
        }
    }
}

fn choose(cells: &[u8], i: usize, steps: &mut [u8], out: &mut u32) {
    if i == cells.len() {
        *out |= 1 << classify(steps);
        return;
    }
    for (k, _) in KINDS {
        if cells[i] & k != 0 {
            steps[i] = k;
            choose(cells, i + 1, steps, out);
        }
    }
}

// ---------------------------------------------------------------------------
// Resolutions

/// Which version-order edges to draw.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EdgeMode {
    /// `ww` between every pair of versions in order; `rw` to every later
    /// version (the specification).
    Full,
    /// `ww` between adjacent versions; `rw` to the next version only
    /// (Adya's direct dependencies).
    Consecutive,
}

/// The source an external read chose.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Source {
    /// (a) the initial state.
    Init,
    /// (b) this committed transaction's final write.
    Txn(usize),
    /// (c) an aborted write (or no write at all): `G1a`.
    Aborted,
    /// (d) a committed intermediate write: `G1b`.
    Intermediate,
}

/// One external read of an `:ok` transaction.
#[derive(Clone, Debug)]
pub struct ExtRead {
    /// The reading transaction.
    pub txn: usize,
    /// Key read.
    pub key: Key,
    /// Value read.
    pub val: Val,
}

/// A resolution, for explanations.
#[derive(Clone, Debug)]
pub struct Resolution {
    /// Commit choice per transaction.
    pub committed: Vec<bool>,
    /// Source per external read (same order as [`Analysis::reads`]).
    pub sources: Vec<Source>,
    /// Version order per key (writers, in order, after the initial state).
    pub orders: Vec<(Key, Vec<usize>)>,
    /// Its anomalies.
    pub mask: u32,
}

/// Everything the brute force learned about a history.
pub struct Analysis {
    /// The external reads of `:ok` transactions.
    pub reads: Vec<ExtRead>,
    /// One resolution per distinct anomaly set.
    pub by_mask: HashMap<u32, Resolution>,
    /// Anomalies present in every resolution.
    pub always: u32,
    /// Anomalies present in every resolution without `G1a` and `G1b` (all
    /// bits when there is none).
    pub always_clean: u32,
    /// Reads whose every resolution gives them no (a)/(b) source, with the
    /// fact types they can have (`G1A` and/or `G1B`).
    pub forced: Vec<(usize, u32)>,
    /// Number of resolutions enumerated.
    pub resolutions: u64,
    /// Every distinct graph of a resolution (`adj[a * n + b]` = kinds of
    /// the edges `a -> b`, over all transactions), with its cycle types.
    pub graphs: Vec<(Vec<u8>, u32)>,
}

fn final_write(t: &Txn, k: Key) -> Option<Val> {
    t.mops.iter().rev().find_map(|m| match *m {
        Mop::W(kk, v) if kk == k => Some(v),
        _ => None,
    })
}

fn writes(t: &Txn, k: Key, v: Val) -> bool {
    t.mops.contains(&Mop::W(k, v))
}

/// The `internal` fact and the external reads of the `:ok` transactions.
fn internal_and_reads(h: &Hist) -> (bool, Vec<ExtRead>) {
    let mut internal = false;
    let mut reads = Vec::new();
    for (i, t) in h.txns.iter().enumerate() {
        if t.status != Status::Ok {
            continue;
        }
        let mut known: HashMap<Key, Val> = HashMap::new();
        for m in &t.mops {
            match *m {
                Mop::W(k, v) => {
                    known.insert(k, v);
                }
                Mop::R(k, v) => match known.get(&k) {
                    Some(&expected) => internal |= expected != v,
                    None => {
                        reads.push(ExtRead {
                            txn: i,
                            key: k,
                            val: v,
                        });
                        known.insert(k, v);
                    }
                },
            }
        }
    }
    (internal, reads)
}

/// The sources read `r` may choose when `committed` transactions committed
/// (deduplicated: every aborted writer gives the same `Aborted` choice).
fn options(h: &Hist, r: &ExtRead, committed: &[bool]) -> Vec<Source> {
    let mut out = Vec::new();
    if r.val.is_none() {
        out.push(Source::Init);
    }
    let (mut aborted, mut intermediate) = (false, false);
    for (w, t) in h.txns.iter().enumerate() {
        if w == r.txn || !writes(t, r.key, r.val) {
            continue;
        }
        if !committed[w] {
            aborted = true;
        } else if final_write(t, r.key) == Some(r.val) {
            out.push(Source::Txn(w));
        } else {
            intermediate = true;
        }
    }
    if aborted {
        out.push(Source::Aborted);
    }
    if intermediate {
        out.push(Source::Intermediate);
    }
    if out.is_empty() {
        // A garbage read: nobody wrote it.
        out.push(Source::Aborted);
    }
    out
}

fn factorial(n: usize) -> usize {
    (1..=n).product()
}

/// The `idx`-th permutation of `items` (Lehmer code).
fn permutation(items: &[usize], mut idx: usize) -> Vec<usize> {
    let mut pool = items.to_vec();
    let mut out = Vec::with_capacity(pool.len());
    while !pool.is_empty() {
        let f = factorial(pool.len() - 1);
        out.push(pool.remove(idx / f));
        idx %= f;
    }
    out
}

/// How many resolutions [`analyze`] would enumerate.
pub fn count_resolutions(h: &Hist) -> u64 {
    let (_, reads) = internal_and_reads(h);
    let infos: Vec<usize> = (0..h.txns.len())
        .filter(|&i| h.txns[i].status == Status::Info)
        .collect();
    let mut total = 0u64;
    for choice in 0..(1u32 << infos.len()) {
        let committed = commit_vector(h, &infos, choice);
        let mut n = 1u64;
        for r in &reads {
            n *= options(h, r, &committed).len() as u64;
        }
        for k in keys(h) {
            n *= factorial(writers(h, k, &committed).len()) as u64;
        }
        total += n;
    }
    total
}

fn commit_vector(h: &Hist, infos: &[usize], choice: u32) -> Vec<bool> {
    let mut committed: Vec<bool> = h.txns.iter().map(|t| t.status == Status::Ok).collect();
    for (j, &i) in infos.iter().enumerate() {
        committed[i] = choice & (1 << j) != 0;
    }
    committed
}

fn keys(h: &Hist) -> Vec<Key> {
    let set: BTreeSet<Key> = h
        .txns
        .iter()
        .flat_map(|t| t.mops.iter())
        .map(|m| match *m {
            Mop::R(k, _) | Mop::W(k, _) => k,
        })
        .collect();
    set.into_iter().collect()
}

fn writers(h: &Hist, k: Key, committed: &[bool]) -> Vec<usize> {
    (0..h.txns.len())
        .filter(|&w| committed[w] && final_write(&h.txns[w], k).is_some())
        .collect()
}

/// Process and real-time edges among committed transactions (they do not
/// depend on anything else a resolution chooses).
fn order_edges(h: &Hist, committed: &[bool], adj: &mut [u8]) {
    let n = h.txns.len();
    // Process: each :ok to the next :ok of the same process, by position.
    let mut oks: Vec<usize> = (0..n).filter(|&i| h.txns[i].status == Status::Ok).collect();
    oks.sort_by_key(|&i| h.txns[i].complete);
    for (j, &a) in oks.iter().enumerate() {
        if let Some(&b) = oks[j + 1..]
            .iter()
            .find(|&&b| h.txns[b].process == h.txns[a].process)
        {
            adj[a * n + b] |= PR;
        }
    }
    // Real time: A :ok completed before committed B was invoked.
    for a in 0..n {
        for b in 0..n {
            if h.txns[a].status == Status::Ok
                && committed[b]
                && h.txns[a].complete < h.txns[b].invoke
            {
                adj[a * n + b] |= RT;
            }
        }
    }
}

/// Enumerates every resolution of `h` (at most `limit`; `None` beyond).
pub fn analyze(h: &Hist, mode: EdgeMode, limit: u64) -> Option<Analysis> {
    if count_resolutions(h) > limit {
        return None;
    }
    let n = h.txns.len();
    let (internal, reads) = internal_and_reads(h);
    let infos: Vec<usize> = (0..n)
        .filter(|&i| h.txns[i].status == Status::Info)
        .collect();
    let keys = keys(h);
    let mut memo: HashMap<Vec<u8>, u32> = HashMap::new();
    let mut by_mask: HashMap<u32, Resolution> = HashMap::new();
    let mut always = u32::MAX;
    let mut always_clean = u32::MAX;
    let mut resolutions = 0u64;
    // For each read, whether some resolution gives it an (a)/(b) source, and
    // which facts it can have.
    let mut has_edge_source = vec![false; reads.len()];
    let mut fact_kinds = vec![0u32; reads.len()];
    for choice in 0..(1u32 << infos.len()) {
        let committed = commit_vector(h, &infos, choice);
        let opts: Vec<Vec<Source>> = reads.iter().map(|r| options(h, r, &committed)).collect();
        for (i, o) in opts.iter().enumerate() {
            for s in o {
                match s {
                    Source::Init | Source::Txn(_) => has_edge_source[i] = true,
                    Source::Aborted => fact_kinds[i] |= G1A,
                    Source::Intermediate => fact_kinds[i] |= G1B,
                }
            }
        }
        let ws: Vec<Vec<usize>> = keys.iter().map(|&k| writers(h, k, &committed)).collect();
        let mut base = vec![0u8; n * n];
        order_edges(h, &committed, &mut base);
        // An odometer over read sources, then permutations per key.
        let radices: Vec<usize> = opts
            .iter()
            .map(Vec::len)
            .chain(ws.iter().map(|w| factorial(w.len())))
            .collect();
        let mut digits = vec![0usize; radices.len()];
        loop {
            resolutions += 1;
            let sources: Vec<Source> = (0..reads.len()).map(|i| opts[i][digits[i]]).collect();
            let orders: Vec<Vec<usize>> = (0..keys.len())
                .map(|j| permutation(&ws[j], digits[reads.len() + j]))
                .collect();
            let mut mask = if internal { INTERNAL } else { 0 };
            let mut adj = base.clone();
            for (i, r) in reads.iter().enumerate() {
                let order = &orders[keys.iter().position(|&k| k == r.key).expect("key")];
                // Position of the source in the version order: the writers
                // after it are overwritten versions the reader did not see.
                let after: &[usize] = match sources[i] {
                    Source::Aborted => {
                        mask |= G1A;
                        continue;
                    }
                    Source::Intermediate => {
                        mask |= G1B;
                        continue;
                    }
                    Source::Init => order,
                    Source::Txn(w) => {
                        adj[w * n + r.txn] |= WR;
                        let p = order.iter().position(|&x| x == w).expect("writer in order");
                        &order[p + 1..]
                    }
                };
                let targets: &[usize] = match mode {
                    EdgeMode::Full => after,
                    EdgeMode::Consecutive => &after[..after.len().min(1)],
                };
                for &w in targets {
                    if w != r.txn {
                        adj[r.txn * n + w] |= RW;
                    }
                }
            }
            for order in &orders {
                for (x, &a) in order.iter().enumerate() {
                    let later: &[usize] = match mode {
                        EdgeMode::Full => &order[x + 1..],
                        EdgeMode::Consecutive => &order[x + 1..(x + 2).min(order.len())],
                    };
                    for &b in later {
                        adj[a * n + b] |= WW;
                    }
                }
            }
            for i in 0..reads.len() {
                for j in 0..reads.len() {
                    let (a, b) = (&reads[i], &reads[j]);
                    let same_source = matches!(sources[i], Source::Init | Source::Txn(_))
                        && sources[i] == sources[j];
                    if a.txn != b.txn
                        && a.key == b.key
                        && same_source
                        && final_write(&h.txns[a.txn], a.key).is_some()
                        && final_write(&h.txns[b.txn], b.key).is_some()
                    {
                        mask |= LOST_UPDATE;
                    }
                }
            }
            mask |= *memo
                .entry(adj)
                .or_insert_with_key(|adj| cycle_types(n, adj));
            always &= mask;
            if mask & (G1A | G1B) == 0 {
                always_clean &= mask;
            }
            by_mask.entry(mask).or_insert_with(|| Resolution {
                committed: committed.clone(),
                sources,
                orders: keys.iter().copied().zip(orders).collect(),
                mask,
            });
            // Next odometer reading.
            let mut d = 0;
            while d < digits.len() {
                digits[d] += 1;
                if digits[d] < radices[d] {
                    break;
                }
                digits[d] = 0;
                d += 1;
            }
            if d == digits.len() {
                break;
            }
        }
    }
    let forced = (0..reads.len())
        .filter(|&i| !has_edge_source[i])
        .map(|i| (i, fact_kinds[i]))
        .collect();
    Some(Analysis {
        reads,
        by_mask,
        always,
        always_clean,
        forced,
        resolutions,
        graphs: memo.into_iter().collect(),
    })
}

/// Whether the graph over `n` vertices with adjacency `adj` (nonzero =
/// edge) has a cycle (a self-loop counts).
pub fn has_cycle(n: usize, adj: &[bool]) -> bool {
    // Repeatedly remove vertices without incoming edges.
    let mut alive = vec![true; n];
    loop {
        let source = (0..n).find(|&v| alive[v] && !(0..n).any(|u| alive[u] && adj[u * n + v]));
        match source {
            Some(v) => alive[v] = false,
            None => return alive.iter().any(|&a| a),
        }
    }
}

/// The anomaly bits a model list prohibits: a bit counts when its type, or
/// any type it implies, is prohibited.
pub fn prohibited_mask(models: &[&str]) -> u32 {
    let p = ellery::consistency::prohibited_anomaly_types(Some(models), &[]).expect("known models");
    let mut mask = 0;
    for i in 0..NBITS {
        let name = bit_name(i);
        let implied = ellery::consistency::all_implied_anomalies(&[name.as_str()]);
        if implied.iter().any(|a| p.contains(a)) {
            mask |= 1 << i;
        }
    }
    mask
}

impl Analysis {
    /// The verdict under the prohibited bits `p`.
    pub fn valid(&self, p: u32) -> bool {
        self.by_mask.keys().any(|m| m & p == 0)
    }

    /// A resolution free of `p` (valid), or one with the fewest prohibited
    /// anomalies (invalid), explained.
    pub fn explain(&self, h: &Hist, p: u32) -> String {
        let best = self
            .by_mask
            .values()
            .min_by_key(|r| ((r.mask & p).count_ones(), r.mask.count_ones(), r.mask))
            .expect("at least one resolution");
        let mut s = String::new();
        if best.mask & p == 0 {
            let _ = writeln!(s, "brute force: VALID; witness resolution:");
        } else {
            let _ = writeln!(
                s,
                "brute force: INVALID; least bad resolution has prohibited {:?}:",
                mask_names(best.mask & p)
            );
        }
        let _ = writeln!(s, "  anomalies: {:?}", mask_names(best.mask));
        let infos: Vec<String> = (0..h.txns.len())
            .filter(|&i| h.txns[i].status == Status::Info)
            .map(|i| {
                format!(
                    "{}={}",
                    h.name(i),
                    if best.committed[i] {
                        "committed"
                    } else {
                        "aborted"
                    }
                )
            })
            .collect();
        let _ = writeln!(s, "  :info choices: {infos:?}");
        for (r, src) in self.reads.iter().zip(&best.sources) {
            let src = match src {
                Source::Init => "initial state".to_string(),
                Source::Txn(w) => h.name(*w),
                Source::Aborted => "an aborted write / nobody (G1a)".to_string(),
                Source::Intermediate => "an intermediate write (G1b)".to_string(),
            };
            let _ = writeln!(
                s,
                "  {} reads {} = {} from {src}",
                h.name(r.txn),
                r.key,
                val_edn(r.val)
            );
        }
        for (k, order) in &best.orders {
            let names: Vec<String> = order.iter().map(|&w| h.name(w)).collect();
            let _ = writeln!(s, "  version order of {k}: init < {}", names.join(" < "));
        }
        s
    }
}

// ---------------------------------------------------------------------------
// A second, graph-free reference for the serializable family

/// Which orders a serial execution must respect.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SerialOrder {
    /// Any order (`serializable`).
    Any,
    /// Each `:ok` before the next `:ok` of its process
    /// (`strong-session-serializable`).
    Process,
    /// Each `:ok` before every committed transaction invoked after it
    /// completed (`strict-serializable`).
    Realtime,
}

/// The textbook definition, with no graphs: some choice of committed
/// `:info` transactions and some order of the committed transactions,
/// respecting `order`, executes serially (from an all-nil state) so that
/// every read of every `:ok` transaction returns what it returned.
pub fn serial_valid(h: &Hist, order: SerialOrder) -> bool {
    let n = h.txns.len();
    let infos: Vec<usize> = (0..n)
        .filter(|&i| h.txns[i].status == Status::Info)
        .collect();
    (0..(1u32 << infos.len())).any(|choice| {
        let committed = commit_vector(h, &infos, choice);
        let members: Vec<usize> = (0..n).filter(|&i| committed[i]).collect();
        let mut before = vec![0u8; n * n];
        order_edges(h, &committed, &mut before);
        let must = match order {
            SerialOrder::Any => 0,
            SerialOrder::Process => PR,
            SerialOrder::Realtime => RT,
        };
        (0..factorial(members.len())).any(|idx| {
            let seq = permutation(&members, idx);
            let respects = (0..seq.len())
                .all(|i| (i + 1..seq.len()).all(|j| before[seq[j] * n + seq[i]] & must == 0));
            respects && executes(h, &seq)
        })
    })
}

/// Runs `seq` serially; true when every `:ok` read matches.
fn executes(h: &Hist, seq: &[usize]) -> bool {
    let mut state: HashMap<Key, Val> = HashMap::new();
    for &t in seq {
        let txn = &h.txns[t];
        let mut local = state.clone();
        for m in &txn.mops {
            match *m {
                Mop::W(k, v) => {
                    local.insert(k, v);
                }
                Mop::R(k, v) => {
                    if txn.status == Status::Ok && local.get(&k).copied().flatten() != v {
                        return false;
                    }
                }
            }
        }
        state = local;
    }
    true
}

/// The operational definition of snapshot isolation, with no graphs: some
/// choice of committed `:info` transactions, some commit order of the
/// committed transactions and, for each, a start point (its snapshot: the
/// first `s` commits, `s` at most its own commit position), such that
///
/// * every read of every `:ok` transaction returns its snapshot's value
///   (or its own latest write),
/// * no two overlapping transactions (neither committed before the other
///   started) write a common key (first committer wins),
/// * `order` holds: `A` committed before `B` started whenever `A -> B` is
///   a process (strong session) or real-time (strong) edge.
pub fn snapshot_valid(h: &Hist, order: SerialOrder) -> bool {
    let n = h.txns.len();
    let infos: Vec<usize> = (0..n)
        .filter(|&i| h.txns[i].status == Status::Info)
        .collect();
    let must = match order {
        SerialOrder::Any => 0,
        SerialOrder::Process => PR,
        SerialOrder::Realtime => RT,
    };
    (0..(1u32 << infos.len())).any(|choice| {
        let committed = commit_vector(h, &infos, choice);
        let members: Vec<usize> = (0..n).filter(|&i| committed[i]).collect();
        let mut before = vec![0u8; n * n];
        order_edges(h, &committed, &mut before);
        (0..factorial(members.len())).any(|idx| {
            let seq = permutation(&members, idx);
            // Start points: an odometer, start[i] in 0..=i.
            let mut start = vec![0usize; seq.len()];
            loop {
                if snapshot_ok(h, &seq, &start, &before, must) {
                    return true;
                }
                let mut d = 0;
                while d < start.len() {
                    start[d] += 1;
                    if start[d] <= d {
                        break;
                    }
                    start[d] = 0;
                    d += 1;
                }
                if d == start.len() {
                    return false;
                }
            }
        })
    })
}

fn writes_key(t: &Txn, k: Key) -> bool {
    final_write(t, k).is_some()
}

/// `seq[i]` commits `i`-th and started after the first `start[i]` commits.
fn snapshot_ok(h: &Hist, seq: &[usize], start: &[usize], before: &[u8], must: u8) -> bool {
    let n = h.txns.len();
    for i in 0..seq.len() {
        for j in 0..seq.len() {
            // j committed before i started?
            let visible = j < start[i];
            if i != j && before[seq[j] * n + seq[i]] & must != 0 && !visible {
                return false;
            }
            // i commits first; they overlap unless i committed before j started.
            let overlap = i < j && i >= start[j];
            if overlap {
                let (a, b) = (&h.txns[seq[i]], &h.txns[seq[j]]);
                if keys(h)
                    .iter()
                    .any(|&k| writes_key(a, k) && writes_key(b, k))
                {
                    return false;
                }
            }
        }
    }
    // Reads: the snapshot of the first start[i] commits, then own writes.
    for (i, &t) in seq.iter().enumerate() {
        let txn = &h.txns[t];
        if txn.status != Status::Ok {
            continue;
        }
        let mut local: HashMap<Key, Val> = HashMap::new();
        for &w in &seq[..start[i]] {
            for m in &h.txns[w].mops {
                if let Mop::W(k, v) = *m {
                    local.insert(k, v);
                }
            }
        }
        for m in &txn.mops {
            match *m {
                Mop::W(k, v) => {
                    local.insert(k, v);
                }
                Mop::R(k, v) => {
                    if local.get(&k).copied().flatten() != v {
                        return false;
                    }
                }
            }
        }
    }
    true
}
