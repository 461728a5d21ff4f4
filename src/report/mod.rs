//! Reports: Elle's result map, its EDN and JSON forms, explanation text.

pub mod files;
pub mod json_pprint;
pub mod names;
pub mod plot;
