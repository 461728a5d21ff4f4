//! Reports: Elle's result map, its EDN and JSON forms, explanation text.

pub mod files;
pub mod html;
pub mod json_pprint;
pub mod lattice;
pub mod names;
pub mod plot;
