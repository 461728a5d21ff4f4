//! Soundness of `ellery robust --prove` against the explicit enumerator on
//! random small programs shaped to reach the rules the inductive proof of
//! TPC-C under SI relies on: *first writers* (a counter whose writers never
//! leave its initial value, advanced only by the instance whose parameter
//! matches it, as `tpcc-abort.rob`'s New-Order) and *an `IF a = b` branch
//! pins `a`*. Whenever either proof method says proved, the enumerator
//! finds no violation with up to `ELLERY_ROBUST_PROOF_K` instances
//! (default 4) under the same models. `ELLERY_ROBUST_PROOF_N` programs
//! (default 60). With either rule switched off these programs give the
//! same proof counts (this draw does not reach the rules);
//! `tests/robust_rules.rs` has a generator that does, and asserts it.

#[path = "common/robust.rs"]
mod robust_common;
use robust_common::{env_count, opts};

use ellery::robust::syntax::Model::{self, *};
use ellery::robust::{self, Engine, Loaded, Method, Verdict};

/// The crate's seeded generator, drawing indices.
struct Rng(ellery::gen::Rng);
impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0.below(n as u64) as usize
    }
}

/// One statement group of a counter program. `P` is the type's parameter.
fn group(r: &mut Rng, i: usize) -> String {
    let else_ = |r: &mut Rng| if r.below(2) == 0 { "ABORT;" } else { "SKIP;" };
    match r.below(8) {
        // Advance the counter when it equals P (a New-Order), recording P.
        0 | 1 => format!(
            "  SELECT n AS d{i} FROM C WHERE id = 1;\n  IF d{i} = P THEN {{\n    UPDATE C SET n = P + 1 WHERE id = 1;\n    INSERT INTO T (id = P, v = {});\n  }} ELSE {{ {} }}\n",
            r.below(2),
            else_(r)
        ),
        // Take the oldest recorded row (a Delivery).
        2 => format!(
            "  SELECT MIN(id) AS o{i} FROM T;\n  IF o{i} != NULL THEN {{ DELETE FROM T WHERE id = o{i}; }}\n"
        ),
        // Read the newest row and the counter (Order-Status, Stock-Level).
        3 => format!(
            "  SELECT MAX(id) AS o{i} FROM T;\n  SELECT v AS w{i} FROM T WHERE id = o{i};\n  SELECT n AS e{i} FROM C WHERE id = 1;\n"
        ),
        // A branch on equality with a parameter or a constant (pins a).
        4 | 5 => {
            let rhs = if r.below(2) == 0 { "P".to_string() } else { r.below(3).to_string() };
            let (tab, f, key) = if r.below(2) == 0 { ("C", "n", "1") } else { ("T", "v", "P") };
            format!(
                "  SELECT {f} AS a{i} FROM {tab} WHERE id = {key};\n  IF a{i} = {rhs} THEN {{ UPDATE T SET v = {} WHERE id = P; }} ELSE {{ {} }}\n",
                1 + r.below(2),
                else_(r)
            )
        }
        // Plain writes.
        6 => format!("  UPDATE T SET v = {} WHERE id = P;\n", r.below(3)),
        _ => format!(
            "  SELECT v AS b{i} FROM T WHERE id = {};\n  UPDATE T SET v = b{i} + 1 WHERE id = {};\n",
            1 + r.below(2),
            1 + r.below(2)
        ),
    }
}

/// A counter `C` (one row, starting at 1) and a table `T` of rows 1..2 that
/// start absent; 2–3 transaction types, each with parameter P ∈ 1..2 and
/// 1–2 statement groups.
fn counter_program(r: &mut Rng) -> String {
    let mut s = String::from(
        "table C (id pk, n)\ntable T (id pk, v)\ninit C { id: 1, n: 1 }\ndomain P: 1..2\n",
    );
    for t in 0..2 + r.below(2) {
        s.push_str(&format!("txn X{t}(P) {{\n"));
        for i in 0..1 + r.below(2) {
            s.push_str(&group(r, i));
        }
        s.push_str("}\n");
    }
    s
}

#[test]
fn proofs_agree_with_the_enumerator_on_counter_programs() {
    let n = env_count("ELLERY_ROBUST_PROOF_N", 60);
    let k = env_count("ELLERY_ROBUST_PROOF_K", 4);
    let mut r = Rng(ellery::gen::Rng::new(0x5EED_0019_C0FF_EE11));
    // The first-writers rule needs the write-conflict axiom and prefix
    // consistency globally: si, psi with pc; psi alone and cc leave it off.
    let mixes: [&[Model]; 4] = [&[Si], &[Psi, Pc], &[Psi], &[Cc]];
    let (mut proved, mut violated) = (0, 0);
    for i in 0..n {
        let src = counter_program(&mut r);
        let l: Loaded = robust::load(&src).unwrap_or_else(|e| panic!("{e}\n{src}"));
        let models = mixes[i % mixes.len()];
        let bounded = robust::check(&l, &opts(models, k, None, Engine::Enumerate)).verdict;
        let bad = matches!(bounded, Verdict::NotRobust(_));
        assert!(
            !matches!(bounded, Verdict::Unknown(_)),
            "program {i}: enumerator out of time\n{src}"
        );
        violated += usize::from(bad);
        for method in [Method::ShortestPath, Method::Inductive] {
            let v = robust::check(&l, &opts(models, k, Some(method), Engine::Sat)).verdict;
            if let Verdict::Proved(_) = v {
                proved += 1;
                assert!(
                    !bad,
                    "program {i}: {method:?} proves it under {models:?}, but the enumerator finds a violation with ≤ {k} instances\n{src}"
                );
            }
        }
    }
    // The draw exercises both outcomes.
    eprintln!("{n} programs: {proved} proofs, {violated} with a violation");
    assert!(
        n < 20 || (proved > 0 && violated > 0),
        "{proved} proofs, {violated} violations"
    );
}
