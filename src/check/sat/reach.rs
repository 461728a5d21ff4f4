//! Reflexive reachability of a DAG, in one of two layouts, whichever is
//! smaller: an n×n bit matrix (VeriStrong's Algorithm 6), or, when few
//! paths cover the graph (sessions do), per vertex the first position it
//! reaches on each path of a greedy path cover (n × paths words).

/// Reachability queries over a fixed DAG.
pub(super) enum Reach {
    /// Row `v` has bit `u` set iff `v` reaches `u`.
    Bits { words: usize, bits: Vec<u64> },
    /// `first[v * paths + p]`: the smallest index on path `p` that `v`
    /// reaches (`u32::MAX`: none); `path[u]`, `index[u]`: where `u` lies.
    Paths {
        paths: usize,
        path: Vec<u32>,
        index: Vec<u32>,
        first: Vec<u32>,
    },
}

impl Reach {
    /// Reachability of `adj` (successors with labels) given a topological
    /// `order`, or `None` if it needs more than `max_bytes`. The path cover
    /// follows edges whose label is `preferred` first (session order).
    pub(super) fn new(
        adj: &[Vec<(u32, usize)>],
        order: &[u32],
        max_bytes: usize,
        preferred: impl Fn(usize) -> bool,
    ) -> Option<Reach> {
        Self::new_reusing(adj, order, max_bytes, preferred, None)
    }

    /// [`Reach::new`], reusing the memory of `spare` (a previous
    /// reachability) when it fits: repeated rebuilds then skip the page
    /// faults of a fresh table.
    pub(super) fn new_reusing(
        adj: &[Vec<(u32, usize)>],
        order: &[u32],
        max_bytes: usize,
        preferred: impl Fn(usize) -> bool,
        spare: Option<Reach>,
    ) -> Option<Reach> {
        let n = adj.len();
        let mut pos = vec![0u32; n];
        for (i, &v) in order.iter().enumerate() {
            pos[v as usize] = i as u32;
        }
        // Greedy path cover: link along preferred edges, then link each
        // vertex without a successor to its earliest successor without a
        // predecessor.
        let mut succ = vec![u32::MAX; n];
        let mut has_pred = vec![false; n];
        for &v in order {
            for &(w, l) in &adj[v as usize] {
                if succ[v as usize] == u32::MAX && !has_pred[w as usize] && preferred(l) {
                    succ[v as usize] = w;
                    has_pred[w as usize] = true;
                }
            }
        }
        for &v in order {
            if succ[v as usize] != u32::MAX {
                continue;
            }
            if let Some(&(w, _)) = adj[v as usize]
                .iter()
                .filter(|&&(w, _)| !has_pred[w as usize])
                .min_by_key(|&&(w, _)| pos[w as usize])
            {
                succ[v as usize] = w;
                has_pred[w as usize] = true;
            }
        }
        let mut path = vec![u32::MAX; n];
        let mut index = vec![0u32; n];
        let mut paths = 0usize;
        for &head in order {
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
        let bits_bytes = n * n.div_ceil(64) * 8;
        let paths_bytes = n * paths * 4;
        if bits_bytes.min(paths_bytes) > max_bytes {
            return None;
        }
        let mut next: Vec<u32> = Vec::new();
        if paths_bytes < bits_bytes {
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
                    if first[vi * paths + path[t] as usize] <= index[t] {
                        continue;
                    }
                    let (lo, hi) = split_rows(&mut first, vi, t, paths);
                    for (x, y) in lo.iter_mut().zip(hi) {
                        *x = (*x).min(*y);
                    }
                }
                first[vi * paths + path[vi] as usize] = index[vi];
            }
            return Some(Reach::Paths {
                paths,
                path,
                index,
                first,
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
            } => first[a * paths + path[b] as usize] <= index[b],
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

    /// Both layouts agree with a depth-first search on random DAGs.
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
        for _ in 0..300 {
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
            let reach = Reach::new(&adj, &order, usize::MAX, |l| l == 1).expect("fits");
            layouts[matches!(reach, Reach::Paths { .. }) as usize] += 1;
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
    }
}
