//! Writes a generated linearizable cas-register history with unique values
//! (see `ellery::gen::cas`) to a file, for the linearizability benchmark.
//!
//! ```text
//! cargo run --release --example gen_cas -- OPS OUT [--keys N] [--processes N] [--seed N]
//!     [--read-fraction F] [--info-fraction F]
//! ```

use ellery::gen::cas::{generate_cas, CasGenOptions};
use std::io::BufWriter;
use std::time::Instant;

fn usage() -> ! {
    eprintln!(
        "usage: gen_cas OPS OUT [--keys N] [--processes N] [--seed N] \
         [--read-fraction F] [--info-fraction F]"
    );
    std::process::exit(2)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 2 {
        usage();
    }
    let mut opts = CasGenOptions {
        ops: args[0].parse().unwrap_or_else(|_| usage()),
        ..CasGenOptions::default()
    };
    let mut rest = args[2..].iter();
    while let Some(flag) = rest.next() {
        let value = rest.next().unwrap_or_else(|| usage());
        match flag.as_str() {
            "--keys" => opts.keys = value.parse().unwrap_or_else(|_| usage()),
            "--processes" => opts.processes = value.parse().unwrap_or_else(|_| usage()),
            "--seed" => opts.seed = value.parse().unwrap_or_else(|_| usage()),
            "--read-fraction" => opts.read_fraction = value.parse().unwrap_or_else(|_| usage()),
            "--info-fraction" => opts.info_fraction = value.parse().unwrap_or_else(|_| usage()),
            _ => usage(),
        }
    }
    let started = Instant::now();
    let file = std::fs::File::create(&args[1]).unwrap_or_else(|e| {
        eprintln!("{}: {e}", args[1]);
        std::process::exit(1)
    });
    let mut out = BufWriter::new(file);
    let lines = generate_cas(&opts, &mut out).expect("write history").lines;
    drop(out);
    eprintln!(
        "{} ops, {lines} lines in {:.2} s",
        opts.ops,
        started.elapsed().as_secs_f64()
    );
}
