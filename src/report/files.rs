//! Files Elle writes under `:directory`: `<anomaly-type>.txt` explanations.

use crate::check::ExplainedCycle;
use crate::edn::pr_str;
use crate::model::History;
use crate::pipeline::Outcome;
use crate::report::op_value;
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
        .map(|(n, &op)| format!("  {n} = {}", pr_str(&op_value(h, op as usize))))
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
/// type, and the plots the outcome carries (`sccs/<i>.svg`,
/// `<type>/<i>.svg`, or PNG / DOT). Returns notes for the user (plots
/// skipped or rendered as DOT only).
pub fn write_files(
    dir: &Path,
    h: &History,
    outcome: &Outcome,
    plot: &PlotOptions,
) -> std::io::Result<Vec<String>> {
    let mut notes = Vec::new();
    for (stem, dot) in &outcome.plots {
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
