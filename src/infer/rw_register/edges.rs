//! The wr edges of the rw-register inference, over a range of ops (the
//! inference cuts a big history's in two halves, issue 23).

use super::*;

/// Edges (from, to, relation) and vertices without edges.
pub(super) type Edges = (Vec<(u32, u32, Rels)>, Vec<u32>);

/// The wr edges (writer → reader) in op order, and the ops that read their
/// own external write (vertices without an edge); an error, as Elle
/// throws, at the first read (in op order) of a value with several
/// writers. From `split` ops on, in two halves of the ops, on two cores
/// when one is free (issue 23), joined in op order.
pub(super) fn wr_edges(
    h: &History,
    ext: &Ext,
    ids: &Ids,
    writers: &SlotIndex,
    split: usize,
) -> Result<Edges, Refusal> {
    let [first, second] =
        crate::par::halves(h.ops.len(), split, |r| wr_edges_in(h, ext, ids, writers, r));
    let (mut edges, mut vertices) = first?;
    let (more_edges, more_vertices) = second?;
    edges.extend(more_edges);
    vertices.extend(more_vertices);
    Ok((edges, vertices))
}

/// [`wr_edges`] of the ops at `range`.
fn wr_edges_in(
    h: &History,
    ext: &Ext,
    ids: &Ids,
    writers: &SlotIndex,
    range: std::ops::Range<usize>,
) -> Result<Edges, Refusal> {
    let mut edges: Vec<(u32, u32, Rels)> = Vec::new();
    let mut vertices: Vec<u32> = Vec::new();
    for i in range {
        if ext.types.get(i) != Some(&OpType::Ok) {
            continue;
        }
        for e in ext.reads(i) {
            match writers.get(ids.slot(e.kid, e.vid)) {
                [] => {}
                [w] => {
                    if *w == i as u32 {
                        vertices.push(*w);
                    } else {
                        edges.push((*w, i as u32, Rels::WR));
                    }
                }
                ws => {
                    let idx: Vec<String> = ws
                        .iter()
                        .map(|&w| h.ops[w as usize].index.to_string())
                        .collect();
                    let mut error = h.error_at(
                        ws[1] as usize,
                        format!(
                            "expected each value to be written to a key at most once, but key {} had value {} written by more than one op (indices {}), and read at index {}",
                            pr_str(&h.atom_value(ids.key(e.kid))),
                            pr_str(&val_value(h, ids.val(e.kid, e.vid))),
                            idx.join(", "),
                            h.ops[i].index
                        ),
                    );
                    error.kind = crate::error::InputErrorKind::RepeatedValues;
                    return Err(error.into());
                }
            }
        }
    }
    Ok((edges, vertices))
}
