//! Generic EDN values: the parser, Clojure-style printer (`pr-str`) and the
//! conversion from elle-cli's JSON dialect.

mod value;

pub use value::Value;
mod tmp_print;
pub use tmp_print::{pr_str, write_edn};
