//! The simulation engine: client processes, the versioned in-memory database,
//! and the EDN writer.

use super::{faults, GenOptions, GenSummary, Mode, Rng, Workload, MAX_STALENESS};
use std::io::{self, Write};

/// Largest gap, in nanoseconds, between two consecutive ops' `:time`s.
const MAX_GAP_NS: u64 = 200_000;

/// Flush the output buffer once it holds this many bytes.
const FLUSH_AT: usize = 1 << 16;

/// Whether a micro-op reads or writes (appends, for list-append).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Kind {
    /// `:r`
    Read,
    /// `:append` or `:w`
    Write,
}

/// A micro-op as invoked: reads carry no value; writes carry theirs.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) struct Mop {
    pub kind: Kind,
    pub key: u64,
    pub value: u64,
}

impl Mop {
    /// `[:r key nil]`
    pub fn read(key: u64) -> Mop {
        Mop {
            kind: Kind::Read,
            key,
            value: 0,
        }
    }

    /// `[:append key value]` / `[:w key value]`
    pub fn write(key: u64, value: u64) -> Mop {
        Mop {
            kind: Kind::Write,
            key,
            value,
        }
    }
}

/// What a read observed.
#[derive(Clone, PartialEq, Eq, Debug)]
pub(super) enum Observed {
    /// A list-append read.
    List(Vec<u64>),
    /// A register read (`None` is nil).
    Reg(Option<u64>),
}

/// Jepsen op types.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum OpType {
    Invoke,
    Ok,
    Fail,
    Info,
}

impl OpType {
    fn keyword(self) -> &'static [u8] {
        match self {
            OpType::Invoke => b":invoke",
            OpType::Ok => b":ok",
            OpType::Fail => b":fail",
            OpType::Info => b":info",
        }
    }
}

/// How a transaction is destined to end, decided at invocation.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Plan {
    Ok,
    Fail,
    Info { applies: bool },
}

/// A transaction's private view of one key.
#[derive(Debug)]
struct Local {
    key: u64,
    /// List-append: length of the committed prefix this txn observed.
    base: Option<usize>,
    /// List-append: this txn's own appends, in order.
    own: Vec<u64>,
    /// List-append: some read of this key included an own append.
    read_own: bool,
    /// Register: the value this txn currently sees, once known.
    reg: Option<Option<u64>>,
    /// Whether this txn wrote the key.
    written: bool,
}

/// An in-flight transaction.
#[derive(Debug)]
struct Txn {
    mops: Vec<Mop>,
    plan: Plan,
    /// Commit sequence number of the snapshot at invocation.
    snapshot: u64,
    /// Micro-ops executed so far.
    pc: usize,
    locals: Vec<Local>,
    /// One entry per executed read, in order.
    reads: Vec<Observed>,
    /// Whether its effect point (commit or abort) has passed.
    applied: bool,
    /// The database aborted it.
    aborted: bool,
    /// Its place in the effect order, if it took effect.
    order: Option<(u64, u64)>,
}

/// A client process slot.
#[derive(Debug)]
pub(super) struct Slot {
    /// The current process id (replaced after a crash).
    pub pid: u64,
    txn: Option<Txn>,
}

/// The committed history of one key: `(value, commit seq)` in commit order.
/// For list-append every append; for registers every installed write.
#[derive(Debug, Default)]
struct KeyLog {
    entries: Vec<(u64, u64)>,
    next_value: u64,
}

/// The simulation state.
pub(super) struct Sim<'a, W: Write> {
    pub opts: &'a GenOptions,
    out: &'a mut W,
    buf: Vec<u8>,
    rng: Rng,
    now: u64,
    index: u64,
    keys: Vec<KeyLog>,
    pool: Vec<u64>,
    /// Number of committed writing transactions.
    seq: u64,
    ro_counter: u64,
    pub slots: Vec<Slot>,
    in_flight: usize,
    pub summary: GenSummary,
    effects: Vec<((u64, u64), u64)>,
    /// Fence transactions: the options, the fence key's internal index and
    /// each slot's transactions since its last fence.
    fence: Option<(super::FenceOptions, u64, Vec<usize>)>,
}

impl<'a, W: Write> Sim<'a, W> {
    /// A fresh simulation: empty database, `keys` keys, idle processes
    /// `0..processes`.
    pub fn new(opts: &'a GenOptions, out: &'a mut W) -> Self {
        let mut sim = Sim {
            opts,
            out,
            buf: Vec::with_capacity(FLUSH_AT + 4096),
            rng: Rng::new(opts.seed),
            now: 0,
            index: 0,
            keys: Vec::new(),
            pool: Vec::with_capacity(opts.keys),
            seq: 0,
            ro_counter: 0,
            slots: (0..opts.processes as u64)
                .map(|pid| Slot { pid, txn: None })
                .collect(),
            in_flight: 0,
            summary: GenSummary::default(),
            effects: Vec::new(),
            fence: None,
        };
        for _ in 0..opts.keys {
            let k = sim.fresh_key();
            sim.pool.push(k);
        }
        sim
    }

    /// Interleaves fence transactions (see [`super::FenceOptions`]).
    pub fn with_fences(mut self, f: super::FenceOptions) -> Self {
        let key = self.fresh_key();
        let n = self.slots.len();
        self.fence = Some((f, key, vec![0; n]));
        self
    }

    /// This slot's next transaction: a fence when it is due.
    fn fence_due(&mut self, i: usize) -> Option<Vec<Mop>> {
        let (f, key, since) = self.fence.as_mut()?;
        let key = *key;
        if since[i] < f.every {
            since[i] += 1;
            return None;
        }
        since[i] = 0;
        let v = self.next_value(key);
        Some(vec![Mop::read(key), Mop::write(key, v)])
    }

    /// Runs the whole simulation and returns its summary.
    pub fn run(mut self) -> io::Result<GenSummary> {
        let injected: usize = self.opts.faults.iter().map(|f| f.txn_count()).sum();
        let budget = self.opts.txns - injected;
        let nf = self.opts.faults.len();
        let triggers: Vec<usize> = (0..nf).map(|f| (f + 1) * budget / (nf + 1)).collect();
        let (mut fi, mut invoked) = (0, 0);
        let p = self.slots.len() as u64;
        loop {
            let waiting = fi < nf && invoked >= triggers[fi];
            if waiting && self.in_flight == 0 {
                let fault = self.opts.faults[fi];
                faults::inject(&mut self, fault)?;
                fi += 1;
                continue;
            }
            let can_invoke = !waiting && invoked < budget;
            if !can_invoke && self.in_flight == 0 {
                break;
            }
            let i = self.rng.below(p) as usize;
            if self.slots[i].txn.is_none() {
                if can_invoke {
                    self.invoke(i)?;
                    invoked += 1;
                }
            } else {
                self.step(i)?;
            }
        }
        self.out.write_all(&self.buf)?;
        self.out.flush()?;
        self.effects.sort_unstable();
        let mut summary = self.summary;
        summary.effect_order = self.effects.into_iter().map(|(_, i)| i).collect();
        summary.keys = self.keys.len() as u64;
        Ok(summary)
    }

    /// Adds a key nobody has used and returns it.
    pub fn fresh_key(&mut self) -> u64 {
        self.keys.push(KeyLog {
            entries: Vec::new(),
            next_value: 1,
        });
        self.keys.len() as u64 - 1
    }

    /// The next value written to `key`: unused, or with
    /// [`GenOptions::values`] a random one of that many.
    ///
    /// [`GenOptions::values`]: super::GenOptions::values
    pub fn next_value(&mut self, key: u64) -> u64 {
        let log = &mut self.keys[key as usize];
        let v = log.next_value;
        log.next_value += 1;
        if self.opts.values > 0 {
            self.rng.range(1, self.opts.values)
        } else {
            v
        }
    }

    /// How many values were written to `key` (or planned) so far.
    fn writes_to(&self, key: u64) -> u64 {
        self.keys[key as usize].next_value - 1
    }

    /// Invokes a new random transaction on idle slot `i`.
    fn invoke(&mut self, i: usize) -> io::Result<()> {
        let opts = self.opts;
        let n = if opts.mini {
            0
        } else {
            self.rng.range(1, opts.max_mops as u64) as usize
        };
        let mut mops = Vec::with_capacity(n.max(4));
        let fence = self.fence_due(i);
        let n = if fence.is_some() { 0 } else { n };
        if opts.mini && fence.is_none() {
            self.mini_mops(&mut mops);
        }
        if let Some(f) = fence {
            mops = f;
        }
        for _ in 0..n {
            let read = self.rng.chance(opts.read_fraction);
            let slot = self.rng.below(self.pool.len() as u64) as usize;
            let key = self.pool[slot];
            if read {
                mops.push(Mop::read(key));
            } else {
                let v = self.next_value(key);
                if opts.max_writes_per_key > 0
                    && self.writes_to(key) >= opts.max_writes_per_key as u64
                {
                    self.pool[slot] = self.fresh_key();
                }
                mops.push(Mop::write(key, v));
            }
        }
        let r = self.rng.unit();
        let plan = if self.is_fence(&mops) {
            Plan::Ok
        } else if r < opts.fail_fraction {
            Plan::Fail
        } else if r < opts.fail_fraction + opts.info_fraction {
            Plan::Info {
                applies: self.rng.coin(),
            }
        } else {
            Plan::Ok
        };
        let pid = self.slots[i].pid;
        self.emit(pid, OpType::Invoke, &mops, None)?;
        self.slots[i].txn = Some(Txn {
            mops,
            plan,
            snapshot: self.seq,
            pc: 0,
            locals: Vec::new(),
            reads: Vec::new(),
            applied: false,
            aborted: false,
            order: None,
        });
        self.in_flight += 1;
        Ok(())
    }

    fn is_fence(&self, mops: &[Mop]) -> bool {
        matches!(&self.fence, Some((_, k, _)) if mops.first().is_some_and(|m| m.key == *k))
    }

    /// A random mini-transaction over two distinct keys of the pool (one
    /// key if the pool has only one).
    fn mini_mops(&mut self, mops: &mut Vec<Mop>) {
        let shape = super::mini::SHAPES[self.rng.below(super::mini::SHAPES.len() as u64) as usize];
        let len = self.pool.len() as u64;
        let s1 = self.rng.below(len) as usize;
        let s2 = if len > 1 {
            (s1 + 1 + self.rng.below(len - 1) as usize) % len as usize
        } else {
            s1
        };
        let slots = [s1, s2];
        let keys = [self.pool[s1], self.pool[s2]];
        for &(write, which) in shape {
            let key = keys[which as usize - 1];
            if write {
                let v = self.next_value(key);
                let slot = slots[which as usize - 1];
                let max = self.opts.max_writes_per_key as u64;
                if max > 0 && v >= max && self.pool[slot] == key {
                    self.pool[slot] = self.fresh_key();
                }
                mops.push(Mop::write(key, v));
            } else {
                mops.push(Mop::read(key));
            }
        }
    }

    /// Advances slot `i`'s transaction by one step: execute a micro-op
    /// (read committed), take effect (possibly completing at once), or
    /// complete.
    fn step(&mut self, i: usize) -> io::Result<()> {
        let mut t = self.slots[i].txn.take().expect("in-flight txn");
        if t.applied {
            return self.complete(i, t);
        }
        let effective = matches!(t.plan, Plan::Ok | Plan::Info { applies: true });
        if effective && self.opts.mode == Mode::ReadCommitted && t.pc < t.mops.len() {
            self.exec_mop(&mut t, None);
            self.slots[i].txn = Some(t);
            return Ok(());
        }
        if effective {
            self.commit(&mut t);
        }
        t.applied = true;
        if self.rng.coin() {
            self.complete(i, t)
        } else {
            self.slots[i].txn = Some(t);
            Ok(())
        }
    }

    /// Number of entries of `key`'s log committed at or before `at` (all of
    /// them for `None`).
    fn prefix_len(&self, key: u64, at: Option<u64>) -> usize {
        let entries = &self.keys[key as usize].entries;
        match at {
            None => entries.len(),
            Some(s) => {
                if entries.last().is_none_or(|e| e.1 <= s) {
                    entries.len()
                } else {
                    entries.partition_point(|e| e.1 <= s)
                }
            }
        }
    }

    /// Executes `t`'s next micro-op against the state committed at `at`
    /// (latest for `None`), overlaid with `t`'s own view.
    fn exec_mop(&mut self, t: &mut Txn, at: Option<u64>) {
        let m = t.mops[t.pc];
        t.pc += 1;
        let li = match t.locals.iter().position(|l| l.key == m.key) {
            Some(li) => li,
            None => {
                t.locals.push(Local {
                    key: m.key,
                    base: None,
                    own: Vec::new(),
                    read_own: false,
                    reg: None,
                    written: false,
                });
                t.locals.len() - 1
            }
        };
        let list = self.opts.workload == Workload::ListAppend;
        match (list, m.kind) {
            (true, Kind::Read) => {
                if t.locals[li].base.is_none() {
                    t.locals[li].base = Some(self.prefix_len(m.key, at));
                }
                let l = &mut t.locals[li];
                let base = l.base.expect("base");
                if !l.own.is_empty() {
                    l.read_own = true;
                }
                let entries = &self.keys[m.key as usize].entries;
                let mut v = Vec::with_capacity(base + l.own.len());
                v.extend(entries[..base].iter().map(|e| e.0));
                v.extend_from_slice(&l.own);
                t.reads.push(Observed::List(v));
            }
            (true, Kind::Write) => {
                let l = &mut t.locals[li];
                l.own.push(m.value);
                l.written = true;
            }
            (false, Kind::Read) => {
                if t.locals[li].reg.is_none() {
                    let n = self.prefix_len(m.key, at);
                    let entries = &self.keys[m.key as usize].entries;
                    t.locals[li].reg = Some(n.checked_sub(1).map(|j| entries[j].0));
                }
                t.reads
                    .push(Observed::Reg(t.locals[li].reg.expect("known")));
            }
            (false, Kind::Write) => {
                let l = &mut t.locals[li];
                l.reg = Some(Some(m.value));
                l.written = true;
            }
        }
    }

    /// `t`'s effect point: executes its remaining micro-ops (all of them,
    /// except under read committed), then aborts it or installs its writes.
    fn commit(&mut self, t: &mut Txn) {
        let at = match self.opts.mode {
            Mode::StrictSerializable | Mode::ReadCommitted => None,
            Mode::Serializable => {
                if t.mops.iter().all(|m| m.kind == Kind::Read) {
                    let s = self.seq - self.rng.below(self.seq.min(MAX_STALENESS) + 1);
                    if s < self.seq {
                        self.summary.stale_reads += 1;
                    }
                    Some(s)
                } else {
                    None
                }
            }
            Mode::SnapshotIsolation => Some(t.snapshot),
        };
        while t.pc < t.mops.len() {
            self.exec_mop(t, at);
        }
        let conflict = t.locals.iter().any(|l| {
            let entries = &self.keys[l.key as usize].entries;
            match self.opts.mode {
                Mode::SnapshotIsolation => {
                    l.written && entries.last().is_some_and(|e| e.1 > t.snapshot)
                }
                Mode::ReadCommitted => l.read_own && entries.len() > l.base.unwrap_or(0),
                _ => false,
            }
        });
        if conflict {
            t.aborted = true;
            return;
        }
        if t.locals.iter().any(|l| l.written) {
            self.seq += 1;
            let seq = self.seq;
            let list = self.opts.workload == Workload::ListAppend;
            for l in &t.locals {
                let entries = &mut self.keys[l.key as usize].entries;
                if list {
                    entries.extend(l.own.iter().map(|&v| (v, seq)));
                } else if let (true, Some(Some(v))) = (l.written, l.reg) {
                    entries.push((v, seq));
                }
            }
            t.order = Some((seq, 0));
        } else {
            self.ro_counter += 1;
            t.order = Some((at.unwrap_or(self.seq), self.ro_counter));
        }
    }

    /// Completes slot `i`'s transaction `t`.
    fn complete(&mut self, i: usize, t: Txn) -> io::Result<()> {
        let ty = match t.plan {
            Plan::Ok if t.aborted => {
                self.summary.aborts += 1;
                OpType::Fail
            }
            Plan::Ok => OpType::Ok,
            Plan::Fail => OpType::Fail,
            Plan::Info { .. } => OpType::Info,
        };
        let pid = self.slots[i].pid;
        let reads = (ty == OpType::Ok).then_some(&t.reads[..]);
        let idx = self.emit(pid, ty, &t.mops, reads)?;
        if let Some(order) = t.order {
            self.effects.push((order, idx));
        }
        if ty == OpType::Info {
            self.slots[i].pid += self.slots.len() as u64;
        }
        self.in_flight -= 1;
        Ok(())
    }

    /// Writes one op line and returns its `:index`. `reads` (one per read
    /// micro-op) fills in the reads of an `:ok` completion; without it reads
    /// print `nil`.
    pub fn emit(
        &mut self,
        pid: u64,
        ty: OpType,
        mops: &[Mop],
        reads: Option<&[Observed]>,
    ) -> io::Result<u64> {
        let blind = |mops: &[Mop]| {
            mops.iter().enumerate().any(|(j, m)| {
                m.kind == Kind::Write
                    && !mops[..j]
                        .iter()
                        .any(|r| r.kind == Kind::Read && r.key == m.key)
            })
        };
        if self.opts.mini && blind(mops) {
            // A fault script's write without a read of its (fresh) key.
            let init = if self.opts.workload == Workload::ListAppend {
                Observed::List(Vec::new())
            } else {
                Observed::Reg(None)
            };
            let (m, r) = super::mini::rmw(mops, reads, &init);
            return self.emit(pid, ty, &m, r.as_deref());
        }
        self.now += self.rng.range(1, MAX_GAP_NS);
        let idx = self.index;
        self.index += 1;
        let s = &mut self.summary;
        s.ops += 1;
        match ty {
            OpType::Invoke => s.txns += 1,
            OpType::Ok => s.ok += 1,
            OpType::Fail => s.fail += 1,
            OpType::Info => s.info += 1,
        }
        let fence_key = self.fence.as_ref().map(|(f, k, _)| (*k, f.key));
        let b = &mut self.buf;
        b.extend_from_slice(b"{:index ");
        push_u64(b, idx);
        b.extend_from_slice(b", :time ");
        push_u64(b, self.now);
        b.extend_from_slice(b", :type ");
        b.extend_from_slice(ty.keyword());
        b.extend_from_slice(b", :process ");
        push_u64(b, pid);
        b.extend_from_slice(b", :f :txn, :value [");
        let list = self.opts.workload == Workload::ListAppend;
        let mut reads = reads.map(|r| r.iter());
        for (j, m) in mops.iter().enumerate() {
            if j > 0 {
                b.push(b' ');
            }
            match m.kind {
                Kind::Read => {
                    b.extend_from_slice(b"[:r ");
                    push_key(b, m.key, fence_key);
                    b.push(b' ');
                    match reads
                        .as_mut()
                        .map(|r| r.next().expect("one result per read"))
                    {
                        None | Some(Observed::Reg(None)) => b.extend_from_slice(b"nil"),
                        Some(Observed::Reg(Some(v))) => push_u64(b, *v),
                        Some(Observed::List(vs)) => {
                            b.push(b'[');
                            for (e, v) in vs.iter().enumerate() {
                                if e > 0 {
                                    b.push(b' ');
                                }
                                push_u64(b, *v);
                            }
                            b.push(b']');
                        }
                    }
                }
                Kind::Write => {
                    b.extend_from_slice(if list { b"[:append " } else { b"[:w " });
                    push_key(b, m.key, fence_key);
                    b.push(b' ');
                    push_u64(b, m.value);
                }
            }
            b.push(b']');
        }
        b.extend_from_slice(b"]}\n");
        if self.buf.len() >= FLUSH_AT {
            self.out.write_all(&self.buf)?;
            self.buf.clear();
        }
        Ok(idx)
    }
}

/// Writes a key: its number, or the fence key's text for the fence's
/// internal key.
fn push_key(b: &mut Vec<u8>, key: u64, fence: Option<(u64, i64)>) {
    match fence {
        Some((k, text)) if k == key => b.extend_from_slice(text.to_string().as_bytes()),
        _ => push_u64(b, key),
    }
}

/// "00" to "99", for writing two decimal digits at a time.
const DIGIT_PAIRS: &[u8; 200] = b"\
0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

/// Appends the decimal digits of `n`.
fn push_u64(buf: &mut Vec<u8>, mut n: u64) {
    if n < 10 {
        buf.push(b'0' + n as u8);
        return;
    }
    let mut tmp = [0u8; 20];
    let mut i = tmp.len();
    while n >= 100 {
        let d = (n % 100) as usize * 2;
        n /= 100;
        i -= 2;
        tmp[i..i + 2].copy_from_slice(&DIGIT_PAIRS[d..d + 2]);
    }
    if n >= 10 {
        let d = n as usize * 2;
        i -= 2;
        tmp[i..i + 2].copy_from_slice(&DIGIT_PAIRS[d..d + 2]);
    } else {
        i -= 1;
        tmp[i] = b'0' + n as u8;
    }
    buf.extend_from_slice(&tmp[i..]);
}

#[cfg(test)]
mod tests {
    #[test]
    fn push_u64_matches_display() {
        for n in [0, 7, 9, 10, 99, 100, 999, 1000, 123_456_789, u64::MAX] {
            let mut b = Vec::new();
            super::push_u64(&mut b, n);
            assert_eq!(String::from_utf8(b).unwrap(), n.to_string());
        }
    }
}
