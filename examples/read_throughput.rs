//! Measures single-thread history-reading throughput (MB/s): ellery's
//! streaming reader, or edn-rs on the same bytes, for comparison.
//!
//! Usage: `read_throughput FILE [ellery|edn-rs] [RUNS]`. Prints one line per
//! run and the median, so scripts can grep `median`.

use ellery::model::SourceFormat;
use std::str::FromStr;
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(path) = args.get(1) else {
        eprintln!("usage: read_throughput FILE [ellery|edn-rs] [RUNS]");
        std::process::exit(2);
    };
    let which = args.get(2).map_or("ellery", String::as_str);
    let runs: usize = args.get(3).and_then(|r| r.parse().ok()).unwrap_or(3);
    let bytes = std::fs::read(path).unwrap_or_else(|e| {
        eprintln!("{path}: {e}");
        std::process::exit(2)
    });
    let mb = bytes.len() as f64 / 1e6;
    // edn-rs reads one form, so give it the ops wrapped in one vector.
    let wrapped = (which == "edn-rs").then(|| format!("[{}]", String::from_utf8_lossy(&bytes)));
    let mut rates = Vec::new();
    for run in 0..runs {
        let copy = bytes.clone();
        let t = Instant::now();
        let n = match which {
            "edn-rs" => match edn_rs::Edn::from_str(wrapped.as_deref().unwrap_or("")) {
                Ok(edn_rs::Edn::Vector(v)) => v.to_vec().len(),
                Ok(_) => 0,
                Err(e) => {
                    eprintln!("edn-rs: {e:?}");
                    std::process::exit(1)
                }
            },
            _ => match ellery::read::read_history_bytes(copy, path, SourceFormat::Edn) {
                Ok(h) => h.ops.len() + h.non_client_ops,
                Err(e) => {
                    eprintln!("{e}");
                    std::process::exit(1)
                }
            },
        };
        let secs = t.elapsed().as_secs_f64();
        let rate = mb / secs;
        println!("run {run}: {which} read {n} ops, {mb:.1} MB in {secs:.3} s: {rate:.1} MB/s");
        rates.push(rate);
    }
    rates.sort_by(f64::total_cmp);
    println!(
        "median {which}: {:.1} MB/s over {runs} runs",
        rates[rates.len() / 2]
    );
}
