//! A seeded, reproducible generator of Jepsen transactional histories.
//!
//! [`generate`] simulates a multi-process client talking to an in-memory
//! database with a chosen isolation level ([`Mode`]), and writes the resulting
//! history as Jepsen EDN, one op map per line, in Elle's key order:
//!
//! ```text
//! {:index 0, :time 296542, :type :invoke, :process 1, :f :txn, :value [[:r 0 nil] [:append 2 1]]}
//! {:index 3, :time 1002652, :type :ok, :process 1, :f :txn, :value [[:r 0 []] [:append 2 1]]}
//! ```
//!
//! Up to `processes` transactions are in flight; at each step a random
//! process invokes a new transaction or advances its current one. Anomalies
//! can be injected on purpose ([`Fault`]); each injection is run in isolation
//! on fresh keys, and [`GenSummary::injections`] names the completion ops
//! involved so that a checker's answer can be asserted exactly.
//!
//! The same [`GenOptions`] (seed included) always produce byte-identical
//! output.

pub mod cas;
mod faults;
mod mini;
pub mod predicates;
mod rng;
mod sim;
#[cfg(test)]
mod tests;

pub use rng::Rng;

use std::io;

/// Which kind of objects the simulated database stores: the checker's
/// workloads, one enum (`-w` maps it to clap in [`cli`](crate::cli)). Knossos-style CAS
/// registers come from a linearizable register (`jepsen.independent` tuples
/// with several keys); modes do not apply to them, and of the faults only
/// stale-read, lost-update and aborted-read (see the [`cas`] module).
pub use crate::model::Workload;

/// The isolation level the simulated database provides.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, clap::ValueEnum)]
pub enum Mode {
    /// Each transaction takes effect atomically at one random instant between
    /// its invocation and its completion, reading the latest state.
    StrictSerializable,
    /// Like strict-serializable, except that read-only transactions read a
    /// committed snapshot up to 4 commits old (`MAX_STALENESS`). The
    /// history stays serializable (a read-only transaction can be placed right
    /// after the snapshot it read) but may violate real-time order.
    Serializable,
    /// Each transaction reads the snapshot committed when it was invoked (plus
    /// its own writes) and commits at one instant before its completion;
    /// first-committer-wins: if any key it writes was committed by someone else
    /// since its snapshot, it aborts (`:fail`). Allows write skew (G2-item),
    /// never G-single.
    SnapshotIsolation,
    /// Micro-ops execute one at a time across the transaction's lifetime. The
    /// first access to a key reads the latest committed state at that moment;
    /// later accesses to that key in the same transaction see that value plus
    /// its own writes (so Elle's internal-consistency check holds). Writes are
    /// buffered and installed atomically at commit. A list-append transaction
    /// that read its own append of `k` aborts if someone else appended to `k`
    /// after its read (its read could otherwise not be a prefix of the final
    /// list).
    ReadCommitted,
}

/// A deliberately injected anomaly.
///
/// Each injection runs while no other transaction is in flight, on fresh keys
/// that no other transaction touches, using processes of the pool. The
/// completion ops listed in [`Injection::ops`] are, in order:
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, clap::ValueEnum)]
pub enum Fault {
    /// G1a. `W` appends/writes `k` and fails; a later `R` reads `k` and sees
    /// that value. Ops: `[W's :fail, R's :ok]`.
    AbortedRead,
    /// G1b. `W` appends (writes) `k` twice; a concurrent `R` reads `k` ending
    /// at (equal to) the first value. Ops: `[W, R]`.
    IntermediateRead,
    /// Lost update. Concurrent `A` and `B` both read the same (initial) version
    /// of `k` and then append (write) `k`; a later observer reads `k` after
    /// both (list-append: `[a b]`, i.e. A's append then B's). Ops: `[A, B]`.
    LostUpdate,
    /// G2-item (write skew). Concurrent `A` reads `y` and appends/writes `x`,
    /// `B` reads `x` and appends/writes `y`; both read the initial state and
    /// commit; a later observer reads both. Ops: `[A, B]`.
    WriteSkew,
    /// Real-time violation (G-single-item-realtime). `W` appends/writes `k`
    /// and completes; afterwards `R` (another process) reads `k` and sees the
    /// initial state. Ops: `[W, R]`.
    StaleRead,
    /// G1c. Concurrent `A` appends/writes `x` and reads `y`, `B`
    /// appends/writes `y` and reads `x`; each sees the other's write.
    /// Ops: `[A, B]`.
    CyclicInformationFlow,
    /// G0 (list-append only: a register history cannot reveal two write
    /// orders). Concurrent `A` and `B` both append to `x` and `y`; a later
    /// observer reads `x` with A's element first and `y` with B's first.
    /// Ops: `[A, B]`.
    DirtyWrite,
}

impl Fault {
    /// Every fault, in declaration order.
    pub const ALL: [Fault; 7] = [
        Fault::AbortedRead,
        Fault::IntermediateRead,
        Fault::LostUpdate,
        Fault::WriteSkew,
        Fault::StaleRead,
        Fault::CyclicInformationFlow,
        Fault::DirtyWrite,
    ];

    /// How many transactions one injection of this fault adds to the history.
    pub fn txn_count(self) -> usize {
        match self {
            Fault::AbortedRead
            | Fault::IntermediateRead
            | Fault::StaleRead
            | Fault::CyclicInformationFlow => 2,
            Fault::LostUpdate | Fault::WriteSkew | Fault::DirtyWrite => 3,
        }
    }
}

/// How far behind (in commits) a [`Mode::Serializable`] read-only transaction's
/// snapshot may be.
pub const MAX_STALENESS: u64 = 4;

/// Everything that determines a generated history.
#[derive(Clone, Debug, PartialEq)]
pub struct GenOptions {
    /// Object kind.
    pub workload: Workload,
    /// Isolation level of the simulated database.
    pub mode: Mode,
    /// Total number of transactions, injected ones included.
    pub txns: usize,
    /// Number of concurrent client processes (at least 1; 2 with faults).
    pub processes: usize,
    /// Number of keys in use at any time (at least 1).
    pub keys: usize,
    /// Once this many values were written to a key, it is retired and a fresh
    /// key takes its place (Jepsen's `max-writes-per-key`); 0 never retires
    /// keys.
    pub max_writes_per_key: usize,
    /// Micro-ops per transaction are uniform in `1..=max_mops` (at least 1).
    pub max_mops: usize,
    /// Probability that a micro-op is a read.
    pub read_fraction: f64,
    /// Probability that a transaction fails (`:fail`) without effect.
    pub fail_fraction: f64,
    /// Probability that a transaction crashes (`:info`); it takes effect with
    /// probability 1/2 and its process is replaced.
    pub info_fraction: f64,
    /// Faults to inject, each once (list one several times to repeat it);
    /// injections are spread evenly over the history.
    pub faults: Vec<Fault>,
    /// The PRNG seed.
    pub seed: u64,
    /// Mini-transactions (MTC): every transaction is one of the shapes of
    /// `gen::mini` over one or two keys (1-2 reads, at most 2 writes, each
    /// write after a read of its key), and injected faults read each key
    /// before writing it. `max_mops` and `read_fraction` are then unused.
    pub mini: bool,
    /// Written values drawn uniformly from `1..=values` per key, so they
    /// repeat (rw-register only, without faults or `mini`); 0 writes each
    /// value once.
    pub values: u64,
}

impl Default for GenOptions {
    /// A small strict-serializable list-append history: 100 txns, 5
    /// processes, 5 keys of at most 32 writes, 1–4 micro-ops, half reads, no
    /// failures, no faults, seed 0.
    fn default() -> GenOptions {
        GenOptions {
            workload: Workload::ListAppend,
            mode: Mode::StrictSerializable,
            txns: 100,
            processes: 5,
            keys: 5,
            max_writes_per_key: 32,
            max_mops: 4,
            read_fraction: 0.5,
            fail_fraction: 0.0,
            info_fraction: 0.0,
            faults: Vec::new(),
            seed: 0,
            mini: false,
            values: 0,
        }
    }
}

/// One injected fault and the completion ops (by `:index`) that exhibit it;
/// see [`Fault`] for their order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Injection {
    /// The injected anomaly.
    pub fault: Fault,
    /// `:index` of the completions of the transactions involved.
    pub ops: Vec<u64>,
}

/// What [`generate`] wrote.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GenSummary {
    /// Number of op lines (invocations plus completions).
    pub ops: u64,
    /// Number of transactions (each has one invocation and one completion).
    pub txns: u64,
    /// Transactions completed `:ok`.
    pub ok: u64,
    /// Transactions completed `:fail` (planned failures and database aborts).
    pub fail: u64,
    /// Transactions completed `:info`.
    pub info: u64,
    /// Of the `:fail`s, those the database aborted (snapshot-isolation
    /// write conflicts, read-committed append conflicts).
    pub aborts: u64,
    /// Read-only transactions that read a stale snapshot
    /// ([`Mode::Serializable`]).
    pub stale_reads: u64,
    /// Distinct keys used.
    pub keys: u64,
    /// The injected faults, in history order.
    pub injections: Vec<Injection>,
    /// `:index` of the completion of every simulated transaction that took
    /// effect (`:ok`, and `:info` that took effect), in effect order:
    /// writers by commit, read-only transactions right after the snapshot they
    /// read. For [`Mode::StrictSerializable`] and [`Mode::Serializable`] this
    /// is a serial order explaining every read (strict: also compatible with
    /// real time). Injected transactions are not included.
    pub effect_order: Vec<u64>,
}

/// Fence transactions (Cobra's write fences; the shared fence convention):
/// every process issues `[[:r K v] [:w K v']]` on the reserved key `K`
/// after every `every` of its own transactions, `v'` from a counter
/// starting at 1. Fences count towards `txns`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FenceOptions {
    /// Transactions of a process between two of its fences (at least 1).
    pub every: usize,
    /// The fence key: negative, since generated keys are 0, 1, 2, ….
    pub key: i64,
}

/// [`generate`], with fence transactions interleaved (rw-register only;
/// `None` is [`generate`]).
pub fn generate_fenced(
    opts: &GenOptions,
    fences: Option<FenceOptions>,
    out: &mut impl io::Write,
) -> io::Result<GenSummary> {
    let Some(f) = fences else {
        return generate(opts, out);
    };
    validate(opts)?;
    let bad = |msg: &str| Err(io::Error::new(io::ErrorKind::InvalidInput, msg.to_string()));
    if opts.workload != Workload::RwRegister {
        return bad("fences (--fences) are rw-register transactions: use -w rw-register");
    }
    if f.every == 0 || f.key >= 0 {
        return bad(
            "--fences needs N >= 1 and a negative --fence-key (generated keys are 0, 1, 2, ...)",
        );
    }
    sim::Sim::new(opts, out).with_fences(f).run()
}

/// Checks options for consistency; errors are `InvalidInput`.
pub fn validate(opts: &GenOptions) -> io::Result<()> {
    let bad = |msg: String| Err(io::Error::new(io::ErrorKind::InvalidInput, msg));
    if opts.processes == 0 {
        return bad("processes must be at least 1".into());
    }
    if opts.keys == 0 {
        return bad("keys must be at least 1".into());
    }
    if opts.max_mops == 0 {
        return bad("max_mops must be at least 1".into());
    }
    for (name, p) in [
        ("read_fraction", opts.read_fraction),
        ("fail_fraction", opts.fail_fraction),
        ("info_fraction", opts.info_fraction),
    ] {
        if !(0.0..=1.0).contains(&p) {
            return bad(format!("{name} must be in [0, 1], got {p}"));
        }
    }
    if opts.fail_fraction + opts.info_fraction > 1.0 {
        return bad("fail_fraction + info_fraction must be at most 1".into());
    }
    if opts.values > 0
        && (opts.workload != Workload::RwRegister || opts.mini || !opts.faults.is_empty())
    {
        return bad("repeated values (--values) need -w rw-register, without --mini or faults (faults and mini-transactions rely on unique values)".into());
    }
    if !opts.faults.is_empty() && opts.processes < 2 {
        return bad("injecting faults needs at least 2 processes".into());
    }
    if opts.workload == Workload::CasRegister {
        if opts.mode != Mode::StrictSerializable || opts.mini {
            return bad("cas-register histories come from a linearizable register: modes and --mini do not apply".into());
        }
        return cas::validate_cas(&cas_options(opts));
    }
    if opts.workload == Workload::RwRegister && opts.faults.contains(&Fault::DirtyWrite) {
        return bad("--fault dirty-write (G0) can only be injected into list-append histories (-w list-append)".into());
    }
    let needed: usize = opts.faults.iter().map(|f| f.txn_count()).sum();
    if needed > opts.txns {
        return bad(format!(
            "the requested faults need {needed} transactions but txns is {}",
            opts.txns
        ));
    }
    Ok(())
}

/// The cas-register generator's options: `txns` counts ops.
fn cas_options(opts: &GenOptions) -> cas::CasGenOptions {
    cas::CasGenOptions {
        ops: opts.txns,
        processes: opts.processes,
        keys: opts.keys,
        read_fraction: opts.read_fraction,
        info_fraction: opts.info_fraction,
        seed: opts.seed,
        faults: opts.faults.clone(),
    }
}

/// Generates a history for `opts` and writes it to `out` (buffered
/// internally; no need to wrap `out` in a `BufWriter`).
///
/// Returns what was written. Fails with `InvalidInput` if the options are
/// inconsistent (see [`validate`]), or with `out`'s error.
pub fn generate(opts: &GenOptions, out: &mut impl io::Write) -> io::Result<GenSummary> {
    validate(opts)?;
    if opts.workload == Workload::CasRegister {
        let s = cas::generate_cas(&cas_options(opts), out)?;
        return Ok(GenSummary {
            ops: s.lines as u64,
            txns: opts.txns as u64,
            keys: s.keys as u64,
            injections: s.injections,
            ..GenSummary::default()
        });
    }
    sim::Sim::new(opts, out).run()
}
