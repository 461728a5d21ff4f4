//! Facts from Elle's `consistency_model_test.clj`, `elle.txn`, and the
//! project notes.

use super::*;

fn set(xs: &[&'static str]) -> BTreeSet<&'static str> {
    xs.iter().copied().collect()
}

fn friendly_set(xs: BTreeSet<&'static str>) -> BTreeSet<&'static str> {
    xs.into_iter().map(friendly_model_name).collect()
}

/// The 21 models ruled out (besides read-committed) by G1a/G1c.
const RC_ALSO_NOT: &[&str] = &[
    "causal-cerone",
    "consistent-view",
    "cursor-stability",
    "forward-consistent-view",
    "monotonic-atomic-view",
    "monotonic-snapshot-read",
    "monotonic-view",
    "parallel-snapshot-isolation",
    "prefix",
    "read-atomic",
    "repeatable-read",
    "serializable",
    "snapshot-isolation",
    "strong-read-committed",
    "strong-serializable",
    "strong-session-read-committed",
    "strong-session-serializable",
    "strong-session-snapshot-isolation",
    "strong-snapshot-isolation",
    "update-atomic",
    "update-serializable",
];

#[test]
fn all_anomalies_order() {
    let expected = [
        "G-MSR",
        "G-SI",
        "G-SIb",
        "G-cursor",
        "G-monotonic",
        "G-single-item",
        "G-update",
        "G0",
        "G1b",
        "GSIa",
        "PL-1-cycle-exists",
        "PL-2-cycle-exists",
        "PL-2.99-cycle-exists",
        "PL-3-cycle-exists",
        "PL-SI-cycle-exists",
        "PL-SS-cycle-exists",
        "cyclic-versions",
        "dirty-update",
        "duplicate-elements",
        "future-read",
        "incompatible-order",
        "internal",
        "lost-update",
        "predicate-read-miss",
        "strong-PL-1-cycle-exists",
        "strong-PL-2-cycle-exists",
        "strong-session-PL-1-cycle-exists",
        "strong-session-PL-2-cycle-exists",
        "strong-session-serializable-cycle-exists",
        "strong-session-snapshot-isolation-cycle-exists",
        "strong-snapshot-isolation-cycle-exists",
        "G-nonadjacent-item",
        "G-single-item-process",
        "G1a",
        "G1c",
        "write-skew",
        "G-nonadjacent-item-process",
        "G-single",
        "G-single-item-realtime",
        "G1",
        "G2-item",
        "G-nonadjacent",
        "G-nonadjacent-item-realtime",
        "GSIb",
        "G2",
        "GSI",
        "G0-process",
        "G1c-process",
        "G-single-process",
        "G1-process",
        "G2-item-process",
        "G-nonadjacent-process",
        "G2-process",
        "G0-realtime",
        "G1c-realtime",
        "G-single-realtime",
        "G1-realtime",
        "G2-item-realtime",
        "G-nonadjacent-realtime",
        "G2-realtime",
    ];
    assert_eq!(all_anomaly_names(), &expected[..]);
}

#[test]
fn all_implied_anomalies_includes_inputs() {
    assert_eq!(all_implied_anomalies(&["G-SI"]), set(&["G-SI"]));
    assert!(all_implied_anomalies(&[]).is_empty());
    assert_eq!(
        all_implied_anomalies(&["G0"]),
        set(&[
            "G0",
            "G0-process",
            "G0-realtime",
            "G1",
            "G1-process",
            "G1-realtime",
            "G1c",
            "G1c-process",
            "G1c-realtime",
        ])
    );
    // Unknown names pass through, as in Elle.
    assert_eq!(all_implied_anomalies(&["bogus"]), BTreeSet::from(["bogus"]));
}

#[test]
fn all_anomalies_implying_upstream() {
    assert_eq!(
        all_anomalies_implying(&["G1a"]),
        set(&["G1a", "dirty-update", "incompatible-order"])
    );
    assert!(all_anomalies_implying(&[]).is_empty());
}

#[test]
fn weakest_models_test() {
    let s = |ms: &[&'static str]| friendly_set(weakest_models(ms));
    assert_eq!(s(&[]), set(&[]));
    assert_eq!(
        s(&["serializable", "strict-serializable"]),
        set(&["serializable"])
    );
    assert_eq!(
        s(&[
            "repeatable-read",
            "read-committed",
            "sequential",
            "read-your-writes"
        ]),
        set(&["read-your-writes", "read-committed"])
    );
    assert_eq!(s(&["serializable", "read-atomic"]), set(&["read-atomic"]));
    assert_eq!(s(&["read-atomic", "serializable"]), set(&["read-atomic"]));
}

#[test]
fn strongest_models_test() {
    let s = |ms: &[&'static str]| friendly_set(strongest_models(ms));
    assert_eq!(s(&[]), set(&[]));
    assert_eq!(
        s(&["serializable", "strong-serializable", "strict-serializable"]),
        set(&["strong-serializable"])
    );
    assert_eq!(
        s(&[
            "repeatable-read",
            "read-committed",
            "sequential",
            "read-your-writes"
        ]),
        set(&["repeatable-read", "sequential"])
    );
    assert_eq!(s(&["serializable", "read-atomic"]), set(&["serializable"]));
    assert_eq!(s(&["read-atomic", "serializable"]), set(&["serializable"]));
}

#[test]
fn anomalies_prohibited_by_read_committed() {
    assert_eq!(
        anomalies_prohibited_by(&["read-committed"]).unwrap(),
        set(&[
            "dirty-update",
            "G1a",
            "G1b",
            "G1c",
            "G1",
            "G0",
            "PL-1-cycle-exists",
            "PL-2-cycle-exists",
            "cyclic-versions",
            "duplicate-elements",
            "incompatible-order",
            "future-read",
        ])
    );
}

#[test]
fn anomalies_prohibited_by_unknown_model() {
    let err = anomalies_prohibited_by(&["stricct-snappshot-isolation"]).unwrap_err();
    assert!(err.starts_with(
        "Unknown consistency model (:stricct-snappshot-isolation); known models are:\n#{:1SR "
    ));
}

#[test]
fn anomalies_prohibited_by_strict_serializable_covers_all_cycles() {
    let p = anomalies_prohibited_by(&["strict-serializable"]).unwrap();
    for t in cycle_types() {
        assert!(p.contains(t), "{t}");
    }
    for s in cycle_exists_specs() {
        assert!(p.contains(s.anomaly_type), "{}", s.anomaly_type);
    }
    assert!(anomalies_prohibited_by(&["linearizable"])
        .unwrap()
        .is_empty());
    assert!(anomalies_prohibited_by(&[]).unwrap().is_empty());
}

#[test]
fn anomalies_to_impossible_models_test() {
    let s = |xs: &[&str]| friendly_set(anomalies_to_impossible_models(xs));
    assert_eq!(
        s(&["G-single"]),
        set(&[
            "consistent-view",
            "forward-consistent-view",
            "strong-serializable",
            "serializable",
            "snapshot-isolation",
            "strong-session-serializable",
            "strong-session-snapshot-isolation",
            "strong-snapshot-isolation",
            "update-serializable",
        ])
    );
    assert_eq!(
        s(&["G-SI"]),
        set(&[
            "snapshot-isolation",
            "serializable",
            "strong-serializable",
            "strong-session-serializable",
            "strong-session-snapshot-isolation",
            "strong-snapshot-isolation",
        ])
    );
    assert_eq!(
        s(&["dirty-update"]),
        set(&[
            "read-committed",
            "monotonic-atomic-view",
            "snapshot-isolation",
            "repeatable-read",
            "update-atomic",
            "serializable",
            "strong-serializable",
            "update-serializable",
            "cursor-stability",
            "forward-consistent-view",
            "consistent-view",
            "monotonic-view",
            "monotonic-snapshot-read",
            "causal-cerone",
            "parallel-snapshot-isolation",
            "prefix",
            "read-atomic",
            "strong-session-read-committed",
            "strong-session-serializable",
            "strong-session-snapshot-isolation",
            "strong-read-committed",
            "strong-snapshot-isolation",
        ])
    );
    assert_eq!(
        s(&["internal"]),
        set(&[
            "causal-cerone",
            "parallel-snapshot-isolation",
            "prefix",
            "read-atomic",
            "update-atomic",
            "serializable",
            "snapshot-isolation",
            "strong-serializable",
            "strong-session-serializable",
            "strong-session-snapshot-isolation",
            "strong-snapshot-isolation",
        ])
    );
}

fn boundary(not: &[&'static str], also_not: &[&'static str]) -> Boundary {
    Boundary {
        not: set(not),
        also_not: set(also_not),
    }
}

#[test]
fn friendly_boundary_elle_tests() {
    assert_eq!(friendly_boundary(&[]), boundary(&[], &[]));

    let mut cv_also: Vec<&'static str> = RC_ALSO_NOT.to_vec();
    cv_also.extend([
        "read-committed",
        "strong-read-uncommitted",
        "strong-session-read-uncommitted",
    ]);
    assert_eq!(
        friendly_boundary(&["cyclic-versions"]),
        boundary(&["read-uncommitted"], &cv_also)
    );

    let internal_also = [
        "causal-cerone",
        "parallel-snapshot-isolation",
        "prefix",
        "update-atomic",
        "serializable",
        "snapshot-isolation",
        "strong-serializable",
        "strong-session-serializable",
        "strong-session-snapshot-isolation",
        "strong-snapshot-isolation",
    ];
    assert_eq!(
        friendly_boundary(&["internal"]),
        boundary(&["read-atomic"], &internal_also)
    );
    assert_eq!(
        friendly_boundary(&["G2", "internal"]),
        boundary(&["read-atomic"], &internal_also)
    );

    assert_eq!(
        friendly_boundary(&["G1a"]),
        boundary(&["read-committed"], RC_ALSO_NOT)
    );

    assert_eq!(
        friendly_boundary(&["G-single"]),
        boundary(
            &["consistent-view"],
            &[
                "snapshot-isolation",
                "serializable",
                "strong-serializable",
                "strong-session-snapshot-isolation",
                "strong-snapshot-isolation",
                "strong-session-serializable",
                "forward-consistent-view",
                "update-serializable",
            ]
        )
    );

    assert_eq!(
        friendly_boundary(&["lost-update"]).not,
        set(&["update-atomic", "cursor-stability"])
    );

    assert_eq!(
        friendly_boundary(&["G-single-realtime"]),
        boundary(&["strong-snapshot-isolation"], &["strong-serializable"])
    );
}

#[test]
fn friendly_boundary_digest_examples() {
    assert_eq!(RC_ALSO_NOT.len(), 21);
    for a in ["G1c", "G1a"] {
        assert_eq!(
            friendly_boundary(&[a]),
            boundary(&["read-committed"], RC_ALSO_NOT),
            "{a}"
        );
    }
    let mut g0_also: Vec<&'static str> = RC_ALSO_NOT.to_vec();
    g0_also.extend([
        "read-committed",
        "strong-read-uncommitted",
        "strong-session-read-uncommitted",
    ]);
    assert_eq!(
        friendly_boundary(&["G0"]),
        boundary(&["read-uncommitted"], &g0_also)
    );
    assert_eq!(
        friendly_boundary(&["G2-item"]),
        boundary(
            &["repeatable-read"],
            &[
                "serializable",
                "strong-serializable",
                "strong-session-serializable"
            ]
        )
    );
    assert_eq!(
        friendly_boundary(&["G-single-item-realtime"]),
        boundary(&["strong-snapshot-isolation"], &["strong-serializable"])
    );
    assert_eq!(
        friendly_boundary(&["G-single-item"]),
        boundary(
            &["consistent-view", "repeatable-read"],
            &[
                "forward-consistent-view",
                "serializable",
                "snapshot-isolation",
                "strong-serializable",
                "strong-session-serializable",
                "strong-session-snapshot-isolation",
                "strong-snapshot-isolation",
                "update-serializable",
            ]
        )
    );
    assert_eq!(
        friendly_boundary(&["G-single-item-process"]).not,
        set(&["strong-session-snapshot-isolation"])
    );
    assert_eq!(
        friendly_boundary(&["empty-transaction-graph"]),
        boundary(&[], &[])
    );
    // huge-scc oracle.
    assert_eq!(
        friendly_boundary(&[
            "G2-item-realtime",
            "cycle-search-timeout",
            "strong-snapshot-isolation-cycle-exists",
        ])
        .not,
        set(&["strong-snapshot-isolation"])
    );
}

#[test]
fn g2_item_with_si_and_rr_models() {
    // With :consistency-models [:snapshot-isolation :repeatable-read], a
    // G2-item is prohibited and the boundary is :not #{:repeatable-read}.
    let p =
        prohibited_anomaly_types(Some(&["snapshot-isolation", "repeatable-read"]), &[]).unwrap();
    assert!(p.contains("G2-item"));
    assert_eq!(
        friendly_boundary(&["G2-item"]).not,
        set(&["repeatable-read"])
    );
}

#[test]
fn all_impossible_models_test() {
    assert_eq!(
        all_impossible_models(&["strong-session-serializable"]).unwrap(),
        set(&["strong-session-serializable", "PL-SS"])
    );
    assert!(all_impossible_models(&["nope"]).is_err());
}

#[test]
fn model_names() {
    assert_eq!(canonical_model_name("serializable"), "PL-3");
    assert_eq!(canonical_model_name("conflict-serializable"), "PL-3");
    assert_eq!(canonical_model_name("strict-serializable"), "PL-SS");
    assert_eq!(canonical_model_name("strong-serializable"), "PL-SS");
    assert_eq!(canonical_model_name("linearizable"), "linearizable");
    assert_eq!(friendly_model_name("PL-3"), "serializable");
    assert_eq!(friendly_model_name("PL-SS"), "strong-serializable");
    assert_eq!(friendly_model_name("PL-2"), "read-committed");
    assert_eq!(
        friendly_model_name("strong-session-PL-2"),
        "strong-session-read-committed"
    );
    assert_eq!(friendly_model_name("serializable"), "serializable");
    // Every canonical name maps back to a friendly name that canonicalises
    // to it.
    for (f, c) in data::CANONICAL_MODEL_NAMES {
        assert_eq!(canonical_model_name(friendly_model_name(c)), *c, "{f}");
    }
}

#[test]
fn all_models_list() {
    let expected = set(&[
        "1SR",
        "PL-1",
        "PL-2",
        "PL-2+",
        "PL-2.99",
        "PL-2L",
        "PL-3",
        "PL-3U",
        "PL-CS",
        "PL-FCV",
        "PL-MSR",
        "PL-SI",
        "PL-SS",
        "PRAM",
        "causal",
        "causal-cerone",
        "conflict-serializable",
        "consistent-view",
        "cursor-stability",
        "forward-consistent-view",
        "linearizable",
        "monotonic-atomic-view",
        "monotonic-reads",
        "monotonic-snapshot-read",
        "monotonic-view",
        "monotonic-writes",
        "parallel-snapshot-isolation",
        "prefix",
        "read-atomic",
        "read-committed",
        "read-uncommitted",
        "read-your-writes",
        "repeatable-read",
        "sequential",
        "serializable",
        "session-serializable",
        "snapshot-isolation",
        "strict-serializable",
        "strong-PL-1",
        "strong-PL-2",
        "strong-read-committed",
        "strong-read-uncommitted",
        "strong-serializable",
        "strong-session-PL-1",
        "strong-session-PL-2",
        "strong-session-read-committed",
        "strong-session-read-uncommitted",
        "strong-session-serializable",
        "strong-session-snapshot-isolation",
        "strong-snapshot-isolation",
        "update-atomic",
        "update-serializable",
        "view-serializable",
        "writes-follow-reads",
    ]);
    assert_eq!(all_models(), &expected);
    assert_eq!(all_models().len(), 54);
}

#[test]
fn parse_names() {
    assert_eq!(
        parse_models(&[":serializable", "PL-SS"]).unwrap(),
        vec!["serializable", "PL-SS"]
    );
    let err = parse_models(&["serializable", ":nope"]).unwrap_err();
    assert!(err.contains("(:nope)"), "{err}");
    assert!(err.contains(":1SR :PL-1 :PL-2 "), "{err}");
    assert_eq!(
        parse_anomalies(&[":G1a", "G2-item", "cycle-search-timeout"]).unwrap(),
        vec!["G1a", "G2-item", "cycle-search-timeout"]
    );
    let err = parse_anomalies(&["G3"]).unwrap_err();
    assert!(err.contains("(:G3)"), "{err}");
    assert!(err.contains(":G-MSR :G-SI :G-SIb "), "{err}");
}

#[test]
fn search_order() {
    let expected = [
        "G-single-item",
        "G0",
        "G-nonadjacent-item",
        "G-single-item-process",
        "G1c",
        "G-nonadjacent-item-process",
        "G-single",
        "G-single-item-realtime",
        "G2-item",
        "G-nonadjacent",
        "G-nonadjacent-item-realtime",
        "G2",
        "G0-process",
        "G1c-process",
        "G-single-process",
        "G2-item-process",
        "G-nonadjacent-process",
        "G2-process",
        "G0-realtime",
        "G1c-realtime",
        "G-single-realtime",
        "G2-item-realtime",
        "G-nonadjacent-realtime",
        "G2-realtime",
    ];
    assert_eq!(cycle_anomaly_search_order(), expected);
    // It is exactly all-anomalies restricted to cycle types.
    let filtered: Vec<&str> = all_anomaly_names()
        .iter()
        .copied()
        .filter(|a| cycle_types().contains(a))
        .collect();
    assert_eq!(filtered, expected);
    assert_eq!(anomaly_depth_compare("G0", "G0"), Ordering::Equal);
    assert_eq!(anomaly_depth_compare("G0", "G1c"), Ordering::Less);
    assert_eq!(anomaly_depth_compare("G-single-item", "G0"), Ordering::Less);
    assert_eq!(anomaly_depth_compare("bogus", "G0"), Ordering::Less);
}

#[test]
fn cycle_type_sets() {
    assert_eq!(cycle_types().len(), 24);
    assert_eq!(process_anomaly_types().len(), 8);
    assert_eq!(realtime_anomaly_types().len(), 8);
}

#[test]
fn cycle_exists_specs_shape() {
    let specs = cycle_exists_specs();
    assert_eq!(specs.len(), 13);
    for s in specs {
        assert_eq!(s.anomaly_type, format!("{}-cycle-exists", s.model));
        assert_eq!(s.friendly_model, friendly_model_name(s.model));
        assert!(all_models().contains(s.model));
    }
    let edn: Vec<String> = specs
        .iter()
        .map(|s| s.subgraph.friendly().to_string())
        .collect();
    assert_eq!(edn[0], "[:union :ww :wwp]");
    assert_eq!(edn[1], "[:union :ww :wwp :wr :wrp]");
    assert_eq!(
        edn[2],
        "[:extension [:union :ww :wwp :wr :wrp] [:union :rw :rwp]]"
    );
    assert_eq!(edn[3], "[:union :ww :wwp :wr :wrp :rw]");
    assert_eq!(edn[4], "[:union :ww :wwp :wr :wrp :rw :rwp]");
    assert_eq!(edn[5], "[:union :ww :wwp :process]");
    assert_eq!(
        edn[7],
        "[:extension [:union :ww :wwp :wr :wrp :process] [:union :rw :rwp]]"
    );
    assert_eq!(edn[12], "[:union :ww :wwp :wr :wrp :rw :rwp :realtime]");
    assert_eq!(specs[12].subgraph.all_rels(), 0xBF);
    // Each model's cycle-exists anomaly is prohibited by that model.
    for s in specs {
        assert!(anomalies_prohibited_by(&[s.model])
            .unwrap()
            .contains(s.anomaly_type));
    }
}

#[test]
fn prohibited_and_reportable() {
    let default = prohibited_anomaly_types(None, &[]).unwrap();
    assert_eq!(
        default,
        anomalies_prohibited_by(&["strict-serializable"]).unwrap()
    );
    let p = prohibited_anomaly_types(Some(&["read-committed"]), &["G1a", "G2"]).unwrap();
    for a in [
        "G1a",
        "dirty-update",
        "G2",
        "G2-item",
        "G-nonadjacent",
        "lost-update",
        "G0",
    ] {
        assert!(p.contains(a), "{a}");
    }
    assert!(!p.contains("G2-process"));
    let r = reportable_anomaly_types(Some(&["read-committed"]), &[]).unwrap();
    assert!(r.contains("empty-transaction-graph"));
    assert!(r.contains("cycle-search-timeout"));
    assert!(prohibited_anomaly_types(Some(&["nope"]), &[]).is_err());
}

#[test]
fn redundant_cycle_exists() {
    assert_eq!(
        remove_redundant_cycle_exists(&["G1c", "PL-2-cycle-exists", "PL-SS-cycle-exists"]),
        set(&["PL-2-cycle-exists", "PL-SS-cycle-exists"])
    );
    // Cycle-exists anomalies alone are never redundant.
    assert!(remove_redundant_cycle_exists(&["PL-2-cycle-exists", "PL-SS-cycle-exists"]).is_empty());
    // huge-scc: G2-item-realtime doesn't rule out strong SI.
    assert!(remove_redundant_cycle_exists(&[
        "G2-item-realtime",
        "cycle-search-timeout",
        "strong-snapshot-isolation-cycle-exists"
    ])
    .is_empty());
}

#[test]
fn impossible_cycle_anomalies() {
    // No cycle-exists cases at all: every cycle type is impossible.
    assert_eq!(
        impossible_cycle_anomalies_given_cycle_exists(&[]).unwrap(),
        *cycle_types()
    );
    // Everything ruled out except nothing: PL-1 failing rules out all specs'
    // models, so no cycle type can be excluded.
    assert!(
        impossible_cycle_anomalies_given_cycle_exists(&["read-uncommitted"])
            .unwrap()
            .is_empty()
    );
    // Only strict serializability fails: realtime cycles may exist, but no
    // process or plain ones.
    let s = impossible_cycle_anomalies_given_cycle_exists(&["strong-serializable"]).unwrap();
    assert!(s.contains("G0"));
    assert!(s.contains("G2-process"));
    assert!(!s.contains("G2-realtime"));
}
