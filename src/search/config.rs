//! What a search explores and judges, in AIPerf's `adaptive_search` keys (`search_space`,
//! `objectives`, `sla_filters`, …) plus this project's grid lists and request SLOs.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

pub use crate::plan::{Op, SlaFilter};

/// The path of the profiling phase's concurrency, as AIPerf names the swept dimension.
pub const CONCURRENCY_PATH: &str = "phases.profiling.concurrency";
/// The path of the profiling phase's request rate.
pub const RATE_PATH: &str = "phases.profiling.rate";
/// The path of the synthetic prompts' input length.
pub const ISL_PATH: &str = "datasets.main.prompts.isl";
/// The path of the synthetic prompts' output length.
pub const OSL_PATH: &str = "datasets.main.prompts.osl";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SearchConfig {
    #[serde(default)]
    pub planner: PlannerKind,
    pub search_space: Vec<Dimension>,
    #[serde(default)]
    pub objectives: Vec<Objective>,
    #[serde(default)]
    pub sla_filters: Vec<SlaFilter>,
    #[serde(default = "default_max_iterations")]
    pub max_iterations: usize,
    #[serde(default = "default_initial_points")]
    pub n_initial_points: usize,
    #[serde(default)]
    pub random_seed: Option<u64>,
    #[serde(default)]
    pub recipe_name: Option<String>,
    /// Grid planner: the points to run, in order (each a map path → value); when empty, every
    /// combination of each dimension's `grid_steps` log-spaced values.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub grid_points: Vec<BTreeMap<String, f64>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grid_steps: Option<usize>,
    /// Per-request SLOs every iteration's run judges goodput by (max-goodput-under-slo).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub request_slos: BTreeMap<String, f64>,
    /// concurrency-ramp: report the first point whose metric exceeds the first point's by this much.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub degradation: Option<Degradation>,
    /// AIPerf's multi-tier SLOs (`--search-sla-tier`): a boundary per tier, found together.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sla_tiers: Vec<SlaTier>,
    /// How an iteration of several trials gives a percentile objective (AIPerf's
    /// `--search-percentile-pooling`).
    #[serde(default, skip_serializing_if = "ObjectivePooling::is_mean")]
    pub objective_pooling: ObjectivePooling,
}

/// How an iteration of several trials gives a percentile objective.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ObjectivePooling {
    /// The mean of each trial's percentile.
    #[default]
    Mean,
    /// The percentile of every trial's requests together.
    Pooled,
}

impl ObjectivePooling {
    pub fn is_mean(&self) -> bool {
        *self == ObjectivePooling::Mean
    }
}

/// One tier of a multi-tier search: a label and the SLAs that define it (besides `sla_filters`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SlaTier {
    pub label: String,
    pub filters: Vec<SlaFilter>,
}

/// AIPerf's bounds on the tiers of a multi-tier search.
pub const SLA_TIERS: std::ops::RangeInclusive<usize> = 2..=10;

impl SlaTier {
    /// Read AIPerf's `--search-sla-tier` form `LABEL:FILTER[,FILTER...]` or `FILTER[,FILTER...]`
    /// (then labelled `tier_<number>`, `number` counting from 1).
    pub fn parse(text: &str, number: usize) -> Result<Self, String> {
        let (label, filters) = match text.split_once(':') {
            Some((label, rest)) if text.split(',').next().is_some_and(|first| first.split(':').count() == 5) => {
                (label.trim().to_string(), rest)
            }
            _ => (format!("tier_{number}"), text),
        };
        let filters = filters.split(',').map(SlaFilter::parse).collect::<Result<Vec<_>, _>>()?;
        Ok(SlaTier { label, filters })
    }
}

/// The percentile (0 to 100) a stat name (`p95`) stands for; None for any other stat.
pub fn percentile_of(stat: &str) -> Option<f64> {
    let pct: f64 = stat.strip_prefix('p')?.parse().ok()?;
    (pct > 0.0 && pct < 100.0).then_some(pct)
}

fn default_max_iterations() -> usize {
    30
}

fn default_initial_points() -> usize {
    5
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PlannerKind {
    /// Every point of a list or grid, in order.
    Grid,
    /// Doubling until the SLA breaks, then bisection.
    #[serde(alias = "monotonic", alias = "monotonic-sla")]
    MonotonicSla,
    /// Monotone regression of the SLA margin over the measured points, probing its root.
    #[serde(alias = "smooth-isotonic")]
    SmoothIsotonic,
    /// Gaussian-process Bayesian optimisation with constrained expected improvement.
    #[default]
    #[serde(alias = "bo")]
    Bayesian,
    /// AIPerf's Optuna planner: here the same Gaussian-process optimisation as `bayesian`.
    Optuna,
}

impl PlannerKind {
    pub fn name(self) -> &'static str {
        match self {
            PlannerKind::Grid => "grid",
            PlannerKind::MonotonicSla => "monotonic_sla",
            PlannerKind::SmoothIsotonic => "smooth_isotonic",
            PlannerKind::Bayesian => "bayesian",
            PlannerKind::Optuna => "optuna",
        }
    }

    /// The prefix of its 1-D stop reasons, as AIPerf spells them.
    pub fn reason_prefix(self) -> &'static str {
        match self {
            PlannerKind::MonotonicSla => "monotonic",
            PlannerKind::SmoothIsotonic => "smooth_isotonic",
            _ => "search",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Dimension {
    pub path: String,
    pub lo: f64,
    pub hi: f64,
    #[serde(default)]
    pub kind: DimensionKind,
    #[serde(default)]
    pub prior: Prior,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DimensionKind {
    Int,
    #[default]
    #[serde(alias = "float")]
    Real,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum Prior {
    #[default]
    #[serde(rename = "uniform")]
    Uniform,
    #[serde(rename = "log-uniform", alias = "log_uniform", alias = "log")]
    LogUniform,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Objective {
    pub metric: String,
    #[serde(default = "default_stat")]
    pub stat: String,
    pub direction: Direction,
    #[serde(default)]
    pub threshold: Option<f64>,
}

fn default_stat() -> String {
    "avg".into()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    #[serde(alias = "MAXIMIZE", alias = "max")]
    Maximize,
    #[serde(alias = "MINIMIZE", alias = "min")]
    Minimize,
}

impl Direction {
    /// `a` is better than `b` in this direction.
    pub fn better(self, a: f64, b: f64) -> bool {
        match self {
            Direction::Maximize => a > b,
            Direction::Minimize => a < b,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Degradation {
    pub metric_tag: String,
    pub stat: String,
    pub threshold: f64,
}

impl Dimension {
    /// `value` inside [lo, hi], an integer for an `int` dimension.
    pub fn clamp(&self, value: f64) -> f64 {
        let clamped = value.clamp(self.lo, self.hi);
        match self.kind {
            DimensionKind::Int => clamped.round(),
            DimensionKind::Real => clamped,
        }
    }

    /// A point in [0, 1] mapped onto the dimension (log-spaced under a log-uniform prior).
    pub fn from_unit(&self, unit: f64) -> f64 {
        let unit = unit.clamp(0.0, 1.0);
        let value = match self.prior {
            Prior::LogUniform => (self.lo.ln() + unit * (self.hi.ln() - self.lo.ln())).exp(),
            Prior::Uniform => self.lo + unit * (self.hi - self.lo),
        };
        self.clamp(value)
    }

    /// Where `value` lies in [0, 1] (on a log scale under a log-uniform prior).
    pub fn to_unit(&self, value: f64) -> f64 {
        let span = match self.prior {
            Prior::LogUniform => (self.hi.ln() - self.lo.ln(), value.ln() - self.lo.ln()),
            Prior::Uniform => (self.hi - self.lo, value - self.lo),
        };
        if span.0 > 0.0 { (span.1 / span.0).clamp(0.0, 1.0) } else { 0.0 }
    }

    /// The value as JSON: an integer for an `int` dimension.
    pub fn json(&self, value: f64) -> Value {
        match self.kind {
            DimensionKind::Int => Value::from(value.round() as i64),
            DimensionKind::Real => Value::from(value),
        }
    }
}

impl SearchConfig {
    /// A configuration the planners can run, or what is wrong with it.
    pub fn validate(&self) -> Result<(), String> {
        if self.search_space.is_empty() && self.grid_points.is_empty() {
            return Err(
                "search_space is empty: name at least one dimension, e.g. phases.profiling.concurrency:1,64:int".into(),
            );
        }
        for dim in &self.search_space {
            if !(dim.lo.is_finite() && dim.hi.is_finite() && dim.lo <= dim.hi) {
                return Err(format!("search_space `{}`: lo ({}) must not be above hi ({})", dim.path, dim.lo, dim.hi));
            }
            if dim.prior == Prior::LogUniform && dim.lo <= 0.0 {
                return Err(format!(
                    "search_space `{}`: a log-uniform dimension needs lo > 0, got {}",
                    dim.path, dim.lo
                ));
            }
        }
        if self.max_iterations == 0 {
            return Err("max_iterations must be at least 1".into());
        }
        if let Some(objective) = self.objectives.iter().find(|objective| percentile_of(&objective.stat).is_none())
            && self.objective_pooling == ObjectivePooling::Pooled
        {
            return Err(format!(
                "objective_pooling pooled (--search-percentile-pooling) pools a percentile, but the objective `{}` takes \
                 its `{}`: give a percentile stat (p50, p90, p95, p99, --search-stat) or drop the pooling",
                objective.metric, objective.stat
            ));
        }
        if !self.sla_tiers.is_empty() {
            if !SLA_TIERS.contains(&self.sla_tiers.len()) {
                return Err(format!("sla_tiers (--search-sla-tier): give 2 to 10 tiers, got {}", self.sla_tiers.len()));
            }
            if self.search_space.len() != 1 || self.search_space[0].kind != DimensionKind::Int {
                return Err("sla_tiers (--search-sla-tier): a multi-tier search sweeps one integer dimension (e.g. concurrency)".into());
            }
            return Ok(());
        }
        match self.planner {
            PlannerKind::MonotonicSla | PlannerKind::SmoothIsotonic => {
                let name = self.planner.name();
                if self.search_space.len() != 1 || self.search_space[0].kind != DimensionKind::Int {
                    return Err(format!(
                        "the {name} planner searches one integer dimension (e.g. concurrency); for several use the bayesian planner"
                    ));
                }
                if self.sla_filters.is_empty() {
                    return Err(format!(
                        "the {name} planner needs at least one SLA (sla_filters, --search-sla or --ttft-sla-ms …)"
                    ));
                }
            }
            PlannerKind::Bayesian | PlannerKind::Optuna => {
                if self.objectives.is_empty() {
                    return Err(
                        "the bayesian planner needs an objective (--search-metric and --search-direction)".into()
                    );
                }
                if self.n_initial_points == 0 || self.n_initial_points >= self.max_iterations {
                    return Err(format!(
                        "n_initial_points ({}) must be at least 1 and below max_iterations ({})",
                        self.n_initial_points, self.max_iterations
                    ));
                }
            }
            PlannerKind::Grid => {}
        }
        Ok(())
    }

    /// Whether the objectives are each trial's percentiles pooled.
    pub fn pools_objectives(&self) -> bool {
        self.objective_pooling == ObjectivePooling::Pooled
    }

    /// A point's values by dimension path.
    pub fn values_of(&self, point: &[f64]) -> Map<String, Value> {
        self.search_space.iter().zip(point).map(|(dim, value)| (dim.path.clone(), dim.json(*value))).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_aiperfs_keys_and_refuses_unknown_ones() {
        let config: SearchConfig = serde_json::from_value(serde_json::json!({
            "planner": "smooth_isotonic",
            "search_space": [{"path": CONCURRENCY_PATH, "lo": 1, "hi": 64, "kind": "int"}],
            "sla_filters": [{"metric_tag": "time_to_first_token", "stat": "p95", "op": "lt", "threshold": 200.0}],
        }))
        .unwrap();
        assert_eq!(config.max_iterations, 30);
        assert!(config.validate().is_ok());
        let unknown = serde_json::from_value::<SearchConfig>(serde_json::json!({"search_space": [], "typo": 1}));
        assert!(unknown.unwrap_err().to_string().contains("typo"));
    }

    #[test]
    fn an_sla_reads_aiperfs_flag_form_and_measures_its_margin() {
        let sla = SlaFilter::parse("time_to_first_token:p95:lt:200").unwrap();
        assert!(sla.passes(199.0) && !sla.passes(200.0));
        assert!((sla.margin(250.0) - 0.25).abs() < 1e-12);
        let attainment = SlaFilter::parse("good_request_fraction:avg:ge:0.9").unwrap();
        assert!(attainment.margin(0.99) < 0.0 && attainment.margin(0.5) > 0.0);
        assert!(SlaFilter::parse("ttft:p95:below:200").unwrap_err().contains("lt, le, gt or ge"));
    }

    #[test]
    fn a_log_uniform_dimension_spreads_points_by_decade() {
        let dim =
            Dimension { path: "c".into(), lo: 1.0, hi: 1000.0, kind: DimensionKind::Int, prior: Prior::LogUniform };
        assert_eq!(dim.from_unit(0.5), 32.0);
        assert!((dim.to_unit(10.0) - 1.0 / 3.0).abs() < 1e-9);
    }
}
