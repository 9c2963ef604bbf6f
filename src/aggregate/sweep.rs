//! The sweep aggregate: each variation's metrics across its trials, the best variation for
//! throughput and for tail latency, and the Pareto-optimal set of the two.

use std::sync::Arc;

use serde_json::{Map, Value};

use super::trials::{FailedTrial, TrialSet};
use crate::metric_result::MetricResult;
use crate::result::RunResult;

/// The percentiles a single run's metric block carries.
const PERCENTILES: [&str; 9] = ["p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99"];

/// The throughput objective (maximized): requests per second.
pub const THROUGHPUT_METRIC: &str = "request_throughput";
/// The latency objective (minimized, at p99): time to first token, or request latency when the
/// endpoint does not stream.
pub const LATENCY_METRICS: [&str; 2] = ["time_to_first_token", "request_latency"];

/// One variation of a sweep: its parameter point and its trials.
#[derive(Debug, Clone)]
pub struct SweepCell {
    /// E.g. `{"users": 8}`.
    pub values: Map<String, Value>,
    pub label: String,
    pub trials: Arc<TrialSet>,
}

/// One metric block of one variation, under the key AIPerf 0.13 gives it: with several trials,
/// each statistic of each metric across them (`request_throughput_avg`: the trials' averages,
/// as the variation's confidence aggregate has it); with one, the metric itself
/// (`request_throughput`), its spread zero, with its percentiles, count and sum.
#[derive(Debug, Clone, PartialEq)]
pub struct CombinationMetric {
    pub key: String,
    pub unit: &'static str,
    pub mean: f64,
    pub std: f64,
    pub min: f64,
    pub max: f64,
    /// `std / mean`; `None` for a mean of 0 over several trials.
    pub cv: Option<f64>,
    pub ci_low: f64,
    pub ci_high: f64,
    /// What a single trial's block carries besides (None over several trials).
    pub single_run: Option<SingleRun>,
}

/// A single trial's metric: its average, and the percentiles, count and sum it has.
#[derive(Debug, Clone, PartialEq)]
pub struct SingleRun {
    pub avg: f64,
    /// `(p1, value)`…: only the percentiles the metric has.
    pub percentiles: Vec<(&'static str, f64)>,
    pub count: Option<u64>,
    pub sum: Option<f64>,
}

/// The best variation for one objective.
#[derive(Debug, Clone, PartialEq)]
pub struct BestConfiguration {
    /// `best_throughput` or `best_latency_p99`.
    pub name: &'static str,
    pub cell: usize,
    pub metric: f64,
    pub unit: &'static str,
}

/// Everything the sweep aggregate reports.
#[derive(Debug, Clone)]
pub struct SweepSummary {
    pub cells: Vec<SweepCell>,
    /// Each parameter with the values it took, in first-seen order.
    pub parameters: Vec<(String, Vec<Value>)>,
    pub best: Vec<BestConfiguration>,
    /// Indexes of the Pareto-optimal cells (throughput up, p99 latency down), in sweep order.
    pub pareto: Vec<usize>,
    /// Each cell's (throughput, p99 latency), trial means; `None` when it lacks either.
    pub objectives: Vec<Option<(f64, f64)>>,
    /// The latency metric ranked at p99 (`time_to_first_token` when the runs stream).
    pub latency_metric: Option<&'static str>,
    /// A variation that did not finish, by its label: the sweep stopped there.
    pub failed: Vec<FailedTrial>,
}

impl SweepSummary {
    pub fn new(cells: Vec<SweepCell>) -> Self {
        let parameters = parameters_of(&cells);
        let objectives: Vec<Option<(f64, f64)>> = cells.iter().map(objectives).collect();
        let best = best_configurations(&cells, &objectives);
        let pareto = pareto_front(&objectives);
        let latency_metric = cells.iter().find_map(|cell| latency_metric(cell.trials.trials.first()?));
        Self { cells, parameters, best, pareto, objectives, latency_metric, failed: Vec::new() }
    }

    /// The same summary, with the variation that stopped the sweep.
    pub fn with_failed(mut self, label: String, error: String) -> Self {
        self.failed.push(FailedTrial { label, error });
        self
    }

    /// How many runs of the sweep finished, over every variation and trial.
    pub fn run_count(&self) -> usize {
        self.cells.iter().map(|cell| cell.trials.trials.len()).sum()
    }
}

/// Every metric block of a variation, in its first trial's metric order.
pub fn combination_metrics(cell: &SweepCell) -> Vec<CombinationMetric> {
    let set = &cell.trials;
    match set.trials.as_slice() {
        [] => Vec::new(),
        [single] => single.metrics.iter().map(single_run_block).collect(),
        _ => set
            .metrics
            .iter()
            .map(|metric| {
                let s = &metric.stats;
                CombinationMetric {
                    key: metric.name.clone(),
                    unit: metric.unit,
                    mean: s.mean,
                    std: s.std,
                    min: s.min,
                    max: s.max,
                    cv: s.cv,
                    ci_low: s.ci_low,
                    ci_high: s.ci_high,
                    single_run: None,
                }
            })
            .collect(),
    }
}

/// A single trial's metric as a block: its average with no spread, its own extremes.
fn single_run_block(metric: &MetricResult) -> CombinationMetric {
    let stats = &metric.stats;
    let avg = stats.avg;
    let single_run = SingleRun {
        avg,
        percentiles: PERCENTILES.iter().filter_map(|&p| stats.get(p).map(|value| (p, value))).collect(),
        count: stats.get("count").map(|count| count as u64),
        sum: stats.get("sum"),
    };
    CombinationMetric {
        key: metric.tag.to_string(),
        unit: metric.unit,
        mean: avg,
        std: 0.0,
        min: stats.get("min").unwrap_or(avg),
        max: stats.get("max").unwrap_or(avg),
        cv: Some(0.0),
        ci_low: avg,
        ci_high: avg,
        single_run: Some(single_run),
    }
}

fn parameters_of(cells: &[SweepCell]) -> Vec<(String, Vec<Value>)> {
    let mut parameters: Vec<(String, Vec<Value>)> = Vec::new();
    for cell in cells {
        for (name, value) in &cell.values {
            match parameters.iter_mut().find(|(known, _)| known == name) {
                Some((_, values)) if !values.contains(value) => values.push(value.clone()),
                Some(_) => {}
                None => parameters.push((name.clone(), vec![value.clone()])),
            }
        }
    }
    parameters
}

/// The latency metric the sweep ranks by: the first of `LATENCY_METRICS` the runs report.
fn latency_metric(result: &RunResult) -> Option<&'static str> {
    LATENCY_METRICS.into_iter().find(|tag| result.metric(tag).and_then(|m| m.stats.p99).is_some())
}

/// A variation's (throughput, p99 latency), each the mean over its trials.
fn objectives(cell: &SweepCell) -> Option<(f64, f64)> {
    let set = &cell.trials;
    let latency_tag = latency_metric(set.trials.first()?)?;
    let mean = |values: Vec<f64>| (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64);
    Some((mean(set.samples(THROUGHPUT_METRIC, "avg"))?, mean(set.samples(latency_tag, "p99"))?))
}

/// The best cell per objective; ties go to the cell better on the other objective, so the best
/// cells are always Pareto-optimal.
fn best_configurations(cells: &[SweepCell], points: &[Option<(f64, f64)>]) -> Vec<BestConfiguration> {
    let scored = || points.iter().enumerate().filter_map(|(i, point)| point.map(|p| (i, p)));
    let mut best = Vec::new();
    if let Some((cell, (throughput, _))) = scored().max_by(|a, b| a.1.0.total_cmp(&b.1.0).then(b.1.1.total_cmp(&a.1.1)))
    {
        best.push(BestConfiguration { name: "best_throughput", cell, metric: throughput, unit: "requests/sec" });
    }
    if let Some((cell, (_, latency))) = scored().min_by(|a, b| a.1.1.total_cmp(&b.1.1).then(b.1.0.total_cmp(&a.1.0))) {
        let unit = cells[cell]
            .trials
            .trials
            .first()
            .and_then(|first| latency_metric(first).and_then(|tag| first.metric(tag)).map(|metric| metric.unit));
        best.push(BestConfiguration { name: "best_latency_p99", cell, metric: latency, unit: unit.unwrap_or("ms") });
    }
    best
}

/// The points no other point beats on one objective without losing on the other.
fn pareto_front(points: &[Option<(f64, f64)>]) -> Vec<usize> {
    let dominates = |a: (f64, f64), b: (f64, f64)| a.0 >= b.0 && a.1 <= b.1 && (a.0 > b.0 || a.1 < b.1);
    points
        .iter()
        .enumerate()
        .filter_map(|(i, point)| {
            let point = (*point)?;
            let beaten = points.iter().flatten().any(|&other| dominates(other, point));
            (!beaten).then_some(i)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::aggregate::test_support::cell;

    #[test]
    fn the_pareto_set_keeps_only_undominated_trade_offs() {
        let summary = SweepSummary::new(vec![
            cell(1, &[(10.0, 5.0)]),
            cell(2, &[(20.0, 8.0)]),
            cell(4, &[(15.0, 9.0)]), // beaten by users=2 on both
            cell(8, &[(30.0, 20.0)]),
            cell(16, &[(30.0, 25.0)]), // ties users=8 on throughput, worse latency
        ]);
        assert_eq!(summary.pareto, [0, 1, 3]);
        assert_eq!(
            summary.best[0],
            BestConfiguration { name: "best_throughput", cell: 3, metric: 30.0, unit: "requests/sec" }
        );
        assert_eq!(summary.best[1], BestConfiguration { name: "best_latency_p99", cell: 0, metric: 5.0, unit: "ms" });
        assert_eq!(summary.parameters, [("users".to_string(), [1, 2, 4, 8, 16].map(|u| json!(u)).to_vec())]);
        assert_eq!(summary.run_count(), 5);
    }

    #[test]
    fn objectives_are_trial_means() {
        let summary = SweepSummary::new(vec![cell(1, &[(10.0, 4.0), (20.0, 6.0)]), cell(2, &[(14.0, 4.0)])]);
        assert_eq!(summary.best[0].cell, 0);
        assert_eq!(summary.best[0].metric, 15.0);
        assert_eq!(summary.best[1].metric, 4.0);
        assert_eq!(summary.pareto, [0, 1]);
    }

    #[test]
    fn a_variation_s_metrics_are_its_confidence_aggregate_or_its_one_run() {
        let metrics = combination_metrics(&cell(1, &[(10.0, 4.0), (20.0, 6.0)]));
        let throughput = metrics.iter().find(|m| m.key == "request_throughput_avg").unwrap();
        assert_eq!((throughput.mean, throughput.min, throughput.max), (15.0, 10.0, 20.0));
        assert!((throughput.std - 50f64.sqrt()).abs() < 1e-12, "the trials' sample std");
        assert!(throughput.single_run.is_none());
        let ttft_p99 = metrics.iter().find(|m| m.key == "time_to_first_token_p99").unwrap();
        assert_eq!((ttft_p99.mean, ttft_p99.unit), (5.0, "ms"));
        assert!(metrics.iter().all(|m| m.key != "time_to_first_token"), "several trials: only flattened keys");

        let one = combination_metrics(&cell(1, &[(10.0, 4.0)]));
        let throughput = one.iter().find(|m| m.key == "request_throughput").unwrap();
        assert_eq!((throughput.mean, throughput.std, throughput.cv, throughput.ci_high), (10.0, 0.0, Some(0.0), 10.0));
        let ttft = one.iter().find(|m| m.key == "time_to_first_token").unwrap();
        let single_run = ttft.single_run.as_ref().unwrap();
        assert_eq!(single_run.percentiles.last(), Some(&("p99", 4.0)));
        assert!(single_run.count.is_some() && single_run.sum.is_some());
    }
}
