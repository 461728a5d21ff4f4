//! Times reading peer-format histories (median of RUNS runs):
//! `cargo run --release --example peer_read -- PATH [RUNS]`.

use ellery::read::peers::{detect, read_peer};
use std::path::Path;
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(path) = args.get(1) else {
        eprintln!("usage: peer_read PATH [RUNS]");
        std::process::exit(3);
    };
    let runs: usize = args.get(2).and_then(|r| r.parse().ok()).unwrap_or(5);
    let path = Path::new(path);
    let Some(format) = detect(path) else {
        eprintln!("{}: not a peer-format history", path.display());
        std::process::exit(3);
    };
    let mut times = Vec::new();
    let mut ops = 0;
    for _ in 0..runs {
        let t = Instant::now();
        match read_peer(path, format) {
            Ok(h) => ops = h.ops.len(),
            Err(e) => {
                eprintln!("{e}");
                std::process::exit(3);
            }
        }
        times.push(t.elapsed().as_secs_f64());
    }
    times.sort_by(f64::total_cmp);
    println!(
        "{}\t{}\t{} ops\tmedian {:.4} s of {runs}",
        path.display(),
        format.name(),
        ops,
        times[runs / 2]
    );
}
