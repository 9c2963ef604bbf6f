//! Repeated trials of one plan: the confidence statistics of every metric statistic across the
//! trials (`time_to_first_token_p99` → mean, std, …, ci), and the combined result a script reads,
//! whose statistics are the means of the trials' statistics.

use std::sync::Arc;

use serde::Serialize;

use super::confidence::ConfidenceStats;
use crate::result::{MetricResult, RunResult, Stats};

/// The statistics of a metric that are aggregated across trials, in export order (`count` is
/// left out, as AIPerf does).
pub const AGGREGATED_STATS: [&str; 14] =
    ["avg", "p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99", "min", "max", "std", "sum"];

/// One metric statistic across trials: `request_latency_p99` and its confidence statistics.
#[derive(Debug, Clone, PartialEq)]
pub struct AggregateMetric {
    /// `<metric tag>_<stat>`, e.g. `request_throughput_avg`.
    pub name: String,
    pub tag: &'static str,
    pub stat: &'static str,
    pub unit: &'static str,
    pub stats: ConfidenceStats,
}

/// A trial that did not finish (interrupted), listed in the aggregate's `failed_runs`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FailedTrial {
    pub label: String,
    pub error: String,
}

/// The trials of one plan and their confidence aggregate.
#[derive(Debug, Clone)]
pub struct TrialSet {
    /// The trials that finished, in the order they ran.
    pub trials: Vec<Arc<RunResult>>,
    pub failed: Vec<FailedTrial>,
    /// E.g. 0.95.
    pub confidence_level: f64,
    /// The pause between trials, seconds.
    pub cooldown_s: f64,
    /// Every statistic of every metric the trials share, in the first trial's metric order.
    pub metrics: Vec<AggregateMetric>,
}

impl TrialSet {
    /// Aggregate `trials` (in the order they ran) at `confidence_level`.
    pub fn new(trials: Vec<Arc<RunResult>>, confidence_level: f64, cooldown_s: f64) -> Self {
        let metrics = aggregate_metrics(&trials, confidence_level);
        Self { trials, failed: Vec::new(), confidence_level, cooldown_s, metrics }
    }

    /// The same set, with a trial that did not finish.
    pub fn with_failed(mut self, label: String, error: String) -> Self {
        self.failed.push(FailedTrial { label, error });
        self
    }

    /// Trials attempted: finished and failed.
    pub fn attempted(&self) -> usize {
        self.trials.len() + self.failed.len()
    }

    /// The trials' labels, `run_0001`…
    pub fn run_labels(&self) -> Vec<String> {
        self.trials.iter().map(|trial| trial.plan.run_info.run_label.clone().unwrap_or(trial.name.clone())).collect()
    }

    /// The aggregate of `tag`'s `stat` (`avg`, `p99`, …), if every trial had it.
    pub fn metric(&self, tag: &str, stat: &str) -> Option<&AggregateMetric> {
        self.metrics.iter().find(|m| m.tag == tag && m.stat == stat)
    }

    /// The values of `tag`'s `stat` in each trial that has it.
    pub fn samples(&self, tag: &str, stat: &str) -> Vec<f64> {
        samples(&self.trials, tag, stat)
    }
}

fn samples(trials: &[Arc<RunResult>], tag: &str, stat: &str) -> Vec<f64> {
    trials.iter().filter_map(|trial| trial.metric(tag).and_then(|m| m.stats.get(stat))).collect()
}

fn aggregate_metrics(trials: &[Arc<RunResult>], confidence_level: f64) -> Vec<AggregateMetric> {
    let Some(first) = trials.first() else {
        return Vec::new();
    };
    let mut metrics = Vec::new();
    for metric in &first.metrics {
        for stat in AGGREGATED_STATS {
            let values = samples(trials, metric.tag, stat);
            if values.len() != trials.len() {
                continue;
            }
            if let Some(stats) = ConfidenceStats::of(&values, confidence_level) {
                metrics.push(AggregateMetric {
                    name: format!("{}_{stat}", metric.tag),
                    tag: metric.tag,
                    stat,
                    unit: metric.unit,
                    stats,
                });
            }
        }
    }
    metrics
}

/// The last trial's result with every metric statistic replaced by its mean across the trials
/// (`count` rounded); thresholds are judged again on those means. `None` without trials.
pub fn combined_result(set: &TrialSet) -> Option<RunResult> {
    let last = set.trials.last()?;
    let metrics: Vec<MetricResult> = last
        .metrics
        .iter()
        .map(|metric| MetricResult { stats: mean_stats(&set.trials, metric.tag), ..metric.clone() })
        .collect();
    let scripted: Option<Vec<_>> =
        set.trials.iter().map(|trial| crate::thresholds::sessions::of_results(&trial.phases)).collect();
    let thresholds = crate::thresholds::evaluate(&last.plan.thresholds, &metrics, &scripted.unwrap_or_default());
    Some(RunResult {
        metrics,
        warmup_metrics: Vec::new(),
        by_phase: Vec::new(),
        thresholds,
        // Each trial's own breakdown stays in its own summary.
        by_url: Vec::new(),
        was_cancelled: set.trials.iter().any(|trial| trial.was_cancelled),
        start_time: set.trials.first().map_or_else(String::new, |first| first.start_time.clone()),
        ..(**last).clone()
    })
}

fn mean_stats(trials: &[Arc<RunResult>], tag: &str) -> Stats {
    let mean = |stat: &str| {
        let values = samples(trials, tag, stat);
        (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
    };
    Stats {
        avg: mean("avg").unwrap_or(0.0),
        min: mean("min"),
        max: mean("max"),
        p1: mean("p1"),
        p5: mean("p5"),
        p10: mean("p10"),
        p25: mean("p25"),
        p50: mean("p50"),
        p75: mean("p75"),
        p90: mean("p90"),
        p95: mean("p95"),
        p99: mean("p99"),
        std: mean("std"),
        count: mean("count").map(|count| count.round() as u64),
        sum: mean("sum"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aggregate::test_support::trial;

    #[test]
    fn each_statistic_of_each_metric_is_aggregated_across_trials() {
        let set = TrialSet::new(vec![trial(2.0, 10.0), trial(4.0, 20.0), trial(6.0, 30.0)], 0.95, 1.5);
        let p99 = set.metric("time_to_first_token", "p99").unwrap();
        assert_eq!(p99.name, "time_to_first_token_p99");
        assert_eq!(p99.unit, "ms");
        assert_eq!((p99.stats.mean, p99.stats.std, p99.stats.min, p99.stats.max), (20.0, 10.0, 10.0, 30.0));
        let t = p99.stats.t_critical.unwrap();
        assert!((p99.stats.ci_high - (20.0 + t * 10.0 / 3f64.sqrt())).abs() < 1e-9);
        let throughput = set.metric("request_throughput", "avg").unwrap();
        assert_eq!((throughput.stats.mean, throughput.stats.cv), (4.0, Some(0.5)));
        // A scalar metric has only its avg; count is never aggregated.
        assert!(set.metric("request_throughput", "p99").is_none());
        assert!(set.metrics.iter().all(|m| m.stat != "count"));
    }

    #[test]
    fn the_combined_result_holds_the_means_of_the_trials() {
        let set = TrialSet::new(vec![trial(2.0, 10.0), trial(4.0, 40.0)], 0.9, 0.0);
        let combined = combined_result(&set).unwrap();
        assert_eq!(combined.metric("time_to_first_token").unwrap().stats.p99, Some(25.0));
        assert_eq!(combined.metric("request_throughput").unwrap().stats.avg, 3.0);
        assert_eq!(combined.metric("request_latency").unwrap().stats.count, Some(4));
        assert!(combined_result(&TrialSet::new(Vec::new(), 0.9, 0.0)).is_none());
    }
}
