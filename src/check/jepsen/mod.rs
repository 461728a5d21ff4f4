//! Jepsen's own (non-transactional) checkers, as elle-cli runs them:
//! `bank` (elle-cli's `elle-cli.bank`, a copy of `jepsen.tests.bank`'s read
//! checker), `counter`, `set` and `set-full` (`jepsen.checker`) and
//! `long-fork` (`jepsen.tests.long-fork`), each with the semantics and result
//! keys of the Jepsen checker it stands for (Jepsen 0.3.11, the version
//! elle-cli 0.1.9 bundles).
//!
//! **Ops.** These checkers see *every* op of the history, not only client ops
//! (elle-cli's `long-fork.edn` has no `:process` at all), and their results
//! embed whole ops. So histories are read here as generic op maps
//! ([`JOp`], through the shared EDN/JSON parsers of [`crate::edn`]) rather
//! than into [`crate::model::History`], which keeps client ops only. Each op
//! is normalised as `jepsen.history` does: dense `:index` when the file has
//! none, `:time` -1 and `:process`/`:f`/`:value` nil when absent, printed
//! with `:index :time :type :process :f :value` first.
//!
//! **Errors.** Where the Jepsen checker throws (e.g. a counter `:add` of a
//! non-integer), `jepsen.checker/check-safe` turns the exception into
//! `{:valid? :unknown, :error …}`; so do these checkers, with a message in
//! place of the Java stack trace.

mod bank;
mod counter;
mod long_fork;
mod set;
mod set_full;

use crate::edn::order::{clojure_hasheq, clojure_map_order};
use crate::edn::{ParseError, Value};
use crate::error::InputError;
use crate::model::OpType;
use hashbrown::HashMap;
use std::cmp::Ordering;

/// The Jepsen models.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JepsenModel {
    /// elle-cli's bank checker: every read sums to the total.
    Bank,
    /// `jepsen.checker/counter`: reads within the bounds of the adds.
    Counter,
    /// `jepsen.checker/set`: a final read holds every acknowledged add.
    Set,
    /// `jepsen.checker/set-full`: per element, stable, lost or never read.
    SetFull,
    /// `jepsen.tests.long-fork`: group reads must be totally ordered.
    LongFork,
}

impl JepsenModel {
    /// The model's elle-cli name.
    pub fn name(self) -> &'static str {
        match self {
            JepsenModel::Bank => "bank",
            JepsenModel::Counter => "counter",
            JepsenModel::Set => "set",
            JepsenModel::SetFull => "set-full",
            JepsenModel::LongFork => "long-fork",
        }
    }
}

/// elle-cli's options for these models.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct JepsenOptions {
    /// long-fork: keys per read group (`-g`, elle-cli's default 0).
    pub group_size: i64,
    /// bank: negative balances allowed (`-n`).
    pub negative_balances: bool,
    /// bank: the total every read must sum to (`-o`; default: the first
    /// read's sum).
    pub total_amount: Option<i64>,
    /// bank: the largest transfer (`--max-transfer`; accepted as elle-cli
    /// does, and unused by its checker).
    pub max_transfer: Option<i64>,
}

/// One op, as `jepsen.history` sees it.
#[derive(Clone, Debug)]
pub struct JOp {
    /// `:index` (dense when the file has none).
    pub index: i64,
    /// `:time`, -1 when absent.
    pub time: i64,
    /// `:type`.
    pub op_type: OpType,
    /// The whole op map in Jepsen's key order, for results; `:process`,
    /// `:f` and `:value` are read from it (see [`JOp::process`]).
    pub map: Value,
    /// Positions of `:process`, `:f` and `:value` in `map`'s entries.
    fields: [u32; 3],
    /// 1-based line and column of the op's opening brace.
    pub at: (u32, u32),
}

impl JOp {
    fn field(&self, i: usize) -> &Value {
        match &self.map {
            Value::Map(es) => &es[self.fields[i] as usize].1,
            _ => &Value::Nil,
        }
    }

    /// `:process` (nil when absent).
    pub fn process(&self) -> &Value {
        self.field(0)
    }

    /// `:f` (nil when absent).
    pub fn f(&self) -> &Value {
        self.field(1)
    }

    /// `:value` (nil when absent).
    pub fn value(&self) -> &Value {
        self.field(2)
    }

    /// Whether `:f` is the keyword `name`.
    pub fn is_f(&self, name: &str) -> bool {
        matches!(self.f(), Value::Keyword(k) if k == name)
    }
}

/// A history of every op, with invocations and completions paired by
/// process.
#[derive(Clone, Debug, Default)]
pub struct JHistory {
    /// Ops in file order.
    pub ops: Vec<JOp>,
    /// For each op, its partner (completion of an invocation, invocation of
    /// a completion).
    pub pair: Vec<Option<usize>>,
    /// Where the history came from.
    pub origin: String,
}

impl JHistory {
    /// The completion of the invocation at `i`.
    pub fn completion(&self, i: usize) -> Option<&JOp> {
        (self.ops[i].op_type == OpType::Invoke)
            .then(|| self.pair[i].map(|j| &self.ops[j]))
            .flatten()
    }

    /// The invocation of the completion at `i`.
    pub fn invocation(&self, i: usize) -> Option<&JOp> {
        (self.ops[i].op_type != OpType::Invoke)
            .then(|| self.pair[i].map(|j| &self.ops[j]))
            .flatten()
    }

    /// An input error at op `i`.
    pub fn error_at(&self, i: usize, message: String) -> InputError {
        let (line, column) = self.ops.get(i).map_or((1, 1), |o| o.at);
        InputError {
            kind: Default::default(),
            file: self.origin.clone(),
            line,
            column,
            message,
        }
    }
}

/// Reads a history's ops from its bytes (`json`: elle-cli's JSON dialect,
/// else EDN: one map per line, or one vector or list of maps).
pub fn read_ops(bytes: &[u8], origin: &str, json: bool) -> Result<JHistory, InputError> {
    let forms = if json {
        json_forms(bytes)
    } else {
        edn_forms(bytes)
    }
    .map_err(|e| e.into_input_error(origin))?;
    let mut h = JHistory {
        origin: origin.to_string(),
        ..JHistory::default()
    };
    let mut indexed = None;
    let mut open: HashMap<Value, usize> = HashMap::new();
    // Line and column of each op, counted incrementally (ops come in
    // offset order; `line_col` from the start for each would be quadratic).
    let (mut line, mut line_start, mut scanned) = (1u32, 0usize, 0usize);
    for (n, (form, offset)) in forms.into_iter().enumerate() {
        for p in memchr::memchr_iter(b'\n', &bytes[scanned..offset]) {
            line += 1;
            line_start = scanned + p + 1;
        }
        scanned = offset;
        let column = 1 + String::from_utf8_lossy(&bytes[line_start..offset])
            .chars()
            .count() as u32;
        let at = (line, column);
        let err = |message: String| InputError {
            kind: Default::default(),
            file: origin.to_string(),
            line: at.0,
            column: at.1,
            message,
        };
        let Value::Map(mut entries) = form else {
            return Err(err(format!(
                "expected an op map, found {}",
                crate::edn::pr_str(&form)
            )));
        };
        let has_index = entries
            .iter()
            .any(|(k, _)| matches!(k, Value::Keyword(x) if x == "index"));
        let indexed = *indexed.get_or_insert(has_index);
        let mut get = |name: &str| -> Option<Value> {
            let p = entries
                .iter()
                .position(|(k, _)| matches!(k, Value::Keyword(x) if x == name))?;
            Some(entries.remove(p).1)
        };
        let index =
            match (get("index"), indexed) {
                (Some(Value::Int(i)), true) => i,
                (Some(v), true) => {
                    return Err(err(format!(
                        "expected an integer :index, found {}",
                        crate::edn::pr_str(&v)
                    )))
                }
                (None, true) => return Err(err(
                    "expected an op map with an :index (the first op has one), found one without"
                        .into(),
                )),
                (_, false) => n as i64,
            };
        let time = match get("time") {
            None | Some(Value::Nil) => -1,
            Some(Value::Int(t)) => t,
            Some(v) => {
                return Err(err(format!(
                    "expected an integer :time, found {}",
                    crate::edn::pr_str(&v)
                )))
            }
        };
        let type_value = get("type").unwrap_or(Value::Nil);
        let op_type = match &type_value {
            Value::Keyword(t) => OpType::from_name(t),
            _ => None,
        }
        .ok_or_else(|| err(crate::read::bad_type(&crate::edn::pr_str(&type_value))))?;
        let process = get("process").unwrap_or(Value::Nil);
        let f = get("f").unwrap_or(Value::Nil);
        let mut value = get("value").unwrap_or(Value::Nil);
        clj_value(&mut value);
        let i = h.ops.len();
        let mut partner = None;
        if op_type == OpType::Invoke {
            open.insert(process.clone(), i);
        } else if let Some(inv) = open.remove(&process) {
            partner = Some(inv);
            h.pair[inv] = Some(i);
        }
        let (map, fields) = op_map(index, time, [type_value, process, f, value], entries);
        h.pair.push(partner);
        h.ops.push(JOp {
            index,
            time,
            op_type,
            map,
            fields,
            at,
        });
    }
    Ok(h)
}

/// An op's map as Clojure holds it (`:index :time :type :process :f
/// :value` then the other `entries`, values made Clojure's, in Clojure's
/// hash-map order), and the positions of `:process`, `:f` and `:value` in it.
fn op_map(
    index: i64,
    time: i64,
    [type_value, process, f, value]: [Value; 4],
    entries: Vec<(Value, Value)>,
) -> (Value, [u32; 3]) {
    let mut map = vec![
        (Value::kw("index"), Value::Int(index)),
        (Value::kw("time"), Value::Int(time)),
        (Value::kw("type"), type_value),
        (Value::kw("process"), process),
        (Value::kw("f"), f),
        (Value::kw("value"), value),
    ];
    for (mut k, mut v) in entries {
        clj_value(&mut k);
        clj_value(&mut v);
        map.push((k, v));
    }
    clojure_map_order(&mut map, |(k, _)| clojure_hasheq(k));
    let pos = |name: &str| {
        map.iter()
            .position(|(k, _)| matches!(k, Value::Keyword(x) if x == name))
            .unwrap_or(0) as u32
    };
    let fields = [pos("process"), pos("f"), pos("value")];
    (Value::Map(map), fields)
}

/// Top-level EDN forms with their offsets; a file holding one vector or list
/// yields its elements (elle-cli's rule).
fn edn_forms(src: &[u8]) -> Result<Vec<(Value, usize)>, ParseError> {
    use crate::edn::parse::{parse_value_at, skip_ws};
    let mut scratch = Vec::new();
    let mut out = Vec::new();
    let mut pos = skip_ws(src, 0, &mut scratch)?;
    while pos < src.len() {
        let (v, next) = parse_value_at(src, pos)?;
        out.push((v, pos));
        pos = skip_ws(src, next, &mut scratch)?;
    }
    if out.len() == 1 && matches!(out[0].0, Value::Vector(_) | Value::List(_)) {
        // Re-read the elements one by one, for their offsets.
        let close = if matches!(out[0].0, Value::Vector(_)) {
            b']'
        } else {
            b')'
        };
        let mut inner = Vec::new();
        let mut pos = skip_ws(src, out[0].1 + 1, &mut scratch)?;
        while pos < src.len() && src[pos] != close {
            let (v, next) = parse_value_at(src, pos)?;
            inner.push((v, pos));
            pos = skip_ws(src, next, &mut scratch)?;
        }
        return Ok(inner);
    }
    Ok(out)
}

/// The op objects of a JSON history (an array, or objects one after
/// another), in elle-cli's dialect, with their offsets.
fn json_forms(src: &[u8]) -> Result<Vec<(Value, usize)>, ParseError> {
    use crate::edn::json::{json_op, JsonParser};
    let mut p = JsonParser::new(src, 0);
    let mut out = Vec::new();
    p.skip_ws();
    let array = p.peek() == Some(b'[');
    if array {
        p.pos += 1;
    }
    loop {
        p.skip_ws();
        match p.peek() {
            None if !array => return Ok(out),
            Some(b']') if array => {
                p.pos += 1;
                p.skip_ws();
                if p.pos < src.len() {
                    return Err(p.expected("end of input after the top-level array"));
                }
                return Ok(out);
            }
            Some(b'{') => {
                let start = p.pos;
                out.push((json_op(p.value()?), start));
            }
            _ => return Err(p.expected("an op object")),
        }
        p.skip_ws();
        if array {
            match p.peek() {
                Some(b',') => p.pos += 1,
                Some(b']') => {}
                _ => return Err(p.expected(", or ]")),
            }
        }
    }
}

/// Checks a history with a Jepsen model and returns the result map; fails
/// only where the Jepsen checker fails outright rather than answering
/// `:unknown` (the counter's assertions on op values).
pub fn check(model: JepsenModel, h: &JHistory, opts: &JepsenOptions) -> Result<Value, InputError> {
    Ok(match model {
        JepsenModel::Bank => bank::check(h, opts),
        JepsenModel::Counter => counter::check(h)?,
        JepsenModel::Set => set::check(h),
        JepsenModel::SetFull => set_full::check(h),
        JepsenModel::LongFork => long_fork::check(h, opts.group_size),
    })
}

/// Reads and checks a history file (`-`: standard input) with a Jepsen
/// model. `json`: the format, when known (else by extension).
pub fn check_file(
    path: &std::path::Path,
    json: Option<bool>,
    model: JepsenModel,
    opts: &JepsenOptions,
) -> Result<Value, String> {
    let origin = path.display().to_string();
    let bytes = if origin == "-" {
        let mut b = Vec::new();
        std::io::Read::read_to_end(&mut std::io::stdin(), &mut b).map_err(|e| format!("-: {e}"))?;
        b
    } else {
        std::fs::read(path).map_err(|e| format!("{origin}: {e}"))?
    };
    let json = json.unwrap_or_else(|| {
        crate::read::detect_format(path) == crate::model::Format::Json
            || (origin == "-" && looks_like_json(&bytes))
    });
    let h = read_ops(&bytes, &origin, json).map_err(|e| e.to_string())?;
    check(model, &h, opts).map_err(|e| e.to_string())
}

/// Checks a history already in memory (e.g. read from standard input)
/// with a Jepsen model.
pub fn check_bytes(
    bytes: &[u8],
    origin: &str,
    json: bool,
    model: JepsenModel,
    opts: &JepsenOptions,
) -> Result<Value, String> {
    let h = read_ops(bytes, origin, json).map_err(|e| e.to_string())?;
    check(model, &h, opts).map_err(|e| e.to_string())
}

/// Whether a history's bytes are JSON rather than EDN: JSON op objects
/// start with a string key (`[{"` or `{"`), EDN op maps with a keyword.
pub fn looks_like_json(bytes: &[u8]) -> bool {
    let t: Vec<u8> = bytes
        .iter()
        .copied()
        .filter(|b| !b.is_ascii_whitespace())
        .take(3)
        .collect();
    t.starts_with(b"[{\"") || t.starts_with(b"{\"")
}

// ---------------------------------------------------------------------------
// Clojure semantics shared by the checkers

/// Makes a value what Clojure holds after reading it: maps of more than 8
/// entries and every set are hashed collections, iterated (and printed) in
/// hash order. In place: most values (vectors of numbers) need nothing.
fn clj_value(v: &mut Value) {
    match v {
        Value::Map(es) => {
            for (k, x) in es.iter_mut() {
                clj_value(k);
                clj_value(x);
            }
            clojure_map_order(es, |(k, _)| clojure_hasheq(k));
        }
        Value::Set(xs) => {
            xs.iter_mut().for_each(clj_value);
            crate::edn::order::clojure_hash_order(xs, clojure_hasheq);
        }
        Value::Vector(xs) | Value::List(xs) => xs.iter_mut().for_each(clj_value),
        _ => {}
    }
}

/// The `{:valid? :unknown, :error msg}` of `check-safe` when a checker
/// throws.
pub(crate) fn unknown_error(message: String) -> Value {
    Value::kw_map(vec![
        ("valid?", Value::kw("unknown")),
        ("error", Value::Str(message)),
    ])
}

/// A map literal with keyword keys in the order Clojure iterates it:
/// insertion order up to 8 entries, hash order beyond (a map literal or
/// `assoc` past 8 entries is a `PersistentHashMap`).
pub(crate) fn clj_map(entries: Vec<(&str, Value)>) -> Value {
    let mut entries: Vec<(Value, Value)> = entries
        .into_iter()
        .map(|(k, v)| (Value::kw(k), v))
        .collect();
    clojure_map_order(&mut entries, |(k, _)| clojure_hasheq(k));
    Value::Map(entries)
}

/// A number as f64, for Clojure's numeric comparisons.
fn number(v: &Value) -> Option<f64> {
    match v {
        Value::Int(n) => Some(*n as f64),
        Value::BigInt(d) => d.parse().ok(),
        Value::Float(t) => Some(crate::edn::json::float_value(t)),
        _ => None,
    }
}

/// Clojure's `compare`, or `None` where it throws (values of different
/// classes, or of a class that is not comparable).
pub(crate) fn clj_compare(a: &Value, b: &Value) -> Option<Ordering> {
    use Value::*;
    Some(match (a, b) {
        (Nil, Nil) => Ordering::Equal,
        (Nil, _) => Ordering::Less,
        (_, Nil) => Ordering::Greater,
        (Int(x), Int(y)) => x.cmp(y),
        (Int(_) | BigInt(_) | Float(_), Int(_) | BigInt(_) | Float(_)) => {
            number(a)?.partial_cmp(&number(b)?)?
        }
        (Str(x), Str(y)) => x.encode_utf16().cmp(y.encode_utf16()),
        (Keyword(x), Keyword(y)) | (Symbol(x), Symbol(y)) => {
            fn split(s: &str) -> (Option<&str>, &str) {
                match s.split_once('/') {
                    Some((ns, n)) if !n.is_empty() => (Some(ns), n),
                    _ => (None, s),
                }
            }
            split(x).cmp(&split(y))
        }
        (Bool(x), Bool(y)) => x.cmp(y),
        (Char(x), Char(y)) => x.cmp(y),
        (Vector(x), Vector(y)) => match x.len().cmp(&y.len()) {
            Ordering::Equal => {
                for (p, q) in x.iter().zip(y) {
                    match clj_compare(p, q)? {
                        Ordering::Equal => {}
                        o => return Some(o),
                    }
                }
                Ordering::Equal
            }
            o => o,
        },
        _ => return None,
    })
}

/// Sorts as Clojure's `sort` does, or says why it would throw.
pub(crate) fn clj_sort(values: &mut [Value]) -> Result<(), String> {
    // Refuse before sorting what Clojure could not compare (other types than
    // the first value's, NaN): a comparator that is not a total order may
    // make the standard sort panic.
    if let Some(first) = values.first() {
        if let Some(v) = values.iter().find(|v| clj_compare(first, v).is_none()) {
            return Err(format!(
                "cannot compare {} with {}",
                crate::edn::pr_str(first),
                crate::edn::pr_str(v)
            ));
        }
    }
    let mut bad = None;
    values.sort_by(|a, b| {
        clj_compare(a, b).unwrap_or_else(|| {
            bad.get_or_insert_with(|| {
                format!(
                    "cannot compare {} with {}",
                    crate::edn::pr_str(a),
                    crate::edn::pr_str(b)
                )
            });
            Ordering::Equal
        })
    });
    bad.map_or(Ok(()), Err)
}

/// The ops' values as a Clojure set of distinct values in first-seen order.
pub(crate) fn distinct(values: impl IntoIterator<Item = Value>) -> Vec<Value> {
    let mut seen = hashbrown::HashSet::new();
    let mut out = Vec::new();
    for v in values {
        if seen.insert(v.clone()) {
            out.push(v);
        }
    }
    out
}

#[cfg(test)]
mod tests;
