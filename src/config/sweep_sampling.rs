//! AIPerf's sampled sweeps, `sweep: {type: sobol | latin_hypercube, samples, seed, dimensions}`:
//! `samples` points of SciPy's design (`crate::sampling`, the same points from the same seed),
//! each coordinate mapped onto its dimension (a range, linear or log, rounded for `kind: int`,
//! or a list of `choices`), labelled `sobol_0000`… (or `path=value, …` with `label_format: kv`).
//! A scenario's `sweeps::sobol(#{..})` / `sweeps::latin_hypercube(#{..})` read the same block.

use std::sync::OnceLock;

use serde_json::{Map, Value};

use super::ConfigError;
use crate::plan::run_coordinates::{ReportedVariation, aiperf_label_of};
use crate::sampling::{MAX_SOBOL_DIMENSIONS, latin_hypercube_points, sobol_points};

/// The sampled sweep kinds.
pub const SAMPLED_SWEEPS: [&str; 2] = ["sobol", "latin_hypercube"];

/// AIPerf's bounds on `samples`.
const MIN_SAMPLES: u64 = 2;
const MAX_SAMPLES: u64 = 1 << 20;
/// The most points `random-cd` improves: its discrepancy takes every pair of points, and each
/// of its up to 10,000 tries every point (past this, minutes to hours, as in SciPy).
const MAX_RANDOM_CD_SAMPLES: u64 = 10_000;

/// Where the sampled block comes from: a config's `sweep:` (AIPerf's dotted paths, a bare
/// phase setting read as the profiling phase's) or a scenario's `sweeps::sobol(#{..})` (each
/// `path` the name of a value in the points' maps).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Face {
    Config,
    Script,
}

impl Face {
    /// How an error names `key` of the block of `kind`.
    fn key(self, kind: &str, key: &str) -> String {
        match self {
            Face::Config => format!("sweep.{key}"),
            Face::Script => format!("sweeps::{kind}: {key}"),
        }
    }
}

/// One axis of the design.
#[derive(Debug, Clone, PartialEq)]
struct Dimension {
    path: String,
    domain: Domain,
}

#[derive(Debug, Clone, PartialEq)]
enum Domain {
    Range { lo: f64, hi: f64, log: bool, whole: bool },
    Choices(Vec<Value>),
}

/// A sampled sweep as read from its block.
#[derive(Debug, Clone, PartialEq)]
struct Design {
    kind: String,
    samples: usize,
    seed: Option<u64>,
    dimensions: Vec<Dimension>,
    labels_by_value: bool,
    scramble: bool,
    lower_discrepancy: bool,
}

/// A point's values (dotted path → value) and its report.
pub type SampledPoint = (Map<String, Value>, ReportedVariation);

/// Each point of the sampled `sweep`: its values (dotted path → value, in the dimensions'
/// order) and its report (label, folder).
pub fn sampled_points(sweep: &Value) -> Result<Vec<SampledPoint>, ConfigError> {
    let design = design(sweep, kind_of(sweep), Face::Config)?;
    Ok(design
        .values()
        .into_iter()
        .enumerate()
        .map(|(index, values)| {
            let label =
                if design.labels_by_value { aiperf_label_of(&values) } else { format!("{}_{index:04}", design.kind) };
            (values.clone(), ReportedVariation::of_named(label, values, index))
        })
        .collect())
}

/// Each point of a scenario's sampled design (`kind` sobol or latin_hypercube; `options` as a
/// config's sweep block, without `type`): its values by dimension name.
pub fn sampled_values(kind: &str, options: &Value) -> Result<Vec<Map<String, Value>>, ConfigError> {
    Ok(design(options, kind, Face::Script)?.values())
}

/// A config sweep block's kind.
fn kind_of(sweep: &Value) -> &str {
    sweep.get("type").and_then(Value::as_str).unwrap_or_default()
}

/// What AIPerf warns of in a sampled sweep, and the seed drawn for one without a `seed`.
pub fn sampling_notes(sweep: &Value) -> Vec<String> {
    let kind = kind_of(sweep);
    let Some(design) = SAMPLED_SWEEPS.contains(&kind).then(|| design(sweep, kind, Face::Config).ok()).flatten() else {
        return Vec::new();
    };
    let mut notes = Vec::new();
    if design.seed.is_none() {
        notes.push(format!(
            "note: sweep.seed is not set: the {} points were drawn with seed {}, a new one each run, as AIPerf draws them (set `seed: {}` to draw these again)",
            design.kind,
            unseeded_seed(),
            unseeded_seed()
        ));
    }
    if design.kind == "sobol" && !design.samples.is_power_of_two() {
        notes.push(format!(
            "note: a Sobol' design is balanced at powers of 2 (8, 16, 32, …); samples is {} (consider {})",
            design.samples,
            design.samples.next_power_of_two()
        ));
    }
    if design.kind == "sobol" && !design.scramble {
        notes.push("note: sweep.scramble is false: the raw Sobol' sequence starts at the lower corner (every dimension at its `lo`)".into());
    }
    for dimension in design.dimensions.iter().filter(|dimension| dimension.too_narrow()) {
        notes.push(format!(
            "note: sweep dimension `{}`: its integer range is too narrow for the samples to differ much; many will be duplicates",
            dimension.path
        ));
    }
    notes
}

/// The seed of this process's sampled sweeps that give none (drawn once, so a listing and
/// the run made from it agree).
fn unseeded_seed() -> u64 {
    static SEED: OnceLock<u64> = OnceLock::new();
    *SEED.get_or_init(|| {
        // Within 2^32, so the note's seed is short enough to copy.
        (crate::start_at::now_ns() ^ (u64::from(std::process::id()) << 20)) & u64::from(u32::MAX)
    })
}

impl Design {
    /// The design's points, each mapped onto the dimensions (its seed, else this process's).
    fn values(&self) -> Vec<Map<String, Value>> {
        let seed = self.seed.unwrap_or_else(unseeded_seed);
        let unit_points = if self.kind == "sobol" {
            sobol_points(self.dimensions.len(), self.samples, self.scramble, seed)
        } else {
            latin_hypercube_points(self.dimensions.len(), self.samples, seed, self.lower_discrepancy)
        };
        unit_points
            .into_iter()
            .map(|point| {
                self.dimensions
                    .iter()
                    .zip(point)
                    .map(|(dimension, unit)| (dimension.path.clone(), dimension.value_at(unit)))
                    .collect()
            })
            .collect()
    }
}

impl Dimension {
    /// An integer range with fewer than two values to draw from, as AIPerf judges it (log
    /// scale: fewer than one whole step of `ln`).
    fn too_narrow(&self) -> bool {
        match self.domain {
            Domain::Range { lo, hi, log: true, whole: true } => hi.ln().floor() - lo.ln().ceil() < 1.0,
            Domain::Range { lo, hi, log: false, whole: true } => hi - lo < 2.0,
            _ => false,
        }
    }

    /// The value at `unit` (in [0, 1)), as AIPerf maps it (`_map_dim`).
    fn value_at(&self, unit: f64) -> Value {
        match &self.domain {
            Domain::Choices(choices) => {
                let index = ((unit * choices.len() as f64).floor() as usize).min(choices.len() - 1);
                choices[index].clone()
            }
            &Domain::Range { lo, hi, log, whole } => {
                let value = if log { (lo.ln() + unit * (hi.ln() - lo.ln())).exp() } else { lo + unit * (hi - lo) };
                if whole {
                    let rounded = value.round_ties_even().clamp(lo.ceil(), hi.floor());
                    Value::from(rounded as i64)
                } else {
                    Value::from(value)
                }
            }
        }
    }
}

/// The design `sweep` (a block of `kind`) describes.
fn design(sweep: &Value, kind: &str, face: Face) -> Result<Design, ConfigError> {
    let error = |key: &str, problem: String| ConfigError::new(format!("{}: {problem}", face.key(kind, key)));
    let samples = sweep.get("samples").and_then(Value::as_u64).filter(|n| (MIN_SAMPLES..=MAX_SAMPLES).contains(n));
    let samples = samples.ok_or_else(|| {
        error("samples", format!("a {kind} sweep needs `samples`, from {MIN_SAMPLES} to {MAX_SAMPLES}"))
    })?;
    let seed = match sweep.get("seed") {
        None | Some(Value::Null) => None,
        Some(seed) => {
            Some(seed.as_u64().ok_or_else(|| error("seed", format!("expected a whole number ≥ 0, got {seed}")))?)
        }
    };
    let labels_by_value = match sweep.get("label_format").and_then(Value::as_str).unwrap_or("index") {
        "index" => false,
        "kv" => true,
        other => return Err(error("label_format", format!("expected index or kv, got `{other}`"))),
    };
    let lower_discrepancy = match sweep.get("optimization") {
        None | Some(Value::Null) => false,
        Some(Value::String(name)) if name == "random-cd" => true,
        Some(other) => {
            return Err(error(
                "optimization",
                format!(
                    "{other} is not drawn here (null, AIPerf's default when unsaid, and random-cd are; lloyd moves the points by Voronoi iterations whose result depends on SciPy's Qhull)"
                ),
            ));
        }
    };
    if lower_discrepancy && samples > MAX_RANDOM_CD_SAMPLES {
        return Err(error(
            "optimization",
            format!(
                "random-cd over {samples} samples would take hours (it weighs every pair of points); it is drawn here for at most {MAX_RANDOM_CD_SAMPLES}: leave `optimization` out for a plain Latin hypercube"
            ),
        ));
    }
    let Some(Value::Array(entries)) = sweep.get("dimensions") else {
        return Err(error("dimensions", "expected a list of dimensions ({path, lo, hi} or {path, choices})".into()));
    };
    if entries.is_empty() {
        return Err(error("dimensions", "expected at least one dimension".into()));
    }
    let dimensions = entries
        .iter()
        .enumerate()
        .map(|(index, entry)| dimension(entry, index, face, kind))
        .collect::<Result<Vec<_>, _>>()?;
    for (index, dimension) in dimensions.iter().enumerate() {
        if dimensions[..index].iter().any(|earlier| earlier.path == dimension.path) {
            return Err(error(
                "dimensions",
                format!("`{}` is given twice; each dimension needs a path of its own", dimension.path),
            ));
        }
    }
    if kind == "sobol" && dimensions.len() > MAX_SOBOL_DIMENSIONS {
        return Err(error(
            "dimensions",
            format!("a Sobol' design has at most {MAX_SOBOL_DIMENSIONS} dimensions here, got {}", dimensions.len()),
        ));
    }
    Ok(Design {
        scramble: sweep.get("scramble").and_then(Value::as_bool).unwrap_or(true),
        kind: kind.to_string(),
        samples: samples as usize,
        seed,
        dimensions,
        labels_by_value,
        lower_discrepancy,
    })
}

fn dimension(entry: &Value, index: usize, face: Face, kind: &str) -> Result<Dimension, ConfigError> {
    let at = face.key(kind, &format!("dimensions[{index}]"));
    let path = entry.get("path").and_then(Value::as_str).unwrap_or_default();
    let path = if face == Face::Config { super::path::aiperf_path(path) } else { path.to_string() };
    let error = |problem: String| ConfigError::new(format!("{at} ({path}): {problem}"));
    if face == Face::Script && path.is_empty() {
        return Err(error("expected a `path`: the name the value has in each point".into()));
    }
    if face == Face::Config && (path.is_empty() || path.starts_with('.') || path.ends_with('.') || path.contains(".."))
    {
        return Err(error("expected a dotted path such as phases.profiling.concurrency".into()));
    }
    let first = if face == Face::Config { path.split('.').next().unwrap_or_default() } else { "" };
    match first {
        "sweep" | "multi_run" | "random_seed" => {
            return Err(error("a dimension sets a benchmark setting, not the config's own keys".into()));
        }
        "benchmark" => return Err(error("drop the `benchmark.` prefix (paths are read inside `benchmark`)".into())),
        "variables" => {
            return Err(error(
                "`variables.*` dimensions are not supported (templates are rendered once, with the top-level `variables:`); sweep the benchmark setting itself".into(),
            ));
        }
        _ => {}
    }
    let number = |key: &str| entry.get(key).and_then(Value::as_f64);
    let domain = match (entry.get("choices").filter(|choices| !choices.is_null()), number("lo"), number("hi")) {
        (Some(Value::Array(choices)), None, None) => {
            if choices.is_empty() {
                return Err(error("`choices` needs at least one value".into()));
            }
            if choices.iter().any(|choice| choice.is_array() || choice.is_object()) {
                return Err(error("`choices` are plain values (numbers, strings, booleans)".into()));
            }
            Domain::Choices(choices.clone())
        }
        (None, Some(lo), Some(hi)) => {
            if !(lo.is_finite() && hi.is_finite()) || hi <= lo {
                return Err(error(format!("hi ({hi}) must be above lo ({lo})")));
            }
            let log = match entry.get("scale").and_then(Value::as_str).unwrap_or("linear") {
                "linear" => false,
                "log" if lo > 0.0 => true,
                "log" => return Err(error("a log scale needs lo > 0".into())),
                other => return Err(error(format!("scale is linear or log, got `{other}`"))),
            };
            let whole = match entry.get("kind").and_then(Value::as_str).unwrap_or("real") {
                "real" => false,
                "int" => true,
                other => return Err(error(format!("kind is int or real, got `{other}`"))),
            };
            Domain::Range { lo, hi, log, whole }
        }
        _ => return Err(error("give either `lo` and `hi`, or `choices`".into())),
    };
    Ok(Dimension { path, domain })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn values(points: &[SampledPoint], path: &str) -> Vec<Value> {
        points.iter().map(|(values, _)| values[path].clone()).collect()
    }

    // What AIPerf 0.13's `aiperf config expand` lists for the same sweeps (its venv, SciPy 1.17).
    #[test]
    fn a_seeded_sobol_sweep_gives_aiperfs_points_and_labels() {
        let sweep = json!({"type": "sobol", "samples": 8, "seed": 5, "label_format": "kv", "dimensions": [
            {"path": "phases.profiling.concurrency", "lo": 1, "hi": 64, "kind": "int"},
            {"path": "datasets.main.prompts.isl", "choices": [128, 512, 2048]},
        ]});
        let points = sampled_points(&sweep).unwrap();
        assert_eq!(values(&points, "phases.profiling.concurrency"), [41, 18, 16, 55, 58, 2, 31, 40].map(Value::from));
        assert_eq!(
            values(&points, "datasets.main.prompts.isl"),
            [128, 2048, 512, 512, 128, 2048, 128, 2048].map(Value::from)
        );
        assert_eq!(points[0].1.label, "phases.profiling.concurrency=41, datasets.main.prompts.isl=128");
        assert_eq!(points[0].1.folder, "concurrency_41__isl_128");
    }

    #[test]
    fn a_seeded_latin_hypercube_gives_aiperfs_points_with_and_without_random_cd() {
        let sweep = |optimization: Value| {
            json!({"type": "latin_hypercube", "samples": 6, "seed": 11, "optimization": optimization, "dimensions": [
                {"path": "concurrency", "lo": 1, "hi": 64, "kind": "int", "scale": "log"},
                {"path": "phases.profiling.requests", "lo": 10, "hi": 100, "kind": "int"},
            ]})
        };
        let plain = sampled_points(&sweep(Value::Null)).unwrap();
        assert_eq!(values(&plain, "phases.profiling.concurrency"), [4, 5, 2, 30, 8, 50].map(Value::from));
        assert_eq!(values(&plain, "phases.profiling.requests"), [18, 100, 71, 68, 46, 32].map(Value::from));
        assert_eq!(plain[0].1.label, "latin_hypercube_0000");
        assert_eq!(plain[0].1.folder, "concurrency_4__requests_18");
        let lowered = sampled_points(&sweep(json!("random-cd"))).unwrap();
        assert_eq!(values(&lowered, "phases.profiling.concurrency"), [4, 8, 50, 30, 5, 2].map(Value::from));
        assert_eq!(values(&lowered, "phases.profiling.requests"), [18, 100, 68, 32, 46, 71].map(Value::from));
    }

    #[test]
    fn real_dimensions_stay_in_their_range_and_integers_round_half_to_even() {
        let sweep = json!({"type": "sobol", "samples": 16, "seed": 1, "dimensions": [
            {"path": "phases.profiling.rate", "lo": 0.5, "hi": 4.0, "scale": "log"}]});
        let rates: Vec<f64> = values(&sampled_points(&sweep).unwrap(), "phases.profiling.rate")
            .iter()
            .map(|rate| rate.as_f64().unwrap())
            .collect();
        assert!(rates.iter().all(|rate| (0.5..4.0).contains(rate)), "{rates:?}");
        let half = Dimension { path: "x".into(), domain: Domain::Range { lo: 0.0, hi: 10.0, log: false, whole: true } };
        assert_eq!(half.value_at(0.25), Value::from(2));
        assert_eq!(half.value_at(0.75), Value::from(8));
    }

    #[test]
    fn bad_blocks_are_named() {
        let refused = |sweep: Value| sampled_points(&sweep).unwrap_err().message;
        let dims = json!([{"path": "concurrency", "lo": 1, "hi": 8}]);
        assert!(refused(json!({"type": "sobol", "dimensions": dims})).contains("sweep.samples"));
        let lloyd = json!({"type": "latin_hypercube", "samples": 4, "optimization": "lloyd", "dimensions": dims});
        assert!(refused(lloyd).contains("sweep.optimization"));
        let huge =
            json!({"type": "latin_hypercube", "samples": 20_000, "optimization": "random-cd", "dimensions": dims});
        assert!(refused(huge).contains("at most 10000"));
        let both =
            json!({"type": "sobol", "samples": 4, "dimensions": [{"path": "rate", "lo": 1, "hi": 2, "choices": [1]}]});
        assert!(refused(both).contains("either `lo` and `hi`, or `choices`"));
        let log =
            json!({"type": "sobol", "samples": 4, "dimensions": [{"path": "rate", "lo": 0, "hi": 2, "scale": "log"}]});
        assert!(refused(log).contains("log scale needs lo > 0"));
        let twice = json!({"type": "sobol", "samples": 4, "dimensions": [
            {"path": "concurrency", "lo": 1, "hi": 8}, {"path": "phases.profiling.concurrency", "lo": 1, "hi": 8}]});
        assert!(refused(twice).contains("given twice"));
        let prefixed = json!({"type": "sobol", "samples": 4, "dimensions": [{"path": "benchmark.phases.profiling.rate", "lo": 1, "hi": 2}]});
        assert!(refused(prefixed).contains("benchmark."));
    }

    #[test]
    fn notes_say_what_aiperf_warns_of_and_the_seed_drawn() {
        let sweep = json!({"type": "sobol", "samples": 6, "scramble": false, "dimensions": [
            {"path": "concurrency", "lo": 1, "hi": 2, "kind": "int"}]});
        let notes = sampling_notes(&sweep).join("\n");
        assert!(notes.contains(&format!("drawn with seed {}", unseeded_seed())), "{notes}");
        assert!(notes.contains("powers of 2") && notes.contains("consider 8"), "{notes}");
        assert!(notes.contains("lower corner") && notes.contains("too narrow"), "{notes}");
    }
}
