//! Explanations of wr, ww and rw steps between register transactions, in
//! Elle's words.

use super::*;

/// Explains wr, ww and rw steps between register transactions, consulted in
/// that order (Elle combines the wr explainer, then ww, then rw).
///
/// A big history's explainer keeps none of the inference's tables: they
/// are a sixth of a million-transaction check's peak memory (issue 23),
/// and only an invalid history's cycles are explained. They are computed
/// again, the same, at the first explanation.
pub(super) struct RegisterExplainer {
    opts: RwOptions,
    tables: std::sync::OnceLock<Tables>,
}

/// What [`RegisterExplainer`] consults.
pub(super) struct Tables {
    pub(super) ext: Ext,
    pub(super) ids: Ids,
    pub(super) graphs: VersionGraphs,
}

/// Histories of at least this many ops get an explainer that computes its
/// tables again when first asked (see [`RegisterExplainer`]): an invalid
/// 1M-transaction history pays about a tenth of its inference again.
pub(super) const RECOMPUTE_TABLES_FROM: usize = 400_000;

impl RegisterExplainer {
    /// An explainer holding `tables`, or (`None`, for a big history)
    /// computing them again with `opts` when first asked.
    pub(super) fn new(opts: &RwOptions, tables: Option<Tables>) -> RegisterExplainer {
        let cell = std::sync::OnceLock::new();
        if let Some(t) = tables {
            let _ = cell.set(t);
        }
        RegisterExplainer {
            opts: *opts,
            tables: cell,
        }
    }

    fn tables(&self, h: &History) -> &Tables {
        self.tables.get_or_init(|| {
            let (ext, ids) = Ext::new(h);
            let (graphs, _) = version_graphs(h, &ext, &ids, &self.opts);
            Tables { ext, ids, graphs }
        })
    }
}

/// Elle's `index-of`: the first micro-op equal to `[f k v]`, or nil.
pub(super) fn mop_index(h: &History, op: u32, f: MopFn, k: Atom, v: Val) -> Value {
    h.mops(&h.ops[op as usize])
        .iter()
        .position(|m| m.f() == f && m.key() == k && arg_val(m.arg()) == v)
        .map_or(Value::Nil, |i| Value::Int(i as i64))
}

/// The wr step `a → b`: `b` read `k = v`, which `a` wrote (Elle's map and
/// sentence, with the micro-op positions).
pub(crate) fn wr_step(h: &History, a: u32, b: u32, k: Atom, v: Val) -> Step {
    Step {
        kind: StepKind::Wr,
        data: Value::kw_map(vec![
            ("type", Value::kw("wr")),
            ("key", h.atom_value(k)),
            ("value", val_value(h, v)),
            ("a-mop-index", mop_index(h, a, MopFn::Write, k, v)),
            ("b-mop-index", mop_index(h, b, MopFn::Read, k, v)),
        ]),
        text: StepText::RegisterWr {
            key: pr_str(&h.atom_value(k)),
            value: pr_str(&val_value(h, v)),
        },
    }
}

/// The ww (`kind` = [`StepKind::Ww`]: `a` wrote `k = va`) or rw (`a` read
/// `k = va`) step `a → b`, where `b` wrote the later version `vb`.
pub(crate) fn version_step(
    h: &History,
    a: u32,
    b: u32,
    kind: StepKind,
    k: Atom,
    va: Val,
    vb: Val,
) -> Step {
    let (kw, a_f) = match kind {
        StepKind::Ww => ("ww", MopFn::Write),
        _ => ("rw", MopFn::Read),
    };
    let key = pr_str(&h.atom_value(k));
    let value = pr_str(&val_value(h, va));
    let value2 = pr_str(&val_value(h, vb));
    Step {
        kind,
        data: Value::kw_map(vec![
            ("key", h.atom_value(k)),
            ("value", val_value(h, va)),
            ("value'", val_value(h, vb)),
            ("type", Value::kw(kw)),
            ("a-mop-index", mop_index(h, a, a_f, k, va)),
            ("b-mop-index", mop_index(h, b, MopFn::Write, k, vb)),
        ]),
        text: match kind {
            StepKind::Ww => StepText::RegisterWw { key, value, value2 },
            _ => StepText::RegisterRw { key, value, value2 },
        },
    }
}

impl Tables {
    fn version_step(
        &self,
        h: &History,
        a: u32,
        b: u32,
        a_kvs: &[Kv],
        kind: StepKind,
    ) -> Option<Step> {
        let b_kvs = self.ext.writes(b as usize);
        a_kvs.iter().find_map(|e| {
            let vb = get(b_kvs, e.kid)?;
            self.graphs.contains(e.kid, e.vid, vb).then(|| {
                let k = self.ids.key(e.kid);
                let (va, vb) = (self.ids.val(e.kid, e.vid), self.ids.val(e.kid, vb));
                version_step(h, a, b, kind, k, va, vb)
            })
        })
    }
}

impl PairExplainer for RegisterExplainer {
    fn prepare(&self, h: &History) {
        self.tables(h);
    }

    fn explain(&self, h: &History, a: u32, b: u32) -> Option<Step> {
        let t = self.tables(h);
        let reads = t.ext.reads(b as usize);
        let wr = t.ext.writes(a as usize).iter().find_map(|e| {
            (get(reads, e.kid) == Some(e.vid))
                .then(|| wr_step(h, a, b, t.ids.key(e.kid), t.ids.val(e.kid, e.vid)))
        });
        wr.or_else(|| t.version_step(h, a, b, t.ext.writes(a as usize), StepKind::Ww))
            .or_else(|| t.version_step(h, a, b, t.ext.reads(a as usize), StepKind::Rw))
    }
}
