//! The recursive-descent parser of the program language (see
//! [`super::syntax`]). Names are resolved while parsing (tables and fields to
//! indices, variables to per-transaction slots), so every error names
//! line:column and what was expected there. Declarations must come before
//! their use. This file holds the parser's state, its token helpers, name
//! resolution and the top-level declarations; `lex` the lexer and `body`
//! the transaction bodies (statements, expressions, WHERE and IF
//! conditions).

use super::syntax::*;

mod body;
mod lex;

use lex::{is_keyword, lex, Tok, Token};

/// The most initial records one `init` line may name (the product of its key sets).
const MAX_INIT_RECORDS: usize = 10_000;

/// The deepest nesting of parentheses, NOT, and IF/FOREACH blocks: the parser
/// and the interpreter recurse on it, so an untrusted file of nested `(`
/// would otherwise overflow the stack.
const MAX_NESTING: usize = 128;

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
    /// How deeply the rule being parsed is nested (see [`MAX_NESTING`]).
    depth: usize,
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
    /// Parses one nested rule with `f`, an error past [`MAX_NESTING`].
    fn nested<T>(&mut self, f: impl FnOnce(&mut Self) -> R<T>) -> R<T> {
        if self.depth >= MAX_NESTING {
            return self.err_at(
                self.pos(),
                format!("nesting deeper than {MAX_NESTING} levels"),
            );
        }
        self.depth += 1;
        let out = f(self);
        self.depth -= 1;
        out
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
        depth: 0,
    };
    p.program()?;
    if p.prog.txns.is_empty() {
        return p.err("at least one `txn`");
    }
    Ok(p.prog)
}
