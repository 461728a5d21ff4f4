//! Garbage collection without fences: list-append under a model that forbids
//! real-time anomalies (`strict-serializable`, `strong-snapshot-isolation`,
//! …), where the version order of each key is read off the lists and real
//! time orders every future transaction after every completed one.
//!
//! # What is forgotten, and why that is safe
//!
//! Let `now` be the end of the stream read so far and `open` the earliest
//! invocation still pending. A set `F` of retained `:ok` transactions is
//! forgotten when (fixpoint, [`ListGc::collect`]):
//!
//! * (a) each `T` in `F` completed before `open`, and no `:ok` transaction
//!   outside `F` completed before `T` was invoked (no real-time or process
//!   edge enters `F`; an `:info` op precedes nothing in real time, as in
//!   Elle's real-time graph: it may take effect any time after it began);
//! * (b) every element `T` appended is either in the longest list read so
//!   far (`L_k`) with every element before it appended by `F`, or unread,
//!   in which case its key is *closable*: all of `L_k` is appended by `F`,
//!   nobody outside `F` appended to `k` unread or read `k`, and the unread
//!   appenders of `k` are totally ordered by real time (no ww edge can enter
//!   `F`, and the order of the unread elements is forced);
//! * (c) every element `T` read was appended by `F` (no wr edge enters `F`);
//! * (d) every `:ok` read of `k` outside `F` contains `T`'s elements (no rw
//!   edge enters `F`).
//!
//! So no edge from outside `F` enters `F` now. A future transaction `R` is
//! invoked after every member of `F` completed (they completed before
//! `open` ≤ `now`), so each can reach it by real time, and `R` can only add
//! an edge into `F` by reading a list of `k` that does not start with the
//! forgotten prefix `B_k` (elements of `F` in version order): a stale read
//! (G-single-item-realtime) or a list incompatible with one read before
//! (incompatible-order) — both make the whole history invalid under the
//! models this applies to. Every new `:ok` read is compared with `B_k`
//! (a 61-bit polynomial hash of the prefix and its length: memory per key,
//! not per element); a mismatch is an immediate rejection (Cobra's
//! tombstones), otherwise the prefix is cut off the read, so the retained
//! history reads as if `B_k` were the initial state. Cycles inside `F` were
//! searched for before `F` was forgotten (each round checks everything
//! retained), and no cycle can enter `F` from outside, so forgetting `F`
//! hides no cycle: the rounds find an anomaly iff the whole history has one.
//!
//! Unread appends whose order real time does not force (concurrent last
//! appends to a key, typically one Jepsen retired) are forgotten as a
//! *loose block*: later reads must show the block right after the prefix,
//! in some order (anything else is rejected). The first `:ok` read that
//! shows the order makes it part of the prefix; orders that reads of
//! several keys reveal among the same forgotten transactions are kept and
//! a cycle among them is rejected at once (G0 of collected transactions).
//! Since the collector no longer knows the other paths among the forgotten
//! transactions, it cannot tell whether a revealed order closes a longer
//! cycle, so the verdict is then left to the check of the whole history
//! at the end (a note says so). Without
//! loose blocks every retired key's last concurrent appends would stay
//! forever and, by (a), keep everything after them.
//!
//! Without real time a future read may legally return an old list (Cobra
//! §4.1), so list-append under `serializable` gets no collection here (it
//! needs fences).

// Long (about 780 lines): the proof sketch above and the fixpoint that
// implements it are kept together, as in `fence_gc`.

use super::store::{Arg, Store, Txn};
use crate::model::{Atom, MopFn, OpType};
use hashbrown::{HashMap, HashSet};

/// The forgotten prefix of a key's list.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Base {
    /// Number of forgotten elements.
    pub len: u32,
    /// Polynomial hash of those elements.
    pub hash: u64,
    /// Forgotten unread elements whose order real time does not force
    /// (concurrent last appends, e.g. of a key Jepsen retired): they must
    /// follow the prefix, as a block, in some order.
    pub loose: Option<Loose>,
}

/// An unordered block of forgotten unread elements.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Loose {
    /// Each element and its transaction (start position), sorted.
    pub owners: Vec<(Atom, u64)>,
}

const MODULUS: u128 = (1 << 61) - 1;
const MULTIPLIER: u128 = 0x1f3a_5c7e_9b2d_4e61 % MODULUS;

/// Extends a prefix hash by one element.
fn extend(hash: u64, a: Atom) -> u64 {
    ((hash as u128 * MULTIPLIER + mix(a) as u128 % MODULUS + 1) % MODULUS) as u64
}

/// An element's bits, mixed (keeps nearby integers, the usual elements,
/// apart).
fn mix(a: Atom) -> u64 {
    let x = atom_bits(a).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    x ^ (x >> 29)
}

/// The transactions of a loose block in the order a read shows, or `None`
/// when the read does not hold exactly the block's elements.
fn block_order(block: &Loose, read: &[Atom]) -> Option<Vec<u64>> {
    let mut sorted = read.to_vec();
    sorted.sort_unstable();
    let els: Vec<Atom> = block.owners.iter().map(|o| o.0).collect();
    if sorted != els {
        return None;
    }
    let mut order: Vec<u64> = Vec::new();
    for a in read {
        let i = block.owners.binary_search_by_key(a, |o| o.0).ok()?;
        let t = block.owners[i].1;
        if order.last() != Some(&t) {
            order.push(t);
        }
    }
    Some(order)
}

fn atom_bits(a: Atom) -> u64 {
    match a.as_int() {
        Some(n) => n as u64,
        None => a.interned_slot().unwrap_or(0) as u64 | (1 << 63),
    }
}

/// How many transactions one collection forgot.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Collected {
    /// `:ok` transactions forgotten.
    pub ok: usize,
    /// `:fail` transactions forgotten with them.
    pub failed: usize,
}

/// A collection worked out and not yet applied ([`ListGc::prepare`]).
#[derive(Default)]
pub struct Prepared {
    /// The earliest pending invocation when it was worked out.
    open: u64,
    /// The transactions (starts) to forget.
    forget: Vec<u64>,
    /// How each key's forgotten prefix grows.
    extensions: Vec<Growth>,
}

/// The collector's state: the forgotten prefix of each key.
#[derive(Default, Debug)]
pub struct ListGc {
    /// Forgotten prefix per key.
    pub bases: HashMap<Atom, Base>,
    /// Orders reads revealed among the transactions of loose blocks
    /// (ww edges), to catch reads of two keys that order the same
    /// forgotten transactions both ways.
    revealed: HashMap<u64, Vec<u64>>,
    /// The last op (position) that mentioned each key.
    pub touched: HashMap<Atom, u64>,
    /// A loose block is only formed on a key no op mentioned for this many
    /// ops (a retired key, most likely): a read of an active key would soon
    /// reveal its order and leave the verdict to the whole check, whereas
    /// keeping its appenders a little longer lets a read order them.
    pub loose_idle_ops: u64,
    /// The position of the next op (set by the caller before collecting).
    pub now: u64,
    /// Elements of crashed transactions nobody had read when their key's
    /// unread appends were forgotten: a read showing one where the
    /// forgotten appends were may be legal (the crashed append took effect
    /// among them), which the collector cannot judge.
    aside: HashMap<Atom, Vec<Atom>>,
}

impl ListGc {
    /// Adds the edge `a → b` to the revealed orders; false when `b` already
    /// reaches `a` (a cycle of forgotten transactions).
    fn reveal(&mut self, a: u64, b: u64) -> bool {
        let mut stack = vec![b];
        let mut seen = HashSet::new();
        while let Some(x) = stack.pop() {
            if x == a {
                return false;
            }
            if seen.insert(x) {
                stack.extend(self.revealed.get(&x).into_iter().flatten());
            }
        }
        self.revealed.entry(a).or_default().push(b);
        true
    }
}

/// What [`ListGc::admit`] did to a completion's reads.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Admitted {
    /// Some read changed (the op must be re-rendered).
    pub changed: bool,
    /// `:ok` reads that contradict a forgotten prefix.
    pub rejected: Vec<Mismatch>,
    /// An `:ok` read revealed the order of a loose block.
    pub revealed: bool,
    /// An `:ok` read that does not extend a forgotten prefix shows an
    /// element of a crashed transaction set aside (`ListGc::aside`).
    pub aside: bool,
}

/// A new `:ok` read that does not extend its key's forgotten prefix.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mismatch {
    /// The key.
    pub key: Atom,
    /// Length of the forgotten prefix.
    pub base_len: u32,
}

impl ListGc {
    /// Compares the reads of a new completion with the forgotten prefixes:
    /// matching reads lose the prefix, others become `nil` and are returned
    /// (an `:ok` one is an immediate rejection). Returns whether any read
    /// changed, and whether an `:ok` read revealed the order of a loose
    /// block (which could close a cycle among forgotten transactions that
    /// the collector no longer sees: the caller defers the verdict to a
    /// check of the whole history).
    pub fn admit(&mut self, ok: bool, mops: &mut [super::store::WMop]) -> Admitted {
        let mut out = Admitted::default();
        for m in mops.iter_mut() {
            if m.f != MopFn::Read {
                continue;
            }
            let Some(base) = self.bases.get_mut(&m.key) else {
                continue;
            };
            let Arg::List(list) = &mut m.arg else {
                continue;
            };
            let n = base.len as usize;
            let mut matches =
                list.len() >= n && list[..n].iter().fold(0, |h, &a| extend(h, a)) == base.hash;
            let mut cut = n;
            let mut order = None;
            if let (true, Some(l)) = (matches, &base.loose) {
                let end = n + l.owners.len();
                order = (list.len() >= end)
                    .then(|| block_order(l, &list[n..end]))
                    .flatten();
                matches = order.is_some();
                if matches && ok {
                    // The block's order is now known: it joins the prefix.
                    for &a in &list[n..end] {
                        base.hash = extend(base.hash, a);
                    }
                    base.len += l.owners.len() as u32;
                    base.loose = None;
                    out.revealed = true;
                } else {
                    order = None;
                }
                cut = end;
            }
            let (key, base_len, loose_left) = (m.key, base.len, base.loose.is_some());
            if let Some(order) = order {
                if !order.windows(2).all(|w| self.reveal(w[0], w[1])) {
                    out.rejected.push(Mismatch { key, base_len });
                }
            }
            out.changed = true;
            if matches && (ok || !loose_left) {
                list.drain(..cut);
            } else if matches {
                m.arg = Arg::Nil;
            } else {
                let aside = self.aside.get(&key).is_some_and(
                    |a| matches!(&m.arg, Arg::List(l) if l.iter().any(|e| a.contains(e))),
                );
                if ok && aside {
                    out.aside = true;
                } else if ok {
                    out.rejected.push(Mismatch { key, base_len });
                }
                m.arg = Arg::Nil;
            }
        }
        out
    }

    /// Forgets what can be forgotten (module docs); returns how much.
    /// Gives up (forgets nothing) on histories whose reads disagree or whose
    /// elements repeat: those are reported by the round's check.
    pub fn collect(&mut self, store: &mut Store) -> Collected {
        let p = self.prepare(store);
        self.apply(store, p)
    }

    /// What [`ListGc::collect`] would forget, worked out without changing
    /// the store, so that it can run beside the round's check (which reads
    /// the same store): applied with [`ListGc::apply`] on the unchanged
    /// store, or dropped.
    pub fn prepare(&mut self, store: &Store) -> Prepared {
        // Keys not mentioned for the idle window count as idle without an
        // entry: forgetting old entries keeps this map as small as the
        // window.
        let (now, idle) = (self.now, self.loose_idle_ops);
        self.touched.retain(|_, t| now.saturating_sub(*t) < idle);
        let Some(plan) = Plan::new(store) else {
            return Prepared::default();
        };
        let Some((forget, extensions)) = plan.fixpoint(store, self) else {
            return Prepared::default();
        };
        Prepared {
            open: plan.open,
            forget,
            extensions,
        }
    }

    /// Forgets what [`ListGc::prepare`] found, on the store it read.
    pub fn apply(&mut self, store: &mut Store, p: Prepared) -> Collected {
        let Prepared {
            open,
            forget,
            extensions,
        } = p;
        if forget.is_empty() {
            return Collected::default();
        }
        let mut done = Collected::default();
        // One pass over the store (removing them one by one searched the
        // store for each). Failed transactions have no edges; those that
        // ended before the oldest pending invocation go with the others.
        let mut forget = forget;
        forget.sort_unstable();
        let mut next = forget.iter().copied().peekable();
        store.txns.retain(|&s, t| {
            while next.next_if(|&f| f < s).is_some() {}
            if next.next_if_eq(&s).is_some() {
                done.ok += 1;
                false
            } else if t.outcome() == OpType::Fail && t.end().is_some_and(|e| e < open) {
                done.failed += 1;
                false
            } else {
                true
            }
        });
        let mut cuts: HashMap<Atom, usize> = HashMap::new();
        for g in extensions {
            if !g.aside.is_empty() {
                self.aside.entry(g.key).or_default().extend(g.aside);
            }
            let base = self.bases.entry(g.key).or_default();
            let cut = g.ordered.len();
            for a in g.ordered {
                base.hash = extend(base.hash, a);
            }
            base.len += cut as u32;
            if !g.loose.is_empty() {
                let mut owners = g.loose;
                owners.sort_unstable();
                base.loose = Some(Loose { owners });
            }
            if cut > 0 {
                cuts.insert(g.key, cut);
            }
        }
        if !cuts.is_empty() {
            trim_reads(store, &cuts);
        }
        done
    }
}

/// Cuts the first `cuts[key]` elements off every retained read of `key`
/// (re-rendering those ops); reads too short (only `:info` ones can be)
/// become `nil`.
fn trim_reads(store: &mut Store, cuts: &HashMap<Atom, usize>) {
    let mut rerender = Vec::new();
    for (&s, t) in store.txns.iter_mut() {
        let Some(mops) = t.mops.as_mut() else {
            continue;
        };
        let mut changed = false;
        for m in mops.iter_mut() {
            let Some(&cut) = cuts.get(&m.key).filter(|_| m.f == MopFn::Read) else {
                continue;
            };
            if let Arg::List(l) = &mut m.arg {
                if l.len() >= cut {
                    l.drain(..cut);
                } else {
                    m.arg = Arg::Nil;
                }
                changed = true;
            }
        }
        if changed && t.comp.is_some() {
            rerender.push(s);
        }
    }
    for s in rerender {
        store.rerender_completion(s);
    }
}

/// What one collection looks at.
struct Plan {
    /// The earliest pending invocation (or past the end).
    open: u64,
    /// The longest `:ok` read of each key: (elements).
    longest: HashMap<Atom, Vec<Atom>>,
    /// Position of each element in its key's longest read.
    position: HashMap<(Atom, Atom), usize>,
    /// Appender (start) of each appended element.
    appender: HashMap<(Atom, Atom), u64>,
    /// Unread elements per key: (appender start, element).
    unread: HashMap<Atom, Vec<(u64, Atom)>>,
    /// Crashed (`:info`) transactions none of whose elements anybody read,
    /// and their elements by key: set aside (module docs).
    aside: HashSet<u64>,
    aside_elements: HashMap<Atom, Vec<Atom>>,
    /// Crashed transactions some of whose elements were read, and the
    /// earliest completion of an `:ok` read showing one: they took effect
    /// before it (`T →wr r →rt R`), so they may join `F` as if completed
    /// then (module docs).
    info_end: HashMap<u64, u64>,
}

impl Plan {
    fn new(store: &Store) -> Option<Plan> {
        // Long (about 120 lines): the tables the fixpoint reads, each built
        // from the previous ones (longest reads, positions, crashed
        // appenders' first readers, unread elements).
        let open = store.open.values().copied().min().unwrap_or(u64::MAX);
        let mut longest: HashMap<Atom, Vec<Atom>> = HashMap::new();
        let mut appender = HashMap::new();
        // Crashed transactions, the few whose appends the tables below ask
        // about (looked up here, not in the store once per element).
        let mut info: HashSet<u64> = HashSet::new();
        for (&s, t) in &store.txns {
            if t.outcome() == OpType::Info {
                info.insert(s);
            }
            let Some(mops) = &t.mops else { continue };
            for m in mops {
                match (&m.f, &m.arg) {
                    (MopFn::Read, Arg::List(l)) if t.outcome() == OpType::Ok => {
                        let cur = longest.entry(m.key).or_default();
                        if l.len() > cur.len() {
                            if l[..cur.len()] != cur[..] {
                                return None;
                            }
                            *cur = l.clone();
                        } else if l[..] != cur[..l.len()] {
                            return None;
                        }
                    }
                    (MopFn::Append, Arg::Atom(e))
                        if appender.insert((m.key, *e), s).is_some_and(|p| p != s) =>
                    {
                        return None;
                    }
                    _ => {}
                }
            }
        }
        let mut position = HashMap::new();
        for (&k, l) in &longest {
            for (i, &e) in l.iter().enumerate() {
                if position.insert((k, e), i).is_some() {
                    return None;
                }
            }
        }
        // Crashed transactions some of whose elements were read take effect
        // by the first `:ok` read showing one (`info_ends`). One none of
        // whose elements was read is ordered before nothing (its reads are
        // not observed, real time orders nothing after it, it is its
        // process's last): it can always be serialized last, or not at all,
        // so it closes no key's door.
        let info_end = if info.is_empty() {
            HashMap::new()
        } else {
            info_ends(store, &appender, &position, &info)
        };
        let aside: HashSet<u64> = info
            .into_iter()
            .filter(|s| !info_end.contains_key(s))
            .collect();
        let mut unread: HashMap<Atom, Vec<(u64, Atom)>> = HashMap::new();
        let mut aside_elements: HashMap<Atom, Vec<Atom>> = HashMap::new();
        for (&(k, e), &s) in &appender {
            if aside.contains(&s) {
                aside_elements.entry(k).or_default().push(e);
            } else if !position.contains_key(&(k, e)) {
                unread.entry(k).or_default().push((s, e));
            }
        }
        for v in unread.values_mut() {
            v.sort_unstable();
        }

        Some(Plan {
            open,
            longest,
            position,
            appender,
            unread,
            aside,
            aside_elements,
            info_end,
        })
    }

    /// The largest set satisfying (a)–(d), and the elements each key's
    /// forgotten prefix grows by; `None` when the fixpoint takes too long
    /// (then nothing is forgotten: always safe).
    fn fixpoint(&self, store: &Store, gc: &ListGc) -> Option<(Vec<u64>, Vec<Growth>)> {
        let txs: Vec<(u64, &Txn)> = store.txns.iter().map(|(&s, t)| (s, t)).collect();
        let mut c = Cands {
            index: txs.iter().enumerate().map(|(i, &(s, _))| (s, i)).collect(),
            member: txs
                .iter()
                .map(|(s, t)| {
                    let end = match t.outcome() {
                        OpType::Ok => t.end(),
                        OpType::Info => self.info_end.get(s).copied(),
                        _ => None,
                    };
                    end.is_some_and(|e| e < self.open)
                })
                .collect(),
        };
        for pass in 0..64 {
            let view = View::new(self, &txs, &c, gc);
            let mut dropped = false;
            for (i, (_, t)) in txs.iter().enumerate() {
                if c.member[i] && !view.keeps(self, t) {
                    c.member[i] = false;
                    dropped = true;
                }
            }
            if !dropped {
                if std::env::var_os("ELLERY_WATCH_TIMING").is_some() {
                    eprintln!("ellery: timing: list fixpoint passes {}", pass + 1);
                }
                let mut ext = Vec::new();
                let mut keys: Vec<Atom> = self.longest.keys().copied().collect();
                keys.extend(
                    self.unread
                        .keys()
                        .filter(|k| !self.longest.contains_key(*k)),
                );
                for k in keys {
                    let j = self.longest.get(&k).map_or(0, |_| view.prefix_in_c[&k]);
                    let mut g = Growth {
                        key: k,
                        ordered: self.longest.get(&k).map_or(Vec::new(), |l| l[..j].to_vec()),
                        loose: Vec::new(),
                        aside: Vec::new(),
                    };
                    if let Some(&chained) = view.closable.get(&k) {
                        g.aside = self.aside_elements.get(&k).cloned().unwrap_or_default();
                        for &(s, _) in dedup_starts(&self.unread[&k]).iter() {
                            let els = appends_of(&store.txns[&s], k);
                            if chained {
                                g.ordered.extend(els);
                            } else {
                                g.loose.extend(els.into_iter().map(|e| (e, s)));
                            }
                        }
                    }
                    if !g.ordered.is_empty() || !g.loose.is_empty() || !g.aside.is_empty() {
                        ext.push(g);
                    }
                }
                let forget: Vec<u64> = txs
                    .iter()
                    .zip(&c.member)
                    .filter(|(_, &m)| m)
                    .map(|((s, _), _)| *s)
                    .collect();
                return Some((forget, ext));
            }
        }
        None
    }
}

/// For each crashed transaction (`info`) some of whose elements an `:ok`
/// read shows, the earliest completion of such a read (`Plan::info_end`).
/// Only asked when a crashed transaction is retained: it reads every
/// retained read.
fn info_ends(
    store: &Store,
    appender: &HashMap<(Atom, Atom), u64>,
    position: &HashMap<(Atom, Atom), usize>,
    info: &HashSet<u64>,
) -> HashMap<u64, u64> {
    // Earliest `:ok` read end per key and minimum length: `best[l]` is the
    // earliest end of a read at least `l + 1` long.
    let mut best: HashMap<Atom, Vec<u64>> = HashMap::new();
    for t in store.txns.values() {
        let Some(e) = t.end().filter(|_| t.outcome() == OpType::Ok) else {
            continue;
        };
        for m in t.mops.iter().flatten() {
            if let (MopFn::Read, Arg::List(l)) = (&m.f, &m.arg) {
                if l.is_empty() {
                    continue;
                }
                let b = best.entry(m.key).or_default();
                if b.len() < l.len() {
                    b.resize(l.len(), u64::MAX);
                }
                b[l.len() - 1] = b[l.len() - 1].min(e);
            }
        }
    }
    for b in best.values_mut() {
        for i in (0..b.len().saturating_sub(1)).rev() {
            b[i] = b[i].min(b[i + 1]);
        }
    }
    let mut info_end: HashMap<u64, u64> = HashMap::new();
    for (&(k, e), &s) in appender {
        let Some(&p) = position.get(&(k, e)).filter(|_| info.contains(&s)) else {
            continue;
        };
        let end = (best.get(&k).and_then(|b| b.get(p)).copied()).unwrap_or(u64::MAX);
        let x = info_end.entry(s).or_insert(u64::MAX);
        *x = (*x).min(end);
    }
    info_end
}

/// How one key's forgotten prefix grows.
struct Growth {
    key: Atom,
    /// Elements in known order.
    ordered: Vec<Atom>,
    /// Then a block in unknown order (element, transaction).
    loose: Vec<(Atom, u64)>,
    /// Elements of crashed transactions set aside when the key closed.
    aside: Vec<Atom>,
}

fn dedup_starts(v: &[(u64, Atom)]) -> Vec<(u64, Atom)> {
    let mut out: Vec<(u64, Atom)> = Vec::new();
    for &x in v {
        if out.last().is_none_or(|l| l.0 != x.0) {
            out.push(x);
        }
    }
    out
}

/// A transaction's appends to `k`, in its order.
fn appends_of(t: &Txn, k: Atom) -> Vec<Atom> {
    t.mops
        .iter()
        .flatten()
        .filter(|m| m.f == MopFn::Append && m.key == k)
        .filter_map(|m| match m.arg {
            Arg::Atom(a) => Some(a),
            _ => None,
        })
        .collect()
}

/// The candidate set: a flag per retained transaction (in start order).
struct Cands {
    index: HashMap<u64, usize>,
    member: Vec<bool>,
}

impl Cands {
    fn contains(&self, start: &u64) -> bool {
        self.index.get(start).is_some_and(|&i| self.member[i])
    }
}

/// Facts about the complement of the candidate set, recomputed per pass.
struct View {
    /// Earliest completion of a retained `:ok` transaction outside the
    /// candidates.
    first_end_outside: u64,
    /// Shortest `:ok` read of each key outside the candidates.
    shortest_outside: HashMap<Atom, usize>,
    /// Length of the longest prefix of each key's longest read appended by
    /// candidates.
    prefix_in_c: HashMap<Atom, usize>,
    /// Keys whose unread elements may be forgotten (module docs, (b)), and
    /// whether real time orders them.
    closable: HashMap<Atom, bool>,
}

impl View {
    fn new(plan: &Plan, txs: &[(u64, &Txn)], c: &Cands, gc: &ListGc) -> View {
        let mut first_end_outside = u64::MAX;
        let mut shortest_outside: HashMap<Atom, usize> = HashMap::new();
        let mut appends_outside: HashSet<Atom> = HashSet::new();
        for (i, (s, t)) in txs.iter().enumerate() {
            if c.member[i] || plan.aside.contains(s) {
                continue;
            }
            // Only `:ok` completions precede anything in real time (Elle's
            // real-time graph; an `:info` op may take effect any time later).
            if t.outcome() == OpType::Ok {
                if let Some(e) = t.end() {
                    first_end_outside = first_end_outside.min(e);
                }
            }
            for m in t.mops.iter().flatten() {
                match (&m.f, &m.arg) {
                    (MopFn::Read, Arg::List(l)) if t.outcome() == OpType::Ok => {
                        let e = shortest_outside.entry(m.key).or_insert(usize::MAX);
                        *e = (*e).min(l.len());
                    }
                    (MopFn::Append, Arg::Atom(e))
                        if t.outcome() != OpType::Fail
                            && !plan.position.contains_key(&(m.key, *e)) =>
                    {
                        appends_outside.insert(m.key);
                    }
                    _ => {}
                }
            }
        }
        let mut prefix_in_c = HashMap::new();
        for (&k, l) in &plan.longest {
            let j = l
                .iter()
                .take_while(|&&e| plan.appender.get(&(k, e)).is_some_and(|s| c.contains(s)))
                .count();
            prefix_in_c.insert(k, j);
        }
        let mut closable = HashMap::new();
        for (&k, u) in &plan.unread {
            let whole = plan
                .longest
                .get(&k)
                .is_none_or(|l| prefix_in_c[&k] == l.len());
            let ok = whole
                && !appends_outside.contains(&k)
                && !shortest_outside.contains_key(&k)
                && u.iter().all(|(s, _)| c.contains(s))
                && gc.bases.get(&k).is_none_or(|b| b.loose.is_none());
            let idle = gc
                .touched
                .get(&k)
                .is_none_or(|&t| gc.now.saturating_sub(t) >= gc.loose_idle_ops);
            if ok {
                let chained = chained(txs, &c.index, &plan.info_end, &dedup_starts(u));
                if chained || idle {
                    closable.insert(k, chained);
                }
            }
        }
        View {
            first_end_outside,
            shortest_outside,
            prefix_in_c,
            closable,
        }
    }

    /// Whether candidate `t` may stay a candidate ((a)–(d)).
    fn keeps(&self, plan: &Plan, t: &Txn) -> bool {
        if t.start() > self.first_end_outside {
            return false; // (a)
        }
        for m in t.mops.iter().flatten() {
            match (&m.f, &m.arg) {
                (MopFn::Append, Arg::Atom(e)) => {
                    let shortest = self.shortest_outside.get(&m.key).copied();
                    let bad = match plan.position.get(&(m.key, *e)) {
                        // (b): read, after candidates only; (d): in every
                        // read outside.
                        Some(&p) => {
                            p >= self.prefix_in_c[&m.key] || p >= shortest.unwrap_or(usize::MAX)
                        }
                        // (b): unread, on a closable key.
                        None => !self.closable.contains_key(&m.key),
                    };
                    if bad {
                        return false;
                    }
                }
                // (c): every element read appended by candidates.
                (MopFn::Read, Arg::List(l))
                    if l.len() > self.prefix_in_c.get(&m.key).copied().unwrap_or(0) =>
                {
                    return false;
                }
                (MopFn::Append, _) => return false,
                _ => {}
            }
        }
        true
    }
}

/// Whether the transactions starting at `starts` (sorted) are totally
/// ordered by real time: each completed before the next was invoked.
fn chained(
    txs: &[(u64, &Txn)],
    index: &HashMap<u64, usize>,
    info_end: &HashMap<u64, u64>,
    starts: &[(u64, Atom)],
) -> bool {
    starts.windows(2).all(|w| {
        let a = txs[index[&w[0].0]].1;
        // A crashed transaction's completion orders nothing; its first
        // reader's does.
        let end = match a.outcome() {
            OpType::Ok => a.end(),
            _ => info_end.get(&w[0].0).copied(),
        };
        end.is_some_and(|e| e < w[1].0)
    })
}
