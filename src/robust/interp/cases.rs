//! The abstract reading's case splits: a MIN/MAX result over a key field,
//! and a key looked up through an unknown local, are each fixed to one
//! candidate value per case ([`super::analysis`] enumerates the cases), and
//! the reads a MIN/MAX result makes irrelevant are dropped.

use super::{Exec, Local, Universe, AV, T3};
use crate::robust::syntax::{Agg, CmpOp, Cond, Expr, Pred};

impl Exec<'_> {
    /// `key = unknown local` in the abstract reading: split on the
    /// local's value (the same record is then read and written). True when
    /// nothing matches in this case (NULL, or a value that is no key).
    pub(super) fn split_lookup(&mut self, table: usize, pred: Option<&Pred>) -> bool {
        if let (None, Some(Pred::Cmp(f, CmpOp::Eq, e))) = (self.view, pred) {
            let pk = *f < self.prog.tables[table].fields.len() && self.prog.tables[table].pk[*f];
            if pk && self.expr(e) == AV::Unknown && self.pinnable(e) {
                let (v, g) = match e {
                    Expr::Var(v) => (*v, None),
                    Expr::Dot(v, g) => (*v, Some(*g)),
                    _ => unreachable!("pinnable"),
                };
                let now = self.locals[v].clone();
                let gone = |x: &(usize, Option<usize>, Local, usize)| {
                    (x.0, x.1, &x.2, x.3) == (v, g, &now, table)
                };
                if self.excluded.iter().any(gone) {
                    return true;
                }
                match self.choice(table, *f) {
                    Some(Some(c)) => self.pin(e, c),
                    // NULL or a value that is no key here: nothing matches
                    // (the local stays unknown for its other uses).
                    Some(None) => {
                        self.excluded.push((v, g, now, table));
                        return true;
                    }
                    None => {}
                }
            }
        }
        false
    }

    /// After `MIN(f)` (`MAX(f)`) with result `m` over a key field `f`: no
    /// write to a record whose key is above (below) `m` can change the
    /// result, so this statement's reads of such records are dropped (the
    /// paper's value-aware rule for MIN/MAX anti-dependencies, §4; keys read
    /// before the statement stay).
    pub(super) fn forget_beyond(
        &mut self,
        table: usize,
        agg: Agg,
        f: usize,
        m: i64,
        before: &[usize],
    ) {
        let t = &self.prog.tables[table];
        if !t.pk[f] || agg == Agg::Count {
            return;
        }
        let ki = t.pk_fields().iter().position(|&k| k == f).unwrap_or(0);
        for &rec in &self.uni.by_table[table] {
            let v = self.uni.recs[rec].1[ki];
            let beyond = match agg {
                Agg::Min => v > m,
                _ => v < m,
            };
            if beyond {
                for g in 0..=t.fields.len() {
                    let k = self.uni.key(rec, g);
                    if before.binary_search(&k).is_err() {
                        self.fp.reads.remove(&k);
                        self.fp.read_vals.remove(&k);
                    }
                }
            }
        }
    }

    /// After a case's MIN (MAX) result `r` over a key field: the records
    /// the WHERE surely matches (its key atoms decide) with a key below
    /// (above) the result, or every one when it is NULL, are absent in the
    /// view (else the result would be theirs): view facts
    /// ([`super::Footprint::facts`]).
    pub(super) fn absent_beyond(
        &mut self,
        table: usize,
        pred: Option<&Pred>,
        field: Option<usize>,
        agg: Agg,
        r: AV,
        hits: &[(usize, bool)],
    ) {
        let t = &self.prog.tables[table];
        let on_key = field.is_some_and(|f| t.pk[f]) && agg != Agg::Count;
        if !on_key || self.view.is_some() || self.maybe_depth > 0 || t.pk_fields().len() != 1 {
            return;
        }
        let AV::Known(res) = r else { return };
        let alive = t.alive();
        for &(rec, _) in hits {
            let key = self.uni.recs[rec].1[0];
            let beyond = match (res, agg) {
                (None, _) => true,
                (Some(m), Agg::Min) => key < m,
                (Some(m), _) => key > m,
            };
            if beyond && pred.is_none_or(|p| self.pred(p, rec, None) == T3::T) {
                let k = self.uni.key(rec, alive);
                self.fp.facts.insert(k, Some(0));
            }
        }
    }

    /// An unknown MIN/MAX result over a key field in the abstract reading.
    pub(super) fn choose(&mut self, table: usize, field: Option<usize>, agg: Agg) -> AV {
        let t = &self.prog.tables[table];
        match field.filter(|&f| t.pk[f] && agg != Agg::Count && self.view.is_none()) {
            Some(f) => match self.choice(table, f) {
                Some(Some(m)) => {
                    if t.pk_fields().len() == 1 {
                        if let Some(rec) = self.uni.find(table, &[m]) {
                            self.assume_alive(rec);
                        }
                    }
                    AV::Known(Some(m))
                }
                Some(None) => AV::Known(None),
                None => AV::Unknown,
            },
            None => AV::Unknown,
        }
    }

    /// A choice point of the abstract reading over the values of key field
    /// `f` of `table`: the forced value here, or (past them) None, with the
    /// candidates (NULL and every key in the universe) noted for the driver
    /// ([`alternatives`]) to split on.
    pub(super) fn choice(&mut self, table: usize, f: usize) -> Option<Option<i64>> {
        let t = &self.prog.tables[table];
        let ki = t.pk_fields().iter().position(|&k| k == f).unwrap_or(0);
        let recs = &self.uni.by_table[table];
        self.choice_among(|uni| {
            let mut c: Vec<Option<i64>> = recs.iter().map(|&r| Some(uni.recs[r].1[ki])).collect();
            c.push(None);
            c
        })
    }

    /// A choice point among the candidates `cands` builds (sorted and
    /// deduplicated here): the forced value, or None (the candidates are
    /// then noted as pending when this is the first unforced point).
    pub(super) fn choice_among(
        &mut self,
        cands: impl FnOnce(&Universe) -> Vec<Option<i64>>,
    ) -> Option<Option<i64>> {
        let i = self.met;
        self.met += 1;
        if let Some(&v) = self.forced.get(i) {
            return Some(v);
        }
        if i == self.forced.len() {
            let mut c = cands(self.uni);
            c.sort_unstable();
            c.dedup();
            self.pending = Some(c);
        }
        None
    }

    /// An unknown read of key `k` in the abstract reading: when `k` can
    /// hold only a few known values, the view holds one of them, a case
    /// each (the SAT encoding ties the case to visibility when the key is
    /// two-valued). The first read of `k` splits; later reads repeat it.
    pub(super) fn few_valued(&mut self, k: usize) -> AV {
        if let Some(&x) = self.fp.views.get(&k) {
            return AV::Known(x);
        }
        let Some(Some(vals)) = self.vals.get(k) else {
            return AV::Unknown;
        };
        if let [x] = vals[..] {
            return AV::Known(x);
        }
        match self.choice_among(|_| vals.clone()) {
            Some(x) => {
                self.fp.views.insert(k, x);
                self.fp.facts.insert(k, x);
                AV::Known(x)
            }
            None => AV::Unknown,
        }
    }

    pub(super) fn assume_alive(&mut self, rec: usize) {
        let t = &self.prog.tables[self.uni.recs[rec].0];
        let k = self.uni.key(rec, t.alive());
        self.assumed.insert(k, 1);
        if self.maybe_depth == 0 {
            self.fp.facts.insert(k, Some(1));
        }
        // A view fact too, which the SAT encoding ties to visibility when
        // the flag is two-valued.
        if matches!(self.vals.get(k), Some(Some(v)) if v.len() > 1) {
            self.fp.views.entry(k).or_insert(Some(1));
        }
    }

    /// A branch case of an unknown IF: what the branch taken implies. Only
    /// `a = b` holding with `b` known pins `a` (a `!=` that fails may
    /// compare a NULL), with a view fact for the field of the row `a`
    /// comes from ([`super::Footprint::facts`]).
    pub(super) fn refine(&mut self, c: &Cond, holds: bool) {
        match c {
            Cond::Cmp(a, CmpOp::Eq, b)
                if holds && crate::robust::rules::on(crate::robust::rules::IF_PINS) =>
            {
                for (x, y) in [(a, b), (b, a)] {
                    if let (AV::Unknown, AV::Known(Some(v))) = (self.expr(x), self.expr(y)) {
                        if self.pinnable(x) {
                            self.pin_fact(x, v);
                        }
                    }
                }
            }
            Cond::Not(c) => self.refine(c, !holds),
            Cond::And(a, b) if holds => {
                self.refine(a, true);
                self.refine(b, true);
            }
            Cond::Or(a, b) if !holds => {
                self.refine(a, false);
                self.refine(b, false);
            }
            _ => {}
        }
    }

    /// [`Exec::pin`], and the view fact that the row's field holds `x`.
    fn pin_fact(&mut self, e: &Expr, x: i64) {
        let key = match e {
            Expr::Var(v) => match &self.locals[*v] {
                Local::Rows(rows, Some(f)) => rows.first().map(|r| (r.rec, *f)),
                _ => None,
            },
            Expr::Dot(v, f) => match &self.locals[*v] {
                Local::Rows(rows, _) => rows.first().map(|r| (r.rec, *f)),
                _ => None,
            },
            _ => None,
        };
        self.pin(e, x);
        if let (Some((rec, f)), 0) = (key, self.maybe_depth) {
            let k = self.uni.key(rec, f);
            self.fp.facts.insert(k, Some(x));
        }
    }

    /// Whether an unknown value can be fixed by [`Exec::pin`]: a local, or
    /// the field of a one-row local.
    pub(super) fn pinnable(&self, e: &Expr) -> bool {
        match e {
            Expr::Var(v) => match &self.locals[*v] {
                Local::Val(_) => true,
                Local::Rows(rows, Some(_)) => rows.len() == 1,
                _ => false,
            },
            Expr::Dot(v, _) => matches!(&self.locals[*v], Local::Rows(rows, _) if rows.len() == 1),
            _ => false,
        }
    }

    /// Fixes a [`Exec::pinnable`] value to `x` (a case of a split; a
    /// row-valued local's one row then exists).
    pub(super) fn pin(&mut self, e: &Expr, x: i64) {
        let (v, f) = match e {
            Expr::Var(v) => (*v, None),
            Expr::Dot(v, f) => (*v, Some(*f)),
            _ => return,
        };
        let rec = match &mut self.locals[v] {
            Local::Val(a) => {
                *a = AV::Known(Some(x));
                return;
            }
            Local::Rows(rows, first) => {
                let Some(f) = f.or(*first) else { return };
                rows[0].maybe = false;
                rows[0].vals[f] = AV::Known(Some(x));
                rows[0].rec
            }
            Local::AnyRows => return,
        };
        self.assume_alive(rec);
    }
}
