//! The version orders the graph forces before any choice ([`Propagation`]),
//! the version chains' second phase.

use super::*;

/// Rounds of [`Propagation`] at most: each can force orders the previous
/// one's edges imply. On the generated 200k histories one round lets
/// placing succeed with 10 processes (and with 20 and 50, at more
/// backjumps), but with 100 it gives up; a second round is then run and
/// placing tried again ([`super::by_version_chains`]). A third re-asked
/// every pair still unordered (about a third of the propagation) for
/// nothing there.
pub(super) const ROUNDS: usize = 2;

/// The version orders the graph already forces, before any choice: when
/// cluster `A`'s writer reaches a member of cluster `B` (same key), `B`
/// cannot come wholly before `A`, so `A`'s writer and readers precede
/// `B`'s writer. Only clusters whose spans (first invocation to last
/// completion among their members) overlap are compared: real time orders
/// the others already. Run a round at a time ([`Propagation::round`]).
///
/// With real time, most such orders need no search: `A`'s writer precedes
/// the transaction that completed at its deadline `dl` (see
/// [`deadlines`](super::deadlines::deadlines)), so it precedes every member
/// of `B` invoked after that completion.
pub(super) struct Propagation<'a> {
    cl: &'a Clusters,
    dl: &'a [u32],
    span: Vec<(u32, u32)>,
    latest: Vec<u32>,
    /// Each key's clusters, by span.
    by_key: Vec<Vec<u32>>,
    /// Per overlapping pair, in the order every round meets them: bit 0
    /// when the first was forced before the second, bit 1 the other way (a
    /// hash set of pairs cost more than all the searches).
    forced: Vec<u8>,
    targets: Vec<u32>,
    /// Rounds run so far.
    pub(super) rounds: usize,
}

impl<'a> Propagation<'a> {
    pub(super) fn new(
        h: &History,
        cl: &'a Clusters,
        orders: Orders,
        ok: &[bool],
        dl: &'a [u32],
    ) -> Propagation<'a> {
        let (span, latest) = spans(h, cl, orders, ok);
        let mut by_key: Vec<Vec<u32>> = vec![Vec::new(); cl.keys];
        for c in 0..cl.clusters.len() as u32 {
            by_key[cl.clusters[c as usize].kid as usize].push(c);
        }
        for list in &mut by_key {
            list.sort_unstable_by_key(|&c| span[c as usize]);
        }
        Propagation {
            cl,
            dl,
            span,
            latest,
            by_key,
            forced: Vec::new(),
            targets: Vec::new(),
            rounds: 0,
        }
    }

    /// The question of [`reaches_cluster`] where real time answers it (a
    /// `nil` cluster `y`, with no writer, is never reached).
    fn by_real_time(&self, x: u32, y: u32) -> bool {
        let cl = self.cl;
        let wx = cl.clusters[x as usize].writer;
        let deadline = (self.dl.get(wx as usize).copied()).filter(|&d| d != super::deadlines::NONE);
        wx != NO_WRITER
            && cl.clusters[y as usize].writer != NO_WRITER
            && deadline.is_some_and(|d| self.latest.get(y as usize).is_some_and(|&l| l > d))
    }

    /// One round over every overlapping pair: `Some(changed)`, or `None`
    /// when a forced order closes a cycle.
    pub(super) fn round(&mut self, g: &mut DynamicOrder) -> Option<bool> {
        self.rounds += 1;
        let cl = self.cl;
        let mut changed = false;
        let mut pair = 0;
        for list in &self.by_key {
            for (i, &a) in list.iter().enumerate() {
                for &b in list[i + 1..]
                    .iter()
                    .take_while(|&&b| self.span[b as usize].0 < self.span[a as usize].1)
                {
                    if pair == self.forced.len() {
                        self.forced.push(0);
                    }
                    pair += 1;
                    // Once forced one way, the other way would close a
                    // cycle in an acyclic graph: never.
                    if self.forced[pair - 1] != 0 {
                        continue;
                    }
                    // Both ways by real time before either by a search:
                    // when one way holds, the other cannot (in a history
                    // that has a witness), so its search is saved.
                    let ways = [(1u8, a, b), (2, b, a)];
                    let way = ways.into_iter().find(|&(_, x, y)| self.by_real_time(x, y));
                    let targets = &mut self.targets;
                    let way = way.or_else(|| {
                        ways.into_iter()
                            .find(|&(_, x, y)| reaches_cluster(g, cl, x, y, targets))
                    });
                    let Some((bit, x, y)) = way else {
                        continue;
                    };
                    self.forced[pair - 1] |= bit;
                    changed = true;
                    let (wx, wy) = (
                        cl.clusters[x as usize].writer,
                        cl.clusters[y as usize].writer,
                    );
                    if wy == NO_WRITER {
                        // Nothing goes before a `nil`: a cycle.
                        return None;
                    }
                    let before = (wx != NO_WRITER).then_some(wx).into_iter();
                    for m in before.chain(cl.readers(x).iter().copied()) {
                        if m != wy && g.add_edge(m, wy, FACT).is_err() {
                            return None;
                        }
                    }
                }
            }
        }
        Some(changed)
    }
}

/// Per cluster: its span (first invocation to last completion among its
/// members, an `:info` one completing never) and, with real time, the
/// latest invocation among its members: a writer whose deadline is before
/// it precedes that member (most forced orders are such; a search finds
/// them at a cost, and only those the graph's edges show).
fn spans(h: &History, cl: &Clusters, orders: Orders, ok: &[bool]) -> (Vec<(u32, u32)>, Vec<u32>) {
    // Every member is a kept completion, so its invocation is its pair
    // (read from the dense pairing table, not the ops: most of this
    // phase's cache misses were there).
    let inv = |t: u32| match h.pair.get(t as usize) {
        Some(&p) if p != crate::model::NO_OP => p,
        _ => t,
    };
    let is_ok = |t: u32| ok.get(t as usize).copied().unwrap_or(false);
    let n = h.ops.len() as u32;
    let mut span: Vec<(u32, u32)> = Vec::with_capacity(cl.clusters.len());
    let mut latest: Vec<u32> = Vec::with_capacity(if orders.real_time {
        cl.clusters.len()
    } else {
        0
    });
    for c in 0..cl.clusters.len() as u32 {
        let w = cl.clusters[c as usize].writer;
        let (mut first, mut last, mut end) = (u32::MAX, 0, 0);
        for m in cl
            .readers(c)
            .iter()
            .copied()
            .chain((w != NO_WRITER).then_some(w))
        {
            let i = inv(m);
            first = first.min(i);
            last = last.max(i);
            end = end.max(if is_ok(m) { m } else { n });
        }
        let start = if w == NO_WRITER || first == u32::MAX {
            0
        } else {
            first
        };
        span.push((start, end));
        if orders.real_time {
            latest.push(last);
        }
    }
    (span, latest)
}

/// Whether cluster `a` must come before cluster `b`: a `nil` always does;
/// else `a`'s writer (which reaches all of `a`) reaches a member of `b`.
fn reaches_cluster(
    g: &mut DynamicOrder,
    cl: &Clusters,
    a: u32,
    b: u32,
    targets: &mut Vec<u32>,
) -> bool {
    let (wa, wb) = (
        cl.clusters[a as usize].writer,
        cl.clusters[b as usize].writer,
    );
    if wa == NO_WRITER {
        return true;
    }
    if wb == NO_WRITER {
        return false;
    }
    targets.clear();
    targets.extend(
        std::iter::once(wb)
            .chain(cl.readers(b).iter().copied())
            .filter(|&y| y != wa),
    );
    g.reaches_any(wa, targets)
}
