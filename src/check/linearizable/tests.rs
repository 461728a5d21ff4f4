//! Hand-written histories and a brute-force cross-check of both algorithms.

use super::*;
use crate::check::linearizable::register::registers;
use crate::edn::Value;
use crate::gen::Rng;
use crate::model::Format;
use crate::model::History;
use crate::read::read_history_bytes;

fn hist(text: &str) -> History {
    read_history_bytes(text.as_bytes().to_vec(), "test.edn", Format::Edn)
        .unwrap_or_else(|e| panic!("{e}"))
}

fn result(text: &str) -> Value {
    check_history(&hist(text), &LinOptions::default()).unwrap_or_else(|e| panic!("{e}"))
}

fn valid(text: &str) -> Value {
    result(text).get_kw("valid?").cloned().unwrap()
}

/// Verdicts of (chain if applicable, search, brute force) on a one-key history.
fn all_verdicts(text: &str) -> (Option<bool>, bool, bool) {
    let regs = registers(&hist(text)).unwrap();
    let ops = &regs.keys[0].ops;
    let chain = check_chain(ops).map(|v| v == Verdict::Valid);
    let search = check_search(ops, None, usize::MAX) == Verdict::Valid;
    (chain, search, brute_force(ops))
}

/// Tries every subset of crashed ops and every order: the definition.
fn brute_force(ops: &[RegOp]) -> bool {
    let crashed: Vec<usize> = (0..ops.len()).filter(|&i| !ops[i].ok()).collect();
    let ok: Vec<usize> = (0..ops.len()).filter(|&i| ops[i].ok()).collect();
    for mask in 0..(1u32 << crashed.len()) {
        let mut chosen = ok.clone();
        for (b, &i) in crashed.iter().enumerate() {
            if mask >> b & 1 == 1 {
                chosen.push(i);
            }
        }
        if permute(ops, &mut chosen, 0) {
            return true;
        }
    }
    false
}

fn permute(ops: &[RegOp], xs: &mut Vec<usize>, k: usize) -> bool {
    if k == xs.len() {
        // Real time: nothing may follow an op that completed before it began.
        for i in 0..xs.len() {
            for j in i + 1..xs.len() {
                if ops[xs[j]].complete < ops[xs[i]].invoke {
                    return false;
                }
            }
        }
        let mut s = NIL;
        for &i in xs.iter() {
            match step(s, &ops[i]) {
                Some(s2) => s = s2,
                None => return false,
            }
        }
        return true;
    }
    for i in k..xs.len() {
        xs.swap(k, i);
        if permute(ops, xs, k + 1) {
            return true;
        }
        xs.swap(k, i);
    }
    false
}

const W: &str = ":type :invoke";

fn ops_text(lines: &[&str]) -> String {
    lines.join("\n").replace("INV", W)
}

#[test]
fn read_after_write_is_not_linearizable() {
    let h = ops_text(&[
        "{:process 0, INV, :f :write, :value 1}",
        "{:process 0, :type :ok, :f :write, :value 1}",
        "{:process 1, INV, :f :write, :value 2}",
        "{:process 1, :type :ok, :f :write, :value 2}",
        "{:process 0, INV, :f :read, :value nil}",
        "{:process 0, :type :ok, :f :read, :value 1}",
    ]);
    let r = result(&h);
    assert_eq!(r.get_kw("valid?"), Some(&Value::Bool(false)));
    assert_eq!(
        r.get_kw("op").and_then(|o| o.get_kw("value")),
        Some(&Value::Int(1))
    );
    assert_eq!(
        r.get_kw("previous-ok").and_then(|o| o.get_kw("value")),
        Some(&Value::Int(2))
    );
    assert_eq!(
        r.get_kw("last-consistent-states"),
        Some(&Value::Vector(vec![Value::Int(2)]))
    );
    assert_eq!(all_verdicts(&h), (None, false, false));
}

#[test]
fn stale_nil_read_is_not_linearizable() {
    let h = ops_text(&[
        "{:process 0, INV, :f :write, :value 1}",
        "{:process 0, :type :ok, :f :write, :value 1}",
        "{:process 1, INV, :f :read, :value nil}",
        "{:process 1, :type :ok, :f :read, :value nil}",
    ]);
    assert_eq!(valid(&h), Value::Bool(false));
    assert_eq!(all_verdicts(&h), (Some(false), false, false));
}

#[test]
fn concurrent_read_may_see_either_value() {
    let h = ops_text(&[
        "{:process 0, INV, :f :write, :value 1}",
        "{:process 1, INV, :f :read, :value nil}",
        "{:process 1, :type :ok, :f :read, :value nil}",
        "{:process 2, INV, :f :read, :value nil}",
        "{:process 2, :type :ok, :f :read, :value 1}",
        "{:process 0, :type :ok, :f :write, :value 1}",
    ]);
    assert_eq!(valid(&h), Value::Bool(true));
    assert_eq!(all_verdicts(&h), (Some(true), true, true));
}

#[test]
fn crashed_write_must_take_effect_when_read() {
    let h = ops_text(&[
        "{:process 0, INV, :f :write, :value 1}",
        "{:process 0, :type :info, :f :write, :value 1}",
        "{:process 1, INV, :f :read, :value nil}",
        "{:process 1, :type :ok, :f :read, :value 1}",
    ]);
    assert_eq!(valid(&h), Value::Bool(true));
    assert_eq!(all_verdicts(&h), (Some(true), true, true));
    // Never completed at all: the same.
    let h = ops_text(&[
        "{:process 0, INV, :f :write, :value 1}",
        "{:process 1, INV, :f :read, :value nil}",
        "{:process 1, :type :ok, :f :read, :value 1}",
    ]);
    assert_eq!(all_verdicts(&h), (Some(true), true, true));
}

#[test]
fn crashed_write_may_never_take_effect() {
    let h = ops_text(&[
        "{:process 0, INV, :f :write, :value 0}",
        "{:process 0, :type :ok, :f :write, :value 0}",
        "{:process 1, INV, :f :write, :value 1}",
        "{:process 1, :type :info, :f :write, :value 1}",
        "{:process 2, INV, :f :read, :value nil}",
        "{:process 2, :type :ok, :f :read, :value 0}",
        "{:process 2, INV, :f :read, :value nil}",
        "{:process 2, :type :ok, :f :read, :value 0}",
    ]);
    assert_eq!(valid(&h), Value::Bool(true));
    // The unobserved crashed write is left out of the chain.
    assert_eq!(all_verdicts(&h), (Some(true), true, true));
}

#[test]
fn crashed_write_cannot_act_before_its_invocation() {
    let h = ops_text(&[
        "{:process 2, INV, :f :read, :value nil}",
        "{:process 2, :type :ok, :f :read, :value 1}",
        "{:process 0, INV, :f :write, :value 1}",
        "{:process 0, :type :info, :f :write, :value 1}",
    ]);
    assert_eq!(valid(&h), Value::Bool(false));
    assert_eq!(all_verdicts(&h), (Some(false), false, false));
}

#[test]
fn failed_ops_did_not_happen() {
    let h = ops_text(&[
        "{:process 0, INV, :f :write, :value 1}",
        "{:process 0, :type :fail, :f :write, :value 1}",
        "{:process 1, INV, :f :read, :value nil}",
        "{:process 1, :type :ok, :f :read, :value 1}",
    ]);
    assert_eq!(valid(&h), Value::Bool(false));
    let h = ops_text(&[
        "{:process 0, INV, :f :write, :value 1}",
        "{:process 0, :type :ok, :f :write, :value 1}",
        "{:process 0, INV, :f :cas, :value [1 2]}",
        "{:process 0, :type :fail, :f :cas, :value [1 2]}",
        "{:process 1, INV, :f :read, :value nil}",
        "{:process 1, :type :ok, :f :read, :value 2}",
    ]);
    assert_eq!(valid(&h), Value::Bool(false));
    assert_eq!(all_verdicts(&h), (Some(false), false, false));
}

#[test]
fn cas_chains() {
    // ins(0); cas 0→1, 1→2, 2→3 all concurrent: linearizable (oracle L1).
    let l1 = ops_text(&[
        "{:process 0, INV, :f :write, :value 0}",
        "{:process 0, :type :ok, :f :write, :value 0}",
        "{:process 1, INV, :f :cas, :value [0 1]}",
        "{:process 2, INV, :f :cas, :value [1 2]}",
        "{:process 3, INV, :f :cas, :value [2 3]}",
        "{:process 1, :type :ok, :f :cas, :value [0 1]}",
        "{:process 2, :type :ok, :f :cas, :value [1 2]}",
        "{:process 3, :type :ok, :f :cas, :value [2 3]}",
    ]);
    assert_eq!(all_verdicts(&l1), (Some(true), true, true));
    // O1 = cas 0→1 starts after O2 = cas 1→2 finished (oracle L2).
    let l2 = ops_text(&[
        "{:process 0, INV, :f :write, :value 0}",
        "{:process 0, :type :ok, :f :write, :value 0}",
        "{:process 2, INV, :f :cas, :value [1 2]}",
        "{:process 2, :type :ok, :f :cas, :value [1 2]}",
        "{:process 1, INV, :f :cas, :value [0 1]}",
        "{:process 1, :type :ok, :f :cas, :value [0 1]}",
    ]);
    assert_eq!(all_verdicts(&l2), (Some(false), false, false));
    let r = result(&l2);
    assert_eq!(r.get_kw("cause"), Some(&Value::kw("realtime")));
    // Divergence (L3) and a broken chain (L4).
    let l3 = ops_text(&[
        "{:process 0, INV, :f :write, :value 0}",
        "{:process 0, :type :ok, :f :write, :value 0}",
        "{:process 1, INV, :f :cas, :value [0 1]}",
        "{:process 2, INV, :f :cas, :value [0 2]}",
        "{:process 1, :type :ok, :f :cas, :value [0 1]}",
        "{:process 2, :type :ok, :f :cas, :value [0 2]}",
    ]);
    assert_eq!(all_verdicts(&l3), (Some(false), false, false));
    assert_eq!(result(&l3).get_kw("cause"), Some(&Value::kw("divergence")));
    let l4 = l3.replace("[0 2]", "[5 6]");
    assert_eq!(all_verdicts(&l4), (Some(false), false, false));
    assert_eq!(
        result(&l4).get_kw("cause"),
        Some(&Value::kw("broken-chain"))
    );
    // A late insert (L6): the cas reading 0 finished before 0 was written.
    let l6 = ops_text(&[
        "{:process 1, INV, :f :cas, :value [0 1]}",
        "{:process 1, :type :ok, :f :cas, :value [0 1]}",
        "{:process 0, INV, :f :write, :value 0}",
        "{:process 0, :type :ok, :f :write, :value 0}",
    ]);
    assert_eq!(all_verdicts(&l6), (Some(false), false, false));
    // Repeated values: only the search applies.
    let rep = ops_text(&[
        "{:process 0, INV, :f :write, :value 0}",
        "{:process 0, :type :ok, :f :write, :value 0}",
        "{:process 1, INV, :f :cas, :value [0 1]}",
        "{:process 1, :type :ok, :f :cas, :value [0 1]}",
        "{:process 1, INV, :f :cas, :value [1 0]}",
        "{:process 1, :type :ok, :f :cas, :value [1 0]}",
        "{:process 2, INV, :f :cas, :value [0 1]}",
        "{:process 2, :type :ok, :f :cas, :value [0 1]}",
    ]);
    assert_eq!(all_verdicts(&rep), (None, true, true));
}

#[test]
fn independent_keys_fail_separately() {
    let h = ops_text(&[
        "{:process 0, INV, :f :write, :value [:x 1]}",
        "{:process 0, :type :ok, :f :write, :value [:x 1]}",
        "{:process 1, INV, :f :write, :value [:y 1]}",
        "{:process 1, :type :ok, :f :write, :value [:y 1]}",
        "{:process 0, INV, :f :cas, :value [:x [1 2]]}",
        "{:process 0, :type :ok, :f :cas, :value [:x [1 2]]}",
        "{:process 1, INV, :f :read, :value [:y nil]}",
        "{:process 1, :type :ok, :f :read, :value [:y 1]}",
        "{:process 2, INV, :f :read, :value [:x nil]}",
        "{:process 2, :type :ok, :f :read, :value [:x 1]}",
    ]);
    let r = result(&h);
    assert_eq!(r.get_kw("valid?"), Some(&Value::Bool(false)));
    assert_eq!(
        r.get_kw("failures"),
        Some(&Value::Vector(vec![Value::kw("x")]))
    );
    let Some(Value::Map(results)) = r.get_kw("results") else {
        panic!("{r:?}")
    };
    assert_eq!(results.len(), 2);
    assert_eq!(results[0].0, Value::kw("x"));
    assert_eq!(results[0].1.get_kw("valid?"), Some(&Value::Bool(false)));
    assert_eq!(
        results[0]
            .1
            .get_kw("op")
            .and_then(|o| o.get_kw("value"))
            .cloned(),
        Some(Value::Vector(vec![Value::kw("x"), Value::Int(1)]))
    );
    assert_eq!(results[1].1.get_kw("valid?"), Some(&Value::Bool(true)));
    // Single-threaded gives the same map.
    let one = check_history(
        &hist(&h),
        &LinOptions {
            threads: 1,
            ..LinOptions::default()
        },
    )
    .unwrap();
    assert_eq!(one, r);
}

#[test]
fn bad_input_is_located() {
    let err = |text: &str| {
        check_history(&hist(text), &LinOptions::default())
            .unwrap_err()
            .to_string()
    };
    let e = err("{:process 0, :type :invoke, :f :cas, :value 3}\n");
    assert!(
        e.starts_with("test.edn:1:1: expected a :cas value [old new], found 3"),
        "{e}"
    );
    let e = err("{:process 0, :type :invoke, :f :read, :value nil}\n {:process 1, :type :invoke, :f :inc, :value 1}\n");
    assert!(
        e.starts_with("test.edn:2:2: expected :f to be one of"),
        "{e}"
    );
    let e = err("{:process 0, :type :invoke, :f :read, :value [:x nil]}\n{:process 1, :type :invoke, :f :write, :value 3}\n");
    assert!(
        e.starts_with("test.edn:2:1: expected a [key value] tuple"),
        "{e}"
    );
    let e = err("{:process 0, :type :invoke, :f :cas, :value []}\n");
    assert!(
        e.starts_with("test.edn:1:1: expected a register value, found []"),
        "{e}"
    );
}

#[test]
fn timeout_gives_unknown() {
    let regs = registers(&hist(&ops_text(&[
        "{:process 0, INV, :f :write, :value 1}",
        "{:process 0, :type :ok, :f :write, :value 1}",
    ])))
    .unwrap();
    assert_eq!(
        check_search(&regs.keys[0].ops, None, 0),
        Verdict::Unknown("search-space")
    );
    let past = Instant::now() - std::time::Duration::from_secs(1);
    assert_eq!(
        check_search(&regs.keys[0].ops, Some(past), usize::MAX),
        Verdict::Unknown("timeout")
    );
    // The chain needs no deadline; an invalid chain verdict keeps its own
    // culprit when the search for the report runs out of time.
    let h = hist(&ops_text(&[
        "{:process 0, INV, :f :write, :value 1}",
        "{:process 0, :type :ok, :f :write, :value 1}",
        "{:process 1, INV, :f :read, :value nil}",
        "{:process 1, :type :ok, :f :read, :value 2}",
    ]));
    let opts = LinOptions {
        deadline: Some(past),
        ..LinOptions::default()
    };
    let r = check_history(&h, &opts).unwrap();
    assert_eq!(r.get_kw("valid?"), Some(&Value::Bool(false)));
    assert_eq!(r.get_kw("cause"), Some(&Value::kw("unwritten-read")));
    assert_eq!(
        r.get_kw("op").and_then(|o| o.get_kw("value")),
        Some(&Value::Int(2))
    );
    // A search that runs out of time: unknown, with the cause.
    let h = hist(&ops_text(&[
        "{:process 0, INV, :f :write, :value 1}",
        "{:process 0, :type :ok, :f :write, :value 1}",
        "{:process 1, INV, :f :write, :value 1}",
        "{:process 1, :type :ok, :f :write, :value 1}",
    ]));
    let r = check_history(&h, &opts).unwrap();
    assert_eq!(
        crate::edn::pr_str(&r),
        "{:valid? :unknown, :analyzer :wgl, :cause :timeout}"
    );
}

/// A random history from a simulated register: ops take effect at a random
/// moment while pending; some completions are then corrupted, crashed or
/// dropped. `unique` draws written values from a counter.
fn random_history(rng: &mut Rng, unique: bool) -> String {
    let procs = 1 + rng.below(4) as i64;
    let total = 1 + rng.below(7);
    let mut lines = Vec::new();
    let mut reg: Option<i64> = None;
    let mut counter = 0i64;
    let mut written: Vec<i64> = Vec::new();
    // Pending: (process, f, value, applied result)
    let mut pending: Vec<(i64, &str, String, Option<String>)> = Vec::new();
    let mut invoked = 0;
    // Process id per slot; a slot whose op never completes gets a new id.
    let mut pids: Vec<i64> = (0..procs).collect();
    let pr = |v: Option<i64>| v.map_or("nil".to_string(), |x| x.to_string());
    let fresh = |rng: &mut Rng, counter: &mut i64| {
        if unique {
            *counter += 1;
            *counter
        } else {
            rng.below(3) as i64
        }
    };
    let apply = |reg: &mut Option<i64>, f: &str, v: &str| -> String {
        match f {
            "read" => format!(":ok {}", pr(*reg)),
            "write" => {
                *reg = v.parse().ok();
                ":ok".into()
            }
            _ => {
                let parts: Vec<&str> = v
                    .trim_matches(|c| c == '[' || c == ']')
                    .split(' ')
                    .collect();
                let old: Option<i64> = parts[0].parse().ok();
                if old == *reg {
                    *reg = parts[1].parse().ok();
                    ":ok".into()
                } else {
                    ":fail".into()
                }
            }
        }
    };
    while invoked < total || !pending.is_empty() {
        let slot = rng.below(procs as u64) as usize;
        let p = pids[slot];
        let idx = pending.iter().position(|x| x.0 == p);
        match idx {
            None if invoked < total => {
                invoked += 1;
                let (f, v) = match rng.below(3) {
                    0 => ("read", "nil".to_string()),
                    1 => {
                        let x = fresh(rng, &mut counter);
                        written.push(x);
                        ("write", x.to_string())
                    }
                    _ => {
                        let old = if rng.chance(0.6) || written.is_empty() {
                            reg
                        } else if rng.chance(0.2) {
                            None
                        } else {
                            Some(written[rng.below(written.len() as u64) as usize])
                        };
                        let new = fresh(rng, &mut counter);
                        written.push(new);
                        ("cas", format!("[{} {}]", pr(old), new))
                    }
                };
                lines.push(format!(
                    "{{:process {p}, :type :invoke, :f :{f}, :value {v}}}"
                ));
                pending.push((p, f, v, None));
            }
            None => {
                // Let some pending op take effect.
                if let Some(x) = pending.iter_mut().find(|x| x.3.is_none()) {
                    x.3 = Some(apply(&mut reg, x.1, &x.2));
                }
            }
            Some(i) => {
                if pending[i].3.is_none() && rng.chance(0.5) {
                    let (f, v) = (pending[i].1, pending[i].2.clone());
                    pending[i].3 = Some(apply(&mut reg, f, &v));
                    continue;
                }
                let (p, f, v, res) = pending.remove(i);
                if rng.chance(0.1) {
                    pids[slot] += procs;
                    continue; // never completes
                }
                let res = res.unwrap_or_else(|| apply(&mut reg, f, &v));
                let mut parts = res.splitn(2, ' ');
                let mut ty = parts.next().unwrap().to_string();
                let mut val = parts.next().map(str::to_string).unwrap_or(v.clone());
                if rng.chance(0.12) {
                    ty = ":info".into();
                    if f == "read" {
                        val = "nil".into();
                    }
                } else if rng.chance(0.3) {
                    if f == "read" {
                        val = pr(if written.is_empty() || rng.chance(0.2) {
                            None
                        } else {
                            Some(written[rng.below(written.len() as u64) as usize])
                        });
                    } else if f == "cas" {
                        ty = if ty == ":ok" {
                            ":fail".into()
                        } else {
                            ":ok".into()
                        };
                    }
                }
                lines.push(format!(
                    "{{:process {p}, :type {ty}, :f :{f}, :value {val}}}"
                ));
            }
        }
    }
    lines.join("\n")
}

#[test]
fn cross_check_against_brute_force() {
    let mut rng = Rng::new(7);
    let (mut chain_runs, mut invalid, mut total) = (0, 0, 0);
    for round in 0..6000 {
        let unique = round % 2 == 0;
        let text = random_history(&mut rng, unique);
        let (chain, search, brute) = all_verdicts(&text);
        assert_eq!(
            search, brute,
            "search disagrees with brute force on\n{text}"
        );
        if let Some(c) = chain {
            chain_runs += 1;
            assert_eq!(c, brute, "chain disagrees with brute force on\n{text}");
        }
        total += 1;
        if !brute {
            invalid += 1;
        }
    }
    assert!(chain_runs > 1000, "chain ran on {chain_runs} histories");
    assert!(
        invalid > total / 10 && invalid < total * 9 / 10,
        "{invalid}/{total}"
    );
}

#[test]
fn chain_and_search_agree_on_larger_corrupted_histories() {
    use crate::gen::cas::{generate_cas, CasGenOptions};
    let mut rng = Rng::new(11);
    let (mut invalid, mut runs) = (0, 0);
    for seed in 0..150 {
        let opts = CasGenOptions {
            ops: 200,
            processes: 1 + seed as usize % 5,
            info_fraction: 0.05,
            seed,
            ..CasGenOptions::default()
        };
        let mut out = Vec::new();
        generate_cas(&opts, &mut out).unwrap();
        let h = read_history_bytes(out, "gen.edn", Format::Edn).unwrap();
        let regs = registers(&h).unwrap();
        // Times ×8, so that shifts by 8d + 1, 2 or 4 (each used once) keep
        // every time distinct, as positions in a history are.
        let mut ops = regs.keys[0].ops.clone();
        for o in &mut ops {
            o.invoke *= 8;
            if o.ok() {
                o.complete *= 8;
            }
        }
        let nvalues = regs.keys[0].values.len() as u64;
        // Corrupt a few ops: a read or a cas sees another value, or an op
        // moves earlier in time.
        for k in 0..rng.below(4).min(3) {
            let i = rng.below(ops.len() as u64) as usize;
            match rng.below(3) {
                0 if ops[i].f != RegFn::Write => ops[i].a = rng.below(nvalues) as u32,
                1 if ops[i].ok() => {
                    let d = 8 * rng.below(40) as u32 + (1 << k);
                    if ops[i].invoke >= d {
                        ops[i].invoke -= d;
                        ops[i].complete -= d;
                    }
                }
                _ => {}
            }
        }
        let search = check_search(&ops, None, usize::MAX);
        if let Some(chain) = check_chain(&ops) {
            runs += 1;
            assert_eq!(
                chain == Verdict::Valid,
                search == Verdict::Valid,
                "seed {seed}: chain {chain:?}, search {search:?}"
            );
        }
        if search != Verdict::Valid {
            invalid += 1;
        }
    }
    assert!(runs > 100, "{runs}");
    assert!(invalid > 20, "{invalid}");
}
