//! `ABORT` in `ellery robust` programs: an aborted instance is no part of
//! the execution (no reads, no writes, not counted against k), in the
//! concrete replay, in the abstract reading (a case or branch that surely
//! aborts is dropped), in both engines; the shipped programs with aborting
//! transactions (`*-abort*.rob`) and what the proofs make of them.

use ellery::robust::exec::{
    axioms_hold_at, dense_dependencies, dependencies, replay, Dep, Edge, Execution,
};
use ellery::robust::syntax::Model::{self, *};
use ellery::robust::{
    self, exec::CycleType, sat, witness, Engine, Loaded, Method, Options, Proof, Verdict,
};
use std::path::PathBuf;
use std::time::Duration;

fn program(name: &str) -> Loaded {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("test-histories/robust")
        .join(name);
    robust::load(&std::fs::read_to_string(p).unwrap()).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn desc(l: &Loaded, name: &str, params: &[i64]) -> usize {
    let t = l.prog.txns.iter().position(|t| t.name == name).unwrap();
    l.an.descs
        .iter()
        .position(|d| d.txn == t && d.params == params)
        .unwrap_or_else(|| panic!("{name}{params:?}"))
}

fn key(l: &Loaded, name: &str) -> usize {
    (0..l.an.uni.keys())
        .find(|&k| witness::key_name(&l.prog, &l.an, k) == name)
        .unwrap_or_else(|| panic!("{name}"))
}

fn valid(l: &Loaded, models: &[Model], ex: &Execution) -> bool {
    let ax = robust::axioms(&l.prog, models);
    let reps = replay(&l.prog, &l.an, ex);
    let types: Vec<usize> = ex.descs.iter().map(|&d| l.an.descs[d].txn).collect();
    (0..ex.descs.len()).all(|j| axioms_hold_at(&ax, &types, &ex.vis, &reps, j))
}

/// A verdict as (cycle type, description, instance names), `None` for
/// robust up to k, or the proof.
#[derive(Debug, PartialEq)]
enum Got {
    Violation(CycleType, Option<&'static str>, Vec<String>),
    None,
    Proved(Proof),
}

fn check(l: &Loaded, models: &[Model], k: usize, prove: Option<Method>, e: Engine) -> Got {
    let o = Options {
        models: models.to_vec(),
        k,
        prove,
        engine: e,
        timeout: Some(Duration::from_secs(60)),
    };
    match robust::check(l, &o).verdict {
        Verdict::NotRobust(w) => {
            let names = w
                .exec
                .descs
                .iter()
                .map(|&d| witness::instance_name(&l.prog, &l.an.descs[d]))
                .collect();
            Got::Violation(w.kind, w.description, names)
        }
        Verdict::RobustUpTo(kk) => {
            assert_eq!(kk, k);
            Got::None
        }
        Verdict::Proved(p) => Got::Proved(p),
        Verdict::Unknown(why) => panic!("unknown: {why}"),
    }
}

fn names(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

#[test]
fn abort_parses_anywhere_a_statement_may_stand() {
    let src = "table T (id pk, v)\ninit T { id: 1..2, v: 0 }\n\
        txn A() { SELECT id, v AS r FROM T; FOREACH x IN r { IF x.v > 0 THEN { ABORT; } } }\n\
        txn B() { abort }\n";
    let l = robust::load(src).unwrap();
    assert_eq!(l.prog.txns.len(), 2);
    // B always aborts: it has no committed instance.
    assert!(l.an.footprints[1].aborts);
    assert!(!l.an.footprints[0].aborts);
    let e = robust::load("table T (id pk, v)\ntxn A() { ABORT 3; }\n").unwrap_err();
    assert_eq!(
        e.to_string(),
        "2:17: expected a statement (SELECT, UPDATE, INSERT, DELETE, IF, FOREACH, SKIP, ABORT or `v = e`), found `3`"
    );
    // ABORT is a keyword now.
    let e = robust::load("table T (id pk, v)\ntxn A() { abort = 1; }\n").unwrap_err();
    assert_eq!(e.to_string(), "2:17: expected a statement (SELECT, UPDATE, INSERT, DELETE, IF, FOREACH, SKIP, ABORT or `v = e`), found `=`");
}

/// Replay: an Enroll that sees its student removed aborts. It reads and
/// writes nothing in the execution and has no dependency; what it read
/// before aborting is kept apart (`abort_sources`) for the SAT engine's
/// learning. One that does not see the removal commits and depends.
#[test]
fn an_aborted_instance_is_no_part_of_the_execution() {
    let l = program("courseware-abort.rob");
    let rem = desc(&l, "RemStudent", &[1]);
    let enroll = desc(&l, "Enroll", &[1, 1]);
    let ex = Execution {
        descs: vec![rem, enroll],
        vis: vec![0, 0b1],
    };
    let reps = replay(&l.prog, &l.an, &ex);
    let e = &reps[1];
    assert!(e.fp.aborts);
    assert!(e.fp.reads.is_empty() && e.fp.writes.is_empty() && e.sources.is_empty());
    let why: Vec<(String, Option<usize>)> = e
        .abort_sources
        .iter()
        .map(|&(k, s)| (witness::key_name(&l.prog, &l.an, k), s))
        .collect();
    assert_eq!(
        why,
        vec![
            ("Student[1].Alive".to_string(), Some(0)),
            ("Course[1].cap".to_string(), None),
            ("Course[1].cnt".to_string(), None),
            ("Course[1].Alive".to_string(), None),
        ]
    );
    assert_eq!(dependencies(&reps), vec![]);
    let ex = Execution {
        descs: vec![rem, enroll],
        vis: vec![0, 0],
    };
    let reps = replay(&l.prog, &l.an, &ex);
    assert!(!reps[1].fp.aborts);
    assert!(dependencies(&reps).contains(&Edge {
        from: 1,
        to: 0,
        dep: Dep::Rw,
        key: key(&l, "Student[1].Alive"),
    }));
}

/// The abstract reading: a branch that surely aborts when taken
/// contributes no reads, writes or facts (no committed run takes it); the
/// other branch is what every committed run does.
#[test]
fn the_abstract_reading_drops_aborting_branches() {
    let src = "table T (id pk, v)\ninit T { id: 1..3, v: 0 }\n\
        txn Y() {\n  SELECT v AS a FROM T WHERE id = 1;\n\
          IF a = 0 THEN { UPDATE T SET v = 2 WHERE id = 2; ABORT; } ELSE { UPDATE T SET v = 1 WHERE id = 3; }\n}\n\
        txn Z() { UPDATE T SET v = 5 WHERE id = 1; }\n";
    let l = robust::load(src).unwrap();
    let fp = &l.an.footprints[0];
    assert!(!fp.aborts);
    let written: Vec<(String, bool)> = fp
        .writes
        .iter()
        .map(|(&k, &(_, sure))| (witness::key_name(&l.prog, &l.an, k), sure))
        .collect();
    // T[2].v only on the aborting path: not written by any committed Y.
    assert_eq!(written, vec![("T[3].v".to_string(), false)]);
    // Both engines agree: Y and Z never form a cycle (Y writes only T[3]).
    for e in [Engine::Sat, Engine::Enumerate] {
        assert_eq!(check(&l, &[Ec], 3, None, e), Got::None, "{e:?}");
    }
}

/// Digest N-3 with readers that abort unless both keys hold one value:
/// the 4-instance long fork is gone under every model (a reader that sees
/// one write only aborts); under EC, CC and PSI one of 6 instances
/// remains (each reader sees a write of each key, not the same ones); PC,
/// SI and serializability have none, and under SI the shortest-path method
/// proves it (k = 4).
#[test]
fn long_fork_with_aborting_readers() {
    let l = program("long-fork-abort.rob");
    for m in [Ec, Cc, Psi, Pc, Si, Ser] {
        for e in [Engine::Sat, Engine::Enumerate] {
            assert_eq!(check(&l, &[m], 5, None, e), Got::None, "{m:?} {e:?}");
        }
    }
    let six = |v: &[&str]| Got::Violation(CycleType::GNonadjacent, Some("long fork"), names(v));
    assert_eq!(
        check(&l, &[Ec], 6, None, Engine::Sat),
        six(&["W(2)", "W(2)", "W(1)", "R(1,2)", "W(1)", "R(1,2)"])
    );
    assert_eq!(
        check(&l, &[Ec], 6, None, Engine::Enumerate),
        six(&["W(1)", "W(1)", "W(2)", "W(2)", "R(1,2)", "R(1,2)"])
    );
    assert_eq!(
        check(&l, &[Psi], 6, None, Engine::Sat),
        six(&["W(1)", "W(1)", "W(2)", "R(1,2)", "W(2)", "R(1,2)"])
    );
    for m in [Pc, Si, Ser] {
        assert_eq!(check(&l, &[m], 6, None, Engine::Sat), Got::None, "{m:?}");
    }
    assert_eq!(
        check(&l, &[Si], 4, Some(Method::ShortestPath), Engine::Sat),
        Got::Proved(Proof::ShortestPath(4))
    );
}
