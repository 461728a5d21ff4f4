//! Times the SAT checker on history files with chosen options (used by
//! `scripts/bench-sat.sh`): `sat_bench [--si] [--session] [--realtime]
//! [--no-prune] [--no-2w] [--solver-polarity] [--timeout S] PATH...`, where
//! a path is a Jepsen history or a peer-format one (dbcop, Cobra, text).
//! Prints one line per file: verdict, seconds, counters.

use std::time::{Duration, Instant};

use ellery::check::sat::{
    check_serializable, reg_history, Isolation, Polarity, SatOptions, Verdict,
};

fn main() {
    let mut opts = SatOptions {
        session_order: false,
        ..SatOptions::default()
    };
    let mut files = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--si" => opts.isolation = Isolation::SnapshotIsolation,
            "--session" => opts.session_order = true,
            "--realtime" => opts.real_time = true,
            "--no-prune" => opts.prune = false,
            "--no-2w" => opts.two_width = false,
            "--solver-polarity" => opts.polarity = Polarity::Solver,
            "--backjump-limit" => {
                opts.backjump_limit = args.next().and_then(|s| s.parse().ok()).expect("levels");
            }
            "--timeout" => {
                let s: f64 = args.next().and_then(|s| s.parse().ok()).expect("seconds");
                opts.timeout = Some(Duration::from_secs_f64(s));
            }
            _ => files.push(a),
        }
    }
    for f in files {
        let t0 = Instant::now();
        let path = std::path::Path::new(&f);
        let read = match ellery::read::peers::detect(path) {
            Some(format) => ellery::read::peers::read_peer(path, format),
            None => ellery::read::read_history_file(path),
        };
        let h = match read {
            Ok(h) => h,
            Err(e) => {
                eprintln!("{f}: {e}");
                std::process::exit(3);
            }
        };
        let (rh, _) = reg_history(&h, opts.real_time).unwrap_or_else(|e| panic!("{f}: {e}"));
        let read = t0.elapsed();
        let t1 = Instant::now();
        let (v, stats) = check_serializable(&rh, &opts);
        let check = t1.elapsed();
        let verdict = match v {
            Verdict::Valid(_) => "valid",
            Verdict::Invalid(_) => "invalid",
            Verdict::Unknown => "unknown",
        };
        println!(
            "{f}\t{verdict}\ttxns {}\tread {:.3}s\tcheck {:.3}s\t{stats:?}",
            rh.len(),
            read.as_secs_f64(),
            check.as_secs_f64()
        );
    }
}
