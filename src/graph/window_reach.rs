//! Reachability answered by bit tests: a snapshot of a
//! [`DynamicOrder`](super::dynamic_order::DynamicOrder) that knows, for
//! every vertex, which vertices up to `W` places after it in the
//! topological order it reaches.
//!
//! A path `v ⇝ t` only visits vertices ordered between `v` and `t`, so for
//! targets within the window the snapshot is exact; further ones are left
//! to a search ([`WindowReach::reaches`] answers `None`). Built once in
//! `O(E · W / 64)`, it answers each question in `O(1)`, where a depth-first
//! search that fails visits everything reachable below the target: the
//! version chains' propagation asks millions of such questions of a graph
//! that only changes between its rounds (issue 23: with 100 processes the
//! searches were two thirds of `auto`'s time). The SAT checker's full
//! reachability (`check::sat::reach`) builds the same rows without a
//! window, `n²/8` bytes: 20 GB for the 400k vertices of a 200k-transaction
//! history, where a band of 512 costs 64 bytes a vertex.
//!
//! ```
//! use ellery::graph::dynamic_order::DynamicOrder;
//! use ellery::graph::window_reach::WindowReach;
//! let mut g = DynamicOrder::new(4);
//! g.add_edge(0, 1, 0).unwrap();
//! g.add_edge(1, 3, 1).unwrap();
//! let w = WindowReach::of(&g, 1);
//! assert_eq!(w.reaches(0, 3), Some(true));
//! assert_eq!(w.reaches(3, 0), Some(false));
//! assert_eq!(w.reaches(0, 2), Some(false));
//! ```

use super::dynamic_order::DynamicOrder;

/// No rank: a vertex without edges.
const ISOLATED: u32 = u32::MAX;

/// Per vertex, the set of vertices it reaches among the next `64 · words`
/// vertices with edges in the snapshot's topological order.
#[derive(Debug, Clone)]
pub struct WindowReach {
    /// Per vertex, its rank among the vertices with edges, in topological
    /// order ([`ISOLATED`] without edges).
    rank: Vec<u32>,
    /// Words per row.
    words: usize,
    /// Row `r` (the vertex of rank `r`): bit `j` set when it reaches the
    /// vertex of rank `r + 1 + j`.
    bits: Vec<u64>,
}

impl WindowReach {
    /// The snapshot of `g` with a window of `64 · words` ranks.
    pub fn of(g: &DynamicOrder, words: usize) -> WindowReach {
        let n = g.len();
        let mut has_edge = vec![false; n];
        for (a, b) in g.edges() {
            has_edge[a as usize] = true;
            has_edge[b as usize] = true;
        }
        let mut rank = vec![ISOLATED; n];
        let mut m = 0u32;
        for v in g.order() {
            if has_edge[v as usize] {
                rank[v as usize] = m;
                m += 1;
            }
        }
        drop(has_edge);
        // Out-edges by source rank (a counting sort), as target ranks: the
        // rows are then built in one backward pass over contiguous lists.
        let m = m as usize;
        let mut start = vec![0u32; m + 1];
        for (a, _) in g.edges() {
            start[rank[a as usize] as usize + 1] += 1;
        }
        for r in 0..m {
            start[r + 1] += start[r];
        }
        let mut fill = start.clone();
        let mut targets = vec![0u32; g.edge_count()];
        for (a, b) in g.edges() {
            let at = &mut fill[rank[a as usize] as usize];
            targets[*at as usize] = rank[b as usize];
            *at += 1;
        }
        drop(fill);
        let width = 64 * words;
        let mut bits = vec![0u64; m * words];
        for r in (0..m).rev() {
            let (head, tail) = bits.split_at_mut((r + 1) * words);
            let row = &mut head[r * words..];
            for &t in &targets[start[r] as usize..start[r + 1] as usize] {
                // A topological order puts every target after its source.
                let d = (t as usize).saturating_sub(r);
                if d == 0 || d > width {
                    continue;
                }
                row[(d - 1) / 64] |= 1 << ((d - 1) % 64);
                let from = (t as usize - r - 1) * words;
                shift_or(row, &tail[from..from + words], d);
            }
        }
        WindowReach { rank, words, bits }
    }

    /// Whether `from` reaches `to` in the snapshot; `None` when `to` is
    /// ordered beyond `from`'s window (ask a search).
    pub fn reaches(&self, from: u32, to: u32) -> Option<bool> {
        if from == to {
            return Some(true);
        }
        let (rf, rt) = (self.rank[from as usize], self.rank[to as usize]);
        if rf == ISOLATED || rt == ISOLATED || rt <= rf {
            return Some(false);
        }
        let j = (rt - rf - 1) as usize;
        if j >= 64 * self.words {
            return None;
        }
        let word = self.bits[rf as usize * self.words + j / 64];
        Some(word >> (j % 64) & 1 == 1)
    }

    /// Whether `from` reaches one of `targets`: `Some(true)` as soon as one
    /// is known reached, `None` when none is and one lies beyond the
    /// window.
    pub fn reaches_any(&self, from: u32, targets: &[u32]) -> Option<bool> {
        let mut answer = Some(false);
        for &t in targets {
            match self.reaches(from, t) {
                Some(true) => return Some(true),
                Some(false) => {}
                None => answer = None,
            }
        }
        answer
    }
}

/// `row |= src << d` over `64 · row.len()` bits (bits shifted past the end
/// are dropped): `src` is the row of a vertex `d` ranks after `row`'s.
#[inline]
fn shift_or(row: &mut [u64], src: &[u64], d: usize) {
    let (q, s) = (d / 64, d % 64);
    for k in (q..row.len()).rev() {
        let lo = src[k - q] << s;
        let hi = if s > 0 && k > q {
            src[k - q - 1] >> (64 - s)
        } else {
            0
        };
        row[k] |= lo | hi;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gen::Rng;

    /// On random graphs (some vertices isolated, windows smaller and
    /// larger than the graph) every answer the snapshot gives is the
    /// search's, and it declines only targets beyond the window.
    #[test]
    fn window_answers_agree_with_search() {
        let mut rng = Rng::new(23);
        let (mut yes, mut no, mut declined) = (0, 0, 0);
        for _ in 0..300 {
            let n = 2 + rng.below(200) as usize;
            let mut g = DynamicOrder::new(n);
            for _ in 0..(n + rng.below(3 * n as u64) as usize) {
                let (a, b) = (rng.below(n as u64) as u32, rng.below(n as u64) as u32);
                let _ = g.add_edge(a, b, 0);
            }
            let words = 1 + rng.below(3) as usize;
            let w = WindowReach::of(&g, words);
            for _ in 0..200 {
                let (a, b) = (rng.below(n as u64) as u32, rng.below(n as u64) as u32);
                match w.reaches(a, b) {
                    Some(r) => {
                        assert_eq!(r, g.reaches(a, b), "{a} -> {b}");
                        if r {
                            yes += 1
                        } else {
                            no += 1
                        }
                    }
                    None => {
                        let (ra, rb) = (w.rank[a as usize], w.rank[b as usize]);
                        assert!(rb > ra && (rb - ra) as usize > 64 * words);
                        declined += 1;
                    }
                }
                let targets = [b, rng.below(n as u64) as u32];
                let any = targets.iter().any(|&t| g.reaches(a, t));
                match w.reaches_any(a, &targets) {
                    Some(r) => assert_eq!(r, any),
                    None => assert!(!targets.iter().any(|&t| w.reaches(a, t) == Some(true))),
                }
            }
        }
        assert!(
            yes > 1000 && no > 1000 && declined > 100,
            "{yes} {no} {declined}"
        );
    }

    /// A shift by a whole number of words and by a part of one.
    #[test]
    fn shift_or_moves_bits_across_words() {
        let mut row = [0u64; 3];
        shift_or(&mut row, &[1, 0, 0], 64);
        assert_eq!(row, [0, 1, 0]);
        let mut row = [0u64; 3];
        shift_or(&mut row, &[1 << 63, 1, 0], 1);
        assert_eq!(row, [0, 1 | 2, 0]);
        let mut row = [0u64; 2];
        shift_or(&mut row, &[u64::MAX, u64::MAX], 100);
        assert_eq!(row, [0, u64::MAX << 36]);
    }
}
