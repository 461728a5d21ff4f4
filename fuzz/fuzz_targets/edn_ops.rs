//! The EDN op reader (the fast path and its generic fallback): any bytes
//! give a history or an error, never a panic.
#![no_main]
use ellery::model::Format;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = ellery::read::read_history_bytes(data.to_vec(), "fuzz", Format::Edn);
});
