//! Server metrics and GPU telemetry over time, read from the per-scrape exports
//! (`server_metrics_export.jsonl`, `gpu_telemetry_export.jsonl`): one time series per metric
//! (label sets summed per scrape), histograms as their summed buckets.

use std::collections::BTreeMap;
use std::io::BufRead;
use std::path::Path;

use anyhow::{Context, Result};
use serde::Deserialize;

/// One scrape of one metric: a value, or a histogram's cumulative buckets (upper bound, count).
#[derive(Debug, Clone, PartialEq)]
pub enum Sample {
    Value(f64),
    Buckets(Vec<(f64, f64)>),
}

/// Samples of one metric over time: (wall-clock ns, sample), in time order.
pub type Timeline = Vec<(u64, Sample)>;

/// GPU samples (wall-clock ns, value) by field name, then by GPU (`"GPU 0 NVIDIA H100"`).
pub type GpuFields = BTreeMap<String, BTreeMap<String, Vec<(u64, f64)>>>;

/// Every server metric's timeline, by metric name.
pub fn read_server_metrics(path: &Path) -> Result<BTreeMap<String, Timeline>> {
    #[derive(Deserialize)]
    struct Scrape {
        timestamp_ns: u64,
        #[serde(default)]
        metrics: BTreeMap<String, Vec<SeriesSample>>,
    }
    #[derive(Deserialize)]
    struct SeriesSample {
        #[serde(default)]
        value: Option<f64>,
        #[serde(default)]
        buckets: Option<BTreeMap<String, f64>>,
    }
    let mut timelines: BTreeMap<String, Timeline> = BTreeMap::new();
    for_each_line(path, |scrape: Scrape| {
        for (name, series) in scrape.metrics {
            let histograms: Vec<&BTreeMap<String, f64>> = series.iter().filter_map(|s| s.buckets.as_ref()).collect();
            let sample = if histograms.is_empty() {
                Sample::Value(series.iter().filter_map(|s| s.value).sum())
            } else {
                Sample::Buckets(summed_buckets(&histograms))
            };
            timelines.entry(name).or_default().push((scrape.timestamp_ns, sample));
        }
    })?;
    for timeline in timelines.values_mut() {
        timeline.sort_by_key(|(at, _)| *at);
    }
    Ok(timelines)
}

/// Every GPU field's samples, by field name and `GPU <index> <model>`.
pub fn read_gpu_telemetry(path: &Path) -> Result<GpuFields> {
    #[derive(Deserialize)]
    struct GpuSample {
        timestamp_ns: u64,
        #[serde(default)]
        gpu_index: Option<u64>,
        // The aliases read the files of our releases before AIPerf 0.13's shape.
        #[serde(default, alias = "gpu_name")]
        gpu_model_name: Option<String>,
        #[serde(default, alias = "metrics")]
        telemetry_data: BTreeMap<String, Option<f64>>,
    }
    let mut fields = GpuFields::new();
    for_each_line(path, |sample: GpuSample| {
        let gpu = format!("GPU {} {}", sample.gpu_index.unwrap_or(0), sample.gpu_model_name.unwrap_or_default());
        for (field, value) in sample.telemetry_data {
            if let Some(value) = value {
                fields
                    .entry(field)
                    .or_default()
                    .entry(gpu.trim().to_string())
                    .or_default()
                    .push((sample.timestamp_ns, value));
            }
        }
    })?;
    Ok(fields)
}

fn for_each_line<T: serde::de::DeserializeOwned>(path: &Path, mut take: impl FnMut(T)) -> Result<()> {
    let file = std::fs::File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    for (index, line) in std::io::BufReader::new(file).lines().enumerate() {
        let line = line.with_context(|| format!("cannot read {} line {}", path.display(), index + 1))?;
        if !line.trim().is_empty() {
            take(serde_json::from_str(&line).with_context(|| format!("{} line {}", path.display(), index + 1))?);
        }
    }
    Ok(())
}

/// The buckets of several label sets added up, by upper bound (`+Inf` last).
fn summed_buckets(histograms: &[&BTreeMap<String, f64>]) -> Vec<(f64, f64)> {
    let mut sums: Vec<(f64, f64)> = Vec::new();
    for histogram in histograms {
        for (bound, count) in *histogram {
            let bound = if bound == "+Inf" { f64::INFINITY } else { bound.parse().unwrap_or(f64::NAN) };
            match sums.iter_mut().find(|(b, _)| *b == bound) {
                Some(entry) => entry.1 += count,
                None if !bound.is_nan() => sums.push((bound, *count)),
                None => {}
            }
        }
    }
    sums.sort_by(|a, b| a.0.total_cmp(&b.0));
    sums
}

/// The `quantile` of the observations between two scrapes of a cumulative histogram, by
/// linear interpolation inside the bucket that holds it (as Prometheus' histogram_quantile);
/// `None` when nothing was observed between them.
pub fn windowed_quantile(before: &[(f64, f64)], after: &[(f64, f64)], quantile: f64) -> Option<f64> {
    let counts: Vec<(f64, f64)> = after
        .iter()
        .map(|(bound, count)| {
            let earlier = before.iter().find(|(b, _)| b == bound).map_or(0.0, |(_, c)| *c);
            (*bound, (count - earlier).max(0.0))
        })
        .collect();
    let total = counts.last()?.1;
    if total <= 0.0 {
        return None;
    }
    let rank = quantile * total;
    let mut lower = (0.0, 0.0);
    for &(bound, cumulative) in &counts {
        if cumulative >= rank {
            if !bound.is_finite() {
                return Some(lower.0);
            }
            let inside = cumulative - lower.1;
            let fraction = if inside > 0.0 { (rank - lower.1) / inside } else { 1.0 };
            return Some(lower.0 + (bound - lower.0) * fraction);
        }
        lower = (bound, cumulative);
    }
    Some(lower.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scrapes_become_timelines_with_label_sets_summed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("server_metrics_export.jsonl");
        std::fs::write(
            &path,
            concat!(
                r#"{"timestamp_ns":2,"metrics":{"running":[{"labels":{"m":"a"},"value":3.0},{"labels":{"m":"b"},"value":4.0}],"ttft":[{"buckets":{"0.1":1.0,"+Inf":2.0},"sum":1.0,"count":2.0}]}}"#,
                "\n",
                r#"{"timestamp_ns":1,"metrics":{"running":[{"value":1.0}]}}"#,
                "\n"
            ),
        )
        .unwrap();
        let timelines = read_server_metrics(&path).unwrap();
        assert_eq!(timelines["running"], vec![(1, Sample::Value(1.0)), (2, Sample::Value(7.0))]);
        assert_eq!(timelines["ttft"], vec![(2, Sample::Buckets(vec![(0.1, 1.0), (f64::INFINITY, 2.0)]))]);
    }

    #[test]
    fn quantiles_come_from_the_window_between_scrapes() {
        let before = [(1.0, 10.0), (2.0, 10.0), (f64::INFINITY, 10.0)];
        let after = [(1.0, 10.0), (2.0, 20.0), (f64::INFINITY, 20.0)];
        // All 10 new observations fell in (1, 2]: the median is half-way through.
        assert_eq!(windowed_quantile(&before, &after, 0.5), Some(1.5));
        assert_eq!(windowed_quantile(&after, &after, 0.5), None);
    }

    #[test]
    fn gpu_samples_are_kept_per_field_and_gpu() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("gpu_telemetry_export.jsonl");
        std::fs::write(
            &path,
            r#"{"gpu_index":1,"gpu_model_name":"H100","timestamp_ns":5,"telemetry_data":{"nvidia_gpu_utilization":80.0,"power":null}}"#,
        )
        .unwrap();
        let fields = read_gpu_telemetry(&path).unwrap();
        assert_eq!(fields["nvidia_gpu_utilization"]["GPU 1 H100"], vec![(5, 80.0)]);
        std::fs::write(
            &path,
            r#"{"timestamp_ns":5,"gpu_index":0,"gpu_name":"A100","metrics":{"gpu_utilization":7.0}}"#,
        )
        .unwrap();
        assert_eq!(read_gpu_telemetry(&path).unwrap()["gpu_utilization"]["GPU 0 A100"], vec![(5, 7.0)]);
        assert!(!fields.contains_key("power"));
    }
}
