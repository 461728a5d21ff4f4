//! The version orders the graph forces before any choice ([`Propagation`]),
//! the version chains' second phase.

use super::*;
use crate::graph::window_reach::WindowReach;

/// Rounds of [`Propagation`] at most, placing tried after each
/// ([`super::by_version_chains`]): each can force orders the previous
/// ones' edges imply. On the generated 200k histories placing succeeds
/// after one round with 20 processes, two with 50 and three with 100. A
/// try that gives up costs a fifth of a round or less, so placing is tried
/// after every round rather than after a fixed number of them. Rounds
/// stop once one forces nothing.
pub(super) const ROUNDS: usize = 8;

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
    /// Forced orders real time already implies are not added.
    rt: RealTime<'a>,
    dl: &'a [u32],
    span: Vec<(u32, u32)>,
    latest: Vec<u32>,
    /// Each key's clusters, by span.
    by_key: Vec<Vec<u32>>,
    /// The overlapping pairs that no round has ordered yet, in the order
    /// the first round met them (once forced one way, the other way would
    /// close a cycle in an acyclic graph: a pair is asked until forced).
    open: Vec<(u32, u32)>,
    targets: Vec<u32>,
    /// Rounds run so far.
    pub(super) rounds: usize,
}

impl<'a> Propagation<'a> {
    pub(super) fn new(
        h: &'a History,
        cl: &'a Clusters,
        orders: Orders,
        ok: &'a [bool],
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
            rt: RealTime { h, ok, orders },
            dl,
            span,
            latest,
            by_key,
            open: Vec::new(),
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

    /// One round over every overlapping pair not yet ordered:
    /// `Some(changed)`, or `None` when a forced order closes a cycle.
    ///
    /// A round asks its questions of a snapshot of the graph taken before
    /// it ([`WindowReach`]: bit tests instead of a depth-first search per
    /// pair, which with 100 processes was two thirds of `auto`'s time) and
    /// adds the orders it forced after it, so it sees only what earlier
    /// rounds forced, not what it did itself. That costs rounds, not
    /// answers: every forced order is implied by the graph, so the rounds
    /// approach the same fixpoint whatever order the pairs are met in (on
    /// the 100-process 200k history the first forces 1.23M of the 1.52M
    /// pairs the fixpoint orders, the second 0.24M, the third 33k, and
    /// seven more the last 8k).
    pub(super) fn round(&mut self, g: &mut DynamicOrder) -> Option<bool> {
        self.rounds += 1;
        let cl = self.cl;
        let snapshot = WindowReach::of(g, WINDOW_WORDS);
        // The questions are asked of the snapshot on two threads when a
        // core is free (`auto` runs the chains beside the inference, and
        // the inference's thread lends its core once done); what only a
        // search answers is asked after, in turn, and every answer goes
        // back in the pairs' order, so the result is the same either way.
        let first = self.rounds == 1;
        let this = &*self;
        let halves = if first {
            // Cut by clusters, not keys: a history with one hot key still
            // asks on both cores.
            crate::par::halves(this.cl.clusters.len(), 2, |firsts| {
                let mut scan = Scan::default();
                let mut targets = Vec::new();
                for (list, own) in lists_within(&this.by_key, firsts) {
                    for (i, &a) in list.iter().enumerate().skip(own.start).take(own.len()) {
                        for &b in list[i + 1..]
                            .iter()
                            .take_while(|&&b| this.span[b as usize].0 < this.span[a as usize].1)
                        {
                            // Both ways by real time before either by the
                            // graph: when one way holds, the other cannot
                            // (in a history that has a witness), so its
                            // question is saved.
                            let by_real_time = [(a, b), (b, a)]
                                .into_iter()
                                .find(|&(x, y)| this.by_real_time(x, y));
                            let answer = match by_real_time {
                                Some(way) => Answer::Known(Some(way)),
                                None => ask(&snapshot, cl, a, b, &mut targets),
                            };
                            scan.push(a, b, answer);
                        }
                    }
                }
                scan
            })
        } else {
            // Real time does not change: only the graph can order what the
            // first round left open.
            crate::par::halves(this.open.len(), 2, |pairs| {
                let mut scan = Scan::default();
                let mut targets = Vec::new();
                for &(a, b) in &this.open[pairs] {
                    scan.push(a, b, ask(&snapshot, cl, a, b, &mut targets));
                }
                scan
            })
        };
        let mut forced_now: Vec<(u32, u32)> = Vec::new();
        let mut open = Vec::with_capacity(if first { 0 } else { self.open.len() });
        let mut targets = std::mem::take(&mut self.targets);
        for scan in halves {
            scan.settle(&mut forced_now, &mut open, |a, b| {
                [(a, b), (b, a)]
                    .into_iter()
                    .find(|&(x, y)| reaches_cluster(g, &snapshot, cl, x, y, &mut targets))
            });
        }
        self.targets = targets;
        self.open = open;
        drop(snapshot);
        for &(x, y) in &forced_now {
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
                if m != wy && !self.rt.implies(m, wy) && g.add_edge(m, wy, FACT).is_err() {
                    return None;
                }
            }
        }
        Some(!forced_now.is_empty())
    }
}

/// The window of [`WindowReach`], in words of 64 ranks: pairs of clusters
/// are only compared when their spans overlap, so nearly every question is
/// about a vertex a few hundred places on; the rest go to a search. On the
/// 100-process 200k history 4 words left 218k questions to searches (the
/// rounds 3.5x slower), 8 words 6k, and 16 words made each snapshot 1.7x
/// dearer (12.8 MB at 8 words there).
const WINDOW_WORDS: usize = 8;

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

/// Each list with the positions in it that fall in `range`, counting the
/// lists' entries one after the other: every entry is in exactly one
/// range of a cut of `0..total`.
fn lists_within(
    lists: &[Vec<u32>],
    range: std::ops::Range<usize>,
) -> impl Iterator<Item = (&[u32], std::ops::Range<usize>)> + '_ {
    let mut before = 0;
    lists.iter().filter_map(move |list| {
        let (from, to) = (before, before + list.len());
        before = to;
        let own = range.start.max(from) - from..range.end.min(to).max(from) - from;
        (!own.is_empty()).then_some((list.as_slice(), own))
    })
}

/// What the snapshot answers for a pair of clusters.
enum Answer {
    /// Forced this way (`Some`), or neither way (`None`).
    Known(Option<(u32, u32)>),
    /// Only a search can tell (a target beyond the snapshot's window).
    Search,
}

/// [`reaches_cluster`] both ways by the snapshot alone, in the same order.
fn ask(snapshot: &WindowReach, cl: &Clusters, a: u32, b: u32, targets: &mut Vec<u32>) -> Answer {
    for (x, y) in [(a, b), (b, a)] {
        match snapshot_reaches(snapshot, cl, x, y, targets) {
            Some(true) => return Answer::Known(Some((x, y))),
            Some(false) => {}
            None => return Answer::Search,
        }
    }
    Answer::Known(None)
}

/// One thread's part of a round: the pairs forced and left open, and
/// those for a search, each with where it goes among the other two.
#[derive(Default)]
struct Scan {
    forced: Vec<(u32, u32)>,
    open: Vec<(u32, u32)>,
    /// `(a, b, forced before it, open before it)`.
    search: Vec<(u32, u32, usize, usize)>,
}

impl Scan {
    fn push(&mut self, a: u32, b: u32, answer: Answer) {
        match answer {
            Answer::Known(Some(way)) => self.forced.push(way),
            Answer::Known(None) => self.open.push((a, b)),
            Answer::Search => {
                self.search.push((a, b, self.forced.len(), self.open.len()));
            }
        }
    }

    /// Appends the forced and open pairs to `forced` and `open` in the
    /// order they were met, each pair for a search answered by `search` in
    /// its place.
    fn settle(
        self,
        forced: &mut Vec<(u32, u32)>,
        open: &mut Vec<(u32, u32)>,
        mut search: impl FnMut(u32, u32) -> Option<(u32, u32)>,
    ) {
        let (mut f, mut o) = (0, 0);
        for (a, b, fat, oat) in self.search {
            forced.extend_from_slice(&self.forced[f..fat]);
            open.extend_from_slice(&self.open[o..oat]);
            (f, o) = (fat, oat);
            match search(a, b) {
                Some(way) => forced.push(way),
                None => open.push((a, b)),
            }
        }
        forced.extend_from_slice(&self.forced[f..]);
        open.extend_from_slice(&self.open[o..]);
    }
}

/// Whether cluster `a` must come before cluster `b` by the snapshot
/// (`None`: a target beyond its window); `targets` is left holding the
/// members of `b` to search for.
fn snapshot_reaches(
    snapshot: &WindowReach,
    cl: &Clusters,
    a: u32,
    b: u32,
    targets: &mut Vec<u32>,
) -> Option<bool> {
    let (wa, wb) = (
        cl.clusters[a as usize].writer,
        cl.clusters[b as usize].writer,
    );
    targets.clear();
    if wa == NO_WRITER {
        return Some(true);
    }
    if wb == NO_WRITER {
        return Some(false);
    }
    targets.extend(
        std::iter::once(wb)
            .chain(cl.readers(b).iter().copied())
            .filter(|&y| y != wa),
    );
    snapshot.reaches_any(wa, targets)
}

/// Whether cluster `a` must come before cluster `b`: a `nil` always does;
/// else `a`'s writer (which reaches all of `a`) reaches a member of `b`.
fn reaches_cluster(
    g: &mut DynamicOrder,
    snapshot: &WindowReach,
    cl: &Clusters,
    a: u32,
    b: u32,
    targets: &mut Vec<u32>,
) -> bool {
    snapshot_reaches(snapshot, cl, a, b, targets).unwrap_or_else(|| {
        let wa = cl.clusters[a as usize].writer;
        g.reaches_any(wa, targets)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Cut anywhere, two ranges of positions give every list entry once,
    /// in order.
    #[test]
    fn lists_within_cover_every_entry_once_whatever_the_cut() {
        let lists = vec![vec![1, 2, 3], vec![], vec![4], vec![5, 6]];
        let all: Vec<u32> = lists.iter().flatten().copied().collect();
        for cut in 0..=all.len() {
            let seen: Vec<u32> = [0..cut, cut..all.len()]
                .into_iter()
                .flat_map(|r| lists_within(&lists, r).flat_map(|(l, own)| l[own].to_vec()))
                .collect();
            assert_eq!(seen, all, "cut {cut}");
        }
        assert_eq!(lists_within(&lists, 3..3).count(), 0);
    }

    /// Pairs answered at once and pairs left for a search come out of
    /// [`Scan::settle`] in the order they were met, however the pairs were
    /// cut among the threads: the round's result does not depend on them.
    #[test]
    fn settled_scans_keep_the_pairs_order_whatever_the_cut() {
        // Pair i: forced (i, i + 100) when i % 3 == 0, open when i % 3 == 1,
        // for a search when i % 3 == 2, which forces (i + 100, i) when i is
        // even and leaves it open otherwise.
        let answer = |i: u32| match i % 3 {
            0 => Answer::Known(Some((i, i + 100))),
            1 => Answer::Known(None),
            _ => Answer::Search,
        };
        let search = |a: u32, b: u32| a.is_multiple_of(2).then_some((b, a));
        let run = |cut: u32| {
            let (mut forced, mut open, mut searched) = (Vec::new(), Vec::new(), Vec::new());
            for part in [0..cut, cut..20] {
                let mut scan = Scan::default();
                for i in part {
                    scan.push(i, i + 100, answer(i));
                }
                scan.settle(&mut forced, &mut open, |a, b| {
                    searched.push(a);
                    search(a, b)
                });
            }
            (forced, open, searched)
        };
        let (forced, open, searched) = run(20);
        let expect_forced: Vec<(u32, u32)> = (0..20)
            .filter_map(|i| match i % 3 {
                0 => Some((i, i + 100)),
                2 => search(i, i + 100),
                _ => None,
            })
            .collect();
        let expect_open: Vec<(u32, u32)> = (0..20)
            .filter(|&i| i % 3 == 1 || (i % 3 == 2 && i % 2 == 1))
            .map(|i| (i, i + 100))
            .collect();
        assert_eq!(forced, expect_forced);
        assert_eq!(open, expect_open);
        assert_eq!(searched, (0..20).filter(|i| i % 3 == 2).collect::<Vec<_>>());
        for cut in 0..=20 {
            assert_eq!(
                run(cut),
                (forced.clone(), open.clone(), searched.clone()),
                "cut {cut}"
            );
        }
    }
}
