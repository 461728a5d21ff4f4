//! Files Elle writes under `:directory`: `<anomaly-type>.txt` explanations.

use crate::check::outcome::Outcome;
use crate::check::ExplainedCycle;
use crate::edn::order::clojure_hasheq;
use crate::edn::pr_str;
use crate::edn::Value;
use crate::model::History;
use crate::model::{MopFn, OpType};
use crate::report::plot::{render, PlotOptions, Rendered};
use std::path::Path;

/// The note given when plots could only be written as DOT.
pub const NO_GRAPHVIZ: &str =
    "graphviz's dot is not installed: plots were written as .dot files instead of images";

/// Elle's explanation of one cycle ("Let: … Then: … a contradiction!").
pub fn explain_cycle(h: &History, c: &ExplainedCycle) -> String {
    let names: Vec<String> = (1..c.ops.len()).map(|i| format!("T{i}")).collect();
    let mut s = String::from("Let:\n");
    let bindings: Vec<String> = names
        .iter()
        .zip(&c.ops)
        .map(|(n, &op)| format!("  {n} = {}", pr_str(&h.op_value(op as usize))))
        .collect();
    s.push_str(&bindings.join("\n"));
    s.push_str("\n\nThen:\n");
    let last = c.steps.len().saturating_sub(1);
    for (i, step) in c.steps.iter().enumerate() {
        let a = &names[i % names.len()];
        let b = &names[(i + 1) % names.len()];
        let ex = format!("{a} < {b}, because {}", step.render(a, b));
        if i == last {
            s.push_str(&format!("  - However, {ex}: a contradiction!"));
        } else {
            s.push_str(&format!("  - {ex}.\n"));
        }
    }
    s
}

/// Writes Elle's files into `dir`: one `<type>.txt` per reported cycle
/// type, the plots the outcome carries (`sccs/<i>.svg`,
/// `<type>/<i>.svg`, or PNG / DOT), and `incompatible-order/<key>.html`
/// (the key as [`crate::report::names::safe_file_name`] writes it), and
/// last the HTML report `index.html` ([`crate::report::html`]). Returns notes
/// for the user (plots skipped or rendered as DOT only).
pub fn write_files(
    dir: &Path,
    h: &History,
    outcome: &Outcome,
    plot: &PlotOptions,
) -> std::io::Result<Vec<String>> {
    let notes = write_elle_files(dir, h, outcome, plot)?;
    crate::report::html::write_index(dir, h, outcome)?;
    Ok(notes)
}

/// The files Elle itself writes (everything [`write_files`] does but the
/// HTML report).
fn write_elle_files(
    dir: &Path,
    h: &History,
    outcome: &Outcome,
    plot: &PlotOptions,
) -> std::io::Result<Vec<String>> {
    let mut notes = Vec::new();
    for (stem, dot) in &outcome.plots {
        let renamed;
        let dot = match (dot, cycle_of_plot(outcome, stem)) {
            (Some(d), Some(c)) => {
                renamed = cycle_names(h, c, d);
                Some(&renamed)
            }
            (d, _) => d.as_ref(),
        };
        let Some(dot) = dot else {
            notes.push(format!(
                "skipped plot {stem}: larger than {} bytes",
                plot.max_bytes
            ));
            continue;
        };
        match render(dot, &dir.join(stem), plot)? {
            Rendered::Written(_) => {}
            Rendered::TooLarge => notes.push(format!(
                "skipped plot {stem}: larger than {} bytes",
                plot.max_bytes
            )),
            Rendered::NoGraphviz(_) => notes.push(NO_GRAPHVIZ.to_string()),
            Rendered::Failed(p, why) => {
                notes.push(format!("plot {stem}: {why}; wrote {}", p.display()))
            }
        }
    }
    // Keys are data: their file names are made safe (and kept distinct).
    let names = crate::report::names::make_unique(
        outcome
            .incompatible_keys
            .iter()
            .map(|k| crate::report::names::safe_file_name(&pr_str(k)))
            .collect(),
    );
    for (key, name) in outcome.incompatible_keys.iter().zip(names) {
        let sub = dir.join("incompatible-order");
        std::fs::create_dir_all(&sub)?;
        std::fs::write(sub.join(name + ".html"), incompatible_order_html(h, key))?;
    }
    if outcome.cycles.is_empty() {
        return Ok(notes);
    }
    std::fs::create_dir_all(dir)?;
    let mut kinds: Vec<&str> = Vec::new();
    for c in &outcome.cycles {
        if !kinds.contains(&c.kind.as_str()) {
            kinds.push(&c.kind);
        }
    }
    for kind in kinds {
        let text: Vec<String> = outcome
            .cycles
            .iter()
            .filter(|c| c.kind == kind)
            .enumerate()
            .map(|(i, c)| format!("{kind} #{i}\n{}", explain_cycle(h, c)))
            .collect();
        std::fs::write(dir.join(format!("{kind}.txt")), text.join("\n\n\n"))?;
    }
    Ok(notes)
}

/// The reported cycle a plot stem (`<type>/<i>`, `i` counting that type's
/// cycles) shows, if it is a cycle plot.
fn cycle_of_plot<'a>(outcome: &'a Outcome, stem: &str) -> Option<&'a ExplainedCycle> {
    let (kind, i) = stem.rsplit_once('/')?;
    if kind == "sccs" {
        return None;
    }
    let i: usize = i.parse().ok()?;
    outcome.cycles.iter().filter(|c| c.kind == kind).nth(i)
}

/// A cycle plot's DOT with each transaction named as its explanation
/// (`<type>.txt`) names it, `T1`, `T2`, … in cycle order, instead of
/// `T<op index>`, so the picture and the text match. Node names are
/// rewritten where they stand as names: at the start of a line and after
/// `-> `; labels are left alone.
fn cycle_names(h: &History, c: &ExplainedCycle, dot: &str) -> String {
    let mut by_index = hashbrown::HashMap::new();
    for (k, &op) in c.ops.iter().take(c.ops.len().saturating_sub(1)).enumerate() {
        by_index
            .entry(format!("T{}", h.ops[op as usize].index))
            .or_insert_with(|| format!("T{}", k + 1));
    }
    let rename = |token: &str| -> String {
        let end = token
            .char_indices()
            .skip(1)
            .find(|(_, ch)| !ch.is_ascii_digit())
            .map_or(token.len(), |(p, _)| p);
        match by_index.get(&token[..end]) {
            Some(n) => format!("{n}{}", &token[end..]),
            None => token.to_string(),
        }
    };
    dot.lines()
        .map(|line| {
            if !line.starts_with('T') {
                return line.to_string();
            }
            let (head, rest) = line.split_once(' ').unwrap_or((line, ""));
            let mut out = rename(head);
            if let Some(after) = rest.strip_prefix("-> ") {
                let (target, tail) = after.split_once(' ').unwrap_or((after, ""));
                out.push_str(" -> ");
                out.push_str(&rename(target));
                if !tail.is_empty() || after.contains(' ') {
                    out.push(' ');
                    out.push_str(tail);
                }
            } else if !rest.is_empty() || line.contains(' ') {
                out.push(' ');
                out.push_str(rest);
            }
            out
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// A light background colour derived from a value's hash, so that equal
/// elements share a colour (as Elle's `rand-bg-color`).
fn background(v: &Value) -> String {
    let h = clojure_hasheq(v) as i64;
    let squeeze = |x: i64| 130 + x * 120 / 255;
    format!(
        "#{:02x}{:02x}{:02x}",
        squeeze(h & 255),
        squeeze((h & 0xff00) >> 8),
        squeeze((h & 0xff_0000) >> 16)
    )
}

fn html_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Elle's table of every `:ok` read of `key`, with the elements that
/// disagree with the longest read highlighted.
pub fn incompatible_order_html(h: &History, key: &Value) -> String {
    let Some(k) = h.interner.lookup(key) else {
        return String::new();
    };
    let reads = || {
        h.ops
            .iter()
            .enumerate()
            .filter(|(_, op)| op.op_type == OpType::Ok)
            .flat_map(|(i, op)| {
                h.mops(op)
                    .iter()
                    .filter(|m| m.f() == MopFn::Read && m.key() == k)
                    .map(move |m| (i, m))
            })
    };
    let longest: Vec<_> = reads()
        .map(|(_, m)| h.list(m.arg()))
        .max_by_key(|l| l.len())
        .unwrap_or(&[])
        .to_vec();
    let title = match key {
        Value::Str(s) => s.clone(),
        other => pr_str(other),
    };
    let mut s = format!(
        "<html><head><style>th {{ text-align: left; }}</style></head><body><h1>All Reads of {}</h1>\
<table><thead><tr><th>Index</th><th>Time (s)</th><th>Process</th><th>Fun</th>\
<th colspan=\"32\">Value</th></tr></thead><tbody>",
        html_escape(&title)
    );
    for (i, m) in reads() {
        let op = &h.ops[i];
        let f = match h.atom_value(op.f) {
            Value::Keyword(k) => k,
            Value::Nil => String::new(),
            other => pr_str(&other),
        };
        s.push_str(&format!(
            "<tr><td>{}</td><td>{:.2}</td><td>{}</td><td>{}</td>",
            op.index,
            op.time as f64 / 1e9,
            op.process,
            html_escape(&f)
        ));
        for (j, &e) in h.list(m.arg()).iter().enumerate() {
            let v = h.atom_value(e);
            let text = html_escape(&pr_str(&v));
            if longest.get(j) == Some(&e) {
                s.push_str(&format!("<td>{text}</td>"));
            } else {
                s.push_str(&format!(
                    "<td style=\"background: {}\">{text}</td>",
                    background(&v)
                ));
            }
        }
        s.push_str("</tr>");
    }
    s.push_str("</tbody></table></body></html>");
    s
}
