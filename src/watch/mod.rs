//! Online checking (`ellery watch`): a history is read as it grows and
//! checked in rounds, in memory bounded by what garbage collection keeps.
//!
//! Each round checks everything retained (the transactions not forgotten,
//! with the ops that arrived since the last round) through the ordinary
//! checker ([`route::check`]) and reports the anomalies it had not reported
//! before. Garbage collection ([`gc`]) forgets transactions that no future
//! transaction can put on a cycle; where no safe rule applies (rw-register,
//! or list-append under a model without real time, and no fences yet), all
//! is retained and the watcher says once that memory will grow.
//!
//! # The final result map
//!
//! [`Watcher::finish`] tells the caller what to print at the end of input,
//! so that it equals `ellery check` on the whole history:
//! * nothing was ever forgotten: the last round checked the whole history
//!   with `check`'s own code ([`Final::Outcome`]), so the maps are equal
//!   (ops are re-read from the same text; an `:index` missing in the source
//!   is written into it, as `check` prints it);
//! * something was forgotten, no round found anything and some round's
//!   graph had an edge: the whole history is valid (garbage collection
//!   hides no cycle, see [`gc`]), and `check`'s map for a valid history with
//!   edges is `{:valid? true}` ([`Final::Valid`]);
//! * otherwise (some round found an anomaly or could not decide; a read
//!   revealed the order of a collected loose block, see [`gc`]; or
//!   everything forgotten had no edge, so the whole history may be an empty
//!   graph): the caller re-checks the whole history from its file (standard
//!   input is spooled to a temporary file) with `check` itself
//!   ([`Final::Recheck`]); when that is impossible (`--max-memory`,
//!   `--no-spool`), the map of the anomalies the rounds found is printed
//!   instead (same types, maybe fewer cases).
//!
//! Streamed anomalies are those of the retained history at each round: a
//! prefix of the history, so an anomaly in it is one of the whole history
//! (except a read of a value that only a later, not yet invoked,
//! transaction writes: reported as a read nobody wrote, `G1a`, though the
//! whole history may be fine under models without real time).

// Long (about 1080 lines, a test of the intake included): the watcher's op
// intake feeds both collectors (list-append and fences), whose hooks sit
// next to the code they guard; the collectors, the source and the store are
// their own modules.
pub mod build;
pub mod by_start;
pub mod fence_gc;
pub mod gc;
pub mod hold;
mod round_check;
pub mod source;
pub mod store;

use crate::edn::{pr_str, Value};
use crate::error::InputError;
use crate::infer::rw_register::RwOptions;
use crate::model::Workload;
use crate::model::{Atom, Format, History, Interner, MopArg, MopFn, OpType, OpValue};
use crate::route::{self, CheckOptions, Outcome, Validity};
use hashbrown::HashSet;
use store::{Arg, OpRec, Store, Txn, WMop};

/// What a watch checks, and how.
#[derive(Clone, Debug)]
pub struct WatchOptions {
    /// The check of each round (models, timeouts, algorithm).
    pub check: CheckOptions,
    /// Elle's rw-register options.
    pub rw: RwOptions,
    /// The workload, or `None` to detect it from the first write or append.
    pub workload: Option<Workload>,
    /// The input format.
    pub format: Format,
    /// The input's name in messages.
    pub origin: String,
    /// Whether garbage collection may forget transactions.
    pub collect: bool,
    /// See [`gc::ListGc::loose_idle_ops`].
    pub loose_idle_ops: u64,
    /// See [`fence_gc::FenceGc::loose_idle_ops`] (`watch` uses a round's
    /// worth of ops, at most [`WatchOptions::loose_idle_ops`]).
    pub fence_idle_ops: u64,
    /// The fence key of rw-register histories ([`fence_gc`]; the shared
    /// fence convention's default is `-1`).
    pub fence_key: Value,
}

/// What the final result map is (module docs).
#[derive(Debug)]
pub enum Final {
    /// The last round checked the whole history: print its outcome.
    Outcome(Box<Outcome>),
    /// The whole history is valid: `{:valid? true}`.
    Valid,
    /// Re-check the whole history with `check`; if that is impossible, the
    /// given map of the anomalies the rounds found.
    Recheck(Box<Outcome>),
}

/// What one round found.
#[derive(Debug, Default)]
pub struct Round {
    /// Anomalies not reported before: (type, case), in the result map's
    /// order.
    pub new: Vec<(String, Value)>,
    /// The round's check of the retained history, if it ran.
    pub outcome: Option<Outcome>,
    /// What garbage collection forgot after it.
    pub collected: gc::Collected,
}

/// Counters for the progress line.
#[derive(Clone, Copy, Debug, Default)]
pub struct Stats {
    /// Completions read.
    pub txns: u64,
    /// Client ops read.
    pub ops: u64,
    /// Rounds run.
    pub rounds: u64,
    /// `:ok` transactions forgotten.
    pub forgotten: u64,
    /// `:fail` transactions forgotten.
    pub forgotten_failed: u64,
}

/// How transactions are forgotten.
#[derive(Debug)]
enum Collector {
    /// Not decided yet (workload unknown).
    Undecided,
    /// Everything is retained.
    None,
    /// list-append with real time ([`gc`]).
    List(gc::ListGc),
    /// rw-register with fences and session order ([`fence_gc`]).
    Fence(fence_gc::FenceGc),
}

/// After a round, free pages go back to the system only when the process
/// holds at least this much ([`crate::limits::release_free_memory`]), or
/// when the next round will be big: below it they serve the next round
/// without faulting in again. The 10M stream's rounds hold 40–120 MB;
/// its peak is a big round's, under issue 17's 300 MB.
const KEEP_FREE_BELOW_BYTES: u64 = 160 << 20;

/// The anomaly type of a read that contradicts a forgotten prefix (a stale
/// read or an incompatible order, named when the whole history is
/// re-checked).
pub const COLLECTED_READ: &str = "read-of-collected-version";

/// An online checker: feed it fragments ([`Watcher::ingest`]), run rounds
/// ([`Watcher::round`]), then ask for the final map ([`Watcher::finish`]).
pub struct Watcher {
    opts: WatchOptions,
    store: Store,
    collector: Collector,
    /// File lines consumed by earlier fragments.
    lines_done: u64,
    /// Ops (client or not) before the current fragment: dense indices.
    dense_base: u64,
    next_pos: u64,
    last_index: Option<u64>,
    indexed: Option<bool>,
    workload: Option<Workload>,
    reported: HashSet<String>,
    /// Every anomaly reported, by type, in report order.
    found: Vec<(String, Vec<Value>)>,
    /// Immediate rejections found while reading, for the next round.
    immediate: Vec<(String, Value)>,
    flagged: bool,
    /// A collected loose block's order was revealed (see [`gc::Admitted`]).
    deferred: bool,
    /// Some round's graph had an edge (so the whole history's has).
    saw_graph: bool,
    new_ops: u64,
    stats: Stats,
    /// The "no fence" note was given.
    no_fence_noted: bool,
    /// The last round left out reads of pending writes (see `round`).
    suppressed: bool,
    /// Completions that read a pending write, held back ([`hold`]).
    hold: hold::Hold,
    /// Rounds of more transactions than this plan their collection after
    /// the check ([`round_check`]; tests set 0 to compare both ways).
    plan_beside_max_txns: usize,
    /// Notes for the user (each said once).
    pub notes: Vec<String>,
}

impl Watcher {
    /// A watcher with nothing read yet.
    pub fn new(opts: WatchOptions) -> Watcher {
        let workload = opts.workload;
        let mut w = Watcher {
            opts,
            store: Store::default(),
            collector: Collector::Undecided,
            lines_done: 0,
            dense_base: 0,
            next_pos: 0,
            last_index: None,
            indexed: None,
            workload: None,
            reported: HashSet::new(),
            found: Vec::new(),
            immediate: Vec::new(),
            flagged: false,
            deferred: false,
            saw_graph: false,
            new_ops: 0,
            stats: Stats::default(),
            no_fence_noted: false,
            plan_beside_max_txns: round_check::BESIDE_MAX_TXNS,
            suppressed: false,
            hold: hold::Hold::default(),
            notes: Vec::new(),
        };
        if let Some(wl) = workload {
            w.set_workload(wl);
        }
        w
    }

    /// Counters so far.
    pub fn stats(&self) -> Stats {
        self.stats
    }

    /// Transactions retained now.
    pub fn retained(&self) -> usize {
        self.store.txns.len()
    }

    /// Ops read since the last round.
    pub fn new_ops(&self) -> u64 {
        self.new_ops
    }

    /// Whether some round found an anomaly or could not decide.
    pub fn flagged(&self) -> bool {
        self.flagged
    }

    fn set_workload(&mut self, wl: Workload) {
        self.workload = Some(wl);
        let exp = &self.opts.check.expectations;
        let prohibited = exp.prohibited();
        let realtime = ["G0-realtime", "G1c-realtime", "G-single-item-realtime"]
            .iter()
            .all(|t| prohibited.contains(t));
        let auto = self.opts.check.algorithm == route::Algorithm::Auto;
        let session = realtime || prohibited.contains(&"G-single-item-process");
        self.collector = match wl {
            Workload::RwRegister if self.opts.collect && session => {
                let fk = self.store.interner.atom(&self.opts.fence_key);
                let rt = prohibited.contains(&"G-single-item-realtime")
                    || self.opts.rw.linearizable_keys;
                let mut g = fence_gc::FenceGc::new(fk, rt);
                g.loose_idle_ops = self.opts.fence_idle_ops;
                Collector::Fence(g)
            }
            Workload::ListAppend if self.opts.collect && realtime && auto => {
                let mut g = gc::ListGc::default();
                g.loose_idle_ops = self.opts.loose_idle_ops;
                Collector::List(g)
            }
            _ if !self.opts.collect => Collector::None,
            _ => {
                let why = match wl {
                    Workload::ListAppend if !auto => "list-append is collected under --algorithm auto only",
                    Workload::ListAppend => "list-append without real-time order in the models (strict-serializable, strong-*) needs fence transactions, not supported yet",
                    Workload::RwRegister => "rw-register is collected with fence transactions under a model that forbids G-single with session order (strong-session-serializable, strong-session-snapshot-isolation, strict-serializable, ...): without session order a future transaction may be serialized before forgotten ones, fences or not (Cobra proves its collection for strong session serializability; use -c strong-session-serializable for its setting)",
                    Workload::CasRegister => "cas-register histories are not checked in rounds",
                };
                self.notes.push(format!(
                    "{}: nothing can be forgotten safely ({why}): memory grows with the history",
                    self.opts.origin
                ));
                Collector::None
            }
        };
    }

    /// Moves an error of the current fragment to its place in the file.
    fn shift(&self, mut e: InputError) -> InputError {
        if e.line > 0 {
            e.line = e
                .line
                .saturating_add(self.lines_done.min(u32::MAX as u64) as u32);
        }
        e.file = self.opts.origin.clone();
        e
    }

    /// Reads a fragment of whole lines.
    pub fn ingest(&mut self, fragment: Vec<u8>) -> Result<(), InputError> {
        let piece = source::Piece::read(fragment, &self.opts.origin, self.opts.format);
        self.ingest_piece(piece)
    }

    /// Adds a fragment already read into ops ([`source::parse_ahead`]),
    /// as [`Watcher::ingest`] adds the fragment it read.
    pub fn ingest_piece(&mut self, piece: source::Piece) -> Result<(), InputError> {
        let lines = piece.lines;
        let (h, indexed) = piece.read.map_err(|mut e| {
            // The reader's messages name fragment lines ("at line 7").
            e.message = shift_line_mentions(&e.message, self.lines_done);
            self.shift(e)
        })?;
        if let Some(p) = h.ops.iter().position(|op| {
            h.mops(op)
                .iter()
                .any(|m| matches!(m.f(), MopFn::PredRead | MopFn::PredWrite))
        }) {
            let msg = "expected item micro-ops: ellery watch does not check predicate reads and writes yet (ellery check does)";
            return Err(self.shift(h.error_at(p, msg.into())));
        }
        if let (Some(now), Some(before)) = (indexed, self.indexed) {
            if now != before && !h.ops.is_empty() {
                let msg = if before {
                    "expected an op map with an :index (the first op has one), found one without"
                } else {
                    "expected an op map without :index (the first op has none), found one with"
                };
                return Err(self.shift(h.error_at(0, msg.into())));
            }
        }
        if self.indexed.is_none() {
            self.indexed = indexed;
        }
        let indexed = indexed.unwrap_or(false);
        // The fragment's atoms as the store's, each looked up once.
        let mut xlate = vec![None; h.interner.len()];
        for i in 0..h.ops.len() {
            self.add_op(&h, i, indexed, &mut xlate, None)?;
            if self.hold.len() > hold::HOLD_MAX {
                self.feed_held(true)?;
            } else if self.hold.wake {
                self.feed_held(false)?;
            }
        }
        self.dense_base += (h.ops.len() + h.non_client_ops) as u64;
        self.lines_done += lines;
        Ok(())
    }

    fn add_op(
        &mut self,
        h: &History,
        i: usize,
        indexed: bool,
        xlate: &mut [Option<Atom>],
        held: Option<(u64, u64)>,
    ) -> Result<(), InputError> {
        // Long (about 250 lines): one op's intake, in order (index check,
        // workload, text, holding back, pairing, collector hooks); each step uses the last.
        let op = &h.ops[i];
        let index = if indexed {
            op.index
        } else {
            self.dense_base + op.index
        };
        if indexed && i == 0 && held.is_none() {
            if let Some(last) = self.last_index.filter(|&l| index <= l) {
                return Err(self.shift(h.error_at(i, format!(
                    "expected an op with an :index greater than the previous op's ({last}), found :index {index} (ops must be in :index order, each once)"
                ))));
            }
        }
        if held.is_none() {
            self.last_index = Some(index);
        }
        let mops = match op.value {
            OpValue::Mops { .. } => Some(self.convert_mops(h, i, xlate)?),
            _ => {
                let f = h.atom_value(op.f);
                if matches!(&f, Value::Keyword(k) if ["read", "write", "cas"].contains(&k.as_str()))
                {
                    return Err(self.shift(h.error_at(i, "expected a transaction (:value a vector of micro-ops); ellery watch checks list-append and rw-register histories, not cas-register ops".into())));
                }
                None
            }
        };
        if self.workload.is_none() {
            let f = mops.iter().flatten().map(|m| m.f);
            let wl = f.clone().find_map(|f| match f {
                MopFn::Append => Some(Workload::ListAppend),
                MopFn::Write => Some(Workload::RwRegister),
                _ => None,
            });
            if let Some(wl) = wl {
                self.set_workload(wl);
            }
        }
        // Into the store's text buffer once the op's final text is known (a
        // collector may rewrite a completion's reads).
        // (A held op's text is EDN with its `:index`.)
        let edn = held.is_some() || self.opts.format == Format::Edn;
        let text: std::borrow::Cow<[u8]> = if indexed && edn {
            h.source.slice(op.span)
        } else {
            std::borrow::Cow::Owned(pr_str(&op_map_at(h, op, index)).into_bytes())
        };
        let pos = match held {
            Some((pos, _)) => pos,
            None => {
                self.next_pos += 1;
                self.stats.ops += 1;
                self.new_ops += 1;
                self.next_pos - 1
            }
        };
        let line = held.map_or(op.span.line as u64 + self.lines_done, |(_, l)| l);
        if held.is_none() {
            let m = mops.as_deref();
            let text = &text;
            if self.hold.take(&self.store, op.process, op.op_type, m, || {
                (pos, line, text.to_vec().into_boxed_slice())
            }) {
                // Completions count when read (the progress line).
                self.stats.txns += u64::from(op.op_type != OpType::Invoke);
                return Ok(());
            }
        }
        let rec = OpRec {
            pos,
            index,
            time: op.time,
            op_type: op.op_type,
            text: store::TextRef::default(),
            line,
            shape: if mops.is_some() {
                store::Shape::Txn
            } else {
                store::Shape::Plain
            },
        };
        let f = store_atom(&mut self.store.interner, h, xlate, op.f);
        if let Collector::List(g) = &mut self.collector {
            for m in mops.iter().flatten() {
                let t = g.touched.entry(m.key).or_insert(pos);
                *t = (*t).max(pos);
            }
        }
        if let Collector::Fence(g) = &mut self.collector {
            for m in mops.iter().flatten() {
                let t = g.touched.entry(m.key).or_insert(pos);
                *t = (*t).max(pos);
            }
            if let Some(late) = g.saw_process(op.process).filter(|_| !self.deferred) {
                self.deferred = true;
                let what = match late {
                    fence_gc::Late::New => "first appears",
                    fence_gc::Late::Returned => "issues an op after crashing (:info)",
                };
                self.notes.push(format!(
                    "{}: line {}: process {} {what} after transactions were forgotten; it may read older state than the fences show, so collection stops and the whole history is checked at the end",
                    self.opts.origin, rec.line, op.process
                ));
            }
        }
        if op.op_type == OpType::Invoke {
            // The pending invocation stays open on error (no index into a
            // map the error path left without its transaction).
            if let Some(prev) = self.store.open.get(&op.process) {
                let prev = self.store.txns.get(prev).and_then(|t| t.inv.as_ref());
                let prev_line = prev.map_or(0, |o| o.line);
                return Err(self.shift(h.error_at(
                    i,
                    format!(
                        "process {} invoked again at line {} before its invocation at line {prev_line} completed",
                        op.process, rec.line
                    ),
                )));
            }
            self.store.open.insert(op.process, pos);
            for m in mops.iter().flatten() {
                if let (MopFn::Write, Arg::Atom(v)) = (m.f, &m.arg) {
                    (self.store.open_writes).push((op.process, pos, m.key, *v));
                }
            }
            let mut rec = rec;
            rec.text = self.store.push_text(&text);
            if let (Collector::Fence(g), Some(ms)) = (&mut self.collector, mops.as_deref()) {
                g.saw_writes(pos, ms);
            }
            self.store.txns.insert(
                pos,
                Txn {
                    process: op.process,
                    f,
                    inv: Some(rec),
                    comp: None,
                    mops,
                },
            );
            return Ok(());
        }
        self.stats.txns += u64::from(held.is_none());
        let start = self.store.open.remove(&op.process);
        if start.is_some() {
            (self.store.open_writes).retain(|w| w.0 != op.process);
        }
        let fresh = || Txn {
            process: op.process,
            f,
            inv: None,
            comp: None,
            mops: None,
        };
        // The pending transaction is taken out of its slot, leaving a
        // placeholder, and put back below (no error path in between): the
        // store neither closes nor reopens a slot per completion.
        let mut t = match start.and_then(|s| self.store.txns.get_mut(&s)) {
            Some(slot) => std::mem::replace(slot, fresh()),
            None => fresh(),
        };
        let mut rec = rec;
        let mut rendered: Option<Box<[u8]>> = None;
        if let (Some(inv), Some(own), Some(comp)) = (t.inv.as_mut(), t.mops.as_deref(), &mops) {
            // Before any collector rewrites the completion's reads.
            if inv.shape == store::Shape::Txn {
                inv.shape = build::invocation_shape(own, comp);
            }
        }
        let mut mops = mops.or(t.mops.take());
        if let (Collector::List(g), Some(ms)) = (&mut self.collector, mops.as_mut()) {
            let admitted = g.admit(op.op_type == OpType::Ok, ms);
            if admitted.aside && !self.deferred {
                self.deferred = true;
                self.notes.push(format!(
                    "{}: line {}: a read shows a crashed (:info) transaction's append among appends that were collected; whether that is legal is decided by checking the whole history at the end",
                    self.opts.origin, rec.line
                ));
            }
            if admitted.revealed && !self.deferred {
                self.deferred = true;
                self.notes.push(format!(
                    "{}: line {}: a read revealed the order of concurrent appends that were collected unread; whether that order closes a cycle is decided by checking the whole history at the end",
                    self.opts.origin, rec.line
                ));
            }
            for b in admitted.rejected {
                let m = op_map_at(h, op, index);
                self.immediate.push((
                    COLLECTED_READ.to_string(),
                    Value::kw_map(vec![
                        ("op", m),
                        ("key", self.store.interner.value(b.key)),
                        ("collected-prefix-length", Value::Int(b.base_len as i64)),
                    ]),
                ));
            }
            if admitted.changed {
                t.mops = None;
                rendered = Some(self.store.render_op(&t, &rec, Some(ms)));
            }
        }
        if let (Collector::Fence(g), Some(ms)) = (&mut self.collector, mops.as_mut()) {
            let start = t.inv.as_ref().map_or(rec.pos, |o| o.pos);
            g.saw_completion(start, op.process, op.op_type, ms);
            g.saw_writes(start, ms);
            let admitted = g.admit(op.process, op.op_type == OpType::Ok, ms);
            if admitted.info_read && !self.deferred {
                self.deferred = true;
                self.notes.push(format!(
                    "{}: line {}: a read of a crashed (:info) transaction's write that collection had set aside; the whole history is checked at the end",
                    self.opts.origin, rec.line
                ));
            }
            if admitted.deferred && !self.deferred {
                self.deferred = true;
                self.notes.push(format!(
                    "{}: line {}: a read of a forgotten version that collection cannot judge (by a process that appeared after collection, or of one of several concurrent last writes); the whole history is checked at the end",
                    self.opts.origin, rec.line
                ));
            }
            for &at in admitted.dropped.iter().rev() {
                ms.remove(at);
            }
            for r in admitted.rejected {
                let m = op_map_at(h, op, index);
                let value = r.value.map_or(Value::Nil, |v| self.store.interner.value(v));
                self.immediate.push((
                    COLLECTED_READ.to_string(),
                    Value::kw_map(vec![
                        ("op", m),
                        ("key", self.store.interner.value(r.key)),
                        ("value", value),
                    ]),
                ));
            }
            if admitted.changed {
                t.mops = None;
                rendered = Some(self.store.render_op(&t, &rec, Some(ms)));
            }
        }
        rec.text = self.store.push_text(rendered.as_deref().unwrap_or(&text));
        t.mops = mops;
        t.comp = Some(rec);
        self.hold.completed(t.start());
        self.store.txns.insert(t.start(), t);
        Ok(())
    }

    /// Feeds the held ops that may be fed now (`all`: every one, in stream
    /// order), each at its own place in the stream ([`hold`]).
    fn feed_held(&mut self, all: bool) -> Result<(), InputError> {
        self.hold.wake = false;
        loop {
            let next = if all {
                self.hold.pop_front()
            } else {
                self.hold.next_ready(&self.store)
            };
            let Some(op) = next else { break };
            let (line, origin) = (op.line, self.opts.origin.clone());
            let at = move |mut e: InputError| {
                e.line = line.min(u32::MAX as u64) as u32;
                e.file = origin.clone();
                e
            };
            let mut text = op.text.into_vec();
            text.push(b'\n');
            let (h, _) =
                crate::read::read_fragment(text, &self.opts.origin, Format::Edn).map_err(&at)?;
            let mut xlate = vec![None; h.interner.len()];
            if !h.ops.is_empty() {
                self.add_op(&h, 0, true, &mut xlate, Some((op.pos, op.line)))
                    .map_err(&at)?;
            }
        }
        self.hold.wake = false;
        Ok(())
    }

    /// Feeds every held op ([`hold`]): call at end of input, before the
    /// last round.
    pub fn end_of_input(&mut self) -> Result<(), InputError> {
        let n = self.hold.len() as u64;
        self.feed_held(true)?;
        self.new_ops += n;
        Ok(())
    }

    /// Ops held back from rounds now ([`hold`]).
    pub fn held(&self) -> usize {
        self.hold.len()
    }

    /// The micro-ops of op `i` of `h` with the store's atoms; an error when
    /// an unknown function's name is past what a micro-op can hold
    /// ([`crate::model::FN_NAME_SLOTS`]).
    fn convert_mops(
        &mut self,
        h: &History,
        i: usize,
        xlate: &mut [Option<Atom>],
    ) -> Result<Vec<WMop>, InputError> {
        let interner = &mut self.store.interner;
        let mut out = Vec::with_capacity(h.mops(&h.ops[i]).len());
        for m in h.mops(&h.ops[i]) {
            let f = match m.f() {
                MopFn::Other(name) => match interner.fn_name(&h.interner.fn_value(name)) {
                    Some(name) => MopFn::Other(name),
                    None => {
                        return Err(self.shift(h.error_at(i, crate::read::TOO_MANY_NAMES.into())))
                    }
                },
                f => f,
            };
            let mut atom = |a: Atom| store_atom(interner, h, xlate, a);
            out.push(WMop {
                f,
                key: atom(m.key()),
                arg: match m.arg() {
                    // Predicates are refused when read (`ingest`).
                    MopArg::Nil | MopArg::Pred(_) => Arg::Nil,
                    MopArg::Atom(a) => Arg::Atom(atom(a)),
                    MopArg::List { .. } => {
                        Arg::List(h.list(m.arg()).iter().map(|&a| atom(a)).collect())
                    }
                },
            });
        }
        Ok(out)
    }

    /// Checks what is retained (with the ops read since the last round),
    /// reports what is new, then forgets what can be forgotten.
    pub fn round(&mut self) -> Result<Round, InputError> {
        // Long (about 145 lines): check, filter what may be reported, then
        // collect, in this order, on one round's state.
        let mut round = Round::default();
        for (t, case) in std::mem::take(&mut self.immediate) {
            self.flagged = true;
            self.note_found(&t, case.clone());
            round.new.push((t, case));
        }
        self.new_ops = 0;
        self.stats.rounds += 1;
        let (outcome, mut prepared) = self.check_and_plan()?;
        let mut empty = false;
        let mut valid = outcome.validity == Validity::Valid;
        // A read of a value whose writer is still pending is a read nobody
        // wrote (G1a) to the round's check, yet the writer may complete
        // later. Such reads are held back until it does ([`hold`]); one
        // reaches a round only when holding hit its bound or at end of
        // input (a writer that never completed): not reported, and not a
        // reason to stop collecting, until the writer ends.
        let pending = self.pending_writes();
        self.suppressed = false;
        let mut left = 0usize;
        if let Some(Value::Map(anomalies)) = outcome.result.get_kw("anomalies") {
            for (k, cases) in anomalies {
                let Value::Keyword(t) = k else { continue };
                let cases = match cases {
                    Value::Vector(v) | Value::List(v) => v.clone(),
                    other => vec![other.clone()],
                };
                let cases: Vec<Value> = if t == "G1a" && !pending.is_empty() {
                    let n = cases.len();
                    let kept: Vec<Value> = cases
                        .into_iter()
                        .filter(|c| !reads_pending_write(c, &pending))
                        .collect();
                    self.suppressed |= kept.len() < n;
                    kept
                } else {
                    cases
                };
                if t != "empty-transaction-graph" {
                    left += cases.len();
                }
                if t == "empty-transaction-graph" {
                    // No edge among what is retained: nothing to report
                    // yet (later ops may add edges); whether the whole
                    // history has a graph is settled in `finish`.
                    empty = true;
                    valid = anomalies.len() == 1;
                    continue;
                }
                // After a read collection cannot judge, the retained history
                // no longer stands for the whole one (a forgotten writer may
                // be what the read saw): nothing found is streamed, so no
                // false alarm is ever printed; the whole history decides at
                // the end.
                if self.deferred {
                    continue;
                }
                for c in cases {
                    let key = format!("{t} {}", pr_str(&c));
                    if self.reported.insert(key) {
                        self.note_found(t, c.clone());
                        round.new.push((t.clone(), c));
                    }
                }
            }
        }
        if !valid && self.suppressed && left == 0 && outcome.validity == Validity::Invalid {
            valid = true;
        }
        if !valid && !self.deferred {
            self.flagged = true;
        }
        self.saw_graph |= !empty;
        let t0 = std::time::Instant::now();
        if !self.flagged {
            if let Collector::Fence(g) = &mut self.collector {
                g.now = self.next_pos;
                round.collected = match prepared.take() {
                    Some(round_check::Planned::Fence(p)) => g.apply(&mut self.store, p),
                    _ => g.collect(&mut self.store),
                };
                self.stats.forgotten += round.collected.ok as u64;
                self.stats.forgotten_failed += round.collected.failed as u64;
                if !g.numbered_any() && self.stats.txns >= 1000 && !self.no_fence_noted {
                    self.no_fence_noted = true;
                    self.notes.push(format!(
                        "{}: no fence transaction ([[:r K v] [:w K v']] on fence key {}) numbered yet: nothing can be forgotten, memory grows until every process issues fences",
                        self.opts.origin,
                        pr_str(&self.opts.fence_key)
                    ));
                }
            }
            if let Collector::List(g) = &mut self.collector {
                g.now = self.next_pos;
                round.collected = match prepared.take() {
                    Some(round_check::Planned::List(p)) => g.apply(&mut self.store, p),
                    _ => g.collect(&mut self.store),
                };
                self.stats.forgotten += round.collected.ok as u64;
                self.stats.forgotten_failed += round.collected.failed as u64;
            }
        }
        // What was forgotten or rewritten leaves the text buffer (the
        // round's history, which shared it, is gone).
        let t1 = std::time::Instant::now();
        self.store.compact();
        timing("collect: compact", t1);
        timing("collect", t0);
        let t0 = std::time::Instant::now();
        // A big round next (a collection stall piled transactions up) is
        // the one with the peak: it starts from what is held.
        let big_next = self.store.txns.len() >= self.plan_beside_max_txns / 4 * 3;
        crate::limits::release_free_memory(if big_next { 0 } else { KEEP_FREE_BELOW_BYTES });
        timing("release", t0);
        if std::env::var_os("ELLERY_WATCH_TIMING").is_some() {
            eprintln!(
                "ellery: timing: forgot {} retained {}",
                round.collected.ok,
                self.store.txns.len()
            );
        }
        round.outcome = Some(outcome);
        Ok(round)
    }

    /// The retained history a round checks, and each op's input line.
    fn retained_history(&self) -> Result<(History, Vec<u64>), InputError> {
        // Built from the parsed ops ([`build`]); read from their text when
        // some `:value` is no micro-op vector, or when this round's outcome
        // may be the final map (nothing forgotten yet) and interned atoms
        // could be numbered otherwise than `check` numbers them.
        let forgot = self.stats.forgotten + self.stats.forgotten_failed > 0;
        let t0 = std::time::Instant::now();
        let built = (forgot || self.store.interner.len() <= 1)
            .then(|| build::history(&self.store, &self.opts.origin))
            .flatten();
        let out = match built {
            Some(b) => Ok(b),
            None => {
                let (text, lines) = self.store.render();
                match crate::read::read_history_bytes(text, &self.opts.origin, Format::Edn) {
                    Ok(h) => Ok((h, lines)),
                    Err(e) => Err(self.unrender(e, &lines)),
                }
            }
        };
        timing("history", t0);
        out
    }

    /// `[k v]` of every write of a pending transaction, as printed.
    fn pending_writes(&self) -> HashSet<String> {
        let mut out = HashSet::new();
        for s in self.store.open.values() {
            let Some(t) = self.store.txns.get(s) else {
                continue;
            };
            for m in t.mops.iter().flatten() {
                if let (MopFn::Write, store::Arg::Atom(v)) = (m.f, &m.arg) {
                    let kv = Value::Vector(vec![
                        self.store.interner.value(m.key),
                        self.store.interner.value(*v),
                    ]);
                    out.insert(pr_str(&kv));
                }
            }
        }
        out
    }

    fn note_found(&mut self, t: &str, case: Value) {
        match self.found.iter_mut().find(|(k, _)| k == t) {
            Some((_, v)) => v.push(case),
            None => self.found.push((t.to_string(), vec![case])),
        }
    }

    /// Moves an error about the retained history to the op's file line.
    fn unrender(&self, mut e: InputError, lines: &[u64]) -> InputError {
        if e.line >= 1 {
            if let Some(&l) = lines.get(e.line as usize - 1) {
                e.line = l.min(u32::MAX as u64) as u32;
            }
        }
        e.file = self.opts.origin.clone();
        e
    }

    /// The map of every anomaly the rounds reported (Elle's result map over
    /// them): what `--stop-on-first` prints, and the fallback when the whole
    /// history cannot be re-checked.
    pub fn found_map(&self) -> Outcome {
        let exp = &self.opts.check.expectations;
        let mut map = crate::check::result::result_map(exp, &self.found, &[]);
        // The watcher's own immediate rejections are no Elle type, so the
        // result map leaves them out: add them (they make it invalid).
        if let Some((t, cases)) = self.found.iter().find(|(t, _)| t == COLLECTED_READ) {
            let entry = (Value::kw(t), Value::Vector(cases.clone()));
            match &mut map {
                Value::Map(e) if e.len() > 1 => {
                    e[0].1 = Value::Bool(false);
                    if let Value::List(types) = &mut e[1].1 {
                        types.push(Value::kw(t));
                    }
                    if let Value::Map(a) = &mut e[2].1 {
                        a.push(entry);
                    }
                }
                _ => {
                    map = Value::kw_map(vec![
                        ("valid?", Value::Bool(false)),
                        ("anomaly-types", Value::List(vec![Value::kw(t)])),
                        ("anomalies", Value::Map(vec![entry])),
                    ])
                }
            }
        }
        Outcome::from_result(map)
    }

    /// What to print at the end of input (module docs); call after the last
    /// round.
    pub fn finish(&self, last: Option<Outcome>) -> Final {
        // Forgotten transactions without any edge seen: the whole history
        // may be an empty graph (`:unknown`), which only `check` can say.
        let undecided = (self.stats.forgotten > 0 && !self.saw_graph) || self.suppressed;
        if self.flagged || self.deferred || undecided {
            let mut fallback = self.found_map();
            if !self.flagged {
                let cause = if self.deferred {
                    "collected-order-revealed"
                } else if self.suppressed {
                    "read-of-pending-write"
                } else {
                    "empty-transaction-graph"
                };
                fallback = Outcome::from_result(Value::kw_map(vec![
                    ("valid?", Value::kw("unknown")),
                    ("cause", Value::kw(cause)),
                ]));
            }
            return Final::Recheck(Box::new(fallback));
        }
        if self.stats.forgotten > 0 {
            return Final::Valid;
        }
        match last {
            Some(o) => Final::Outcome(Box::new(o)),
            None => Final::Valid,
        }
    }
}

/// With `ELLERY_WATCH_TIMING` set, says on standard error how long a part
/// of a round took (for profiling without a profiler).
fn timing(part: &str, since: std::time::Instant) {
    if std::env::var_os("ELLERY_WATCH_TIMING").is_some() {
        eprintln!(
            "ellery: timing: {part} {:.3} s{}",
            since.elapsed().as_secs_f64(),
            resident().map_or(String::new(), |r| format!(", resident {r}"))
        );
    }
}

/// The process's resident and peak resident size (Linux's
/// `/proc/self/status`), for [`timing`]: where a round's memory goes.
fn resident() -> Option<String> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .map(|v| v.trim().to_string())
    };
    Some(format!("{} (peak {})", field("VmRSS:")?, field("VmHWM:")?))
}

/// An op's map with its place in the whole stream as `:index` (the
/// fragment's own index is dense from the fragment's start).
fn op_map_at(h: &History, op: &crate::model::Op, index: u64) -> Value {
    let mut m = h.op_map(op);
    // `op_map` puts `:index` first.
    if let Value::Map(entries) = &mut m {
        if let Some(e) = entries.first_mut() {
            e.1 = Value::Int(index as i64);
        }
    }
    m
}

/// Whether a G1a case (`{:op … :mop [:r k v] :writer nil}`) reads a value a
/// pending transaction writes.
fn reads_pending_write(case: &Value, pending: &HashSet<String>) -> bool {
    if !matches!(case.get_kw("writer"), Some(Value::Nil)) {
        return false;
    }
    match case.get_kw("mop") {
        Some(Value::Vector(m)) if m.len() == 3 => {
            pending.contains(&pr_str(&Value::Vector(vec![m[1].clone(), m[2].clone()])))
        }
        _ => false,
    }
}

/// A fragment's atom as the store's: inline integers are the same; an
/// interned value is interned in the store once per fragment (`xlate`, by
/// the fragment's slot), not cloned out of the fragment for every use.
fn store_atom(into: &mut Interner, h: &History, xlate: &mut [Option<Atom>], a: Atom) -> Atom {
    let Some(slot) = a.interned_slot() else {
        return a;
    };
    if let Some(&Some(b)) = xlate.get(slot) {
        return b;
    }
    let b = into.atom(&h.atom_value(a));
    if let Some(x) = xlate.get_mut(slot) {
        *x = Some(b);
    }
    b
}

/// Adds `by` to every "line N" a message mentions, outside the quoted
/// strings it copies from the input (`found "line 5"` is input, not a place).
fn shift_line_mentions(msg: &str, by: u64) -> String {
    let mut out = String::with_capacity(msg.len());
    let mut rest = msg;
    while let Some(at) = next_line_mention(rest) {
        out.push_str(&rest[..at + 5]);
        rest = &rest[at + 5..];
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        match rest[..digits].parse::<u64>() {
            Ok(n) => out.push_str(&n.saturating_add(by).to_string()),
            Err(_) => out.push_str(&rest[..digits]),
        }
        rest = &rest[digits..];
    }
    out.push_str(rest);
    out
}

/// Where the first "line " outside a double-quoted string (with `\`
/// escapes, as `pr_str` writes them) starts.
fn next_line_mention(s: &str) -> Option<usize> {
    let b = s.as_bytes();
    let (mut i, mut quoted) = (0, false);
    while i < b.len() {
        match b[i] {
            b'\\' if quoted => i += 1,
            b'"' => quoted = !quoted,
            b'l' if !quoted && b[i..].starts_with(b"line ") => return Some(i),
            _ => {}
        }
        i += 1;
    }
    None
}

#[cfg(test)]
impl WatchOptions {
    /// The unit tests' options: EDN named `t`, collection on, no idle
    /// limits, the convention's fence key `-1`.
    fn for_tests(workload: Option<Workload>) -> Self {
        WatchOptions {
            check: CheckOptions::default(),
            rw: RwOptions::default(),
            workload,
            format: Format::Edn,
            origin: "t".into(),
            collect: true,
            loose_idle_ops: 0,
            fence_idle_ops: 0,
            fence_key: Value::Int(-1),
        }
    }
}
#[cfg(test)]
mod fence_tests;
#[cfg(test)]
mod reinvoke_tests {
    use super::*;

    /// A second invocation of a pending process is an input error; feeding
    /// more after it used to index a transaction the error left out.
    #[test]
    fn ingest_after_a_double_invocation_is_an_error_again() {
        let mut w = Watcher::new(WatchOptions::for_tests(Some(Workload::ListAppend)));
        let inv = |i: u64| {
            format!(
                "{{:index {i}, :type :invoke, :process 0, :f :txn, :value [[:append 1 {i}]]}}\n"
            )
            .into_bytes()
        };
        w.ingest(inv(0)).unwrap();
        let e = w.ingest(inv(1)).unwrap_err();
        assert!(e.message.contains("invoked again"), "{}", e.message);
        let e = w.ingest(inv(2)).unwrap_err();
        assert!(e.message.contains("invoked again"), "{}", e.message);
    }
}
#[cfg(test)]
mod tests;
