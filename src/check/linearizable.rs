//! Linearizability of compare-and-set registers (Knossos's `cas-register`
//! model): a register starting at `nil`, with `:read`, `:write` and
//! `:cas [old new]` ops (see [`register`] for how client ops
//! become register ops, and for `jepsen.independent` keys).
//!
//! Linearizability is local (Herlihy–Wing), so every key is checked on its
//! own, keys in parallel. Per key, two algorithms:
//!
//! * **Chain** ([`check_chain`], `:analyzer :lwt-chain`): the O(n) VL-LWT
//!   algorithm of the MTC paper (Algorithm 2), for keys whose written values
//!   are unique. With unique values every cas names its predecessor, so the
//!   only admissible order is the chain that starts at `nil`, follows the
//!   cas ops reading the current value, and (if the key has one blind write)
//!   continues from that write once the chain from `nil` ends. The artifact's
//!   correction is applied: the write ("insert") is part of the chain, so its
//!   real-time constraints are checked (oracle L6). Extensions, as the digest
//!   recommends: reads sit in the gap after the op that wrote their value;
//!   a crashed (`:info`) write or cas is used exactly when some completed op
//!   observes its value (transitively), with an infinite completion time.
//!   The real-time check is a scan over the groups (chain op, its readers).
//!   Preconditions (else the search below runs): no value written twice, no
//!   write of `nil`, at most one blind write in effect.
//! * **Search** ([`check_search`], `:analyzer :wgl`): Wing & Gong's
//!   algorithm with Lowe's memoisation, as Knossos's `knossos.wgl`: walk the
//!   history's calls and returns; linearize a pending call when the model
//!   allows it and the resulting configuration (linearized set, register
//!   value) is new; backtrack at the return of an op not yet linearized.
//!   Ops are numbered like Knossos's entry ids (completed ops by completion
//!   order, crashed ops after them), so a configuration's linearized set is
//!   stored as "every op below `c`" plus the few others. Bounded by a
//!   deadline and a configuration cap (`:valid? :unknown`).
//!
//! **Result map** (one key):
//!
//! ```text
//! {:valid? true, :analyzer :wgl}
//! {:valid? false, :analyzer :wgl,
//!  :op {…}                       ; the completion of the first op that cannot be linearized
//!  :previous-ok {…}              ; the last :ok completion on this key before it, or nil
//!  :last-consistent-states [0 3]}; register values of the configurations that got furthest
//! {:valid? :unknown, :analyzer :wgl, :cause :timeout}   ; or :cause :search-space
//! ```
//!
//! `:op` and `:previous-ok` are Knossos's keys with Knossos's meaning: the
//! search numbers ops as Knossos does, so `:op` is the `:ok` op whose
//! completion no configuration could get past. Instead of Knossos's
//! `:final-paths` (every order of the concurrent ops, which can be huge),
//! `:last-consistent-states` lists the distinct register values (up to 16,
//! sorted) of the configurations that linearized every op completing before
//! `:op`. The chain analyzer adds `:cause` (`:divergence`: two ops both
//! extend the same value; `:broken-chain`: an op that took effect cannot be
//! placed; `:unwritten-read`: a read of a value no op in effect wrote;
//! `:realtime`: some op had to follow an op invoked after it completed). When
//! the chain finds a key invalid, the search is run on it too (on unique
//! values it is nearly linear) so that `:op` and `:last-consistent-states`
//! mean the same for both analyzers; only if the search runs out of time
//! or of its small budget (the verdict being known) does the chain's own
//! culprit (the earliest-completing op it could not place) and the value it
//! needed to follow stand in. Where the chain does not apply, a pre-check
//! (`linearizable/precheck.rs`) comes before the search: a completed op observing a value
//! no op wrote is `:cause :unwritten-read` at once (`:op` and the states
//! from the search, on the same small budget, else that op and `[]`).
//!
//! For independent histories the map is jepsen.independent's:
//! `{:valid? …, :results {k result, …}, :failures [k …]}` with keys in
//! order of first appearance, `:failures` listing the invalid keys.

use crate::check::linearizable::register::{RegFn, RegOp, NIL};
use hashbrown::HashSet;
use std::time::Instant;

/// Which algorithm checks a key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Algorithm {
    /// The chain when its preconditions hold, else the search.
    #[default]
    Auto,
    /// Only the search.
    Search,
}

/// Options for [`check_key`], [`check_keys`] and [`check_history`].
#[derive(Clone, Debug)]
pub struct LinOptions {
    /// Which algorithm to use.
    pub algorithm: Algorithm,
    /// When a search gives up with `:valid? :unknown`.
    pub deadline: Option<Instant>,
    /// Most configurations one key's search may memoise before giving up.
    pub max_configs: usize,
    /// Worker threads for independent keys (0: one per core).
    pub threads: usize,
}

impl Default for LinOptions {
    fn default() -> Self {
        LinOptions {
            algorithm: Algorithm::Auto,
            deadline: None,
            max_configs: 10_000_000,
            threads: 0,
        }
    }
}

/// The verdict on one key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Linearizable.
    Valid,
    /// Not linearizable.
    Invalid(Failure),
    /// The search gave up; the cause (`timeout`, `search-space`).
    Unknown(&'static str),
}

/// Why a key is not linearizable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    /// Index (in the key's ops) of the op that cannot be linearized.
    pub op: usize,
    /// The last consistent register values (interned ids), sorted.
    pub states: Vec<u32>,
    /// The chain analyzer's reason (`divergence`, …); `None` for the search.
    pub cause: Option<&'static str>,
}

/// A verdict and the analyzer that reached it (`lwt-chain` or `wgl`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyResult {
    /// The verdict.
    pub verdict: Verdict,
    /// `lwt-chain` or `wgl`.
    pub analyzer: &'static str,
}

/// Checks one key with the chosen algorithm.
pub fn check_key(ops: &[RegOp], opts: &LinOptions) -> KeyResult {
    // Once the verdict is known, the search only refines `:op` and
    // `:last-consistent-states`: it gets a small budget, not the whole one.
    let refine_configs = opts.max_configs.min(precheck::REFINE_CONFIGS);
    if opts.algorithm == Algorithm::Auto {
        if let Some(mut verdict) = check_chain(ops) {
            if let Verdict::Invalid(f) = &mut verdict {
                // Report what the search reports (the op no configuration
                // gets past), when it finishes in time; keep the cause.
                if let Verdict::Invalid(g) = check_search(ops, opts.deadline, refine_configs) {
                    f.op = g.op;
                    f.states = g.states;
                }
            }
            return KeyResult {
                verdict,
                analyzer: "lwt-chain",
            };
        }
    }
    // A completed op observing a value nobody wrote decides at once.
    if let Some(op) = precheck::unwritten_read(ops) {
        let verdict = match check_search(ops, opts.deadline, refine_configs) {
            v @ Verdict::Invalid(_) => v,
            _ => Verdict::Invalid(Failure {
                op,
                states: Vec::new(),
                cause: Some("unwritten-read"),
            }),
        };
        return KeyResult {
            verdict,
            analyzer: "wgl",
        };
    }
    KeyResult {
        verdict: check_search(ops, opts.deadline, opts.max_configs),
        analyzer: "wgl",
    }
}

// ---------------------------------------------------------------------------
// The chain (VL-LWT)

/// The unique-value chain algorithm; `None` when its preconditions fail (a
/// value written twice, a write of `nil`, or more than one blind write in
/// effect).
pub fn check_chain(ops: &[RegOp]) -> Option<Verdict> {
    chain_or_refusal(ops).ok()
}

/// Why the chain algorithm does not apply to a key: the op (a position in
/// the key's ops) that breaks its preconditions, and how.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChainRefusal {
    /// Position of the offending op in the key's ops.
    pub op: usize,
    /// What is wrong, as a sentence fragment.
    pub reason: &'static str,
}

/// A value id's "no op" marker in the chain's per-value tables.
const NONE: u32 = u32::MAX;

/// The chain algorithm's verdict, or why its preconditions fail. Its
/// steps: each value's writer, the ops in effect, the chain from `nil`,
/// every op in effect placed on it, then the real-time sweep.
pub fn chain_or_refusal(ops: &[RegOp]) -> Result<Verdict, ChainRefusal> {
    // Values are dense ids (per key), so tables are vectors.
    let nvalues = ops
        .iter()
        .map(|o| o.a.max(o.b) as usize + 1)
        .max()
        .unwrap_or(1);
    let writer = writers(ops, nvalues)?;
    let effective = in_effect(ops, &writer);
    let (blind, readers) = cas_readers(ops, &effective, nvalues)?;
    let fail = |(op, state, cause)| {
        Ok(Verdict::Invalid(Failure {
            op,
            states: vec![state],
            cause: Some(cause),
        }))
    };
    let (chain, last) = match build_chain(ops, &effective, blind, &readers) {
        Ok(c) => c,
        Err(f) => return fail(f),
    };
    let reads = match place(ops, &effective, &chain, last, nvalues) {
        Ok(r) => r,
        Err(f) => return fail(f),
    };
    match realtime(ops, &chain, &reads) {
        Some((op, state)) => fail((op, state, "realtime")),
        None => Ok(Verdict::Valid),
    }
}

/// The writer of every value (ok or crashed; failed ops are gone); refused
/// when a value is `nil` or written twice.
fn writers(ops: &[RegOp], nvalues: usize) -> Result<Vec<u32>, ChainRefusal> {
    let mut writer: Vec<u32> = vec![NONE; nvalues];
    for (i, op) in ops.iter().enumerate() {
        let v = match op.f {
            RegFn::Read => continue,
            RegFn::Write => op.a,
            RegFn::Cas => op.b,
        };
        if v == NIL {
            return Err(ChainRefusal {
                op: i,
                reason: "it writes nil",
            });
        }
        if writer[v as usize] != NONE {
            return Err(ChainRefusal {
                op: i,
                reason: "it writes a value another op wrote (values are not unique)",
            });
        }
        writer[v as usize] = i as u32;
    }
    Ok(writer)
}

/// Ops in effect: completed ones, and crashed ones whose value some op in
/// effect observes.
fn in_effect(ops: &[RegOp], writer: &[u32]) -> Vec<bool> {
    let mut effective: Vec<bool> = ops.iter().map(|o| o.ok()).collect();
    let mut work: Vec<u32> = ops
        .iter()
        .filter(|o| o.ok() && o.f != RegFn::Write)
        .map(|o| o.a)
        .collect();
    while let Some(v) = work.pop() {
        let w = writer[v as usize];
        if w != NONE && !effective[w as usize] {
            effective[w as usize] = true;
            if ops[w as usize].f == RegFn::Cas {
                work.push(ops[w as usize].a);
            }
        }
    }
    effective
}

/// Per value: how many cas ops in effect read it, and the first one.
type Readers = Vec<(u32, u32)>;

/// The one blind write in effect (refused if there are two), and per
/// value the number of cas ops in effect reading it and the first one.
fn cas_readers(
    ops: &[RegOp],
    effective: &[bool],
    nvalues: usize,
) -> Result<(Option<usize>, Readers), ChainRefusal> {
    let mut blind = None;
    let mut readers: Readers = vec![(0, NONE); nvalues];
    for (i, op) in ops.iter().enumerate() {
        if !effective[i] {
            continue;
        }
        match op.f {
            RegFn::Write => {
                if blind.replace(i).is_some() {
                    return Err(ChainRefusal {
                        op: i,
                        reason: "it is a second blind write in effect (only one, the insert, can start the chain)",
                    });
                }
            }
            RegFn::Cas => {
                let e = &mut readers[op.a as usize];
                e.0 += 1;
                if e.1 == NONE {
                    e.1 = i as u32;
                }
            }
            RegFn::Read => {}
        }
    }
    Ok((blind, readers))
}

/// A chain failure: the op, the register value there, and the cause.
type ChainFail = (usize, u32, &'static str);

/// The chain from `nil`: each value read by exactly one cas in effect
/// (the blind write where none is), and the value it ends at; a value two
/// cas ops read is a divergence.
fn build_chain(
    ops: &[RegOp],
    effective: &[bool],
    blind: Option<usize>,
    readers: &[(u32, u32)],
) -> Result<(Vec<u32>, u32), ChainFail> {
    let mut chain: Vec<u32> = Vec::new();
    let mut v = NIL;
    let mut blind_left = blind;
    loop {
        match readers[v as usize] {
            (0, _) => match blind_left.take() {
                Some(w) => {
                    chain.push(w as u32);
                    v = ops[w].a;
                }
                None => return Ok((chain, v)),
            },
            (1, c) => {
                chain.push(c);
                v = ops[c as usize].b;
            }
            _ => {
                // Divergence: report the later-completing of the candidates.
                let c = latest_completing(ops, effective, |o| o.f == RegFn::Cas && o.a == v);
                return Err((c, v, "divergence"));
            }
        }
    }
}

/// Every op in effect placed on the chain, reads reading a chain value:
/// the reads as (group, read), sorted, where group 0 is `nil` and k + 1
/// the k-th chain op's value. Else the earliest-completing misplaced op
/// (with `last`, the chain's final value, as its state).
fn place(
    ops: &[RegOp],
    effective: &[bool],
    chain: &[u32],
    last: u32,
    nvalues: usize,
) -> Result<Vec<(u32, u32)>, ChainFail> {
    let mut group_of: Vec<u32> = vec![NONE; nvalues];
    group_of[NIL as usize] = 0;
    let mut in_chain = vec![false; ops.len()];
    for (k, &c) in chain.iter().enumerate() {
        in_chain[c as usize] = true;
        let op = &ops[c as usize];
        group_of[(if op.f == RegFn::Cas { op.b } else { op.a }) as usize] = k as u32 + 1;
    }
    let mut broken: Option<ChainFail> = None;
    let mut reads: Vec<(u32, u32)> = Vec::new();
    for (i, op) in ops.iter().enumerate() {
        if !effective[i] {
            continue;
        }
        let problem = match op.f {
            RegFn::Read => match group_of[op.a as usize] {
                NONE => Some("unwritten-read"),
                g => {
                    reads.push((g, i as u32));
                    None
                }
            },
            _ if !in_chain[i] => Some("broken-chain"),
            _ => None,
        };
        if let Some(cause) = problem {
            let better = match broken {
                None => true,
                Some((j, _, _)) => completion(&ops[i]) < completion(&ops[j]),
            };
            if better {
                broken = Some((i, last, cause));
            }
        }
    }
    if let Some(f) = broken {
        return Err(f);
    }
    reads.sort_unstable();
    Ok(reads)
}

/// Real time: every element must complete after every element required
/// before it was invoked. Groups: (chain op k-1, readers of its value).
/// The violating element with the earliest completion, and its state.
fn realtime(ops: &[RegOp], chain: &[u32], reads: &[(u32, u32)]) -> Option<(usize, u32)> {
    let mut next_read = 0;
    let mut max_start: u32 = 0; // over groups before the current one
    let mut worst: Option<(u32, usize, u32)> = None; // (completion, op, state)
    let mut note = |op: usize, need: u32, state: u32| {
        let f = completion(&ops[op]);
        if need > f && worst.is_none_or(|(wf, _, _)| f < wf) {
            worst = Some((f, op, state));
        }
    };
    let mut prev_value = NIL;
    for g in 0..=chain.len() {
        let (writer_start, value) = if g == 0 {
            (0, NIL)
        } else {
            let w = chain[g - 1] as usize;
            note(w, max_start, prev_value);
            let op = &ops[w];
            (op.invoke, if op.f == RegFn::Cas { op.b } else { op.a })
        };
        let before_reads = max_start.max(writer_start);
        let mut group_max = before_reads;
        while let Some(&(rg, r)) = reads.get(next_read) {
            if rg as usize != g {
                break;
            }
            next_read += 1;
            note(r as usize, before_reads, value);
            group_max = group_max.max(ops[r as usize].invoke);
        }
        max_start = group_max;
        prev_value = value;
    }
    worst.map(|(_, op, state)| (op, state))
}

fn completion(op: &RegOp) -> u32 {
    op.complete
}

fn latest_completing(ops: &[RegOp], effective: &[bool], pred: impl Fn(&RegOp) -> bool) -> usize {
    let mut best = 0;
    let mut best_key = None;
    for (i, op) in ops.iter().enumerate() {
        if effective[i] && pred(op) {
            let key = (op.complete, op.invoke);
            if best_key.is_none_or(|b| key > b) {
                best_key = Some(key);
                best = i;
            }
        }
    }
    best
}

// ---------------------------------------------------------------------------
// The search (WGL with Lowe's memoisation)

fn step(state: u32, op: &RegOp) -> Option<u32> {
    match op.f {
        RegFn::Read => (state == op.a).then_some(state),
        RegFn::Write => Some(op.a),
        RegFn::Cas => (state == op.a).then_some(op.b),
    }
}

/// A memoised configuration: every completed op below `c` linearized, plus
/// `extra` (sorted ids), with register value `state`.
#[derive(Hash, PartialEq, Eq)]
struct Config {
    state: u32,
    c: u32,
    extra: Box<[u32]>,
}

const MAX_STATES: usize = 16;

/// Wing & Gong / Lowe search over one key's ops. Crashed reads must have been
/// dropped (they constrain nothing); crashed writes and cas ops may take
/// effect or not.
// Long (about 160 lines): one Wing–Gong/Lowe search loop whose state (the
// configuration stack, memo set, budget) is local to it.
pub fn check_search(ops: &[RegOp], deadline: Option<Instant>, max_configs: usize) -> Verdict {
    // Entry ids: completed ops by completion, then crashed ops.
    let mut order: Vec<usize> = (0..ops.len()).collect();
    order.sort_by_key(|&i| (ops[i].complete, ops[i].invoke));
    let n = order.len();
    let m = ops.iter().filter(|o| o.ok()).count();
    let id_ops: Vec<RegOp> = order.iter().map(|&i| ops[i]).collect();
    // Events: calls at invocation, returns at completion (crashed: at the
    // end, in id order). Event e in 1..=2n; 0 is the head, 2n+1 the end.
    let mut events: Vec<(u64, u32, bool)> = Vec::with_capacity(2 * n); // (time, id, is_return)
    for (id, op) in id_ops.iter().enumerate() {
        events.push(((op.invoke as u64) << 1, id as u32, false));
        let t = if op.ok() {
            (op.complete as u64) << 1
        } else {
            (1u64 << 40) + id as u64
        };
        events.push((t, id as u32, true));
    }
    events.sort_unstable();
    let end = 2 * n + 1;
    let mut next: Vec<u32> = (1..=end as u32 + 1).collect();
    let mut prev: Vec<u32> = (0..=end as u32).map(|i| i.saturating_sub(1)).collect();
    let mut call_ev = vec![0u32; n];
    let mut ret_ev = vec![0u32; n];
    let mut ev_id = vec![0u32; end + 1];
    let mut ev_ret = vec![false; end + 1];
    for (k, &(_, id, ret)) in events.iter().enumerate() {
        let e = k + 1;
        ev_id[e] = id;
        ev_ret[e] = ret;
        if ret {
            ret_ev[id as usize] = e as u32;
        } else {
            call_ev[id as usize] = e as u32;
        }
    }
    let unlink = |next: &mut Vec<u32>, prev: &mut Vec<u32>, e: usize| {
        let (p, nx) = (prev[e] as usize, next[e] as usize);
        next[p] = nx as u32;
        prev[nx] = p as u32;
    };
    let relink = |next: &mut Vec<u32>, prev: &mut Vec<u32>, e: usize| {
        let (p, nx) = (prev[e] as usize, next[e] as usize);
        next[p] = e as u32;
        prev[nx] = e as u32;
    };

    let words = n.div_ceil(64).max(1);
    let mut lin = vec![0u64; words];
    let is_set = |lin: &[u64], i: usize| lin[i >> 6] >> (i & 63) & 1 == 1;
    let mut c: usize = 0; // first completed op not linearized (≤ m)
    let mut ok_count: usize = 0; // linearized completed ops
    let mut crashed: Vec<u32> = Vec::new(); // linearized crashed ids (stack order)
    let mut cache: HashSet<Config> = HashSet::new();
    let mut best_c = 0usize;
    let mut best_states: Vec<u32> = vec![NIL];
    let mut stack: Vec<(u32, u32)> = Vec::new(); // (id, previous state)
    let mut state = NIL;
    let mut entry = next[0] as usize;
    let mut steps: u64 = 0;
    loop {
        steps += 1;
        if steps & 0xfff == 1 && deadline.is_some_and(|d| Instant::now() >= d) {
            return Verdict::Unknown("timeout");
        }
        if entry == end {
            return Verdict::Valid;
        }
        let id = ev_id[entry] as usize;
        if ev_ret[entry] {
            if id >= m {
                // Only crashed returns remain: every completed op is placed.
                return Verdict::Valid;
            }
            // The return of an op not yet linearized: backtrack.
            let Some((pid, pstate)) = stack.pop() else {
                return Verdict::Invalid(Failure {
                    op: order[best_c],
                    states: best_states,
                    cause: None,
                });
            };
            let pid = pid as usize;
            lin[pid >> 6] &= !(1 << (pid & 63));
            if pid < m {
                ok_count -= 1;
                c = c.min(pid);
            } else {
                crashed.pop();
            }
            relink(&mut next, &mut prev, ret_ev[pid] as usize);
            relink(&mut next, &mut prev, call_ev[pid] as usize);
            state = pstate;
            entry = next[call_ev[pid] as usize] as usize;
            continue;
        }
        let Some(s2) = step(state, &id_ops[id]) else {
            entry = next[entry] as usize;
            continue;
        };
        // Tentatively linearize and look the configuration up.
        lin[id >> 6] |= 1 << (id & 63);
        let mut c2 = c;
        if id < m {
            ok_count += 1;
            while c2 < m && is_set(&lin, c2) {
                c2 += 1;
            }
        } else {
            crashed.push(id as u32);
        }
        let mut extra: Vec<u32> = Vec::new();
        let mut want = ok_count - c2;
        let mut i = c2 + 1;
        while want > 0 {
            let w = lin[i >> 6] >> (i & 63);
            if w == 0 {
                i = (i | 63) + 1;
                continue;
            }
            let j = i + w.trailing_zeros() as usize;
            extra.push(j as u32);
            want -= 1;
            i = j + 1;
        }
        let mut cr = crashed.clone();
        cr.sort_unstable();
        extra.extend(cr);
        let config = Config {
            state: s2,
            c: c2 as u32,
            extra: extra.into_boxed_slice(),
        };
        if cache.insert(config) {
            if cache.len() > max_configs {
                return Verdict::Unknown("search-space");
            }
            if c2 > best_c {
                best_c = c2;
                best_states.clear();
            }
            if c2 == best_c && best_states.len() < MAX_STATES && !best_states.contains(&s2) {
                best_states.push(s2);
                best_states.sort_unstable();
            }
            stack.push((id as u32, state));
            state = s2;
            c = c2;
            unlink(&mut next, &mut prev, call_ev[id] as usize);
            unlink(&mut next, &mut prev, ret_ev[id] as usize);
            entry = next[0] as usize;
        } else {
            lin[id >> 6] &= !(1 << (id & 63));
            if id < m {
                ok_count -= 1;
            } else {
                crashed.pop();
            }
            entry = next[entry] as usize;
        }
    }
}

mod history;
mod precheck;
pub mod register;

pub(crate) use history::result_value;
pub use history::{check_history, check_keys};
#[cfg(test)]
mod tests;
