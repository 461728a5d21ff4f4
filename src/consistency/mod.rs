//! Elle's consistency-model lattice (`elle.consistency-model`), plus the
//! model-related parts of `elle.txn` (cycle-exists specs, prohibited and
//! reportable anomaly types, cycle search order).
//!
//! Names are plain `&str`s without the leading colon of the Clojure keyword
//! (`"G-single-item-realtime"`, `"strict-serializable"`). Sets are
//! [`BTreeSet`]s, whose byte order equals Clojure's keyword order for the
//! ASCII names Elle uses (`-` before digits, uppercase before lowercase).
//!
//! Functions which, in Elle, call `validate-models` return
//! `Result<_, String>`; the error is Elle's message
//! (`Unknown consistency model (:x); known models are:\n#{...}`).

mod cycle_exists;
mod data;
#[cfg(test)]
mod tests;

pub use cycle_exists::{
    cycle_exists_specs, rel_names, CycleExistsSpec, FriendlySubgraph, Subgraph, PROCESS, REALTIME,
    REL_NAMES, RW, RWP, WR, WRP, WW, WWP,
};

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::OnceLock;

/// The consistency models Elle checks when none are given
/// (`[:strict-serializable]`).
pub const DEFAULT_CONSISTENCY_MODELS: &[&str] = &["strict-serializable"];

/// Elle's `unknown-anomaly-types`: anomalies which make a result
/// `:valid? :unknown` instead of `false`. Always reportable.
pub const UNKNOWN_ANOMALY_TYPES: &[&str] = data::UNKNOWN_ANOMALY_TYPES;

/// A directed graph over static names with both adjacency directions.
#[derive(Default)]
struct Graph {
    out: BTreeMap<&'static str, BTreeSet<&'static str>>,
    inn: BTreeMap<&'static str, BTreeSet<&'static str>>,
}

/// Direction of a graph traversal.
#[derive(Clone, Copy)]
enum Dir {
    Out,
    In,
}

impl Graph {
    fn link(&mut self, a: &'static str, b: &'static str) {
        self.out.entry(a).or_default().insert(b);
        self.inn.entry(b).or_default().insert(a);
        self.out.entry(b).or_default();
        self.inn.entry(a).or_default();
    }

    fn from_map(
        m: &[(&'static str, &'static [&'static str])],
        f: impl Fn(&'static str) -> &'static str,
    ) -> Self {
        let mut g = Graph::default();
        for (a, bs) in m {
            for b in *bs {
                g.link(f(a), f(b));
            }
        }
        g
    }

    fn vertices(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.out.keys().copied()
    }

    fn neighbors(&self, v: &str, dir: Dir) -> Option<&BTreeSet<&'static str>> {
        match dir {
            Dir::Out => self.out.get(v),
            Dir::In => self.inn.get(v),
        }
    }

    /// Elle's `g/bfs`: every vertex reachable from `starts` (including the
    /// starts themselves, even those not in the graph).
    fn bfs<'a>(&self, starts: impl IntoIterator<Item = &'a str>, dir: Dir) -> BTreeSet<&'a str> {
        let mut seen: BTreeSet<&'a str> = BTreeSet::new();
        let mut stack: Vec<&'a str> = Vec::new();
        for s in starts {
            if seen.insert(s) {
                stack.push(s);
            }
        }
        while let Some(v) = stack.pop() {
            if let Some(ns) = self.neighbors(v, dir) {
                for &n in ns {
                    if seen.insert(n) {
                        stack.push(n);
                    }
                }
            }
        }
        seen
    }
}

/// All derived lattice structures, built once.
struct Lattice {
    implied: Graph,
    models: Graph,
    proscribed: Graph,
    depths: BTreeMap<&'static str, usize>,
    all_anomalies: Vec<&'static str>,
    all_models: BTreeSet<&'static str>,
    cycle_types: BTreeSet<&'static str>,
}

fn lattice() -> &'static Lattice {
    static L: OnceLock<Lattice> = OnceLock::new();
    L.get_or_init(build_lattice)
}

/// Canonical model name for a static name (result is static).
fn canon_static(m: &'static str) -> &'static str {
    data::CANONICAL_MODEL_NAMES
        .iter()
        .find(|(f, _)| *f == m)
        .map_or(m, |(_, c)| c)
}

fn build_lattice() -> Lattice {
    let implied = Graph::from_map(data::IMPLIED_ANOMALIES, |s| s);
    let models = Graph::from_map(data::MODELS, canon_static);
    let proscribed = {
        let mut g = Graph::default();
        for (m, anoms) in data::DIRECT_PROSCRIBED_ANOMALIES {
            for a in *anoms {
                g.link(canon_static(m), a);
            }
        }
        g
    };

    // Topological depths of implied-anomalies merged with the severity graph:
    // depth 0 for sources, otherwise 1 + the max depth of any predecessor
    // (Elle's `g/topo-depths` peels off sources layer by layer).
    let mut merged = Graph::default();
    for (a, bs) in data::IMPLIED_ANOMALIES.iter().chain(data::ANOMALY_SEVERITY) {
        for b in *bs {
            merged.link(a, b);
        }
    }
    let mut depths: BTreeMap<&'static str, usize> = BTreeMap::new();
    fn depth(g: &Graph, v: &'static str, memo: &mut BTreeMap<&'static str, usize>) -> usize {
        if let Some(d) = memo.get(v) {
            return *d;
        }
        let preds: Vec<&'static str> = g.inn[v].iter().copied().collect();
        let d = preds
            .into_iter()
            .map(|p| depth(g, p, memo) + 1)
            .max()
            .unwrap_or(0);
        memo.insert(v, d);
        d
    }
    let verts: Vec<&'static str> = merged.vertices().collect();
    for v in verts {
        depth(&merged, v, &mut depths);
    }
    // Merged (with max) with depth 0 for every directly-proscribed anomaly.
    for (_, anoms) in data::DIRECT_PROSCRIBED_ANOMALIES {
        for a in *anoms {
            depths.entry(a).or_insert(0);
        }
    }
    let mut all_anomalies: Vec<&'static str> = depths.keys().copied().collect();
    all_anomalies.sort_by(|a, b| depth_compare(&depths, a, b));

    let mut all_models: BTreeSet<&'static str> = models.vertices().collect();
    for (f, c) in data::CANONICAL_MODEL_NAMES {
        all_models.insert(f);
        all_models.insert(c);
    }

    let mut cycle_types = BTreeSet::new();
    for base in data::BASE_CYCLE_TYPES {
        for suffix in ["", "-process", "-realtime"] {
            let name = format!("{base}{suffix}");
            let s = depths
                .keys()
                .copied()
                .find(|k| *k == name)
                .expect("cycle type is a known anomaly");
            cycle_types.insert(s);
        }
    }

    Lattice {
        implied,
        models,
        proscribed,
        depths,
        all_anomalies,
        all_models,
        cycle_types,
    }
}

fn depth_compare(depths: &BTreeMap<&'static str, usize>, a: &str, b: &str) -> Ordering {
    // Clojure's `compare` puts nil before any number; Option does the same.
    depths.get(a).cmp(&depths.get(b)).then_with(|| a.cmp(b))
}

/// Strips one leading `:` (keyword syntax), if present.
fn strip_colon(s: &str) -> &str {
    s.strip_prefix(':').unwrap_or(s)
}

/// Formats names as a Clojure sequence/set body: `:a :b :c`.
fn keywords<'a>(xs: impl IntoIterator<Item = &'a str>) -> String {
    xs.into_iter()
        .map(|x| format!(":{x}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Elle's `validate-models`: Ok if every model is known, else Elle's error
/// message listing the unknown ones and all known models.
fn validate_models(ms: &[&str]) -> Result<(), String> {
    let all = &lattice().all_models;
    let unknown: Vec<&str> = ms.iter().copied().filter(|m| !all.contains(m)).collect();
    if unknown.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "Unknown consistency model ({}); known models are:\n#{{{}}}",
            keywords(unknown),
            keywords(all.iter().copied())
        ))
    }
}

// ---------------------------------------------------------------------------
// Names

/// Every consistency model name Elle knows (Elle's `all-models`): the
/// vertices of the model lattice plus every friendly and canonical name.
pub fn all_models() -> &'static BTreeSet<&'static str> {
    &lattice().all_models
}

/// Every anomaly name Elle's lattice knows (Elle's `all-anomalies`), in
/// Elle's order: by [`anomaly_depth_compare`], i.e. depth first, then name.
///
/// This does not include [`UNKNOWN_ANOMALY_TYPES`], which Elle keeps
/// outside the lattice.
pub fn all_anomaly_names() -> &'static [&'static str] {
    &lattice().all_anomalies
}

/// The 24 cycle anomaly types (Elle's `cycle-types`): `G0`, `G1c`,
/// `G-single-item`, `G-single`, `G-nonadjacent-item`, `G-nonadjacent`,
/// `G2-item`, `G2`, each plain, `-process` and `-realtime`.
pub fn cycle_types() -> &'static BTreeSet<&'static str> {
    &lattice().cycle_types
}

/// Cycle types involving process edges (Elle's `process-anomaly-types`:
/// names containing `-process`).
pub fn process_anomaly_types() -> BTreeSet<&'static str> {
    cycle_types()
        .iter()
        .copied()
        .filter(|t| t.contains("-process"))
        .collect()
}

/// Cycle types involving realtime edges (Elle's `realtime-anomaly-types`:
/// names containing `-realtime`).
pub fn realtime_anomaly_types() -> BTreeSet<&'static str> {
    cycle_types()
        .iter()
        .copied()
        .filter(|t| t.contains("-realtime"))
        .collect()
}

/// Elle's `canonical-model-name`: maps friendly names and aliases to the
/// canonical name (`serializable` and `conflict-serializable` → `PL-3`);
/// other names are returned unchanged.
pub fn canonical_model_name(model: &str) -> &str {
    data::CANONICAL_MODEL_NAMES
        .iter()
        .find(|(f, _)| *f == model)
        .map_or(model, |(_, c)| c)
}

/// Elle's `friendly-model-name`: maps canonical names to friendly ones
/// (`PL-3` → `serializable`, `PL-SS` → `strong-serializable`); other names
/// are returned unchanged.
pub fn friendly_model_name(model: &str) -> &str {
    data::FRIENDLY_MODEL_NAMES
        .iter()
        .find(|(c, _)| *c == model)
        .map_or(model, |(_, f)| f)
}

/// The model lattice's edges (Elle's `models`, after canonicalising both
/// ends): `(a, b)` means a history satisfying `a` also satisfies `b`.
pub fn model_edges() -> Vec<(&'static str, &'static str)> {
    let g = &lattice().models;
    g.out
        .iter()
        .flat_map(|(a, bs)| bs.iter().map(move |b| (*a, *b)))
        .collect()
}

/// The anomaly implication edges (Elle's `implied-anomalies`): `(a, b)`
/// means the presence of `a` implies the presence of `b`.
pub fn implied_anomaly_edges() -> Vec<(&'static str, &'static str)> {
    let g = &lattice().implied;
    g.out
        .iter()
        .flat_map(|(a, bs)| bs.iter().map(move |b| (*a, *b)))
        .collect()
}

// ---------------------------------------------------------------------------
// Validation

/// Validates user-supplied names (with or without a leading `:`) against
/// `valid`, returning them in input order; unknown names give Elle-style
/// error text naming them and listing every valid name, sorted.
fn parse_names(
    names: &[&str],
    valid: &BTreeSet<&'static str>,
    what: &str,
    whats: &str,
) -> Result<Vec<&'static str>, String> {
    let mut out = Vec::with_capacity(names.len());
    let mut unknown = Vec::new();
    for n in names {
        let n = strip_colon(n);
        match valid.get(n) {
            Some(s) => out.push(*s),
            None => unknown.push(n),
        }
    }
    if unknown.is_empty() {
        Ok(out)
    } else {
        Err(format!(
            "Unknown {what} ({}); known {whats} are:\n#{{{}}}",
            keywords(unknown),
            keywords(valid.iter().copied())
        ))
    }
}

/// Validates user-supplied consistency model names (with or without a
/// leading `:`), returning them (not canonicalised) in input order. Unknown
/// names give an error listing them and every known model, sorted.
pub fn parse_models(names: &[&str]) -> Result<Vec<&'static str>, String> {
    parse_names(names, &lattice().all_models, "consistency model", "models")
}

/// Validates user-supplied anomaly names (with or without a leading `:`),
/// returning them in input order. Valid names are [`all_anomaly_names`] plus
/// [`UNKNOWN_ANOMALY_TYPES`]. (Elle itself does not validate `:anomalies`;
/// this is stricter.) Unknown names give an error listing them and every
/// valid name, sorted.
pub fn parse_anomalies(names: &[&str]) -> Result<Vec<&'static str>, String> {
    let valid: BTreeSet<&'static str> = all_anomaly_names()
        .iter()
        .chain(UNKNOWN_ANOMALY_TYPES)
        .copied()
        .collect();
    parse_names(names, &valid, "anomaly type", "anomaly types")
}

// ---------------------------------------------------------------------------
// Anomaly closures and ordering

/// Elle's `all-implied-anomalies`: the given anomalies plus every anomaly
/// they imply, transitively. Inputs are always included, even names the
/// lattice doesn't know. Empty input gives an empty set.
pub fn all_implied_anomalies<'a>(anomalies: &[&'a str]) -> BTreeSet<&'a str> {
    lattice().implied.bfs(anomalies.iter().copied(), Dir::Out)
}

/// Elle's `all-anomalies-implying`: the given anomalies plus every anomaly
/// which (transitively) implies any of them. Inputs are always included.
pub fn all_anomalies_implying<'a>(anomalies: &[&'a str]) -> BTreeSet<&'a str> {
    lattice().implied.bfs(anomalies.iter().copied(), Dir::In)
}

/// Elle's depth of an anomaly: its topological depth in `implied-anomalies`
/// merged with `anomaly-severity-graph` (sources are 0), or 0 for anomalies
/// only mentioned as directly proscribed by some model. `None` for names
/// Elle doesn't know.
pub fn anomaly_depth(anomaly: &str) -> Option<usize> {
    lattice().depths.get(anomaly).copied()
}

/// Elle's `anomaly-depth-compare`: compares by [`anomaly_depth`] (shallower
/// first; unknown names, whose depth is `nil` in Elle, sort before all known
/// ones), and breaks ties with Clojure's `compare` on the keywords, i.e.
/// byte order of the names (equal names compare equal).
pub fn anomaly_depth_compare(a: &str, b: &str) -> Ordering {
    depth_compare(&lattice().depths, a, b)
}

/// The iteration order of Elle's `cycle-anomaly-specs` (a `sorted-map-by
/// anomaly-depth-compare`): the order in which Elle searches each SCC for
/// cycle anomalies.
///
/// The 24 [`cycle_types`] are sorted by [`anomaly_depth`]; Elle's comparator
/// breaks ties with plain Clojure `compare` on the keywords, i.e. byte order
/// of the names (so `G-single-item` precedes `G0`, as `-` < `0`). The result,
/// with depths, is:
///
/// ```text
/// 0  G-single-item, G0
/// 1  G-nonadjacent-item, G-single-item-process, G1c
/// 2  G-nonadjacent-item-process, G-single, G-single-item-realtime, G2-item
/// 3  G-nonadjacent, G-nonadjacent-item-realtime
/// 4  G2
/// 5  G0-process
/// 6  G1c-process
/// 7  G-single-process, G2-item-process
/// 8  G-nonadjacent-process
/// 9  G2-process
/// 10 G0-realtime
/// 11 G1c-realtime
/// 12 G-single-realtime, G2-item-realtime
/// 13 G-nonadjacent-realtime
/// 14 G2-realtime
/// ```
pub fn cycle_anomaly_search_order() -> Vec<&'static str> {
    let mut v: Vec<&'static str> = cycle_types().iter().copied().collect();
    v.sort_by(|a, b| anomaly_depth_compare(a, b));
    v
}

// ---------------------------------------------------------------------------
// Models

/// Elle's `all-implied-models`: the (canonicalised) models plus every model
/// they imply. Errors on unknown models.
pub fn all_implied_models(models: &[&str]) -> Result<BTreeSet<&'static str>, String> {
    validate_models(models)?;
    Ok(model_closure(models, Dir::Out))
}

/// Elle's `all-impossible-models`: given models known not to hold, the
/// (canonicalised) set of those plus every stronger model. Errors on unknown
/// models.
pub fn all_impossible_models(models: &[&str]) -> Result<BTreeSet<&'static str>, String> {
    validate_models(models)?;
    Ok(model_closure(models, Dir::In))
}

/// Closure over the model lattice of already-validated model names.
fn model_closure(models: &[&str], dir: Dir) -> BTreeSet<&'static str> {
    let all = &lattice().all_models;
    let starts: Vec<&'static str> = models
        .iter()
        .map(|m| *all.get(canonical_model_name(m)).expect("validated model"))
        .collect();
    lattice().models.bfs(starts, dir)
}

fn most_models<'a>(models: &[&'a str], dir: Dir) -> BTreeSet<&'a str> {
    let ms: Vec<&'a str> = models.iter().map(|m| canonical_model_name(m)).collect();
    let mut set: BTreeSet<&'a str> = ms.iter().copied().collect();
    for m in &ms {
        let mut without = set.clone();
        without.remove(m);
        let reach = lattice().models.bfs([*m], dir);
        if reach.iter().any(|r| without.contains(r)) {
            set = without;
        }
    }
    set
}

/// Elle's `weakest-models`: the canonicalised subset of `models` after
/// dropping every model which implies another model in the set
/// (`[strict-serializable serializable]` → `{PL-3}`). Unknown names are kept.
pub fn weakest_models<'a>(models: &[&'a str]) -> BTreeSet<&'a str> {
    most_models(models, Dir::Out)
}

/// Elle's `strongest-models`: the canonicalised subset of `models` after
/// dropping every model implied by another model in the set. Unknown names
/// are kept.
pub fn strongest_models<'a>(models: &[&'a str]) -> BTreeSet<&'a str> {
    most_models(models, Dir::In)
}

/// Elle's `anomalies-prohibited-by`: every anomaly which can't be present
/// if all of `models` hold, including `*-cycle-exists` types. Errors on
/// unknown models.
pub fn anomalies_prohibited_by(models: &[&str]) -> Result<BTreeSet<&'static str>, String> {
    let implied = all_implied_models(models)?;
    let l = lattice();
    let direct: Vec<&'static str> = implied
        .iter()
        .filter_map(|m| l.proscribed.neighbors(m, Dir::Out))
        .flat_map(|s| s.iter().copied())
        .collect();
    Ok(l.implied.bfs(direct, Dir::In))
}

/// Elle's `anomalies->impossible-models`: the canonical models which can't
/// hold given these anomalies are present (including stronger models).
/// Unknown anomaly names are ignored.
pub fn anomalies_to_impossible_models(anomalies: &[&str]) -> BTreeSet<&'static str> {
    let l = lattice();
    let direct: Vec<&'static str> = all_implied_anomalies(anomalies)
        .into_iter()
        .filter_map(|a| l.proscribed.neighbors(a, Dir::In))
        .flat_map(|s| s.iter().copied())
        .collect();
    l.models.bfs(direct, Dir::In)
}

/// Elle's `:not` / `:also-not`, with friendly model names.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Boundary {
    /// The weakest models ruled out by the anomalies (Elle's `:not`).
    pub not: BTreeSet<&'static str>,
    /// Every other (stronger) model ruled out (Elle's `:also-not`).
    pub also_not: BTreeSet<&'static str>,
}

/// Elle's `friendly-boundary`: `not` is the weakest set of models the
/// anomalies rule out, `also_not` the remaining ruled-out models; both use
/// friendly names.
pub fn friendly_boundary(anomalies: &[&str]) -> Boundary {
    let impossible: Vec<&'static str> = anomalies_to_impossible_models(anomalies)
        .into_iter()
        .collect();
    boundary_of(&impossible)
}

/// [`friendly_boundary`] of models already known to be ruled out (e.g. a
/// subset of what the anomalies alone would rule out).
pub fn boundary_of(impossible: &[&'static str]) -> Boundary {
    let is_not = weakest_models(impossible);
    Boundary {
        not: is_not.iter().map(|m| friendly_model_name(m)).collect(),
        also_not: impossible
            .iter()
            .filter(|m| !is_not.contains(*m))
            .map(|m| friendly_model_name(m))
            .collect(),
    }
}

// ---------------------------------------------------------------------------
// elle.txn helpers

/// Elle's `prohibited-anomaly-types`: anomalies which constitute a test
/// failure. `models` is `:consistency-models` (`None` means Elle's default,
/// [`DEFAULT_CONSISTENCY_MODELS`]); `extra_anomalies` is `:anomalies`, which
/// is expanded to every anomaly implying one of them.
pub fn prohibited_anomaly_types<'a>(
    models: Option<&[&str]>,
    extra_anomalies: &[&'a str],
) -> Result<BTreeSet<&'a str>, String> {
    let mut out = all_anomalies_implying(extra_anomalies);
    out.extend(anomalies_prohibited_by(
        models.unwrap_or(DEFAULT_CONSISTENCY_MODELS),
    )?);
    Ok(out)
}

/// Elle's `reportable-anomaly-types`: [`prohibited_anomaly_types`] plus
/// `empty-transaction-graph` and `cycle-search-timeout`.
pub fn reportable_anomaly_types<'a>(
    models: Option<&[&str]>,
    extra_anomalies: &[&'a str],
) -> Result<BTreeSet<&'a str>, String> {
    let mut out = prohibited_anomaly_types(models, extra_anomalies)?;
    out.extend(UNKNOWN_ANOMALY_TYPES.iter().copied());
    Ok(out)
}

/// Elle's `remove-redundant-cycle-exists`, returning what to drop: given the
/// anomaly types found, the `*-cycle-exists` types among them whose model is
/// already ruled out by the non-cycle-exists types alone (names matching
/// `-cycle-exists$` are excluded from that evidence).
pub fn remove_redundant_cycle_exists(types: &[&str]) -> BTreeSet<&'static str> {
    let others: Vec<&str> = types
        .iter()
        .copied()
        .filter(|t| !t.ends_with("-cycle-exists"))
        .collect();
    let impossible = anomalies_to_impossible_models(&others);
    cycle_exists_specs()
        .iter()
        .filter(|s| impossible.contains(s.model) && types.contains(&s.anomaly_type))
        .map(|s| s.anomaly_type)
        .collect()
}

/// Elle's `cycle-exists-cases->impossible-cycle-anomalies`: given the
/// `:not` models (friendly or canonical) of *every* cycle-exists case found
/// in an SCC, the cycle anomaly types which cannot exist there, so need not
/// be searched for. Errors on unknown models.
pub fn impossible_cycle_anomalies_given_cycle_exists(
    not_models: &[&str],
) -> Result<BTreeSet<&'static str>, String> {
    let impossible = all_impossible_models(not_models)?;
    let possible: Vec<&'static str> = cycle_exists_specs()
        .iter()
        .map(|s| s.model)
        .filter(|m| !impossible.contains(m))
        .collect();
    let prohibited = anomalies_prohibited_by(&possible)?;
    Ok(prohibited.intersection(cycle_types()).copied().collect())
}
