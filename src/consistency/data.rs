//! Raw graph data transcribed from Elle's `elle.consistency-model` and
//! `elle.txn` namespaces.
//!
//! Everything here is a literal fact about Elle (names and edges, in Elle's
//! source order). The derived structures (canonicalised graphs, depths,
//! closures) are computed in the parent module.

/// Edges `anomaly -> [anomalies it implies]`, as in Elle's
/// `implied-anomalies` DAG.
pub(crate) const IMPLIED_ANOMALIES: &[(&str, &[&str])] = &[
    ("G0", &["G1c", "G0-process"]),
    ("G0-process", &["G1c-process", "G0-realtime"]),
    ("G0-realtime", &["G1c-realtime"]),
    ("G1a", &["G1"]),
    ("G1b", &["G1"]),
    ("G1c", &["G1", "G1c-process"]),
    ("G1c-process", &["G1c-realtime", "G1-process"]),
    ("G1c-realtime", &["G1-realtime"]),
    ("G1", &["G1-process"]),
    ("G1-process", &["G1-realtime"]),
    (
        "G-single-item",
        &["G-single", "G-single-item-process", "G-nonadjacent-item"],
    ),
    (
        "G-single-item-process",
        &[
            "G-single-process",
            "G-single-item-realtime",
            "G-nonadjacent-item-process",
        ],
    ),
    (
        "G-single-item-realtime",
        &["G-single-realtime", "G-nonadjacent-item-realtime"],
    ),
    ("G-single", &["G-nonadjacent", "GSIb", "G-single-process"]),
    (
        "G-single-process",
        &["G-nonadjacent-process", "G-single-realtime"],
    ),
    ("G-single-realtime", &["G-nonadjacent-realtime"]),
    (
        "G-nonadjacent-item",
        &["G-nonadjacent", "G2-item", "G-nonadjacent-item-process"],
    ),
    (
        "G-nonadjacent-item-process",
        &[
            "G-nonadjacent-process",
            "G2-item-process",
            "G-nonadjacent-item-realtime",
        ],
    ),
    (
        "G-nonadjacent-item-realtime",
        &["G2-item-realtime", "G-nonadjacent-realtime"],
    ),
    ("G-nonadjacent", &["G2", "G-nonadjacent-process"]),
    (
        "G-nonadjacent-process",
        &["G2-process", "G-nonadjacent-realtime"],
    ),
    ("G-nonadjacent-realtime", &["G2-realtime"]),
    ("G2", &["G2-process"]),
    ("G2-item", &["G2", "G2-item-process"]),
    ("G2-item-process", &["G2-process", "G2-item-realtime"]),
    ("G2-item-realtime", &["G2-realtime"]),
    ("G2-process", &["G2-realtime"]),
    ("GSIa", &["GSI"]),
    ("GSIb", &["GSI"]),
    ("incompatible-order", &["G1a"]),
    ("future-read", &["G1c"]),
    ("dirty-update", &["G1a"]),
    ("lost-update", &["write-skew", "G2-item"]),
    ("write-skew", &["G2"]),
];

/// Extra "is usually worse than" edges from Elle's `anomaly-severity-graph`.
/// Only used (merged with [`IMPLIED_ANOMALIES`]) to compute anomaly depths.
pub(crate) const ANOMALY_SEVERITY: &[(&str, &[&str])] = &[
    ("G0", &["G1c"]),
    ("G0-process", &["G1c-process"]),
    ("G0-realtime", &["G1c-realtime"]),
    ("G1c", &["G-single", "G2-item"]),
    ("G1c-process", &["G-single-process", "G2-item-process"]),
    ("G1c-realtime", &["G-single-realtime", "G2-item-realtime"]),
    ("G2", &["G0-process"]),
    ("G2-process", &["G0-realtime"]),
];

/// Elle's `canonical-model-names`: `(friendly, canonical)` pairs, in source
/// order.
pub(crate) const CANONICAL_MODEL_NAMES: &[(&str, &str)] = &[
    ("consistent-view", "PL-2+"),
    ("conflict-serializable", "PL-3"),
    ("cursor-stability", "PL-CS"),
    ("forward-consistent-view", "PL-FCV"),
    ("monotonic-snapshot-read", "PL-MSR"),
    ("monotonic-view", "PL-2L"),
    ("read-committed", "PL-2"),
    ("read-uncommitted", "PL-1"),
    ("repeatable-read", "PL-2.99"),
    ("serializable", "PL-3"),
    ("snapshot-isolation", "PL-SI"),
    ("strict-serializable", "PL-SS"),
    ("strong-serializable", "PL-SS"),
    ("update-serializable", "PL-3U"),
    ("strong-session-read-uncommitted", "strong-session-PL-1"),
    ("strong-session-read-committed", "strong-session-PL-2"),
    ("strong-read-uncommitted", "strong-PL-1"),
    ("strong-read-committed", "strong-PL-2"),
];

/// Elle's `friendly-model-names`: canonical → friendly. This is the inverse
/// of [`CANONICAL_MODEL_NAMES`]; where two friendly names share a canonical
/// name Elle's result is fixed by an explicit override (`PL-3` →
/// `serializable`) or, for `PL-SS`, by Clojure hash-map iteration order,
/// which yields `strong-serializable` (pinned by Elle's own tests).
pub(crate) const FRIENDLY_MODEL_NAMES: &[(&str, &str)] = &[
    ("PL-1", "read-uncommitted"),
    ("PL-2", "read-committed"),
    ("PL-2+", "consistent-view"),
    ("PL-2.99", "repeatable-read"),
    ("PL-2L", "monotonic-view"),
    ("PL-3", "serializable"),
    ("PL-3U", "update-serializable"),
    ("PL-CS", "cursor-stability"),
    ("PL-FCV", "forward-consistent-view"),
    ("PL-MSR", "monotonic-snapshot-read"),
    ("PL-SI", "snapshot-isolation"),
    ("PL-SS", "strong-serializable"),
    ("strong-PL-1", "strong-read-uncommitted"),
    ("strong-PL-2", "strong-read-committed"),
    ("strong-session-PL-1", "strong-session-read-uncommitted"),
    ("strong-session-PL-2", "strong-session-read-committed"),
];

/// Elle's `models` map *before* vertex canonicalisation: `model -> [models it
/// implies]`. Both ends are canonicalised when the graph is built.
pub(crate) const MODELS: &[(&str, &[&str])] = &[
    ("causal-cerone", &["read-atomic"]),
    ("consistent-view", &["cursor-stability", "monotonic-view"]),
    ("conflict-serializable", &["view-serializable"]),
    ("cursor-stability", &["read-committed", "PL-2"]),
    ("forward-consistent-view", &["consistent-view"]),
    ("PL-2", &["PL-1"]),
    ("PL-3", &["repeatable-read", "update-serializable"]),
    ("update-serializable", &["forward-consistent-view"]),
    ("monotonic-atomic-view", &["read-committed"]),
    ("monotonic-view", &["PL-2"]),
    ("monotonic-snapshot-read", &["PL-2"]),
    (
        "parallel-snapshot-isolation",
        &["causal-cerone", "update-atomic"],
    ),
    ("prefix", &["causal-cerone"]),
    ("read-atomic", &["monotonic-atomic-view"]),
    ("read-committed", &["read-uncommitted"]),
    (
        "repeatable-read",
        &["cursor-stability", "monotonic-atomic-view"],
    ),
    ("update-atomic", &["read-atomic"]),
    (
        "serializable",
        &["repeatable-read", "snapshot-isolation", "view-serializable"],
    ),
    ("session-serializable", &["1SR"]),
    (
        "snapshot-isolation",
        &[
            "forward-consistent-view",
            "monotonic-atomic-view",
            "monotonic-snapshot-read",
            "parallel-snapshot-isolation",
            "prefix",
        ],
    ),
    (
        "strict-serializable",
        &[
            "PL-3",
            "serializable",
            "linearizable",
            "snapshot-isolation",
            "strong-snapshot-isolation",
            "strong-session-serializable",
        ],
    ),
    ("strong-session-PL-1", &["PL-1"]),
    ("strong-session-PL-2", &["PL-2", "strong-session-PL-1"]),
    ("strong-PL-1", &["strong-session-PL-1"]),
    ("strong-PL-2", &["strong-session-PL-2", "strong-PL-1"]),
    (
        "strong-session-serializable",
        &["serializable", "strong-session-snapshot-isolation"],
    ),
    (
        "strong-session-snapshot-isolation",
        &["snapshot-isolation", "strong-session-PL-2"],
    ),
    ("strong-serializable", &["session-serializable"]),
    (
        "strong-snapshot-isolation",
        &["strong-session-snapshot-isolation", "strong-PL-2"],
    ),
    ("linearizable", &["sequential"]),
    ("sequential", &["causal"]),
    ("causal", &["writes-follow-reads", "PRAM"]),
    (
        "PRAM",
        &["monotonic-reads", "monotonic-writes", "read-your-writes"],
    ),
];

/// Elle's `direct-proscribed-anomalies` map *before* key canonicalisation:
/// `model -> [anomalies it directly proscribes]`.
pub(crate) const DIRECT_PROSCRIBED_ANOMALIES: &[(&str, &[&str])] = &[
    ("causal-cerone", &["internal", "G1a"]),
    ("cursor-stability", &["G1", "G-cursor", "lost-update"]),
    ("monotonic-view", &["G1", "G-monotonic"]),
    ("monotonic-snapshot-read", &["G1", "G-MSR"]),
    ("consistent-view", &["G1", "G-single"]),
    ("forward-consistent-view", &["G1", "G-SIb"]),
    ("parallel-snapshot-isolation", &["internal", "G1a"]),
    (
        "PL-3",
        &["G1", "G2", "predicate-read-miss", "PL-3-cycle-exists"],
    ),
    ("PL-2", &["G1", "PL-2-cycle-exists"]),
    (
        "PL-1",
        &[
            "G0",
            "duplicate-elements",
            "cyclic-versions",
            "PL-1-cycle-exists",
        ],
    ),
    ("prefix", &["internal", "G1a"]),
    ("serializable", &["internal"]),
    (
        "snapshot-isolation",
        &[
            "internal",
            "G1",
            "G-SI",
            "G-nonadjacent",
            "PL-SI-cycle-exists",
        ],
    ),
    ("read-atomic", &["internal", "G1a", "future-read"]),
    (
        "repeatable-read",
        &["G1", "G2-item", "PL-2.99-cycle-exists", "lost-update"],
    ),
    ("update-atomic", &["lost-update"]),
    (
        "strict-serializable",
        &["G1", "G1c-realtime", "G2-realtime", "PL-SS-cycle-exists"],
    ),
    (
        "strong-session-PL-1",
        &["strong-session-PL-1-cycle-exists", "G0-process"],
    ),
    (
        "strong-session-PL-2",
        &["strong-session-PL-2-cycle-exists", "G1c-process"],
    ),
    ("strong-PL-1", &["strong-PL-1-cycle-exists", "G0-realtime"]),
    ("strong-PL-2", &["strong-PL-2-cycle-exists", "G1c-realtime"]),
    (
        "strong-session-snapshot-isolation",
        &[
            "internal",
            "G1-process",
            "G-nonadjacent-process",
            "strong-session-snapshot-isolation-cycle-exists",
        ],
    ),
    (
        "strong-snapshot-isolation",
        &[
            "internal",
            "G1-realtime",
            "G-nonadjacent-realtime",
            "strong-snapshot-isolation-cycle-exists",
        ],
    ),
    (
        "strong-session-serializable",
        &[
            "G1-process",
            "G2-process",
            "strong-session-serializable-cycle-exists",
        ],
    ),
    ("update-serializable", &["G1", "G-update"]),
];

/// The eight base cycle anomaly types of Elle's `base-cycle-anomaly-specs`.
/// Each also has `-process` and `-realtime` variants.
pub(crate) const BASE_CYCLE_TYPES: &[&str] = &[
    "G0",
    "G1c",
    "G-single-item",
    "G-single",
    "G-nonadjacent-item",
    "G-nonadjacent",
    "G2-item",
    "G2",
];

/// Elle's `unknown-anomaly-types`: anomalies which make a result `:unknown`
/// rather than `false`.
pub(crate) const UNKNOWN_ANOMALY_TYPES: &[&str] =
    &["cycle-search-timeout", "empty-transaction-graph"];
