//! Garbage collection with fence transactions (Cobra §4, appendix B): an
//! rw-register history, whose version order nothing gives, checked under a
//! model that forbids G-single with session order (`strong-session-
//! serializable`, `strong-session-snapshot-isolation`, their `strict-`/
//! `strong-` variants, …), with a Wfence (`[[:r FK v] [:w FK v']]`, the
//! shared fence convention) every few transactions of every process.
//!
//! # Epochs
//!
//! Wfences chain through the fence key: each reads the value the previous
//! one wrote (the first reads `nil`). A fence's epoch is its place in that
//! chain (0, 1, 2, …), assigned by following the chain from the last fence
//! numbered (`FenceGc::tail`), by the values a fence read and wrote when
//! it arrived (reads are rewritten later, see below). A fence that does not
//! extend the chain (a fork: two fences read the same value, a lost update
//! the round reports) gets no epoch and counts as an ordinary transaction.
//! Read-only fences (Rfences) are ordinary transactions here: Wfences alone
//! carry the argument, which spares Cobra's "−2" (fences sharing an epoch).
//!
//! For a transaction `t` of process `p`: `nf(t)` is the epoch of `p`'s next
//! numbered fence (`t` itself if it is one; ∞ if none yet) and `pf(t)` that
//! of `p`'s previous one (−∞ if none). Cobra's `epoch(t)` is `nf(t) − 1`.
//! `agree` is the smallest last-fence epoch over the live processes (those
//! whose last completion is not `:info`: a crashed Jepsen process never
//! issues another op); a live process that has issued no fence makes it −∞
//! and nothing is forgotten (the digest's point, which Fig. 12 misses).
//!
//! **Reach.** `a ~> b` (a path in the graph of every serialization) when
//! `a` precedes `b` in its process, or `nf(a) ≤ pf(b)` (`a` → its next fence
//! by session order → later fences by wr on the fence key → `b`'s previous
//! fence → `b` by session order), or `b` read a value `a` wrote. A future
//! transaction `T` of a live process comes after that process's last fence,
//! whose epoch is ≥ `agree`, so **every `a` with `nf(a) ≤ agree` reaches
//! every future `T`** (Cobra's Lemma 36 / Claim 37: "frozen").
//!
//! # What is forgotten
//!
//! The largest set `F` of retained `:ok` transactions (fixpoint,
//! [`FenceGc::collect`]) such that:
//! * (a) `nf(t) ≤ agree` for each `t` in `F`, and `t` writes no `nil`;
//! * (b) `F` is a prefix of each process (no session edge enters `F`); under
//!   real-time models, nothing outside `F` completed before a member of `F`
//!   was invoked (no real-time edge enters `F`);
//! * (c) every value a member of `F` read was written by `F`, or is the
//!   key's initial (or forgotten, below) state (no wr edge enters `F`);
//! * (d) for each key `x` that `F` writes there is a *base* writer `B_x` in
//!   `F` that every other writer of `x` in `F` reaches, and that reaches
//!   every retained writer of `x` outside `F` (Cobra's "obsolete": the
//!   others' versions are overwritten by `B_x`'s, and when the verifier
//!   cannot tell which write is last it keeps them all);
//! * (e) nothing outside `F` reads a value of `x` that `F` wrote, except
//!   `B_x`'s, nor reads `x`'s current initial state (no rw edge enters `F`).
//!
//! Under session-only models a key may be *covered* instead of having a
//! base (d): each writer of `x` in `F` reaches some frozen `:ok` writer of
//! `x` that stays, and nothing outside `F` reads any value of `x` that `F`
//! wrote (nor, as in (e), its initial state). The key then keeps no value
//! ([`Base::values`] is empty). This is Cobra's "obsolete" (Definition 39:
//! a later frozen write is known to overwrite it) without its "the writer
//! that stays is the last": the order between `F`'s writers and those that
//! stay does not matter, because nothing that stays reads what `F` wrote.
//!
//! "Reaches" in (d) is about versions: `a`'s write precedes `b`'s when
//! `a ~> b`, or `a ~> R` for a reader `R` of `b`'s value, or `R ~> b` for a
//! reader `R` of `a`'s (Cobra's pruning settles the same constraints);
//! under real-time models, also when `a` completed before `b` was invoked.
//! Under session-only models `a ~> b` also follows paths of session order
//! and reads through the retained transactions, transitively (`plan`'s
//! `Closure`: one vector of first reachable positions per process, since a
//! process is a chain). Each step is an order of every serialization (a
//! reader follows the writer whose unique value it read), so every path is;
//! the one-step rules alone leave writers concurrent that a read two steps
//! away orders, and each such writer leaves `F` with its process's suffix.
//! When no single base exists because the last writers of `x` in `F` are
//! concurrent, they form a *loose* base: every other writer in `F` precedes
//! each of them, each precedes every writer outside, and nobody outside
//! read them; a later read of one of their values shows which was last,
//! which the collector cannot check against what it forgot, so the verdict
//! is then the whole-history check's (as the list-append collector's loose
//! blocks).
//!
//! Compared with the digest (`seed-003-cobra.md` §3.3–3.4): with Wfences
//! only, `nf(t) ≤ agree` suffices for `t ~> T` (the digest's
//! `epoch ≤ agree − 2` allows for Rfences sharing an epoch); and Cobra's
//! removable set keeps each key's latest old writer, where this keeps only
//! its value (the base), since the retained history is re-checked from
//! scratch each round rather than carried as a graph.
//!
//! After forgetting `F`, retained reads of `B_x`'s value become `nil`: the
//! retained history starts from the state `F` left (as the list-append
//! collector's prefixes do), and [`FenceGc::bases`] keeps `B_x`'s value.
//!
//! # Why it is safe
//!
//! Let `R` be the rest of the history, retained and future, with reads of
//! `B_x` as `nil`. (⇐) If `R` is valid, so is `F ∪ R`: run `F` first, in the
//! order (or snapshot schedule) of the round that found the retained
//! history valid before `F` was forgotten (restricted to `F`, so `B_x` is
//! last among `F`'s writers of `x`, by (d)), then `R`: by (b) no session or
//! real-time order is broken, by (c) `F` reads the same values, and `R`'s
//! reads of `nil` now see `B_x`'s value, its other reads `R`'s writes, which
//! follow `F`'s. (⇒) If the whole history is valid, restricting its order
//! to `R` is an order for `R`: every writer of `x` in `R` comes after `B_x`
//! (by (d) for retained ones, by (a) and reach for future ones), so a read
//! of `B_x`'s value in `R` has no `R` writer before it, as `nil` says. So
//! the rounds, which check `R`, find an anomaly iff the history has one,
//! **as long as (e) also holds for future transactions**. Each new `:ok`
//! read of a key with a base is compared at once ([`FenceGc::admit`]):
//! `B_x`'s value becomes `nil`; a read of `nil`, or of a value whose writer
//! is not retained (a forgotten one), is rejected at once (Cobra's
//! tombstones; Claim 41). That rejection is right: `B_x ~> T` by (a), a
//! forgotten writer `w ~> B_x` by (d), and `T`, reading `w`'s value or the
//! initial state, is anti-dependent on the next version, which precedes or
//! is `B_x`'s: a cycle with one anti-dependency (G-single with session
//! order), forbidden by the models this applies to.
//!
//! A covered key `x` is the same argument without a base: nothing in `R`
//! reads what `F` wrote to `x` (nor `x`'s initial state), so (⇐) running
//! `F` first changes no read of `R` (each reads a writer of `R`, which
//! follows `F`'s writes), and (⇒) the restriction of a valid order to `R`
//! keeps every read of `x` with its writer and no writer of `R` between.
//! Neither direction orders `F`'s writers of `x` with `R`'s. A new read of
//! a value `F` wrote to `x`, or of `nil`, is rejected at once: its writer
//! `w` reaches a frozen writer `s` of `x` that stayed (`w ~> s`, a version
//! order as for bases), and `s ~> T` as `s` is frozen, so `T` missed
//! `s`'s write: G-single with session order. The rejected read is removed
//! from what the rounds check (as `nil` it would read the state before the
//! writers that stay, a second anomaly that did not happen).
//!
//! Limits, said in a note when met: Cobra's clients are known in advance;
//! a Jepsen process that first appears after something was forgotten (or,
//! in an input that reuses it, a crashed process that issues another op)
//! may legitimately read state older than its fences show, so collection stops
//! and the verdict is left to the whole-history check at the end (its reads
//! of forgotten versions are not rejected). Values are assumed unique per
//! key, as Elle assumes: a value written twice is told apart by nothing.
//!
//! # Session-only models: what still stays
//!
//! A retained transaction keeps its process's later transactions (b), and
//! a retained reader of a value that is not `x`'s last in `F` keeps that
//! writer (e). With a base per key only, on streams that write a few hot
//! keys from many processes this unravelled back to the start of the
//! history: a writer concurrent (by fences) with one that stays cannot
//! precede a base that precedes it, so it left `F` with its suffix, whose
//! writes were concurrent with older writers, and so on. The fence ladder
//! (`fence_tests::covered_keys_collect_the_fence_ladder`: two processes
//! with alternating fences, each writer concurrent with the other
//! process's next one, blind writes) forgets nothing but its first fences
//! with bases alone; covered keys forget all but the last rounds. (Cobra's
//! paper rule would keep it whole, as we read Definitions 32 and 45: each
//! concurrent pair's order is a constraint pruning cannot settle, and the
//! pairs chain every writer into one P-SCC with the unfrozen ones, as on
//! its BlindW-RW benchmark.) On `ellery gen -w rw-register … --fences 20` streams the
//! transitive reach and covered keys keep the retained transactions
//! bounded (README, watch section); what is still retained is what (b)
//! and (e) keep. Cobra keeps less because it carries its known graph
//! between rounds and deletes a transaction from the middle of a session,
//! keeping the edges derived through it; here each round checks the
//! retained transactions as a plain history, which can carry no edge that
//! is not an op's, so `F` must be something that can run first.
//!
//! That is also why some rounds forget nearly nothing on such streams
//! although almost everything retained is frozen: fence windows overlap,
//! so an eviction's process suffix (b) holds other keys' writers and
//! readers of a key's forgotten state, whose eviction (e) sends that key's
//! writers out, and so on through the retained history. Which writer the
//! base rule (d) evicts decides, chaotically, where the chain stops (a
//! cost-based choice helped one generated stream tenfold and ruined
//! another), so no local choice fixes it; deleting from the middle of a
//! session, as Cobra does, would.
//!
//! # Crashed transactions, and real time
//!
//! An `:info` transaction's reads are not observed and it precedes nothing
//! in real time (Elle's real-time graph and the SAT checker start real-time
//! edges at `:ok` completions only), and it is its process's last. So one
//! none of whose writes another `:ok` transaction read can always be
//! serialized last, or not at all: no base is ordered with it (it is *set
//! aside*, and stays retained); a later read of one of its writes on a key
//! with a base leaves the verdict to the whole-history check. One whose
//! write was read took effect before that reader completed, so under
//! real-time models it reaches, through that reader, what was invoked
//! after (`w →wr r →rt b`), and may join `F` (never as a base). Under
//! real-time models (a) also holds for any `:ok` transaction that completed
//! before every pending invocation, fences or not: real time orders it
//! before everything not completed yet. A process that first appears after
//! something was forgotten (Jepsen starts one after each crash) is ordered
//! after everything forgotten by real time, so it is not late there.
//!
//! # Why plain `serializable` is not collected
//!
//! Cobra's collection (its Theorem 54) is proved for *strong session*
//! serializability: its Assumption 6 (the database respects each client's
//! issue order) is what orders a client's later transactions after its last
//! fence (Lemma 36's client-order edge), i.e. what makes `nf(t) ≤ agree`
//! mean "`t` reaches every future transaction". Under plain
//! serializability a future transaction may be serialized anywhere, fences
//! or not (Cobra §4.1). Then a tombstone is unsound: `T1: x := 1`,
//! `T2: x := 2`, both fenced past and forgotten, then a future `T: r(x) = 1`
//! alone is serializable (between `T1` and `T2`) and would be rejected. Nor
//! does deferring such reads to the final check keep the rounds exact: a
//! future `W: x := 3, y := 3` may be serialized before `T2` and a future
//! `R: r(x) = 2, r(y) = 3` after it (the whole history is serializable), but
//! the retained history, where `R` reads `x` as the forgotten base state,
//! has `R` read `W`'s `y` yet not its `x`: a round would report an anomaly
//! that is not one. So under `serializable` nothing is collected (a note
//! says so, and names Cobra's model, `strong-session-serializable`, whose
//! rounds are collected).

// Long (about 790 lines): the safety argument above and the fixpoint
// conditions below that implement it are kept together on purpose.

mod plan;

use super::store::{Arg, Store, Txn, WMop};
use crate::model::{Atom, MopFn, OpType};
use hashbrown::HashMap;
use plan::Plan;

/// A Wfence's values, kept from when it arrived (reads are rewritten later).
#[derive(Clone, Copy, Debug)]
struct FenceInfo {
    /// The value read (`None`: `nil`).
    read: Option<Atom>,
    /// The value written.
    wrote: Atom,
    /// Its place in the chain, once known.
    epoch: Option<u64>,
}

/// What the collector knows of a process.
#[derive(Clone, Copy, Debug, Default)]
struct Proc {
    /// Epoch of its last forgotten numbered fence (the `pf` of its first
    /// retained transaction).
    forgotten_pf: Option<u64>,
    /// Its last completion was `:info` (it issues nothing more).
    crashed: bool,
    /// It first appeared after something was forgotten (see module docs).
    late: bool,
}

/// Why a process may read older state than its fences show.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Late {
    /// It first appears after something was forgotten.
    New,
    /// It issues an op after crashing (`:info`), and something was
    /// forgotten before.
    Returned,
}

/// The state forgotten transactions left in a key. One is kept for every
/// key ever collected, and Jepsen retires keys, so their number grows with
/// the stream (about 37,000 per million transactions on `ellery gen -w
/// rw-register … --fences 20`): only a loose base has a heap block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Base {
    /// A covered key (module docs): no value kept.
    Covered,
    /// The base writer's value.
    One(Atom),
    /// The last forgotten writers were concurrent: their values, two or
    /// more (which one is last is unknown; a read of one leaves the verdict
    /// to the whole-history check).
    Loose(Box<[Atom]>),
}

impl Base {
    /// The base of forgotten values `values` (none: covered).
    pub fn of(values: Vec<Atom>) -> Base {
        match (values.len(), values.first()) {
            (0, _) => Base::Covered,
            (1, Some(&v)) => Base::One(v),
            _ => Base::Loose(values.into_boxed_slice()),
        }
    }

    /// The values kept: none for a covered key, one for a base writer,
    /// several for a loose base.
    pub fn values(&self) -> &[Atom] {
        match self {
            Base::Covered => &[],
            Base::One(v) => std::slice::from_ref(v),
            Base::Loose(values) => values,
        }
    }
}

/// A new read that contradicts what was forgotten.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rejected {
    /// The key.
    pub key: Atom,
    /// The value read (`None`: `nil`).
    pub value: Option<Atom>,
}

/// What [`FenceGc::admit`] did to a completion's reads.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Admitted {
    /// Some micro-op changed (the op must be re-rendered).
    pub changed: bool,
    /// `:ok` reads of forgotten versions (immediate rejections).
    pub rejected: Vec<Rejected>,
    /// A process that appeared after something was forgotten read a
    /// forgotten version: the verdict is left to the whole history.
    pub deferred: bool,
    /// A read of an `:info` write that no base was required to precede
    /// (module docs): the verdict is left to the whole history.
    pub info_read: bool,
    /// Positions of rejected reads on covered keys, ascending: the caller
    /// removes them (as `nil` they would read the state before the writers
    /// that stay, a second, made-up anomaly in the rounds).
    pub dropped: Vec<usize>,
}

/// Epochs of one collection (exposed for tests).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Epochs {
    /// Per retained transaction that did not fail, in start order (the
    /// plan's indices): (`pf`, `nf`). A vector, not a map by start: the
    /// plan reads it for every transaction of every collection.
    pub bounds: Vec<(Option<u64>, Option<u64>)>,
    /// Those transactions' starts.
    pub starts: Vec<u64>,
    /// The smallest last-fence epoch of the live processes (`None`: −∞).
    pub agree: Option<u64>,
}

/// A collection worked out beside a round's check ([`FenceGc::prepare`]),
/// to be applied ([`FenceGc::apply`]) or dropped.
#[derive(Default)]
pub struct Prepared {
    /// Failed transactions (starts): they leave whatever the plan says.
    failed: Vec<u64>,
    /// The plan, membership in `F`, each key's base writers, and the
    /// epochs; `None` when nothing but the failed can leave.
    forget: Option<Box<PlannedForget>>,
}

/// [`Prepared::forget`]'s parts.
type PlannedForget = (Plan, Vec<bool>, HashMap<Atom, Vec<usize>>, Epochs);

/// The fence collector's state.
#[derive(Debug)]
pub struct FenceGc {
    /// The fence key, in the store's interner.
    pub fence_key: Atom,
    /// Whether the models include real-time order.
    pub realtime: bool,
    /// Wfences retained, by start.
    fences: HashMap<u64, FenceInfo>,
    /// The value the last numbered fence wrote and its epoch.
    tail: Option<(Atom, u64)>,
    procs: HashMap<i64, Proc>,
    /// Each collected key's base (module docs).
    pub bases: HashMap<Atom, Base>,
    /// Retained writer (start) of each (key, value), pending ones included.
    writers: HashMap<(Atom, Atom), u64>,
    /// Writes `(key, value)` of unread `:info` transactions that a key's
    /// base was not required to precede (module docs).
    info_skipped: hashbrown::HashSet<(Atom, Atom)>,
    /// Something was forgotten.
    pub forgot: bool,
    /// A late process appeared: nothing more is forgotten.
    pub stopped: bool,
    /// The last op (position) that mentioned each key, within the idle
    /// window.
    pub touched: HashMap<Atom, u64>,
    /// A loose base is only formed on a key no op mentioned for this many
    /// ops (a retired key): on an active key a later read would soon show
    /// which concurrent write is last and leave the verdict to the
    /// whole-history check, whereas keeping the writers a little longer
    /// lets that read order them (as [`super::gc::ListGc::loose_idle_ops`]).
    pub loose_idle_ops: u64,
    /// The position of the next op (set by the caller before collecting).
    pub now: u64,
    /// Reach through session order and reads transitively (module docs,
    /// "Session-only models"); on unless the models include real time
    /// (tests turn it off to show what it adds).
    pub closure: bool,
    /// Covered keys (module docs, "Session-only models"); as `closure`.
    pub cover: bool,
}

impl FenceGc {
    /// A collector for fence key `fence_key`.
    pub fn new(fence_key: Atom, realtime: bool) -> FenceGc {
        FenceGc {
            fence_key,
            realtime,
            fences: HashMap::new(),
            tail: None,
            procs: HashMap::new(),
            bases: HashMap::new(),
            writers: HashMap::new(),
            info_skipped: hashbrown::HashSet::new(),
            forgot: false,
            stopped: false,
            touched: HashMap::new(),
            loose_idle_ops: 0,
            now: 0,
            closure: !realtime,
            cover: !realtime,
        }
    }

    /// Notes an op of `process`; `Some` when the process is new, or issues
    /// an op after crashing, and something was forgotten before (collection
    /// stops: module docs).
    pub fn saw_process(&mut self, process: i64) -> Option<Late> {
        let forgot = self.forgot;
        let late = match self.procs.get_mut(&process) {
            // Jepsen never reuses a crashed process; an input may. It is
            // live again (`agree` counts it from now on), and while it was
            // crashed `agree` left it out: as late as a new process.
            Some(p) if p.crashed => {
                p.crashed = false;
                let returned = forgot && !p.late;
                p.late |= forgot;
                returned.then_some(Late::Returned)
            }
            Some(_) => None,
            None => {
                self.procs.insert(
                    process,
                    Proc {
                        late: forgot,
                        ..Proc::default()
                    },
                );
                forgot.then_some(Late::New)
            }
        };
        // Under real-time models a process's ops are invoked after every
        // forgotten transaction completed, so real time orders them after
        // the bases: nothing is late (module docs).
        if self.realtime {
            if let Some(p) = self.procs.get_mut(&process) {
                p.late = false;
            }
            return None;
        }
        if late.is_some() {
            self.stopped = true;
        }
        late
    }

    /// Notes the writes of an op (invocation or completion) starting at
    /// `start`.
    pub fn saw_writes(&mut self, start: u64, mops: &[WMop]) {
        for m in mops {
            if let (MopFn::Write, Arg::Atom(v)) = (m.f, &m.arg) {
                self.writers.insert((m.key, *v), start);
            }
        }
    }

    /// Notes a completion: a crash, or a Wfence.
    pub fn saw_completion(&mut self, start: u64, process: i64, t: OpType, mops: &[WMop]) {
        if let Some(p) = self.procs.get_mut(&process) {
            p.crashed = t == OpType::Info;
        }
        if t != OpType::Ok {
            return;
        }
        if let [r, w] = mops {
            let fk = self.fence_key;
            if r.f == MopFn::Read && w.f == MopFn::Write && r.key == fk && w.key == fk {
                let read = match r.arg {
                    Arg::Atom(a) => Some(a),
                    _ => None,
                };
                if let Arg::Atom(wrote) = w.arg {
                    self.fences.insert(
                        start,
                        FenceInfo {
                            read,
                            wrote,
                            epoch: None,
                        },
                    );
                }
            }
        }
    }

    /// Compares the reads of a new completion with the bases: a read of
    /// `B_x`'s value becomes `nil`; an `:ok` read of `nil` or of a value no
    /// retained transaction wrote, on a key with a base, is rejected (and
    /// dropped, so the round does not report it again as a read nobody
    /// wrote). Call after [`FenceGc::saw_completion`], which keeps the
    /// fence values as read.
    pub fn admit(&mut self, process: i64, ok: bool, mops: &mut [WMop]) -> Admitted {
        let mut out = Admitted::default();
        let late = self.procs.get(&process).is_some_and(|p| p.late);
        for (at, m) in mops.iter_mut().enumerate() {
            if m.f != MopFn::Read {
                continue;
            }
            let value = match m.arg {
                Arg::Atom(a) => Some(a),
                _ => None,
            };
            if let Some(v) = value.filter(|&v| self.info_skipped.contains(&(m.key, v))) {
                // Whether the crashed writer's write could follow what was
                // forgotten is no longer known: the whole history decides.
                // A forgotten writer's value reads as the base's, so that
                // the round does not report a read nobody wrote.
                out.info_read = true;
                if !self.writers.contains_key(&(m.key, v)) {
                    m.arg = Arg::Nil;
                    out.changed = true;
                }
                continue;
            }
            let Some(base) = self.bases.get(&m.key) else {
                continue;
            };
            if value.is_some_and(|v| base.values().contains(&v)) {
                if matches!(base, Base::Loose(_)) && ok {
                    // Which concurrent write was last is only known now; the
                    // collector no longer knows the other constraints on
                    // that order, so the whole history decides.
                    out.deferred = true;
                }
                m.arg = Arg::Nil;
                out.changed = true;
                continue;
            }
            let forgotten = match value {
                None => ok,
                Some(v) => !self.writers.contains_key(&(m.key, v)),
            };
            if !forgotten {
                continue;
            }
            // As a read of the base, so the round does not report it
            // again (as a read nobody wrote).
            m.arg = Arg::Nil;
            out.changed = true;
            if late {
                out.deferred = true;
            } else if ok {
                out.rejected.push(Rejected { key: m.key, value });
                if *base == Base::Covered {
                    out.dropped.push(at);
                }
            }
        }
        out
    }

    /// Whether some fence was numbered.
    pub fn numbered_any(&self) -> bool {
        self.tail.is_some()
    }

    /// Numbers the fences that extend the chain.
    fn number_fences(&mut self) {
        let mut by_read: HashMap<Option<Atom>, u64> = HashMap::new();
        for (&s, f) in &self.fences {
            if f.epoch.is_none() {
                // A fork keeps the first fence only (the round reports it).
                by_read
                    .entry(f.read)
                    .and_modify(|e| *e = (*e).min(s))
                    .or_insert(s);
            }
        }
        loop {
            let (want, next) = match self.tail {
                None => (None, 0),
                Some((v, e)) => (Some(v), e + 1),
            };
            let Some(s) = by_read.remove(&want) else {
                return;
            };
            let f = self.fences.get_mut(&s).expect("indexed fence");
            f.epoch = Some(next);
            self.tail = Some((f.wrote, next));
        }
    }

    /// Each retained transaction's (`pf`, `nf`), and `agree` (module docs).
    pub fn epochs(&mut self, store: &Store) -> Epochs {
        self.number_fences();
        let mut out = Epochs::default();
        // Each process's transactions, as indices into `out.starts`.
        let mut by_proc: HashMap<i64, Vec<usize>> = HashMap::new();
        let kept = (store.txns.iter()).filter(|(_, t)| t.outcome() != OpType::Fail);
        for (i, (&s, t)) in kept.enumerate() {
            by_proc.entry(t.process).or_default().push(i);
            out.starts.push(s);
        }
        out.bounds = vec![(None, None); out.starts.len()];
        let mut agree: Option<Option<u64>> = None;
        // Processes with no retained transaction keep their last fence.
        for (p, info) in &self.procs {
            if !info.crashed && !by_proc.contains_key(p) {
                let e = info.forgotten_pf;
                agree = Some(agree.map_or(e, |a: Option<u64>| a.min(e)));
            }
        }
        for (p, txns) in &by_proc {
            let own = |i: usize| self.fences.get(&out.starts[i]).and_then(|f| f.epoch);
            let mut pf = self.procs.get(p).and_then(|i| i.forgotten_pf);
            let mut pfs = Vec::with_capacity(txns.len());
            for &i in txns {
                pf = own(i).or(pf);
                pfs.push(pf);
            }
            let mut nf = None;
            for (&i, pf) in txns.iter().zip(pfs).rev() {
                nf = own(i).or(nf);
                out.bounds[i] = (pf, nf);
            }
            if let (false, Some(&last)) =
                (self.procs.get(p).is_some_and(|i| i.crashed), txns.last())
            {
                let last = out.bounds[last].0;
                agree = Some(agree.map_or(last, |a: Option<u64>| a.min(last)));
            }
        }
        // `Option`'s order puts `None` (−∞) first, as `min` needs.
        out.agree = agree.flatten();
        out
    }

    /// Forgets what can be forgotten (module docs); returns how much.
    pub fn collect(&mut self, store: &mut Store) -> super::gc::Collected {
        let p = self.prepare(store);
        self.apply(store, p)
    }

    /// What [`FenceGc::collect`] would forget from `store`, computed
    /// without changing it, so that it can run beside the round's check
    /// (which reads the same retained transactions) and be dropped if the
    /// check finds an anomaly. Only this collector's bookkeeping moves on
    /// (idle keys, fence numbers), which nothing but a collection reads,
    /// and none follows a round that found an anomaly.
    pub fn prepare(&mut self, store: &Store) -> Prepared {
        let (now, idle) = (self.now, self.loose_idle_ops);
        self.touched.retain(|_, t| now.saturating_sub(*t) < idle);
        if self.stopped {
            return Prepared::default();
        }
        // Failed transactions have no edges; a later read of their writes is
        // a read nobody retained wrote (rejected, or G1a in the round). They
        // leave first: the epochs and the plan skip them.
        let failed: Vec<u64> = store
            .txns
            .iter()
            .filter(|(_, t)| t.outcome() == OpType::Fail)
            .map(|(&s, _)| s)
            .collect();
        let t0 = std::time::Instant::now();
        let ep = self.epochs(store);
        super::timing("collect: epochs", t0);
        if ep.agree.is_none() && !self.realtime {
            return Prepared {
                failed,
                forget: None,
            };
        }
        let t0 = std::time::Instant::now();
        let plan = Plan::new(store, self, &ep, ep.agree);
        super::timing("collect: plan", t0);
        let t0 = std::time::Instant::now();
        let (member, bases) = plan.fixpoint(self);
        super::timing("collect: fixpoint", t0);
        // Every test build checks the worklist against full passes.
        #[cfg(test)]
        assert_eq!(
            (member.clone(), bases.clone()),
            plan.fixpoint_by_full_passes(self)
        );
        Prepared {
            failed,
            forget: Some(Box::new((plan, member, bases, ep))),
        }
    }

    /// Forgets what [`FenceGc::prepare`] found in the same `store`
    /// (unchanged since); returns how much.
    pub fn apply(&mut self, store: &mut Store, p: Prepared) -> super::gc::Collected {
        let mut done = super::gc::Collected::default();
        for s in p.failed {
            // Retained when the plan was prepared; nothing runs between
            // prepare and apply today, but a missing one is simply skipped.
            let Some(t) = store.txns.remove(&s) else {
                continue;
            };
            self.unindex(s, &t);
            done.failed += 1;
        }
        if let Some(f) = p.forget {
            let (plan, member, bases, ep) = *f;
            let t0 = std::time::Instant::now();
            self.forget(store, &plan, &member, &bases, &ep, &mut done);
            super::timing("collect: forget", t0);
        }
        done
    }

    fn unindex(&mut self, s: u64, t: &Txn) {
        for m in t.mops.iter().flatten() {
            if let (MopFn::Write, Arg::Atom(v)) = (m.f, &m.arg) {
                // One lookup, not a look and a removal (a quarter of
                // forgetting on the fenced 1M stream).
                if let hashbrown::hash_map::Entry::Occupied(e) = self.writers.entry((m.key, *v)) {
                    if *e.get() == s {
                        e.remove();
                    }
                }
            }
        }
        self.fences.remove(&s);
    }

    fn forget(
        &mut self,
        store: &mut Store,
        plan: &Plan,
        member: &[bool],
        bases: &HashMap<Atom, Vec<usize>>,
        ep: &Epochs,
        done: &mut super::gc::Collected,
    ) {
        let mut new_bases: HashMap<Atom, Base> = HashMap::new();
        for (&k, ms) in bases {
            let values = ms.iter().filter_map(|&i| plan.last_write(i, k)).collect();
            new_bases.insert(k, Base::of(values));
        }
        // Only crashed transactions nobody read are set aside: look those
        // up alone rather than every retained transaction.
        for (i, &s) in plan.starts.iter().enumerate() {
            if !plan.set_aside(i) {
                continue;
            }
            for m in store.txns[&s].mops.iter().flatten() {
                if let (MopFn::Write, Arg::Atom(v)) = (m.f, &m.arg) {
                    // Forgotten, or retained while a base ignored it.
                    if member[i] || new_bases.contains_key(&m.key) {
                        self.info_skipped.insert((m.key, *v));
                    }
                }
            }
        }
        // One pass in start order (the plan's indices).
        let mut i = 0;
        store.txns.retain(|&s, t| {
            debug_assert_eq!(plan.starts[i], s);
            let forgotten = member[i];
            if forgotten {
                let pf = ep.bounds.get(i).and_then(|b| b.0);
                let p = self.procs.entry(t.process).or_default();
                p.forgotten_pf = p.forgotten_pf.max(pf);
                self.unindex(s, t);
                done.ok += 1;
            }
            i += 1;
            !forgotten
        });
        if done.ok > 0 {
            self.forgot = true;
        }
        if new_bases.is_empty() {
            return;
        }
        let mut rerender = Vec::new();
        for (&s, t) in store.txns.iter_mut() {
            if t.comp.is_none() {
                continue;
            }
            let mut changed = false;
            for m in t.mops.iter_mut().flatten() {
                if m.f == MopFn::Read {
                    if let Arg::Atom(v) = m.arg {
                        if new_bases.get(&m.key) == Some(&Base::One(v)) {
                            m.arg = Arg::Nil;
                            changed = true;
                        }
                    }
                }
            }
            if changed {
                rerender.push(s);
            }
        }
        for s in rerender {
            store.rerender_completion(s);
        }
        self.bases.extend(new_bases);
    }
}
