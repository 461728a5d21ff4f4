//! End-to-end check throughput: reading plus the full list-append check, on
//! `huge-scc.edn` (skipped without the corpus) and on generated histories.
//! For the 1M-transaction figure see `scripts/bench-check.sh`.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use ellery::gen::{generate, GenOptions};
use ellery::model::Format;
use ellery::read::read_history_bytes;
use ellery::{Algorithm, CheckOptions, Workload};
use std::hint::black_box;
use std::time::Duration;

fn check_bytes(bytes: &[u8]) -> usize {
    let h = read_history_bytes(bytes.to_vec(), "bench", Format::Edn).expect("readable");
    let o = ellery::check(
        &h,
        &CheckOptions {
            algorithm: Algorithm::Infer,
            workload: Some(Workload::ListAppend),
            ..CheckOptions::default()
        },
    )
    .expect("analyzable");
    black_box(o.cycles.len())
}

fn check(c: &mut Criterion) {
    let mut g = c.benchmark_group("check");
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    let huge = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/corpus/elle/huge-scc.edn"
    );
    match std::fs::read(huge) {
        Ok(bytes) => {
            g.throughput(Throughput::Elements(10_301));
            g.bench_function("huge-scc.edn", |b| b.iter(|| check_bytes(&bytes)));
        }
        Err(_) => eprintln!("skipping huge-scc bench: {huge} not found"),
    }
    for txns in [10_000usize, 100_000] {
        let mut bytes = Vec::new();
        let opts = GenOptions {
            txns,
            processes: 10,
            keys: 100,
            seed: 1,
            ..GenOptions::default()
        };
        generate(&opts, &mut bytes).expect("generated");
        g.throughput(Throughput::Elements(txns as u64));
        g.bench_function(format!("generated {txns} txns"), |b| {
            b.iter(|| check_bytes(&bytes))
        });
    }
    g.finish();
}

criterion_group!(benches, check);
criterion_main!(benches);
