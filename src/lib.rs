//! ellery: a fast checker for Jepsen transactional histories that gives
//! Elle's answers in Elle's vocabulary.
//!
//! The module tree follows the pipeline:
//! [`read`] (history files) → [`model`] (shared transaction model) →
//! [`infer`] (workload-specific dependency inference) → [`graph`] (dependency
//! graphs, SCCs, cycle search) → [`check`](mod@check) (anomaly search per SCC) and
//! [`consistency`] (Elle's model lattice) → [`report`] (result maps,
//! explanations).
//!
//! One call checks a history, [`check()`]; [`route`] is the orchestrator
//! behind it (which algorithm, then the whole check):
//!
//! ```
//! use ellery::model::Format;
//! use ellery::{CheckOptions, Validity};
//!
//! // Each transaction reads what the other appended: a G1c cycle.
//! let text = "\
//! {:type :invoke, :process 0, :f :txn, :value [[:append :x 1] [:r :y nil]]}
//! {:type :invoke, :process 1, :f :txn, :value [[:append :y 1] [:r :x nil]]}
//! {:type :ok, :process 0, :f :txn, :value [[:append :x 1] [:r :y [1]]]}
//! {:type :ok, :process 1, :f :txn, :value [[:append :y 1] [:r :x [1]]]}
//! ";
//! let history = ellery::read::read_history_bytes(text.into(), "h.edn", Format::Edn)?;
//! // The workload (list-append) is detected; Elle's default models apply.
//! let outcome = ellery::check(&history, &CheckOptions::default())?;
//! assert_eq!(outcome.validity, Validity::Invalid);
//! let types = outcome.result.get_kw("anomaly-types").expect("listed");
//! assert_eq!(ellery::edn::pr_str(types), "(:G1c)");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![warn(missing_docs)]

pub mod alloc;
pub mod batch;
pub mod check;
pub mod cli;
pub mod consistency;
pub mod diff;
pub mod edn;
pub mod error;
pub mod gen;
pub mod graph;
pub mod infer;
pub mod internal;
pub mod limits;
pub mod model;
pub mod par;
pub mod read;
pub mod report;
pub mod robust;
pub mod route;
pub mod watch;

pub use check::outcome::{Algorithm, CheckOptions, Outcome, Validity};
pub use model::Workload;
pub use route::check;
