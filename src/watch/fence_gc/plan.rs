//! The plan of one fence collection: which retained transactions may be
//! forgotten and each key's base writer (the fixpoint the parent module's
//! doc argues safe).

use super::{Epochs, FenceGc};
use crate::graph::{grouped, Grouped};
use crate::infer::rw_register::AtomIds;
use crate::model::{Atom, MopFn, OpType};
use crate::watch::store::{Arg, Store, WMop};
use hashbrown::HashMap;

mod fixpoint;
#[cfg(test)]
mod old_tables;
#[cfg(test)]
use old_tables::OldTables;

/// One collection's view of the retained transactions (indexed in start
/// order).
pub(super) struct Plan {
    pub(super) starts: Vec<u64>,
    /// (`pf`, `nf`).
    bounds: Vec<(Option<u64>, Option<u64>)>,
    /// Start and completion positions (`None`: pending).
    span: Vec<(u64, Option<u64>)>,
    /// Whether the transaction may join `F` at all ((a), `:ok`).
    eligible: Vec<bool>,
    /// `:ok`/`:info` or pending, i.e. its writes may be visible.
    live: Vec<bool>,
    /// `:ok` (only those precede others in real time, as in Elle's
    /// real-time graph and the SAT checker).
    ok: Vec<bool>,
    /// `:info` (crashed) transactions.
    info: Vec<bool>,
    /// Some `:ok` transaction read one of its writes.
    read_any: Vec<bool>,
    /// When each transaction precedes, by real time, what is invoked
    /// later: an `:ok` one's completion; a crashed one's earliest `:ok`
    /// reader's (it wrote before that reader completed: `w →wr r →rt b`);
    /// `None` when never.
    rt_end: Vec<Option<u64>>,
    /// Each process's transactions, in order (indices).
    seqs: Vec<Vec<usize>>,
    /// The keys written or read, in first use, and their indices (small
    /// integer keys by a vector, as the inference numbers values).
    keys: Vec<Atom>,
    key_ids: AtomIds,
    /// Per key: its writers in start order, each with the last value it
    /// wrote there.
    key_writers: Vec<Vec<Slot>>,
    /// Per key: whether some writer wrote `nil` (or a list) to it.
    nil_writer: Vec<bool>,
    /// Per key: the `:ok` readers of `nil`.
    nil_readers: Grouped,
    /// The (key, value) pairs written or read, numbered densely: every
    /// later question about a value is an index, not a hash lookup.
    value_id: HashMap<(Atom, Atom), u32>,
    /// Each value's atom.
    value_atom: Vec<Atom>,
    /// Each value's writer (the latest in start order, then in the
    /// transaction; [`NONE`]: no retained writer).
    value_writer: Vec<u32>,
    /// Each value's `:ok` readers, in start order.
    value_readers: Grouped,
    /// The reader of each completed read (the test-only tables keep the
    /// read's key and value as atoms too).
    reads: Vec<usize>,
    /// The key (index into `keys`) and value ([`NONE`]: `nil`) of each of
    /// `reads`.
    read_key: Vec<u32>,
    read_value: Vec<u32>,
    /// The writer of each of `reads` (`None`: `nil`, or no retained
    /// writer): looked up once, since every fixpoint pass asks.
    read_from: Vec<Option<usize>>,
    /// The writers each transaction read from (reach through wr).
    /// (Indexed densely: `reach_wr` asks it for every pair it tries.)
    read_by: Grouped,
    /// Transitive reach through session order and reads (module docs of
    /// [`Closure`]); `None` under real-time models or when it does not
    /// apply.
    closure: Option<Closure>,
    /// What [`Plan::reach`] reads of each transaction, side by side: the
    /// fixpoint asks it for pairs of one key's writers, scattered over the
    /// round, and one cache line per transaction beats five tables.
    facts: Vec<ReachFacts>,
    /// The tables as hash maps, built the way they were before the dense
    /// ones: the full-pass oracle (`fixpoint/reference.rs`) reads these,
    /// and every test build checks the dense tables against them.
    #[cfg(test)]
    old: OldTables,
}

/// "None" in the dense `u32` tables.
const NONE: u32 = u32::MAX;

/// One transaction's facts for [`Plan::reach`], encoded so that each rule
/// is one comparison.
#[derive(Clone, Copy)]
struct ReachFacts {
    /// Its process's chain (index into `Plan::seqs`) and place in it.
    chain: u32,
    pos: u32,
    /// `rt_end` (`u64::MAX`: never).
    rt_end: u64,
    /// Its start position.
    start: u64,
    /// `pf + 1` (0: none) and `nf + 1` (`u64::MAX`: none), so that
    /// `nf <= pf` holds exactly when both exist and it holds.
    pf: u64,
    nf: u64,
}

/// One writer of a key.
#[derive(Clone, Copy)]
struct Slot {
    /// The writer (transaction index).
    tx: usize,
    /// The last value it wrote to the key ([`NONE`]: only `nil` or lists).
    value: u32,
    /// It wrote a value to the key more than once.
    rewrote: bool,
}

/// Reach in the retained transactions' graph of session order and
/// write-read edges (`:ok` readers), transitively: since each process is a
/// chain, what `a` reaches in process `q` is everything from one position
/// on, so one vector of first positions per transaction (a vector clock,
/// backwards) answers `a ~> b` in constant time. Fences chain by reads of
/// the fence key, so this covers the fence rule among retained fences and
/// paths that mix fences, reads and sessions, which the one-step rules of
/// [`Plan::reach`] miss: fewer writers look concurrent, so fewer leave `F`
/// for want of a base (the "known gap" of the parent module). Used only
/// under session-only models (real time keeps its own rule there).
/// (A transaction's chain and position are in [`ReachFacts`].)
struct Closure {
    /// Chains.
    chains: usize,
    /// `first[a * chains + q]`: the first position of chain `q` that `a`
    /// reaches (`u32::MAX`: none).
    first: Vec<u32>,
}

impl Closure {
    /// At most this many chains (processes): the vectors are `n × chains`.
    const MAX_CHAINS: usize = 256;

    /// `None` when the graph has a cycle (the round then reported an
    /// anomaly; collection does not run) or has too many processes.
    fn new(seqs: &[Vec<usize>], read_by: &Grouped, ok: &[bool]) -> Option<Closure> {
        let n = ok.len();
        let chains = seqs.len();
        if chains > Self::MAX_CHAINS || chains == 0 {
            return None;
        }
        let mut seq = vec![0u32; n];
        let mut pos = vec![0u32; n];
        let mut next = vec![u32::MAX; n];
        for (q, s) in seqs.iter().enumerate() {
            for (j, &i) in s.iter().enumerate() {
                seq[i] = q as u32;
                pos[i] = j as u32;
                if let Some(&k) = s.get(j + 1) {
                    next[i] = k as u32;
                }
            }
        }
        let readers = grouped(
            n,
            (0..n as u32)
                .filter(|&r| ok[r as usize])
                .flat_map(|r| read_by.of(r).iter().map(move |&w| (w, r)))
                .filter(|&(w, r)| w != r),
        );
        let succ = |v: u32| {
            let v = v as usize;
            let s = next[v];
            readers
                .of(v as u32)
                .iter()
                .copied()
                .chain((s != u32::MAX).then_some(s))
        };
        let order = crate::graph::topological_order(n, succ)?;
        let mut first = vec![u32::MAX; n * chains];
        for &v in order.iter().rev() {
            let v = v as usize;
            let lo = v * chains;
            first[lo + seq[v] as usize] = pos[v];
            for s in succ(v as u32) {
                let s = s as usize;
                for q in 0..chains {
                    let f = first[s * chains + q];
                    if f < first[lo + q] {
                        first[lo + q] = f;
                    }
                }
            }
        }
        Some(Closure { chains, first })
    }

    /// `a ~> b` (a path of at least one edge, or `a == b`) for the `b` at
    /// position `pos` of chain `chain`.
    fn reaches_at(&self, a: usize, chain: u32, pos: u32) -> bool {
        (self.first.get(a * self.chains + chain as usize)).is_some_and(|&f| f <= pos)
    }
}

impl Plan {
    pub(super) fn new(store: &Store, gc: &FenceGc, ep: &Epochs, agree: Option<u64>) -> Plan {
        // Long (about 120 lines): one pass filling the per-transaction tables
        // (the per-key and per-value ones in `add_mop`), then the
        // read-derived facts (wr reach, crashed writers' readers) that need
        // all writers first.
        // Under real-time models a transaction that completed before every
        // pending invocation precedes, by real time, every transaction not
        // completed yet: what (a) needs, fences or not (parent module docs).
        let open = store.open.values().copied().min().unwrap_or(u64::MAX);
        // Failed transactions are not in the plan: they leave first
        // ([`FenceGc::apply`]), so the indices are those of what is left.
        let kept = || (store.txns.iter()).filter(|(_, t)| t.outcome() != OpType::Fail);
        let n = kept().count();
        let mut p = Plan {
            starts: Vec::with_capacity(n),
            bounds: Vec::with_capacity(n),
            span: Vec::with_capacity(n),
            eligible: Vec::with_capacity(n),
            live: Vec::with_capacity(n),
            ok: Vec::with_capacity(n),
            info: Vec::with_capacity(n),
            read_any: vec![false; n],
            rt_end: Vec::with_capacity(n),
            seqs: Vec::new(),
            keys: Vec::new(),
            key_ids: AtomIds::default(),
            key_writers: Vec::new(),
            nil_writer: Vec::new(),
            nil_readers: Grouped::default(),
            value_id: HashMap::with_capacity(2 * n),
            value_atom: Vec::with_capacity(2 * n),
            value_writer: Vec::with_capacity(2 * n),
            value_readers: Grouped::default(),
            reads: Vec::with_capacity(2 * n),
            read_key: Vec::with_capacity(2 * n),
            read_value: Vec::with_capacity(2 * n),
            read_from: Vec::new(),
            read_by: Grouped::default(),
            closure: None,
            facts: Vec::new(),
            #[cfg(test)]
            old: OldTables::default(),
        };
        let mut seq_of: HashMap<i64, usize> = HashMap::new();
        let mut info_candidate = Vec::with_capacity(n);
        // (key, `:ok` reader of `nil`) and (value, `:ok` reader), grouped
        // once every key and value is numbered.
        let (mut nil_reads, mut value_reads) = (Vec::new(), Vec::with_capacity(2 * n));
        for (i, (&s, t)) in kept().enumerate() {
            debug_assert_eq!(ep.starts.get(i), Some(&s));
            let b = ep.bounds.get(i).copied().unwrap_or((None, None));
            let outcome = t.outcome();
            let writes_nil = t
                .mops
                .iter()
                .flatten()
                .any(|m| m.f == MopFn::Write && m.arg == Arg::Nil);
            let lists = t.mops.iter().flatten().any(|m| {
                matches!(m.arg, Arg::List(_)) || m.f != MopFn::Read && m.f != MopFn::Write
            });
            p.starts.push(s);
            p.bounds.push(b);
            p.span.push((s, t.end()));
            let plain = t.mops.is_some() && !writes_nil && !lists;
            p.eligible.push(
                plain
                    && outcome == OpType::Ok
                    && (b.1.zip(agree).is_some_and(|(nf, a)| nf <= a)
                        || gc.realtime && t.end().is_some_and(|e| e < open)),
            );
            // A crashed transaction may join `F` under real time once its
            // write was read (below; parent module docs).
            info_candidate.push(gc.realtime && plain && outcome == OpType::Info);
            p.live.push(outcome != OpType::Fail);
            p.ok.push(outcome == OpType::Ok);
            p.info.push(outcome == OpType::Info);
            p.rt_end
                .push(t.end().filter(|_| outcome == OpType::Ok && gc.realtime));
            let q = *seq_of.entry(t.process).or_insert_with(|| {
                p.seqs.push(Vec::new());
                p.seqs.len() - 1
            });
            p.seqs[q].push(i);
            for m in t.mops.iter().flatten() {
                p.add_mop(i, outcome, m, &mut nil_reads, &mut value_reads);
            }
        }
        p.nil_readers = grouped(p.keys.len(), nil_reads.iter().copied());
        p.value_readers = grouped(p.value_atom.len(), value_reads.iter().copied());
        p.read_from = (p.read_value.iter())
            .map(|&vid| p.value_writer.get(vid as usize).filter(|&&w| w != NONE))
            .map(|w| w.map(|&w| w as usize))
            .collect();
        p.read_by = grouped(
            n,
            (p.reads.iter().zip(&p.read_from)).filter_map(|(&r, w)| Some((r as u32, (*w)? as u32))),
        );
        // Read by another `:ok` transaction (an `:info` one's reads are not
        // observed; its own reads order nothing).
        for (vid, &w) in p.value_writer.iter().enumerate() {
            let w = w as usize;
            if w == NONE as usize || !p.info[w] {
                continue;
            }
            for &r in (p.value_readers.of(vid as u32).iter()).filter(|&&r| r as usize != w) {
                let e = p.span[r as usize].1;
                if gc.realtime && e.is_some() {
                    p.rt_end[w] = p.rt_end[w].min(e).or(e);
                }
                p.read_any[w] = true;
            }
        }
        for (i, cand) in info_candidate.into_iter().enumerate() {
            p.eligible[i] |= cand && p.read_any[i];
        }
        #[cfg(test)]
        p.check_tables();
        p.facts = p.reach_facts();
        if gc.closure && !gc.realtime {
            let t0 = std::time::Instant::now();
            p.closure = Closure::new(&p.seqs, &p.read_by, &p.ok);
            crate::watch::timing("collect: closure", t0);
        }
        p
    }

    /// Adds transaction `i`'s micro-op `m` to the key and value tables;
    /// `:ok` reads of `nil` and of values go to `nil_reads` and
    /// `value_reads`, to be grouped once everything is numbered.
    fn add_mop(
        &mut self,
        i: usize,
        outcome: OpType,
        m: &WMop,
        nil_reads: &mut Vec<(u32, u32)>,
        value_reads: &mut Vec<(u32, u32)>,
    ) {
        #[cfg(test)]
        self.old.add(i, outcome, m);
        match (m.f, &m.arg) {
            (MopFn::Write, a) if outcome != OpType::Fail => {
                let kid = self.key(m.key);
                let ws = &mut self.key_writers[kid as usize];
                if ws.last().is_none_or(|w| w.tx != i) {
                    ws.push(Slot {
                        tx: i,
                        value: NONE,
                        rewrote: false,
                    });
                }
                match a {
                    Arg::Atom(v) => {
                        let vid = self.value(m.key, *v);
                        self.value_writer[vid as usize] = i as u32;
                        if let Some(w) = self.key_writers[kid as usize].last_mut() {
                            w.rewrote |= w.value != NONE;
                            w.value = vid;
                        }
                    }
                    _ => self.nil_writer[kid as usize] = true,
                }
            }
            (MopFn::Read, a) if matches!(outcome, OpType::Ok | OpType::Info) => {
                let v = match a {
                    Arg::Atom(v) => Some(*v),
                    _ => None,
                };
                let kid = self.key(m.key);
                let vid = v.map_or(NONE, |v| self.value(m.key, v));
                self.reads.push(i);
                self.read_key.push(kid);
                self.read_value.push(vid);
                if outcome == OpType::Ok {
                    match v {
                        None => nil_reads.push((kid, i as u32)),
                        Some(_) => value_reads.push((vid, i as u32)),
                    }
                }
            }
            _ => {}
        }
    }

    /// Each transaction's [`ReachFacts`], from the finished tables.
    fn reach_facts(&self) -> Vec<ReachFacts> {
        let mut facts: Vec<ReachFacts> = (0..self.starts.len())
            .map(|i| ReachFacts {
                chain: 0,
                pos: 0,
                rt_end: self.rt_end[i].unwrap_or(u64::MAX),
                start: self.span[i].0,
                pf: self.bounds[i].0.map_or(0, |e| e.saturating_add(1)),
                nf: self.bounds[i].1.map_or(u64::MAX, |e| e.saturating_add(1)),
            })
            .collect();
        for (q, seq) in self.seqs.iter().enumerate() {
            for (j, &i) in seq.iter().enumerate() {
                (facts[i].chain, facts[i].pos) = (q as u32, j as u32);
            }
        }
        facts
    }

    /// Key `k`'s index, numbering it if new.
    fn key(&mut self, k: Atom) -> u32 {
        let next = self.keys.len() as u32;
        let kid = self.key_ids.id(k, || next);
        if kid == next {
            self.keys.push(k);
            self.key_writers.push(Vec::new());
            self.nil_writer.push(false);
        }
        kid
    }

    /// Value `v` of key `k`'s index, numbering it if new.
    fn value(&mut self, k: Atom, v: Atom) -> u32 {
        let next = self.value_atom.len() as u32;
        let vid = *self.value_id.entry((k, v)).or_insert(next);
        if vid == next {
            self.value_atom.push(v);
            self.value_writer.push(NONE);
        }
        vid
    }

    /// Key `k`'s writer slots, in start order (none when nobody wrote it).
    #[cfg(test)]
    fn writers_of_key(&self, k: Atom) -> &[Slot] {
        (self.key_ids.get(k)).map_or(&[], |kid| &self.key_writers[kid as usize])
    }

    /// The last value transaction `w` wrote to key `k` (`None`: it wrote
    /// none, or only `nil`).
    pub(super) fn last_write(&self, w: usize, k: Atom) -> Option<Atom> {
        let vid = self.last_write_id(w, self.key_ids.get(k)?);
        (vid != NONE).then(|| self.value_atom[vid as usize])
    }

    /// [`Plan::last_write`] by key index, as a value index ([`NONE`]: none).
    fn last_write_id(&self, w: usize, kid: u32) -> u32 {
        let ws = &self.key_writers[kid as usize];
        ws.binary_search_by_key(&w, |s| s.tx)
            .map_or(NONE, |at| ws[at].value)
    }

    /// Whether `w`'s writes are set aside: `w` crashed and nobody read any
    /// of its writes, so nothing orders it before anything (its reads are
    /// not observed, real time orders nothing after it, it is its process's
    /// last): it can always be serialized last, or not at all, and no base
    /// need be ordered with it (parent module docs).
    pub(super) fn set_aside(&self, w: usize) -> bool {
        self.info[w] && !self.read_any[w]
    }

    /// `a ~> b` by the rules of the module docs.
    fn reach(&self, a: usize, b: usize) -> bool {
        let (x, y) = (&self.facts[a], &self.facts[b]);
        if x.chain == y.chain {
            return a < b;
        }
        x.rt_end < y.start
            || x.nf <= y.pf
            || self
                .closure
                .as_ref()
                .is_some_and(|c| c.reaches_at(a, y.chain, y.pos))
    }

    /// `a ~> b`, also through `b` reading a value `a` wrote.
    fn reach_wr(&self, a: usize, b: usize) -> bool {
        self.reach(a, b) || self.read_by.of(b as u32).contains(&(a as u32))
    }
}
