//! Elle's `cycle-exists-specs` (from `elle.txn`): for each consistency model
//! with a cheap "does any SCC exist in this subgraph?" test, the subgraph
//! which must be acyclic if the model holds.

use std::fmt;
use std::sync::OnceLock;

/// Relationship bit for write-write dependencies (Elle's `BitRels/WW`).
pub const WW: u8 = 0x01;
/// Relationship bit for write-read dependencies (Elle's `BitRels/WR`).
pub const WR: u8 = 0x02;
/// Relationship bit for read-write anti-dependencies (Elle's `BitRels/RW`).
pub const RW: u8 = 0x04;
/// Relationship bit for predicate write-write dependencies (`BitRels/WWP`).
pub const WWP: u8 = 0x08;
/// Relationship bit for predicate write-read dependencies (`BitRels/WRP`).
pub const WRP: u8 = 0x10;
/// Relationship bit for predicate read-write dependencies (`BitRels/RWP`).
pub const RWP: u8 = 0x20;
/// Relationship bit for process-order edges (`BitRels/PROCESS`).
pub const PROCESS: u8 = 0x40;
/// Relationship bit for realtime-order edges (`BitRels/REALTIME`).
pub const REALTIME: u8 = 0x80;

/// Keyword names of the relationship bits, indexed by bit position, exactly
/// as Elle's `BitRels.KEYWORDS`.
pub const REL_NAMES: [&str; 8] = ["ww", "wr", "rw", "wwp", "wrp", "rwp", "process", "realtime"];

/// The keyword names (in bit order, lowest bit first) of the relationships
/// set in `bits`.
pub fn rel_names(bits: u8) -> Vec<&'static str> {
    (0..8)
        .filter(|i| bits & (1u8 << i) != 0)
        .map(|i| REL_NAMES[i])
        .collect()
}

/// A subgraph specification, mirroring the small AST Elle interprets in
/// `cycle-exists-subgraph`.
///
/// Elle's interpreter also understands `[:composition a b]`, but no
/// cycle-exists spec uses it (the only one that did, for `:prefix`, is
/// commented out in Elle), so it is not represented here.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Subgraph {
    /// `[:union a b ...]`: the union of the given subgraphs.
    Union(Vec<Subgraph>),
    /// `[:extension a b]`: Elle's `g/sequential-extension` of `a` by `b`,
    /// i.e. `a` plus every edge `x -> z` where `x -a-> y -b-> z`.
    Extension(Box<Subgraph>, Box<Subgraph>),
    /// The projection of the transaction graph onto these relationship bits
    /// (an Elle `BitRels`). In Elle's specs every leaf is a single bit.
    Rels(u8),
}

/// A printable, EDN-shaped value: the form of Elle's "friendly subgraph"
/// (`cycle-exists-friendly-subgraph`), which appears as `:subgraph` in
/// `*-cycle-exists` anomaly maps, e.g. `[:union :ww :wwp :wr :wrp]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FriendlySubgraph {
    /// A keyword, stored without its leading colon (`"union"`, `"ww"`, ...).
    Keyword(&'static str),
    /// An EDN vector.
    Vector(Vec<FriendlySubgraph>),
    /// `nil`; what Elle would print for an empty `BitRels` leaf (never
    /// produced by Elle's own specs).
    Nil,
}

impl fmt::Display for FriendlySubgraph {
    /// Renders as EDN, e.g. `[:extension [:union :ww :wr] [:union :rw :rwp]]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FriendlySubgraph::Keyword(k) => write!(f, ":{k}"),
            FriendlySubgraph::Nil => write!(f, "nil"),
            FriendlySubgraph::Vector(xs) => {
                write!(f, "[")?;
                for (i, x) in xs.iter().enumerate() {
                    if i > 0 {
                        write!(f, " ")?;
                    }
                    write!(f, "{x}")?;
                }
                write!(f, "]")
            }
        }
    }
}

impl Subgraph {
    /// Elle's `cycle-exists-friendly-subgraph`: operators become keywords,
    /// and each `BitRels` leaf becomes `(first (.toClojure rels))`.
    ///
    /// `.toClojure` yields a Clojure hash *set* of keywords, so for a single
    /// bit (the only case in Elle's specs) the leaf is that one keyword,
    /// and an empty leaf is `nil`. For a multi-bit leaf Elle's choice depends
    /// on hash-set iteration order; we emit the lowest-bit keyword.
    pub fn friendly(&self) -> FriendlySubgraph {
        match self {
            Subgraph::Rels(bits) => match rel_names(*bits).first() {
                Some(k) => FriendlySubgraph::Keyword(k),
                None => FriendlySubgraph::Nil,
            },
            Subgraph::Union(xs) => {
                let mut v = Vec::with_capacity(xs.len() + 1);
                v.push(FriendlySubgraph::Keyword("union"));
                v.extend(xs.iter().map(Subgraph::friendly));
                FriendlySubgraph::Vector(v)
            }
            Subgraph::Extension(a, b) => FriendlySubgraph::Vector(vec![
                FriendlySubgraph::Keyword("extension"),
                a.friendly(),
                b.friendly(),
            ]),
        }
    }

    /// The union of every relationship bit mentioned anywhere in this spec.
    pub fn all_rels(&self) -> u8 {
        match self {
            Subgraph::Rels(b) => *b,
            Subgraph::Union(xs) => xs.iter().fold(0, |acc, x| acc | x.all_rels()),
            Subgraph::Extension(a, b) => a.all_rels() | b.all_rels(),
        }
    }
}

/// One entry of Elle's `cycle-exists-specs`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CycleExistsSpec {
    /// Canonical model name, e.g. `"PL-SI"`.
    pub model: &'static str,
    /// The anomaly type reported when the subgraph has a cycle:
    /// `"<model>-cycle-exists"`.
    pub anomaly_type: &'static str,
    /// Friendly model name (Elle's `friendly-model-name` of `model`); this is
    /// the `:not` field of the anomaly map.
    pub friendly_model: &'static str,
    /// The subgraph which must be acyclic if `model` holds.
    pub subgraph: Subgraph,
}

fn union(bits: &[u8]) -> Subgraph {
    Subgraph::Union(bits.iter().map(|b| Subgraph::Rels(*b)).collect())
}

fn extension(a: Subgraph, b: Subgraph) -> Subgraph {
    Subgraph::Extension(Box::new(a), Box::new(b))
}

/// Elle's `cycle-exists-specs`, in Elle's order (which is also the order in
/// which `cycle-exists-cases` tests them, skipping models already ruled out).
pub fn cycle_exists_specs() -> &'static [CycleExistsSpec] {
    static SPECS: OnceLock<Vec<CycleExistsSpec>> = OnceLock::new();
    SPECS.get_or_init(|| {
        let spec = |model, anomaly_type, friendly_model, subgraph| CycleExistsSpec {
            model,
            anomaly_type,
            friendly_model,
            subgraph,
        };
        vec![
            spec(
                "PL-1",
                "PL-1-cycle-exists",
                "read-uncommitted",
                union(&[WW, WWP]),
            ),
            spec(
                "PL-2",
                "PL-2-cycle-exists",
                "read-committed",
                union(&[WW, WWP, WR, WRP]),
            ),
            spec(
                "PL-SI",
                "PL-SI-cycle-exists",
                "snapshot-isolation",
                extension(union(&[WW, WWP, WR, WRP]), union(&[RW, RWP])),
            ),
            spec(
                "PL-2.99",
                "PL-2.99-cycle-exists",
                "repeatable-read",
                union(&[WW, WWP, WR, WRP, RW]),
            ),
            spec(
                "PL-3",
                "PL-3-cycle-exists",
                "serializable",
                union(&[WW, WWP, WR, WRP, RW, RWP]),
            ),
            spec(
                "strong-session-PL-1",
                "strong-session-PL-1-cycle-exists",
                "strong-session-read-uncommitted",
                union(&[WW, WWP, PROCESS]),
            ),
            spec(
                "strong-session-PL-2",
                "strong-session-PL-2-cycle-exists",
                "strong-session-read-committed",
                union(&[WW, WWP, WR, WRP, PROCESS]),
            ),
            spec(
                "strong-session-snapshot-isolation",
                "strong-session-snapshot-isolation-cycle-exists",
                "strong-session-snapshot-isolation",
                extension(union(&[WW, WWP, WR, WRP, PROCESS]), union(&[RW, RWP])),
            ),
            spec(
                "strong-session-serializable",
                "strong-session-serializable-cycle-exists",
                "strong-session-serializable",
                union(&[WW, WWP, WR, WRP, RW, RWP, PROCESS]),
            ),
            spec(
                "strong-PL-1",
                "strong-PL-1-cycle-exists",
                "strong-read-uncommitted",
                union(&[WW, WWP, REALTIME]),
            ),
            spec(
                "strong-PL-2",
                "strong-PL-2-cycle-exists",
                "strong-read-committed",
                union(&[WW, WWP, WR, WRP, REALTIME]),
            ),
            spec(
                "strong-snapshot-isolation",
                "strong-snapshot-isolation-cycle-exists",
                "strong-snapshot-isolation",
                extension(union(&[WW, WWP, WR, WRP, REALTIME]), union(&[RW, RWP])),
            ),
            spec(
                "PL-SS",
                "PL-SS-cycle-exists",
                "strong-serializable",
                union(&[WW, WWP, WR, WRP, RW, RWP, REALTIME]),
            ),
        ]
    })
}
