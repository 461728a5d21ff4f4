//! Reader throughput: ellery's streaming history reader against edn-rs on
//! `../shared/corpus/elle/huge-scc.edn` (skipped when the corpus is absent).
//! For the ≥100 MB measurement see `scripts/reader-throughput.sh`.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use ellery::model::Format;
use std::hint::black_box;
use std::str::FromStr;
use std::time::Duration;

fn reader(c: &mut Criterion) {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/corpus/elle/huge-scc.edn"
    );
    let Ok(bytes) = std::fs::read(path) else {
        eprintln!("skipping reader bench: {path} not found");
        return;
    };
    let wrapped = format!("[{}]", String::from_utf8_lossy(&bytes));
    let mut g = c.benchmark_group("read huge-scc.edn");
    g.throughput(Throughput::Bytes(bytes.len() as u64))
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    g.bench_function("ellery", |b| {
        b.iter(|| {
            let h = ellery::read::read_history_bytes(bytes.clone(), "huge-scc.edn", Format::Edn)
                .expect("huge-scc.edn reads");
            black_box(h.ops.len())
        })
    });
    g.bench_function("edn-rs", |b| {
        b.iter(|| {
            edn_rs::Edn::from_str(black_box(&wrapped))
                .map(black_box)
                .is_ok()
        })
    });
    g.finish();
}

criterion_group!(benches, reader);
criterion_main!(benches);
