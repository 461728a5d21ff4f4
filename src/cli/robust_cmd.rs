//! `ellery robust`: static robustness of transactional programs (see
//! [`crate::robust`]). Exit codes: 0 robust (up to k, or proved), 1 not
//! robust, 2 unknown, 3 bad input.

use crate::edn::{pr_str, Value};
use crate::error::{EXIT_BAD_INPUT, EXIT_INVALID, EXIT_UNKNOWN, EXIT_VALID};
use crate::report::json_pprint::pprint_json;
use crate::robust::syntax::{Model, Scope};
use crate::robust::{self, witness, Engine, Loaded, Method, Proof, Report, Verdict};
use std::path::PathBuf;
use std::time::Duration;

/// Proof methods.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
enum ProveArg {
    /// No chordless k-edge dependency path, and no cycle of ≤ k instances.
    ShortestPath,
    /// Lemma 11 of the paper, over subsets of the transaction types.
    Inductive,
}

/// Bounded engines.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
enum EngineArg {
    /// The SAT encoding (batsat), candidates confirmed by replay.
    Sat,
    /// The explicit-state enumerator.
    Enumerate,
}

/// Output formats.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
enum Out {
    /// An EDN result map.
    Edn,
    /// The result map as JSON.
    Json,
    /// One line.
    Summary,
}

#[derive(clap::Args, Debug)]
pub(super) struct RobustArgs {
    /// The program file.
    program: PathBuf,
    /// Consistency models that hold (comma-separated, together): ec, cc,
    /// pc, psi, si, serializable; added to the file's `model` lines.
    #[arg(short = 'c', long = "consistency-models", value_delimiter = ',')]
    models: Vec<String>,
    /// The bound: executions of at most K instances (and the longest path
    /// the shortest-path method tries).
    #[arg(short = 'k', default_value_t = 4)]
    k: usize,
    /// Prove robustness for all executions (falls back to the bounded
    /// check when the method fails).
    #[arg(long, value_enum)]
    prove: Option<ProveArg>,
    /// Bounded engine.
    #[arg(long, value_enum, default_value = "sat")]
    engine: EngineArg,
    /// Output format.
    #[arg(long, value_enum, default_value = "edn")]
    output: Out,
    /// Write a witness as a Jepsen list-append history to FILE.
    #[arg(long, value_name = "FILE")]
    witness: Option<PathBuf>,
    /// Give up after MS milliseconds (0: no limit): the answer is unknown.
    #[arg(long, value_name = "MS", default_value_t = 60000)]
    timeout: u64,
}

fn model_kw(prog: &crate::robust::syntax::Program, a: &crate::robust::syntax::Axiom) -> Value {
    let m = a.model.name();
    Value::Str(match a.scope {
        Scope::Global => m.to_string(),
        Scope::Type(t) => format!("{}: {m}", prog.txns[t].name),
        Scope::Pair(x, y) => format!("({}, {}): {m}", prog.txns[x].name, prog.txns[y].name),
    })
}

/// The result map.
pub fn result_value(l: &Loaded, k: usize, r: &Report) -> Value {
    let mut m = vec![];
    let models = Value::Vector(r.axioms.iter().map(|a| model_kw(&l.prog, a)).collect());
    match &r.verdict {
        Verdict::NotRobust(w) => {
            m.push(("robust?", Value::Bool(false)));
            m.push(("instances", Value::Int(w.exec.descs.len() as i64)));
            m.push(("witness", witness::to_value(&l.prog, &l.an, w)));
        }
        Verdict::RobustUpTo(k) => {
            m.push(("robust?", Value::Bool(true)));
            m.push(("up-to-k", Value::Int(*k as i64)));
        }
        Verdict::Proved(p) => {
            m.push(("robust?", Value::Bool(true)));
            m.push(("proved", Value::Bool(true)));
            match p {
                Proof::ShortestPath(k) => {
                    m.push(("method", Value::kw("shortest-path")));
                    m.push(("path-length", Value::Int(*k as i64)));
                }
                Proof::Inductive(steps) => {
                    m.push(("method", Value::kw("inductive")));
                    let steps = steps.iter().map(|s| {
                        Value::Vector(
                            s.iter()
                                .map(|&t| Value::Str(l.prog.txns[t].name.clone()))
                                .collect(),
                        )
                    });
                    m.push(("subsets", Value::Vector(steps.collect())));
                }
            }
        }
        Verdict::Unknown(why) => {
            m.push(("robust?", Value::kw("unknown")));
            m.push(("reason", Value::Str(why.clone())));
        }
    }
    m.push(("models", models));
    m.push(("k", Value::Int(k as i64)));
    if !r.notes.is_empty() {
        m.push((
            "notes",
            Value::Vector(r.notes.iter().map(|n| Value::Str(n.clone())).collect()),
        ));
    }
    Value::kw_map(m)
}

fn summary(l: &Loaded, r: &Report) -> String {
    match &r.verdict {
        Verdict::NotRobust(w) => {
            let txns: Vec<String> = w
                .exec
                .descs
                .iter()
                .map(|&d| robust::witness::instance_name(&l.prog, &l.an.descs[d]))
                .collect();
            let what = w.description.map(|d| format!(" ({d})")).unwrap_or_default();
            format!(
                "not robust: {}{what} with {}",
                w.kind.elle_name(),
                txns.join(", ")
            )
        }
        Verdict::RobustUpTo(k) => format!("robust up to k = {k}"),
        Verdict::Proved(Proof::ShortestPath(k)) => {
            format!("proved robust (shortest-path, k = {k})")
        }
        Verdict::Proved(Proof::Inductive(s)) => {
            format!("proved robust (inductive, {} step(s))", s.len())
        }
        Verdict::Unknown(why) => format!("unknown: {why}"),
    }
}

pub(super) fn run_robust(a: RobustArgs) -> i32 {
    let path = a.program.display().to_string();
    let src = match std::fs::read(&a.program) {
        Ok(b) => match String::from_utf8(b) {
            Ok(s) => s,
            Err(e) => {
                eprintln!(
                    "ellery: {path}: not UTF-8 text (byte {})",
                    e.utf8_error().valid_up_to()
                );
                return EXIT_BAD_INPUT;
            }
        },
        Err(e) => {
            eprintln!("ellery: {path}: {e}");
            return EXIT_BAD_INPUT;
        }
    };
    let l = match robust::load(&src) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("ellery: {path}:{e}");
            return EXIT_BAD_INPUT;
        }
    };
    let mut models = Vec::new();
    for m in &a.models {
        match Model::parse(m) {
            Some(m) => models.push(m),
            None => {
                eprintln!("ellery: -c {m}: not a model (ec, cc, pc, psi, si, serializable)");
                return EXIT_BAD_INPUT;
            }
        }
    }
    if models.is_empty() && l.prog.axioms.is_empty() {
        eprintln!("ellery: {path}: no consistency model: give -c MODEL or a `model` line");
        return EXIT_BAD_INPUT;
    }
    if a.k < 2 || a.k > 12 {
        eprintln!("ellery: -k {}: the bound must be between 2 and 12", a.k);
        return EXIT_BAD_INPUT;
    }
    let opts = robust::Options {
        models,
        k: a.k,
        prove: a.prove.map(|p| match p {
            ProveArg::ShortestPath => Method::ShortestPath,
            ProveArg::Inductive => Method::Inductive,
        }),
        engine: match a.engine {
            EngineArg::Sat => Engine::Sat,
            EngineArg::Enumerate => Engine::Enumerate,
        },
        timeout: (a.timeout > 0).then(|| Duration::from_millis(a.timeout)),
    };
    let r = robust::check(&l, &opts);
    if let (Some(file), Verdict::NotRobust(w)) = (&a.witness, &r.verdict) {
        if let Err(e) = std::fs::write(file, witness::history(&l.prog, &l.an, w)) {
            eprintln!("ellery: {}: {e}", file.display());
            return EXIT_BAD_INPUT;
        }
    }
    let v = result_value(&l, a.k, &r);
    match a.output {
        Out::Edn => println!("{}", pr_str(&v)),
        Out::Json => print!("{}", pprint_json(&v)),
        Out::Summary => println!("{path}\t{}", summary(&l, &r)),
    }
    match r.verdict {
        Verdict::NotRobust(_) => EXIT_INVALID,
        Verdict::RobustUpTo(_) | Verdict::Proved(_) => EXIT_VALID,
        Verdict::Unknown(_) => EXIT_UNKNOWN,
    }
}
