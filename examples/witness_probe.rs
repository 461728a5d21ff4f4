//! Times each serial-witness candidate on the history files given
//! (issue 23): `cargo run --release --example witness_probe -- FILE…`.
//! With `RUNS=N`, times only the version chains and their replay, N times
//! per file, and prints the minimum and median (for comparing builds on a
//! noisy machine).

use ellery::check::witness::{self, Orders};
use std::time::Instant;

fn main() {
    for path in std::env::args().skip(1) {
        let h = match ellery::read::read_history_file(std::path::Path::new(&path)) {
            Ok(h) => h,
            Err(e) => {
                println!("ERROR {e}");
                continue;
            }
        };
        let orders = Orders { real_time: true };
        if let Some(runs) = std::env::var("RUNS")
            .ok()
            .and_then(|r| r.parse::<usize>().ok())
        {
            let mut found = true;
            let mut times: Vec<f64> = (0..runs.max(1))
                .map(|_| {
                    let t = Instant::now();
                    let order = witness::by_version_chains(&h, orders);
                    found &= order.is_some_and(|o| witness::replay(&h, &o, orders).is_ok());
                    t.elapsed().as_secs_f64()
                })
                .collect();
            times.sort_by(f64::total_cmp);
            // A history without a chains witness is timed all the same,
            // and said so: the figure is then the time to give up.
            let verdict = if found { "witness" } else { "no witness" };
            println!(
                "{path}: chains + replay: min {:.4} s, median {:.4} s over {} runs ({verdict})",
                times[0],
                times[times.len() / 2],
                times.len()
            );
            continue;
        }
        let t = Instant::now();
        let chains = witness::by_version_chains_traced(&h, orders, &mut |l| println!("  {l}"));
        let took = t.elapsed().as_secs_f64();
        let ok = chains.as_ref().map(|o| witness::replay(&h, o, orders));
        println!("{path}: chains {took:.3} s: {ok:?}");
        let t = Instant::now();
        let ev = witness::by_events(&h);
        let took = t.elapsed().as_secs_f64();
        let ok = ev.as_ref().map(|o| witness::replay(&h, o, orders));
        println!(
            "{path}: events {took:.3} s: {:?} ({:?} placed)",
            ok,
            ev.as_ref().map(|o| o.len())
        );
    }
}
