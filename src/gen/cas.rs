//! A seeded generator of linearizable cas-register histories with unique
//! written values (the shape of the MTC paper's LWT workload, plus reads and
//! crashes), for benchmarks and tests of [`crate::check::linearizable`].
//!
//! Processes share one simulated register per key. The first op on each key
//! is a `:write` of a fresh value (the "insert"); then each process in turn
//! invokes a `:read` or a `:cas [current fresh]`, and every pending op takes
//! effect at a random moment before it completes, so concurrent cas ops
//! sometimes `:fail`. A small fraction of ops crash (`:info`, and the
//! process is replaced by a new one), taking effect or not at random.
//! Values come from one counter, so no value is written twice.
//!
//! **Faults** ([`CAS_FAULTS`]) are injected as short scripts run while no
//! other op is in flight, spread evenly over the history. Each starts with
//! a `:write` of a fresh value `v0` (so the register's state is known), on
//! the one register, or on a fresh key of its own when there are several
//! keys (so that each injection is the only failure of its key):
//!
//! * [`Fault::StaleRead`]: `A` completes `:cas [v0 v1]`; then `B` reads `v0`.
//! * [`Fault::LostUpdate`]: concurrent `A` `:cas [v0 v1]` and `B`
//!   `:cas [v0 v2]` both succeed.
//! * [`Fault::AbortedRead`]: `A`'s `:write v1` fails; then `B` reads `v1`.
//!
//! The completions listed in [`Injection::ops`] are `[A, B]`, as for the
//! transactional faults; `B`'s is the op a linearizability checker cannot
//! linearize.

use super::{Fault, Injection, Rng};
use std::io::{self, Write};

/// The faults a register history can exhibit (the others need
/// transactions over several objects).
pub const CAS_FAULTS: [Fault; 3] = [Fault::StaleRead, Fault::LostUpdate, Fault::AbortedRead];

/// Ops (invocations) one injection adds: the `:write` of `v0` and two more.
pub const OPS_PER_FAULT: usize = 3;

/// What to generate.
#[derive(Clone, Debug)]
pub struct CasGenOptions {
    /// Number of operations (invocations).
    pub ops: usize,
    /// Concurrent processes.
    pub processes: usize,
    /// Keys; with more than one, values are `jepsen.independent` tuples.
    pub keys: usize,
    /// Fraction of ops that are reads.
    pub read_fraction: f64,
    /// Fraction of ops that crash (`:info`).
    pub info_fraction: f64,
    /// Seed.
    pub seed: u64,
    /// Faults to inject, each once, from [`CAS_FAULTS`]; their ops count
    /// towards `ops`.
    pub faults: Vec<Fault>,
}

/// What [`generate_cas`] wrote.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CasSummary {
    /// Number of op lines.
    pub lines: usize,
    /// Distinct keys used (fault keys included).
    pub keys: usize,
    /// The injected faults, in history order.
    pub injections: Vec<Injection>,
}

impl Default for CasGenOptions {
    fn default() -> Self {
        CasGenOptions {
            ops: 1000,
            processes: 10,
            keys: 1,
            read_fraction: 0.3,
            info_fraction: 0.001,
            seed: 1,
            faults: Vec::new(),
        }
    }
}

#[derive(Clone, Copy)]
enum Kind {
    Read,
    Write(i64),
    Cas(i64, i64),
}

struct Pending {
    key: usize,
    kind: Kind,
    /// The outcome once applied: `Some(Some(v))` read v / ok, `Some(None)` failed cas.
    outcome: Option<Result<Option<i64>, ()>>,
}

/// Op lines as they are written: index, time and line counts.
struct Lines<'a, W: Write> {
    out: &'a mut W,
    buf: String,
    index: u64,
    lines: usize,
    time: u64,
}

impl<W: Write> Lines<'_, W> {
    /// Writes one op line (at the current time) and returns its `:index`.
    fn op(&mut self, ty: &str, process: i64, f: &str, value: &str) -> io::Result<u64> {
        use std::fmt::Write as _;
        self.buf.clear();
        let _ = writeln!(
            self.buf,
            "{{:index {}, :time {}, :type :{ty}, :process {process}, :f :{f}, :value {value}}}",
            self.index, self.time
        );
        self.out.write_all(self.buf.as_bytes())?;
        self.index += 1;
        self.lines += 1;
        Ok(self.index - 1)
    }
}

/// Checks the faults and the op budget; errors are `InvalidInput`.
pub fn validate_cas(opts: &CasGenOptions) -> io::Result<()> {
    let bad = |msg: String| Err(io::Error::new(io::ErrorKind::InvalidInput, msg));
    if let Some(f) = opts.faults.iter().find(|f| !CAS_FAULTS.contains(f)) {
        let name = |f: &Fault| {
            clap::ValueEnum::to_possible_value(f).map_or(format!("{f:?}"), |v| v.get_name().into())
        };
        return bad(format!(
            "{} cannot be injected into cas-register histories (a single register shows only {})",
            name(f),
            CAS_FAULTS.iter().map(name).collect::<Vec<_>>().join(", ")
        ));
    }
    if !opts.faults.is_empty() && opts.processes < 2 {
        return bad("injecting faults needs at least 2 processes".into());
    }
    let needed = OPS_PER_FAULT * opts.faults.len();
    if needed > opts.ops {
        return bad(format!(
            "the requested faults need {needed} ops but ops is {}",
            opts.ops
        ));
    }
    Ok(())
}

/// Writes a history as Jepsen EDN (one op map per line) and returns what
/// was written. Fails with `InvalidInput` for faults a register cannot show
/// or too few ops for them (see [`validate_cas`]), or with `out`'s error.
pub fn generate_cas(opts: &CasGenOptions, out: &mut impl Write) -> io::Result<CasSummary> {
    validate_cas(opts)?;
    let mut rng = Rng::new(opts.seed);
    let procs = opts.processes.max(1);
    let keys = opts.keys.max(1);
    let nf = opts.faults.len();
    // Fault keys come after the random ones (several keys only).
    let fault_keys = if keys > 1 { nf } else { 0 };
    let mut regs: Vec<Option<i64>> = vec![None; keys + fault_keys];
    let mut inserted = vec![false; keys];
    let mut pids: Vec<i64> = (0..procs as i64).collect();
    let mut pending: Vec<Option<Pending>> = (0..procs).map(|_| None).collect();
    let mut counter: i64 = 0;
    let random_ops = opts.ops - OPS_PER_FAULT * nf;
    let mut injections = Vec::with_capacity(nf);
    let mut invoked = 0usize;
    let mut o = Lines {
        out,
        buf: String::with_capacity(128),
        index: 0,
        lines: 0,
        time: 0,
    };
    let wrap = |key: usize, v: String| {
        if keys > 1 {
            format!("[{key} {v}]")
        } else {
            v
        }
    };
    loop {
        // Injection j runs once (j + 1) / (nf + 1) of the random ops were
        // invoked and nothing is in flight.
        let injecting =
            injections.len() < nf && invoked >= (injections.len() + 1) * random_ops / (nf + 1);
        let busy = pending.iter().any(Option::is_some);
        if injecting && !busy {
            let j = injections.len();
            let key = if keys > 1 { keys + j } else { 0 };
            let (a, b) = (pids[0], pids[1]);
            let mut fresh = || {
                counter += 1;
                counter
            };
            let (v0, v1, v2) = (fresh(), fresh(), fresh());
            let fault = opts.faults[j];
            let (ops, state) = inject(&mut o, &mut rng, fault, (a, b), [v0, v1, v2], |v| {
                wrap(key, v)
            })?;
            regs[key] = Some(state);
            if keys == 1 {
                inserted[0] = true;
            }
            injections.push(Injection { fault, ops });
            continue;
        }
        if invoked >= random_ops && !busy && !injecting {
            break;
        }
        let slot = rng.below(procs as u64) as usize;
        o.time += 1 + rng.below(1000);
        match &mut pending[slot] {
            None if invoked < random_ops && !injecting => {
                invoked += 1;
                let key = rng.below(keys as u64) as usize;
                let kind = if !inserted[key] {
                    inserted[key] = true;
                    counter += 1;
                    Kind::Write(counter)
                } else if rng.chance(opts.read_fraction) || regs[key].is_none() {
                    Kind::Read
                } else {
                    counter += 1;
                    Kind::Cas(regs[key].unwrap_or(0), counter)
                };
                let (f, v) = match kind {
                    Kind::Read => ("read", "nil".to_string()),
                    Kind::Write(v) => ("write", v.to_string()),
                    Kind::Cas(a, b) => ("cas", format!("[{a} {b}]")),
                };
                o.op("invoke", pids[slot], f, &wrap(key, v))?;
                pending[slot] = Some(Pending {
                    key,
                    kind,
                    outcome: None,
                });
            }
            None => continue,
            Some(p) if p.outcome.is_none() && rng.coin() => {
                p.outcome = Some(apply(&mut regs, p));
                continue;
            }
            Some(_) => {
                let p = pending[slot].take().expect("pending op");
                let crashed = complete(&mut o, &mut rng, &mut regs, p, opts, pids[slot], wrap)?;
                if crashed {
                    pids[slot] += procs as i64;
                }
            }
        }
    }
    Ok(CasSummary {
        lines: o.lines,
        keys: keys + fault_keys,
        injections,
    })
}

/// Applies a pending op to the registers: `Ok` with what a read saw (`None`
/// for writes), `Err` for a cas whose expected value is not there.
fn apply(regs: &mut [Option<i64>], p: &Pending) -> Result<Option<i64>, ()> {
    let r = &mut regs[p.key];
    match p.kind {
        Kind::Read => Ok(*r),
        Kind::Write(v) => {
            *r = Some(v);
            Ok(None)
        }
        Kind::Cas(old, new) => {
            if *r == Some(old) {
                *r = Some(new);
                Ok(None)
            } else {
                Err(())
            }
        }
    }
}

/// Writes the completion of process `pid`'s pending op `p` (applied now if
/// it was not yet, unless it crashes first); returns whether it crashed
/// (`:info`), after which the process takes a new id.
fn complete<W: Write>(
    o: &mut Lines<'_, W>,
    rng: &mut Rng,
    regs: &mut [Option<i64>],
    mut p: Pending,
    opts: &CasGenOptions,
    pid: i64,
    wrap: impl Fn(usize, String) -> String,
) -> io::Result<bool> {
    let crashed = rng.chance(opts.info_fraction);
    if p.outcome.is_none() && !(crashed && rng.coin()) {
        p.outcome = Some(apply(regs, &p));
    }
    let (f, arg) = match p.kind {
        Kind::Read => ("read", None),
        Kind::Write(v) => ("write", Some(v.to_string())),
        Kind::Cas(a, b) => ("cas", Some(format!("[{a} {b}]"))),
    };
    let pr = |v: Option<i64>| v.map_or_else(|| "nil".to_string(), |x| x.to_string());
    let (ty, v) = match (crashed, p.outcome) {
        (true, _) => ("info", arg.unwrap_or_else(|| "nil".into())),
        (false, Some(Err(()))) => ("fail", arg.unwrap_or_default()),
        (false, Some(Ok(read))) => ("ok", arg.unwrap_or_else(|| pr(read))),
        (false, None) => unreachable!("applied above"),
    };
    o.op(ty, pid, f, &wrap(p.key, v))?;
    Ok(crashed)
}

/// Writes one fault injection on a fresh register: `a` writes `v0`, then
/// the ops that show `fault` (each line at a random later time). Returns
/// the completions involved and the register's value after them.
fn inject<W: Write>(
    o: &mut Lines<'_, W>,
    rng: &mut Rng,
    fault: Fault,
    (a, b): (i64, i64),
    [v0, v1, v2]: [i64; 3],
    wrap: impl Fn(String) -> String,
) -> io::Result<(Vec<u64>, i64)> {
    let mut line = |o: &mut Lines<'_, W>, ty: &str, p: i64, f: &str, v: String| {
        o.time += 1 + rng.below(1000);
        o.op(ty, p, f, &wrap(v))
    };
    line(o, "invoke", a, "write", v0.to_string())?;
    line(o, "ok", a, "write", v0.to_string())?;
    let (ops, state) = match fault {
        Fault::StaleRead => {
            let cas = format!("[{v0} {v1}]");
            line(o, "invoke", a, "cas", cas.clone())?;
            let wa = line(o, "ok", a, "cas", cas)?;
            line(o, "invoke", b, "read", "nil".into())?;
            let rb = line(o, "ok", b, "read", v0.to_string())?;
            (vec![wa, rb], v1)
        }
        Fault::LostUpdate => {
            let (ca, cb) = (format!("[{v0} {v1}]"), format!("[{v0} {v2}]"));
            line(o, "invoke", a, "cas", ca.clone())?;
            line(o, "invoke", b, "cas", cb.clone())?;
            let oa = line(o, "ok", a, "cas", ca)?;
            let ob = line(o, "ok", b, "cas", cb)?;
            (vec![oa, ob], v2)
        }
        _ => {
            // AbortedRead (validated).
            line(o, "invoke", a, "write", v1.to_string())?;
            let wa = line(o, "fail", a, "write", v1.to_string())?;
            line(o, "invoke", b, "read", "nil".into())?;
            let rb = line(o, "ok", b, "read", v1.to_string())?;
            (vec![wa, rb], v0)
        }
    };
    Ok((ops, state))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::linearizable::register::registers;
    use crate::check::linearizable::{check_history, check_keys, LinOptions};
    use crate::edn::Value;
    use crate::model::Format;
    use crate::read::read_history_bytes;

    #[test]
    fn generated_histories_are_linearizable_and_take_the_chain() {
        for (seed, keys) in [(1, 1), (2, 1), (3, 4)] {
            let opts = CasGenOptions {
                ops: 3000,
                keys,
                info_fraction: 0.02,
                seed,
                ..CasGenOptions::default()
            };
            let mut out = Vec::new();
            generate_cas(&opts, &mut out).unwrap();
            let h = read_history_bytes(out, "gen.edn", Format::Edn).unwrap();
            let r = check_history(&h, &LinOptions::default()).unwrap();
            assert_eq!(r.get_kw("valid?"), Some(&Value::Bool(true)), "{r:?}");
            let regs = registers(&h).unwrap();
            for kr in check_keys(&regs, &LinOptions::default()) {
                assert_eq!(kr.analyzer, "lwt-chain");
            }
        }
    }

    /// Generates `opts`, checks it, and returns the result map and the
    /// summary.
    fn gen_and_check(opts: &CasGenOptions) -> (Value, CasSummary) {
        let mut out = Vec::new();
        let s = generate_cas(opts, &mut out).unwrap();
        let h = read_history_bytes(out, "gen.edn", Format::Edn).unwrap();
        (check_history(&h, &LinOptions::default()).unwrap(), s)
    }

    fn index_of(op: &Value) -> Option<&Value> {
        op.get_kw("index")
    }

    /// Every injected fault is found, exactly: with several keys, each on
    /// its own fresh key, whose failing op is the injection's `B`; every
    /// other key stays linearizable.
    #[test]
    fn every_injected_fault_is_found_on_its_own_key() {
        for seed in 0..6u64 {
            let faults: Vec<Fault> = (0..4)
                .map(|j| CAS_FAULTS[(seed as usize + j) % 3])
                .collect();
            let opts = CasGenOptions {
                ops: 2000,
                keys: 5,
                processes: 2 + seed as usize % 4,
                info_fraction: 0.01,
                seed,
                faults: faults.clone(),
                ..CasGenOptions::default()
            };
            let (r, s) = gen_and_check(&opts);
            assert_eq!(s.keys, 9);
            assert_eq!(
                s.injections.iter().map(|i| i.fault).collect::<Vec<_>>(),
                faults
            );
            assert_eq!(r.get_kw("valid?"), Some(&Value::Bool(false)), "{r:?}");
            let fault_keys: Vec<Value> = (5..9).map(Value::Int).collect();
            assert_eq!(r.get_kw("failures"), Some(&Value::Vector(fault_keys)));
            let Some(Value::Map(results)) = r.get_kw("results") else {
                panic!("{r:?}")
            };
            for (j, inj) in s.injections.iter().enumerate() {
                let key = Value::Int(5 + j as i64);
                let kr = &results.iter().find(|(k, _)| *k == key).expect("key").1;
                let op = kr.get_kw("op").expect("failing op");
                assert_eq!(
                    index_of(op),
                    Some(&Value::Int(inj.ops[1] as i64)),
                    "seed {seed} {:?}: {kr:?}",
                    inj.fault
                );
            }
        }
    }

    /// With one register, a fault is injected on it mid-history (after a
    /// write that fixes its state) and is the op the checker reports.
    #[test]
    fn a_fault_on_the_single_register_is_the_reported_op() {
        for (seed, fault) in CAS_FAULTS.into_iter().enumerate() {
            for info_fraction in [0.0, 0.02] {
                let opts = CasGenOptions {
                    ops: 1500,
                    info_fraction,
                    seed: seed as u64,
                    faults: vec![fault],
                    ..CasGenOptions::default()
                };
                let (r, s) = gen_and_check(&opts);
                assert_eq!(s.keys, 1);
                assert_eq!(r.get_kw("valid?"), Some(&Value::Bool(false)), "{r:?}");
                let b = s.injections[0].ops[1] as i64;
                assert_eq!(index_of(r.get_kw("op").expect("op")), Some(&Value::Int(b)));
                // The same options without the fault are linearizable.
                let (r, _) = gen_and_check(&CasGenOptions {
                    faults: Vec::new(),
                    ..opts
                });
                assert_eq!(r.get_kw("valid?"), Some(&Value::Bool(true)), "{r:?}");
            }
        }
    }

    #[test]
    fn faults_are_validated_and_reproducible() {
        let opts = |faults: Vec<Fault>, ops: usize, processes: usize| CasGenOptions {
            ops,
            processes,
            faults,
            ..CasGenOptions::default()
        };
        for bad in [
            opts(vec![Fault::WriteSkew], 100, 3),
            opts(vec![Fault::IntermediateRead], 100, 3),
            opts(vec![Fault::StaleRead], 100, 1),
            opts(vec![Fault::StaleRead, Fault::LostUpdate], 5, 3),
        ] {
            let e = generate_cas(&bad, &mut Vec::new()).unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
        }
        // Exactly the injected ops: 3 each.
        let (r, s) = gen_and_check(&opts(vec![Fault::LostUpdate, Fault::StaleRead], 6, 2));
        assert_eq!(s.lines, 12);
        assert_eq!(r.get_kw("valid?"), Some(&Value::Bool(false)));
        let o = opts(CAS_FAULTS.to_vec(), 300, 4);
        let (mut a, mut b) = (Vec::new(), Vec::new());
        generate_cas(&o, &mut a).unwrap();
        generate_cas(&o, &mut b).unwrap();
        assert_eq!(a, b);
    }
}
