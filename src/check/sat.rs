//! Exact serializability of read-write register histories with repeated
//! written values: a polygraph (Cobra) / hyper-polygraph (VeriStrong) built
//! from the history, pruned to a fixpoint with bit-row reachability, then
//! solved by `batsat` in a lazy counterexample loop (solve, look for a cycle
//! in the chosen graph, block the cycle's choices, repeat).
//!
//! Model (the VeriStrong digest, `shared/notes/seed-004-veristrong.md`):
//! an initial transaction `T⊥` (id 0) writes `nil` to every key and precedes
//! every transaction; a transaction's *external read* of a key is its first
//! read before any write of its own to that key, and its *final write* is the
//! last value it writes. The read-from source of an external read is any
//! other transaction whose final write is the read value (one boolean per
//! candidate when there are several, at least one true); the version order of
//! every pair of writers sharing a key is one boolean per pair (merged over
//! keys, sound because opposite directions form a two-cycle); anti-dependency
//! edges `S →rw T'` are derived from a chosen `T →wr S` and `T →ww T'`, never
//! from a transaction to itself. The history is serializable iff internal
//! consistency holds and some choice makes the graph acyclic.
//!
//! `:info` transactions may or may not have committed: each gets a selector
//! literal, every edge touching it is conditional on that literal, and its
//! reads (not observed) are ignored. This is exact, not merely conservative.
//!
//! Session order (per process) is included when
//! [`SatOptions::session_order`] is set (VeriStrong's SER, Elle's
//! `strong-session-serializable`); Elle's `serializable` leaves it out.

use std::time::{Duration, Instant};

use batsat::{lbool, BasicSolver, Lit, SolverInterface, Var};

use crate::graph::{scc::nontrivial_sccs, DiGraph, Rels};
use crate::model::{History, MopArg, MopFn, OpType};

/// A register value: `None` is `nil`, the initial value of every key.
pub type RegValue = Option<u64>;

/// One micro-op of a register transaction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RegOp {
    /// `[:r key value]`.
    Read(u64, RegValue),
    /// `[:w key value]`.
    Write(u64, RegValue),
}

/// A transaction of a register history.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegTxn {
    /// The process (session) that ran it.
    pub process: i64,
    /// Its micro-ops, in program order.
    pub ops: Vec<RegOp>,
    /// `true` for `:ok`; `false` for `:info` (may or may not have happened).
    pub committed: bool,
    /// The position of its completion in [`History::ops`] (for reports).
    pub index: u64,
}

/// Transactions in completion order; transaction `i` has graph id `i + 1`
/// (id 0 is the initial transaction).
pub type RegHistory = Vec<RegTxn>;

/// Converts a rw-register [`History`]: `:ok` completions with their micro-ops,
/// `:info` completions with the writes of their invocation (reads dropped),
/// `:fail` skipped. Keys and values become dense ids into the returned atom
/// table; micro-ops other than `:r`/`:w` are an error naming the op.
pub fn reg_history(h: &History) -> Result<(RegHistory, Vec<crate::model::Atom>), String> {
    let mut table: Vec<crate::model::Atom> = Vec::new();
    let mut ids: std::collections::HashMap<crate::model::Atom, u64> = Default::default();
    let mut id = |a: crate::model::Atom| {
        *ids.entry(a).or_insert_with(|| {
            table.push(a);
            table.len() as u64 - 1
        })
    };
    let mut out = Vec::new();
    for (i, op) in h.ops.iter().enumerate() {
        let committed = match op.op_type {
            OpType::Ok => true,
            OpType::Info => false,
            _ => continue,
        };
        let src = if committed {
            op
        } else {
            match h.invocation_of(i) {
                Some(j) => &h.ops[j],
                None => op,
            }
        };
        let mut ops = Vec::new();
        for m in h.mops(src) {
            let key = id(m.key);
            let value = match m.arg {
                MopArg::Nil => None,
                MopArg::Atom(a) => Some(id(a)),
                MopArg::List { .. } => return Err(format!("op {}: list value", op.index)),
            };
            match m.f {
                MopFn::Read if committed => ops.push(RegOp::Read(key, value)),
                MopFn::Read => {}
                MopFn::Write => ops.push(RegOp::Write(key, value)),
                _ => return Err(format!("op {}: micro-op other than :r/:w", op.index)),
            }
        }
        out.push(RegTxn {
            process: op.process,
            ops,
            committed,
            index: i as u64,
        });
    }
    Ok((out, table))
}

/// Options of [`check_serializable`].
#[derive(Clone, Copy, Debug)]
pub struct SatOptions {
    /// Include per-process session order.
    pub session_order: bool,
    /// Prune the constraints to a fixpoint before solving.
    pub prune: bool,
    /// Give up (answer [`Verdict::Unknown`]) after this long.
    pub timeout: Option<Duration>,
}

impl Default for SatOptions {
    fn default() -> Self {
        SatOptions {
            session_order: true,
            prune: true,
            timeout: None,
        }
    }
}

/// Why an edge of a reported cycle exists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EdgeKind {
    /// The initial transaction precedes everything.
    Init,
    /// Session order: same process, earlier.
    Process,
    /// The target's external read of `key` returned `value`, written last by
    /// the source.
    Wr {
        /// The key.
        key: u64,
        /// The value read.
        value: RegValue,
    },
    /// Both write `key`; the source's version comes first.
    Ww {
        /// The key.
        key: u64,
    },
    /// The source read `key` from `via`, whose version the target overwrote.
    Rw {
        /// The key.
        key: u64,
        /// The transaction the source read from.
        via: u32,
    },
}

/// One edge of a reported cycle, between graph ids (0 = initial transaction,
/// `i + 1` = transaction `i` of the [`RegHistory`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CycleEdge {
    /// Source transaction id.
    pub from: u32,
    /// Target transaction id.
    pub to: u32,
    /// Why the edge exists.
    pub kind: EdgeKind,
}

/// Why a history is not serializable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Violation {
    /// A read inside a transaction disagrees with the transaction's own
    /// earlier write or read of the key.
    Internal {
        /// Graph id of the transaction.
        txn: u32,
        /// The key.
        key: u64,
    },
    /// An external read of a value no (possibly) committed transaction wrote.
    Unwritten {
        /// Graph id of the reader.
        txn: u32,
        /// The key.
        key: u64,
        /// The value read.
        value: RegValue,
    },
    /// A cycle in one resolution of the choices (edges in order, the last
    /// one returning to the first's source).
    Cycle(Vec<CycleEdge>),
}

/// The answer of [`check_serializable`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Serializable; a witness serial order of graph ids (without 0, and
    /// without `:info` transactions left out).
    Valid(Vec<u32>),
    /// Not serializable.
    Invalid(Violation),
    /// The timeout ran out.
    Unknown,
}

/// Counters of one check.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SatStats {
    /// Boolean variables created.
    pub vars: usize,
    /// Variables fixed by pruning.
    pub pruned: usize,
    /// Pruning passes.
    pub prune_passes: usize,
    /// Solver calls in the lazy loop.
    pub solves: usize,
    /// Blocking clauses added.
    pub blocked: usize,
}

#[derive(Clone, Debug)]
struct Edge {
    from: u32,
    to: u32,
    kind: EdgeKind,
    reason: Vec<Lit>,
}

/// The (hyper-)polygraph: edges conditional on conjunctions of literals,
/// plus clauses over those literals.
struct Polygraph {
    n: usize,
    vars: usize,
    edges: Vec<Edge>,
    clauses: Vec<Vec<Lit>>,
}

fn lit(v: usize, positive: bool) -> Lit {
    Lit::new(Var::unsafe_from_idx(v as u32), positive)
}

/// The first external read and the final write of each key, and the INT
/// check. Returns `(external reads, final writes)`; the reads of an `:info`
/// transaction are ignored.
#[allow(clippy::type_complexity)]
fn summarise(
    t: &RegTxn,
    id: u32,
) -> Result<(Vec<(u64, RegValue)>, Vec<(u64, RegValue)>), Violation> {
    let mut seen: Vec<(u64, RegValue, bool)> = Vec::new(); // key, last value, written
    let mut reads = Vec::new();
    for op in &t.ops {
        match *op {
            RegOp::Read(_, _) if !t.committed => {}
            RegOp::Read(k, v) => match seen.iter().find(|s| s.0 == k) {
                Some(s) => {
                    if s.1 != v {
                        return Err(Violation::Internal { txn: id, key: k });
                    }
                }
                None => {
                    seen.push((k, v, false));
                    reads.push((k, v));
                }
            },
            RegOp::Write(k, v) => match seen.iter_mut().find(|s| s.0 == k) {
                Some(s) => {
                    s.1 = v;
                    s.2 = true;
                }
                None => seen.push((k, v, true)),
            },
        }
    }
    let writes = seen.iter().filter(|s| s.2).map(|s| (s.0, s.1)).collect();
    Ok((reads, writes))
}

fn build(h: &RegHistory, opts: &SatOptions) -> Result<Polygraph, Violation> {
    let n = h.len() + 1;
    let mut vars = 0usize;
    let mut fresh = || {
        vars += 1;
        vars - 1
    };
    let mut reads = vec![Vec::new(); n];
    let mut writes: Vec<Vec<(u64, RegValue)>> = vec![Vec::new(); n];
    let mut inc: Vec<Option<Lit>> = vec![None; n];
    for (i, t) in h.iter().enumerate() {
        let id = i as u32 + 1;
        if t.committed {
            let (r, w) = summarise(t, id)?;
            reads[id as usize] = r;
            writes[id as usize] = w;
        } else {
            let (_, w) = summarise(t, id)?;
            writes[id as usize] = w;
            inc[id as usize] = Some(lit(fresh(), true));
        }
    }
    let cond = |a: u32, b: u32, extra: &[Lit]| -> Vec<Lit> {
        let mut r: Vec<Lit> = extra.to_vec();
        r.extend(inc[a as usize]);
        r.extend(inc[b as usize]);
        r.sort_unstable();
        r.dedup();
        r
    };
    let mut edges = Vec::new();
    let mut clauses = Vec::new();
    for t in 1..n as u32 {
        edges.push(Edge {
            from: 0,
            to: t,
            kind: EdgeKind::Init,
            reason: cond(0, t, &[]),
        });
    }
    if opts.session_order {
        // Each transaction follows its process's last committed one and every
        // :info transaction since (which may or may not have happened).
        let mut tail: std::collections::HashMap<i64, Vec<u32>> = Default::default();
        for (i, t) in h.iter().enumerate() {
            let id = i as u32 + 1;
            let prev = tail.entry(t.process).or_default();
            for &p in prev.iter() {
                edges.push(Edge {
                    from: p,
                    to: id,
                    kind: EdgeKind::Process,
                    reason: cond(p, id, &[]),
                });
            }
            if t.committed {
                prev.clear();
            }
            prev.push(id);
        }
    }
    // Writers per key (final writes), in id order; the initial transaction
    // writes nil to every key.
    let mut keys: Vec<u64> = writes.iter().chain(&reads).flatten().map(|w| w.0).collect();
    keys.sort_unstable();
    keys.dedup();
    let key_ix = |k: u64| keys.binary_search(&k).expect("key");
    let mut writers: Vec<Vec<u32>> = vec![vec![0]; keys.len()];
    for (t, ws) in writes.iter().enumerate() {
        for &(k, _) in ws {
            writers[key_ix(k)].push(t as u32);
        }
    }
    let final_write = |t: u32, k: u64| -> Option<RegValue> {
        if t == 0 {
            return Some(None);
        }
        writes[t as usize].iter().find(|w| w.0 == k).map(|w| w.1)
    };
    // Version order: one literal per unordered pair of non-initial writers
    // (true = lower id first); the initial transaction precedes all.
    let mut pair_var: std::collections::HashMap<(u32, u32), usize> = Default::default();
    // ww alternatives per key: (from, to, reason)
    let mut ww: Vec<Vec<(u32, u32, Vec<Lit>)>> = vec![Vec::new(); keys.len()];
    for (ki, ws) in writers.iter().enumerate() {
        for (a_i, &a) in ws.iter().enumerate() {
            for &b in &ws[a_i + 1..] {
                if a == 0 {
                    ww[ki].push((0, b, cond(0, b, &[])));
                    continue;
                }
                let v = *pair_var.entry((a, b)).or_insert_with(&mut fresh);
                ww[ki].push((a, b, cond(a, b, &[lit(v, true)])));
                ww[ki].push((b, a, cond(a, b, &[lit(v, false)])));
            }
        }
        for (a, b, r) in &ww[ki] {
            edges.push(Edge {
                from: *a,
                to: *b,
                kind: EdgeKind::Ww { key: keys[ki] },
                reason: r.clone(),
            });
        }
    }
    // Read-from alternatives and the anti-dependencies they derive.
    for (s, rs) in reads.iter().enumerate() {
        let s = s as u32;
        for &(k, v) in rs {
            let ki = key_ix(k);
            let cands: Vec<u32> = writers[ki]
                .iter()
                .copied()
                .filter(|&t| t != s && final_write(t, k) == Some(v))
                .collect();
            if cands.is_empty() {
                return Err(Violation::Unwritten {
                    txn: s,
                    key: k,
                    value: v,
                });
            }
            let single = cands.len() == 1 && inc[cands[0] as usize].is_none();
            let mut clause = Vec::new();
            for &t in &cands {
                let wr: Vec<Lit> = if single {
                    Vec::new()
                } else {
                    let l = lit(fresh(), true);
                    clause.push(l);
                    if let Some(i) = inc[t as usize] {
                        clauses.push(vec![!l, i]);
                    }
                    vec![l]
                };
                edges.push(Edge {
                    from: t,
                    to: s,
                    kind: EdgeKind::Wr { key: k, value: v },
                    reason: cond(t, s, &wr),
                });
                for (a, b, r) in &ww[ki] {
                    if *a == t && *b != s {
                        let mut reason = cond(t, s, &wr);
                        reason.extend_from_slice(r);
                        reason.sort_unstable();
                        reason.dedup();
                        edges.push(Edge {
                            from: s,
                            to: *b,
                            kind: EdgeKind::Rw { key: k, via: t },
                            reason,
                        });
                    }
                }
            }
            if !single {
                clauses.push(clause);
            }
        }
    }
    Ok(Polygraph {
        n,
        vars,
        edges,
        clauses,
    })
}

/// Value of a literal under a partial assignment (`None` = unassigned).
fn value(assign: &[Option<bool>], l: Lit) -> Option<bool> {
    assign[l.var().idx() as usize].map(|b| b == l.sign())
}

/// Adjacency (best edge index per target) of the edges whose reasons hold
/// under `assign`, preferring edges with fewer literals.
fn active_adjacency(g: &Polygraph, holds: impl Fn(&Edge) -> bool) -> Vec<Vec<(u32, usize)>> {
    let mut adj: Vec<Vec<(u32, usize)>> = vec![Vec::new(); g.n];
    for (i, e) in g.edges.iter().enumerate() {
        if holds(e) {
            adj[e.from as usize].push((e.to, i));
        }
    }
    for a in &mut adj {
        a.sort_by_key(|&(t, i)| (t, g.edges[i].reason.len()));
        a.dedup_by_key(|x| x.0);
    }
    adj
}

/// A topological order of `adj`, or `None` if it has a cycle.
fn topo(adj: &[Vec<(u32, usize)>]) -> Option<Vec<u32>> {
    let n = adj.len();
    let mut indeg = vec![0u32; n];
    for a in adj {
        for &(t, _) in a {
            indeg[t as usize] += 1;
        }
    }
    let mut order: Vec<u32> = (0..n as u32).filter(|&v| indeg[v as usize] == 0).collect();
    let mut i = 0;
    while i < order.len() {
        let v = order[i] as usize;
        i += 1;
        for &(t, _) in &adj[v] {
            indeg[t as usize] -= 1;
            if indeg[t as usize] == 0 {
                order.push(t);
            }
        }
    }
    (order.len() == n).then_some(order)
}

/// Shortest path (edge indices) from `from` to `to` in `adj`, restricted to
/// vertices with `allowed`.
fn bfs_path(
    adj: &[Vec<(u32, usize)>],
    from: u32,
    to: u32,
    allowed: impl Fn(u32) -> bool,
) -> Option<Vec<usize>> {
    let n = adj.len();
    let mut pred: Vec<Option<(u32, usize)>> = vec![None; n];
    let mut seen = vec![false; n];
    let mut queue = std::collections::VecDeque::from([from]);
    seen[from as usize] = true;
    while let Some(v) = queue.pop_front() {
        for &(t, e) in &adj[v as usize] {
            if t == to {
                let mut path = vec![e];
                let mut cur = v;
                while cur != from {
                    let (p, pe) = pred[cur as usize].expect("pred");
                    path.push(pe);
                    cur = p;
                }
                path.reverse();
                return Some(path);
            }
            if !seen[t as usize] && allowed(t) {
                seen[t as usize] = true;
                pred[t as usize] = Some((v, e));
                queue.push_back(t);
            }
        }
    }
    None
}

/// Up to `max` short cycles (edge indices), from distinct strongly
/// connected components and start vertices.
fn find_cycles(adj: &[Vec<(u32, usize)>], max: usize) -> Vec<Vec<usize>> {
    let g = DiGraph::from_edges(
        adj.len(),
        adj.iter()
            .enumerate()
            .flat_map(|(v, a)| a.iter().map(move |&(t, _)| (v as u32, t, Rels::WW)))
            .collect(),
    );
    let mut out = Vec::new();
    let mut comp_of = vec![u32::MAX; adj.len()];
    let sccs = nontrivial_sccs(&g);
    for (c, comp) in sccs.iter().enumerate() {
        for &v in comp {
            comp_of[v as usize] = c as u32;
        }
    }
    let per = max.div_ceil(sccs.len().max(1)).max(1);
    for (c, comp) in sccs.iter().enumerate() {
        let step = (comp.len() / per).max(1);
        for &v in comp.iter().step_by(step).take(per) {
            if let Some(p) = bfs_path(adj, v, v, |t| comp_of[t as usize] == c as u32) {
                out.push(p);
            }
        }
    }
    out
}

fn to_cycle(g: &Polygraph, path: &[usize]) -> Vec<CycleEdge> {
    path.iter()
        .map(|&i| CycleEdge {
            from: g.edges[i].from,
            to: g.edges[i].to,
            kind: g.edges[i].kind,
        })
        .collect()
}

/// Bit rows: `row(v)` has bit `u` set iff `v` reaches `u` (reflexive).
struct Reach {
    words: usize,
    bits: Vec<u64>,
}

impl Reach {
    fn new(adj: &[Vec<(u32, usize)>], order: &[u32]) -> Reach {
        let n = adj.len();
        let words = n.div_ceil(64);
        let mut bits = vec![0u64; n * words];
        for &v in order.iter().rev() {
            let v = v as usize;
            bits[v * words + v / 64] |= 1 << (v % 64);
            for &(t, _) in &adj[v] {
                let t = t as usize;
                let (lo, hi) = if v < t {
                    let (a, b) = bits.split_at_mut(t * words);
                    (&mut a[v * words..v * words + words], &b[..words])
                } else {
                    let (a, b) = bits.split_at_mut(v * words);
                    (&mut b[..words], &a[t * words..t * words + words])
                };
                for (x, y) in lo.iter_mut().zip(hi) {
                    *x |= *y;
                }
            }
        }
        Reach { words, bits }
    }

    fn reaches(&self, a: u32, b: u32) -> bool {
        let (a, b) = (a as usize, b as usize);
        self.bits[a * self.words + b / 64] >> (b % 64) & 1 == 1
    }
}

/// Largest vertex count for which pruning's n² bit matrix is built.
const PRUNE_MAX_VERTICES: usize = 30_000;

/// Pruning outcome: `Err` is a violation.
fn prune(
    g: &Polygraph,
    assign: &mut [Option<bool>],
    stats: &mut SatStats,
) -> Result<(), Violation> {
    // For each literal fixed false: the cycle that ruled it out.
    let mut why: Vec<Option<Vec<CycleEdge>>> = vec![None; g.vars];
    loop {
        stats.prune_passes += 1;
        let adj = active_adjacency(g, |e| {
            e.reason.iter().all(|&l| value(assign, l) == Some(true))
        });
        let Some(order) = topo(&adj) else {
            let c = find_cycles(&adj, 1).pop().expect("cycle");
            return Err(Violation::Cycle(to_cycle(g, &c)));
        };
        let reach = Reach::new(&adj, &order);
        let mut changed = false;
        for (i, e) in g.edges.iter().enumerate() {
            let mut open = None;
            let mut count = 0;
            let mut dead = false;
            for &l in &e.reason {
                match value(assign, l) {
                    Some(true) => {}
                    Some(false) => dead = true,
                    None => {
                        count += 1;
                        open = Some(l);
                    }
                }
            }
            if dead || count != 1 || !reach.reaches(e.to, e.from) {
                continue;
            }
            let l = open.expect("open literal");
            assign[l.var().idx() as usize] = Some(!l.sign());
            stats.pruned += 1;
            changed = true;
            let mut cycle = vec![i];
            if e.to != e.from {
                cycle.extend(bfs_path(&adj, e.to, e.from, |_| true).expect("path"));
            }
            why[l.var().idx() as usize] = Some(to_cycle(g, &cycle));
        }
        for c in &g.clauses {
            let mut open = Vec::new();
            if c.iter().any(|&l| value(assign, l) == Some(true)) {
                continue;
            }
            for &l in c {
                if value(assign, l).is_none() {
                    open.push(l);
                }
            }
            match open.len() {
                0 => {
                    // No choice left: report the cycle that ruled out one.
                    let cycle = c
                        .iter()
                        .find_map(|l| why[l.var().idx() as usize].clone())
                        .expect("eliminated alternative has a cycle");
                    return Err(Violation::Cycle(cycle));
                }
                1 => {
                    assign[open[0].var().idx() as usize] = Some(open[0].sign());
                    stats.pruned += 1;
                    changed = true;
                }
                _ => {}
            }
        }
        if !changed {
            return Ok(());
        }
    }
}

/// Checks serializability of `h`, returning the verdict and counters.
pub fn check_serializable(h: &RegHistory, opts: &SatOptions) -> (Verdict, SatStats) {
    let start = Instant::now();
    let mut stats = SatStats::default();
    let g = match build(h, opts) {
        Ok(g) => g,
        Err(v) => return (Verdict::Invalid(v), stats),
    };
    stats.vars = g.vars;
    let mut assign: Vec<Option<bool>> = vec![None; g.vars];
    if opts.prune && g.n <= PRUNE_MAX_VERTICES {
        if let Err(v) = prune(&g, &mut assign, &mut stats) {
            return (Verdict::Invalid(v), stats);
        }
    }
    let mut solver = BasicSolver::default();
    if let Some(t) = opts.timeout {
        let deadline = start + t;
        solver.cb_mut().set_stop(move || Instant::now() >= deadline);
    }
    for _ in 0..g.vars {
        solver.new_var_default();
    }
    for (v, a) in assign.iter().enumerate() {
        if let Some(b) = a {
            solver.add_clause_reuse(&mut vec![lit(v, *b)]);
        }
    }
    for c in &g.clauses {
        solver.add_clause_reuse(&mut c.clone());
    }
    let mut last_cycle: Option<Vec<CycleEdge>> = None;
    loop {
        if opts.timeout.is_some_and(|t| start.elapsed() >= t) {
            return (Verdict::Unknown, stats);
        }
        stats.solves += 1;
        let r = solver.solve_limited(&[]);
        if r == lbool::UNDEF {
            return (Verdict::Unknown, stats);
        }
        if r == lbool::FALSE {
            let c = last_cycle.expect("unsatisfiable only after a blocked cycle");
            return (Verdict::Invalid(Violation::Cycle(c)), stats);
        }
        let model: Vec<Option<bool>> = (0..g.vars)
            .map(|v| Some(solver.value_lit(lit(v, true)) == lbool::TRUE))
            .collect();
        let adj = active_adjacency(&g, |e| {
            e.reason.iter().all(|&l| value(&model, l) == Some(true))
        });
        if let Some(order) = topo(&adj) {
            let included = |t: u32| {
                t != 0
                    && (h[t as usize - 1].committed || {
                        // an :info transaction counts iff its selector is true
                        g.edges.iter().any(|e| {
                            e.kind == EdgeKind::Init
                                && e.to == t
                                && e.reason.iter().all(|&l| value(&model, l) == Some(true))
                        })
                    })
            };
            let witness = order.into_iter().filter(|&t| included(t)).collect();
            return (Verdict::Valid(witness), stats);
        }
        for c in find_cycles(&adj, 8) {
            let mut clause: Vec<Lit> = c
                .iter()
                .flat_map(|&i| g.edges[i].reason.iter().map(|&l| !l))
                .collect();
            clause.sort_unstable();
            clause.dedup();
            last_cycle = Some(to_cycle(&g, &c));
            if clause.is_empty() {
                // A cycle of unconditional edges (pruning disabled).
                return (Verdict::Invalid(Violation::Cycle(to_cycle(&g, &c))), stats);
            }
            stats.blocked += 1;
            solver.add_clause_reuse(&mut clause);
        }
    }
}

/// Re-checks a reported cycle against the history: consecutive edges, and
/// every edge justified by the transactions' reads and writes. Returns a
/// description of the first problem.
pub fn verify_cycle(h: &RegHistory, cycle: &[CycleEdge]) -> Result<(), String> {
    if cycle.is_empty() {
        return Err("empty cycle".into());
    }
    let fw = |t: u32, k: u64| -> Option<RegValue> {
        if t == 0 {
            return Some(None);
        }
        let mut r = None;
        for op in &h[t as usize - 1].ops {
            if let RegOp::Write(kk, v) = *op {
                if kk == k {
                    r = Some(v);
                }
            }
        }
        r
    };
    let er = |t: u32, k: u64| -> Option<RegValue> {
        if t == 0 || !h[t as usize - 1].committed {
            return None;
        }
        for op in &h[t as usize - 1].ops {
            match *op {
                RegOp::Read(kk, v) if kk == k => return Some(v),
                RegOp::Write(kk, _) if kk == k => return None,
                _ => {}
            }
        }
        None
    };
    for (i, e) in cycle.iter().enumerate() {
        let next = cycle[(i + 1) % cycle.len()];
        if e.to != next.from {
            return Err(format!(
                "edge {i} does not meet edge {}",
                (i + 1) % cycle.len()
            ));
        }
        let ok = match e.kind {
            EdgeKind::Init => e.from == 0 && e.to != 0,
            EdgeKind::Process => {
                e.from != 0
                    && e.from < e.to
                    && h[e.from as usize - 1].process == h[e.to as usize - 1].process
            }
            EdgeKind::Wr { key, value } => {
                e.from != e.to && fw(e.from, key) == Some(value) && er(e.to, key) == Some(value)
            }
            EdgeKind::Ww { key } => {
                e.from != e.to && e.to != 0 && fw(e.from, key).is_some() && fw(e.to, key).is_some()
            }
            EdgeKind::Rw { key, via } => {
                e.from != e.to
                    && e.to != 0
                    && via != e.to
                    && via != e.from
                    && fw(via, key).is_some()
                    && er(e.from, key) == fw(via, key)
                    && fw(e.to, key).is_some()
            }
        };
        if !ok {
            return Err(format!("edge {i} ({e:?}) is not justified by the history"));
        }
    }
    Ok(())
}

/// Elle's anomaly type for a cycle ([`crate::check::classify_kinds`]): G0,
/// G1c, G-single-item, G2-item or G-nonadjacent-item, `-process` when it
/// uses session order.
pub fn classify_cycle(cycle: &[CycleEdge]) -> String {
    use crate::infer::StepKind;
    let kinds: Vec<StepKind> = cycle
        .iter()
        .map(|e| match e.kind {
            EdgeKind::Process => StepKind::Process,
            EdgeKind::Wr { .. } => StepKind::Wr,
            EdgeKind::Rw { .. } => StepKind::Rw,
            // The initial transaction has no predecessor, so its edges never
            // lie on a cycle; counting them as ww would be harmless.
            EdgeKind::Ww { .. } | EdgeKind::Init => StepKind::Ww,
        })
        .collect();
    crate::check::classify_kinds(&kinds)
}

fn input_error(h: &History, message: String) -> crate::error::InputError {
    crate::error::InputError {
        file: h.origin.clone(),
        line: 1,
        column: 1,
        message,
    }
}

/// The models `--algorithm sat` decides: `serializable` (no session
/// order) and `strong-session-serializable` (with it).
pub const SAT_MODELS: [&str; 2] = ["serializable", "strong-session-serializable"];

/// `--algorithm sat` for `-m rw-register`: Elle's result map for the
/// models in `opts` (which must be among [`SAT_MODELS`]).
pub fn check_history(
    h: &History,
    opts: &crate::pipeline::CheckOptions,
) -> Result<crate::pipeline::Outcome, crate::error::InputError> {
    use crate::edn::Value;
    use crate::pipeline::{Outcome, Validity};
    let models = opts.expectations.models.clone().unwrap_or_default();
    if models.is_empty() || models.iter().any(|m| !SAT_MODELS.contains(m)) {
        return Err(input_error(
            h,
            "--algorithm sat checks -c serializable or strong-session-serializable only".into(),
        ));
    }
    let (rh, atoms) =
        reg_history(h).map_err(|e| input_error(h, format!("--algorithm sat: {e}")))?;
    let sat_opts = SatOptions {
        session_order: models.contains(&"strong-session-serializable"),
        prune: true,
        timeout: opts.linearizable_timeout,
    };
    let (verdict, stats) = check_serializable(&rh, &sat_opts);
    if opts.verbose {
        eprintln!("ellery: {}: algorithm sat: {stats:?}", h.origin);
    }
    let op = |id: u32| crate::report::op_value(h, rh[id as usize - 1].index as usize);
    let val = |v: RegValue| v.map_or(Value::Nil, |x| h.atom_value(atoms[x as usize]));
    let key_v = |k: u64| h.atom_value(atoms[k as usize]);
    let fw = |t: u32, k: u64| -> Value {
        if t == 0 {
            return Value::Nil;
        }
        let mut r = Value::Nil;
        for o in &rh[t as usize - 1].ops {
            if let RegOp::Write(kk, v) = *o {
                if kk == k {
                    r = val(v);
                }
            }
        }
        r
    };
    let (anomalies, validity) = match verdict {
        Verdict::Valid(_) => (Vec::new(), Validity::Valid),
        Verdict::Unknown => (Vec::new(), Validity::Unknown),
        Verdict::Invalid(Violation::Internal { txn, key }) => (
            vec![(
                "internal".to_string(),
                vec![Value::kw_map(vec![("op", op(txn)), ("key", key_v(key))])],
            )],
            Validity::Invalid,
        ),
        Verdict::Invalid(Violation::Unwritten { txn, key, value }) => (
            vec![(
                "G1a".to_string(),
                vec![Value::kw_map(vec![
                    ("op", op(txn)),
                    ("key", key_v(key)),
                    ("value", val(value)),
                    ("writer", Value::Nil),
                ])],
            )],
            Validity::Invalid,
        ),
        Verdict::Invalid(Violation::Cycle(c)) => {
            debug_assert!(verify_cycle(&rh, &c).is_ok());
            let mut ops: Vec<Value> = c.iter().map(|e| op(e.from)).collect();
            ops.push(op(c[0].from));
            let steps = c
                .iter()
                .map(|e| match e.kind {
                    EdgeKind::Init => Value::kw_map(vec![("type", Value::kw("init"))]),
                    EdgeKind::Process => Value::kw_map(vec![
                        ("type", Value::kw("process")),
                        ("process", Value::Int(rh[e.from as usize - 1].process)),
                    ]),
                    EdgeKind::Wr { key, value } => Value::kw_map(vec![
                        ("type", Value::kw("wr")),
                        ("key", key_v(key)),
                        ("value", val(value)),
                    ]),
                    EdgeKind::Ww { key } => Value::kw_map(vec![
                        ("type", Value::kw("ww")),
                        ("key", key_v(key)),
                        ("value", fw(e.from, key)),
                        ("value'", fw(e.to, key)),
                    ]),
                    EdgeKind::Rw { key, via } => Value::kw_map(vec![
                        ("type", Value::kw("rw")),
                        ("key", key_v(key)),
                        ("value", fw(via, key)),
                        ("value'", fw(e.to, key)),
                    ]),
                })
                .collect();
            let kind = classify_cycle(&c);
            let v = Value::kw_map(vec![
                ("cycle", Value::Vector(ops)),
                ("steps", Value::List(steps)),
                ("type", Value::kw(&kind)),
            ]);
            (vec![(kind, vec![v])], Validity::Invalid)
        }
    };
    let result = match validity {
        Validity::Unknown => Value::kw_map(vec![
            ("valid?", Value::kw("unknown")),
            ("cause", Value::kw("timeout")),
        ]),
        _ => super::result::result_map(&opts.expectations, &anomalies, &[]),
    };
    Ok(Outcome {
        result,
        validity,
        cycles: Vec::new(),
        problem: None,
        plots: Vec::new(),
        incompatible_keys: Vec::new(),
    })
}

#[cfg(test)]
mod tests;
