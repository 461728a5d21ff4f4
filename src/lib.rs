//! ellery: a fast checker for Jepsen transactional histories that gives
//! Elle's answers in Elle's vocabulary.
//!
//! The module tree follows the pipeline:
//! [`read`] (history files) → [`model`] (shared transaction model) →
//! [`infer`] (workload-specific dependency inference) → [`graph`] (dependency
//! graphs, SCCs, cycle search) → [`check`] (anomaly search per SCC) and
//! [`consistency`] (Elle's model lattice) → [`report`] (result maps,
//! explanations).

#![warn(missing_docs)]

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
pub mod pipeline;
pub mod read;
pub mod report;
pub mod route;
pub mod watch;
