//! `ABORT` in `ellery robust` programs: an aborted instance is no part of
//! the execution (no reads, no writes, not counted against k), in the
//! concrete replay, in the abstract reading (a case or branch that surely
//! aborts is dropped), in both engines; the shipped programs with aborting
//! transactions (`*-abort*.rob`) and what the proofs make of them.

#[path = "common/robust.rs"]
mod robust_common;

use ellery::robust::exec::{dense_dependencies, dependencies, replay, Dep, Edge, Execution};
use ellery::robust::syntax::Model::{self, *};
use ellery::robust::{self, exec::CycleType, sat, witness, Engine, Loaded, Method, Proof, Verdict};
use std::path::PathBuf;

fn program(name: &str) -> Loaded {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("test-histories/robust")
        .join(name);
    robust::load(&std::fs::read_to_string(p).unwrap()).unwrap_or_else(|e| panic!("{name}: {e}"))
}

use robust_common::desc;

fn key(l: &Loaded, name: &str) -> usize {
    (0..l.an.uni.keys())
        .find(|&k| witness::key_name(&l.prog, &l.an, k) == name)
        .unwrap_or_else(|| panic!("{name}"))
}

use robust_common::valid;

/// A verdict as (cycle type, description, instance names), `None` for
/// robust up to k, or the proof.
#[derive(Debug, PartialEq)]
enum Got {
    Violation(CycleType, Option<&'static str>, Vec<String>),
    None,
    Proved(Proof),
}

fn check(l: &Loaded, models: &[Model], k: usize, prove: Option<Method>, e: Engine) -> Got {
    let o = robust_common::opts(models, k, prove, e);
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

/// The k = 2 anomalies per unordered pair of types (either ar order).
fn pair_anomalies(l: &Loaded, models: &[Model], engine: Engine) -> Vec<String> {
    let nt = l.prog.txns.len();
    let mut out = vec![];
    for a in 0..nt {
        for b in a..nt {
            if let Some(w) = robust_common::pair_witness(l, models, engine, a, b) {
                out.push(format!(
                    "{} × {}: {} ({})",
                    l.prog.txns[a].name,
                    l.prog.txns[b].name,
                    w.kind.elle_name(),
                    w.description.unwrap_or("-")
                ));
            }
        }
    }
    out
}

/// Courseware with aborting Enrolls under EC at k = 2: the paper's three
/// kinds of anomaly remain (capacity: Enroll × Enroll; duplicate names;
/// enrolment against a concurrent removal), both engines.
#[test]
fn courseware_abort_k2_anomalies_under_ec() {
    let l = program("courseware-abort.rob");
    let want = [
        "AddStudent × AddStudent: G-single-item (lost update)",
        "AddCourse × AddCourse: G-single-item (lost update)",
        "RemStudent × RemStudent: G-single-item (lost update)",
        "RemStudent × Enroll: G2-item (write skew)",
        "RemCourse × RemCourse: G-single-item (lost update)",
        "RemCourse × Enroll: G2-item (write skew)",
        "Enroll × Enroll: G-single-item (lost update)",
    ];
    assert_eq!(pair_anomalies(&l, &[Ec], Engine::Sat), want, "Sat");
    assert_eq!(
        pair_anomalies(&l, &[Ec], Engine::Enumerate),
        want,
        "Enumerate"
    );
}

/// The strengthened mixes with aborting Enrolls: the paper's PSI long
/// fork (two Enrolls, each seeing only one of AddStudent, AddCourse) is
/// gone, since both Enrolls abort: the paper calls it harmless for that
/// reason ("both transactions ... will fail to commit"). Nothing under the
/// PSI mix up to 4, nor under the SI mix up to 5.
#[test]
fn courseware_abort_strengthened() {
    let l = program("courseware-abort-psi.rob");
    for k in [3, 4] {
        assert_eq!(check(&l, &[], k, None, Engine::Sat), Got::None, "k = {k}");
    }
    let l = program("courseware-abort-si.rob");
    assert_eq!(check(&l, &[], 5, None, Engine::Sat), Got::None);
}

/// Courseware with aborting Enrolls under the SI mix, shortest path: the
/// encoding allows a chordless 4-edge path (the proof falls back to the
/// bounded check), and no sound encoding could do better than k = 7: a
/// *serial* execution (valid under every model) of 9 instances holds a
/// chordless 6-edge path through committed Enrolls only (found by
/// `sat::realize`): AddCourse(2,1) →wr Enroll(3,2) →rw the second
/// AddStudent(3,1) (student 3 removed and added again) →wr Enroll(3,1) (the
/// last seat of course 1) →wr Enroll(2,1) (finds course 1 full, commits
/// without writing) →rw RemStudent(2) →wr RemStudent(2) (finds the student
/// gone).
#[test]
fn courseware_abort_si_shortest_path() {
    let l = program("courseware-abort-si.rob");
    let ax = robust::axioms(&l.prog, &[]);
    assert_eq!(
        robust::prove_shortest_path(&l, &ax, 4, None),
        robust::ProofOutcome::Failed(
            "shortest-path: chordless dependency paths of every length up to 4 edges exist \
             (the encoding allows Enroll(1,2) -> RemCourse(2) -> RemStudent(3) -> RemStudent(3) -> Enroll(3,2))"
                .into()
        )
    );
    let path = [
        ("AddCourse", vec![2, 1]),
        ("AddStudent", vec![3, 1]),
        ("Enroll", vec![3, 2]),
        ("RemStudent", vec![3]),
        ("AddStudent", vec![3, 1]),
        ("Enroll", vec![3, 1]),
        ("Enroll", vec![2, 1]),
        ("RemStudent", vec![2]),
        ("RemStudent", vec![2]),
    ];
    let ex = Execution {
        descs: path.iter().map(|(n, p)| desc(&l, n, p)).collect(),
        vis: (0..path.len()).map(|j| (1u64 << j) - 1).collect(),
    };
    assert!(valid(&l, &[], &ex));
    assert!(valid(&l, &[Ser], &ex));
    let reps = replay(&l.prog, &l.an, &ex);
    assert!(reps.iter().all(|r| !r.fp.aborts));
    let d = dense_dependencies(&reps);
    let on = [0, 2, 4, 5, 6, 7, 8];
    let edges: Vec<(usize, usize)> = on
        .iter()
        .flat_map(|&i| on.iter().map(move |&j| (i, j)))
        .filter(|&(i, j)| d[i][j])
        .collect();
    assert_eq!(edges, vec![(0, 2), (2, 4), (4, 5), (5, 6), (6, 7), (7, 8)]);
    let at: Vec<usize> = on.to_vec();
    for backward in [false, true] {
        let pat = sat::Pattern::ChordlessPath { edges: 6, backward };
        assert!(sat::realize_holds(&l.prog, &l.an, &ax, &ex, &pat, &at));
    }
}

/// TPC-C with aborting New-Orders (every committed one creates the order
/// its counter read, as the paper's): the acceptance rows of `tpcc.rob`
/// hold (lost update under EC at 2; PSI nothing at 2, 3, the New-Order /
/// Payment / 2 × Order-Status long fork at 4; SI nothing up to 4).
#[test]
fn tpcc_abort_rows() {
    let l = program("tpcc-abort.rob");
    assert_eq!(
        check(&l, &[Ec], 2, None, Engine::Sat),
        Got::Violation(
            CycleType::GSingle,
            Some("lost update"),
            names(&["NewOrder(2,1,1,1)", "NewOrder(1,1,2,1)"])
        )
    );
    for k in [2, 3] {
        assert_eq!(check(&l, &[Psi], k, None, Engine::Sat), Got::None);
    }
    assert_eq!(
        check(&l, &[Psi], 4, None, Engine::Sat),
        Got::Violation(
            CycleType::GNonadjacent,
            Some("long fork"),
            names(&[
                "NewOrder(1,1,2,1)",
                "Payment(2,5)",
                "OrderStatus(2)",
                "OrderStatus(2)"
            ])
        )
    );
    for k in [2, 3, 4] {
        assert_eq!(check(&l, &[Si], k, None, Engine::Sat), Got::None);
    }
}

/// TPC-C with aborting New-Orders under SI, inductive method (its queries
/// on the next-version relation, see `sat::solve`): proved, as the paper
/// reports: the 2-instance guard; condition 1 for New-Order, then Payment
/// (`tpcc-counter.rob`'s failing New-Orders break it); condition 2, where
/// the encoding allowed Order-Status(2) → Delivery (MIN = order 2) → the
/// New-Order of order 1, ar-first, until first writers (the New-Order of
/// order 1 is the counter's first writer, and a Delivery whose view holds
/// order 2 sees a later counter writer, so it sees the first one: no rw to
/// it); then {Delivery} (a Delivery that read order 1 absent does not →rw
/// the Delivery that deletes it: their views of NewOrders[1] differ, and
/// under SI the deleter reads its predecessor's version). No real execution
/// of up to 5 instances breaks condition 2. Under the paper's dense
/// relation (Def. 3, the initial state as a writer) the {Delivery} step
/// fails in a real 3-instance execution: NewOrder(1,1,1,1), a Delivery that
/// sees it (MIN = 1), and a Delivery that sees neither (MIN = NULL), which
/// read NewOrders[1].Alive in a version the first Delivery's delete
/// overwrites later, so it →rw that Delivery, ar-before it; the
/// next-version relation has no such edge (the reader →rw the New-Order's
/// insert, which →wr the deleter).
#[test]
fn tpcc_abort_si_inductive() {
    let l = program("tpcc-abort.rob");
    let ax = robust::axioms(&l.prog, &[Si]);
    // New-Order, Payment, Delivery; Order-Status and Stock-Level only read.
    assert_eq!(
        robust::prove_inductive(&l, &ax, None),
        robust::ProofOutcome::Proved(Proof::Inductive(vec![vec![0], vec![1], vec![3]]))
    );
    assert_eq!(
        check(&l, &[Si], 4, Some(Method::Inductive), Engine::Sat),
        Got::Proved(Proof::Inductive(vec![vec![0], vec![1], vec![3]]))
    );
    let ty = |n: &str| l.prog.txns.iter().position(|t| t.name == n).unwrap();
    let all = vec![true; l.prog.txns.len()];
    let q = sat::Query::IndEdge(vec![ty("NewOrder"), ty("Payment")]);
    assert_eq!(
        sat::solve(&l.prog, &l.an, &ax, 2, &all, &q, false, None),
        sat::Answer::Unsat
    );
    // The {Delivery} step among the remaining types.
    let mut rem = all.clone();
    rem[ty("NewOrder")] = false;
    rem[ty("Payment")] = false;
    let q = sat::Query::IndEdge(vec![ty("Delivery")]);
    assert_eq!(
        sat::solve(&l.prog, &l.an, &ax, 2, &rem, &q, false, None),
        sat::Answer::Unsat
    );
    assert_eq!(
        sat::solve(
            &l.prog,
            &l.an,
            &ax,
            3,
            &rem,
            &sat::Query::IndPath,
            false,
            None
        ),
        sat::Answer::Unsat
    );
    for n in [3, 4, 5] {
        assert_eq!(
            sat::realize(&l.prog, &l.an, &ax, n, &sat::Pattern::IndPath, None),
            sat::Realization::None,
            "n = {n}"
        );
    }
    let ex = Execution {
        descs: vec![
            desc(&l, "NewOrder", &[1, 1, 1, 1]),
            desc(&l, "Delivery", &[1]),
            desc(&l, "Delivery", &[1]),
        ],
        vis: vec![0, 0b01, 0],
    };
    assert!(valid(&l, &[Si], &ex));
    let reps = replay(&l.prog, &l.an, &ex);
    let d = dense_dependencies(&reps);
    assert!(d[2][1], "Delivery (MIN = NULL) -> the ar-earlier Delivery");
    let x = key(&l, "NewOrders[1].Alive");
    let sparse = dependencies(&reps);
    assert!(!sparse.iter().any(|e| (e.from, e.to) == (2, 1)));
    assert!(sparse.contains(&Edge {
        from: 2,
        to: 0,
        dep: Dep::Rw,
        key: x
    }));
    assert!(sparse.contains(&Edge {
        from: 0,
        to: 1,
        dep: Dep::Wr,
        key: x
    }));
}
