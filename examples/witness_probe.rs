//! Times each serial-witness candidate on the history files given
//! (issue 23): `cargo run --release --example witness_probe -- FILE…`.

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
