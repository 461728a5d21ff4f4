//! Observed `:info` transactions: where their writes enter the MT graph.

use super::*;

/// Observed `:info` writers. An `:info` transaction one of whose writes a
/// committed transaction read (for lists: one of whose elements a committed
/// read shows) committed, so all its final writes are versions, with the
/// edges a committed writer's versions get: wr into their readers (step 3),
/// rw from their readers to their read-modify-writers (step 3), and, into
/// the transaction, ww from the version each write followed and rw from
/// that version's other readers. Its own reads are unknown, so that version
/// is:
///
/// * for lists, the element before its element in any read that shows it
///   (a fact under every model);
/// * otherwise, when `immediate` (see [`analyze_with`]), the key's last
///   version: the end of the chain of read-modify-writes from the initial
///   state. Every write immediately follows the version it read and no
///   version has two such writers, so the versions of a key form one chain
///   from the initial state; a chain that starts at an `:info` write must
///   continue that one. With two such chains on a key their order is a
///   choice no read reveals: the history leaves the fast path. When the
///   initial chain itself forks (a DIVERGENCE, reported as lost-update, a
///   G-single under these models) the write is left unattached.
///
/// Unobserved `:info` writes are dropped: assuming they did not happen only
/// removes constraints.
///
/// Returns the (version slot, writer) of each write placed after its key's
/// last version: the edges into the writer from that version's writer and
/// readers rest on the placement (see [`super::boundary`]).
// Long (about 165 lines) because it is one pass over the observed `:info`
// transactions whose two placements (a list's predecessor, the key's last
// version) share the bookkeeping of the chain ends; split, each half would
// take the same nine buffers.
#[allow(clippy::too_many_arguments)]
pub(super) fn attach_info(
    h: &History,
    w: Workload,
    immediate: bool,
    (versions, recs): (&Versions, &[WriteRec]),
    ok_nodes: &[u32],
    pred_of: &HashMap<u32, Ver>,
    (node, txns): (&mut [u32], &mut Vec<MtTxn>),
    (succ, more): (&mut [Succ], &mut Vec<Vec<u32>>),
    edges: &mut Vec<(u32, u32, Rels)>,
) -> Result<Vec<(u32, u32)>, NotMini> {
    let mut observed: Vec<u32> = Vec::new();
    for &s in ok_nodes {
        let t = &txns[node[s as usize] as usize];
        for &slot in &t.read_slots[..t.nreads as usize] {
            if let Some(r) = recs.get(slot as usize) {
                if r.status == OpType::Info {
                    observed.push(r.pos);
                }
            }
        }
    }
    observed.extend(pred_of.keys().map(|&s| recs[s as usize].pos));
    observed.sort_unstable();
    observed.dedup();
    if observed.is_empty() {
        return Ok(Vec::new());
    }
    // Writes whose predecessor no read reveals: (key id, writer, write).
    let mut orphans: Vec<(u32, u32, usize)> = Vec::new();
    // Writes shown right after a version: (version slot, writer).
    let mut shown_after: Vec<(u32, u32)> = Vec::new();
    for &pos in &observed {
        let u = txns.len();
        node[pos as usize] = u as u32;
        txns.push(MtTxn {
            info: true,
            ..MtTxn::default()
        });
        for (j, g) in txn_mop_range(h, pos as usize).enumerate() {
            let m = &h.mops[g];
            let MopArg::Atom(y) = m.arg() else { continue };
            if !is_write(m.f()) {
                continue;
            }
            let kid = versions.mop_kid[g];
            let Some(s) = versions.slot(kid, y) else {
                continue;
            };
            let r = recs[s as usize];
            if r.pos != pos || r.mop != j as u32 || !r.last {
                continue;
            }
            // For lists, the element before it, skipping the transaction's
            // own earlier appends.
            let mut shown = match w {
                Workload::ListAppend => pred_of.get(&s).copied(),
                Workload::RwRegister | Workload::CasRegister => None,
            };
            while let Some(Some(e)) = shown {
                match versions.slot(kid, e) {
                    Some(es) if recs[es as usize].pos == pos => {
                        shown = pred_of.get(&es).copied();
                    }
                    _ => break,
                }
            }
            let Some(p) = shown else {
                orphans.push((kid, pos, txns[u].writes().len()));
                txns[u].push_write((m.key(), y, None, false));
                continue;
            };
            // The element before it in a list: attach there, unless that
            // element is no committed version (thin air, aborted or never
            // completed: reported or rejected elsewhere).
            let ps = versions.version(kid, p).filter(|&ps| {
                p.is_none()
                    || recs
                        .get(ps as usize)
                        .is_some_and(|r| matches!(r.status, OpType::Ok | OpType::Info))
            });
            let Some(ps) = ps else {
                txns[u].push_write((m.key(), y, None, false));
                continue;
            };
            txns[u].push_write((m.key(), y, p, true));
            push_succ(succ, more, ps, pos);
            shown_after.push((ps, pos));
            if p.is_some() {
                edges.push((recs[ps as usize].pos, pos, Rels::WW));
            }
        }
    }
    // A list shows the element right after the version it followed, so any
    // other read-modify-writer of that version (a DIVERGENCE) appended
    // later. (Two elements shown right after one version are an
    // incompatible order.)
    for &(ps, pos) in &shown_after {
        let sc = succ[ps as usize];
        let rest: &[u32] = if sc.more == NONE {
            &[]
        } else {
            &more[sc.more as usize]
        };
        for &b in std::iter::once(&sc.first).chain(rest) {
            if b != pos {
                edges.push((pos, b, Rels::WW));
            }
        }
    }
    if !immediate {
        return Ok(Vec::new());
    }
    // (version slot, writer) of each write placed after its key's last
    // version.
    let mut placed: Vec<(u32, u32)> = Vec::new();
    orphans.sort_unstable();
    for (i, &(kid, pos, wi)) in orphans.iter().enumerate() {
        if let Some(&(kid2, pos2, _)) = orphans.get(i + 1) {
            if kid2 == kid {
                let key = txns[node[pos as usize] as usize].writes()[wi].0;
                return Err(NotMini {
                    pos: pos2 as usize,
                    reason: format!(
                        "it and the op at index {} are indeterminate, both write key {} and were observed, and no read reveals which of their writes of {} came first",
                        h.ops[pos as usize].index,
                        pr_str(&h.atom_value(key)),
                        pr_str(&h.atom_value(key)),
                    ),
                });
            }
        }
        if i > 0 && orphans[i - 1].0 == kid {
            continue;
        }
        let u = node[pos as usize] as usize;
        let key = txns[u].writes()[wi].0;
        // The end of the chain from the initial state.
        let mut slot = versions.writes + kid;
        let mut ver: Ver = None;
        let mut tail = None;
        for _ in 0..succ.len() {
            let sc = succ[slot as usize];
            if sc.more != NONE {
                break; // a divergence
            }
            if sc.first == NONE {
                tail = Some(slot);
                break;
            }
            let b = &txns[node[sc.first as usize] as usize];
            let Some(&(_, x, _, _)) = b.writes().iter().find(|w| w.0 == key) else {
                break;
            };
            let Some(next) = versions.slot(kid, x) else {
                break;
            };
            (slot, ver) = (next, Some(x));
        }
        let Some(t) = tail else { continue };
        txns[u].writes[wi].2 = ver;
        txns[u].writes[wi].3 = true;
        push_succ(succ, more, t, pos);
        placed.push((t, pos));
        if ver.is_some() {
            edges.push((recs[t as usize].pos, pos, Rels::WW));
        }
    }
    Ok(placed)
}
