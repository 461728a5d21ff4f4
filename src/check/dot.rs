//! The DOT source of a plot of transactions and their dependencies, as
//! Elle draws it: one record node per transaction listing its micro-ops,
//! one edge per dependency, labelled and coloured by relationship. Built by
//! the checks (an outcome carries its plots' sources, [`crate::report::plot`]
//! renders them), so it lives with them.

use crate::edn::pr_str;
use crate::infer::{Step, StepKind};
use crate::model::{History, MopFn, OpType};

fn type_color(t: OpType) -> &'static str {
    match t {
        OpType::Ok => "#0058AD",
        OpType::Info => "#AC6E00",
        _ => "#A50053",
    }
}

fn step_label(kind: StepKind) -> (&'static str, &'static str) {
    match kind {
        StepKind::Ww => ("ww", "#C02700"),
        StepKind::Wr => ("wr", "#C000A5"),
        StepKind::Rw => ("rw", "#5B00C0"),
        StepKind::Realtime => ("rt", "#0050C0"),
        StepKind::Process => ("p", "#00C0C0"),
    }
}

/// Escapes the characters DOT record labels treat specially.
fn escape_record(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(c, '\\' | '|' | '{' | '}' | '"') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// A micro-op as Elle labels it: `a x 1`, `r y [1 2]`.
fn mop_label(h: &History, m: &crate::model::Mop) -> String {
    let crate::edn::Value::Vector(parts) = h.mop_value(m) else {
        return String::new();
    };
    let f = match m.f() {
        MopFn::Append => "a".to_string(),
        MopFn::Read => "r".to_string(),
        MopFn::Write => "w".to_string(),
        MopFn::PredRead => "rp".to_string(),
        MopFn::PredWrite => "wp".to_string(),
        MopFn::Other(name) => match h.interner.fn_value(name) {
            crate::edn::Value::Keyword(k) => k.rsplit('/').next().unwrap_or(&k).to_string(),
            other => pr_str(&other),
        },
    };
    format!("{f} {} {}", pr_str(&parts[1]), pr_str(&parts[2]))
}

fn mop_port(step: &Step, key: &str) -> Option<i64> {
    match step.data.get_kw(key) {
        Some(crate::edn::Value::Int(i)) => Some(*i),
        _ => None,
    }
}

/// The DOT source for the transactions `ops` (op positions), with every
/// dependency between them: `out(v)` lists v's successors, and
/// `explain(a, b)` says why `b` depends on `a`. `None` once the source
/// would exceed `max_bytes` (such plots are skipped, as Elle does).
pub fn dot_source(
    h: &History,
    ops: &[u32],
    out: &dyn Fn(u32) -> Vec<u32>,
    explain: &dyn Fn(u32, u32) -> Option<Step>,
    max_bytes: usize,
) -> Option<String> {
    let mut size = 0usize;
    let mut ops = ops.to_vec();
    ops.sort_unstable_by_key(|&o| h.ops[o as usize].index);
    ops.dedup();
    let name = |o: u32| format!("T{}", h.ops[o as usize].index);
    let mut lines = Vec::new();
    for &o in &ops {
        let op = &h.ops[o as usize];
        let label: Vec<String> = h
            .mops(op)
            .iter()
            .enumerate()
            .map(|(i, m)| format!("<f{i}> {}", escape_record(&mop_label(h, m))))
            .collect();
        let color = type_color(op.op_type);
        lines.push(format!(
            "{} [height=0.4,shape=record,label=\"{}\",color=\"{color}\",fontcolor=\"{color}\"]",
            name(o),
            label.join("|")
        ));
        size += lines.last().map_or(0, |l| l.len() + 1);
        if size > max_bytes {
            return None;
        }
    }
    for &a in &ops {
        let mut succ = out(a);
        succ.sort_unstable_by_key(|&b| h.ops[b as usize].index);
        for b in succ {
            if ops
                .binary_search_by_key(&h.ops[b as usize].index, |&o| h.ops[o as usize].index)
                .is_err()
            {
                continue;
            }
            let Some(step) = explain(a, b) else {
                continue;
            };
            let port = |n: String, i: Option<i64>| match i {
                Some(i) => format!("{n}:f{i}"),
                None => n,
            };
            let (label, color) = step_label(step.kind);
            lines.push(format!(
                "{} -> {} [label=\"{label}\",fontcolor=\"{color}\",color=\"{color}\"]",
                port(name(a), mop_port(&step, "a-mop-index")),
                port(name(b), mop_port(&step, "b-mop-index")),
            ));
            size += lines.last().map_or(0, |l| l.len() + 1);
            if size > max_bytes {
                return None;
            }
        }
    }
    Some(format!("digraph a_graph {{\n{}\n}}", lines.join("\n")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_labels_escape_dot_specials() {
        assert_eq!(
            escape_record(r#"r x [1] {a|"b"}"#),
            r#"r x [1] \{a\|\"b\"\}"#
        );
    }
}
