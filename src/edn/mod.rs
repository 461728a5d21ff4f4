//! Generic EDN values: the parser, Clojure-style printer (`pr-str`), the
//! conversion from and to elle-cli's JSON dialect, and the JVM iteration
//! orders of Clojure values ([`order`]).

pub(crate) mod json;
mod lex;
mod number;
pub mod order;
pub(crate) mod parse;
mod print;
mod value;

pub use json::{json_dialect, json_to_value, parse_json, value_to_json};
pub use lex::count_newlines;
pub use parse::{java_double, line_col, parse_all, parse_one, ParseError};
pub use print::{pr_str, write_edn};
pub use value::Value;
