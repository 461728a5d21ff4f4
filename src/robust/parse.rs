//! The lexer and recursive-descent parser of the program language (see
//! [`super::syntax`]). Names are resolved while parsing (tables and fields to
//! indices, variables to per-transaction slots), so every error names
//! line:column and what was expected there. Declarations must come before
//! their use. (Over 700 lines: one recursive-descent parser, one method
//! per grammar rule; split, the grammar would be scattered.)

use super::syntax::*;

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Ident(String),
    Int(i64),
    Sym(&'static str),
    Eof,
}

struct Token {
    tok: Tok,
    pos: Pos,
}

const SYMS: &[&str] = &[
    "..", "<=", ">=", "!=", "<>", "(", ")", "{", "}", ",", ";", ":", "=", "<", ">", "+", "-", "*",
    "/", ".",
];

/// The most initial records one `init` line may name (the product of its key sets).
const MAX_INIT_RECORDS: usize = 10_000;

fn lex(src: &str) -> Result<Vec<Token>, SyntaxError> {
    let mut out = Vec::new();
    let chars: Vec<char> = src.chars().collect();
    let (mut i, mut line, mut col) = (0usize, 1u32, 1u32);
    while i < chars.len() {
        let c = chars[i];
        let pos = Pos { line, column: col };
        let adv = |n: usize, i: &mut usize, col: &mut u32| {
            *i += n;
            *col += n as u32;
        };
        if c == '\n' {
            i += 1;
            line += 1;
            col = 1;
        } else if c.is_whitespace() {
            adv(1, &mut i, &mut col);
        } else if c == '#' || (c == '-' && chars.get(i + 1) == Some(&'-')) {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c.is_ascii_digit() {
            let start = i;
            while i < chars.len() && chars[i].is_ascii_digit() {
                i += 1;
            }
            let text: String = chars[start..i].iter().collect();
            col += (i - start) as u32;
            let n = text.parse::<i64>().map_err(|_| SyntaxError {
                pos,
                message: format!("integer {text} does not fit in 64 bits"),
            })?;
            out.push(Token {
                tok: Tok::Int(n),
                pos,
            });
        } else if c.is_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            col += (i - start) as u32;
            out.push(Token {
                tok: Tok::Ident(chars[start..i].iter().collect()),
                pos,
            });
        } else {
            let uni = match c {
                '∈' => Some("IN"),
                '¬' => Some("NOT"),
                '∧' => Some("AND"),
                '∨' => Some("OR"),
                '≤' => Some("<="),
                '≥' => Some(">="),
                '≠' => Some("!="),
                _ => None,
            };
            if let Some(u) = uni {
                let tok = if u.chars().all(char::is_alphabetic) {
                    Tok::Ident(u.to_string())
                } else {
                    Tok::Sym(SYMS.iter().copied().find(|s| *s == u).unwrap_or("="))
                };
                out.push(Token { tok, pos });
                adv(1, &mut i, &mut col);
                continue;
            }
            let rest: String = chars[i..chars.len().min(i + 2)].iter().collect();
            match SYMS.iter().find(|s| rest.starts_with(**s)) {
                Some(s) => {
                    out.push(Token {
                        tok: Tok::Sym(s),
                        pos,
                    });
                    adv(s.len(), &mut i, &mut col);
                }
                None => {
                    return Err(SyntaxError {
                        pos,
                        message: format!("unexpected character {c:?}"),
                    })
                }
            }
        }
    }
    out.push(Token {
        tok: Tok::Eof,
        pos: Pos { line, column: col },
    });
    Ok(out)
}

const KEYWORDS: &[&str] = &[
    "SELECT", "AS", "FROM", "WHERE", "UPDATE", "SET", "INSERT", "INTO", "DELETE", "IF", "THEN",
    "ELSE", "FOREACH", "IN", "SKIP", "MIN", "MAX", "COUNT", "NULL", "AND", "OR", "NOT", "TABLE",
    "INIT", "DOMAIN", "MODEL", "TXN", "PK",
];

fn is_keyword(s: &str) -> bool {
    KEYWORDS.iter().any(|k| k.eq_ignore_ascii_case(s))
}

struct Parser {
    toks: Vec<Token>,
    at: usize,
    prog: Program,
    /// Parameter domains by name (`domain` lines), with where they were set.
    domains: Vec<(String, Vec<i64>)>,
    /// The transaction being parsed: variable names and row tables.
    vars: Vec<String>,
    var_table: Vec<Option<usize>>,
    /// The number of parameters of the transaction being parsed.
    params: usize,
}

type R<T> = Result<T, SyntaxError>;

fn describe(t: &Tok) -> String {
    match t {
        Tok::Ident(s) => format!("`{s}`"),
        Tok::Int(n) => format!("`{n}`"),
        Tok::Sym(s) => format!("`{s}`"),
        Tok::Eof => "the end of the file".into(),
    }
}

impl Parser {
    fn peek(&self) -> &Tok {
        &self.toks[self.at].tok
    }
    fn pos(&self) -> Pos {
        self.toks[self.at].pos
    }
    fn err<T>(&self, expected: &str) -> R<T> {
        Err(SyntaxError {
            pos: self.pos(),
            message: format!("expected {expected}, found {}", describe(self.peek())),
        })
    }
    fn err_at<T>(&self, pos: Pos, message: String) -> R<T> {
        Err(SyntaxError { pos, message })
    }
    fn is_kw(&self, kw: &str) -> bool {
        matches!(self.peek(), Tok::Ident(s) if s.eq_ignore_ascii_case(kw))
    }
    fn eat_kw(&mut self, kw: &str) -> bool {
        let hit = self.is_kw(kw);
        if hit {
            self.at += 1;
        }
        hit
    }
    fn kw(&mut self, kw: &str) -> R<()> {
        if self.eat_kw(kw) {
            Ok(())
        } else {
            self.err(&format!("`{kw}`"))
        }
    }
    fn is_sym(&self, s: &str) -> bool {
        matches!(self.peek(), Tok::Sym(t) if *t == s)
    }
    fn eat_sym(&mut self, s: &str) -> bool {
        let hit = self.is_sym(s);
        if hit {
            self.at += 1;
        }
        hit
    }
    fn sym(&mut self, s: &str) -> R<()> {
        if self.eat_sym(s) {
            Ok(())
        } else {
            self.err(&format!("`{s}`"))
        }
    }
    fn ident(&mut self, what: &str) -> R<(String, Pos)> {
        let pos = self.pos();
        match self.peek() {
            Tok::Ident(s) if !is_keyword(s) => {
                let s = s.clone();
                self.at += 1;
                Ok((s, pos))
            }
            _ => self.err(what),
        }
    }
    fn int(&mut self) -> R<i64> {
        let neg = self.eat_sym("-");
        match *self.peek() {
            Tok::Int(n) => {
                self.at += 1;
                Ok(if neg { -n } else { n })
            }
            _ => self.err("an integer"),
        }
    }
    /// `a..b` or `{a, b, …}` or a single integer.
    fn int_set(&mut self) -> R<Vec<i64>> {
        let pos = self.pos();
        if self.eat_sym("{") {
            let mut v = vec![self.int()?];
            while self.eat_sym(",") {
                v.push(self.int()?);
            }
            self.sym("}")?;
            v.sort_unstable();
            v.dedup();
            return Ok(v);
        }
        let a = self.int()?;
        if self.eat_sym("..") {
            let b = self.int()?;
            if b.checked_sub(a).is_none_or(|d| !(0..=1000).contains(&d)) {
                return self.err_at(
                    pos,
                    format!("range {a}..{b} must be ascending and hold at most 1001 values"),
                );
            }
            return Ok((a..=b).collect());
        }
        Ok(vec![a])
    }

    fn table(&self, name: &str, pos: Pos) -> R<usize> {
        match self.prog.tables.iter().position(|t| t.name == name) {
            Some(t) => Ok(t),
            None => self.err_at(
                pos,
                format!("unknown table `{name}` (tables are declared with `table` before use)"),
            ),
        }
    }
    fn field(&self, table: usize, name: &str, pos: Pos) -> R<usize> {
        let t = &self.prog.tables[table];
        match t.fields.iter().position(|f| f == name) {
            Some(f) => Ok(f),
            None if name == "Alive" => Ok(t.alive()),
            None => self.err_at(
                pos,
                format!(
                    "table `{}` has no field `{name}` (fields: {})",
                    t.name,
                    t.fields.join(", ")
                ),
            ),
        }
    }
    fn txn_index(&self, name: &str, pos: Pos) -> R<usize> {
        match self.prog.txns.iter().position(|t| t.name == name) {
            Some(t) => Ok(t),
            None => self.err_at(
                pos,
                format!("unknown transaction `{name}` (declare it before the `model` line)"),
            ),
        }
    }
    fn var(&self, name: &str, pos: Pos) -> R<usize> {
        match self.vars.iter().rposition(|v| v == name) {
            Some(v) => Ok(v),
            None => self.err_at(
                pos,
                format!(
                    "unknown variable `{name}` (parameters, or locals assigned before this point)"
                ),
            ),
        }
    }
    /// The variable a statement assigns: an existing local of the same name
    /// and kind is reused (so both branches of an IF assign one variable).
    fn new_var(&mut self, name: String, table: Option<usize>, pos: Pos) -> R<usize> {
        if let Some(v) = self.vars.iter().position(|n| *n == name) {
            if v < self.params {
                return self.err_at(
                    pos,
                    format!("`{name}` is a parameter and cannot be assigned"),
                );
            }
            if self.var_table[v] != table {
                return self.err_at(
                    pos,
                    format!("`{name}` is assigned both a value and rows (or rows of two tables)"),
                );
            }
            return Ok(v);
        }
        self.vars.push(name);
        self.var_table.push(table);
        Ok(self.vars.len() - 1)
    }

    fn program(&mut self) -> R<()> {
        loop {
            if *self.peek() == Tok::Eof {
                return Ok(());
            }
            if self.eat_kw("table") {
                self.table_decl()?;
            } else if self.eat_kw("init") {
                self.init_decl()?;
            } else if self.eat_kw("domain") {
                self.domain_decl()?;
            } else if self.eat_kw("model") {
                self.model_decl()?;
            } else if self.eat_kw("txn") {
                self.txn_decl()?;
            } else {
                return self.err("`table`, `init`, `domain`, `model` or `txn`");
            }
            self.eat_sym(";");
        }
    }

    fn table_decl(&mut self) -> R<()> {
        let (name, pos) = self.ident("a table name")?;
        if self.prog.tables.iter().any(|t| t.name == name) {
            return self.err_at(pos, format!("table `{name}` is declared twice"));
        }
        self.sym("(")?;
        let (mut fields, mut pk) = (Vec::new(), Vec::new());
        loop {
            let (f, fpos) = self.ident("a field name")?;
            if fields.contains(&f) || f == "Alive" {
                return self.err_at(
                    fpos,
                    format!("field `{f}` is declared twice (or is the implicit `Alive`)"),
                );
            }
            fields.push(f);
            pk.push(self.eat_kw("pk"));
            if !self.eat_sym(",") {
                break;
            }
        }
        self.sym(")")?;
        if !pk.iter().any(|&p| p) {
            return self.err_at(
                pos,
                format!("table `{name}` needs a primary key: mark a field with `pk`"),
            );
        }
        self.prog.tables.push(Table { name, fields, pk });
        Ok(())
    }

    fn init_decl(&mut self) -> R<()> {
        let (name, pos) = self.ident("a table name")?;
        let table = self.table(&name, pos)?;
        let t = self.prog.tables[table].clone();
        let mut values: Vec<Option<Vec<i64>>> = vec![None; t.fields.len()];
        self.sym("{")?;
        loop {
            let (f, fpos) = self.ident("a field name")?;
            let fi = self.field(table, &f, fpos)?;
            if fi == t.alive() {
                return self.err_at(
                    fpos,
                    "`Alive` cannot be initialised: initial records are alive".into(),
                );
            }
            self.sym(":")?;
            let vpos = self.pos();
            let set = self.int_set()?;
            if !t.pk[fi] && set.len() != 1 {
                return self.err_at(vpos, format!("non-key field `{f}` takes one initial value"));
            }
            values[fi] = Some(set);
            if !self.eat_sym(",") {
                break;
            }
        }
        self.sym("}")?;
        // The initial records are the product of the key sets: bound it, or a
        // few ranges on key fields ask for billions of records.
        let n = values
            .iter()
            .flatten()
            .try_fold(1usize, |n, v| n.checked_mul(v.len()));
        if n.is_none_or(|n| n > MAX_INIT_RECORDS) {
            return self.err_at(
                pos,
                format!("init of `{name}` names more than {MAX_INIT_RECORDS} records"),
            );
        }
        let mut out = Vec::new();
        for (fi, v) in values.into_iter().enumerate() {
            match v {
                Some(v) => out.push(v),
                None if t.pk[fi] => {
                    return self.err_at(
                        pos,
                        format!("init of `{name}` must give key field `{}`", t.fields[fi]),
                    )
                }
                None => out.push(vec![0]),
            }
        }
        self.prog.inits.push(Init { table, values: out });
        Ok(())
    }

    fn domain_decl(&mut self) -> R<()> {
        loop {
            let (name, _) = self.ident("a parameter name")?;
            self.sym(":")?;
            let set = self.int_set()?;
            self.domains.retain(|(n, _)| *n != name);
            self.domains.push((name, set));
            if !self.eat_sym(";") || !matches!(self.peek(), Tok::Ident(s) if !is_keyword(s)) {
                return Ok(());
            }
        }
    }

    fn model_decl(&mut self) -> R<()> {
        let scope = if self.eat_sym("(") {
            let (a, apos) = self.ident("a transaction name")?;
            self.sym(",")?;
            let (b, bpos) = self.ident("a transaction name")?;
            self.sym(")")?;
            self.sym(":")?;
            Scope::Pair(self.txn_index(&a, apos)?, self.txn_index(&b, bpos)?)
        } else if matches!(
            self.toks.get(self.at + 1).map(|t| &t.tok),
            Some(Tok::Sym(":"))
        ) {
            let (a, apos) = self.ident("a transaction name")?;
            self.sym(":")?;
            Scope::Type(self.txn_index(&a, apos)?)
        } else {
            Scope::Global
        };
        let pos = self.pos();
        let (m, _) = match self.peek() {
            Tok::Ident(s) => (s.clone(), ()),
            _ => return self.err("a model (ec, cc, pc, psi, si, serializable)"),
        };
        let Some(model) = Model::parse(&m) else {
            return self.err("a model (ec, cc, pc, psi, si, serializable)");
        };
        self.at += 1;
        if let Scope::Pair(..) = scope {
            if !matches!(model, Model::Ser | Model::Psi) {
                return self.err_at(
                    pos,
                    "a pair of transaction types scopes only `serializable` or `psi`".into(),
                );
            }
        }
        self.prog.axioms.push(Axiom { model, scope });
        Ok(())
    }

    fn txn_decl(&mut self) -> R<()> {
        let (name, pos) = self.ident("a transaction name")?;
        if self.prog.txns.iter().any(|t| t.name == name) {
            return self.err_at(pos, format!("transaction `{name}` is declared twice"));
        }
        self.vars.clear();
        self.var_table.clear();
        self.params = usize::MAX;
        self.sym("(")?;
        let mut domains = Vec::new();
        if !self.is_sym(")") {
            loop {
                let (p, ppos) = self.ident("a parameter name")?;
                if self.vars.contains(&p) {
                    return self.err_at(ppos, format!("parameter `{p}` is declared twice"));
                }
                match self.domains.iter().find(|(n, _)| *n == p) {
                    Some((_, d)) => domains.push(d.clone()),
                    None => {
                        return self.err_at(ppos, format!("parameter `{p}` has no domain: add `domain {p}: a..b` before `txn {name}`"))
                    }
                }
                self.vars.push(p);
                self.var_table.push(None);
                if !self.eat_sym(",") {
                    break;
                }
            }
        }
        self.sym(")")?;
        let params = self.vars.len();
        self.params = params;
        let body = self.block()?;
        self.prog.txns.push(Txn {
            name,
            params,
            vars: std::mem::take(&mut self.vars),
            var_table: std::mem::take(&mut self.var_table),
            body,
            domains,
            pos,
        });
        Ok(())
    }

    fn block(&mut self) -> R<Vec<Stmt>> {
        self.sym("{")?;
        let mut out = Vec::new();
        while !self.eat_sym("}") {
            out.push(self.stmt()?);
            self.eat_sym(";");
        }
        Ok(out)
    }

    fn opt_where(&mut self, table: usize) -> R<Option<Pred>> {
        if self.eat_kw("WHERE") {
            Ok(Some(self.pred(table)?))
        } else {
            Ok(None)
        }
    }

    /// One statement: a single match over the statement syntax (long, but
    /// it reads as the grammar).
    fn stmt(&mut self) -> R<Stmt> {
        let pos = self.pos();
        if self.eat_kw("SELECT") {
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
            return Ok(Stmt::Select {
                table,
                fields,
                var,
                pred,
            });
        }
        if self.eat_kw("UPDATE") {
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
            return Ok(Stmt::Update { table, sets, pred });
        }
        if self.eat_kw("INSERT") {
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
            return Ok(Stmt::Insert { table, values, pos });
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
                    vec![self.stmt()?]
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
        if let Tok::Ident(s) = self.peek() {
            if !is_keyword(s) {
                let (v, vpos) = self.ident("a variable")?;
                self.sym("=")?;
                let e = self.expr()?;
                let var = self.new_var(v, None, vpos)?;
                return Ok(Stmt::Assign(var, e));
            }
        }
        self.err("a statement (SELECT, UPDATE, INSERT, DELETE, IF, FOREACH, SKIP or `v = e`)")
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
            let e = self.expr()?;
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
            return Ok(Pred::Not(Box::new(self.pred_atom(table)?)));
        }
        if self.eat_sym("(") {
            let p = self.pred(table)?;
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
            return Ok(Cond::Not(Box::new(self.cond_atom()?)));
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
            let c = self.cond()?;
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

/// Parses a program text.
pub fn parse(src: &str) -> Result<Program, SyntaxError> {
    let toks = lex(src)?;
    let mut p = Parser {
        toks,
        at: 0,
        prog: Program::default(),
        domains: Vec::new(),
        vars: Vec::new(),
        var_table: Vec::new(),
        params: 0,
    };
    p.program()?;
    if p.prog.txns.is_empty() {
        return p.err("at least one `txn`");
    }
    Ok(p.prog)
}
