//! Generic EDN values: the parser, Clojure-style printer (`pr-str`) and the
//! conversion from elle-cli's JSON dialect.

mod value;

pub use value::Value;
