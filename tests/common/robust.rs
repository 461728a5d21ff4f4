//! Helpers shared by the `ellery robust` tests (included with `#[path]`).
#![allow(dead_code)]

use ellery::robust::exec::{axioms_hold_at, replay, Execution};
use ellery::robust::syntax::Model;
use ellery::robust::witness::Witness;
use ellery::robust::{self, Engine, Loaded, Method, Options, Verdict};

/// Whether the execution (ar = slot order) is valid under `models` (and the
/// file's annotations).
pub fn valid(l: &Loaded, models: &[Model], ex: &Execution) -> bool {
    let ax = robust::axioms(&l.prog, models);
    let reps = replay(&l.prog, &l.an, ex);
    let types: Vec<usize> = ex.descs.iter().map(|&d| l.an.descs[d].txn).collect();
    (0..ex.descs.len()).all(|j| axioms_hold_at(&ax, &types, &ex.vis, &reps, j))
}

/// The k = 2 witness with one instance of types `a` and `b`, in either
/// arbitration order, if there is one.
pub fn pair_witness(
    l: &Loaded,
    models: &[Model],
    engine: Engine,
    a: usize,
    b: usize,
) -> Option<Box<Witness>> {
    let axioms = robust::axioms(&l.prog, models);
    let all = vec![true; l.prog.txns.len()];
    [[a, b], [b, a]].iter().find_map(|p| {
        match robust::bounded_among(l, &axioms, 2, engine, &all, &[Some(p[0]), Some(p[1])], None) {
            Verdict::NotRobust(w) => Some(w),
            _ => None,
        }
    })
}

/// The descriptor of `name(params)`.
pub fn desc(l: &Loaded, name: &str, params: &[i64]) -> usize {
    let t = l.prog.txns.iter().position(|t| t.name == name).unwrap();
    l.an.descs
        .iter()
        .position(|d| d.txn == t && d.params == params)
        .unwrap_or_else(|| panic!("{name}{params:?}"))
}

/// Query options: `models`, up to `k` instances, `prove` by a method or
/// not, on `engine`, with a generous timeout.
pub fn opts(models: &[Model], k: usize, prove: Option<Method>, engine: Engine) -> Options {
    Options {
        models: models.to_vec(),
        k,
        prove,
        engine,
        timeout: Some(std::time::Duration::from_secs(60)),
    }
}

/// The number in environment variable `name` (a test's size knob), else
/// `default`.
pub fn env_count(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}
