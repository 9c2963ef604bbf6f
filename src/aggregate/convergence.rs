//! AIPerf's convergence-driven trials: after each trial (from `min_runs` on) a criterion judges
//! whether a metric has settled, and the remaining trials are skipped when it has. `ci_width`:
//! the Student's t confidence interval of the per-trial statistic is narrower than `threshold`
//! × its mean; `cv`: the trials' coefficient of variation is below `threshold`; `distribution`:
//! a two-sample Kolmogorov–Smirnov test of the last trial's per-request values against all
//! earlier trials' finds no difference (p-value above `threshold`).

use std::path::Path;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::student_t::two_sided_critical_value;
use crate::result::RunResult;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ConvergenceMode {
    CiWidth,
    Cv,
    Distribution,
}

impl ConvergenceMode {
    pub fn name(self) -> &'static str {
        match self {
            ConvergenceMode::CiWidth => "ci_width",
            ConvergenceMode::Cv => "cv",
            ConvergenceMode::Distribution => "distribution",
        }
    }

    pub fn parse(text: &str) -> Result<Self, String> {
        match text.replace('-', "_").as_str() {
            "ci_width" => Ok(ConvergenceMode::CiWidth),
            "cv" => Ok(ConvergenceMode::Cv),
            "distribution" => Ok(ConvergenceMode::Distribution),
            _ => Err(format!("`{text}` is not a convergence mode; ci_width, cv or distribution")),
        }
    }

    /// AIPerf's threshold when none is given.
    fn default_threshold(self) -> f64 {
        match self {
            ConvergenceMode::CiWidth => 0.10,
            ConvergenceMode::Cv | ConvergenceMode::Distribution => 0.05,
        }
    }
}

/// AIPerf's `multi_run.convergence`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Convergence {
    pub metric: String,
    pub stat: String,
    pub mode: ConvergenceMode,
    pub threshold: Option<f64>,
    /// Trials before the criterion is first asked (AIPerf's default 2).
    pub min_runs: u64,
}

/// One judgement after a trial.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    pub converged: bool,
    /// What the criterion measured (CI width / mean, CV, or KS p-value); None before it could.
    pub measured: Option<f64>,
}

impl Convergence {
    pub fn new(metric: &str) -> Self {
        Convergence {
            metric: metric.to_string(),
            stat: "avg".to_string(),
            mode: ConvergenceMode::CiWidth,
            threshold: None,
            min_runs: 2,
        }
    }

    /// The `convergence: #{..}` map of a Rhai `run`, `sweep` or `search`.
    pub fn rhai_map(&self) -> String {
        let threshold = self.threshold.map(|t| format!(", threshold: {t:?}")).unwrap_or_default();
        format!(
            "#{{ metric: {:?}, stat: {:?}, mode: {:?}{threshold}, min_runs: {} }}",
            self.metric,
            self.stat,
            self.mode.name(),
            self.min_runs
        )
    }

    pub fn threshold(&self) -> f64 {
        self.threshold.unwrap_or(self.mode.default_threshold())
    }

    /// What is wrong with the settings for `trials` trials, if anything.
    pub fn mistake(&self, trials: u64) -> Option<String> {
        if trials < 2 {
            return Some("convergence needs at least 2 trials (--num-profile-runs ≥ 2)".to_string());
        }
        if self.min_runs < 2 || self.min_runs > trials {
            return Some(format!(
                "convergence min_runs must be between 2 and the trials ({trials}), got {}",
                self.min_runs
            ));
        }
        if self.threshold.is_some_and(|t| !(t > 0.0 && t < 1.0)) {
            return Some(format!("convergence threshold must be in (0, 1), got {}", self.threshold()));
        }
        None
    }

    /// Judge the trials so far; `confidence` is the aggregate's confidence level and
    /// `records_file` the per-request export's file name (the distribution mode reads it).
    pub fn judge(&self, trials: &[Arc<RunResult>], confidence: f64, records_file: &str) -> Verdict {
        let not_yet = Verdict { converged: false, measured: None };
        if (trials.len() as u64) < self.min_runs {
            return not_yet;
        }
        let measured = match self.mode {
            ConvergenceMode::CiWidth => ci_width_ratio(&self.values(trials), confidence),
            ConvergenceMode::Cv => coefficient_of_variation(&self.values(trials)),
            ConvergenceMode::Distribution => {
                let Some((last, earlier)) = trials.split_last() else { return not_yet };
                let earlier: Vec<f64> =
                    earlier.iter().flat_map(|trial| self.request_values(&trial.artifact_dir, records_file)).collect();
                ks_p_value(&earlier, &self.request_values(&last.artifact_dir, records_file))
            }
        };
        let converged = measured.is_some_and(|value| match self.mode {
            ConvergenceMode::Distribution => value > self.threshold(),
            _ => value < self.threshold(),
        });
        Verdict { converged, measured }
    }

    /// The metric's statistic of each trial that has it.
    fn values(&self, trials: &[Arc<RunResult>]) -> Vec<f64> {
        trials.iter().filter_map(|trial| trial.metric(&self.metric)?.stats.get(&self.stat)).collect()
    }

    /// The metric's per-request values in a trial's `profile_export.jsonl` (its profiling
    /// records: the warm-up's are left out).
    fn request_values(&self, artifact_dir: &Path, records_file: &str) -> Vec<f64> {
        let Ok(text) = std::fs::read_to_string(artifact_dir.join(records_file)) else { return Vec::new() };
        text.lines()
            .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
            .filter(|record| record["metadata"]["benchmark_phase"] != crate::plan::PhaseKind::Warmup.as_str())
            .filter_map(|record| record["metrics"][&self.metric]["value"].as_f64())
            .collect()
    }
}

/// The width of the Student's t confidence interval of the mean, over the mean; None with fewer
/// than 2 values or a mean of 0.
fn ci_width_ratio(values: &[f64], confidence: f64) -> Option<f64> {
    let (mean, std) = mean_and_sample_std(values)?;
    let critical = two_sided_critical_value(confidence, values.len() as u64 - 1)?;
    Some(2.0 * critical * std / (values.len() as f64).sqrt() / mean.abs())
}

fn coefficient_of_variation(values: &[f64]) -> Option<f64> {
    let (mean, std) = mean_and_sample_std(values)?;
    Some(std / mean.abs())
}

fn mean_and_sample_std(values: &[f64]) -> Option<(f64, f64)> {
    let n = values.len();
    if n < 2 {
        return None;
    }
    let mean = values.iter().sum::<f64>() / n as f64;
    let variance = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    (mean != 0.0).then_some((mean, variance.sqrt()))
}

/// The two-sample Kolmogorov–Smirnov p-value (asymptotic, with Stephens' small-sample
/// correction); None with fewer than 2 values on either side.
fn ks_p_value(a: &[f64], b: &[f64]) -> Option<f64> {
    if a.len() < 2 || b.len() < 2 {
        return None;
    }
    let sorted = |values: &[f64]| {
        let mut values = values.to_vec();
        values.sort_by(f64::total_cmp);
        values
    };
    let (a, b) = (sorted(a), sorted(b));
    let (mut i, mut j, mut distance) = (0, 0, 0.0f64);
    while i < a.len() && j < b.len() {
        let value = a[i].min(b[j]);
        while i < a.len() && a[i] <= value {
            i += 1;
        }
        while j < b.len() && b[j] <= value {
            j += 1;
        }
        distance = distance.max((i as f64 / a.len() as f64 - j as f64 / b.len() as f64).abs());
    }
    let effective = (a.len() * b.len()) as f64 / (a.len() + b.len()) as f64;
    let root = effective.sqrt();
    Some(kolmogorov_survival((root + 0.12 + 0.11 / root) * distance))
}

/// P(K > λ) of the Kolmogorov distribution.
fn kolmogorov_survival(lambda: f64) -> f64 {
    if lambda < 0.2 {
        return 1.0;
    }
    let sum: f64 = (1..=100)
        .map(|k| {
            let k = k as f64;
            let sign = if k as u64 % 2 == 1 { 1.0 } else { -1.0 };
            sign * (-2.0 * k * k * lambda * lambda).exp()
        })
        .sum();
    (2.0 * sum).clamp(0.0, 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ci_width_and_cv_match_numpy_and_scipy() {
        // numpy/scipy: mean 10.1, std(ddof=1) 0.1581; t(0.975, 4) = 2.7764; 2·t·se/mean = 0.0388.
        let values = [10.0, 10.2, 9.9, 10.1, 10.3];
        assert!((ci_width_ratio(&values, 0.95).unwrap() - 0.038_87).abs() < 1e-4);
        assert!((coefficient_of_variation(&values).unwrap() - 0.015_65).abs() < 1e-4);
        assert_eq!(ci_width_ratio(&[3.0], 0.95), None);
        assert_eq!(coefficient_of_variation(&[0.0, 0.0]), None, "a mean of 0 never converges");
    }

    #[test]
    fn ks_tells_alike_samples_from_shifted_ones() {
        let a: Vec<f64> = (0..200).map(|i| (i as f64 * 0.618).fract()).collect();
        let b: Vec<f64> = (0..100).map(|i| (i as f64 * 0.414).fract()).collect();
        let shifted: Vec<f64> = b.iter().map(|v| v + 0.5).collect();
        assert!(ks_p_value(&a, &b).unwrap() > 0.5);
        assert!(ks_p_value(&a, &shifted).unwrap() < 1e-6);
        // scipy.stats.kstwobign.sf(1.0) = 0.26999967.
        assert!((kolmogorov_survival(1.0) - 0.269_999_67).abs() < 1e-6);
    }

    #[test]
    fn settings_are_checked_against_the_trials() {
        let convergence = Convergence::new("request_latency");
        assert_eq!(convergence.mistake(5), None);
        assert!(convergence.mistake(1).unwrap().contains("at least 2 trials"));
        assert!(Convergence { min_runs: 6, ..convergence.clone() }.mistake(5).unwrap().contains("min_runs"));
        assert_eq!(convergence.threshold(), 0.10);
        assert_eq!(Convergence { mode: ConvergenceMode::Cv, ..convergence }.threshold(), 0.05);
    }
}
