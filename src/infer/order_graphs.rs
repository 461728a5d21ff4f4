//! Process order and real-time order between transactions, and their
//! explainers.

use super::{PairExplainer, Step, StepKind, StepText};
use crate::edn::Value;
use crate::graph::Rels;
use crate::model::{History, OpType};

/// Process-order edges: each `:ok` op to the next `:ok` op of the same
/// process (as Elle's `process-graph`).
pub fn process_edges(history: &History) -> Vec<(u32, u32, Rels)> {
    let mut last: hashbrown::HashMap<i64, u32> = hashbrown::HashMap::new();
    let mut edges = Vec::new();
    for (i, op) in history.ops.iter().enumerate() {
        if op.op_type != OpType::Ok {
            continue;
        }
        if let Some(prev) = last.insert(op.process, i as u32) {
            edges.push((prev, i as u32, Rels::PROCESS));
        }
    }
    edges
}

/// Real-time edges: the transitive reduction of "a completed (`:ok`) before
/// b was invoked", built in one sweep. Edges point at b's completion (of any
/// type), as in Elle's `realtime-graph`.
pub fn realtime_edges(history: &History) -> Vec<(u32, u32, Rels)> {
    // Counted first, then filled: a million-transaction history has
    // millions of these edges, and a doubling vector would hold up to
    // twice their size at the inference's peak (issue 23).
    let mut count = 0usize;
    realtime_walk(history, |frontier, _| count += frontier.len());
    let mut edges = Vec::with_capacity(count);
    realtime_walk(history, |frontier, c| {
        edges.extend(frontier.iter().map(|&a| (a, c, Rels::REALTIME)))
    });
    edges
}

/// Calls `link(frontier, c)` for each completion `c` whose invocation the
/// ops of `frontier` completed before (see [`realtime_edges`]).
pub(crate) fn realtime_walk(history: &History, link: impl FnMut(&[u32], u32)) {
    realtime_walk_from(history, 0..history.ops.len() as u32, link)
}

/// [`realtime_walk`] for the links of the ops at `sources` (frontiers
/// that hold one), perhaps with others in them too: the walk starts at
/// the first source with an empty frontier and stops once the frontier
/// holds none. Why that is enough: an op joins the frontier at its own
/// position and leaves it at a completion whatever else is in it (the
/// ones below some position go), so the frontier's entries from
/// `sources.start` on are the same as in the whole walk.
pub(crate) fn realtime_walk_from(
    history: &History,
    sources: std::ops::Range<u32>,
    mut link: impl FnMut(&[u32], u32),
) {
    // Completed oks not yet implied by a later completed op. Positions are
    // pushed in increasing order and only ever removed, so the frontier
    // stays sorted: the ops an invocation at position j linked to are
    // exactly the frontier entries below j, a prefix.
    let mut frontier: Vec<u32> = Vec::new();
    let start = sources.start as usize;
    for (i, op) in history.ops.iter().enumerate().skip(start) {
        if i >= sources.end as usize && frontier.first().is_none_or(|&a| a >= sources.end) {
            return;
        }
        match op.op_type {
            OpType::Invoke => {
                if let Some(c) = history.completion_of(i) {
                    link(&frontier, c as u32);
                }
            }
            OpType::Ok => {
                // Everything linked to this op is implied by it from now on.
                if let Some(j) = history.invocation_of(i) {
                    let implied = frontier.partition_point(|&a| (a as usize) < j);
                    frontier.drain(..implied);
                }
                frontier.push(i as u32);
            }
            OpType::Fail | OpType::Info => {}
        }
    }
}

/// The real-time order as positions ([`crate::graph::scc::PositionOrder`]):
/// a completed `:ok` op precedes every completion whose invocation came
/// after it, which [`realtime_walk`]'s edges reach (they are this order's
/// transitive reduction), so peeling with it decides what peeling with
/// those edges does, without them.
pub(crate) struct RealtimePositions<'h> {
    history: &'h History,
    /// Each op's kind ([`INVOKED`], [`COMPLETED_OK`], [`COMPLETED`]): a
    /// byte an op where its type sits in a 64-byte op (the peeling reads
    /// them in turn).
    kinds: Vec<u8>,
}

/// An invocation.
const INVOKED: u8 = 0;
/// An `:ok` completion.
const COMPLETED_OK: u8 = 1;
/// A `:fail` or `:info` completion.
const COMPLETED: u8 = 2;

impl<'h> RealtimePositions<'h> {
    /// The order of `history`'s ops (their kinds read in two halves, on
    /// two cores when one is free).
    pub(crate) fn new(history: &'h History) -> RealtimePositions<'h> {
        let kind = |op: &crate::model::Op| match op.op_type {
            OpType::Invoke => INVOKED,
            OpType::Ok => COMPLETED_OK,
            OpType::Fail | OpType::Info => COMPLETED,
        };
        let [mut kinds, rest] =
            crate::par::halves(history.ops.len(), crate::par::SPLIT_FROM, |r| {
                history.ops[r].iter().map(kind).collect::<Vec<u8>>()
            });
        kinds.extend(rest);
        RealtimePositions { history, kinds }
    }

    /// `pair[i]`, when op `i` is of kind `invoked` or not and pairs with
    /// an op that pairs back with it (as the reader pairs them; a history
    /// built otherwise may not, and then peeling only finds less).
    fn partner(&self, i: u32, invoked: bool) -> Option<u32> {
        let back = |p: u32| self.history.pair.get(p as usize) == Some(&i);
        let kind = *self.kinds.get(i as usize)?;
        let p = *self.history.pair.get(i as usize)?;
        ((kind == INVOKED) == invoked && (p as usize) < self.kinds.len() && back(p)).then_some(p)
    }
}

impl crate::graph::scc::PositionOrder for RealtimePositions<'_> {
    fn is_end(&self, a: u32) -> bool {
        self.kinds[a as usize] == COMPLETED_OK
    }

    fn start(&self, v: u32) -> Option<u32> {
        self.partner(v, false)
    }

    fn started_at(&self, i: u32) -> Option<u32> {
        // Only a vertex that starts at `i` (a completion, not a second
        // invocation): releasing removes the edge its start added.
        self.partner(i, true).filter(|&c| self.start(c) == Some(i))
    }
}

/// Marks in `seen` every op a real-time edge ([`realtime_walk`]) leaves
/// or enters, without listing the edges: the frontier's entries after the
/// last one marked joined it since the previous link (entries join in
/// increasing order and only leave), so each op is marked once.
pub(crate) fn mark_realtime_endpoints(history: &History, seen: &mut [bool]) {
    let mut last: Option<u32> = None;
    realtime_walk(history, |frontier, c| {
        let Some(&newest) = frontier.last() else {
            return;
        };
        seen[c as usize] = true;
        for &a in frontier
            .iter()
            .rev()
            .take_while(|&&a| last.is_none_or(|l| a > l))
        {
            seen[a as usize] = true;
        }
        last = Some(newest);
    });
}

/// Explains process-order steps.
pub struct ProcessExplainer;

impl PairExplainer for ProcessExplainer {
    fn explain(&self, history: &History, a: u32, b: u32) -> Option<Step> {
        let (oa, ob) = (&history.ops[a as usize], &history.ops[b as usize]);
        (oa.process == ob.process && oa.index < ob.index).then(|| Step {
            kind: StepKind::Process,
            data: Value::Map(vec![
                (Value::kw("type"), Value::kw("process")),
                (Value::kw("process"), Value::Int(oa.process)),
            ]),
            text: StepText::Process {
                process: oa.process,
            },
        })
    }
}

/// Explains real-time steps.
pub struct RealtimeExplainer;

impl PairExplainer for RealtimeExplainer {
    fn explain(&self, history: &History, a: u32, b: u32) -> Option<Step> {
        let inv = history.invocation_of(b as usize)?;
        let (oa, oi) = (&history.ops[a as usize], &history.ops[inv]);
        (oa.index < oi.index).then(|| Step {
            kind: StepKind::Realtime,
            data: Value::Map(vec![
                (Value::kw("type"), Value::kw("realtime")),
                (Value::kw("a'"), history.op_value(a as usize)),
                (Value::kw("b"), history.op_value(inv)),
            ]),
            text: StepText::Realtime {
                a_index: oa.index,
                b_index: oi.index,
                a_time: oa.time,
                b_time: oi.time,
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gen::{generate, GenOptions};
    use crate::model::Format;
    use crate::read::read_history_bytes;

    /// A generated history of `txns` transactions over `processes`
    /// processes, a tenth of them failed and `info` of them crashed.
    fn generated(seed: u64, txns: usize, processes: usize, info: f64) -> History {
        let mut bytes = Vec::new();
        let opts = GenOptions {
            txns,
            processes,
            fail_fraction: 0.1,
            info_fraction: info,
            seed,
            ..GenOptions::default()
        };
        generate(&opts, &mut bytes).expect("generated");
        read_history_bytes(bytes, "gen", Format::Edn).expect("readable")
    }

    /// Reachability over the sweep's edges equals the full real-time order
    /// ("a completed ok before b was invoked"), on generated histories with
    /// failures and crashes; and the sweep never emits more edges than ops
    /// times processes.
    #[test]
    fn realtime_edges_are_a_reduction_of_the_full_order() {
        for seed in 0..20 {
            let h = generated(seed, 60, 4, 0.1);
            let n = h.ops.len();
            let edges = realtime_edges(&h);
            assert!(edges.len() <= n * 8, "seed {seed}: {} edges", edges.len());
            let mut adj = vec![Vec::new(); n];
            for &(a, b, r) in &edges {
                assert_eq!(r, Rels::REALTIME);
                adj[a as usize].push(b as usize);
            }
            let reach = |from: usize| {
                let mut seen = vec![false; n];
                let mut stack = vec![from];
                while let Some(v) = stack.pop() {
                    for &w in &adj[v] {
                        if !seen[w] {
                            seen[w] = true;
                            stack.push(w);
                        }
                    }
                }
                seen
            };
            for a in 0..n {
                if h.ops[a].op_type != OpType::Ok {
                    continue;
                }
                let r = reach(a);
                for (inv, op) in h.ops.iter().enumerate() {
                    if op.op_type != OpType::Invoke {
                        continue;
                    }
                    let Some(b) = h.completion_of(inv) else {
                        continue;
                    };
                    let precedes = a < inv;
                    assert_eq!(
                        r[b], precedes,
                        "seed {seed}: op {a} vs completion {b} (invoked at {inv})"
                    );
                }
            }
        }
    }

    /// The walk from a range of sources links every op of the range
    /// exactly as the whole walk does (and what else it links is in the
    /// whole walk's edges too), for every range of generated histories
    /// with failures, crashes and many processes.
    #[test]
    fn the_walk_from_some_sources_gives_their_edges() {
        for seed in 0..12 {
            let h = generated(seed, 40, 2 + seed as usize % 5, 0.15);
            let n = h.ops.len() as u32;
            let all: Vec<(u32, u32)> = realtime_edges(&h).iter().map(|e| (e.0, e.1)).collect();
            assert!(all.len() > 20, "seed {seed}: {} edges", all.len());
            for start in 0..=n {
                for end in start..=n {
                    let mut got = Vec::new();
                    realtime_walk_from(&h, start..end, |frontier, c| {
                        got.extend(frontier.iter().map(|&a| (a, c)))
                    });
                    assert!(
                        got.iter().all(|e| all.contains(e)),
                        "seed {seed}: {start}..{end}"
                    );
                    got.retain(|e| (start..end).contains(&e.0));
                    let mut want: Vec<_> = all
                        .iter()
                        .copied()
                        .filter(|e| (start..end).contains(&e.0))
                        .collect();
                    got.sort_unstable();
                    want.sort_unstable();
                    assert_eq!(got, want, "seed {seed}: sources {start}..{end}");
                }
            }
        }
    }

    /// Peeling with the real-time order as positions decides what the
    /// cycle search over its listed edges decides, and the endpoints it
    /// marks are the listed edges' endpoints: generated histories (failed
    /// and crashed transactions, 2–6 processes) with random extra edges
    /// between their completions, about half of them cyclic.
    #[test]
    fn realtime_positions_decide_what_the_listed_edges_do() {
        use crate::graph::scc::{nontrivial_sccs_unmerged, peeled_with};
        use crate::graph::DiGraph;
        let rows =
            |edges: &[(u32, u32, Rels)], n| DiGraph::unmerged_from_edges_and(n, edges, |_, _| {});
        let mut rng = crate::gen::Rng::new(7);
        let (mut cyclic, mut acyclic) = (0, 0);
        for seed in 0..300 {
            let h = generated(seed, 12 + seed as usize % 30, 2 + seed as usize % 5, 0.15);
            let n = h.ops.len();
            let listed = realtime_edges(&h);
            let mut seen = vec![false; n];
            mark_realtime_endpoints(&h, &mut seen);
            let positions = RealtimePositions::new(&h);
            let mut want = vec![false; n];
            for &(a, b, _) in &listed {
                want[a as usize] = true;
                want[b as usize] = true;
            }
            assert_eq!(seen, want, "seed {seed}");
            let completions: Vec<u32> = (0..n as u32)
                .filter(|&i| h.ops[i as usize].op_type != OpType::Invoke)
                .collect();
            let pick = |rng: &mut crate::gen::Rng| {
                completions[rng.below(completions.len() as u64) as usize]
            };
            let extra: Vec<(u32, u32, Rels)> = (0..rng.below(4))
                .map(|_| (pick(&mut rng), pick(&mut rng), Rels::WR))
                .collect();
            let data = rows(&extra, n);
            let mut all = extra.clone();
            all.extend(listed);
            let expected = nontrivial_sccs_unmerged(&rows(&all, n)).is_empty();
            assert_eq!(
                peeled_with(&data, &positions).is_none(),
                expected,
                "seed {seed}: {extra:?}"
            );
            if expected {
                acyclic += 1;
            } else {
                cyclic += 1;
            }
        }
        assert!(cyclic > 60 && acyclic > 60, "{cyclic} {acyclic}");
    }

    #[test]
    fn process_edges_link_consecutive_oks_per_process() {
        let src = b"{:index 0, :type :invoke, :process 0, :f :txn, :value []}\n\
{:index 1, :type :ok, :process 0, :f :txn, :value []}\n\
{:index 2, :type :invoke, :process 0, :f :txn, :value []}\n\
{:index 3, :type :fail, :process 0, :f :txn, :value []}\n\
{:index 4, :type :invoke, :process 0, :f :txn, :value []}\n\
{:index 5, :type :ok, :process 0, :f :txn, :value []}\n";
        let h = read_history_bytes(src.to_vec(), "t", Format::Edn).expect("readable");
        assert_eq!(process_edges(&h), vec![(1, 5, Rels::PROCESS)]);
    }
}
