//! Reports: Elle's result map, its EDN and JSON forms, explanation text.

pub mod files;
pub mod json_pprint;
pub mod names;
pub mod plot;

use crate::edn::Value;
use crate::model::{History, MopArg, MopFn};

/// The op at position `pos` as Elle prints it: a map with `:index :time
/// :type :process :f :value` first, then any extra keys from the source.
pub fn op_value(history: &History, pos: usize) -> Value {
    crate::read::op_map(history, &history.ops[pos])
}

/// A micro-op as an EDN vector `[f k v]`.
pub fn mop_value(history: &History, m: &crate::model::Mop) -> Value {
    let f = match m.f {
        MopFn::Read => Value::kw("r"),
        MopFn::Append => Value::kw("append"),
        MopFn::Write => Value::kw("w"),
        MopFn::Other(a) => history.atom_value(a),
    };
    let arg = match m.arg {
        MopArg::Nil => Value::Nil,
        MopArg::Atom(a) => history.atom_value(a),
        MopArg::List { .. } => Value::Vector(
            history
                .list(m.arg)
                .iter()
                .map(|&a| history.atom_value(a))
                .collect(),
        ),
    };
    Value::Vector(vec![f, history.atom_value(m.key), arg])
}
