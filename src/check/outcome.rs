//! What every checking algorithm shares: the options of a check
//! ([`CheckOptions`], [`Algorithm`]) and its outcome ([`Outcome`],
//! [`Validity`]). They live below the algorithms, so an algorithm depends on
//! these and not on the orchestrator ([`crate::route`]).

use crate::check::result::Expectations;
use crate::check::ExplainedCycle;
use crate::edn::Value;
use crate::infer::rw_register::RwOptions;
use crate::model::Workload;
use std::time::Duration;

/// A checking algorithm.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Algorithm {
    /// The fast path whose preconditions hold, else the workload inference.
    #[default]
    Auto,
    /// The workload's Elle-style inference.
    Infer,
    /// The mini-transaction fast path (MTC).
    Mini,
    /// Lightweight-transaction (CAS register) linearizability by the
    /// unique-value chain.
    Lwt,
    /// The SAT-based checker (rw-register serializability).
    Sat,
}

impl Algorithm {
    /// The name as given on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Auto => "auto",
            Algorithm::Infer => "infer",
            Algorithm::Mini => "mini",
            Algorithm::Lwt => "lwt",
            Algorithm::Sat => "sat",
        }
    }
}

/// Options for checking a history.
#[derive(Clone, Debug)]
pub struct CheckOptions {
    /// The history's workload; `None` detects it ([`Workload::detect`]).
    pub workload: Option<Workload>,
    /// Elle's rw-register options (ignored by other workloads).
    pub rw: RwOptions,
    /// Expected models and anomalies.
    pub expectations: Expectations,
    /// Time allowed to search one SCC (Elle's `:cycle-search-timeout`).
    pub cycle_search_timeout: Duration,
    /// Path extensions the Elle-order search may take per anomaly type
    /// before ellery's own search takes over.
    pub elle_steps: u64,
    /// Print phase timings to standard error. Only the SAT checker still
    /// reads it (its statistics); everything else reports through
    /// [`CheckOptions::trace`].
    pub verbose: bool,
    /// Receives the lines of `--verbose` (which path ran and why, phase
    /// timings), without the `ellery: ` prefix; `None`: none are made. The
    /// library never prints them itself.
    pub trace: Option<fn(&str)>,
    /// Prepare plots (DOT sources) of SCCs and reported cycles no larger
    /// than this many bytes; `None` prepares none.
    pub plot_max_bytes: Option<usize>,
    /// Called with the name of each phase as it starts (a progress display).
    pub progress: Option<fn(&str)>,
    /// Time allowed for a cas-register linearizability search (all keys);
    /// past it a key is `:valid? :unknown`. `None`: no limit.
    pub linearizable_timeout: Option<Duration>,
    /// Which checking algorithm to run (see [`crate::route`]).
    pub algorithm: Algorithm,
    /// Time allowed for the SAT checker ([`crate::check::sat`]); past it the
    /// verdict is unknown (or, under `--algorithm auto`, the inference's
    /// answer stands). `None`: no limit.
    pub sat_timeout: Option<Duration>,
    /// Cycle conflicts the SAT checker may raise in each independent part
    /// of a history before its verdict is unknown; `None`: no limit. Set
    /// by `--algorithm auto` for its confirmations (a bound that, unlike
    /// the timeout, gives the same answer on every machine).
    pub sat_conflict_budget: Option<usize>,
    /// When the SAT checker looks for a violation in a projection of the
    /// history onto a few keys ([`crate::check::sat::Projection`]; tests
    /// force it).
    pub sat_projection: crate::check::sat::Projection,
    /// Under `--algorithm auto`, let the exact (SAT) checker take the
    /// rw-register histories the inference misreads and confirm a valid
    /// inferred verdict (see [`crate::route`]). Off in elle-cli mode, whose
    /// verdicts stay elle-cli's.
    pub confirm_with_sat: bool,
    /// Options of the Jepsen models (bank, long-fork; see
    /// [`crate::check::jepsen`]).
    pub jepsen: crate::check::jepsen::JepsenOptions,
    /// Warn (once) about options the history's workload does not use. Off
    /// in elle-cli mode, whose `-c`/`-a` always carry elle-cli's defaults.
    pub warn_unused_options: bool,
    /// Whether the history's ops carry real time (their order in the file
    /// is the order clients saw them). False for the peers' formats, whose
    /// conversion invents it: the exact checker then never uses real-time
    /// order unless a model asks for it (see [`crate::check::sat`]'s
    /// stronger-model attempts).
    pub real_time_recorded: bool,
}

impl Default for CheckOptions {
    fn default() -> Self {
        CheckOptions {
            workload: None,
            rw: RwOptions::default(),
            expectations: Expectations::default(),
            cycle_search_timeout: Duration::from_millis(1000),
            elle_steps: 2_000_000,
            verbose: false,
            trace: None,
            plot_max_bytes: None,
            progress: None,
            linearizable_timeout: Some(Duration::from_secs(60)),
            algorithm: Algorithm::Auto,
            sat_timeout: Some(Duration::from_secs(60)),
            sat_conflict_budget: None,
            sat_projection: Default::default(),
            confirm_with_sat: true,
            jepsen: Default::default(),
            warn_unused_options: true,
            real_time_recorded: true,
        }
    }
}

impl CheckOptions {
    /// Sends a line to [`CheckOptions::trace`], if set (only then is the
    /// line made).
    pub fn say(&self, line: impl FnOnce() -> String) {
        if let Some(trace) = self.trace {
            trace(&line());
        }
    }
}

/// A verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Validity {
    /// `:valid? true`
    Valid,
    /// `:valid? false`
    Invalid,
    /// `:valid? :unknown`
    Unknown,
}

/// Everything a check produces.
#[derive(Debug)]
pub struct Outcome {
    /// Elle's result map.
    pub result: Value,
    /// The verdict in `result`.
    pub validity: Validity,
    /// Reportable cycles, by type in result order, for explanation files.
    pub cycles: Vec<ExplainedCycle>,
    /// Why the history could not be analysed, when Elle answers
    /// `:valid? :unknown` for that reason (e.g. duplicate appends).
    pub problem: Option<crate::error::InputError>,
    /// Plots as (path stem relative to the output directory, DOT source or
    /// `None` when too large): `sccs/<i>` and `<anomaly-type>/<i>`.
    pub plots: Vec<(String, Option<String>)>,
    /// Keys whose reads disagree on the order of appends (reported or not),
    /// for `incompatible-order/<key>.html`.
    pub incompatible_keys: Vec<Value>,
}

impl Validity {
    /// The verdict in a result map's `:valid?`.
    pub fn of(result: &Value) -> Validity {
        match result.get_kw("valid?") {
            Some(Value::Bool(true)) => Validity::Valid,
            Some(Value::Bool(false)) => Validity::Invalid,
            _ => Validity::Unknown,
        }
    }
}

impl Outcome {
    /// The outcome of a result map alone: its verdict, no cycles, plots,
    /// problem or incompatible keys (fill those in with struct update
    /// syntax).
    pub fn from_result(result: Value) -> Outcome {
        Outcome {
            validity: Validity::of(&result),
            result,
            cycles: Vec::new(),
            problem: None,
            plots: Vec::new(),
            incompatible_keys: Vec::new(),
        }
    }
}
