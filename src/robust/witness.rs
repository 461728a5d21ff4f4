//! Witnesses: a confirmed non-serializable execution, its dependency cycle
//! named in Elle's vocabulary, and the same execution as a Jepsen
//! list-append history that `ellery check -c serializable` rejects with the
//! same cycle type.
//!
//! The history: one `:ok` transaction per instance, each on its own process
//! and all concurrent (no process or real-time order); every key (record,
//! field) is a list; an instance appends its slot number + 1 to each key it
//! writes and reads each key as the list of versions up to the one it saw
//! (its source, in ar order). A last transaction reads every written key in
//! full: it pins the version order (ar) without adding any cycle (nothing
//! follows it).

use super::exec::{
    best_cycle, classify, dependencies, description, CycleType, Edge, Execution, Replayed,
};
use super::interp::Analysis;
use super::syntax::Program;
use crate::edn::Value;

/// A confirmed witness.
#[derive(Clone, Debug)]
pub struct Witness {
    /// The execution (ar = slot order).
    pub exec: Execution,
    /// The replay.
    pub reps: Vec<Replayed>,
    /// The cycle.
    pub cycle: Vec<Edge>,
    /// Its type.
    pub kind: CycleType,
    /// The paper's name for it, if any.
    pub description: Option<&'static str>,
}

impl Witness {
    /// Builds the witness of a confirmed execution (None if it is acyclic).
    pub fn new(prog: &Program, an: &Analysis, exec: Execution) -> Option<Witness> {
        let reps = super::exec::replay(prog, an, &exec);
        let cycle = best_cycle(exec.descs.len(), &dependencies(&reps))?;
        Some(Witness {
            kind: classify(&cycle),
            description: description(&cycle),
            exec,
            reps,
            cycle,
        })
    }
}

/// An instance's name: `Type(p1,p2)`.
pub fn instance_name(prog: &Program, d: &super::interp::Desc) -> String {
    let ps: Vec<String> = d.params.iter().map(i64::to_string).collect();
    format!("{}({})", prog.txns[d.txn].name, ps.join(","))
}

/// A key's name: `Table[k1,k2].Field`.
pub fn key_name(prog: &Program, an: &Analysis, key: usize) -> String {
    let (rec, f) = an.uni.split(key);
    let (table, pk) = &an.uni.recs[rec];
    let t = &prog.tables[*table];
    let pk: Vec<String> = pk.iter().map(i64::to_string).collect();
    format!("{}[{}].{}", t.name, pk.join(","), t.field_name(f))
}

fn opt(v: Option<i64>) -> Value {
    v.map_or(Value::Nil, Value::Int)
}

/// The witness as an EDN map.
pub fn to_value(prog: &Program, an: &Analysis, w: &Witness) -> Value {
    let mut insts = Vec::new();
    for (i, (&d, r)) in w.exec.descs.iter().zip(&w.reps).enumerate() {
        let desc = &an.descs[d];
        let t = &prog.txns[desc.txn];
        let params = Value::Map(
            (0..t.params)
                .map(|p| (Value::Str(t.vars[p].clone()), Value::Int(desc.params[p])))
                .collect(),
        );
        let reads = Value::Map(
            r.fp.read_vals
                .iter()
                .map(|(&k, &v)| (Value::Str(key_name(prog, an, k)), opt(v)))
                .collect(),
        );
        let writes = Value::Map(
            r.fp.writes
                .iter()
                .map(|(&k, &(v, _))| {
                    let v = match v {
                        super::interp::AV::Known(x) => opt(x),
                        super::interp::AV::Unknown => Value::Nil,
                    };
                    (Value::Str(key_name(prog, an, k)), v)
                })
                .collect(),
        );
        let sees: Vec<Value> = (0..i)
            .filter(|&a| w.exec.vis[i] >> a & 1 == 1)
            .map(|a| Value::Int(a as i64))
            .collect();
        insts.push(Value::kw_map(vec![
            ("id", Value::Int(i as i64)),
            ("txn", Value::Str(t.name.clone())),
            ("params", params),
            ("sees", Value::Vector(sees)),
            ("reads", reads),
            ("writes", writes),
        ]));
    }
    let vis: Vec<Value> = (0..w.exec.descs.len())
        .flat_map(|j| {
            (0..j)
                .filter(move |&i| w.exec.vis[j] >> i & 1 == 1)
                .map(move |i| Value::Vector(vec![Value::Int(i as i64), Value::Int(j as i64)]))
        })
        .collect();
    let steps: Vec<Value> = w
        .cycle
        .iter()
        .map(|e| {
            Value::kw_map(vec![
                ("type", Value::kw(e.dep.name())),
                ("from", Value::Int(e.from as i64)),
                ("to", Value::Int(e.to as i64)),
                ("key", Value::Str(key_name(prog, an, e.key))),
            ])
        })
        .collect();
    let mut cycle = vec![("type", Value::kw(w.kind.elle_name()))];
    if let Some(d) = w.description {
        cycle.push(("description", Value::Str(d.to_string())));
    }
    cycle.push(("steps", Value::Vector(steps)));
    Value::kw_map(vec![
        ("instances", Value::Vector(insts)),
        ("vis", Value::Vector(vis)),
        (
            "ar",
            Value::Vector(
                (0..w.exec.descs.len())
                    .map(|i| Value::Int(i as i64))
                    .collect(),
            ),
        ),
        ("cycle", Value::kw_map(cycle)),
    ])
}

/// The witness as a Jepsen list-append history (EDN, one op per line).
pub fn history(prog: &Program, an: &Analysis, w: &Witness) -> String {
    let n = w.reps.len();
    // Per key: the writers in ar order.
    let mut written: Vec<usize> = w
        .reps
        .iter()
        .flat_map(|r| r.fp.writes.keys().copied())
        .collect();
    written.sort_unstable();
    written.dedup();
    let writers = |k: usize| -> Vec<usize> {
        (0..n)
            .filter(|&i| w.reps[i].fp.writes.contains_key(&k))
            .collect()
    };
    let list_upto = |k: usize, src: Option<usize>| -> Value {
        Value::Vector(
            writers(k)
                .into_iter()
                .filter(|&i| src.is_some_and(|s| i <= s))
                .map(|i| Value::Int(i as i64 + 1))
                .collect(),
        )
    };
    let mut txns: Vec<(Vec<Value>, Vec<Value>)> = Vec::new();
    for (i, r) in w.reps.iter().enumerate() {
        let (mut inv, mut ok) = (Vec::new(), Vec::new());
        for &(k, src) in &r.sources {
            if !written.contains(&k) {
                continue;
            }
            let key = Value::Str(key_name(prog, an, k));
            inv.push(Value::Vector(vec![Value::kw("r"), key.clone(), Value::Nil]));
            ok.push(Value::Vector(vec![Value::kw("r"), key, list_upto(k, src)]));
        }
        for &k in r.fp.writes.keys() {
            let m = Value::Vector(vec![
                Value::kw("append"),
                Value::Str(key_name(prog, an, k)),
                Value::Int(i as i64 + 1),
            ]);
            inv.push(m.clone());
            ok.push(m);
        }
        txns.push((inv, ok));
    }
    let (mut inv, mut ok) = (Vec::new(), Vec::new());
    for &k in &written {
        let key = Value::Str(key_name(prog, an, k));
        inv.push(Value::Vector(vec![Value::kw("r"), key.clone(), Value::Nil]));
        ok.push(Value::Vector(vec![
            Value::kw("r"),
            key,
            list_upto(k, Some(n)),
        ]));
    }
    let mut out = String::new();
    let mut index = 0i64;
    let mut line = |process: usize, ty: &str, value: &[Value]| {
        let op = Value::kw_map(vec![
            ("index", Value::Int(index)),
            ("time", Value::Int(index * 1000)),
            ("type", Value::kw(ty)),
            ("process", Value::Int(process as i64)),
            ("f", Value::kw("txn")),
            ("value", Value::Vector(value.to_vec())),
        ]);
        out.push_str(&crate::edn::pr_str(&op));
        out.push('\n');
        index += 1;
    };
    for (p, (i, _)) in txns.iter().enumerate() {
        line(p, "invoke", i);
    }
    for (p, (_, o)) in txns.iter().enumerate() {
        line(p, "ok", o);
    }
    line(n, "invoke", &inv);
    line(n, "ok", &ok);
    out
}
