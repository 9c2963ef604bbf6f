//! One measured iteration of a search: where it ran, what it measured, whether it met every
//! SLA, and by how much (the margin the 1-D planners fit).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::config::SearchConfig;

/// Where the metrics of a finished run come from.
pub trait MetricSource {
    /// The statistic `stat` (`avg`, `p95`, …) of the metric `tag`, when the run has it.
    fn stat(&self, tag: &str, stat: &str) -> Option<f64>;

    /// The percentile `pct` of `tag` over the requests of several trials together, when the
    /// source has them (`pooled.rs`); None otherwise, and `stat` stands.
    fn pooled_percentile(&self, _tag: &str, _pct: f64) -> Option<f64> {
        None
    }
}

impl MetricSource for crate::result::RunResult {
    fn stat(&self, tag: &str, stat: &str) -> Option<f64> {
        self.metric(tag).and_then(|metric| metric.stats.get(stat))
    }
}

impl<T: MetricSource + ?Sized> MetricSource for std::sync::Arc<T> {
    fn stat(&self, tag: &str, stat: &str) -> Option<f64> {
        self.as_ref().stat(tag, stat)
    }

    fn pooled_percentile(&self, tag: &str, pct: f64) -> Option<f64> {
        self.as_ref().pooled_percentile(tag, pct)
    }
}

/// Why a planner chose a point (kept in the history; the smooth-isotonic planner reads it back).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProbeKind {
    /// Widening the range until the SLA breaks.
    Bracket,
    /// At the fitted boundary.
    Fit,
    /// Beside a fitted point, to confirm the boundary.
    Verify,
    /// Halving the bracket.
    Bisect,
    /// A grid point.
    Grid,
    /// A Bayesian-optimisation initial point.
    Initial,
    /// Where expected improvement is highest.
    Acquisition,
}

/// One iteration, with AIPerf's keys first and this project's beside them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Iteration {
    pub iteration_idx: usize,
    pub variation_values: Map<String, Value>,
    pub objective_values: Option<Vec<f64>>,
    pub feasible: bool,
    pub non_monotonic_warning: bool,
    /// The point in the order of the search space.
    pub point: Vec<f64>,
    pub probe: ProbeKind,
    /// Each SLA's measured statistic (`None`: the run had no such metric).
    pub sla_values: Vec<Option<f64>>,
    /// The worst SLA margin as a fraction of its threshold: below zero when every SLA holds.
    pub margin: Option<f64>,
    pub artifact_dir: String,
    pub wall_s: f64,
    /// In a multi-tier search: whether each tier's SLAs (and `sla_filters`) held.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tier_feasible: Vec<bool>,
}

impl Iteration {
    /// Judge one finished run against the search's objectives and SLAs.
    pub fn measure(
        config: &SearchConfig,
        iteration_idx: usize,
        point: Vec<f64>,
        probe: ProbeKind,
        source: &dyn MetricSource,
    ) -> Self {
        let pooled = |objective: &super::config::Objective| {
            let pct = super::config::percentile_of(&objective.stat).filter(|_| config.pools_objectives())?;
            source.pooled_percentile(&objective.metric, pct)
        };
        let objectives: Option<Vec<f64>> = config
            .objectives
            .iter()
            .map(|o| pooled(o).or_else(|| source.stat(&o.metric, &o.stat)).filter(|v| v.is_finite()))
            .collect();
        let sla_values: Vec<Option<f64>> =
            config.sla_filters.iter().map(|f| source.stat(&f.metric_tag, &f.stat).filter(|v| v.is_finite())).collect();
        let feasible = config.sla_filters.iter().zip(&sla_values).all(|(f, v)| v.is_some_and(|v| f.passes(v)));
        let margins: Option<Vec<f64>> =
            config.sla_filters.iter().zip(&sla_values).map(|(f, v)| v.map(|v| f.margin(v))).collect();
        let margin = margins.filter(|m| !m.is_empty()).map(|m| m.into_iter().fold(f64::NEG_INFINITY, f64::max));
        let holds = |filter: &super::config::SlaFilter| {
            source.stat(&filter.metric_tag, &filter.stat).is_some_and(|v| v.is_finite() && filter.passes(v))
        };
        let tier_feasible: Vec<bool> =
            config.sla_tiers.iter().map(|tier| feasible && tier.filters.iter().all(holds)).collect();
        Iteration {
            iteration_idx,
            variation_values: config.values_of(&point),
            objective_values: objectives.filter(|values| !values.is_empty()),
            feasible: feasible && tier_feasible.iter().all(|holds| *holds),
            non_monotonic_warning: false,
            point,
            probe,
            sla_values,
            margin,
            artifact_dir: String::new(),
            wall_s: 0.0,
            tier_feasible,
        }
    }

    /// The value of the first dimension (the swept one of a 1-D search).
    pub fn x(&self) -> f64 {
        self.point.first().copied().unwrap_or(f64::NAN)
    }
}

/// The SLA boundary of a 1-D search as AIPerf latches it: the highest feasible value below
/// every infeasible one, and the lowest infeasible value above every feasible one; a verdict
/// against the bracket so far is non-monotonic and moves nothing.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Bracket {
    pub feasible_max: Option<f64>,
    pub infeasible_min: Option<f64>,
}

impl Bracket {
    pub fn of(history: &[Iteration]) -> Self {
        let mut bracket = Bracket::default();
        for iteration in history {
            bracket.absorb(iteration.x(), iteration.feasible);
        }
        bracket
    }

    /// Take one verdict in; false when it contradicts the bracket (non-monotonic).
    pub fn absorb(&mut self, x: f64, feasible: bool) -> bool {
        if feasible {
            if self.infeasible_min.is_some_and(|i| x >= i) {
                return false;
            }
            self.feasible_max = Some(self.feasible_max.map_or(x, |f| f.max(x)));
        } else {
            if self.feasible_max.is_some_and(|f| x <= f) {
                return false;
            }
            self.infeasible_min = Some(self.infeasible_min.map_or(x, |i| i.min(x)));
        }
        true
    }
}

#[cfg(test)]
pub mod tests {
    use std::collections::BTreeMap;

    use super::*;

    /// Metrics of a pretend run, for planner tests.
    pub struct Fixed(pub BTreeMap<(String, String), f64>);

    impl MetricSource for Fixed {
        fn stat(&self, tag: &str, stat: &str) -> Option<f64> {
            self.0.get(&(tag.to_string(), stat.to_string())).copied()
        }
    }

    #[test]
    fn a_verdict_against_the_bracket_moves_nothing() {
        let mut bracket = Bracket::default();
        assert!(bracket.absorb(16.0, true));
        assert!(bracket.absorb(32.0, false));
        assert!(!bracket.absorb(40.0, true));
        assert!(!bracket.absorb(8.0, false));
        assert_eq!(bracket, Bracket { feasible_max: Some(16.0), infeasible_min: Some(32.0) });
    }
}
