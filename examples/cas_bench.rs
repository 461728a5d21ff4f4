//! Times the two linearizability algorithms on a cas-register history:
//! reading, splitting into registers, then every key with the chain (where it
//! applies) and with the search alone.
//!
//! ```text
//! cargo run --release --example cas_bench -- FILE [TIMEOUT_S]
//! ```

use ellery::check::linearizable::register::registers;
use ellery::check::linearizable::{check_chain, check_keys, check_search, Algorithm, LinOptions};
use std::time::{Duration, Instant};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(path) = args.first() else {
        eprintln!("usage: cas_bench FILE [TIMEOUT_S]");
        std::process::exit(2)
    };
    let timeout = Duration::from_secs(args.get(1).and_then(|s| s.parse().ok()).unwrap_or(60));
    let t = Instant::now();
    let h = ellery::read::read_history_file(path.as_ref()).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(3)
    });
    println!(
        "read {} ops: {:.3} s",
        h.ops.len(),
        t.elapsed().as_secs_f64()
    );
    let t = Instant::now();
    let regs = registers(&h).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(3)
    });
    println!(
        "registers ({} keys): {:.3} s",
        regs.keys.len(),
        t.elapsed().as_secs_f64()
    );
    let t = Instant::now();
    let chain: Vec<_> = regs.keys.iter().map(|k| check_chain(&k.ops)).collect();
    let applies = chain.iter().filter(|c| c.is_some()).count();
    let valid = chain
        .iter()
        .filter(|c| matches!(c, Some(ellery::check::linearizable::Verdict::Valid)))
        .count();
    println!(
        "chain, one thread: {:.3} s ({applies} keys apply, {valid} valid)",
        t.elapsed().as_secs_f64()
    );
    let t = Instant::now();
    let deadline = Some(Instant::now() + timeout);
    let search: Vec<_> = regs
        .keys
        .iter()
        .map(|k| check_search(&k.ops, deadline, 10_000_000))
        .collect();
    println!(
        "search, one thread: {:.3} s ({} valid of {})",
        t.elapsed().as_secs_f64(),
        search
            .iter()
            .filter(|v| **v == ellery::check::linearizable::Verdict::Valid)
            .count(),
        search.len()
    );
    let t = Instant::now();
    let opts = LinOptions {
        algorithm: Algorithm::Auto,
        deadline: Some(Instant::now() + timeout),
        ..LinOptions::default()
    };
    let _ = check_keys(&regs, &opts);
    println!("auto, all cores: {:.3} s", t.elapsed().as_secs_f64());
}
