//! Process order and real-time order between transactions, and their
//! explainers.

use super::{PairExplainer, Step, StepKind, StepText};
use crate::edn::Value;
use crate::graph::Rels;
use crate::model::{History, OpType};
use crate::report::op_value;

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
    // Completed oks not yet implied by a later completed op.
    let mut frontier: Vec<u32> = Vec::new();
    // For each completion, the frontier ops linked to it (its in-edges).
    let mut linked_to: hashbrown::HashMap<u32, Vec<u32>> = hashbrown::HashMap::new();
    let mut edges = Vec::new();
    for (i, op) in history.ops.iter().enumerate() {
        match op.op_type {
            OpType::Invoke => {
                if let Some(c) = history.completion_of(i) {
                    if !frontier.is_empty() {
                        for &a in &frontier {
                            edges.push((a, c as u32, Rels::REALTIME));
                        }
                        linked_to.insert(c as u32, frontier.clone());
                    }
                }
            }
            OpType::Ok => {
                if let Some(implied) = linked_to.remove(&(i as u32)) {
                    if !implied.is_empty() {
                        let implied: hashbrown::HashSet<u32> = implied.into_iter().collect();
                        frontier.retain(|a| !implied.contains(a));
                    }
                }
                frontier.push(i as u32);
            }
            OpType::Fail | OpType::Info => {
                linked_to.remove(&(i as u32));
            }
        }
    }
    edges
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
                (Value::kw("a'"), op_value(history, a as usize)),
                (Value::kw("b"), op_value(history, inv)),
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
