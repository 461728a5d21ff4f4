//! The whole check of a parsed EDN history, under every workload and every
//! algorithm, with small time limits. The first byte picks the consistency
//! models and Elle's rw-register flags; the rest is the history.
#![no_main]
use ellery::check::result::Expectations;
use ellery::infer::rw_register::RwOptions;
use ellery::model::Format;
use ellery::{Algorithm, CheckOptions, Workload};
use libfuzzer_sys::fuzz_target;
use std::time::Duration;

/// Model sets the first byte chooses from (the SAT checker's and others).
const MODELS: [&[&str]; 6] = [
    &["strict-serializable"],
    &["serializable"],
    &["snapshot-isolation"],
    &["strong-session-serializable"],
    &["read-committed"],
    &["repeatable-read", "strong-snapshot-isolation"],
];

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let Ok(h) = ellery::read::read_history_bytes(rest.to_vec(), "fuzz", Format::Edn) else {
        return;
    };
    let models = MODELS[pick as usize % MODELS.len()];
    let Ok(models) = ellery::consistency::parse_models(models) else {
        return;
    };
    let rw = RwOptions {
        linearizable_keys: pick & 0x10 != 0,
        sequential_keys: pick & 0x20 != 0,
        wfr_keys: pick & 0x40 != 0,
    };
    for algorithm in [
        Algorithm::Auto,
        Algorithm::Infer,
        Algorithm::Mini,
        Algorithm::Lwt,
        Algorithm::Sat,
    ] {
        let opts = CheckOptions {
            expectations: Expectations {
                models: Some(models.clone()),
                anomalies: Vec::new(),
            },
            cycle_search_timeout: Duration::from_millis(50),
            elle_steps: 20_000,
            linearizable_timeout: Some(Duration::from_millis(200)),
            sat_timeout: Some(Duration::from_millis(200)),
            plot_max_bytes: (pick & 0x80 != 0).then_some(4096),
            algorithm,
            ..CheckOptions::default()
        };
        let _ = ellery::check(&h, &CheckOptions { workload: Some(Workload::ListAppend), rw: rw, ..opts.clone() });
        let _ = ellery::check(&h, &CheckOptions { workload: Some(Workload::RwRegister), rw: rw, ..opts.clone() });
        let _ = ellery::check(&h, &CheckOptions { workload: Some(Workload::CasRegister), ..opts.clone() });
    }
});
