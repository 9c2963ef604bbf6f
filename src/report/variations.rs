//! The runs of a comparison grouped into variations: the trials of one sweep point (or of one
//! multi-run) become one estimate per statistic, their mean with a confidence interval, so
//! that a chart draws one point with its error bar where it drew one point per trial.

use std::collections::BTreeMap;

use super::artifacts::RunArtifacts;
use crate::aggregate::student_t::two_sided_critical_value;
use crate::plan::run_coordinates::{aiperf_label_of, label_of, short_names};

/// The confidence of the intervals, unless the sweep's metadata says otherwise.
pub const DEFAULT_CONFIDENCE: f64 = 0.95;

/// A statistic over a variation's trials.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    pub mean: f64,
    /// Half the confidence interval's width; 0 for a single trial.
    pub half_width: f64,
    pub trials: usize,
}

/// One sweep point (or one run): its label, its swept values and its trials.
#[derive(Debug)]
pub struct Variation<'a> {
    /// What its trials share (`run_info.variation_label`, else their folder).
    key: String,
    /// Its name on the page: the key, but where the key is AIPerf's label of the swept values
    /// (`phases.profiling.concurrency=4`), the values as a folder names them (`concurrency_4`).
    pub label: String,
    /// Swept parameter values (`run_info.variation_values`).
    pub values: BTreeMap<String, f64>,
    pub trials: Vec<&'a RunArtifacts>,
}

impl Variation<'_> {
    /// The mean of `metric`'s `stat` over the trials that have it, with its interval.
    pub fn estimate(&self, metric: &str, stat: &str, confidence: f64) -> Option<Estimate> {
        let values: Vec<f64> = self.trials.iter().filter_map(|run| run.stat(metric, stat)).collect();
        estimate(&values, confidence)
    }
}

/// The mean and confidence half-width of `values` (Student's t over n - 1 degrees of freedom).
pub fn estimate(values: &[f64], confidence: f64) -> Option<Estimate> {
    if values.is_empty() {
        return None;
    }
    let n = values.len();
    let mean = values.iter().sum::<f64>() / n as f64;
    let half_width = if n > 1 {
        let variance = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
        two_sided_critical_value(confidence, n as u64 - 1).map_or(0.0, |t| t * (variance / n as f64).sqrt())
    } else {
        0.0
    };
    Some(Estimate { mean, half_width, trials: n })
}

/// The key a run's trials share: its `variation_label`, else its folder less a trial folder
/// (`…/profile_runs/run_0002`, `…/trial_3`, `…/profile_runs/trial_0002/<variation>`), else its
/// own label.
fn variation_key(run: &RunArtifacts) -> String {
    if let Some(label) = run.summary["run_info"]["variation_label"].as_str().filter(|l| !l.is_empty()) {
        return label.to_string();
    }
    let label = run.label.as_str();
    // AIPerf's repeated order: `<sweep>/profile_runs/trial_0002/<variation>`.
    if let Some((sweep, rest)) = label.rsplit_once("/profile_runs/")
        && let Some((trial, variation)) = rest.split_once('/')
        && is_trial_folder(trial)
    {
        return format!("{sweep}/{variation}");
    }
    let trimmed = label
        .rsplit_once("/profile_runs/")
        .map(|(variation, _)| variation)
        .or_else(|| label.rsplit_once('/').filter(|(_, last)| is_trial_folder(last)).map(|(variation, _)| variation));
    trimmed.unwrap_or(label).to_string()
}

fn is_trial_folder(name: &str) -> bool {
    ["run_", "trial_", "trial-"].iter().any(|prefix| {
        name.strip_prefix(prefix).is_some_and(|rest| !rest.is_empty() && rest.chars().all(|c| c.is_ascii_digit()))
    })
}

/// The runs grouped by variation, in the order their first trial comes.
pub fn group(runs: &[RunArtifacts]) -> Vec<Variation<'_>> {
    let mut variations: Vec<Variation> = Vec::new();
    for run in runs {
        let key = variation_key(run);
        match variations.iter_mut().find(|v| v.key == key) {
            Some(variation) => variation.trials.push(run),
            None => {
                // AIPerf reports dotted paths (`phases.profiling.concurrency`); the page names
                // each parameter as its folders do (`concurrency`).
                let reported = run.summary["run_info"]["variation_values"].as_object();
                let label = match reported.filter(|values| !values.is_empty()) {
                    Some(values) if aiperf_label_of(values) == key => label_of(&short_names(values.clone())),
                    _ => key.clone(),
                };
                let swept = reported.map(|values| short_names(values.clone()));
                let values =
                    swept.iter().flatten().filter_map(|(name, value)| Some((name.clone(), value.as_f64()?))).collect();
                variations.push(Variation { key, label, values, trials: vec![run] });
            }
        }
    }
    variations
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(label: &str, summary: serde_json::Value) -> RunArtifacts {
        RunArtifacts {
            label: label.to_string(),
            dir: label.into(),
            summary,
            records: Default::default(),
            server_metrics: BTreeMap::new(),
            gpu: BTreeMap::new(),
        }
    }

    #[test]
    fn trials_of_a_variation_become_one_estimate() {
        let info = |variation: &str, rate: f64, throughput: f64| {
            serde_json::json!({
                "run_info": {"variation_label": variation, "variation_values": {"rate": rate}},
                "request_throughput": {"avg": throughput},
            })
        };
        let runs = vec![
            run("rate_10/profile_runs/run_0001", info("rate_10", 10.0, 9.0)),
            run("rate_10/profile_runs/run_0002", info("rate_10", 10.0, 11.0)),
            run("rate_20/profile_runs/run_0001", info("rate_20", 20.0, 19.0)),
            run("plain/trial_2", serde_json::json!({})),
            run("plain/trial_1", serde_json::json!({})),
            run("sw/profile_runs/trial_0001/rate_30", serde_json::json!({})),
            run("sw/profile_runs/trial_0002/rate_30", serde_json::json!({})),
        ];
        let variations = group(&runs);
        let labels: Vec<&str> = variations.iter().map(|v| v.label.as_str()).collect();
        assert_eq!(labels, ["rate_10", "rate_20", "plain", "sw/rate_30"]);
        assert_eq!(variations[3].trials.len(), 2);
        let rate_10 = variations[0].estimate("request_throughput", "avg", 0.95).unwrap();
        assert_eq!((rate_10.mean, rate_10.trials), (10.0, 2));
        // t(0.975, 1) = 12.706, standard error 1.
        assert!((rate_10.half_width - 12.706).abs() < 0.01, "{rate_10:?}");
        assert_eq!(variations[1].estimate("request_throughput", "avg", 0.95).unwrap().half_width, 0.0);
        assert_eq!(variations[0].values["rate"], 10.0);
        assert_eq!(variations[2].trials.len(), 2);
    }

    #[test]
    fn aiperf_labels_are_shown_as_folders_name_them_and_a_chosen_label_as_it_is() {
        let info = |label: &str| {
            serde_json::json!({"run_info": {"variation_label": label,
                "variation_values": {"phases.profiling.concurrency": 4}}})
        };
        let runs =
            vec![run("sw/concurrency_4", info("phases.profiling.concurrency=4")), run("mine/c4", info("four users"))];
        let variations = group(&runs);
        let labels: Vec<&str> = variations.iter().map(|v| v.label.as_str()).collect();
        assert_eq!(labels, ["concurrency_4", "four users"]);
        assert_eq!(variations[0].values["concurrency"], 4.0);
    }
}
