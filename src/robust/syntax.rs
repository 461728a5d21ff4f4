//! The program language of `ellery robust`: tables with primary keys,
//! initial states, parameter domains, per-type consistency annotations and
//! transactions in the SQL-like language of Nagar–Jagannathan §3.1 (SELECT,
//! SELECT MIN|MAX|COUNT, UPDATE, INSERT, DELETE with WHERE; assignment;
//! IF/ELSE; FOREACH; `= NULL`; `IN`/`∈`; ABORT).
//!
//! This file holds the program model; [`super::parse`] the lexer and
//! parser.

use std::fmt;

/// A position in the program text (1-based).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Pos {
    /// Line.
    pub line: u32,
    /// Column (in characters).
    pub column: u32,
}

/// A parse or validation error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SyntaxError {
    /// Where.
    pub pos: Pos,
    /// What was expected, and what was found.
    pub message: String,
}

impl fmt::Display for SyntaxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.pos.line, self.pos.column, self.message)
    }
}

/// A table: fields (the primary-key ones flagged). Every table also has the
/// implicit field `Alive` at index `fields.len()`.
#[derive(Clone, Debug)]
pub struct Table {
    /// Name.
    pub name: String,
    /// Field names.
    pub fields: Vec<String>,
    /// Whether each field is part of the primary key.
    pub pk: Vec<bool>,
}

impl Table {
    /// The index of the implicit `Alive` field.
    pub fn alive(&self) -> usize {
        self.fields.len()
    }
    /// A field's name, `Alive` included.
    pub fn field_name(&self, f: usize) -> &str {
        self.fields.get(f).map_or("Alive", String::as_str)
    }
    /// The primary-key field indices.
    pub fn pk_fields(&self) -> Vec<usize> {
        (0..self.fields.len()).filter(|&f| self.pk[f]).collect()
    }
}

/// Initial records: the cartesian product of the primary-key value sets,
/// other fields set to the given constants (0 when absent), all alive.
#[derive(Clone, Debug)]
pub struct Init {
    /// Table index.
    pub table: usize,
    /// Per field: the values (one for non-key fields).
    pub values: Vec<Vec<i64>>,
}

/// Arithmetic operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArithOp {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/` (truncating; division by zero gives NULL)
    Div,
}

/// Comparison operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CmpOp {
    /// `=`
    Eq,
    /// `!=` / `<>`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
}

impl CmpOp {
    /// Applies the comparison.
    pub fn holds(self, a: i64, b: i64) -> bool {
        match self {
            CmpOp::Eq => a == b,
            CmpOp::Ne => a != b,
            CmpOp::Lt => a < b,
            CmpOp::Le => a <= b,
            CmpOp::Gt => a > b,
            CmpOp::Ge => a >= b,
        }
    }
}

/// An expression over parameters and locals (never fields, as in the paper).
#[derive(Clone, Debug)]
pub enum Expr {
    /// An integer literal.
    Int(i64),
    /// `NULL`.
    Null,
    /// A variable (its value; for a row set, the first row's first selected
    /// field).
    Var(usize),
    /// `v.f`: field `f` of the first row of `v` (a row set or loop variable).
    Dot(usize, usize),
    /// Arithmetic.
    Arith(ArithOp, Box<Expr>, Box<Expr>),
}

/// A WHERE clause on the records of one table.
#[derive(Clone, Debug)]
pub enum Pred {
    /// `field op expr`.
    Cmp(usize, CmpOp, Expr),
    /// `field IN v`: the field's value is one of `v`'s values.
    In(usize, usize),
    /// `NOT`.
    Not(Box<Pred>),
    /// `AND`.
    And(Box<Pred>, Box<Pred>),
    /// `OR`.
    Or(Box<Pred>, Box<Pred>),
}

/// An IF condition (over parameters and locals only).
#[derive(Clone, Debug)]
pub enum Cond {
    /// `e op e`.
    Cmp(Expr, CmpOp, Expr),
    /// `v = NULL` (an empty row set, or a NULL value).
    IsNull(usize),
    /// `v1 IN v2`.
    In(Expr, usize),
    /// `NOT`.
    Not(Box<Cond>),
    /// `AND`.
    And(Box<Cond>, Box<Cond>),
    /// `OR`.
    Or(Box<Cond>, Box<Cond>),
}

/// Aggregates of `SELECT Q f`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Agg {
    /// `MIN`
    Min,
    /// `MAX`
    Max,
    /// `COUNT` (of the matching records; the field is only read).
    Count,
}

/// A statement.
#[derive(Clone, Debug)]
pub enum Stmt {
    /// `SELECT f̄ AS v FROM T WHERE φ` (v: the matching rows).
    Select {
        /// Table.
        table: usize,
        /// Selected fields.
        fields: Vec<usize>,
        /// Target variable.
        var: usize,
        /// WHERE (None: every record).
        pred: Option<Pred>,
    },
    /// `SELECT Q(f) AS v FROM T WHERE φ`.
    Aggregate {
        /// Table.
        table: usize,
        /// Aggregate.
        agg: Agg,
        /// Field (None for `COUNT(*)`).
        field: Option<usize>,
        /// Target variable.
        var: usize,
        /// WHERE.
        pred: Option<Pred>,
    },
    /// `UPDATE T SET f = e, … WHERE φ`.
    Update {
        /// Table.
        table: usize,
        /// Assignments.
        sets: Vec<(usize, Expr)>,
        /// WHERE.
        pred: Option<Pred>,
    },
    /// `INSERT INTO T (f = e, …)`; every key field must be given.
    Insert {
        /// Table.
        table: usize,
        /// Field values.
        values: Vec<(usize, Expr)>,
        /// Where the statement is (for errors about its key).
        pos: Pos,
    },
    /// `DELETE FROM T WHERE φ`.
    Delete {
        /// Table.
        table: usize,
        /// WHERE.
        pred: Option<Pred>,
    },
    /// `v = e`.
    Assign(usize, Expr),
    /// `IF c THEN { … } ELSE { … }`.
    If(Cond, Vec<Stmt>, Vec<Stmt>),
    /// `FOREACH v1 IN v2 { … }`.
    Foreach(usize, usize, Vec<Stmt>),
    /// `SKIP`.
    Skip,
    /// `ABORT`: the instance aborts here. An aborted instance is not part
    /// of the execution (no reads, no writes, not counted against k): the
    /// engines consider committed instances only.
    Abort,
}

/// A transaction program.
#[derive(Clone, Debug)]
pub struct Txn {
    /// Name.
    pub name: String,
    /// Number of parameters (variables `0..params`).
    pub params: usize,
    /// Variable names (parameters first).
    pub vars: Vec<String>,
    /// The table whose rows a row-set variable holds (None for values).
    pub var_table: Vec<Option<usize>>,
    /// Body.
    pub body: Vec<Stmt>,
    /// Each parameter's domain.
    pub domains: Vec<Vec<i64>>,
    /// Where the name is.
    pub pos: Pos,
}

/// Consistency models (the paper's axioms, §3.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Model {
    /// Eventual consistency: the basic axioms only.
    Ec,
    /// Causal: vis transitive.
    Cc,
    /// Prefix: ar ; vis ⊆ vis.
    Pc,
    /// Parallel SI: WW ⊆ vis, vis transitive (see the module doc).
    Psi,
    /// Snapshot isolation: PSI ∧ PC.
    Si,
    /// Serializability: vis = ar.
    Ser,
}

impl Model {
    /// Parses a model name.
    pub fn parse(s: &str) -> Option<Model> {
        Some(match s.to_ascii_lowercase().as_str() {
            "ec" | "eventual" => Model::Ec,
            "cc" | "causal" => Model::Cc,
            "pc" | "prefix" => Model::Pc,
            "psi" => Model::Psi,
            "si" | "snapshot-isolation" => Model::Si,
            "ser" | "serializable" => Model::Ser,
            _ => return None,
        })
    }
    /// The model's short name.
    pub fn name(self) -> &'static str {
        match self {
            Model::Ec => "ec",
            Model::Cc => "cc",
            Model::Pc => "pc",
            Model::Psi => "psi",
            Model::Si => "si",
            Model::Ser => "serializable",
        }
    }
}

/// Which instances an axiom constrains.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Scope {
    /// All.
    Global,
    /// Those involving this transaction type (see the module docs of
    /// [`crate::robust`] for the exact reading per axiom).
    Type(usize),
    /// Pairs of these two types (selective serializability, PSI).
    Pair(usize, usize),
}

/// A scoped model annotation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Axiom {
    /// Model.
    pub model: Model,
    /// Scope.
    pub scope: Scope,
}

/// A parsed program.
#[derive(Clone, Debug, Default)]
pub struct Program {
    /// Tables.
    pub tables: Vec<Table>,
    /// Initial records.
    pub inits: Vec<Init>,
    /// Transactions.
    pub txns: Vec<Txn>,
    /// Model annotations from the file.
    pub axioms: Vec<Axiom>,
}

pub use super::parse::parse;
