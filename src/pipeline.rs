//! The whole check of one history: inference, cycle search, result map.

use crate::check::result::result_map;
use crate::check::{cycle_cases, CycleCase, CycleOptions, ExplainedCycle};
use crate::consistency as cm;
use crate::edn::Value;
use crate::infer::list_append::{self, ExtraGraph};
use crate::infer::rw_register::{self, RwOptions};
use crate::infer::Inference;
use crate::model::History;

pub use crate::check::outcome::{CheckOptions, Outcome, Validity};

/// Checks a list-append history as `elle.list-append/check` does. Fails only
/// on input no list-append analysis can use (see
/// [`list_append::validate`]).
pub fn check_list_append(
    history: &History,
    opts: &CheckOptions,
) -> Result<Outcome, crate::error::InputError> {
    list_append_with(history, opts, list_append::analyze)
}

/// [`check_list_append`], plus the reads of elements nobody appended (`G1a`
/// with `:writer nil`; Elle has no check for them): `--algorithm auto`.
pub fn check_list_append_exact(
    history: &History,
    opts: &CheckOptions,
) -> Result<Outcome, crate::error::InputError> {
    list_append_with(history, opts, list_append::analyze_exact)
}

type ListAnalysis =
    fn(&History, ExtraGraph) -> Result<Inference<'static>, crate::infer::Unanalyzable>;

fn list_append_with(
    history: &History,
    opts: &CheckOptions,
    analyze: ListAnalysis,
) -> Result<Outcome, crate::error::InputError> {
    list_append::validate(history)?;
    let clock = std::time::Instant::now();
    starting(opts, "inferring dependencies");
    match analyze(history, extra_graph(opts)) {
        Ok(inference) => Ok(check_inferred(history, opts, &inference, clock)),
        Err(e) => Ok(Outcome {
            problem: e.problem,
            ..Outcome::from_result(e.result)
        }),
    }
}

/// Tells the progress display (if any) that a phase starts.
fn starting(opts: &CheckOptions, phase: &str) {
    if let Some(p) = opts.progress {
        p(phase)
    }
}

/// Checks a read-write register history as `elle.rw-register/check` does,
/// with Elle's rw-register options (`rw`). Fails on input Elle's checker
/// throws on (see [`rw_register::analyze`]).
pub fn check_rw_register(
    history: &History,
    opts: &CheckOptions,
    rw: &RwOptions,
) -> Result<Outcome, crate::error::InputError> {
    let clock = std::time::Instant::now();
    starting(opts, "inferring dependencies");
    let inference = rw_register::analyze(history, extra_graph(opts), rw)?;
    Ok(check_inferred(history, opts, &inference, clock))
}

/// The order graph Elle adds for the reportable anomalies: real-time if any
/// `-realtime` type is reportable, else process if any `-process` type is.
pub(crate) fn extra_graph(opts: &CheckOptions) -> ExtraGraph {
    let reportable = opts.expectations.reportable();
    if reportable
        .iter()
        .any(|t| cm::realtime_anomaly_types().contains(t))
    {
        ExtraGraph::Realtime
    } else if reportable
        .iter()
        .any(|t| cm::process_anomaly_types().contains(t))
    {
        ExtraGraph::Process
    } else {
        ExtraGraph::None
    }
}

/// The workload-independent tail of a check: cycle search over the inferred
/// graph, then Elle's anomaly map and result map.
pub(crate) fn check_inferred(
    history: &History,
    opts: &CheckOptions,
    inference: &Inference<'_>,
    clock: std::time::Instant,
) -> Outcome {
    let exp = &opts.expectations;
    let reportable = exp.reportable();
    let phase = |name: &str| {
        if opts.verbose {
            eprintln!(
                "ellery: {name} done at {:.3} s",
                clock.elapsed().as_secs_f64()
            );
        }
    };
    let copts = CycleOptions {
        reportable: reportable.clone(),
        timeout: opts.cycle_search_timeout,
        elle_steps: opts.elle_steps,
        verbose: opts.verbose,
    };
    phase("inference");
    starting(opts, "searching for cycles");
    let analysis = cycle_cases(history, inference, &copts);
    let (cases, vertices) = (&analysis.cases, analysis.vertex_count);
    phase("cycle search");
    let mut all: Vec<(String, Vec<Value>)> = Vec::new();
    let mut push = |k: &str, v: Value| match all.iter_mut().find(|(t, _)| t == k) {
        Some((_, vs)) => vs.push(v),
        None => all.push((k.to_string(), vec![v])),
    };
    if vertices == 0 {
        push("empty-transaction-graph", Value::Bool(true));
    }
    let mut cycles = Vec::new();
    for case in cases {
        match case {
            CycleCase::Cycle(c) => {
                push(&c.kind, c.to_value(history));
                if reportable.contains(&c.kind.as_str()) {
                    cycles.push(c.clone());
                }
            }
            CycleCase::Exists { kind, value } => push(kind, value.clone()),
            CycleCase::Timeout(v) => push("cycle-search-timeout", v.clone()),
        }
    }
    for (k, vs) in inference.anomalies.entries() {
        for v in vs {
            push(k, v.clone());
        }
    }
    let seqs: Vec<&str> = inference
        .anomalies
        .types()
        .filter(|t| inference.anomalies.is_seq(t))
        .collect();
    let result = result_map(exp, &all, &seqs);
    let plots = match opts.plot_max_bytes {
        Some(max) => plot_sources(history, inference, &analysis, &cycles, max),
        None => Vec::new(),
    };
    Outcome {
        cycles,
        plots,
        incompatible_keys: inference
            .anomalies
            .get("incompatible-order")
            .into_iter()
            .flatten()
            .filter_map(|case| case.get_kw("key").cloned())
            .collect(),
        ..Outcome::from_result(result)
    }
}

/// DOT sources for every SCC (`sccs/<i>`) and every reported cycle
/// (`<type>/<i>`), as Elle plots them.
fn plot_sources(
    history: &History,
    inference: &crate::infer::Inference<'_>,
    analysis: &crate::check::CycleAnalysis,
    cycles: &[ExplainedCycle],
    max_bytes: usize,
) -> Vec<(String, Option<String>)> {
    let out = |v: u32| analysis.graph.out_ids(v).to_vec();
    let explain = |a: u32, b: u32| inference.explain(history, a, b);
    let dot =
        |ops: &[u32]| crate::report::plot::dot_source(history, ops, &out, &explain, max_bytes);
    let mut plots = Vec::new();
    for (i, scc) in analysis.sccs.iter().enumerate() {
        plots.push((format!("sccs/{i}"), dot(scc)));
    }
    let mut seen: Vec<&str> = Vec::new();
    for c in cycles {
        let i = seen.iter().filter(|k| **k == c.kind).count();
        seen.push(&c.kind);
        plots.push((format!("{}/{i}", c.kind), dot(&c.ops)));
    }
    plots
}

/// Checks a cas-register history for linearizability (Knossos's
/// `cas-register` model; see [`crate::check::linearizable`] for the
/// algorithms and the result map). Fails on input that is not a
/// cas-register history (unknown `:f`, a `:cas` value that is not
/// `[old new]`, …), pointing at the op.
pub fn check_cas_register(
    history: &History,
    opts: &CheckOptions,
) -> Result<Outcome, crate::error::InputError> {
    use crate::check::linearizable::{check_history, LinOptions};
    let started = std::time::Instant::now();
    let lin = LinOptions {
        deadline: opts.linearizable_timeout.map(|t| started + t),
        ..LinOptions::default()
    };
    let result = check_history(history, &lin)?;
    if opts.verbose {
        eprintln!(
            "ellery: linearizability checked in {:.3} s",
            started.elapsed().as_secs_f64()
        );
    }
    Ok(Outcome::from_result(result))
}
