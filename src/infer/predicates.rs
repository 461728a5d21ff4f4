//! Predicate dependencies for Elle-style inference (`--algorithm infer` on
//! histories with `:rp`/`:wp` micro-ops, issue 18), where they are certain.
//!
//! The inference reads the history's item view
//! ([`crate::check::sat::inference_view`]): a returned row is a read of
//! its value, a `:wp` writes its value to the rows it matched, and an
//! unreturned row whose version is certain (every value written to the key
//! matches, so only the initial `nil` does not) is a read of `nil`. With
//! unique values these give wr edges and, through the version orders, rw
//! edges exactly as item reads do. Edges whose reason is a predicate's view
//! of a key are explained as predicate steps, so the cycles through them
//! are Adya's `G-single`, `G-nonadjacent`, `G2` (no `-item`;
//! [`crate::check::classify`]).
//!
//! Not inferred: an unreturned row that leaves several versions possible
//! (Vbox's unknown θ-read: a choice, which only the exact checker makes).
//! So the inference may accept a history the exact checker rejects (Vbox's
//! figure 1), as it does for item histories whose version orders it cannot
//! infer.

use super::rw_register::{self, RwOptions};
use super::txn::ExtraGraph;
use super::{Inference, PairExplainer, Refusal, Step, StepKind};
use crate::model::{Atom, History, MopArg, MopFn, OpValue};

/// Explains a pair as the rw-register explainer does, then restates a wr
/// step into a predicate's view, or an rw step out of one, as a predicate
/// step.
struct PredicateExplainer<'h> {
    /// The history with its predicate micro-ops.
    original: &'h History,
    /// Per micro-op of the item view, the predicate micro-op it came from.
    origin: Vec<Option<u32>>,
    inner: Vec<Box<dyn PairExplainer>>,
}

impl PairExplainer for PredicateExplainer<'_> {
    fn explain(&self, view: &History, a: u32, b: u32) -> Option<Step> {
        let step = self.inner.iter().find_map(|e| e.explain(view, a, b))?;
        let (reader, writer) = match step.kind {
            StepKind::Wr => (b, a),
            StepKind::Rw => (a, b),
            _ => return Some(step),
        };
        let Some(key) = step.data.get_kw("key") else {
            return Some(step);
        };
        // The reader's first micro-op on the key made its external read.
        let op = &view.ops[reader as usize];
        let OpValue::Mops { start, .. } = op.value else {
            return Some(step);
        };
        let Some((i, m)) = view
            .mops(op)
            .iter()
            .enumerate()
            .find(|(_, m)| view.atom_value(m.key) == *key)
        else {
            return Some(step);
        };
        let (Some(p), MopFn::Read) = (self.origin[start as usize + i], m.f) else {
            return Some(step);
        };
        let atom = |arg: MopArg| match arg {
            MopArg::Atom(a) => Some(a),
            _ => None,
        };
        let value = atom(m.arg);
        Some(match step.kind {
            StepKind::Wr => crate::check::sat::pred_wr_step(self.original, m.key, value, p),
            _ => {
                // The writer's final write of the key.
                let later: Option<Option<Atom>> = view
                    .mops(&view.ops[writer as usize])
                    .iter()
                    .rev()
                    .find(|w| w.f == MopFn::Write && w.key == m.key)
                    .map(|w| atom(w.arg));
                let Some(later) = later else {
                    return Some(step);
                };
                crate::check::sat::pred_rw_step(self.original, m.key, value, later, p)
            }
        })
    }
}

/// The rw-register inference of a history with predicate micro-ops: its
/// inference on `view` (from [`crate::check::sat::inference_view`], with
/// `origin`), whose explanations name the predicates of `h`. Check with
/// `view` as the history (it prints ops from `h`'s source text).
pub fn analyze<'h>(
    h: &'h History,
    view: &History,
    origin: Vec<Option<u32>>,
    extra: ExtraGraph,
    opts: &RwOptions,
) -> Result<Inference<'h>, Refusal> {
    let inner = rw_register::analyze(view, extra, opts)?;
    let mut anomalies = inner.anomalies;
    anomalies.add_seq_nonempty("internal", crate::check::sat::pred_internal_cases(h));
    Ok(Inference {
        edges: inner.edges,
        anomalies,
        vertices: inner.vertices,
        explainers: vec![Box::new(PredicateExplainer {
            original: h,
            origin,
            inner: inner.explainers,
        })],
    })
}
