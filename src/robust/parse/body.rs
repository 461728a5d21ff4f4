//! The parser's rules for transaction bodies: statements, arithmetic
//! expressions, WHERE predicates and IF conditions (one method per grammar
//! rule).

use super::lex::{is_keyword, Tok};
use super::{Parser, R};
use crate::robust::syntax::*;

impl Parser {
    pub(super) fn block(&mut self) -> R<Vec<Stmt>> {
        self.sym("{")?;
        self.nested(|p| {
            let mut out = Vec::new();
            while !p.eat_sym("}") {
                out.push(p.stmt()?);
                p.eat_sym(";");
            }
            Ok(out)
        })
    }

    fn opt_where(&mut self, table: usize) -> R<Option<Pred>> {
        if self.eat_kw("WHERE") {
            Ok(Some(self.pred(table)?))
        } else {
            Ok(None)
        }
    }

    /// One statement: dispatch on its first keyword (the SQL statements
    /// each have their own rule below).
    fn stmt(&mut self) -> R<Stmt> {
        let pos = self.pos();
        if self.eat_kw("SELECT") {
            return self.select();
        }
        if self.eat_kw("UPDATE") {
            return self.update();
        }
        if self.eat_kw("INSERT") {
            return self.insert(pos);
        }
        if self.eat_kw("DELETE") {
            self.kw("FROM")?;
            let (t, tpos) = self.ident("a table name")?;
            let table = self.table(&t, tpos)?;
            let pred = self.opt_where(table)?;
            return Ok(Stmt::Delete { table, pred });
        }
        if self.eat_kw("IF") {
            let c = self.cond()?;
            self.eat_kw("THEN");
            let then = self.block()?;
            let els = if self.eat_kw("ELSE") {
                if self.is_kw("IF") {
                    vec![self.nested(Self::stmt)?]
                } else {
                    self.block()?
                }
            } else {
                Vec::new()
            };
            return Ok(Stmt::If(c, then, els));
        }
        if self.eat_kw("FOREACH") {
            let (v1, v1pos) = self.ident("a loop variable")?;
            self.kw("IN")?;
            let (v2, v2pos) = self.ident("a row-set variable")?;
            let set = self.var(&v2, v2pos)?;
            let Some(table) = self.var_table[set] else {
                return self.err_at(
                    v2pos,
                    format!("`{v2}` is not a row set (FOREACH iterates over the rows of a SELECT)"),
                );
            };
            let var = self.new_var(v1, Some(table), v1pos)?;
            let body = self.block()?;
            return Ok(Stmt::Foreach(var, set, body));
        }
        if self.eat_kw("SKIP") {
            return Ok(Stmt::Skip);
        }
        if self.eat_kw("ABORT") {
            return Ok(Stmt::Abort);
        }
        if let Tok::Ident(s) = self.peek() {
            if !is_keyword(s) {
                let (v, vpos) = self.ident("a variable")?;
                self.sym("=")?;
                let e = self.expr()?;
                let var = self.new_var(v, None, vpos)?;
                return Ok(Stmt::Assign(var, e));
            }
        }
        self.err(
            "a statement (SELECT, UPDATE, INSERT, DELETE, IF, FOREACH, SKIP, ABORT or `v = e`)",
        )
    }

    /// `SELECT [MIN|MAX|COUNT] …` after the keyword.
    fn select(&mut self) -> R<Stmt> {
        for (agg, kw) in [(Agg::Min, "MIN"), (Agg::Max, "MAX"), (Agg::Count, "COUNT")] {
            if self.eat_kw(kw) {
                self.sym("(")?;
                let f = if agg == Agg::Count && self.eat_sym("*") {
                    None
                } else {
                    Some(self.ident("a field name")?)
                };
                self.sym(")")?;
                self.kw("AS")?;
                let (v, vpos) = self.ident("a variable name")?;
                self.kw("FROM")?;
                let (t, tpos) = self.ident("a table name")?;
                let table = self.table(&t, tpos)?;
                let field = match f {
                    Some((f, fpos)) => Some(self.field(table, &f, fpos)?),
                    None => None,
                };
                let pred = self.opt_where(table)?;
                let var = self.new_var(v, None, vpos)?;
                return Ok(Stmt::Aggregate {
                    table,
                    agg,
                    field,
                    var,
                    pred,
                });
            }
        }
        let mut names = vec![self.ident("a field name or MIN/MAX/COUNT")?];
        while self.eat_sym(",") {
            names.push(self.ident("a field name")?);
        }
        self.kw("AS")?;
        let (v, vpos) = self.ident("a variable name")?;
        self.kw("FROM")?;
        let (t, tpos) = self.ident("a table name")?;
        let table = self.table(&t, tpos)?;
        let fields = names
            .iter()
            .map(|(f, p)| self.field(table, f, *p))
            .collect::<R<Vec<_>>>()?;
        let pred = self.opt_where(table)?;
        let var = self.new_var(v, Some(table), vpos)?;
        Ok(Stmt::Select {
            table,
            fields,
            var,
            pred,
        })
    }

    /// `UPDATE T SET f = e, … [WHERE φ]` after the keyword.
    fn update(&mut self) -> R<Stmt> {
        let (t, tpos) = self.ident("a table name")?;
        let table = self.table(&t, tpos)?;
        self.kw("SET")?;
        let mut sets = Vec::new();
        loop {
            let (f, fpos) = self.ident("a field name")?;
            let fi = self.field(table, &f, fpos)?;
            if self.prog.tables[table].pk.get(fi).copied().unwrap_or(true) {
                return self.err_at(fpos, format!("`{f}` cannot be set: key fields and `Alive` are not updated (use INSERT/DELETE)"));
            }
            self.sym("=")?;
            sets.push((fi, self.expr()?));
            if !self.eat_sym(",") {
                break;
            }
        }
        let pred = self.opt_where(table)?;
        Ok(Stmt::Update { table, sets, pred })
    }

    /// `INSERT INTO T (f = e, …)` after the keyword (`pos`: the keyword's).
    fn insert(&mut self, pos: Pos) -> R<Stmt> {
        self.kw("INTO")?;
        let (t, tpos) = self.ident("a table name")?;
        let table = self.table(&t, tpos)?;
        self.sym("(")?;
        let mut values: Vec<(usize, Expr)> = Vec::new();
        loop {
            let (f, fpos) = self.ident("a field name")?;
            let fi = self.field(table, &f, fpos)?;
            if fi == self.prog.tables[table].alive() || values.iter().any(|(g, _)| *g == fi) {
                return self.err_at(
                    fpos,
                    format!("field `{f}` cannot be given here (twice, or `Alive`)"),
                );
            }
            self.sym("=")?;
            values.push((fi, self.expr()?));
            if !self.eat_sym(",") {
                break;
            }
        }
        self.sym(")")?;
        let tab = &self.prog.tables[table];
        if let Some(k) = tab
            .pk_fields()
            .into_iter()
            .find(|k| !values.iter().any(|(f, _)| f == k))
        {
            return self.err_at(
                pos,
                format!(
                    "INSERT INTO {} must give key field `{}`",
                    tab.name, tab.fields[k]
                ),
            );
        }
        Ok(Stmt::Insert { table, values, pos })
    }

    fn expr(&mut self) -> R<Expr> {
        let mut e = self.term()?;
        loop {
            let op = if self.eat_sym("+") {
                ArithOp::Add
            } else if self.eat_sym("-") {
                ArithOp::Sub
            } else {
                return Ok(e);
            };
            e = Expr::Arith(op, Box::new(e), Box::new(self.term()?));
        }
    }
    fn term(&mut self) -> R<Expr> {
        let mut e = self.atom()?;
        loop {
            let op = if self.eat_sym("*") {
                ArithOp::Mul
            } else if self.eat_sym("/") {
                ArithOp::Div
            } else {
                return Ok(e);
            };
            e = Expr::Arith(op, Box::new(e), Box::new(self.atom()?));
        }
    }
    fn atom(&mut self) -> R<Expr> {
        if self.eat_sym("(") {
            let e = self.nested(Self::expr)?;
            self.sym(")")?;
            return Ok(e);
        }
        if self.eat_kw("NULL") {
            return Ok(Expr::Null);
        }
        if matches!(self.peek(), Tok::Int(_)) || self.is_sym("-") {
            return Ok(Expr::Int(self.int()?));
        }
        let (v, pos) = self.ident("an integer, a variable or `(`")?;
        let var = self.var(&v, pos)?;
        if self.eat_sym(".") {
            let (f, fpos) = self.ident("a field name")?;
            let Some(table) = self.var_table[var] else {
                return self.err_at(
                    pos,
                    format!("`{v}` is not a row set, so `{v}.{f}` has no field"),
                );
            };
            return Ok(Expr::Dot(var, self.field(table, &f, fpos)?));
        }
        Ok(Expr::Var(var))
    }
    fn cmp_op(&mut self) -> Option<CmpOp> {
        for (s, op) in [
            ("=", CmpOp::Eq),
            ("!=", CmpOp::Ne),
            ("<>", CmpOp::Ne),
            ("<=", CmpOp::Le),
            (">=", CmpOp::Ge),
            ("<", CmpOp::Lt),
            (">", CmpOp::Gt),
        ] {
            if self.eat_sym(s) {
                return Some(op);
            }
        }
        None
    }

    fn pred(&mut self, table: usize) -> R<Pred> {
        let mut p = self.pred_and(table)?;
        while self.eat_kw("OR") {
            p = Pred::Or(Box::new(p), Box::new(self.pred_and(table)?));
        }
        Ok(p)
    }
    fn pred_and(&mut self, table: usize) -> R<Pred> {
        let mut p = self.pred_atom(table)?;
        while self.eat_kw("AND") {
            p = Pred::And(Box::new(p), Box::new(self.pred_atom(table)?));
        }
        Ok(p)
    }
    fn pred_atom(&mut self, table: usize) -> R<Pred> {
        if self.eat_kw("NOT") {
            return Ok(Pred::Not(Box::new(self.nested(|p| p.pred_atom(table))?)));
        }
        if self.eat_sym("(") {
            let p = self.nested(|p| p.pred(table))?;
            self.sym(")")?;
            return Ok(p);
        }
        let (f, fpos) = self.ident("a field of the table")?;
        let fi = self.field(table, &f, fpos)?;
        if self.eat_kw("IN") {
            let (v, vpos) = self.ident("a variable")?;
            return Ok(Pred::In(fi, self.var(&v, vpos)?));
        }
        match self.cmp_op() {
            Some(op) => Ok(Pred::Cmp(fi, op, self.expr()?)),
            None => self.err("a comparison (=, !=, <, <=, >, >=) or IN"),
        }
    }

    fn cond(&mut self) -> R<Cond> {
        let mut c = self.cond_and()?;
        while self.eat_kw("OR") {
            c = Cond::Or(Box::new(c), Box::new(self.cond_and()?));
        }
        Ok(c)
    }
    fn cond_and(&mut self) -> R<Cond> {
        let mut c = self.cond_atom()?;
        while self.eat_kw("AND") {
            c = Cond::And(Box::new(c), Box::new(self.cond_atom()?));
        }
        Ok(c)
    }
    fn cond_atom(&mut self) -> R<Cond> {
        if self.eat_kw("NOT") {
            return Ok(Cond::Not(Box::new(self.nested(Self::cond_atom)?)));
        }
        // `(` opens either a condition or an arithmetic expression: try the
        // comparison first, then the parenthesised condition.
        let save = self.at;
        let first_err = match self.cond_cmp() {
            Ok(c) => return Ok(c),
            Err(e) => e,
        };
        self.at = save;
        if self.eat_sym("(") {
            let c = self.nested(Self::cond)?;
            self.sym(")")?;
            return Ok(c);
        }
        Err(first_err)
    }
    fn cond_cmp(&mut self) -> R<Cond> {
        if let Tok::Ident(s) = self.peek() {
            if !is_keyword(s)
                && matches!(
                    self.toks[self.at + 1].tok,
                    Tok::Sym("=") | Tok::Sym("!=") | Tok::Sym("<>")
                )
                && matches!(&self.toks.get(self.at + 2).map(|t| &t.tok), Some(Tok::Ident(n)) if n.eq_ignore_ascii_case("NULL"))
            {
                let (v, pos) = self.ident("a variable")?;
                let var = self.var(&v, pos)?;
                let ne = !self.eat_sym("=");
                if ne {
                    self.at += 1;
                }
                self.at += 1;
                let c = Cond::IsNull(var);
                return Ok(if ne { Cond::Not(Box::new(c)) } else { c });
            }
        }
        let a = self.expr()?;
        if self.eat_kw("IN") {
            let (v, pos) = self.ident("a row-set variable")?;
            return Ok(Cond::In(a, self.var(&v, pos)?));
        }
        match self.cmp_op() {
            Some(op) => Ok(Cond::Cmp(a, op, self.expr()?)),
            None => self.err("a comparison (=, !=, <, <=, >, >=), `= NULL` or IN"),
        }
    }
}
