//! Property: random op sequences (valid structure, random contents) never
//! make any algorithm panic. Each history is checked as list-append and
//! rw-register under every algorithm, and as a cas-register under auto and
//! lwt, with small time limits; errors and any verdict are fine.

use ellery::check::result::Expectations;
use ellery::infer::rw_register::RwOptions;
use ellery::model::Format;
use ellery::{Algorithm, CheckOptions, Workload};
use std::time::Duration;

/// xorshift64*: a fixed, dependency-free generator, so every run checks
/// the same histories.
/// `weird` is whether odd keys and values (other types, huge numbers) may
/// appear; without them histories get past the readers' type checks.
struct Rng(u64, bool);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// True once in `n` draws, and only when odd contents are on.
    fn odd(&mut self, n: u64) -> bool {
        self.1 && self.below(n) == 0
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len() as u64) as usize]
    }
}

/// A random key: small integers mostly, sometimes other types (mixed key
/// types are allowed in EDN).
fn key(r: &mut Rng) -> String {
    if !r.1 {
        return r.below(4).to_string();
    }
    match r.below(10) {
        0 => format!(":k{}", r.below(3)),
        1 => format!("\"s{}\"", r.below(3)),
        2 => "nil".into(),
        _ => r.below(4).to_string(),
    }
}

/// A random scalar value: small integers mostly, and edge cases.
fn scalar(r: &mut Rng) -> String {
    r.pick(&[
        "0",
        "1",
        "2",
        "3",
        "4",
        "5",
        "nil",
        "-1",
        "9223372036854775807",
        "123456789012345678901234567890N",
        "1.5",
        "##NaN",
        ":x",
        "\"v\"",
        "[1]",
        "true",
    ])
    .to_string()
}

/// A random read result: `nil`, a list, or (rarely) a scalar.
fn read_value(r: &mut Rng, list: bool) -> String {
    if r.odd(8) {
        return scalar(r);
    }
    if !list {
        return match r.below(4) {
            0 => "nil".into(),
            n => n.to_string(),
        };
    }
    let n = r.below(4);
    let items: Vec<String> = (0..n).map(|_| (1 + r.below(6)).to_string()).collect();
    format!("[{}]", items.join(" "))
}

/// A transaction's micro-ops, as invoked and as completed.
fn txn(r: &mut Rng) -> (String, String) {
    let list = r.below(2) == 0;
    let (mut inv, mut done) = (Vec::new(), Vec::new());
    for _ in 0..1 + r.below(4) {
        let k = key(r);
        match r.below(3) {
            0 => {
                inv.push(format!("[:r {k} nil]"));
                done.push(format!("[:r {k} {}]", read_value(r, list)));
            }
            _ => {
                let f = if list { "append" } else { "w" };
                let v = if r.odd(10) {
                    scalar(r)
                } else {
                    (1 + r.below(6)).to_string()
                };
                inv.push(format!("[:{f} {k} {v}]"));
                done.push(format!("[:{f} {k} {v}]"));
            }
        }
    }
    (
        format!("[{}]", inv.join(" ")),
        format!("[{}]", done.join(" ")),
    )
}

/// A register op: `:read`, `:write` or `:cas`, as invoked and completed;
/// sometimes a `jepsen.independent` tuple.
fn register(r: &mut Rng) -> (&'static str, String, String) {
    let v = |r: &mut Rng| {
        if r.odd(6) {
            scalar(r)
        } else {
            r.below(5).to_string()
        }
    };
    let (f, inv, done) = match r.below(3) {
        0 => ("read", "nil".to_string(), v(r)),
        1 => {
            let x = v(r);
            ("write", x.clone(), x)
        }
        _ => {
            let x = format!("[{} {}]", v(r), v(r));
            ("cas", x.clone(), x)
        }
    };
    if r.below(4) == 0 {
        let k = r.below(3);
        return (f, format!("[{k} {inv}]"), format!("[{k} {done}]"));
    }
    (f, inv, done)
}

/// A random history: processes invoke and complete in random interleaving;
/// completions are mostly `:ok`, some `:fail` and `:info`, some never come.
fn history(r: &mut Rng, registers: bool) -> String {
    let procs = 1 + r.below(5);
    let mut open: Vec<Option<(String, String)>> = vec![None; procs as usize];
    let mut lines = Vec::new();
    let ops = r.below(120);
    let mut index = 0;
    let mut emit = |lines: &mut Vec<String>, t: &str, p: u64, f: &str, v: &str| {
        lines.push(format!(
            "{{:index {index}, :time {}, :type :{t}, :process {p}, :f :{f}, :value {v}}}",
            index * 10
        ));
        index += 1;
    };
    for _ in 0..ops {
        let p = r.below(procs);
        match open[p as usize].take() {
            None => {
                let (f, inv, done) = if registers {
                    register(r)
                } else {
                    let (i, d) = txn(r);
                    ("txn", i, d)
                };
                emit(&mut lines, "invoke", p, f, &inv);
                open[p as usize] = Some((f.to_string(), done));
            }
            Some((f, done)) => {
                let t = r.pick(&["ok", "ok", "ok", "ok", "fail", "info"]);
                emit(&mut lines, t, p, &f, &done);
            }
        }
    }
    if r.below(5) == 0 {
        emit(&mut lines, "info", 0, "kill", "nil");
    }
    lines.join("\n")
}

#[test]
fn random_histories_never_panic_any_algorithm() {
    let mut r = Rng(0x9e37_79b9_7f4a_7c15, false);
    let started = std::time::Instant::now();
    let (mut checked, mut read_errors) = (0, 0);
    for case in 0..6000 {
        let registers = case % 3 == 0;
        r.1 = case % 2 == 1;
        let text = history(&mut r, registers);
        let h = match ellery::read::read_history_bytes(
            text.clone().into_bytes(),
            "random.edn",
            Format::Edn,
        ) {
            Ok(h) => h,
            Err(_) => {
                read_errors += 1;
                continue;
            }
        };
        let models = r.pick(&[
            "strict-serializable",
            "serializable",
            "snapshot-isolation",
            "read-committed",
            "strong-session-serializable",
        ]);
        let rw = RwOptions {
            linearizable_keys: r.below(4) == 0,
            sequential_keys: r.below(4) == 0,
            wfr_keys: r.below(4) == 0,
        };
        for algorithm in [
            Algorithm::Auto,
            Algorithm::Infer,
            Algorithm::Mini,
            Algorithm::Lwt,
            Algorithm::Sat,
        ] {
            let opts = CheckOptions {
                expectations: Expectations {
                    models: Some(ellery::consistency::parse_models(&[models]).expect("model")),
                    anomalies: Vec::new(),
                },
                cycle_search_timeout: Duration::from_millis(100),
                linearizable_timeout: Some(Duration::from_millis(200)),
                sat_timeout: Some(Duration::from_millis(200)),
                plot_max_bytes: Some(4096),
                algorithm,
                ..CheckOptions::default()
            };
            let run = std::panic::catch_unwind(|| {
                let _ = ellery::check(
                    &h,
                    &CheckOptions {
                        workload: Some(Workload::ListAppend),
                        rw,
                        ..opts.clone()
                    },
                );
                let _ = ellery::check(
                    &h,
                    &CheckOptions {
                        workload: Some(Workload::RwRegister),
                        rw,
                        ..opts.clone()
                    },
                );
                let _ = ellery::check(
                    &h,
                    &CheckOptions {
                        workload: Some(Workload::CasRegister),
                        ..opts.clone()
                    },
                );
            });
            assert!(
                run.is_ok(),
                "case {case}, {algorithm:?}, -c {models}, {rw:?}: panicked on\n{text}"
            );
        }
        checked += 1;
    }
    // The generator makes mostly readable histories (else this tests little).
    assert!(
        checked >= 5000,
        "{checked} checked, {read_errors} unreadable"
    );
    eprintln!(
        "{checked} histories checked ({read_errors} unreadable) in {:.1} s",
        started.elapsed().as_secs_f64()
    );
}
