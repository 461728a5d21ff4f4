//! Register operations from Knossos-style histories (`:read`, `:write`,
//! `:cas`), for the linearizability checker in
//! [`crate::check::linearizable`].
//!
//! Each client invocation with `:f` `:read`, `:write` or `:cas` becomes at
//! most one [`RegOp`]:
//!
//! * `:read`: the value is the one the `:ok` completion observed (the
//!   invocation's value is ignored; it is usually `nil`). A read that did not
//!   complete `:ok` constrains nothing and is dropped.
//! * `:write v`: writes `v`.
//! * `:cas [old new]`: sets the register to `new` if it holds `old`. A `:cas`
//!   that completes `:ok` changed `old` to `new`.
//! * A `:fail` completion means the op did not happen: it is dropped (Knossos
//!   semantics). An `:info` completion, or none at all, means the op may take
//!   effect at any time after its invocation, or never ("crashed").
//!
//! **Independent keys.** Histories of `jepsen.independent` wrap every value in
//! a `[key value]` tuple (`{:f :cas, :value [k [old new]]}`, reads invoked
//! with `[k nil]`). A history is taken as independent when some read is
//! invoked with a 2-vector value or some `:cas` carries `[k [old new]]`; then
//! every op must carry a tuple, and each key is a separate register.
//!
//! **Time.** An op's invocation and completion are its positions in the
//! history (file order), so they are distinct and strictly ordered; a crashed
//! op completes at [`NEVER`].
//!
//! Values are interned densely per key ([`KeyHistory::values`]): [`NIL`]
//! (0) is `nil`, the register's initial value.

use crate::edn::{pr_str, Value};
use crate::error::InputError;
use crate::model::{History, OpType, OpValue};
use hashbrown::HashMap;

/// The interned id of `nil`, the initial value of every register.
pub const NIL: u32 = 0;

/// The completion time of a crashed op: after everything.
pub const NEVER: u32 = u32::MAX;

/// What a register op does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RegFn {
    /// Reads value `a`.
    Read,
    /// Writes value `a`.
    Write,
    /// Sets the register to `b` if it holds `a`.
    Cas,
}

/// One register operation (an invocation and its completion).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RegOp {
    /// What it does.
    pub f: RegFn,
    /// The value read, written, or expected (`cas`).
    pub a: u32,
    /// The new value of a `cas` (unused otherwise).
    pub b: u32,
    /// Position of the invocation in [`History::ops`].
    pub invoke: u32,
    /// Position of the `:ok` completion, or [`NEVER`] for a crashed op.
    pub complete: u32,
}

impl RegOp {
    /// Whether the op completed `:ok` (it certainly took effect).
    pub fn ok(&self) -> bool {
        self.complete != NEVER
    }
}

/// The ops on one register, in invocation order.
#[derive(Clone, Debug, Default)]
pub struct KeyHistory {
    /// The key (`None` unless the history is independent).
    pub key: Option<Value>,
    /// Its ops.
    pub ops: Vec<RegOp>,
    /// The values its ops carry, interned densely for this key:
    /// `values[id]`; `values[0]` is `nil`.
    pub values: Vec<Value>,
}

impl KeyHistory {
    fn new(key: Option<Value>) -> KeyHistory {
        KeyHistory {
            key,
            ops: Vec::new(),
            values: Vec::new(),
        }
    }
}

/// A history as registers.
#[derive(Clone, Debug, Default)]
pub struct Registers {
    /// Whether values were `[key value]` tuples.
    pub independent: bool,
    /// One entry per key (a single entry, with `key: None`, otherwise), in
    /// order of first invocation.
    pub keys: Vec<KeyHistory>,
}

fn value_of(history: &History, v: OpValue) -> Option<&Value> {
    match v {
        OpValue::Nil => Some(&Value::Nil),
        OpValue::Other(i) => Some(&history.other_values[i as usize]),
        // A micro-op vector (e.g. `[]`): never a register value.
        OpValue::Mops { .. } => None,
    }
}

/// The `:value` of an op as written in the source, for messages.
fn printed_value(history: &History, pos: usize) -> String {
    let m = history.op_value(pos);
    pr_str(m.get_kw("value").unwrap_or(&Value::Nil))
}

fn pair(v: &Value) -> Option<(&Value, &Value)> {
    match v {
        Value::Vector(xs) | Value::List(xs) if xs.len() == 2 => Some((&xs[0], &xs[1])),
        _ => None,
    }
}

/// Interns register values; `nil` is [`NIL`].
struct Values {
    ids: HashMap<Value, u32>,
    values: Vec<Value>,
}

impl Values {
    fn new() -> Values {
        let mut ids = HashMap::new();
        ids.insert(Value::Nil, NIL);
        Values {
            ids,
            values: vec![Value::Nil],
        }
    }

    fn id(&mut self, v: &Value) -> u32 {
        if let Some(&id) = self.ids.get(v) {
            return id;
        }
        let id = self.values.len() as u32;
        self.values.push(v.clone());
        self.ids.insert(v.clone(), id);
        id
    }
}

/// Turns a history's client ops into register ops, per key. Fails on an
/// unknown `:f`, a `:cas` whose value is not `[old new]`, or (independent
/// histories) a value that is not a `[key value]` tuple, pointing at the op.
// Long (about 135 lines): one pass over the ops with the per-`:f` decoding
// and its error messages inline, so every error points at its op.
pub fn registers(history: &History) -> Result<Registers, InputError> {
    let interner = &history.interner;
    let read_f = interner.lookup(&Value::kw("read"));
    let write_f = interner.lookup(&Value::kw("write"));
    let cas_f = interner.lookup(&Value::kw("cas"));
    let fn_of = |pos: usize| -> Result<RegFn, InputError> {
        let f = Some(history.ops[pos].f);
        if f == read_f {
            Ok(RegFn::Read)
        } else if f == write_f {
            Ok(RegFn::Write)
        } else if f == cas_f {
            Ok(RegFn::Cas)
        } else {
            Err(history.error_at(
                pos,
                format!(
                    "expected :f to be one of :read :write :cas (a cas-register history), found {}",
                    pr_str(&history.atom_value(history.ops[pos].f))
                ),
            ))
        }
    };
    // Independent histories announce themselves by read invocations with a
    // tuple, or cas values [k [old new]].
    let mut independent = false;
    for (pos, op) in history.ops.iter().enumerate() {
        if op.op_type != OpType::Invoke {
            continue;
        }
        let Ok(f) = fn_of(pos) else { continue };
        let v = value_of(history, op.value);
        let tuple = match (f, v.and_then(pair)) {
            (RegFn::Read, Some(_)) => true,
            (RegFn::Cas, Some((_, inner))) => pair(inner).is_some(),
            _ => false,
        };
        if tuple {
            independent = true;
            break;
        }
    }
    let mut key_ids: HashMap<Value, usize> = HashMap::new();
    let mut keys: Vec<KeyHistory> = Vec::new();
    let mut interners: Vec<Values> = Vec::new();
    if !independent {
        keys.push(KeyHistory::new(None));
        interners.push(Values::new());
    }
    // Splits an op's value into (key, inner value) in independent mode.
    let split = |pos: usize| -> Result<(Option<&Value>, &Value), InputError> {
        let op = &history.ops[pos];
        let v = value_of(history, op.value);
        if !independent {
            return v.map(|v| (None, v)).ok_or_else(|| {
                history.error_at(
                    pos,
                    format!(
                        "expected a register value, found {}",
                        printed_value(history, pos)
                    ),
                )
            });
        }
        match v.and_then(pair) {
            Some((k, inner)) => Ok((Some(k), inner)),
            None => Err(history.error_at(
                pos,
                format!(
                    "expected a [key value] tuple (the history uses jepsen.independent keys), found {}",
                    printed_value(history, pos)
                ),
            )),
        }
    };
    for (pos, op) in history.ops.iter().enumerate() {
        if op.op_type != OpType::Invoke {
            continue;
        }
        let f = fn_of(pos)?;
        let completion = history.completion_of(pos);
        let status = completion.map(|c| history.ops[c].op_type);
        let (key, inner) = split(pos)?;
        // The values the op carries: (a, b).
        let carried = match f {
            RegFn::Cas => match pair(inner) {
                Some((old, new)) => (old, new),
                None => {
                    return Err(history.error_at(
                        pos,
                        format!(
                            "expected a :cas value [old new], found {}",
                            printed_value(history, pos)
                        ),
                    ))
                }
            },
            RegFn::Write => (inner, &Value::Nil),
            RegFn::Read => match (status, completion) {
                (Some(OpType::Ok), Some(c)) => (split(c)?.1, &Value::Nil),
                _ => (&Value::Nil, &Value::Nil),
            },
        };
        let complete = match (status, completion) {
            (Some(OpType::Fail), _) => continue,
            (Some(OpType::Ok), Some(c)) => c as u32,
            // A read that did not complete :ok constrains nothing.
            _ if f == RegFn::Read => continue,
            _ => NEVER,
        };
        let k = match key {
            None => 0,
            Some(k) => match key_ids.get(k) {
                Some(&i) => i,
                None => {
                    key_ids.insert(k.clone(), keys.len());
                    keys.push(KeyHistory::new(Some(k.clone())));
                    interners.push(Values::new());
                    keys.len() - 1
                }
            },
        };
        let values = &mut interners[k];
        let (a, b) = (values.id(carried.0), values.id(carried.1));
        keys[k].ops.push(RegOp {
            f,
            a,
            b,
            invoke: pos as u32,
            complete,
        });
    }
    for (k, v) in keys.iter_mut().zip(interners) {
        k.values = v.values;
    }
    Ok(Registers { independent, keys })
}
