//! Workload inference: from a history to a dependency graph, the non-cycle
//! anomalies found on the way, and an explainer that justifies each edge.

pub mod list_append;
pub mod mini;
pub mod order_graphs;
pub mod predicates;
pub mod rw_register;
pub mod txn;

use crate::edn::Value;
use crate::graph::Rels;
use crate::model::History;

/// Anomalies by Elle type name, in the order they were added.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Anomalies {
    entries: Vec<(String, Vec<Value>)>,
    /// Types whose cases Elle prints as a sequence `(…)` rather than a
    /// vector `[…]`.
    seqs: Vec<String>,
}

impl Anomalies {
    /// Adds cases to a type (creating it if new).
    pub fn add(&mut self, kind: &str, cases: Vec<Value>) {
        if let Some((_, v)) = self.entries.iter_mut().find(|(k, _)| k == kind) {
            v.extend(cases);
        } else {
            self.entries.push((kind.to_string(), cases));
        }
    }

    /// Adds cases only when there are some.
    pub fn add_nonempty(&mut self, kind: &str, cases: Vec<Value>) {
        if !cases.is_empty() {
            self.add(kind, cases);
        }
    }

    /// Adds cases only when there are some, to be printed as a sequence
    /// `(…)` as Elle prints the results of its `seq`-returning checks.
    pub fn add_seq_nonempty(&mut self, kind: &str, cases: Vec<Value>) {
        if !cases.is_empty() {
            self.add(kind, cases);
            if !self.is_seq(kind) {
                self.seqs.push(kind.to_string());
            }
        }
    }

    /// Whether a type's cases print as a sequence rather than a vector.
    pub fn is_seq(&self, kind: &str) -> bool {
        self.seqs.iter().any(|k| k == kind)
    }

    /// The types present.
    pub fn types(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|(k, _)| k.as_str())
    }

    /// Cases of one type.
    pub fn get(&self, kind: &str) -> Option<&Vec<Value>> {
        self.entries.iter().find(|(k, _)| k == kind).map(|(_, v)| v)
    }

    /// Whether a type is present.
    pub fn contains(&self, kind: &str) -> bool {
        self.get(kind).is_some()
    }

    /// All entries.
    pub fn entries(&self) -> &[(String, Vec<Value>)] {
        &self.entries
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// The kind of one step of a cycle, as Elle names it in `:steps`.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub enum StepKind {
    /// Write-write.
    Ww,
    /// Write-read.
    Wr,
    /// Read-write (anti-dependency).
    Rw,
    /// Process order.
    Process,
    /// Real-time order.
    Realtime,
}

impl StepKind {
    /// Elle's keyword name.
    pub fn name(self) -> &'static str {
        match self {
            StepKind::Ww => "ww",
            StepKind::Wr => "wr",
            StepKind::Rw => "rw",
            StepKind::Process => "process",
            StepKind::Realtime => "realtime",
        }
    }
}

/// Why transaction `b` depends on transaction `a`: the data Elle prints as a
/// step, plus the sentence its explanation file uses.
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    /// The step's type.
    pub kind: StepKind,
    /// The step as Elle prints it in `:steps`.
    pub data: Value,
    /// Renders the explanation given names for a and b.
    pub text: StepText,
}

/// The parts of a step's explanation sentence.
#[derive(Clone, Debug, PartialEq)]
pub enum StepText {
    /// list-append ww: `B appended v' after A appended v to k`.
    AppendWw {
        /// The key, as Clojure prints it.
        key: String,
        /// The earlier (or only) value, as Clojure prints it.
        value: String,
        /// The later value, as Clojure prints it.
        value2: String,
    },
    /// list-append wr: `B observed A's append of v to key k`.
    AppendWr {
        /// The key, as Clojure prints it.
        key: String,
        /// The earlier (or only) value, as Clojure prints it.
        value: String,
    },
    /// list-append rw from the initial state.
    AppendRwInit {
        /// The key, as Clojure prints it.
        key: String,
        /// The later value, as Clojure prints it.
        value2: String,
    },
    /// list-append rw.
    AppendRw {
        /// The key, as Clojure prints it.
        key: String,
        /// The later value, as Clojure prints it.
        value2: String,
    },
    /// rw-register ww: `A set key k to v, and B set it to v', ...`.
    RegisterWw {
        /// The key, as Clojure prints it.
        key: String,
        /// The earlier (or only) value, as Clojure prints it.
        value: String,
        /// The later value, as Clojure prints it.
        value2: String,
    },
    /// rw-register rw: `A read key k = v, and B set it to v', ...`.
    RegisterRw {
        /// The key, as Clojure prints it.
        key: String,
        /// The earlier (or only) value, as Clojure prints it.
        value: String,
        /// The later value, as Clojure prints it.
        value2: String,
    },
    /// rw-register wr: `A wrote k = v, which was read by B`.
    RegisterWr {
        /// The key, as Clojure prints it.
        key: String,
        /// The earlier (or only) value, as Clojure prints it.
        value: String,
    },
    /// A predicate step (`ellery`'s exact checker): the sentence with
    /// `{a}` and `{b}` standing for the two transactions' names.
    Predicate {
        /// The sentence.
        template: String,
    },
    /// `process p executed A before B`.
    Process {
        /// The process.
        process: i64,
    },
    /// `A completed at index i, ... before the invocation of B, at index j`.
    Realtime {
        /// Index of A's completion.
        a_index: u64,
        /// Index of B's invocation.
        b_index: u64,
        /// Time of A's completion (ns).
        a_time: i64,
        /// Time of B's invocation (ns).
        b_time: i64,
    },
}

impl Step {
    /// The sentence explaining this step, with names for both transactions.
    pub fn render(&self, a: &str, b: &str) -> String {
        match &self.text {
            StepText::AppendWw { key, value, value2 } => {
                format!("{b} appended {value2} after {a} appended {value} to {key}")
            }
            StepText::Predicate { template } => template.replace("{a}", a).replace("{b}", b),
            StepText::AppendWr { key, value } => {
                format!("{b} observed {a}'s append of {value} to key {key}")
            }
            StepText::AppendRwInit { key, value2 } => format!(
                "{a} observed the initial (nil) state of {key}, which {b} created by appending {value2}"
            ),
            StepText::AppendRw { key, value2 } => {
                format!("{a} did not observe {b}'s append of {value2} to {key}")
            }
            StepText::RegisterWw { key, value, value2 } => format!(
                "{a} set key {key} to {value}, and {b} set it to {value2}, which came later in the version order"
            ),
            StepText::RegisterRw { key, value, value2 } => format!(
                "{a} read key {key} = {value}, and {b} set it to {value2}, which came later in the version order"
            ),
            StepText::RegisterWr { key, value } => {
                format!("{a} wrote {key} = {value}, which was read by {b}")
            }
            StepText::Process { process } => {
                format!("process {process} executed {a} before {b}")
            }
            StepText::Realtime {
                a_index,
                b_index,
                a_time,
                b_time,
            } => {
                let dt = b_time - a_time;
                let gap = if dt > 0 {
                    format!(" {:.3} seconds", dt as f64 / 1e9)
                } else {
                    " just".to_string()
                };
                format!(
                    "{a} completed at index {a_index},{gap} before the invocation of {b}, at index {b_index}"
                )
            }
        }
    }
}

/// Explains dependency edges between transactions (positions of completion
/// ops in the history).
pub trait PairExplainer: Sync {
    /// Why `b` depends on `a`, or `None` if this explainer sees no reason.
    fn explain(&self, history: &History, a: u32, b: u32) -> Option<Step>;

    /// Builds now whatever the explainer builds when first asked, so that
    /// the time it takes is not the cycle search's (a search stops at its
    /// deadline with the best cycle so far).
    fn prepare(&self, _history: &History) {}
}

/// The result of inferring a workload's dependencies.
pub struct Inference<'h> {
    /// Dependency edges between transactions (positions in `history.ops`).
    pub edges: Vec<(u32, u32, Rels)>,
    /// An order graph whose edges belong to the inference but are not in
    /// `edges`: generated when the graph is built ([`Inference::graph`]),
    /// never held as a list (a million-transaction history has millions of
    /// real-time edges: issue 23). [`txn::ExtraGraph::None`] when `edges`
    /// holds them all.
    pub order: txn::ExtraGraph,
    /// Non-cycle anomalies found while inferring, in Elle's insertion order.
    pub anomalies: Anomalies,
    /// Transactions that are vertices of Elle's graph even though none of
    /// their edges survived (e.g. self-edges Elle removes); they count
    /// towards the graph's size, which decides `:empty-transaction-graph`.
    pub vertices: Vec<u32>,
    /// Explainers, consulted in order (Elle's combined explainer).
    pub explainers: Vec<Box<dyn PairExplainer + 'h>>,
}

impl Inference<'_> {
    /// The dependency graph on the history's `n` op positions: `edges`
    /// and `order`'s edges, parallel ones not merged yet (the cycle
    /// search merges them only when the graph has a cycle).
    pub fn graph(&self, history: &History) -> crate::graph::UnmergedGraph {
        let order = self.order;
        crate::graph::DiGraph::unmerged_from_edges_and(
            history.ops.len(),
            &self.edges,
            |sources, f| order.for_each_edge_from(history, sources, f),
        )
    }

    /// [`Inference::graph`] without its real-time edges when `order` is
    /// the real-time order: what [`crate::check::cycle_cases_in`] takes,
    /// which adds them only when the graph turns out to have a cycle
    /// (issue 23: they are most of a big history's edges).
    pub fn graph_without_realtime(&self, history: &History) -> crate::graph::UnmergedGraph {
        match self.order {
            txn::ExtraGraph::Realtime => crate::graph::DiGraph::unmerged_from_edges_and(
                history.ops.len(),
                &self.edges,
                |_, _| {},
            ),
            _ => self.graph(history),
        }
    }

    /// Prepares every explainer ([`PairExplainer::prepare`]).
    pub fn prepare_explainers(&self, history: &History) {
        for e in &self.explainers {
            e.prepare(history);
        }
    }

    /// Every edge as a list: `edges`, then `order`'s (the list an
    /// inference with `order` left at `None` would hold).
    pub fn all_edges(self, history: &History) -> Vec<(u32, u32, Rels)> {
        let mut edges = self.edges;
        if self.order != txn::ExtraGraph::None {
            let mut count = 0;
            self.order.for_each_edge(history, &mut |_, _, _| count += 1);
            edges.reserve_exact(count);
            self.order
                .for_each_edge(history, &mut |a, b, r| edges.push((a, b, r)));
        }
        edges
    }

    /// Explains `a → b` with the first explainer that can.
    pub fn explain(&self, history: &History, a: u32, b: u32) -> Option<Step> {
        self.explainers
            .iter()
            .find_map(|e| e.explain(history, a, b))
    }
}

/// A workload-specific failure that Elle reports as a result map with
/// `:valid? :unknown` instead of a verdict (e.g. duplicate appends).
#[derive(Clone, Debug, PartialEq)]
pub struct Unanalyzable {
    /// The whole result map Elle returns.
    pub result: Value,
    /// Where the problem is, for a message on standard error.
    pub problem: Option<crate::error::InputError>,
}

/// Why an analyzer gives no [`Inference`]: the one error type of the
/// analyzers (list-append, rw-register, the mini-transaction path), so each
/// is a function `… -> Result<Inference, Refusal>` (the mini-transaction
/// path returns its inference with statistics).
#[derive(Clone, Debug, PartialEq)]
pub enum Refusal {
    /// Elle answers with a result map of its own, `:valid? :unknown` (e.g.
    /// duplicate appends).
    Unanalyzable(Unanalyzable),
    /// Input the analysis cannot use (where Elle's checker throws): the op
    /// and what was expected.
    Input(crate::error::InputError),
    /// The analysis's preconditions do not hold (the mini-transaction path):
    /// another algorithm must check the history.
    NotApplicable(mini::NotMini),
}

impl From<Unanalyzable> for Refusal {
    fn from(u: Unanalyzable) -> Refusal {
        Refusal::Unanalyzable(u)
    }
}

impl From<crate::error::InputError> for Refusal {
    fn from(e: crate::error::InputError) -> Refusal {
        Refusal::Input(e)
    }
}

impl From<mini::NotMini> for Refusal {
    fn from(n: mini::NotMini) -> Refusal {
        Refusal::NotApplicable(n)
    }
}
