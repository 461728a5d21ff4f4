//! Serial witnesses: a cheap, exact confirmation of a valid rw-register
//! verdict (issue 23).
//!
//! A serial execution of the committed transactions (plus any `:info` ones
//! we choose to let commit) in which every observed read sees the value the
//! previous writes left, and which respects session (process) order and, when
//! asked, real-time order, is a strict-serializable execution of the history.
//! Every model of Elle's lattice allows it, so a history that has one is
//! valid under all of them: no polygraph or SAT search is needed.
//!
//! [`replay`] checks a candidate order in linear time; it is the only part
//! soundness rests on, and it is deliberately independent of how the
//! candidate was built. The candidates are heuristics:
//! [`by_version_chains`] completes every key's version order into a chain
//! kept acyclic with the session and real-time orders, [`by_events`] lets
//! each transaction take effect as late as it can (its completion) unless
//! a reader or real time pulls it earlier, [`from_graph`] takes a
//! topological order of the inference's graph chosen by replaying (its
//! ww/wr/rw edges fix much of the order), and [`by_completion`] orders
//! transactions by when they completed. A
//! failed replay proves nothing: the caller falls back to the exact checker.
//!
//! Over 700 lines: the replay and its three candidate builders belong
//! together (they share the transaction view: `txn_mops`, `external_reads`,
//! which `:info` transactions take part); the tests live in `witness/tests.rs`.

use crate::graph::{topological_order, DiGraph, Rels};
use crate::infer::order_graphs::{process_edges, realtime_edges};
use crate::infer::rw_register::AtomIds;
use crate::infer::txn::TxnMap;
use crate::model::{Atom, History, Mop, MopArg, MopFn, OpType};
use crate::read::processes::ProcessMap;
use hashbrown::{HashMap, HashSet};

mod chains;
mod deadlines;
mod events;
mod mops;

pub use chains::{by_version_chains, by_version_chains_traced};
pub use events::by_events;
#[cfg(test)]
use mops::external_reads_at;
use mops::{external_reads, external_reads_of, final_writes_at};

/// Which orders a witness must respect besides the data: session order
/// (between `:ok` transactions) is always checked (it costs nothing, and
/// real time implies it in well-formed histories), real-time order only
/// when some checked model keeps it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Orders {
    /// Check real-time order: a transaction that completed `:ok` before
    /// another was invoked must come first.
    pub real_time: bool,
}

/// Why a candidate order is not a serial witness (the first problem found).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refuted {
    /// The history holds something a register replay cannot judge
    /// (predicates, lists, other micro-ops): not a witness, try the
    /// exact checker.
    Unsupported(usize),
    /// The order names something other than an `:ok` or `:info`
    /// completion, or names one twice, or leaves out an `:ok` one.
    BadOrder(usize),
    /// The read at this op position saw another value than the replay's.
    Read(usize),
    /// The op at this position comes before one that real time or its
    /// process puts earlier.
    Order(usize),
}

/// The register micro-ops a transaction applies: an `:ok` completion's own,
/// an `:info` one's invocation (its reads were not observed).
fn txn_mops(h: &History, pos: usize) -> &[Mop] {
    match h.ops[pos].op_type {
        OpType::Info => h.mops(&h.ops[h.invocation_of(pos).unwrap_or(pos)]),
        _ => h.mops(&h.ops[pos]),
    }
}

/// The value a register micro-op carries (`None` is `nil`), or `Err` for
/// arguments a register has not.
fn reg_value(m: &Mop) -> Result<Option<Atom>, ()> {
    match m.arg() {
        MopArg::Nil => Ok(None),
        MopArg::Atom(a) => Ok(Some(a)),
        MopArg::List { .. } | MopArg::Pred(_) => Err(()),
    }
}

/// Replays `order` (positions in `h.ops` of `:ok` and `:info` completions)
/// serially on registers that start at `nil`. It is a witness when it
/// names every `:ok` transaction once (and `:info` ones at most once), each
/// `:ok` read sees the current value (`:info` reads were not observed), and
/// process order (and real-time order with `orders.real_time`) is respected.
/// Linear in the history's size.
pub fn replay(h: &History, order: &[u32], orders: Orders) -> Result<(), Refuted> {
    let mut placed = vec![false; h.ops.len()];
    // Each key's current value by dense key id (small integer keys by
    // indexing: a hash lookup per micro-op was most of the replay, issue
    // 23); a key never written holds `nil`.
    let mut key_ids = AtomIds::default();
    let mut current: Vec<Option<Atom>> = Vec::new();
    let mut last_of_process = ProcessMap::default();
    // The latest invocation among the transactions placed so far: an `:ok`
    // transaction that completed before it was invoked must not follow it.
    let mut latest_invocation = 0usize;
    for &pos in order {
        let p = pos as usize;
        let op = h.ops.get(p).ok_or(Refuted::BadOrder(p))?;
        if !matches!(op.op_type, OpType::Ok | OpType::Info) || placed[p] {
            return Err(Refuted::BadOrder(p));
        }
        placed[p] = true;
        // An op with no invocation is taken as invoked at its completion:
        // more order than real time gives, never less.
        let invoked = h.invocation_of(p).unwrap_or(p);
        if orders.real_time && op.op_type == OpType::Ok && p < latest_invocation {
            return Err(Refuted::Order(p));
        }
        latest_invocation = latest_invocation.max(invoked);
        // Session order binds `:ok` transactions only, as in Elle's process
        // graph and the exact checker.
        if op.op_type == OpType::Ok {
            if let Some(prev) = last_of_process.insert(op.process, pos) {
                if prev > pos {
                    return Err(Refuted::Order(p));
                }
            }
        }
        let observed = op.op_type == OpType::Ok;
        for m in txn_mops(h, p) {
            let v = reg_value(m).map_err(|()| Refuted::Unsupported(p))?;
            match m.f() {
                MopFn::Write => {
                    let kid = key_ids.id(m.key(), || {
                        current.push(None);
                        current.len() as u32 - 1
                    });
                    current[kid as usize] = v;
                }
                MopFn::Read if observed => {
                    let now = key_ids.get(m.key()).and_then(|k| current[k as usize]);
                    if now != v {
                        return Err(Refuted::Read(p));
                    }
                }
                MopFn::Read => {}
                _ => return Err(Refuted::Unsupported(p)),
            }
        }
    }
    // Only the ops left out are looked at (about half: the invocations),
    // not every op's 64 bytes again.
    match (0..h.ops.len()).find(|&i| !placed[i] && h.ops[i].op_type == OpType::Ok) {
        Some(i) => Err(Refuted::BadOrder(i)),
        None => Ok(()),
    }
}

/// The `:info` transactions worth letting commit: those that wrote a
/// non-`nil` value some `:ok` transaction read (the others only add writes
/// nobody saw, which can only break the replay).
fn read_infos(h: &History) -> Vec<u32> {
    // Each candidate asks; without `:info` ops, skip the set of every read.
    if !h.ops.iter().any(|o| o.op_type == OpType::Info) {
        return Vec::new();
    }
    // The values `:ok` transactions read, by dense key id (no hash of
    // every read's pair: issue 23).
    let mut key_ids = AtomIds::default();
    let mut read: Vec<AtomIds> = Vec::new();
    for (i, op) in h.ops.iter().enumerate() {
        if op.op_type == OpType::Ok {
            for m in txn_mops(h, i) {
                if let (MopFn::Read, MopArg::Atom(v)) = (m.f(), m.arg()) {
                    let kid = key_ids.id(m.key(), || {
                        read.push(AtomIds::default());
                        read.len() as u32 - 1
                    });
                    read[kid as usize].id(v, || 0);
                }
            }
        }
    }
    let was_read = |k: Atom, v: Atom| {
        key_ids
            .get(k)
            .is_some_and(|kid| read[kid as usize].get(v).is_some())
    };
    (0..h.ops.len())
        .filter(|&i| {
            h.ops[i].op_type == OpType::Info
                && txn_mops(h, i).iter().any(|m| {
                    matches!((m.f(), m.arg()), (MopFn::Write, MopArg::Atom(v)) if was_read(m.key(), v))
                })
        })
        .map(|i| i as u32)
        .collect()
}

/// When a transaction most likely took effect, for ordering candidates: an
/// `:ok` one at its completion, an `:info` one at its invocation (its
/// completion may be the end of the test).
fn effect_position(h: &History, pos: usize) -> u64 {
    match h.ops[pos].op_type {
        OpType::Info => h.invocation_of(pos).unwrap_or(pos) as u64,
        _ => pos as u64,
    }
}

/// A candidate order: the `:ok` transactions and the `:info` ones someone
/// read, by when they most likely took effect (`:ok` ones at their
/// completion, `:info` ones at their invocation).
pub fn by_completion(h: &History) -> Vec<u32> {
    let mut order: Vec<u32> = (0..h.ops.len() as u32)
        .filter(|&i| h.ops[i as usize].op_type == OpType::Ok)
        .chain(read_infos(h))
        .collect();
    order.sort_unstable_by_key(|&i| effect_position(h, i as usize));
    order
}

/// A candidate order: a topological order of the inference's `edges`
/// (between completion positions) plus process order, real-time order
/// (with `orders.real_time`) and, for the `:info` transactions someone
/// read, an edge to each of their readers. The inference's version orders
/// are partial, so among the ready transactions the order is chosen by
/// replaying, with bounded backtracking (see `Scheduler`). `None` when
/// that graph has a cycle or the search runs out of its budget (linear in
/// the history).
pub fn from_graph(h: &History, edges: &[(u32, u32, Rels)], orders: Orders) -> Option<Vec<u32>> {
    let infos = read_infos(h);
    let mut extra = process_edges(h);
    if orders.real_time {
        extra.extend(realtime_edges(h));
    }
    if !infos.is_empty() {
        // Each info writer before the readers of its values.
        let mut writer: HashMap<(Atom, Atom), u32> = HashMap::new();
        for &i in &infos {
            for m in txn_mops(h, i as usize) {
                if let (MopFn::Write, MopArg::Atom(v)) = (m.f(), m.arg()) {
                    writer.insert((m.key(), v), i);
                }
            }
        }
        for (r, op) in h.ops.iter().enumerate() {
            if op.op_type != OpType::Ok {
                continue;
            }
            for m in h.mops(op) {
                if let (MopFn::Read, MopArg::Atom(v)) = (m.f(), m.arg()) {
                    if let Some(&w) = writer.get(&(m.key(), v)) {
                        extra.push((w, r as u32, Rels::WR));
                    }
                }
            }
        }
    }
    let mut keep = vec![false; h.ops.len()];
    for (i, op) in h.ops.iter().enumerate() {
        keep[i] = op.op_type == OpType::Ok;
    }
    for &i in &infos {
        keep[i as usize] = true;
    }
    let mut all = Vec::with_capacity(edges.len() + extra.len());
    all.extend(
        edges
            .iter()
            .chain(&extra)
            .filter(|&&(a, b, _)| keep[a as usize] && keep[b as usize] && a != b),
    );
    let g = DiGraph::from_edges(h.ops.len(), all);
    drop(extra);
    Scheduler::new(h, &keep, orders.real_time).run(&g)
}

/// Ready transactions a step of [`Scheduler::run`] looks at, at most:
/// with process order in the graph, the ready set is about the history's
/// concurrency, so this bound only stops pathological cases.
const SCAN: usize = 64;

/// A ready transaction, as the scheduler sorts them: deadline, effect
/// position, op position.
type Slot = (u64, u64, u32);

/// Fitting ready transactions a step keeps as alternatives to come back
/// to.
const ALTERNATIVES: usize = 3;

/// The greedy replay behind [`from_graph`]: a topological order in which,
/// among ready transactions (earliest deadline first), the first one whose
/// reads match the current state and whose writes overwrite no value a
/// transaction still to come must read goes next; when none fits, the
/// latest choice that had alternatives is taken back.
struct Scheduler<'h> {
    h: &'h History,
    keep: &'h [bool],
    current: HashMap<Atom, Option<Atom>>,
    /// External reads still to replay, by key and value.
    pending: HashMap<(Atom, Option<Atom>), u32>,
    /// Per key, the completion positions of the `:ok` writers still to
    /// replay.
    writers: HashMap<Atom, std::collections::BTreeSet<u32>>,
    /// Per key and value, the latest invocation among its `:ok` readers
    /// (kept only when real time orders the witness).
    last_reader: HashMap<(Atom, Option<Atom>), u32>,
}

impl<'h> Scheduler<'h> {
    fn new(h: &'h History, keep: &'h [bool], real_time: bool) -> Scheduler<'h> {
        let mut s = Scheduler {
            h,
            keep,
            current: HashMap::new(),
            pending: HashMap::new(),
            writers: HashMap::new(),
            last_reader: HashMap::new(),
        };
        for (i, op) in h.ops.iter().enumerate() {
            if keep[i] && op.op_type == OpType::Ok {
                let invoked = h.invocation_of(i).unwrap_or(i) as u32;
                external_reads(h, i, |k, v| {
                    *s.pending.entry((k, v)).or_insert(0) += 1;
                    if real_time {
                        let last = s.last_reader.entry((k, v)).or_insert(0);
                        *last = (*last).max(invoked);
                    }
                });
                for m in h.mops(op).iter().filter(|m| m.f() == MopFn::Write) {
                    s.writers.entry(m.key()).or_default().insert(i as u32);
                }
            }
        }
        s
    }

    fn value(&self, k: Atom) -> Option<Atom> {
        self.current.get(&k).copied().flatten()
    }

    /// Whether the transaction's observed reads match the current state (its
    /// own writes included), and whether its writes leave every value a
    /// later transaction must read in place.
    fn fits(&self, pos: usize) -> (bool, bool) {
        let observed = self.h.ops[pos].op_type == OpType::Ok;
        // Its writes in order, and each key's latest.
        let mut local: Vec<(Atom, Option<Atom>)> = Vec::new();
        let mut latest: TxnMap<Option<Atom>> = TxnMap::default();
        for m in txn_mops(self.h, pos) {
            let Ok(v) = reg_value(m) else {
                return (false, false);
            };
            let now = || {
                latest
                    .get(m.key())
                    .map_or_else(|| self.value(m.key()), |&v| v)
            };
            match m.f() {
                MopFn::Read if observed && now() != v => return (false, false),
                MopFn::Read => {}
                MopFn::Write => {
                    local.push((m.key(), v));
                    match latest.get_mut(m.key()) {
                        Some(l) => *l = v,
                        None => latest.push(m.key(), v),
                    }
                }
                _ => return (false, false),
            }
        }
        // Only a transaction that writes can overwrite a pending value.
        // Its external reads, counted by what they read.
        let mut own: HashMap<(Atom, Option<Atom>), u32> = HashMap::new();
        if observed && !local.is_empty() {
            external_reads(self.h, pos, |k, v| *own.entry((k, v)).or_insert(0) += 1);
        }
        let safe = local.iter().all(|&(k, _)| {
            let cur = (k, self.value(k));
            let mine = own.get(&cur).copied().unwrap_or(0);
            self.pending.get(&cur).copied().unwrap_or(0) <= mine
        }) && local.iter().all(|&(k, v)| {
            // With real time, another writer of `k` that completed before
            // some reader of `v` was invoked must come before that reader:
            // if it is still to come, writing `v` now dooms the reader.
            let Some(&last) = self.last_reader.get(&(k, v)) else {
                return true;
            };
            self.writers.get(&k).is_none_or(|ws| {
                ws.iter()
                    .find(|&&w| w as usize != pos)
                    .is_none_or(|&w| w > last)
            })
        });
        (true, safe)
    }

    /// Replays a transaction; returns the values its writes replaced, for
    /// [`Self::undo`].
    fn apply(&mut self, pos: usize) -> Vec<(Atom, Option<Option<Atom>>)> {
        if self.h.ops[pos].op_type == OpType::Ok {
            let pending = &mut self.pending;
            external_reads(self.h, pos, |k, v| {
                if let Some(c) = pending.get_mut(&(k, v)) {
                    *c = c.saturating_sub(1);
                }
            });
            for m in txn_mops(self.h, pos) {
                if let Some(ws) = self.writers.get_mut(&m.key()) {
                    ws.remove(&(pos as u32));
                }
            }
        }
        let mut replaced = Vec::new();
        for m in txn_mops(self.h, pos) {
            if let (MopFn::Write, Ok(v)) = (m.f(), reg_value(m)) {
                replaced.push((m.key(), self.current.insert(m.key(), v)));
            }
        }
        replaced
    }

    /// Takes back [`Self::apply`].
    fn undo(&mut self, pos: usize, replaced: Vec<(Atom, Option<Option<Atom>>)>) {
        for (k, old) in replaced.into_iter().rev() {
            match old {
                Some(v) => self.current.insert(k, v),
                None => self.current.remove(&k),
            };
        }
        if self.h.ops[pos].op_type == OpType::Ok {
            let pending = &mut self.pending;
            external_reads(self.h, pos, |k, v| *pending.entry((k, v)).or_insert(0) += 1);
            for m in txn_mops(self.h, pos)
                .iter()
                .filter(|m| m.f() == MopFn::Write)
            {
                self.writers.entry(m.key()).or_default().insert(pos as u32);
            }
        }
    }

    fn run(mut self, g: &DiGraph) -> Option<Vec<u32>> {
        let n = self.h.ops.len();
        // Each transaction's deadline: the earliest effect position among
        // itself and everything the graph puts after it. Going by deadline
        // schedules a writer before an earlier-completing reader of its
        // value (list scheduling's earliest-deadline rule).
        let topo = topological_order(n, |v| g.out_ids(v).iter().copied())?;
        let mut deadline: Vec<u64> = (0..n).map(|v| effect_position(self.h, v)).collect();
        for &v in topo.iter().rev() {
            for &t in g.out_ids(v) {
                deadline[v as usize] = deadline[v as usize].min(deadline[t as usize]);
            }
        }
        drop(topo);
        // A transaction whose writes nobody reads may go as early as it is
        // safe: later writers overwrite it, and it frees its successors.
        let mut read: HashSet<(Atom, Option<Atom>)> = HashSet::new();
        for (k, _) in self.pending.iter().filter(|(_, &c)| c > 0) {
            read.insert(*k);
        }
        for (v, d) in deadline.iter_mut().enumerate() {
            if self.keep[v] {
                let unread = txn_mops(self.h, v).iter().all(|m| {
                    m.f() != MopFn::Write
                        || reg_value(m).is_ok_and(|x| !read.contains(&(m.key(), x)))
                });
                if unread {
                    *d = 0;
                }
            }
        }
        drop(read);
        let key = |v: u32| (deadline[v as usize], effect_position(self.h, v as usize), v);
        let mut indeg = vec![0u32; n];
        for (_, b, _) in g.edges() {
            indeg[b as usize] += 1;
        }
        let mut ready: std::collections::BTreeSet<Slot> = (0..n as u32)
            .filter(|&v| self.keep[v as usize] && indeg[v as usize] == 0)
            .map(key)
            .collect();
        // Chronological backtracking over the choices among fitting ready
        // transactions, within a budget of steps linear in the history:
        // wrong choices show up a few steps later.
        struct Frame {
            v: Slot,
            replaced: Vec<(Atom, Option<Option<Atom>>)>,
            others: Vec<Slot>,
        }
        let mut stack: Vec<Frame> = Vec::new();
        // Every transaction once, plus half as many steps again to go back.
        let txns = self.keep.iter().filter(|&&k| k).count();
        let mut budget = txns + txns / 2 + 1_000;
        let mut next: Option<(Slot, Vec<Slot>)> = None;
        loop {
            let (v, others) = match next.take() {
                Some(choice) => choice,
                None if ready.is_empty() => break,
                None => {
                    let mut fits = Vec::new();
                    let mut unsafe_fit = None;
                    for &k in ready.iter().take(SCAN) {
                        match self.fits(k.2 as usize) {
                            (true, true) if fits.len() < ALTERNATIVES => fits.push(k),
                            (true, false) if unsafe_fit.is_none() => unsafe_fit = Some(k),
                            _ => {}
                        }
                        // The rest of the scan could change nothing.
                        if fits.len() == ALTERNATIVES && unsafe_fit.is_some() {
                            break;
                        }
                    }
                    fits.extend(unsafe_fit);
                    if fits.is_empty() {
                        // Stuck: take back choices until one has another.
                        loop {
                            let f = stack.pop()?;
                            budget = budget.checked_sub(1)?;
                            let t = f.v.2;
                            for &s in g.out_ids(t) {
                                if indeg[s as usize] == 0 {
                                    ready.remove(&key(s));
                                }
                                indeg[s as usize] += 1;
                            }
                            self.undo(t as usize, f.replaced);
                            ready.insert(f.v);
                            let mut others = f.others;
                            if !others.is_empty() {
                                let v = others.remove(0);
                                next = Some((v, others));
                                break;
                            }
                        }
                        continue;
                    }
                    let v = fits.remove(0);
                    (v, fits)
                }
            };
            budget = budget.checked_sub(1)?;
            ready.remove(&v);
            let replaced = self.apply(v.2 as usize);
            for &t in g.out_ids(v.2) {
                indeg[t as usize] -= 1;
                if indeg[t as usize] == 0 {
                    ready.insert(key(t));
                }
            }
            stack.push(Frame {
                v,
                replaced,
                others,
            });
        }
        let order: Vec<u32> = stack.into_iter().map(|f| f.v.2).collect();
        // Left out: a cycle.
        (order.len() == txns).then_some(order)
    }
}

/// Which candidate order turned out to be a serial witness.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Candidate {
    /// [`by_version_chains`]: every key's version order completed.
    Chains,
    /// [`from_graph`]: a topological order of the inference's graph.
    Graph,
    /// [`by_completion`]: completion order.
    Completion,
    /// [`by_events`]: each transaction as late as it could take effect.
    Events,
}

impl Candidate {
    /// How `--verbose` names it.
    pub fn name(self) -> &'static str {
        match self {
            Candidate::Chains => "every key's version order completed into a chain",
            Candidate::Graph => "a topological order of the inferred graph",
            Candidate::Completion => "completion order",
            Candidate::Events => "the history's events, each transaction as late as it could",
        }
    }
}

/// Tries the candidates in turn ([`by_version_chains`], [`by_events`],
/// [`from_graph`] with the inference's `edges`, then [`by_completion`])
/// and returns the first that [`replay`]s.
pub fn confirm(h: &History, edges: &[(u32, u32, Rels)], orders: Orders) -> Option<Candidate> {
    confirm_traced(h, edges, orders, &mut |_| {})
}

/// [`confirm`], telling `trace` what each candidate cost and why it failed
/// (`--verbose`).
pub fn confirm_traced(
    h: &History,
    edges: &[(u32, u32, Rels)],
    orders: Orders,
    trace: &mut dyn FnMut(String),
) -> Option<Candidate> {
    if confirm_by_chains(h, orders, trace) {
        return Some(Candidate::Chains);
    }
    confirm_by_others(h, edges, orders, trace)
}

/// Whether [`by_version_chains`] gives an order that [`replay`]s: the
/// first candidate, which needs nothing from the inference (so `auto` runs
/// it beside the inference, and lists the inference's edges only when it
/// fails).
pub fn confirm_by_chains(h: &History, orders: Orders, trace: &mut dyn FnMut(String)) -> bool {
    let clock = std::time::Instant::now();
    let order = chains::by_version_chains_traced(h, orders, trace);
    attempt(h, orders, clock, Candidate::Chains, order, trace)
}

/// The candidates after the chains ([`by_events`], [`from_graph`] with the
/// inference's `edges`, then [`by_completion`]): the first that
/// [`replay`]s.
pub fn confirm_by_others(
    h: &History,
    edges: &[(u32, u32, Rels)],
    orders: Orders,
    trace: &mut dyn FnMut(String),
) -> Option<Candidate> {
    let clock = std::time::Instant::now();
    if attempt(h, orders, clock, Candidate::Events, by_events(h), trace) {
        return Some(Candidate::Events);
    }
    let order = from_graph(h, edges, orders);
    if attempt(h, orders, clock, Candidate::Graph, order, trace) {
        return Some(Candidate::Graph);
    }
    let order = Some(by_completion(h));
    attempt(h, orders, clock, Candidate::Completion, order, trace).then_some(Candidate::Completion)
}

/// Replays candidate `c`'s order, telling `trace` how it went; whether it
/// is a witness.
fn attempt(
    h: &History,
    orders: Orders,
    clock: std::time::Instant,
    c: Candidate,
    order: Option<Vec<u32>>,
    trace: &mut dyn FnMut(String),
) -> bool {
    let built = clock.elapsed().as_secs_f64();
    let verdict = order.as_ref().map(|o| replay(h, o, orders));
    let now = clock.elapsed().as_secs_f64();
    let what = match &verdict {
        None => "no order".to_string(),
        Some(Ok(())) => format!("replayed (replay {:.3} s)", now - built),
        Some(Err(r)) => format!("refuted: {r:?}"),
    };
    trace(format!("{}: {what}; at {now:.3} s", c.name()));
    matches!(verdict, Some(Ok(())))
}

#[cfg(test)]
mod tests;
