//! Reports: Elle's result map, its EDN and JSON forms, explanation text.

use crate::edn::Value;
use crate::model::{History, MopArg, MopFn, OpValue};

/// The op at position `pos` as Elle prints it: a map with `:index :time
/// :type :process :f :value` first, then any extra keys from the source.
pub fn op_value(history: &History, pos: usize) -> Value {
    let op = &history.ops[pos];
    let value = match op.value {
        OpValue::Nil => Value::Nil,
        OpValue::Other(i) => history.other_values[i as usize].clone(),
        OpValue::Mops { .. } => Value::Vector(
            history
                .mops(op)
                .iter()
                .map(|m| mop_value(history, m))
                .collect(),
        ),
    };
    Value::Map(vec![
        (Value::kw("index"), Value::Int(op.index as i64)),
        (Value::kw("time"), Value::Int(op.time)),
        (Value::kw("type"), Value::kw(op.op_type.name())),
        (Value::kw("process"), Value::Int(op.process)),
        (Value::kw("f"), history.atom_value(op.f)),
        (Value::kw("value"), value),
    ])
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
