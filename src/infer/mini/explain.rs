//! Explanations of the MT graph's wr, ww and rw steps, in the workload's
//! step vocabulary.

use super::*;

/// Explains wr, ww and rw steps of the MT graph (in that order, as Elle's
/// explainers), in the workload's step vocabulary.
pub(super) struct MiniExplainer {
    pub(super) workload: Workload,
    pub(super) node: Vec<u32>,
    pub(super) txns: Vec<MtTxn>,
}

impl MiniExplainer {
    pub(super) fn txn(&self, pos: u32) -> Option<&MtTxn> {
        match self.node.get(pos as usize) {
            Some(&t) if t != NONE => Some(&self.txns[t as usize]),
            _ => None,
        }
    }
}

/// Position of the first micro-op of `op` matching `f`, key `k` and, for
/// writes, value `v` / for reads, version `v`.
pub(super) fn mop_pos(h: &History, op: u32, write: bool, k: Atom, v: Ver) -> Value {
    h.mops(&h.ops[op as usize])
        .iter()
        .position(|m| {
            m.key() == k
                && if write {
                    is_write(m.f()) && m.arg() == v.map_or(MopArg::Nil, MopArg::Atom)
                } else {
                    m.f() == MopFn::Read && read_version(h, m) == v
                }
        })
        .map_or(Value::Nil, |i| Value::Int(i as i64))
}

impl PairExplainer for MiniExplainer {
    fn explain(&self, h: &History, a: u32, b: u32) -> Option<Step> {
        let (ta, tb) = (self.txn(a)?, self.txn(b)?);
        let list = self.workload == Workload::ListAppend;
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
