//! `ellery robust`'s value facts and encoder limits: the value sets found
//! by the analysis's fixpoint, the view values tied to visibility in the
//! proofs' encoding, and the deadline honoured while encoding.

use ellery::robust::syntax::Model;
use ellery::robust::{self, sat, witness, Loaded};
use std::path::PathBuf;
use std::time::{Duration, Instant};

fn program(name: &str) -> Loaded {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("test-histories/robust")
        .join(name);
    let src = std::fs::read_to_string(&path).unwrap();
    robust::load(&src).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn key(l: &Loaded, name: &str) -> usize {
    (0..l.an.uni.keys())
        .find(|&k| witness::key_name(&l.prog, &l.an, k) == name)
        .unwrap_or_else(|| panic!("no key {name}"))
}

/// Courseware's two-valued keys (every writer writes one value): the
/// Alive flag of a student no RemStudent removes (4) and of the course no
/// AddCourse adds (1); and, through the fixpoint, course 1's counter,
/// which Enroll sets to cnt + 1 only when cnt < cap = 1, so 0 or 1. Keys
/// written with two values (student 3's Alive: added and removed) or
/// unknown ones are not.
#[test]
fn courseware_two_valued_keys() {
    let l = program("courseware.rob");
    let two = |name: &str| l.an.two_valued[key(&l, name)];
    assert_eq!(two("Student[4].Alive"), Some((Some(0), Some(1))));
    assert_eq!(two("Student[4].sname"), Some((None, Some(1))));
    assert_eq!(two("Course[1].Alive"), Some((Some(1), Some(0))));
    assert_eq!(two("Course[1].cnt"), Some((Some(0), Some(1))));
    assert_eq!(two("Student[3].Alive"), None);
    assert_eq!(two("Course[2].cnt"), None);
    // Never written: a constant, not two-valued.
    assert_eq!(two("Course[1].cap"), None);
}

/// The value cases: Use writes X only when its view has the flag unset,
/// so its value cases split on the flag (tied to visibility in the
/// proofs' encoding): flag 0 reads and writes X, flag 1 touches no X. The
/// bounded check's cases (`alts`) do not split (no MIN/MAX or lookup).
#[test]
fn value_cases_split_on_two_valued_reads() {
    let src = "table F (id pk, on)\ntable X (id pk, v)\n\
        init F { id: 1, on: 0 }\ninit X { id: 1, v: 0 }\n\
        txn Arm() { UPDATE F SET on = 1 WHERE id = 1; }\n\
        txn Use() { SELECT on AS f FROM F WHERE id = 1;\n\
          IF f = 0 THEN { SELECT v AS a FROM X WHERE id = 1; UPDATE X SET v = a + 1 WHERE id = 1; } }\n";
    let l = robust::load(src).unwrap();
    let (flag, x) = (key(&l, "F[1].on"), key(&l, "X[1].v"));
    assert_eq!(l.an.two_valued[flag], Some((Some(0), Some(1))));
    // X is written a + 1 for every value read: unbounded, not split on.
    assert_eq!(l.an.two_valued[x], None);
    let use_ = l.an.descs.iter().position(|d| d.txn == 1).unwrap();
    assert!(l.an.alts[use_].is_empty());
    let cases: Vec<_> = l.an.value_alts[use_]
        .iter()
        .map(|fp| {
            (
                fp.views.clone().into_iter().collect::<Vec<_>>(),
                fp.reads.get(&x).copied(),
                fp.writes.get(&x).map(|w| w.1),
            )
        })
        .collect();
    assert_eq!(
        cases,
        [
            (vec![(flag, Some(0))], Some(true), Some(true)),
            (vec![(flag, Some(1))], None, None),
        ]
    );
}

/// `--timeout` holds while encoding: 62 slots over TPC-C's descriptors
/// take seconds (and hundreds of MB) to encode; with a deadline 100 ms
/// away the answer is unknown soon after it.
#[test]
fn encoding_stops_at_the_deadline() {
    let l = program("tpcc.rob");
    let ax = robust::axioms(&l.prog, &[Model::Si]);
    let all = vec![true; l.prog.txns.len()];
    let start = Instant::now();
    let a = sat::solve(
        &l.prog,
        &l.an,
        &ax,
        robust::MAX_K,
        &all,
        &sat::Query::ShortestPath,
        false,
        Some(start + Duration::from_millis(100)),
    );
    assert_eq!(a, sat::Answer::Unknown);
    let took = start.elapsed();
    assert!(took < Duration::from_secs(2), "{took:?}");
}
