//! AIPerf's search recipes, each expanded into a search: `max-concurrency-under-sla` (styles
//! smooth_isotonic, monotonic, bo, optuna, grid), `max-throughput-ttft-sla`,
//! `max-throughput-itl-sla`, `max-goodput-under-slo`, `pareto-sweep`, `concurrency-ramp`,
//! `prefill-ttft-curve` and `decode-itl-curve`, with AIPerf's defaults.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::config::{
    CONCURRENCY_PATH, Degradation, Dimension, DimensionKind, Direction, ISL_PATH, OSL_PATH, Objective, Op, PlannerKind,
    Prior, SearchConfig, SlaFilter, SlaTier,
};
use super::grid::logspace_int;

pub const NAMES: &[&str] = &[
    "max-concurrency-under-sla",
    "max-throughput-ttft-sla",
    "max-throughput-itl-sla",
    "max-goodput-under-slo",
    "pareto-sweep",
    "concurrency-ramp",
    "prefill-ttft-curve",
    "decode-itl-curve",
];

/// The recipe flags (`--ttft-sla-ms` …) by their AIPerf names without the dashes.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecipeSettings {
    pub ttft_sla_ms: Option<f64>,
    pub itl_sla_ms: Option<f64>,
    pub tpot_sla_ms: Option<f64>,
    pub e2e_sla_ms: Option<f64>,
    pub error_rate_sla: Option<f64>,
    pub slo_attainment_fraction: Option<f64>,
    pub search_style: Option<String>,
    pub concurrency_min: Option<f64>,
    pub concurrency_max: Option<f64>,
    pub concurrency_steps: Option<usize>,
    pub isl_min: Option<f64>,
    pub isl_max: Option<f64>,
    pub isl_steps: Option<usize>,
    pub osl_min: Option<f64>,
    pub osl_max: Option<f64>,
    pub osl_steps: Option<usize>,
    /// pareto-sweep: `128/128,256/256`.
    pub isl_osl_pairs: Option<String>,
    pub degradation_threshold: Option<f64>,
    pub degradation_metric_tag: Option<String>,
    pub degradation_stat: Option<String>,
    /// `--search-sla` filters that compose after the recipe's own.
    #[serde(default)]
    pub search_sla: Vec<String>,
    /// `--search-sla-tier` texts: the recipe's search becomes a multi-tier one.
    #[serde(default)]
    pub sla_tiers: Vec<String>,
    pub max_iterations: Option<usize>,
    pub random_seed: Option<u64>,
}

fn sla(metric: &str, stat: &str, op: Op, threshold: f64) -> SlaFilter {
    SlaFilter { metric_tag: metric.into(), stat: stat.into(), op, threshold }
}

fn objective(metric: &str, stat: &str, direction: Direction) -> Objective {
    Objective { metric: metric.into(), stat: stat.into(), direction, threshold: None }
}

fn int_dim(path: &str, lo: f64, hi: f64, prior: Prior) -> Dimension {
    Dimension { path: path.into(), lo, hi, kind: DimensionKind::Int, prior }
}

fn positive(flag: &str, value: Option<f64>) -> Result<Option<f64>, String> {
    match value {
        Some(v) if !(v > 0.0 && v.is_finite()) => Err(format!("{flag} must be > 0, got {v}")),
        other => Ok(other),
    }
}

impl RecipeSettings {
    fn inter_token_ms(&self) -> Result<Option<f64>, String> {
        Ok(positive("--itl-sla-ms", self.itl_sla_ms)?.or(positive("--tpot-sla-ms", self.tpot_sla_ms)?))
    }

    fn concurrency_bounds(&self, lo: f64, hi: f64) -> Result<(f64, f64), String> {
        let lo = self.concurrency_min.unwrap_or(lo);
        let hi = self.concurrency_max.unwrap_or(hi);
        if lo < 1.0 || hi < lo {
            return Err(format!("--concurrency-min ({lo}) must be ≥ 1 and not above --concurrency-max ({hi})"));
        }
        Ok((lo, hi))
    }

    fn extra_slas(&self) -> Result<Vec<SlaFilter>, String> {
        self.search_sla.iter().map(|text| SlaFilter::parse(text).map_err(|e| format!("--search-sla: {e}"))).collect()
    }
}

fn base(
    planner: PlannerKind,
    search_space: Vec<Dimension>,
    objectives: Vec<Objective>,
    sla_filters: Vec<SlaFilter>,
) -> SearchConfig {
    SearchConfig {
        planner,
        search_space,
        objectives,
        sla_filters,
        max_iterations: 30,
        n_initial_points: 5,
        random_seed: None,
        recipe_name: None,
        grid_points: Vec::new(),
        grid_steps: None,
        request_slos: BTreeMap::new(),
        degradation: None,
        sla_tiers: Vec::new(),
        objective_pooling: Default::default(),
    }
}

/// The search the recipe `name` stands for with these settings, or why it cannot run.
pub fn expand(name: &str, settings: &RecipeSettings) -> Result<SearchConfig, String> {
    let throughput = || objective("output_token_throughput", "avg", Direction::Maximize);
    let mut config = match name {
        "max-concurrency-under-sla" => max_concurrency_under_sla(settings)?,
        "max-throughput-ttft-sla" | "max-throughput-itl-sla" => {
            let (metric, flag, threshold) = if name == "max-throughput-ttft-sla" {
                ("time_to_first_token", "--ttft-sla-ms", positive("--ttft-sla-ms", settings.ttft_sla_ms)?)
            } else {
                ("inter_token_latency", "--itl-sla-ms (or --tpot-sla-ms)", settings.inter_token_ms()?)
            };
            let threshold = threshold.ok_or_else(|| format!("recipe `{name}` needs {flag}"))?;
            let (lo, hi) = settings.concurrency_bounds(1.0, 1000.0)?;
            base(
                PlannerKind::Bayesian,
                vec![int_dim(CONCURRENCY_PATH, lo, hi, Prior::LogUniform)],
                vec![throughput()],
                vec![sla(metric, "p95", Op::Lt, threshold)],
            )
        }
        "max-goodput-under-slo" => {
            let ttft = positive("--ttft-sla-ms", settings.ttft_sla_ms)?;
            let tpot = settings.inter_token_ms()?;
            let e2e = positive("--e2e-sla-ms", settings.e2e_sla_ms)?;
            let (Some(ttft), Some(tpot), Some(e2e)) = (ttft, tpot, e2e) else {
                return Err(format!(
                    "recipe `{name}` needs all of --ttft-sla-ms, --tpot-sla-ms (or --itl-sla-ms) and --e2e-sla-ms: together they say which requests are good"
                ));
            };
            let attainment = settings.slo_attainment_fraction.unwrap_or(0.95);
            if !(attainment > 0.0 && attainment <= 1.0) {
                return Err(format!("--slo-attainment-fraction must be in (0, 1], got {attainment}"));
            }
            let (lo, hi) = settings.concurrency_bounds(1.0, 1000.0)?;
            let mut config = base(
                PlannerKind::Bayesian,
                vec![int_dim(CONCURRENCY_PATH, lo, hi, Prior::LogUniform)],
                vec![objective("goodput", "avg", Direction::Maximize)],
                vec![sla("good_request_fraction", "avg", Op::Ge, attainment)],
            );
            config.request_slos =
                [("time_to_first_token", ttft), ("inter_token_latency", tpot), ("request_latency", e2e)]
                    .into_iter()
                    .map(|(tag, ms)| (tag.to_string(), ms))
                    .collect();
            config
        }
        "pareto-sweep" => pareto_sweep(settings)?,
        "concurrency-ramp" => {
            let (lo, hi) = settings.concurrency_bounds(1.0, 1000.0)?;
            let metric = settings.degradation_metric_tag.clone().unwrap_or_else(|| "request_latency".into());
            let stat = settings.degradation_stat.clone().unwrap_or_else(|| "p99".into());
            let mut config = base(
                PlannerKind::Grid,
                vec![int_dim(CONCURRENCY_PATH, lo, hi, Prior::LogUniform)],
                vec![throughput(), objective(&metric, &stat, Direction::Minimize)],
                Vec::new(),
            );
            config.grid_steps = Some(settings.concurrency_steps.unwrap_or(8));
            config.degradation = Some(Degradation {
                metric_tag: metric,
                stat,
                threshold: settings.degradation_threshold.unwrap_or(0.2),
            });
            config
        }
        "prefill-ttft-curve" => {
            let lo = settings.isl_min.unwrap_or(256.0);
            let hi = settings.isl_max.unwrap_or(32768.0);
            let values = logspace_int(lo, hi, settings.isl_steps.unwrap_or(8));
            let mut config = base(
                PlannerKind::Grid,
                vec![int_dim(ISL_PATH, lo, hi, Prior::LogUniform), int_dim(CONCURRENCY_PATH, 1.0, 1.0, Prior::Uniform)],
                vec![objective("time_to_first_token", "avg", Direction::Minimize)],
                Vec::new(),
            );
            config.grid_points = values
                .iter()
                .map(|isl| [(ISL_PATH.to_string(), *isl), (CONCURRENCY_PATH.to_string(), 1.0)].into())
                .collect();
            config
        }
        "decode-itl-curve" => {
            let (lo, hi) = settings.concurrency_bounds(1.0, 200.0)?;
            let concurrencies = logspace_int(lo, hi, settings.concurrency_steps.unwrap_or(6));
            let (osl_lo, osl_hi) = (settings.osl_min.unwrap_or(64.0), settings.osl_max.unwrap_or(1024.0));
            let osls = logspace_int(osl_lo, osl_hi, settings.osl_steps.unwrap_or(4));
            let mut config = base(
                PlannerKind::Grid,
                vec![
                    int_dim(CONCURRENCY_PATH, lo, hi, Prior::LogUniform),
                    int_dim(OSL_PATH, osl_lo, osl_hi, Prior::LogUniform),
                ],
                vec![objective("inter_token_latency", "avg", Direction::Minimize)],
                Vec::new(),
            );
            config.grid_points = concurrencies
                .iter()
                .flat_map(|c| {
                    osls.iter().map(move |o| [(CONCURRENCY_PATH.to_string(), *c), (OSL_PATH.to_string(), *o)].into())
                })
                .collect();
            config
        }
        other => {
            let hint = crate::suggest::closest(other, NAMES)
                .map(|near| format!(" (did you mean `{near}`?)"))
                .unwrap_or_default();
            return Err(format!("unknown search recipe `{other}`{hint}; the recipes are {}", NAMES.join(", ")));
        }
    };
    config.sla_filters.extend(settings.extra_slas()?);
    config.sla_tiers = settings
        .sla_tiers
        .iter()
        .enumerate()
        .map(|(index, text)| SlaTier::parse(text, index + 1).map_err(|e| format!("--search-sla-tier: {e}")))
        .collect::<Result<_, _>>()?;
    config.recipe_name = Some(name.to_string());
    if let Some(max) = settings.max_iterations {
        config.max_iterations = max;
    }
    config.random_seed = settings.random_seed;
    config.validate()?;
    Ok(config)
}

fn max_concurrency_under_sla(settings: &RecipeSettings) -> Result<SearchConfig, String> {
    let mut filters = Vec::new();
    if let Some(ttft) = positive("--ttft-sla-ms", settings.ttft_sla_ms)? {
        filters.push(sla("time_to_first_token", "p95", Op::Lt, ttft));
    }
    if let Some(itl) = settings.inter_token_ms()? {
        filters.push(sla("inter_token_latency", "p95", Op::Lt, itl));
    }
    if let Some(e2e) = positive("--e2e-sla-ms", settings.e2e_sla_ms)? {
        filters.push(sla("request_latency", "p99", Op::Lt, e2e));
    }
    if let Some(rate) = settings.error_rate_sla {
        if !(rate > 0.0 && rate < 1.0) {
            return Err(format!("--error-rate-sla is a fraction in (0, 1), e.g. 0.05; got {rate}"));
        }
        filters.push(sla("request_error_rate", "avg", Op::Lt, rate * 100.0));
    }
    if filters.is_empty() && settings.search_sla.is_empty() && settings.sla_tiers.is_empty() {
        return Err(
            "recipe `max-concurrency-under-sla` needs at least one of --ttft-sla-ms, --tpot-sla-ms, --itl-sla-ms, --e2e-sla-ms, --error-rate-sla".into(),
        );
    }
    let (lo, hi) = settings.concurrency_bounds(1.0, 1000.0)?;
    let throughput = vec![objective("output_token_throughput", "avg", Direction::Maximize)];
    let style = settings.search_style.as_deref().unwrap_or("smooth_isotonic").replace('-', "_");
    let (planner, prior, max_iterations, initial) = match style.as_str() {
        "smooth_isotonic" => (PlannerKind::SmoothIsotonic, Prior::Uniform, 30, 1),
        "monotonic" => (PlannerKind::MonotonicSla, Prior::Uniform, 20, 1),
        "bo" => (PlannerKind::Bayesian, Prior::LogUniform, 30, 5),
        "optuna" => (PlannerKind::Optuna, Prior::LogUniform, 30, 5),
        "grid" => (PlannerKind::Grid, Prior::LogUniform, 30, 1),
        other => {
            return Err(format!("--search-style `{other}`: expected smooth_isotonic, monotonic, bo, optuna or grid"));
        }
    };
    let mut config = base(planner, vec![int_dim(CONCURRENCY_PATH, lo, hi, prior)], throughput, filters);
    config.max_iterations = max_iterations;
    config.n_initial_points = initial;
    if planner == PlannerKind::Grid {
        config.grid_steps = Some(settings.concurrency_steps.unwrap_or(8));
    }
    Ok(config)
}

fn pareto_sweep(settings: &RecipeSettings) -> Result<SearchConfig, String> {
    let text =
        settings.isl_osl_pairs.as_deref().ok_or("recipe `pareto-sweep` needs --isl-osl-pairs, e.g. 128/128,256/256")?;
    let pairs: Vec<(f64, f64)> = text
        .split(',')
        .map(|pair| {
            let (isl, osl) =
                pair.trim().split_once('/').ok_or_else(|| format!("--isl-osl-pairs: `{pair}` is not ISL/OSL"))?;
            let read = |v: &str| v.trim().parse::<u64>().ok().filter(|v| *v > 0).map(|v| v as f64);
            match (read(isl), read(osl)) {
                (Some(isl), Some(osl)) => Ok((isl, osl)),
                _ => Err(format!("--isl-osl-pairs: `{pair}` needs two positive integers, e.g. 128/128")),
            }
        })
        .collect::<Result<_, String>>()?;
    let concurrencies: Vec<f64> = match (settings.concurrency_min, settings.concurrency_max) {
        (None, None) => vec![1.0, 4.0, 16.0, 64.0, 256.0],
        _ => {
            let (lo, hi) = settings.concurrency_bounds(1.0, 256.0)?;
            logspace_int(lo, hi, settings.concurrency_steps.unwrap_or(5))
        }
    };
    if pairs.len() * concurrencies.len() < 2 {
        return Err(
            "recipe `pareto-sweep`: one point is no Pareto front; give at least 2 pairs or 2 concurrencies".into()
        );
    }
    let bound = |values: &mut dyn Iterator<Item = f64>| {
        values.fold((f64::INFINITY, 0.0f64), |(lo, hi), v| (lo.min(v), hi.max(v)))
    };
    let (isl_lo, isl_hi) = bound(&mut pairs.iter().map(|p| p.0));
    let (osl_lo, osl_hi) = bound(&mut pairs.iter().map(|p| p.1));
    let (c_lo, c_hi) = bound(&mut concurrencies.iter().copied());
    let mut config = base(
        PlannerKind::Grid,
        vec![
            int_dim(ISL_PATH, isl_lo, isl_hi, Prior::Uniform),
            int_dim(OSL_PATH, osl_lo, osl_hi, Prior::Uniform),
            int_dim(CONCURRENCY_PATH, c_lo, c_hi, Prior::Uniform),
        ],
        vec![
            objective("output_token_throughput", "avg", Direction::Maximize),
            objective("time_to_first_token", "p95", Direction::Minimize),
        ],
        Vec::new(),
    );
    config.grid_points = pairs
        .iter()
        .flat_map(|(isl, osl)| {
            concurrencies.iter().map(move |c| {
                [(ISL_PATH.to_string(), *isl), (OSL_PATH.to_string(), *osl), (CONCURRENCY_PATH.to_string(), *c)].into()
            })
        })
        .collect();
    config.max_iterations = config.grid_points.len();
    Ok(config)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings() -> RecipeSettings {
        RecipeSettings {
            ttft_sla_ms: Some(200.0),
            concurrency_min: Some(1.0),
            concurrency_max: Some(64.0),
            ..Default::default()
        }
    }

    #[test]
    fn max_concurrency_under_sla_builds_each_style_as_aiperf() {
        let config = expand("max-concurrency-under-sla", &settings()).unwrap();
        assert_eq!(config.planner, PlannerKind::SmoothIsotonic);
        assert_eq!(config.sla_filters, [sla("time_to_first_token", "p95", Op::Lt, 200.0)]);
        assert_eq!((config.search_space[0].lo, config.search_space[0].hi), (1.0, 64.0));
        let bo = expand("max-concurrency-under-sla", &RecipeSettings { search_style: Some("bo".into()), ..settings() })
            .unwrap();
        assert_eq!(
            (bo.planner, bo.search_space[0].prior, bo.n_initial_points),
            (PlannerKind::Bayesian, Prior::LogUniform, 5)
        );
        let error = RecipeSettings { ttft_sla_ms: None, error_rate_sla: Some(0.05), ..settings() };
        assert_eq!(expand("max-concurrency-under-sla", &error).unwrap().sla_filters[0].threshold, 5.0);
        let none = RecipeSettings { ttft_sla_ms: None, ..settings() };
        assert!(expand("max-concurrency-under-sla", &none).unwrap_err().contains("--ttft-sla-ms"));
    }

    #[test]
    fn the_other_recipes_expand_with_aiperfs_defaults() {
        let goodput = RecipeSettings { tpot_sla_ms: Some(10.0), e2e_sla_ms: Some(500.0), ..settings() };
        let config = expand("max-goodput-under-slo", &goodput).unwrap();
        assert_eq!(config.sla_filters[0].metric_tag, "good_request_fraction");
        assert_eq!(config.request_slos["inter_token_latency"], 10.0);
        let pareto = RecipeSettings { isl_osl_pairs: Some("128/128,256/64".into()), ..Default::default() };
        assert_eq!(expand("pareto-sweep", &pareto).unwrap().grid_points.len(), 10);
        assert_eq!(expand("prefill-ttft-curve", &RecipeSettings::default()).unwrap().grid_points.len(), 8);
        assert_eq!(expand("decode-itl-curve", &RecipeSettings::default()).unwrap().grid_points.len(), 24);
        let ramp = expand("concurrency-ramp", &RecipeSettings::default()).unwrap();
        assert_eq!(ramp.degradation.unwrap().metric_tag, "request_latency");
        assert!(
            expand("max-concurency-under-sla", &settings())
                .unwrap_err()
                .contains("did you mean `max-concurrency-under-sla`")
        );
    }
}
