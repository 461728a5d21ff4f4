//! One interpreter, two readings: *concrete* (an instance run on its view of
//! the database: exact reads and writes) and *abstract* (parameters known,
//! every non-key field unknown: which (record, field) an instance of a
//! descriptor may or must read and write — the footprints the SAT encoding
//! over-approximates executions with).
//!
//! Semantics (the paper's §3 with its simplifying assumptions): every read
//! comes from the instance's view (never its own writes); a WHERE scans the
//! records its key-field atoms do not rule out, reading the non-key fields
//! it mentions and, when they match, `Alive` (the paper's footprints, §4:
//! a SELECT reads `Alive` of matching records only); SELECT reads the selected
//! fields of the matching records; UPDATE writes, DELETE writes `Alive = 0`,
//! INSERT writes `Alive = 1` and the given fields. The abstract reading
//! can also be split by case (a MIN/MAX result, a looked-up key's value;
//! `cases`): `analysis` runs it once per case. The two readings share
//! one interpreter, so they cannot disagree.

use super::syntax::{Agg, ArithOp, CmpOp, Cond, Expr, Pred, Program, Stmt};
use std::collections::{BTreeMap, HashMap};

mod analysis;
mod cases;
mod flow;
pub use analysis::{analyse, descriptors, Analysis, MAX_ALTERNATIVES};

/// A value: known (NULL is `None`) or, in the abstract reading, unknown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AV {
    /// Known.
    Known(Option<i64>),
    /// Unknown.
    Unknown,
}

/// Three-valued truth.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum T3 {
    T,
    F,
    U,
}

impl T3 {
    fn not(self) -> T3 {
        match self {
            T3::T => T3::F,
            T3::F => T3::T,
            T3::U => T3::U,
        }
    }
    fn and(self, o: T3) -> T3 {
        match (self, o) {
            (T3::F, _) | (_, T3::F) => T3::F,
            (T3::T, T3::T) => T3::T,
            _ => T3::U,
        }
    }
    fn or(self, o: T3) -> T3 {
        self.not().and(o.not()).not()
    }
}

/// The records an execution can touch: the initial ones and every one an
/// INSERT of some descriptor names. Keys (record, field) are numbered
/// densely.
#[derive(Clone, Debug, Default)]
pub struct Universe {
    /// Per record: table and key-field values (in field order).
    pub recs: Vec<(usize, Vec<i64>)>,
    /// Per table: its records, ascending by key.
    pub by_table: Vec<Vec<usize>>,
    /// Per record: the first key id (fields, then `Alive`).
    pub base: Vec<usize>,
    /// Per key id: the initial value.
    pub init: Vec<Option<i64>>,
    /// Per table: record by key-field values.
    index: Vec<HashMap<Vec<i64>, usize>>,
}

impl Universe {
    /// The key id of field `f` of record `rec`.
    pub fn key(&self, rec: usize, f: usize) -> usize {
        self.base[rec] + f
    }
    /// The number of key ids.
    pub fn keys(&self) -> usize {
        self.init.len()
    }
    /// (record, field) of a key id.
    pub fn split(&self, key: usize) -> (usize, usize) {
        let rec = self.base.partition_point(|&b| b <= key) - 1;
        (rec, key - self.base[rec])
    }
    fn find(&self, table: usize, key: &[i64]) -> Option<usize> {
        self.index.get(table)?.get(key).copied()
    }
}

/// One descriptor: a transaction type with concrete parameters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Desc {
    /// Transaction index.
    pub txn: usize,
    /// Parameter values.
    pub params: Vec<i64>,
}

/// What a run read and wrote: per key, whether surely (`true`) or maybe.
#[derive(Clone, Debug, Default)]
pub struct Footprint {
    /// Keys read.
    pub reads: BTreeMap<usize, bool>,
    /// Keys written, with the value (the last write) and surely/maybe.
    pub writes: BTreeMap<usize, (AV, bool)>,
    /// The values read (concrete reading only).
    pub read_vals: BTreeMap<usize, Option<i64>>,
    /// Abstract reading split on two-valued keys ([`Analysis::two_valued`]):
    /// the value this case assumes the instance's view holds for each key.
    pub views: BTreeMap<usize, Option<i64>>,
    /// Per key written: the one statement execution (an UPDATE or DELETE
    /// on one record, an INSERT) that writes it, or None when several may.
    /// Keys of one group are written all or none in every run.
    pub groups: BTreeMap<usize, Option<u32>>,
    /// Abstract reading: values this case assumes the instance's view
    /// holds (a split value, a record a MIN/MAX result or a pinned lookup
    /// implies alive, one a MIN/MAX result implies absent). Facts about the
    /// view, whether or not the reads that led to them run.
    pub facts: BTreeMap<usize, Option<i64>>,
    /// The run reached `ABORT`: concretely, the instance aborted (and the
    /// footprint is empty); abstractly, every run of this case aborts, so
    /// no committed instance has it.
    pub aborts: bool,
}

#[derive(Clone, Debug, PartialEq)]
struct Row {
    rec: usize,
    maybe: bool,
    /// Per table field (`Alive` excluded).
    vals: Vec<AV>,
}

#[derive(Clone, Debug, PartialEq)]
enum Local {
    Val(AV),
    /// Known rows, with the first selected field (for use as a value).
    Rows(Vec<Row>, Option<usize>),
    /// Some rows of this table.
    AnyRows,
}

/// A failure of the abstract reading: an INSERT whose key is not known from
/// the parameters.
#[derive(Clone, Debug)]
pub struct InsertKeyUnknown(pub super::syntax::Pos);

struct Exec<'a> {
    prog: &'a Program,
    uni: &'a Universe,
    /// The view (concrete) or None (abstract).
    view: Option<&'a [Option<i64>]>,
    /// Tables some statement inserts into or deletes from (their `Alive`
    /// is unknown in the abstract reading).
    churn: &'a [bool],
    /// Per key id: no descriptor may write it (abstract reading: its
    /// initial value is known); empty in the concrete reading.
    constant: &'a [bool],
    /// Per key id: the values it can hold, when few and known
    /// ([`analysis`]'s fixpoint); the abstract reading splits on them.
    vals: &'a [Option<Vec<Option<i64>>>],
    locals: Vec<Local>,
    fp: Footprint,
    /// The current write group ([`Footprint::groups`]).
    group: u32,
    /// Inserted keys not in the universe (abstract reading, while building it).
    new_recs: Vec<(usize, Vec<i64>)>,
    error: Option<InsertKeyUnknown>,
    /// Abstract reading split on unknown MIN/MAX results over a key field:
    /// the results taken at the first choice points, in order.
    forced: Vec<Option<i64>>,
    /// Choice points met so far; the candidates of the first unforced one.
    met: usize,
    pending: Option<Vec<Option<i64>>>,
    /// Alive flags a forced case implies (the MIN's record, a pinned row's).
    assumed: BTreeMap<usize, i64>,
    /// Key lookups in the case "the value is no key of the table": the
    /// local (variable, field), its value then, and the table.
    excluded: Vec<(usize, Option<usize>, Local, usize)>,
    /// An `ABORT` was reached on every path of the current run (a maybe
    /// branch that reaches one is dropped and clears it: see
    /// [`Exec::maybe_branch`]).
    halted: bool,
    /// How many maybe-run branches enclose the statement being run: the
    /// facts a case derives from a MIN/MAX result or a lookup hold only
    /// outside them (inside, the statement may not run at all).
    maybe_depth: u32,
}

impl<'a> Exec<'a> {
    /// A fresh run of transaction instance `d`: concrete with a view,
    /// abstract without.
    fn new(
        prog: &'a Program,
        uni: &'a Universe,
        view: Option<&'a [Option<i64>]>,
        churn: &'a [bool],
        constant: &'a [bool],
        vals: &'a [Option<Vec<Option<i64>>>],
        d: &Desc,
    ) -> Exec<'a> {
        Exec {
            prog,
            uni,
            view,
            churn,
            constant,
            vals,
            locals: fresh_locals(prog, d),
            fp: Footprint::default(),
            group: 0,
            new_recs: Vec::new(),
            error: None,
            forced: Vec::new(),
            met: 0,
            pending: None,
            assumed: BTreeMap::new(),
            excluded: Vec::new(),
            halted: false,
            maybe_depth: 0,
        }
    }
}

fn arith(op: ArithOp, a: i64, b: i64) -> Option<i64> {
    match op {
        ArithOp::Add => a.checked_add(b),
        ArithOp::Sub => a.checked_sub(b),
        ArithOp::Mul => a.checked_mul(b),
        ArithOp::Div => a.checked_div(b),
    }
}

fn cmp(a: AV, op: CmpOp, b: AV) -> T3 {
    match (a, b) {
        (AV::Known(Some(x)), AV::Known(Some(y))) => {
            if op.holds(x, y) {
                T3::T
            } else {
                T3::F
            }
        }
        (AV::Known(None), _) | (_, AV::Known(None)) => T3::F,
        _ => T3::U,
    }
}

impl Exec<'_> {
    fn read(&mut self, rec: usize, f: usize, maybe: bool) -> AV {
        let (table, key) = &self.uni.recs[rec];
        let t = &self.prog.tables[*table];
        if f < t.fields.len() && t.pk[f] {
            let i = t.pk_fields().iter().position(|&k| k == f).unwrap_or(0);
            return AV::Known(Some(key[i]));
        }
        let k = self.uni.key(rec, f);
        let e = self.fp.reads.entry(k).or_insert(!maybe);
        *e |= !maybe;
        match self.view {
            Some(v) => {
                self.fp.read_vals.insert(k, v[k]);
                AV::Known(v[k])
            }
            None if self.assumed.contains_key(&k) => AV::Known(self.assumed.get(&k).copied()),
            None if f == t.alive() && !self.churn[*table] => AV::Known(self.uni.init[k]),
            // A key no descriptor writes holds its initial value in every
            // view of every execution.
            None if self.constant.get(k).copied().unwrap_or(false) => AV::Known(self.uni.init[k]),
            None => self.few_valued(k),
        }
    }

    fn write(&mut self, rec: usize, f: usize, v: AV, maybe: bool) {
        let k = self.uni.key(rec, f);
        let g = self.group;
        let e = self.fp.groups.entry(k).or_insert(Some(g));
        if *e != Some(g) {
            *e = None;
        }
        let e = self.fp.writes.entry(k).or_insert((v, !maybe));
        e.1 |= !maybe;
        // A maybe-write over an earlier value leaves the value unknown.
        e.0 = if maybe && e.0 != v { AV::Unknown } else { v };
    }

    fn first(&self, rows: &[Row], field: Option<usize>) -> AV {
        match (rows.first(), field) {
            (None, _) => AV::Known(None),
            (Some(r), _) if r.maybe => AV::Unknown,
            (Some(r), Some(f)) => r.vals[f],
            (Some(_), None) => AV::Known(None),
        }
    }

    fn expr(&self, e: &Expr) -> AV {
        match e {
            Expr::Int(n) => AV::Known(Some(*n)),
            Expr::Null => AV::Known(None),
            Expr::Var(v) => match &self.locals[*v] {
                Local::Val(a) => *a,
                Local::Rows(rows, f) => self.first(rows, *f),
                Local::AnyRows => AV::Unknown,
            },
            Expr::Dot(v, f) => match &self.locals[*v] {
                Local::Rows(rows, _) => self.first(rows, Some(*f)),
                _ => AV::Unknown,
            },
            Expr::Arith(op, a, b) => match (self.expr(a), self.expr(b)) {
                (AV::Known(Some(x)), AV::Known(Some(y))) => AV::Known(arith(*op, x, y)),
                (AV::Known(None), _) | (_, AV::Known(None)) => AV::Known(None),
                _ => AV::Unknown,
            },
        }
    }

    /// The values a variable stands for in `IN`: None if unknown.
    fn values(&self, v: usize) -> Option<Vec<(i64, bool)>> {
        match &self.locals[v] {
            Local::Val(AV::Known(Some(x))) => Some(vec![(*x, false)]),
            Local::Val(AV::Known(None)) => Some(vec![]),
            Local::Val(AV::Unknown) | Local::AnyRows => None,
            Local::Rows(rows, f) => {
                let mut out = Vec::new();
                for r in rows {
                    match f.map(|f| r.vals[f]) {
                        Some(AV::Known(Some(x))) => out.push((x, r.maybe)),
                        Some(AV::Known(None)) | None => {}
                        Some(AV::Unknown) => return None,
                    }
                }
                Some(out)
            }
        }
    }

    fn member(&self, a: AV, v: usize) -> T3 {
        let Some(vals) = self.values(v) else {
            return T3::U;
        };
        match a {
            AV::Known(None) => T3::F,
            AV::Unknown => {
                if vals.is_empty() {
                    T3::F
                } else {
                    T3::U
                }
            }
            AV::Known(Some(x)) => match vals.iter().find(|(y, _)| *y == x) {
                Some((_, false)) => T3::T,
                Some((_, true)) => T3::U,
                None if vals.iter().any(|(_, m)| *m) => T3::F,
                None => T3::F,
            },
        }
    }

    fn cond(&self, c: &Cond) -> T3 {
        match c {
            Cond::Cmp(a, op, b) => cmp(self.expr(a), *op, self.expr(b)),
            Cond::IsNull(v) => match &self.locals[*v] {
                Local::Val(AV::Known(x)) => {
                    if x.is_none() {
                        T3::T
                    } else {
                        T3::F
                    }
                }
                Local::Rows(rows, _) if rows.is_empty() => T3::T,
                Local::Rows(rows, _) if rows.iter().any(|r| !r.maybe) => T3::F,
                _ => T3::U,
            },
            Cond::In(e, v) => self.member(self.expr(e), *v),
            Cond::Not(c) => self.cond(c).not(),
            Cond::And(a, b) => self.cond(a).and(self.cond(b)),
            Cond::Or(a, b) => self.cond(a).or(self.cond(b)),
        }
    }

    /// Evaluates a WHERE on a record: key fields from the record, others by
    /// `field` (None: unknown without reading).
    fn pred(&mut self, p: &Pred, rec: usize, read: Option<bool>) -> T3 {
        match p {
            Pred::Cmp(f, op, e) => {
                let a = self.field(rec, *f, read);
                cmp(a, *op, self.expr(e))
            }
            Pred::In(f, v) => {
                let a = self.field(rec, *f, read);
                self.member(a, *v)
            }
            Pred::Not(p) => self.pred(p, rec, read).not(),
            Pred::And(a, b) => {
                let x = self.pred(a, rec, read);
                x.and(self.pred(b, rec, read))
            }
            Pred::Or(a, b) => {
                let x = self.pred(a, rec, read);
                x.or(self.pred(b, rec, read))
            }
        }
    }

    fn field(&mut self, rec: usize, f: usize, read: Option<bool>) -> AV {
        let t = &self.prog.tables[self.uni.recs[rec].0];
        match read {
            _ if f < t.fields.len() && t.pk[f] => self.read(rec, f, false),
            Some(maybe) => self.read(rec, f, maybe),
            None => AV::Unknown,
        }
    }

    /// The records of `table` a WHERE matches, each surely or maybe.
    fn scan(&mut self, table: usize, pred: Option<&Pred>, maybe: bool) -> Vec<(usize, bool)> {
        if self.split_lookup(table, pred) {
            return Vec::new();
        }
        let mut out = Vec::new();
        for &rec in &self.uni.by_table[table] {
            let keys = match pred {
                Some(p) => self.pred(p, rec, None),
                None => T3::U,
            };
            if keys == T3::F {
                continue;
            }
            // The WHERE fields first; Alive only of a matching record (the
            // paper's footprints, §4: a DELETE of a record the WHERE does
            // not match is no dependency).
            let full = match pred {
                Some(p) => self.pred(p, rec, Some(maybe)),
                None => T3::T,
            };
            if full == T3::F {
                continue;
            }
            let alive = self.prog.tables[table].alive();
            let alive = match self.read(rec, alive, maybe || full == T3::U) {
                AV::Known(Some(1)) => T3::T,
                AV::Known(_) => T3::F,
                AV::Unknown => T3::U,
            };
            if alive != T3::F {
                out.push((rec, maybe || alive == T3::U || full == T3::U));
            }
        }
        out
    }

    fn rows(&mut self, table: usize, fields: &[usize], hits: &[(usize, bool)]) -> Vec<Row> {
        let n = self.prog.tables[table].fields.len();
        let mut rows = Vec::new();
        for &(rec, maybe) in hits {
            let mut vals = vec![AV::Known(None); n];
            for (f, v) in vals.iter_mut().enumerate() {
                if self.prog.tables[table].pk[f] || fields.contains(&f) {
                    *v = self.read(rec, f, maybe);
                } else if self.view.is_none() {
                    *v = AV::Unknown;
                }
            }
            rows.push(Row { rec, maybe, vals });
        }
        rows
    }

    /// One statement (a single match over the statement kinds, kept whole
    /// so both readings visibly share every rule).
    fn stmt(&mut self, s: &Stmt, maybe: bool) {
        // Long (about 125 lines): one arm per statement kind, kept in one
        // match so the concrete and abstract readings share every rule.
        match s {
            Stmt::Select {
                table,
                fields,
                var,
                pred,
            } => {
                let hits = self.scan(*table, pred.as_ref(), maybe);
                let rows = self.rows(*table, fields, &hits);
                self.locals[*var] = Local::Rows(rows, fields.first().copied());
            }
            Stmt::Aggregate {
                table,
                agg,
                field,
                var,
                pred,
            } => {
                let before: Vec<usize> = self.fp.reads.keys().copied().collect();
                let before_sure = self.fp.reads.clone();
                let hits = self.scan(*table, pred.as_ref(), maybe);
                let mut vals = Vec::new();
                let mut unknown = false;
                for &(rec, m) in &hits {
                    unknown |= m;
                    match field {
                        Some(f) => match self.read(rec, *f, m) {
                            AV::Known(Some(x)) => vals.push(x),
                            AV::Known(None) => {}
                            AV::Unknown => unknown = true,
                        },
                        None => vals.push(0),
                    }
                }
                let result = if unknown {
                    let r = self.choose(*table, *field, *agg);
                    self.absent_beyond(*table, pred.as_ref(), *field, *agg, r, &hits);
                    r
                } else {
                    AV::Known(match agg {
                        Agg::Min => vals.iter().copied().min(),
                        Agg::Max => vals.iter().copied().max(),
                        Agg::Count => Some(vals.len() as i64),
                    })
                };
                if let (AV::Known(Some(m)), Some(f)) = (result, field) {
                    self.forget_beyond(*table, *agg, *f, m, &before);
                } else if self.view.is_none() && *agg != Agg::Count {
                    // The concrete reading may forget any of this
                    // statement's reads: none of them is sure.
                    for (k, sure) in self.fp.reads.iter_mut() {
                        *sure = before_sure.get(k).copied().unwrap_or(false);
                    }
                }
                self.locals[*var] = Local::Val(result);
            }
            Stmt::Update { table, sets, pred } => {
                for (rec, m) in self.scan(*table, pred.as_ref(), maybe) {
                    self.group += 1;
                    for (f, e) in sets {
                        let v = self.expr(e);
                        self.write(rec, *f, v, m);
                    }
                }
            }
            Stmt::Delete { table, pred } => {
                let alive = self.prog.tables[*table].alive();
                for (rec, m) in self.scan(*table, pred.as_ref(), maybe) {
                    self.group += 1;
                    self.write(rec, alive, AV::Known(Some(0)), m);
                }
            }
            Stmt::Insert { table, values, pos } => self.insert(*table, values, *pos, maybe),
            Stmt::Assign(v, e) => {
                let a = self.expr(e);
                let new = Local::Val(a);
                if maybe && self.locals[*v] != new {
                    self.locals[*v] = Local::Val(AV::Unknown);
                } else {
                    self.locals[*v] = new;
                }
            }
            Stmt::If(c, then, els) => match self.cond(c) {
                T3::T => self.run(then, maybe),
                T3::F => self.run(els, maybe),
                // The value cases (open encoding) also split on the branch
                // an unknown condition takes: a run takes one, so what a
                // branch writes is written together (e.g. a New-Order's
                // counter and its stock, under one IF).
                T3::U if !self.vals.is_empty() && !maybe && self.view.is_none() => {
                    match self.choice_among(|_| vec![Some(0), Some(1)]) {
                        Some(Some(1)) => {
                            self.refine(c, true);
                            self.run(then, false);
                        }
                        Some(_) => {
                            self.refine(c, false);
                            self.run(els, false);
                        }
                        None => self.both_branches(then, els),
                    }
                }
                T3::U => self.both_branches(then, els),
            },
            Stmt::Foreach(var, set, body) => match self.locals[*set].clone() {
                Local::Rows(rows, f) => {
                    for r in rows {
                        let m = r.maybe;
                        self.locals[*var] = Local::Rows(vec![r], f);
                        if m || maybe {
                            self.run_maybe(body);
                        } else {
                            self.run(body, false);
                        }
                    }
                }
                _ => {
                    self.locals[*var] = Local::AnyRows;
                    self.run_maybe(body);
                }
            },
            Stmt::Skip => {}
            Stmt::Abort => self.halted = true,
        }
    }

    fn insert(
        &mut self,
        table: usize,
        values: &[(usize, Expr)],
        pos: super::syntax::Pos,
        maybe: bool,
    ) {
        let t = &self.prog.tables[table];
        let mut key = Vec::new();
        for f in t.pk_fields() {
            let e = &values
                .iter()
                .find(|(g, _)| *g == f)
                .expect("parser checks keys")
                .1;
            match self.expr(e) {
                AV::Known(Some(x)) => key.push(x),
                AV::Known(None) => return,
                AV::Unknown => {
                    self.error.get_or_insert(InsertKeyUnknown(pos));
                    return;
                }
            }
        }
        let Some(rec) = self.uni.find(table, &key) else {
            if !self.new_recs.contains(&(table, key.clone())) {
                self.new_recs.push((table, key));
            }
            return;
        };
        let alive = t.alive();
        self.group += 1;
        self.write(rec, alive, AV::Known(Some(1)), maybe);
        for (f, e) in values {
            if !self.prog.tables[table].pk[*f] {
                let v = self.expr(e);
                self.write(rec, *f, v, maybe);
            }
        }
    }
}

fn fresh_locals(prog: &Program, d: &Desc) -> Vec<Local> {
    let t = &prog.txns[d.txn];
    (0..t.vars.len())
        .map(|v| match d.params.get(v) {
            Some(&p) => Local::Val(AV::Known(Some(p))),
            None => Local::Val(AV::Known(None)),
        })
        .collect()
}

/// Runs an instance of `d` on a concrete view (a value per key id).
pub fn run_concrete(prog: &Program, uni: &Universe, d: &Desc, view: &[Option<i64>]) -> Footprint {
    let churn = vec![false; prog.tables.len()];
    let mut ex = Exec::new(prog, uni, Some(view), &churn, &[], &[], d);
    ex.run_top(&prog.txns[d.txn].body);
    if ex.fp.aborts {
        // Not a committed instance: no writes; the reads it made before
        // aborting stay, for the caller to tell why (they are no part of
        // the execution: [`super::exec::replay_one`] drops them).
        ex.fp.writes.clear();
        ex.fp.groups.clear();
    }
    ex.fp
}
