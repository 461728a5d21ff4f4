//! Predicate micro-ops (Vbox's predicate reads and writes) over rw-register
//! rows: `[:rp PRED RESULT]` (a `SELECT … WHERE PRED` that returned the rows
//! `RESULT`, a map `{key value}`) and `[:wp PRED VALUE KEYS]` (an `UPDATE …
//! SET = VALUE WHERE PRED` that matched `KEYS`).
//!
//! A [`Mop`](super::Mop) stays three words: a predicate micro-op's argument
//! is [`MopArg::Pred`](super::MopArg::Pred), an index into
//! [`History::predicates`](super::History::predicates), which holds the
//! compiled predicate and its rows.

use crate::edn::Value;
use std::cmp::Ordering;

/// A comparison against a constant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CmpOp {
    /// `[:= v]`
    Eq,
    /// `[:< v]`
    Lt,
    /// `[:<= v]`
    Le,
    /// `[:> v]`
    Gt,
    /// `[:>= v]`
    Ge,
}

/// A predicate over one register's value. Absent or deleted rows (`nil`)
/// match no predicate, not even `[:all]` or `[:not …]`: SQL never returns
/// a row that does not exist.
#[derive(Clone, Debug, PartialEq)]
pub enum Pred {
    /// `[:all]`: every existing row.
    All,
    /// `[:= v]`, `[:< v]`, `[:<= v]`, `[:> v]`, `[:>= v]`.
    Cmp(CmpOp, Value),
    /// `[:between lo hi]`, both ends included (as SQL's `BETWEEN`).
    Between(Value, Value),
    /// `[:in #{v …}]` (a set, vector or list of values).
    In(Vec<Value>),
    /// `[:not P]`.
    Not(Box<Pred>),
    /// `[:and P …]` (`[:and]` is true).
    And(Vec<Pred>),
    /// `[:or P …]` (`[:or]` is false).
    Or(Vec<Pred>),
}

/// Orders two values when they are comparable: integers and floats by
/// number, strings by text; anything else (a keyword against a number,
/// say) is not ordered, and every ordering comparison on it is false.
fn order(a: &Value, b: &Value) -> Option<Ordering> {
    let num = |v: &Value| match v {
        Value::Int(n) => Some(*n as f64),
        Value::Float(s) => s.parse::<f64>().ok(),
        _ => None,
    };
    match (a, b) {
        (Value::Int(x), Value::Int(y)) => Some(x.cmp(y)),
        (Value::Str(x), Value::Str(y)) => Some(x.cmp(y)),
        _ => num(a)?.partial_cmp(&num(b)?),
    }
}

impl Pred {
    /// Whether a row holding `value` (`None`: absent or deleted) matches.
    pub fn matches(&self, value: Option<&Value>) -> bool {
        match value {
            None | Some(Value::Nil) => false,
            Some(v) => self.holds(v),
        }
    }

    /// [`Self::matches`] on an integer row, without building a [`Value`]
    /// (the checker evaluates predicates on many integer versions).
    pub fn matches_int(&self, n: i64) -> bool {
        let ord = |c: &Value| match c {
            Value::Int(m) => Some(n.cmp(m)),
            Value::Float(_) => order(&Value::Int(n), c),
            _ => None,
        };
        match self {
            Pred::All => true,
            Pred::Cmp(op, c) => ord(c).is_some_and(|o| match op {
                CmpOp::Eq => o == Ordering::Equal,
                CmpOp::Lt => o == Ordering::Less,
                CmpOp::Le => o != Ordering::Greater,
                CmpOp::Gt => o == Ordering::Greater,
                CmpOp::Ge => o != Ordering::Less,
            }),
            Pred::Between(lo, hi) => {
                ord(lo).is_some_and(|o| o != Ordering::Less)
                    && ord(hi).is_some_and(|o| o != Ordering::Greater)
            }
            Pred::In(vs) => vs.iter().any(|c| ord(c) == Some(Ordering::Equal)),
            Pred::Not(p) => !p.matches_int(n),
            Pred::And(ps) => ps.iter().all(|p| p.matches_int(n)),
            Pred::Or(ps) => ps.iter().any(|p| p.matches_int(n)),
        }
    }

    fn holds(&self, v: &Value) -> bool {
        match self {
            Pred::All => true,
            Pred::Cmp(CmpOp::Eq, c) => v == c || order(v, c) == Some(Ordering::Equal),
            Pred::Cmp(op, c) => order(v, c).is_some_and(|o| match op {
                CmpOp::Lt => o == Ordering::Less,
                CmpOp::Le => o != Ordering::Greater,
                CmpOp::Gt => o == Ordering::Greater,
                CmpOp::Ge => o != Ordering::Less,
                CmpOp::Eq => o == Ordering::Equal,
            }),
            Pred::Between(lo, hi) => {
                order(v, lo).is_some_and(|o| o != Ordering::Less)
                    && order(v, hi).is_some_and(|o| o != Ordering::Greater)
            }
            Pred::In(vs) => vs
                .iter()
                .any(|c| v == c || order(v, c) == Some(Ordering::Equal)),
            Pred::Not(p) => !p.holds(v),
            Pred::And(ps) => ps.iter().all(|p| p.holds(v)),
            Pred::Or(ps) => ps.iter().any(|p| p.holds(v)),
        }
    }

    /// The integer interval `[lo, hi]` outside which no integer matches,
    /// when the predicate says so simply (`None`: no such bound known). A
    /// checker uses it to skip keys none of whose integer values can match.
    pub fn int_bounds(&self) -> Option<(i64, i64)> {
        let int = |v: &Value| match v {
            Value::Int(n) => Some(*n),
            _ => None,
        };
        match self {
            Pred::Cmp(CmpOp::Eq, c) => int(c).map(|n| (n, n)),
            Pred::Cmp(CmpOp::Lt, c) => int(c).map(|n| (i64::MIN, n.saturating_sub(1))),
            Pred::Cmp(CmpOp::Le, c) => int(c).map(|n| (i64::MIN, n)),
            Pred::Cmp(CmpOp::Gt, c) => int(c).map(|n| (n.saturating_add(1), i64::MAX)),
            Pred::Cmp(CmpOp::Ge, c) => int(c).map(|n| (n, i64::MAX)),
            Pred::Between(lo, hi) => Some((int(lo)?, int(hi)?)),
            Pred::In(vs) => {
                let ns: Option<Vec<i64>> = vs.iter().map(int).collect();
                let ns = ns?;
                Some((*ns.iter().min()?, *ns.iter().max()?))
            }
            Pred::And(ps) => ps
                .iter()
                .filter_map(Pred::int_bounds)
                .reduce(|a, b| (a.0.max(b.0), a.1.min(b.1))),
            Pred::Or(ps) => ps
                .iter()
                .map(Pred::int_bounds)
                .collect::<Option<Vec<_>>>()?
                .into_iter()
                .reduce(|a, b| (a.0.min(b.0), a.1.max(b.1))),
            Pred::All | Pred::Not(_) => None,
        }
    }

    /// Integer intervals `[lo, hi]` outside whose union no integer
    /// matches, when the predicate says so simply (`None`: no such bound
    /// known). Tighter than [`Self::int_bounds`] for `[:in #{…}]` and
    /// `[:or …]`, whose values lie far apart: a checker then visits the
    /// values near each instead of every value between the extremes.
    pub fn int_intervals(&self) -> Option<Vec<(i64, i64)>> {
        match self {
            Pred::In(vs) => vs
                .iter()
                .map(|v| match v {
                    Value::Int(n) => Some((*n, *n)),
                    _ => None,
                })
                .collect(),
            Pred::Or(ps) => {
                let parts: Option<Vec<Vec<(i64, i64)>>> =
                    ps.iter().map(Pred::int_intervals).collect();
                Some(parts?.concat())
            }
            // A conjunction matches no more than any of its parts.
            Pred::And(ps) => ps
                .iter()
                .filter_map(Pred::int_intervals)
                .min_by_key(|iv| {
                    iv.iter()
                        .map(|&(lo, hi)| (hi as i128 - lo as i128).max(-1) + 1)
                        .sum::<i128>()
                })
                .or_else(|| self.int_bounds().map(|b| vec![b])),
            _ => self.int_bounds().map(|b| vec![b]),
        }
    }

    /// Compiles a predicate form, or says what was expected. Operator names
    /// are keywords (EDN) or strings (JSON).
    pub fn parse(form: &Value) -> Result<Pred, String> {
        let expected = |what: &str| format!("expected {what}, found {}", crate::edn::pr_str(form));
        const FORMS: &str = "a predicate: [:= v], [:< v], [:<= v], [:> v], [:>= v], [:between lo hi], [:in #{v …}], [:not P], [:and P …], [:or P …] or [:all]";
        let (Value::Vector(parts) | Value::List(parts)) = form else {
            return Err(expected(FORMS));
        };
        let name = match parts.first() {
            Some(Value::Keyword(k) | Value::Str(k)) => k.as_str(),
            _ => return Err(expected(FORMS)),
        };
        let args = &parts[1..];
        let arity = |n: usize| -> Result<(), String> {
            if args.len() == n {
                Ok(())
            } else {
                Err(format!(
                    "expected [:{name}{}] with {n} argument{}, found {}",
                    " x".repeat(n),
                    if n == 1 { "" } else { "s" },
                    crate::edn::pr_str(form)
                ))
            }
        };
        let constant = |v: &Value| -> Result<Value, String> {
            match v {
                Value::Nil => Err(format!(
                    "expected a non-nil constant in {} (nil rows match no predicate)",
                    crate::edn::pr_str(form)
                )),
                v => Ok(v.clone()),
            }
        };
        let cmp = |op| -> Result<Pred, String> {
            arity(1)?;
            Ok(Pred::Cmp(op, constant(&args[0])?))
        };
        Ok(match name {
            "all" => {
                arity(0)?;
                Pred::All
            }
            "=" => cmp(CmpOp::Eq)?,
            "<" => cmp(CmpOp::Lt)?,
            "<=" => cmp(CmpOp::Le)?,
            ">" => cmp(CmpOp::Gt)?,
            ">=" => cmp(CmpOp::Ge)?,
            "between" => {
                arity(2)?;
                Pred::Between(constant(&args[0])?, constant(&args[1])?)
            }
            "in" => {
                arity(1)?;
                match &args[0] {
                    Value::Set(vs) | Value::Vector(vs) | Value::List(vs) => {
                        Pred::In(vs.iter().map(constant).collect::<Result<_, _>>()?)
                    }
                    _ => return Err(expected("[:in #{v …}] with a set of values")),
                }
            }
            "not" => {
                arity(1)?;
                Pred::Not(Box::new(Pred::parse(&args[0])?))
            }
            "and" => Pred::And(args.iter().map(Pred::parse).collect::<Result<_, _>>()?),
            "or" => Pred::Or(args.iter().map(Pred::parse).collect::<Result<_, _>>()?),
            _ => return Err(expected(FORMS)),
        })
    }
}

/// One predicate micro-op.
#[derive(Clone, Debug, PartialEq)]
pub struct PredMop {
    /// The compiled predicate.
    pub pred: Pred,
    /// The predicate form as written (for printing).
    pub form: Value,
    /// `:rp`: the rows returned, `(key, value)`, keys distinct. `:wp`: the
    /// keys matched, with `None` (their old values are not known).
    pub rows: Vec<(super::Atom, Option<super::Atom>)>,
    /// `:wp` only: the value written to every matched key (`Some(None)`
    /// deletes them).
    pub write: Option<Option<super::Atom>>,
    /// The key universe the micro-op declared (its optional last element,
    /// sorted, distinct): the rows the predicate ranged over. `None`: every
    /// key of the history.
    pub universe: Option<Vec<super::Atom>>,
}

impl PredMop {
    /// Whether the predicate ranged over key `k` (it is in the declared
    /// universe, or none was declared).
    pub fn ranges_over(&self, k: super::Atom) -> bool {
        self.universe
            .as_ref()
            .is_none_or(|u| u.binary_search(&k).is_ok())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::edn::parse_one;

    fn p(s: &str) -> Pred {
        Pred::parse(&parse_one(s.as_bytes()).unwrap()).unwrap()
    }

    /// Each form matches exactly the values it names; nil matches nothing.
    #[test]
    fn forms_match_as_sql_would() {
        let i = |n| Some(Value::Int(n));
        let m = |s: &str, v: Option<Value>| p(s).matches(v.as_ref());
        assert!(m("[:= 1]", i(1)) && !m("[:= 1]", i(2)));
        assert!(m("[:< 5]", i(4)) && !m("[:< 5]", i(5)));
        assert!(m("[:<= 5]", i(5)) && !m("[:<= 5]", i(6)));
        assert!(m("[:> 5]", i(6)) && !m("[:> 5]", i(5)));
        assert!(m("[:>= 5]", i(5)) && !m("[:>= 5]", i(4)));
        assert!(m("[:between 2 4]", i(2)) && m("[:between 2 4]", i(4)));
        assert!(!m("[:between 2 4]", i(5)));
        assert!(m("[:in #{1 3}]", i(3)) && !m("[:in #{1 3}]", i(2)));
        assert!(m("[:not [:= 1]]", i(2)) && !m("[:not [:= 1]]", i(1)));
        assert!(m("[:and [:> 1] [:< 3]]", i(2)) && !m("[:and [:> 1] [:< 3]]", i(3)));
        assert!(m("[:or [:= 1] [:= 3]]", i(3)) && !m("[:or [:= 1] [:= 3]]", i(2)));
        assert!(m("[:all]", i(7)));
        for s in ["[:all]", "[:not [:= 1]]", "[:< 5]"] {
            assert!(!m(s, None) && !m(s, Some(Value::Nil)), "{s} on nil");
        }
        assert!(!m("[:< 5]", Some(Value::kw("x"))));
        assert!(m("[:< \"b\"]", Some(Value::Str("a".into()))));
    }

    /// Bad forms say what was expected.
    #[test]
    fn bad_forms_are_explained() {
        let e = |s: &str| Pred::parse(&parse_one(s.as_bytes()).unwrap()).unwrap_err();
        assert!(e("[:like 1]").starts_with("expected a predicate: [:= v]"));
        assert_eq!(
            e("[:= 1 2]"),
            "expected [:= x] with 1 argument, found [:= 1 2]"
        );
        assert_eq!(
            e("[:between 1]"),
            "expected [:between x x] with 2 arguments, found [:between 1]"
        );
        assert!(e("[:= nil]").contains("non-nil constant"));
        assert!(e("[:in 3]").contains("set of values"));
        assert!(e("7").starts_with("expected a predicate"));
        assert!(e("[:not [:bad]]").ends_with("found [:bad]"));
    }

    /// `matches_int` agrees with `matches` on integers, against integer,
    /// float and other constants.
    #[test]
    fn matches_int_agrees_with_matches() {
        let forms = [
            "[:= 3]",
            "[:< 3]",
            "[:<= 3]",
            "[:> 3]",
            "[:>= 3]",
            "[:= 3.0]",
            "[:< 2.5]",
            "[:between 1 4]",
            "[:between 1.5 4]",
            "[:in #{1 3 :a}]",
            "[:in [2.0 5]]",
            "[:not [:= 2]]",
            "[:and [:>= 1] [:< 4]]",
            "[:or [:= 0] [:> 3]]",
            "[:all]",
            "[:= :a]",
            "[:< \"b\"]",
        ];
        for f in forms {
            for n in -1..6 {
                assert_eq!(
                    p(f).matches_int(n),
                    p(f).matches(Some(&Value::Int(n))),
                    "{f} on {n}"
                );
            }
        }
        assert!(p("[:= 3.0]").matches_int(3) && p("[:in [2.0 5]]").matches_int(2));
        assert!(!p("[:< 2.5]").matches_int(3) && p("[:< 2.5]").matches_int(2));
    }

    /// Integer bounds cover every matching integer.
    #[test]
    fn int_bounds() {
        assert_eq!(p("[:between 2 4]").int_bounds(), Some((2, 4)));
        assert_eq!(p("[:< 5]").int_bounds(), Some((i64::MIN, 4)));
        assert_eq!(p("[:in #{7 3}]").int_bounds(), Some((3, 7)));
        assert_eq!(p("[:and [:> 1] [:< 9]]").int_bounds(), Some((2, 8)));
        assert_eq!(p("[:or [:= 1] [:not [:= 2]]]").int_bounds(), None);
        assert_eq!(p("[:all]").int_bounds(), None);
    }

    /// Integer intervals cover every matching integer, one per value of
    /// `[:in …]`; a conjunction keeps its narrowest part; anything
    /// with an unbounded part has none.
    #[test]
    fn int_intervals_cover_the_matches() {
        let mut iv = p("[:in #{7 3}]").int_intervals().expect("bounded");
        iv.sort_unstable();
        assert_eq!(iv, vec![(3, 3), (7, 7)]);
        assert_eq!(
            p("[:or [:= 1] [:between 5 6]]").int_intervals(),
            Some(vec![(1, 1), (5, 6)])
        );
        assert_eq!(
            p("[:and [:> 0] [:in #{9}]]").int_intervals(),
            Some(vec![(9, 9)])
        );
        assert_eq!(p("[:in #{}]").int_intervals(), Some(vec![]));
        assert_eq!(p("[:or [:= 1] [:not [:= 2]]]").int_intervals(), None);
        assert_eq!(p("[:in #{1 :a}]").int_intervals(), None);
        // Every integer the predicate matches lies in some interval.
        for f in [
            "[:in #{7 3}]",
            "[:or [:= 1] [:between 5 6]]",
            "[:and [:> 0] [:in #{9 -1}]]",
        ] {
            let iv = p(f).int_intervals().expect("bounded");
            for n in -3..12 {
                assert!(
                    !p(f).matches_int(n) || iv.iter().any(|&(lo, hi)| lo <= n && n <= hi),
                    "{f} {n}"
                );
            }
        }
    }
}
