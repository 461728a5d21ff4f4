//! The generic EDN value tree.

/// An EDN value, as Clojure would read it.
///
/// Maps and sets keep their source order (Clojure's printing order for small
/// maps); floats keep their printed form so values can be hashed and compared
/// exactly.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Value {
    /// `nil`
    Nil,
    /// `true` / `false`
    Bool(bool),
    /// An integer that fits in 64 bits.
    Int(i64),
    /// An integer beyond 64 bits (or with an `N` suffix), as its digits
    /// (with sign, without the suffix).
    BigInt(String),
    /// A floating-point number, in Clojure's printed form (e.g. `1.5`, `1.0E10`).
    Float(String),
    /// A string (unescaped).
    Str(String),
    /// A character literal such as `\a` or `\newline`.
    Char(char),
    /// A keyword, without the leading colon (e.g. `txn`, `elle.list-append/init`).
    Keyword(String),
    /// A symbol (e.g. `...`, `com.foo.Exception`).
    Symbol(String),
    /// `[...]`
    Vector(Vec<Value>),
    /// `(...)`
    List(Vec<Value>),
    /// `{...}`, entries in order.
    Map(Vec<(Value, Value)>),
    /// `#{...}`, elements in order.
    Set(Vec<Value>),
    /// A tagged literal such as `#inst "..."` or `#object[...]`.
    Tagged(String, Box<Value>),
}

impl Value {
    /// A keyword value from its name (without colon).
    pub fn kw(name: &str) -> Value {
        Value::Keyword(name.to_string())
    }

    /// A map with keyword keys, in the given order.
    pub fn kw_map(entries: Vec<(&str, Value)>) -> Value {
        Value::Map(
            entries
                .into_iter()
                .map(|(k, v)| (Value::kw(k), v))
                .collect(),
        )
    }

    /// Looks up a keyword key in a map value.
    pub fn get_kw(&self, name: &str) -> Option<&Value> {
        match self {
            Value::Map(entries) => entries.iter().find_map(|(k, v)| match k {
                Value::Keyword(n) if n == name => Some(v),
                _ => None,
            }),
            _ => None,
        }
    }
}
