//! A picture of Elle's consistency-model lattice ([`crate::consistency`]) as
//! inline SVG, with the models a result rules out marked. Drawn here rather
//! than by graphviz so the HTML report is complete without it.
//!
//! Layout: a model's layer is the length of the longest chain of stronger
//! models above it (so every edge points downwards); within a layer, models
//! are ordered by a few sweeps of the barycentre heuristic (the mean position
//! of their neighbours), which keeps crossings low and is deterministic.

use crate::consistency::{canonical_model_name, friendly_model_name, model_edges};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

/// How a model is marked on the picture.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mark {
    /// In the result's `:not`: the weakest models the history violates.
    Not,
    /// In the result's `:also-not`: stronger models violated as a consequence.
    AlsoNot,
    /// Neither.
    Plain,
}

/// One placed model.
struct Node {
    name: &'static str,
    label: &'static str,
    x: f64,
    y: f64,
    w: f64,
}

const LAYER_GAP: f64 = 64.0;
const NODE_H: f64 = 24.0;
const H_GAP: f64 = 14.0;
const MARGIN: f64 = 10.0;
/// Approximate advance of one character at the 11px sans-serif font used.
const CHAR_W: f64 = 6.6;

/// The lattice's models in layers (strongest first), each layer in drawing
/// order.
fn layers() -> Vec<Vec<&'static str>> {
    let edges = model_edges();
    let mut preds: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    let mut succs: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for &(a, b) in &edges {
        preds.entry(a).or_default();
        succs.entry(b).or_default();
        preds.entry(b).or_default().push(a);
        succs.entry(a).or_default().push(b);
    }
    // Longest-path layering in topological order (Kahn's algorithm over the
    // acyclic lattice; names in BTree order keep it deterministic).
    let mut indegree: BTreeMap<&str, usize> = preds.iter().map(|(v, p)| (*v, p.len())).collect();
    let mut ready: Vec<&str> = indegree
        .iter()
        .filter(|(_, d)| **d == 0)
        .map(|(v, _)| *v)
        .collect();
    let mut depth: BTreeMap<&str, usize> = BTreeMap::new();
    while let Some(v) = ready.pop() {
        let d = preds[v].iter().map(|p| depth[p] + 1).max().unwrap_or(0);
        depth.insert(v, d);
        for &s in &succs[v] {
            let e = indegree.get_mut(s).expect("vertex");
            *e -= 1;
            if *e == 0 {
                ready.push(s);
            }
        }
    }
    let n = depth.values().max().map_or(0, |d| d + 1);
    let mut layers: Vec<Vec<&'static str>> = vec![Vec::new(); n];
    for &(a, b) in &edges {
        for v in [a, b] {
            if !layers[depth[v]].contains(&v) {
                layers[depth[v]].push(v);
            }
        }
    }
    for l in &mut layers {
        l.sort_unstable();
    }
    // Barycentre sweeps: down (by predecessors), then up (by successors).
    let pos = |layers: &Vec<Vec<&'static str>>| -> BTreeMap<&'static str, f64> {
        let mut m = BTreeMap::new();
        for l in layers {
            for (i, v) in l.iter().enumerate() {
                m.insert(*v, i as f64 - l.len() as f64 / 2.0);
            }
        }
        m
    };
    for _ in 0..4 {
        for down in [true, false] {
            let order: Vec<usize> = if down {
                (1..n).collect()
            } else {
                (0..n.saturating_sub(1)).rev().collect()
            };
            for i in order {
                let p = pos(&layers);
                let key = |v: &str| {
                    let ns = if down { &preds[v] } else { &succs[v] };
                    if ns.is_empty() {
                        p[v]
                    } else {
                        ns.iter().map(|u| p[u]).sum::<f64>() / ns.len() as f64
                    }
                };
                let mut keyed: Vec<(f64, &'static str)> =
                    layers[i].iter().map(|v| (key(v), *v)).collect();
                keyed.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(b.1)));
                layers[i] = keyed.into_iter().map(|(_, v)| v).collect();
            }
        }
    }
    layers
}

/// Places every model: returns the nodes and the picture's width and height.
fn place() -> (Vec<Node>, f64, f64) {
    let layers = layers();
    let width_of = |v: &str| friendly_model_name(v).len() as f64 * CHAR_W + 14.0;
    let row_w = |l: &[&str]| {
        l.iter().map(|v| width_of(v)).sum::<f64>() + H_GAP * l.len().saturating_sub(1) as f64
    };
    let total_w = layers.iter().map(|l| row_w(l)).fold(0.0, f64::max) + 2.0 * MARGIN;
    let mut nodes = Vec::new();
    for (i, l) in layers.iter().enumerate() {
        let mut x = (total_w - row_w(l)) / 2.0;
        let y = MARGIN + i as f64 * LAYER_GAP;
        for &v in l {
            let w = width_of(v);
            nodes.push(Node {
                name: v,
                label: friendly_model_name(v),
                x,
                y,
                w,
            });
            x += w + H_GAP;
        }
    }
    let total_h = 2.0 * MARGIN + (layers.len().max(1) - 1) as f64 * LAYER_GAP + NODE_H;
    (nodes, total_w, total_h)
}

/// The models named by a result's `:not` and `:also-not` (any spelling),
/// canonicalised as the lattice's vertices are.
pub fn marks(not: &[String], also_not: &[String]) -> BTreeMap<String, Mark> {
    let mut m = BTreeMap::new();
    for n in also_not {
        m.insert(canonical_model_name(n).to_string(), Mark::AlsoNot);
    }
    for n in not {
        m.insert(canonical_model_name(n).to_string(), Mark::Not);
    }
    m
}

/// The lattice as an `<svg>` element, scaled down to the page's width: an
/// arrow from a stronger model to each model it implies, models in `marks` filled (red: `:not`, orange:
/// `:also-not`), each with a `<title>` tooltip.
pub fn svg(marks: &BTreeMap<String, Mark>) -> String {
    let (nodes, w, h) = place();
    let at: BTreeMap<&str, &Node> = nodes.iter().map(|n| (n.name, n)).collect();
    let mark = |v: &str| marks.get(v).copied().unwrap_or(Mark::Plain);
    let mut s = String::new();
    let _ = write!(
        s,
        "<svg class=\"lattice\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {w:.0} {h:.0}\" \
style=\"width:100%;max-width:{w:.0}px;height:auto\" role=\"img\" aria-label=\"Elle's consistency model lattice\">"
    );
    s.push_str(
        "<defs><marker id=\"arr\" viewBox=\"0 0 8 8\" refX=\"8\" refY=\"4\" markerWidth=\"6\" \
markerHeight=\"6\" orient=\"auto\"><path d=\"M0,0 L8,4 L0,8 z\" fill=\"#999\"/></marker></defs>",
    );
    // Edges under the nodes; an edge into a violated model is drawn red, as
    // the violation propagates upwards along it.
    let edges: BTreeSet<(&str, &str)> = model_edges().into_iter().collect();
    for (a, b) in edges {
        let (na, nb) = (at[a], at[b]);
        let red = mark(a) != Mark::Plain && mark(b) != Mark::Plain;
        let _ = write!(
            s,
            "<line x1=\"{:.1}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\" stroke=\"{}\" \
stroke-width=\"1\" marker-end=\"url(#arr)\"/>",
            na.x + na.w / 2.0,
            na.y + NODE_H,
            nb.x + nb.w / 2.0,
            nb.y,
            if red { "#d08080" } else { "#c8c8c8" }
        );
    }
    for n in &nodes {
        let (fill, stroke, class, why) = match mark(n.name) {
            Mark::Not => ("#f4a6a6", "#b00000", "model not", " (violated: :not)"),
            Mark::AlsoNot => (
                "#fbd7b0",
                "#c06000",
                "model also-not",
                " (violated: :also-not)",
            ),
            Mark::Plain => ("#f4f6fa", "#9aa3b0", "model", ""),
        };
        let _ = write!(
            s,
            "<g class=\"{class}\"><title>{}{why}</title><rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" \
height=\"{NODE_H}\" rx=\"4\" fill=\"{fill}\" stroke=\"{stroke}\"/><text x=\"{:.1}\" y=\"{:.1}\" \
text-anchor=\"middle\" font-family=\"sans-serif\" font-size=\"11\">{}</text></g>",
            n.label,
            n.x,
            n.y,
            n.w,
            n.x + n.w / 2.0,
            n.y + NODE_H / 2.0 + 4.0,
            n.label
        );
    }
    s.push_str("</svg>");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_edge_points_down_and_every_model_is_drawn_once() {
        let (nodes, _, _) = place();
        let at: BTreeMap<&str, &Node> = nodes.iter().map(|n| (n.name, n)).collect();
        assert_eq!(at.len(), nodes.len(), "no model drawn twice");
        for (a, b) in model_edges() {
            assert!(at[a].y < at[b].y, "{a} above {b}");
        }
        // The strongest model sits alone on the top layer.
        let top: Vec<&str> = nodes
            .iter()
            .filter(|n| n.y == MARGIN)
            .map(|n| n.label)
            .collect();
        assert_eq!(top, ["strong-serializable"], "PL-SS, as Elle names it");
    }

    #[test]
    fn nodes_in_a_layer_do_not_overlap() {
        let (nodes, w, _) = place();
        for a in &nodes {
            assert!(a.x >= 0.0 && a.x + a.w <= w, "{} inside", a.name);
            for b in &nodes {
                if a.name != b.name && a.y == b.y {
                    assert!(
                        a.x + a.w <= b.x || b.x + b.w <= a.x,
                        "{} / {}",
                        a.name,
                        b.name
                    );
                }
            }
        }
    }

    #[test]
    fn marked_models_are_coloured_by_kind() {
        let m = marks(&["serializable".into()], &["strict-serializable".into()]);
        assert_eq!(m.get("PL-3"), Some(&Mark::Not), "canonical name");
        let s = svg(&m);
        assert_eq!(s.matches("class=\"model not\"").count(), 1);
        assert_eq!(s.matches("class=\"model also-not\"").count(), 1);
        assert!(s.contains("<title>serializable (violated: :not)</title>"));
        assert!(s.contains("<title>strong-serializable (violated: :also-not)</title>"));
        assert!(svg(&BTreeMap::new()).matches("class=\"model\"").count() > 30);
    }
}
