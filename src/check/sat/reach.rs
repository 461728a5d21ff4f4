//! Reflexive reachability of a DAG, in one of two layouts, whichever is
//! smaller: an n×n bit matrix (VeriStrong's Algorithm 6), or, when few
//! paths cover the graph (sessions do), per vertex the first position it
//! reaches on each path of a greedy path cover (n × paths words).

/// Up to this size the bit matrix is used rather than a path layout with
/// vertices off the paths. Unit tests always take that path layout, so the
/// brute-force comparisons exercise it on small histories.
const BITS_PREFERRED_BYTES: usize = if cfg!(test) { 0 } else { 256 << 20 };

/// Reachability queries over a fixed DAG.
pub(super) enum Reach {
    /// Row `v` has bit `u` set iff `v` reaches `u`.
    Bits { words: usize, bits: Vec<u64> },
    /// `first[v * paths + p]`: the smallest index on path `p` that `v`
    /// reaches (`u32::MAX`: none); `path[u]`, `index[u]`: where `u` lies.
    /// Vertices from `covered` on lie on no path: a query for one asks
    /// about its predecessors, `preds[starts[u - covered]..starts[u -
    /// covered + 1]]`.
    Paths {
        paths: usize,
        path: Vec<u32>,
        index: Vec<u32>,
        first: Vec<u32>,
        covered: usize,
        starts: Vec<u32>,
        preds: Vec<u32>,
    },
}

impl Reach {
    /// Reachability of `adj` (successors with labels) given a topological
    /// `order`, or `None` if it needs more than `max_bytes`. The path cover
    /// follows edges whose label is `preferred` first (session order) and
    /// covers the vertices below `covered` only (see [`Reach::Paths`]).
    pub(super) fn new(
        adj: &[Vec<(u32, usize)>],
        order: &[u32],
        max_bytes: usize,
        preferred: impl Fn(usize) -> bool,
        covered: usize,
    ) -> Option<Reach> {
        Self::new_reusing(adj, order, max_bytes, preferred, covered, None)
    }

    /// [`Reach::new`], reusing the memory of `spare` (a previous
    /// reachability) when it fits: repeated rebuilds then skip the page
    /// faults of a fresh table.
    ///
    /// `covered` exists for snapshot isolation's layered graph: each
    /// transaction's second-layer vertex has edges out only along
    /// anti-dependencies, so sessions cannot cover it and a path cover of
    /// both layers has about `n` paths. Covering the first layer only keeps
    /// the session paths (the 100,000-transaction generated history:
    /// pruning fits, instead of a 5 GB bit matrix).
    pub(super) fn new_reusing(
        adj: &[Vec<(u32, usize)>],
        order: &[u32],
        max_bytes: usize,
        preferred: impl Fn(usize) -> bool,
        covered: usize,
        spare: Option<Reach>,
    ) -> Option<Reach> {
        // Long (over 120 lines): the path cover, the bit rows and the sweep share
        // their buffers (reused across pruning passes); kept together.
        let n = adj.len();
        let covered = covered.min(n);
        let pos = crate::graph::positions(order);
        // Greedy path cover of the covered vertices: link along preferred
        // edges, then link each vertex without a successor to its earliest
        // successor without a predecessor.
        let on_path = |v: u32| (v as usize) < covered;
        let mut succ = vec![u32::MAX; n];
        let mut has_pred = vec![false; n];
        for &v in order.iter().filter(|&&v| on_path(v)) {
            for &(w, l) in &adj[v as usize] {
                if succ[v as usize] == u32::MAX
                    && on_path(w)
                    && !has_pred[w as usize]
                    && preferred(l)
                {
                    succ[v as usize] = w;
                    has_pred[w as usize] = true;
                }
            }
        }
        for &v in order.iter().filter(|&&v| on_path(v)) {
            if succ[v as usize] != u32::MAX {
                continue;
            }
            if let Some(&(w, _)) = adj[v as usize]
                .iter()
                .filter(|&&(w, _)| on_path(w) && !has_pred[w as usize])
                .min_by_key(|&&(w, _)| pos[w as usize])
            {
                succ[v as usize] = w;
                has_pred[w as usize] = true;
            }
        }
        let mut path = vec![u32::MAX; n];
        let mut index = vec![0u32; n];
        let mut paths = 0usize;
        for &head in order.iter().filter(|&&v| on_path(v)) {
            if has_pred[head as usize] {
                continue;
            }
            let (mut v, mut i) = (head, 0);
            loop {
                path[v as usize] = paths as u32;
                index[v as usize] = i;
                i += 1;
                if succ[v as usize] == u32::MAX {
                    break;
                }
                v = succ[v as usize];
            }
            paths += 1;
        }
        // Where each off-path vertex's predecessors will lie in `preds`
        // (counted now: they are part of the path layout's size).
        let mut starts = vec![0u32; n - covered + 1];
        if covered < n {
            for a in adj {
                for &(w, _) in a.iter().filter(|&&(w, _)| !on_path(w)) {
                    starts[w as usize - covered + 1] += 1;
                }
            }
            for i in 1..starts.len() {
                starts[i] += starts[i - 1];
            }
        }
        let uncovered_preds = starts[n - covered] as usize;
        let bits_bytes = n * n.div_ceil(64) * 8;
        let paths_bytes = n * paths * 4 + (uncovered_preds + n - covered) * 4;
        if bits_bytes.min(paths_bytes) > max_bytes {
            return None;
        }
        // Off-path targets cost a walk over their predecessors per query,
        // so the bit matrix wins while it is modest (VeriStrong's HD-10k
        // under SI: 2-width clauses 0.45 s with the path layout, 0.13 s
        // with a 50 MB matrix).
        let paths_first = if covered < n {
            bits_bytes > max_bytes || bits_bytes > BITS_PREFERRED_BYTES
        } else {
            paths_bytes < bits_bytes
        };
        let mut next: Vec<u32> = Vec::new();
        if paths_first {
            let mut first = match spare {
                Some(Reach::Paths { mut first, .. }) => {
                    first.clear();
                    first.resize(n * paths, u32::MAX);
                    first
                }
                _ => vec![u32::MAX; n * paths],
            };
            for &v in order.iter().rev() {
                let vi = v as usize;
                next.clear();
                next.extend(adj[vi].iter().map(|&(t, _)| t));
                next.sort_unstable_by_key(|&t| pos[t as usize]);
                next.dedup();
                for &t in &next {
                    let t = t as usize;
                    // Already reached: its row is already folded in.
                    if t < covered && first[vi * paths + path[t] as usize] <= index[t] {
                        continue;
                    }
                    let (lo, hi) = split_rows(&mut first, vi, t, paths);
                    for (x, y) in lo.iter_mut().zip(hi) {
                        *x = (*x).min(*y);
                    }
                }
                if vi < covered {
                    first[vi * paths + path[vi] as usize] = index[vi];
                }
            }
            // Predecessor lists of the vertices off the paths.
            let mut preds = vec![0u32; uncovered_preds];
            if covered < n {
                let mut fill = starts.clone();
                for (v, a) in adj.iter().enumerate() {
                    for &(w, _) in a.iter().filter(|&&(w, _)| !on_path(w)) {
                        let slot = &mut fill[w as usize - covered];
                        preds[*slot as usize] = v as u32;
                        *slot += 1;
                    }
                }
            }
            return Some(Reach::Paths {
                paths,
                path,
                index,
                first,
                covered,
                starts,
                preds,
            });
        }
        let words = n.div_ceil(64);
        let mut bits = match spare {
            Some(Reach::Bits { mut bits, .. }) => {
                bits.clear();
                bits.resize(n * words, 0);
                bits
            }
            _ => vec![0u64; n * words],
        };
        for &v in order.iter().rev() {
            let vi = v as usize;
            bits[vi * words + vi / 64] |= 1 << (vi % 64);
            next.clear();
            next.extend(adj[vi].iter().map(|&(t, _)| t));
            next.sort_unstable_by_key(|&t| pos[t as usize]);
            for &t in &next {
                let t = t as usize;
                // A finished row is closed: if `t` is in, so is its row.
                if bits[vi * words + t / 64] >> (t % 64) & 1 == 1 {
                    continue;
                }
                let (lo, hi) = split_rows(&mut bits, vi, t, words);
                for (x, y) in lo.iter_mut().zip(hi) {
                    *x |= *y;
                }
            }
        }
        Some(Reach::Bits { words, bits })
    }

    /// With the bit-matrix layout, the words of `a`'s row (bit `b % 64` of
    /// word `b / 64` set iff `a` reaches `b`); `None` with the path layout.
    pub(super) fn row(&self, a: u32) -> Option<&[u64]> {
        match self {
            Reach::Bits { words, bits } => Some(&bits[a as usize * words..][..*words]),
            Reach::Paths { .. } => None,
        }
    }

    /// Whether `a` reaches `b` (reflexive).
    pub(super) fn reaches(&self, a: u32, b: u32) -> bool {
        let (a, b) = (a as usize, b as usize);
        match self {
            Reach::Bits { words, bits } => bits[a * words + b / 64] >> (b % 64) & 1 == 1,
            Reach::Paths {
                paths,
                path,
                index,
                first,
                covered,
                starts,
                preds,
            } => {
                if b < *covered {
                    first[a * paths + path[b] as usize] <= index[b]
                } else {
                    let at = b - covered;
                    a == b
                        || preds[starts[at] as usize..starts[at + 1] as usize]
                            .iter()
                            .any(|&p| self.reaches(a as u32, p))
                }
            }
        }
    }
}

/// Row `a` (mutable) and row `b` of a row-major table with `width` columns.
fn split_rows<T>(table: &mut [T], a: usize, b: usize, width: usize) -> (&mut [T], &[T]) {
    if a < b {
        let (x, y) = table.split_at_mut(b * width);
        (&mut x[a * width..a * width + width], &y[..width])
    } else {
        let (x, y) = table.split_at_mut(a * width);
        (&mut y[..width], &x[b * width..b * width + width])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both layouts, the path layout also with vertices off the paths, agree
    /// with a depth-first search on random DAGs.
    #[test]
    fn layouts_agree_with_search() {
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        let mut below = |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        let mut layouts = [0usize; 2];
        let mut partly_covered = 0;
        for _ in 0..1500 {
            let n = 1 + below(40) as usize;
            // Edges go from lower to higher ranks of a random permutation.
            let mut order: Vec<u32> = (0..n as u32).collect();
            for i in (1..n).rev() {
                order.swap(i, below(i as u64 + 1) as usize);
            }
            let mut adj = vec![Vec::new(); n];
            let edges = below(3 * n as u64);
            let chain = below(2) == 0;
            for i in 0..n {
                if chain && i + 1 < n {
                    adj[order[i] as usize].push((order[i + 1], 1));
                }
            }
            for _ in 0..edges {
                let (i, j) = (below(n as u64) as usize, below(n as u64) as usize);
                if i < j {
                    adj[order[i] as usize].push((order[j], 0));
                }
            }
            // Label 1 marks the chain edges, preferred in the path cover.
            // Sometimes only the vertices below a random bound are covered.
            let covered = if below(2) == 0 {
                n
            } else {
                below(n as u64 + 1) as usize
            };
            let reach = Reach::new(&adj, &order, usize::MAX, |l| l == 1, covered).expect("fits");
            let paths = matches!(reach, Reach::Paths { .. });
            layouts[paths as usize] += 1;
            partly_covered += (paths && covered < n) as usize;
            for a in 0..n as u32 {
                let mut seen = vec![false; n];
                let mut stack = vec![a];
                seen[a as usize] = true;
                while let Some(v) = stack.pop() {
                    for &(w, _) in &adj[v as usize] {
                        if !seen[w as usize] {
                            seen[w as usize] = true;
                            stack.push(w);
                        }
                    }
                }
                for b in 0..n as u32 {
                    assert_eq!(reach.reaches(a, b), seen[b as usize], "{a} -> {b}: {adj:?}");
                }
            }
        }
        assert!(layouts[0] > 20 && layouts[1] > 20, "{layouts:?}");
        assert!(partly_covered > 20, "{partly_covered}");
    }
}
