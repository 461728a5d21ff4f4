//! Lost updates as clauses: two committed transactions that read a key
//! from the same writer and both write it (Elle's `lost-update`), forbidden
//! by models below consistent view whose cycles do not include them
//! (cursor-stability, PSI, update-atomic).

use batsat::Lit;

use super::{RegValue, Violation};

/// `(key, value, [(read index, reader)])`: the external reads of one key
/// and value by transactions that also write the key.
type ReaderGroup = (u64, RegValue, Vec<(usize, u32)>);

/// External reads of one key and value by transactions that also write the
/// key: any two of them that read from the same writer are a lost update.
pub(super) struct LostUpdates {
    pub(super) enabled: bool,
    /// Groups of two or more, by their first read.
    groups: Vec<ReaderGroup>,
}

impl LostUpdates {
    pub(super) fn new(
        enabled: bool,
        reads: &[(u32, u64, RegValue, Vec<u32>)],
        writes: impl Fn(u32, u64) -> bool,
    ) -> LostUpdates {
        let mut groups: Vec<ReaderGroup> = Vec::new();
        if enabled {
            let mut slot: hashbrown::HashMap<(u64, RegValue), usize> = Default::default();
            for (i, &(s, k, v, _)) in reads.iter().enumerate() {
                if writes(s, k) {
                    let g = *slot.entry((k, v)).or_insert_with(|| {
                        groups.push((k, v, Vec::new()));
                        groups.len() - 1
                    });
                    groups[g].2.push((i, s));
                }
            }
            groups.retain(|g| g.2.len() > 1);
        }
        LostUpdates { enabled, groups }
    }

    /// Adds a clause "not both from `w`" for every two readers of a group
    /// and every writer `w` both may have read from (`read_lits`: per read,
    /// its candidates and their literals, `None` when certain). Returns the
    /// groups that got a clause, or the lost update every resolution has.
    pub(super) fn clauses(
        &self,
        read_lits: &[Vec<(u32, Option<Lit>)>],
        clauses: &mut Vec<Vec<Lit>>,
    ) -> Result<Vec<(u64, RegValue, Vec<u32>)>, Violation> {
        let mut out = Vec::new();
        for (k, v, group) in &self.groups {
            let mut takes_part = false;
            for (a, &(i, si)) in group.iter().enumerate() {
                for &(j, sj) in &group[a + 1..] {
                    for &(t, li) in &read_lits[i] {
                        let Some(&(_, lj)) = read_lits[j].iter().find(|c| c.0 == t) else {
                            continue;
                        };
                        let clause: Vec<Lit> = [li, lj].into_iter().flatten().map(|l| !l).collect();
                        if clause.is_empty() {
                            return Err(Violation::LostUpdate {
                                key: *k,
                                value: *v,
                                txns: vec![si, sj],
                            });
                        }
                        clauses.push(clause);
                        takes_part = true;
                    }
                }
            }
            if takes_part {
                out.push((*k, *v, group.iter().map(|g| g.1).collect()));
            }
        }
        Ok(out)
    }
}
