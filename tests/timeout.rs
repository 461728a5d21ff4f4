//! `:cycle-search-timeout` keeps Elle's semantics: when the search of an SCC
//! runs out of time, the result names the anomaly type being searched, the
//! types already ruled out, the SCC size, and a fallback cycle, and the
//! cycle-exists findings remain.

mod common;

use common::corpus_dir;
use ellery::edn::{pr_str, Value};
use ellery::read::read_history_file;
use ellery::{Algorithm, CheckOptions, Validity, Workload};
use std::time::Duration;

#[test]
fn huge_scc_with_no_time_gives_elles_published_answer() {
    let Some(dir) = corpus_dir("elle") else {
        return;
    };
    let h = read_history_file(&dir.join("huge-scc.edn")).expect("readable");
    let opts = CheckOptions {
        cycle_search_timeout: Duration::ZERO,
        ..CheckOptions::default()
    };
    let o = ellery::check(
        &h,
        &CheckOptions {
            algorithm: Algorithm::Infer,
            workload: Some(Workload::ListAppend),
            ..opts.clone()
        },
    )
    .expect("analyzable");
    assert_eq!(o.validity, Validity::Invalid);
    let r = &o.result;
    assert_eq!(
        pr_str(r.get_kw("anomaly-types").expect("types")),
        "(:G2-item-realtime :cycle-search-timeout :strong-snapshot-isolation-cycle-exists)"
    );
    assert_eq!(
        pr_str(r.get_kw("not").expect("not")),
        "#{:strong-snapshot-isolation}"
    );
    let Some(Value::Map(anomalies)) = r.get_kw("anomalies") else {
        panic!("anomalies map");
    };
    let timeout = anomalies
        .iter()
        .find(|(k, _)| *k == Value::kw("cycle-search-timeout"))
        .map(|(_, v)| pr_str(v))
        .expect("timeout entry");
    assert_eq!(
        timeout,
        "[{:type :cycle-search-timeout, :anomaly-spec-type :G-single-item-realtime, :does-not-contain (), :scc-size 1161}]"
    );
}
