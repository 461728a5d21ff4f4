//! Reports: Elle's result map, its EDN and JSON forms, explanation text.

pub mod files;
pub mod html;
pub mod json_pprint;
pub mod lattice;
pub mod names;
pub mod plot;

use crate::edn::Value;
use crate::model::History;

/// The op at position `pos` as Elle prints it ([`History::op_value`]).
pub fn op_value(history: &History, pos: usize) -> Value {
    history.op_value(pos)
}

/// A micro-op as an EDN vector `[f k v]` ([`History::mop_value`]).
pub fn mop_value(history: &History, m: &crate::model::Mop) -> Value {
    history.mop_value(m)
}
