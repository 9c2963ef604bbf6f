//! A run's accuracy: graded answers counted per task and overall, with AIPerf's keys for the
//! summary JSON (`accuracy.overall`, `accuracy.task.<task>`, `accuracy.unparsed…`).

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{Value, json};

use crate::metric_result::{MetricKind, MetricResult, Stats};

/// AIPerf's tag of the overall accuracy (a ratio, 0 to 1).
pub const OVERALL_TAG: &str = "accuracy.overall";
/// AIPerf's tag of the share of answers not in the asked format.
pub const UNPARSED_TAG: &str = "accuracy.unparsed";

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Tally {
    pub total: u64,
    pub passed: u64,
    pub unparsed: u64,
}

impl Tally {
    pub fn add(&mut self, passed: bool, unparsed: bool) {
        self.total += 1;
        self.passed += u64::from(passed);
        self.unparsed += u64::from(unparsed);
    }

    pub fn accuracy_rate(&self) -> f64 {
        if self.total == 0 { 0.0 } else { self.passed as f64 / self.total as f64 }
    }

    pub fn unparsed_rate(&self) -> f64 {
        if self.total == 0 { 0.0 } else { self.unparsed as f64 / self.total as f64 }
    }

    /// AIPerf's `{total, passed, unparsed, accuracy_rate, unparsed_rate}`.
    fn json(&self) -> Value {
        json!({
            "total": self.total,
            "passed": self.passed,
            "unparsed": self.unparsed,
            "accuracy_rate": self.accuracy_rate(),
            "unparsed_rate": self.unparsed_rate(),
        })
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct AccuracySummary {
    pub benchmark: String,
    pub grader: String,
    pub overall: Tally,
    /// By task (MMLU subject, MMLU-Pro category, MATH subject, BBH subtask, …).
    pub per_task: BTreeMap<String, Tally>,
}

impl AccuracySummary {
    pub fn new(benchmark: &str, grader: &str) -> Self {
        AccuracySummary { benchmark: benchmark.into(), grader: grader.into(), ..Default::default() }
    }

    pub fn add(&mut self, task: &str, passed: bool, unparsed: bool) {
        self.overall.add(passed, unparsed);
        self.per_task.entry(task.to_string()).or_default().add(passed, unparsed);
    }

    /// The accuracy of `task` (the overall one for `None`), if it was asked.
    pub fn rate(&self, task: Option<&str>) -> Option<f64> {
        match task {
            None => (self.overall.total > 0).then(|| self.overall.accuracy_rate()),
            Some(task) => self.per_task.get(task).map(Tally::accuracy_rate),
        }
    }

    /// The overall accuracy and unparsed share as run metrics (thresholds, sweeps, CSV).
    pub fn metrics(&self) -> Vec<MetricResult> {
        let metric = |tag, header, count: u64, sum: u64| MetricResult {
            tag,
            header,
            unit: "ratio",
            kind: MetricKind::Aggregate,
            console: false,
            stats: Stats {
                avg: if count == 0 { 0.0 } else { sum as f64 / count as f64 },
                count: Some(count),
                sum: Some(sum as f64),
                ..Default::default()
            },
        };
        vec![
            metric(OVERALL_TAG, "Accuracy (Overall)", self.overall.total, self.overall.passed),
            metric(UNPARSED_TAG, "Accuracy Unparsed (Overall)", self.overall.total, self.overall.unparsed),
        ]
    }

    /// The summary JSON's entries: each task's `accuracy.task.<task>` and
    /// `accuracy.unparsed.task.<task>` blocks (`{unit, avg, count, sum}`), then `accuracy`:
    /// the benchmark, the grader and AIPerf's `AccuracySummary` shape.
    pub fn json_entries(&self) -> Vec<(String, Value)> {
        let block =
            |count: u64, sum: u64, rate: f64| json!({ "unit": "ratio", "avg": rate, "count": count, "sum": sum });
        let mut entries = Vec::new();
        for (task, tally) in &self.per_task {
            entries.push((format!("accuracy.task.{task}"), block(tally.total, tally.passed, tally.accuracy_rate())));
        }
        for (task, tally) in &self.per_task {
            entries.push((
                format!("accuracy.unparsed.task.{task}"),
                block(tally.total, tally.unparsed, tally.unparsed_rate()),
            ));
        }
        let per_task: serde_json::Map<String, Value> =
            self.per_task.iter().map(|(task, tally)| (task.clone(), tally.json())).collect();
        entries.push((
            "accuracy".to_string(),
            json!({
                "benchmark": self.benchmark,
                "grader_name": self.grader,
                "total_evaluated": self.overall.total,
                "total_passed": self.overall.passed,
                "accuracy_rate": self.overall.accuracy_rate(),
                "overall_unparsed": self.overall.unparsed,
                "per_task": per_task,
            }),
        ));
        entries
    }

    /// AIPerf's `accuracy_results.csv` rows: `task, correct, total, unparsed, accuracy`, each
    /// task then `OVERALL`.
    pub fn csv_rows(&self) -> Vec<[String; 5]> {
        let row = |task: &str, tally: &Tally| {
            [
                task.to_string(),
                tally.passed.to_string(),
                tally.total.to_string(),
                tally.unparsed.to_string(),
                format!("{:.4}", tally.accuracy_rate()),
            ]
        };
        let mut rows: Vec<[String; 5]> = self.per_task.iter().map(|(task, tally)| row(task, tally)).collect();
        rows.push(row("OVERALL", &self.overall));
        rows
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tasks_and_the_whole_are_counted_with_aiperfs_keys() {
        let mut summary = AccuracySummary::new("mmlu", "multiple_choice");
        for (task, passed, unparsed) in [("anatomy", true, false), ("anatomy", false, true), ("virology", true, true)] {
            summary.add(task, passed, unparsed);
        }
        assert_eq!(summary.rate(None), Some(2.0 / 3.0));
        assert_eq!(summary.rate(Some("anatomy")), Some(0.5));
        assert_eq!(summary.rate(Some("nutrition")), None);
        let metrics = summary.metrics();
        assert_eq!((metrics[0].tag, metrics[0].stats.count, metrics[0].stats.sum), (OVERALL_TAG, Some(3), Some(2.0)));
        let entries: serde_json::Map<String, Value> = summary.json_entries().into_iter().collect();
        assert_eq!(entries["accuracy.task.anatomy"]["avg"], 0.5);
        assert_eq!(entries["accuracy.unparsed.task.virology"]["sum"], 1);
        assert_eq!(entries["accuracy"]["per_task"]["virology"]["accuracy_rate"], 1.0);
        assert_eq!(summary.csv_rows().last().unwrap(), &["OVERALL", "2", "3", "2", "0.6667"].map(String::from));
    }
}
