//! The peer-format readers. The first byte picks the format: text lines,
//! dbcop's bincode, or Cobra client logs (the rest split at each 0xFF byte,
//! one log per process).
#![no_main]
use ellery::read::peers::{parse_cobra_logs, parse_dbcop, parse_text};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    match pick % 3 {
        0 => drop(parse_text(rest, "fuzz")),
        1 => drop(parse_dbcop(rest, "fuzz")),
        _ => {
            let logs: Vec<(i64, &str, &[u8])> = rest
                .split(|&b| b == 0xFF)
                .enumerate()
                .map(|(i, log)| (i as i64, "T.log", log))
                .collect();
            drop(parse_cobra_logs("fuzz", &logs));
        }
    }
});
