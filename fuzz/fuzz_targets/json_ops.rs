//! The JSON reader: elle-cli's JSON histories, and JSON values.
#![no_main]
use ellery::model::Format;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = ellery::read::read_history_bytes(data.to_vec(), "fuzz", Format::Json);
    let _ = ellery::edn::parse_json(data);
});
