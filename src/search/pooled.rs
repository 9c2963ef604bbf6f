//! A pooled percentile objective (`objective_pooling: pooled`, AIPerf's
//! `--search-percentile-pooling pooled`): an iteration of several trials gives the percentile
//! over every profiled request of its trials together, read back from each trial's
//! `profile_export.jsonl`, rather than the mean of each trial's percentile.

use std::io::BufRead;
use std::sync::Arc;

use super::iteration::MetricSource;
use crate::export::ArtifactNames;
use crate::result::RunResult;

/// An iteration's metrics: its summary (each statistic the mean over its trials) and the trials.
pub struct IterationTrials {
    pub summary: Arc<RunResult>,
    pub trials: Vec<Arc<RunResult>>,
}

impl MetricSource for IterationTrials {
    fn stat(&self, tag: &str, stat: &str) -> Option<f64> {
        self.summary.stat(tag, stat)
    }

    /// With one trial, None: its own percentile is the pooled one. A trial without its records
    /// file (a run at the summary export level, or Parquet records only) gives None too, and
    /// says so: the mean of the trials' percentiles stands, as AIPerf falls back to it.
    fn pooled_percentile(&self, tag: &str, pct: f64) -> Option<f64> {
        if self.trials.len() < 2 {
            return None;
        }
        let mut values = Vec::new();
        for trial in &self.trials {
            let file = trial.artifact_dir.join(ArtifactNames::new(trial.plan.export.prefix.as_deref()).records());
            let Ok(opened) = std::fs::File::open(&file) else {
                tracing::warn!(
                    "objective_pooling pooled: {} is missing (its records need export_level records and the jsonl \
                     format); the objective is the mean of the trials' {tag} percentiles instead",
                    file.display()
                );
                return None;
            };
            for line in std::io::BufReader::new(opened).lines().map_while(Result::ok) {
                values.extend(profiled_value(&line, tag));
            }
        }
        if values.is_empty() {
            return None;
        }
        values.sort_by(f64::total_cmp);
        Some(crate::metrics::stats::percentile(&values, pct))
    }
}

/// `metrics[tag].value` of one records line, unless it is the warm-up's.
fn profiled_value(line: &str, tag: &str) -> Option<f64> {
    let record: serde_json::Value = serde_json::from_str(line).ok()?;
    if record["metadata"]["benchmark_phase"] == "warmup" {
        return None;
    }
    record["metrics"][tag]["value"].as_f64().filter(|value| value.is_finite())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::test_support::sample_result;

    fn trial(dir: &std::path::Path, name: &str, ttfts: &[f64]) -> Arc<RunResult> {
        let mut result = sample_result();
        result.artifact_dir = dir.join(name);
        std::fs::create_dir_all(&result.artifact_dir).unwrap();
        let mut lines: Vec<String> = ttfts
            .iter()
            .map(|ttft| {
                serde_json::json!({"metadata": {"benchmark_phase": "profiling"},
                                   "metrics": {"time_to_first_token": {"value": ttft, "unit": "ms"}}})
                .to_string()
            })
            .collect();
        lines.push(
            serde_json::json!({"metadata": {"benchmark_phase": "warmup"},
                               "metrics": {"time_to_first_token": {"value": 1e9, "unit": "ms"}}})
            .to_string(),
        );
        std::fs::write(result.artifact_dir.join("profile_export.jsonl"), lines.join("\n")).unwrap();
        Arc::new(result)
    }

    #[test]
    fn the_percentile_is_over_every_trials_profiled_requests() {
        let dir = tempfile::tempdir().unwrap();
        let trials = vec![trial(dir.path(), "t1", &[1.0, 2.0, 3.0]), trial(dir.path(), "t2", &[10.0, 20.0, 30.0])];
        let source = IterationTrials { summary: Arc::new(sample_result()), trials: trials.clone() };
        // numpy: np.percentile([1, 2, 3, 10, 20, 30], 50) = 6.5; the warm-up's value is left out.
        assert_eq!(source.pooled_percentile("time_to_first_token", 50.0), Some(6.5));
        assert_eq!(source.pooled_percentile("time_to_first_token", 100.0 - 1e-9).map(f64::round), Some(30.0));
        assert_eq!(source.pooled_percentile("inter_token_latency", 50.0), None, "no values");
        let one = IterationTrials { summary: Arc::new(sample_result()), trials: trials[..1].to_vec() };
        assert_eq!(one.pooled_percentile("time_to_first_token", 50.0), None, "one trial is its own pool");
        std::fs::remove_file(trials[1].artifact_dir.join("profile_export.jsonl")).unwrap();
        assert_eq!(source.pooled_percentile("time_to_first_token", 50.0), None, "a trial without records");
    }
}
