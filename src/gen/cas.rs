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

use super::Rng;
use std::io::{self, Write};

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

/// Writes a history as Jepsen EDN (one op map per line) and returns the
/// number of lines written.
pub fn generate_cas(opts: &CasGenOptions, out: &mut impl Write) -> io::Result<usize> {
    let mut rng = Rng::new(opts.seed);
    let procs = opts.processes.max(1);
    let keys = opts.keys.max(1);
    let mut regs: Vec<Option<i64>> = vec![None; keys];
    let mut inserted = vec![false; keys];
    let mut pids: Vec<i64> = (0..procs as i64).collect();
    let mut pending: Vec<Option<Pending>> = (0..procs).map(|_| None).collect();
    let mut counter: i64 = 0;
    let (mut invoked, mut index, mut lines) = (0usize, 0u64, 0usize);
    let mut time: u64 = 0;
    let wrap = |key: usize, v: String| {
        if keys > 1 {
            format!("[{key} {v}]")
        } else {
            v
        }
    };
    let pr = |v: Option<i64>| v.map_or_else(|| "nil".to_string(), |x| x.to_string());
    let apply = |regs: &mut [Option<i64>], p: &Pending| -> Result<Option<i64>, ()> {
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
    };
    let mut buf = String::with_capacity(128);
    while invoked < opts.ops || pending.iter().any(Option::is_some) {
        let slot = rng.below(procs as u64) as usize;
        time += 1 + rng.below(1000);
        buf.clear();
        match &mut pending[slot] {
            None if invoked < opts.ops => {
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
                let v = wrap(key, v);
                use std::fmt::Write as _;
                let _ = write!(
                    buf,
                    "{{:index {index}, :time {time}, :type :invoke, :process {}, :f :{f}, :value {v}}}",
                    pids[slot]
                );
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
                let mut p = pending[slot].take().expect("pending op");
                let crashed = rng.chance(opts.info_fraction);
                if p.outcome.is_none() && !(crashed && rng.coin()) {
                    p.outcome = Some(apply(&mut regs, &p));
                }
                let (f, arg) = match p.kind {
                    Kind::Read => ("read", None),
                    Kind::Write(v) => ("write", Some(v.to_string())),
                    Kind::Cas(a, b) => ("cas", Some(format!("[{a} {b}]"))),
                };
                let (ty, v) = match (crashed, p.outcome) {
                    (true, _) => ("info", arg.unwrap_or_else(|| "nil".into())),
                    (false, Some(Err(()))) => ("fail", arg.unwrap_or_default()),
                    (false, Some(Ok(read))) => ("ok", arg.unwrap_or_else(|| pr(read))),
                    (false, None) => unreachable!("applied above"),
                };
                let v = wrap(p.key, v);
                use std::fmt::Write as _;
                let _ = write!(
                    buf,
                    "{{:index {index}, :time {time}, :type :{ty}, :process {}, :f :{f}, :value {v}}}",
                    pids[slot]
                );
                if crashed {
                    pids[slot] += procs as i64;
                }
            }
        }
        buf.push('\n');
        out.write_all(buf.as_bytes())?;
        index += 1;
        lines += 1;
    }
    Ok(lines)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::linearizable::{check_history, check_keys, LinOptions};
    use crate::edn::Value;
    use crate::infer::register::registers;
    use crate::model::SourceFormat;
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
            let h = read_history_bytes(out, "gen.edn", SourceFormat::Edn).unwrap();
            let r = check_history(&h, &LinOptions::default()).unwrap();
            assert_eq!(r.get_kw("valid?"), Some(&Value::Bool(true)), "{r:?}");
            let regs = registers(&h).unwrap();
            for kr in check_keys(&regs, &LinOptions::default()) {
                assert_eq!(kr.analyzer, "lwt-chain");
            }
        }
    }
}
