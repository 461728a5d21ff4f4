//! Explanations of ww, wr and rw steps between list-append transactions,
//! in Elle's words.

use super::*;

/// Explains ww, wr and rw steps between list-append transactions, consulted
/// in that order as Elle's combined explainer does.
pub(super) struct AppendExplainer {
    pub(super) idx: Indexes,
}

pub(super) fn mop_index(h: &History, op: u32, f: MopFn, k: Atom, arg: MopArg) -> Value {
    h.mops(&h.ops[op as usize])
        .iter()
        .position(|m| m.f() == f && m.key() == k && m.arg() == arg)
        .map_or(Value::Nil, |i| Value::Int(i as i64))
}

pub(super) fn elem_value(h: &History, e: Elem) -> Value {
    match e {
        Some(a) => h.atom_value(a),
        None => init_value(),
    }
}

/// A ww step (`value2` is the element `b` appended) or a wr step (`b`
/// read the list ending in `value`), both pointing at `a`'s append of
/// `value`.
pub(super) fn write_step(
    h: &History,
    (a, b): (u32, u32),
    b_mop: &Mop,
    value: Atom,
    value2: Option<Atom>,
    text: StepText,
) -> Step {
    let kind = if value2.is_some() {
        StepKind::Ww
    } else {
        StepKind::Wr
    };
    let mut entries = vec![
        ("type", Value::kw(kind.name())),
        ("key", h.atom_value(b_mop.key())),
        ("value", h.atom_value(value)),
    ];
    if let Some(v2) = value2 {
        entries.push(("value'", h.atom_value(v2)));
    }
    entries.push((
        "a-mop-index",
        mop_index(h, a, MopFn::Append, b_mop.key(), MopArg::Atom(value)),
    ));
    entries.push((
        "b-mop-index",
        mop_index(h, b, b_mop.f(), b_mop.key(), b_mop.arg()),
    ));
    Step {
        kind,
        data: Value::kw_map(entries),
        text,
    }
}

impl PairExplainer for AppendExplainer {
    fn explain(&self, h: &History, a: u32, b: u32) -> Option<Step> {
        let bmops = h.mops(&h.ops[b as usize]);
        // ww
        for m in bmops.iter().filter(|m| m.f() == MopFn::Append) {
            let v = append_value(m);
            if self.idx.ww_dep(b, m.key(), v) == Some(a) {
                let prev = self
                    .idx
                    .previous(m.key(), v)
                    .expect("ww has a previous element");
                let text = StepText::AppendWw {
                    key: pr_str(&h.atom_value(m.key())),
                    value: pr_str(&h.atom_value(prev)),
                    value2: pr_str(&h.atom_value(v)),
                };
                return Some(write_step(h, (a, b), m, prev, Some(v), text));
            }
        }
        // wr
        for m in bmops.iter().filter(|m| m.f() == MopFn::Read) {
            if self.idx.wr_dep(h, b, m) == Some(a) {
                let last = *h.list(m.arg()).last().expect("wr reads something");
                let text = StepText::AppendWr {
                    key: pr_str(&h.atom_value(m.key())),
                    value: pr_str(&h.atom_value(last)),
                };
                return Some(write_step(h, (a, b), m, last, None, text));
            }
        }
        // rw
        for (i, m) in bmops.iter().enumerate() {
            if m.f() != MopFn::Append {
                continue;
            }
            let v = append_value(m);
            let prev = self.idx.previous(m.key(), v);
            // `a` is one of the readers the rw edges into `b` came from:
            // a possible op other than `b` that read `prev` as the key's
            // last state (the read-state index is gone by now).
            let reads_prev = a != b
                && possible(h, a as usize)
                && h.mops(&h.ops[a as usize]).iter().any(|am| {
                    am.f() == MopFn::Read
                        && am.key() == m.key()
                        && read_state(h, a as usize, am) == Some(prev)
                });
            if !reads_prev {
                continue;
            }
            let a_mop = h
                .mops(&h.ops[a as usize])
                .iter()
                .position(|am| {
                    am.f() == MopFn::Read
                        && am.key() == m.key()
                        && match prev {
                            None => h.list(am.arg()).is_empty(),
                            Some(p) => h.list(am.arg()).last() == Some(&p),
                        }
                })
                .map_or(Value::Nil, |i| Value::Int(i as i64));
            let key = pr_str(&h.atom_value(m.key()));
            let value2 = pr_str(&h.atom_value(v));
            return Some(Step {
                kind: StepKind::Rw,
                data: Value::kw_map(vec![
                    ("type", Value::kw("rw")),
                    ("key", h.atom_value(m.key())),
                    ("value", elem_value(h, prev)),
                    ("value'", h.atom_value(v)),
                    ("a-mop-index", a_mop),
                    ("b-mop-index", Value::Int(i as i64)),
                ]),
                text: match prev {
                    None => StepText::AppendRwInit { key, value2 },
                    Some(_) => StepText::AppendRw { key, value2 },
                },
            });
        }
        None
    }
}
