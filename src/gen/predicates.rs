//! `ellery gen --predicates`: rw-register histories with predicate reads
//! and writes (`[:rp PRED RESULT]`, `[:wp PRED VALUE KEYS]`) from a
//! simulated strict-serializable database, with injectable predicate
//! anomalies ([`PredFault`]).
//!
//! Up to `processes` transactions are in flight; at each step a random
//! process invokes a new transaction or completes its current one, which
//! then takes effect atomically against the database (so the history is
//! strict-serializable unless a fault says otherwise). Written values are
//! unique: the `i`-th write writes a fixed odd multiple of `i` modulo
//! 2^31, which looks random and never repeats; predicates are ranges
//! `[:between lo hi]` covering `width` of that space, `[:in #{…}]` of
//! values just written, `[:and [:>= lo] [:< hi]]` and `[:= v]`.
//!
//! Injections run while nothing else is in flight, on fresh keys, and
//! every one is a violation of serializability (so of every stronger
//! model); [`PredGenSummary::injections`] names the completion ops
//! involved.

use super::Rng;
use std::io::{self, Write};

/// A deliberately injected predicate anomaly.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, clap::ValueEnum)]
pub enum PredFault {
    /// A phantom. Odd injections drop a matching row: `W` writes `j = u`
    /// and `k = v`; then `R` reads `j = u` and its predicate `[:= v]`
    /// misses `k` (G-single through the predicate). Even injections add a
    /// stale matching row: `W1` writes `k = v`, `W2` writes `j = u`, reads
    /// `k = v` and writes `k = v'`; then `R` reads `j = u` and its
    /// predicate `[:= v]` returns `k = v`, a version `W2` had overwritten
    /// (G-single). Ops: `[W, R]` / `[W2, R]`.
    Phantom,
    /// Write skew through predicates: `X` writes `a`, `b`; concurrent `A`
    /// and `B` both read both rows with `[:in #{…}]` and each overwrites one
    /// of them with a value the predicate does not match (G2; allowed by
    /// snapshot isolation). Ops: `[A, B]`.
    PredicateWriteSkew,
}

/// Everything that determines a generated predicate history.
#[derive(Clone, Debug, PartialEq)]
pub struct PredGenOptions {
    /// Total transactions, injected ones included.
    pub txns: usize,
    /// Concurrent processes.
    pub processes: usize,
    /// Keys.
    pub keys: usize,
    /// Most item micro-ops per transaction.
    pub max_mops: usize,
    /// Fraction of transactions that make a predicate read (a fifth of
    /// those a predicate write instead).
    pub pred_fraction: f64,
    /// Fraction of the value space a range predicate covers.
    pub width: f64,
    /// Faults, each injected once, spread evenly.
    pub faults: Vec<PredFault>,
    /// The PRNG seed.
    pub seed: u64,
}

impl Default for PredGenOptions {
    fn default() -> PredGenOptions {
        PredGenOptions {
            txns: 1000,
            processes: 10,
            keys: 100,
            max_mops: 4,
            pred_fraction: 0.2,
            width: 0.01,
            faults: Vec::new(),
            seed: 0,
        }
    }
}

/// An injected anomaly: the fault and the indices of its completion ops.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PredInjection {
    /// The fault.
    pub fault: PredFault,
    /// `:index` of the completion ops, in the order the fault documents.
    pub ops: Vec<u64>,
}

/// What was generated.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PredGenSummary {
    /// Ops written.
    pub ops: u64,
    /// The injections, in history order.
    pub injections: Vec<PredInjection>,
}

const SPACE: u64 = 1 << 31;

/// A predicate, printed and evaluated by the generator itself.
#[derive(Clone, Debug)]
enum P {
    Between(u64, u64),
    In(Vec<u64>),
    AndGeLt(u64, u64),
    Eq(u64),
}

impl P {
    fn holds(&self, v: Option<u64>) -> bool {
        let Some(v) = v else { return false };
        match self {
            P::Between(lo, hi) => (*lo..=*hi).contains(&v),
            P::In(vs) => vs.contains(&v),
            P::AndGeLt(lo, hi) => (*lo..*hi).contains(&v),
            P::Eq(c) => v == *c,
        }
    }

    fn edn(&self) -> String {
        match self {
            P::Between(lo, hi) => format!("[:between {lo} {hi}]"),
            P::In(vs) => {
                let vs: Vec<String> = vs.iter().map(u64::to_string).collect();
                format!("[:in #{{{}}}]", vs.join(" "))
            }
            P::AndGeLt(lo, hi) => format!("[:and [:>= {lo}] [:< {hi}]]"),
            P::Eq(c) => format!("[:= {c}]"),
        }
    }
}

#[derive(Clone, Debug)]
enum M {
    R(u64),
    W(u64, u64),
    Rp(P),
    Wp(P, u64),
}

/// A completed micro-op's text.
fn done(m: &M, state: &mut [Option<u64>]) -> String {
    match m {
        M::R(k) => format!("[:r {k} {}]", val(state[*k as usize])),
        M::W(k, v) => {
            state[*k as usize] = Some(*v);
            format!("[:w {k} {v}]")
        }
        M::Rp(p) => {
            let rows: Vec<String> = (0..state.len())
                .filter(|&k| p.holds(state[k]))
                .map(|k| format!("{k} {}", val(state[k])))
                .collect();
            format!("[:rp {} {{{}}}]", p.edn(), rows.join(", "))
        }
        M::Wp(p, v) => {
            let keys: Vec<usize> = (0..state.len()).filter(|&k| p.holds(state[k])).collect();
            for &k in &keys {
                state[k] = Some(*v);
            }
            let keys: Vec<String> = keys.iter().map(usize::to_string).collect();
            format!("[:wp {} {v} [{}]]", p.edn(), keys.join(" "))
        }
    }
}

/// A micro-op's text at invocation.
fn invoked(m: &M) -> String {
    match m {
        M::R(k) => format!("[:r {k} nil]"),
        M::W(k, v) => format!("[:w {k} {v}]"),
        M::Rp(p) => format!("[:rp {} nil]", p.edn()),
        M::Wp(p, v) => format!("[:wp {} {v} nil]", p.edn()),
    }
}

fn val(v: Option<u64>) -> String {
    v.map_or("nil".into(), |v| v.to_string())
}

struct Sim<'a, W: Write> {
    out: &'a mut W,
    index: u64,
    writes: u64,
    state: Vec<Option<u64>>,
}

impl<W: Write> Sim<'_, W> {
    /// The next unique value: an odd multiple of the write count modulo
    /// 2^31, a bijection.
    fn value(&mut self) -> u64 {
        self.writes += 1;
        (self.writes.wrapping_mul(0x5851_F42D)) % SPACE
    }

    /// The next unique value for an injection: at 2^32 and above, where no
    /// normal predicate reaches (their ranges start below 2^31 and are at
    /// most 2^31 wide), so no later predicate write overwrites an injected
    /// row and no normal predicate read sees one: what an injection's
    /// transactions saw stays a violation whatever comes after.
    fn injected_value(&mut self) -> u64 {
        self.writes += 1;
        2 * SPACE + self.writes
    }

    fn emit(&mut self, process: usize, ok: bool, mops: &[String]) -> io::Result<u64> {
        let index = self.index;
        self.index += 1;
        writeln!(
            self.out,
            "{{:index {index}, :time {}, :type {}, :process {process}, :f :txn, :value [{}]}}",
            index * 1000,
            if ok { ":ok" } else { ":invoke" },
            mops.join(" ")
        )?;
        Ok(index)
    }

    /// Runs `txns` (process, micro-ops) concurrently: all invoked, then
    /// completed in order. Returns their completions' indices.
    fn run_together(&mut self, txns: &[(usize, Vec<M>)]) -> io::Result<Vec<u64>> {
        for (p, mops) in txns {
            let text: Vec<String> = mops.iter().map(invoked).collect();
            self.emit(*p, false, &text)?;
        }
        // All read the same state (they overlap), then their writes apply.
        let before = self.state.clone();
        let mut after = self.state.clone();
        let mut out = Vec::new();
        for (p, mops) in txns {
            let mut local = before.clone();
            let text: Vec<String> = mops.iter().map(|m| done(m, &mut local)).collect();
            for m in mops {
                if let M::W(k, v) = m {
                    after[*k as usize] = Some(*v);
                }
            }
            out.push(self.emit(*p, true, &text)?);
        }
        self.state = after;
        Ok(out)
    }

    /// Runs one transaction alone and returns its completion index; `edit`
    /// may change the completed micro-ops' text (the injected fault).
    fn run_alone(
        &mut self,
        p: usize,
        mops: &[M],
        edit: impl FnOnce(&mut Vec<String>),
    ) -> io::Result<u64> {
        let text: Vec<String> = mops.iter().map(invoked).collect();
        self.emit(p, false, &text)?;
        let mut state = std::mem::take(&mut self.state);
        let mut text: Vec<String> = mops.iter().map(|m| done(m, &mut state)).collect();
        self.state = state;
        edit(&mut text);
        self.emit(p, true, &text)
    }
}

/// Writes a predicate history to `out`.
pub fn generate_predicates<W: Write>(
    opts: &PredGenOptions,
    out: &mut W,
) -> io::Result<PredGenSummary> {
    let mut rng = Rng::new(opts.seed);
    let processes = opts.processes.max(2);
    let keys = opts.keys.max(1) as u64;
    let injected_keys = 3 * opts.faults.len() as u64;
    let mut sim = Sim {
        out,
        index: 0,
        writes: 0,
        state: vec![None; (keys + injected_keys) as usize],
    };
    let mut summary = PredGenSummary::default();
    let width = ((opts.width.clamp(0.0, 1.0) * SPACE as f64) as u64).max(1);
    let normal = opts
        .txns
        .saturating_sub(opts.faults.iter().map(|_| 3).sum::<usize>());
    // Injection points, spread evenly over the normal transactions.
    let at: Vec<usize> = (0..opts.faults.len())
        .map(|i| (i + 1) * normal / (opts.faults.len() + 1))
        .collect();
    let mut next_fault = 0;
    let mut recent: Vec<u64> = Vec::new();
    // In flight: (process, micro-ops).
    let mut flight: Vec<Option<Vec<M>>> = vec![None; processes];
    let mut started = 0;
    let mut fresh = keys;
    let mut phantoms = 0;
    while started < normal || flight.iter().any(Option::is_some) {
        if next_fault < at.len() && started >= at[next_fault] && flight.iter().all(Option::is_none)
        {
            let fault = opts.faults[next_fault];
            next_fault += 1;
            let ops = inject(&mut sim, fault, &mut fresh, &mut phantoms)?;
            summary.injections.push(PredInjection { fault, ops });
            continue;
        }
        let p = rng.below(processes as u64) as usize;
        // Drain to an idle database before an injection.
        let want_idle = next_fault < at.len() && started >= at[next_fault];
        match flight[p].take() {
            Some(mops) => {
                let text: Vec<String> = mops.iter().map(|m| done(m, &mut sim.state)).collect();
                sim.emit(p, true, &text)?;
            }
            None if started < normal && !want_idle => {
                let mut mops = Vec::new();
                if rng.chance(opts.pred_fraction) {
                    let pred = match rng.below(10) {
                        0..=5 => {
                            let lo = rng.below(SPACE);
                            P::Between(lo, lo.saturating_add(width))
                        }
                        6 | 7 if !recent.is_empty() => {
                            let n = 1 + rng.below(3) as usize;
                            P::In(
                                (0..n)
                                    .map(|_| recent[rng.below(recent.len() as u64) as usize])
                                    .collect(),
                            )
                        }
                        8 => {
                            let lo = rng.below(SPACE);
                            P::AndGeLt(lo, lo.saturating_add(width))
                        }
                        _ if !recent.is_empty() => {
                            P::Eq(recent[rng.below(recent.len() as u64) as usize])
                        }
                        _ => P::Eq(rng.below(SPACE)),
                    };
                    if rng.below(5) == 0 {
                        let v = sim.value();
                        mops.push(M::Wp(pred, v));
                    } else {
                        mops.push(M::Rp(pred));
                    }
                }
                for _ in 0..rng.range(1, opts.max_mops.max(1) as u64) {
                    let k = rng.below(keys);
                    if rng.coin() {
                        mops.push(M::R(k));
                    } else {
                        let v = sim.value();
                        recent.push(v);
                        if recent.len() > 64 {
                            recent.remove(0);
                        }
                        mops.push(M::W(k, v));
                    }
                }
                let text: Vec<String> = mops.iter().map(invoked).collect();
                sim.emit(p, false, &text)?;
                flight[p] = Some(mops);
                started += 1;
            }
            None => {}
        }
    }
    summary.ops = sim.index;
    Ok(summary)
}

/// Runs one injection on fresh keys; returns the completions it documents.
fn inject<W: Write>(
    sim: &mut Sim<'_, W>,
    fault: PredFault,
    fresh: &mut u64,
    phantoms: &mut u32,
) -> io::Result<Vec<u64>> {
    let mut key = || {
        *fresh += 1;
        *fresh - 1
    };
    match fault {
        PredFault::Phantom => {
            *phantoms += 1;
            let (j, k) = (key(), key());
            let (u, v) = (sim.injected_value(), sim.injected_value());
            if *phantoms % 2 == 1 {
                // Drop: R's predicate misses k although R saw W's j.
                let w = sim.run_alone(0, &[M::W(j, u), M::W(k, v)], |_| {})?;
                let r = sim.run_alone(1, &[M::R(j), M::Rp(P::Eq(v))], |text| {
                    text[1] = format!("[:rp {} {{}}]", P::Eq(v).edn());
                })?;
                Ok(vec![w, r])
            } else {
                // Add: R's predicate returns k = v, which W2 overwrote. W2
                // reads k = v first, so it follows W1 in k's version order
                // under every model (two blind writes could be ordered
                // either way, and W2 before W1 would explain R).
                sim.run_alone(0, &[M::W(k, v)], |_| {})?;
                let v2 = sim.injected_value();
                let w2 = sim.run_alone(0, &[M::W(j, u), M::R(k), M::W(k, v2)], |_| {})?;
                let r = sim.run_alone(1, &[M::R(j), M::Rp(P::Eq(v))], |text| {
                    text[1] = format!("[:rp {} {{{k} {v}}}]", P::Eq(v).edn());
                })?;
                Ok(vec![w2, r])
            }
        }
        PredFault::PredicateWriteSkew => {
            let (a, b) = (key(), key());
            let (va, vb) = (sim.injected_value(), sim.injected_value());
            sim.run_alone(0, &[M::W(a, va), M::W(b, vb)], |_| {})?;
            let pred = || P::In(vec![va, vb]);
            let (na, nb) = (sim.injected_value(), sim.injected_value());
            sim.run_together(&[
                (0, vec![M::Rp(pred()), M::W(a, na)]),
                (1, vec![M::Rp(pred()), M::W(b, nb)]),
            ])
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gen(opts: &PredGenOptions) -> (String, PredGenSummary) {
        let mut out = Vec::new();
        let s = generate_predicates(opts, &mut out).unwrap();
        (String::from_utf8(out).unwrap(), s)
    }

    /// Same options, same bytes; the transaction count is as asked.
    #[test]
    fn deterministic_and_sized() {
        let opts = PredGenOptions {
            txns: 200,
            faults: vec![PredFault::Phantom, PredFault::PredicateWriteSkew],
            seed: 5,
            ..PredGenOptions::default()
        };
        let (a, s) = gen(&opts);
        assert_eq!(a, gen(&opts).0);
        assert_eq!(s.ops as usize, a.lines().count());
        let oks = a.lines().filter(|l| l.contains(":type :ok")).count();
        // Normal transactions plus 2 (drop phantom) and 3 (write skew).
        assert_eq!(oks, 200 - 6 + 2 + 3);
        assert_eq!(s.injections.len(), 2);
        assert!(a.contains("[:rp [:between "));
    }
}
