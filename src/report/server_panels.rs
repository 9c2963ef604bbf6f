//! Server metrics and GPU telemetry over time: a gauge as its value, a counter as its rate
//! per second, a histogram as p50/p99 estimates of the observations between scrapes, and one
//! panel per GPU field with a line per GPU.

use super::artifacts::RunArtifacts;
use super::chart::{Chart, Series, Style};
use super::scrapes::{Sample, Timeline, windowed_quantile};
use super::time_axis::TimeAxis;
use crate::telemetry::fields::GpuField;

/// Panels drawn at most, server metrics and GPU fields each (the first by name).
const MAX_PANELS: usize = 24;
const TIME: &str = "time since the first phase started (s)";

pub fn server_charts(run: &RunArtifacts, axis: &TimeAxis, id_prefix: &str) -> Vec<Chart> {
    let mut charts: Vec<Chart> = run
        .server_metrics
        .iter()
        .filter_map(|(name, timeline)| {
            let (unit, series) = series_of(name, timeline, axis)?;
            let mut chart = Chart::xy(&format!("{id_prefix}server-{}", file_safe(name)), name, TIME, &unit, series);
            chart.marks = axis.marks.clone();
            Some(chart)
        })
        .filter(|c| !c.is_empty())
        .collect();
    charts.truncate(MAX_PANELS);
    charts
}

/// The GPU panels in AIPerf's field order (power first), fields it does not know last.
pub fn gpu_charts(run: &RunArtifacts, axis: &TimeAxis, id_prefix: &str) -> Vec<Chart> {
    let mut fields: Vec<_> = run.gpu.iter().collect();
    fields
        .sort_by_key(|(field, _)| GpuField::ALL.iter().position(|f| f.name() == field.as_str()).unwrap_or(usize::MAX));
    let mut charts: Vec<Chart> = fields
        .into_iter()
        .map(|(field, gpus)| {
            let series = gpus
                .iter()
                .map(|(gpu, samples)| {
                    Series::new(
                        gpu.clone(),
                        Style::Line,
                        samples.iter().map(|(at, v)| (axis.seconds(*at), *v)).collect(),
                    )
                })
                .collect();
            let known = GpuField::from_name(field);
            let title = known.map_or(field.as_str(), |f| f.display());
            let unit = known.map_or(field.as_str(), |f| f.unit());
            let mut chart = Chart::xy(&format!("{id_prefix}gpu-{}", file_safe(field)), title, TIME, unit, series);
            chart.marks = axis.marks.clone();
            chart
        })
        .filter(|c| !c.is_empty())
        .collect();
    charts.truncate(MAX_PANELS);
    charts
}

/// A name with every character that is not a letter, digit or `-` as `-`.
pub fn file_safe(name: &str) -> String {
    name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '-' }).collect()
}

/// A counter only grows and is named like one.
fn is_counter(name: &str, values: &[f64]) -> bool {
    let named = name.ends_with("_total") || name.ends_with("_tokens") || name.ends_with("_count");
    named && values.windows(2).all(|w| w[1] >= w[0])
}

/// The unit and the series drawn for one metric; `None` when it has fewer than two scrapes.
fn series_of(name: &str, timeline: &Timeline, axis: &TimeAxis) -> Option<(String, Vec<Series>)> {
    if timeline.len() < 2 {
        return None;
    }
    let values: Vec<(u64, f64)> = timeline
        .iter()
        .filter_map(|(at, sample)| match sample {
            Sample::Value(v) => Some((*at, *v)),
            Sample::Buckets(_) => None,
        })
        .collect();
    if values.len() == timeline.len() {
        let plain: Vec<f64> = values.iter().map(|(_, v)| *v).collect();
        if is_counter(name, &plain) {
            let rates = values
                .windows(2)
                .filter(|w| w[1].0 > w[0].0)
                .map(|w| (axis.seconds(w[1].0), (w[1].1 - w[0].1) / ((w[1].0 - w[0].0) as f64 / 1e9)))
                .collect();
            return Some(("per second".into(), vec![Series::new("rate", Style::Line, rates)]));
        }
        let points = values.iter().map(|(at, v)| (axis.seconds(*at), *v)).collect();
        return Some(("value".into(), vec![Series::new("value", Style::Line, points)]));
    }
    let histograms: Vec<(u64, &Vec<(f64, f64)>)> = timeline
        .iter()
        .filter_map(|(at, sample)| match sample {
            Sample::Buckets(buckets) => Some((*at, buckets)),
            Sample::Value(_) => None,
        })
        .collect();
    let estimate = |quantile: f64| -> Vec<(f64, f64)> {
        histograms
            .windows(2)
            .filter_map(|w| windowed_quantile(w[0].1, w[1].1, quantile).map(|q| (axis.seconds(w[1].0), q)))
            .collect()
    };
    let unit = if name.ends_with("_seconds") { "seconds" } else { "value" };
    Some((
        format!("{unit} (estimate between scrapes)"),
        vec![Series::new("p50", Style::Line, estimate(0.5)), Series::new("p99", Style::Line, estimate(0.99))],
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_become_rates_and_gauges_stay_values() {
        let axis = TimeAxis { zero_ns: 0, marks: Vec::new() };
        let counter: Timeline = vec![(0, Sample::Value(0.0)), (1_000_000_000, Sample::Value(50.0))];
        let (unit, series) = series_of("vllm:generation_tokens", &counter, &axis).unwrap();
        assert_eq!(unit, "per second");
        assert_eq!(series[0].points, vec![(1.0, 50.0)]);
        let gauge: Timeline = vec![(0, Sample::Value(3.0)), (500_000_000, Sample::Value(1.0))];
        let (unit, series) = series_of("vllm:num_requests_running", &gauge, &axis).unwrap();
        assert_eq!(unit, "value");
        assert_eq!(series[0].points, vec![(0.0, 3.0), (0.5, 1.0)]);
        assert!(series_of("one", &gauge[..1].to_vec(), &axis).is_none());
    }

    #[test]
    fn each_gpu_field_is_a_panel_with_a_line_per_gpu() {
        let mut gpus = std::collections::BTreeMap::new();
        gpus.insert("GPU 0 H100".to_string(), vec![(1_000_000_000, 50.0), (2_000_000_000, 70.0)]);
        gpus.insert("GPU 1 H100".to_string(), vec![(1_000_000_000, 10.0)]);
        let run = RunArtifacts {
            label: "r".into(),
            dir: Default::default(),
            summary: serde_json::json!({}),
            records: Default::default(),
            server_metrics: Default::default(),
            gpu: [("nvidia_gpu_utilization".to_string(), gpus.clone()), ("nvidia_power_usage".to_string(), gpus)]
                .into_iter()
                .collect(),
        };
        let axis = TimeAxis { zero_ns: 1_000_000_000, marks: Vec::new() };
        let charts = gpu_charts(&run, &axis, "run1-");
        assert_eq!(charts.len(), 2);
        assert_eq!(charts[0].id, "run1-gpu-nvidia-power-usage", "AIPerf's order: power first");
        assert_eq!(charts[1].id, "run1-gpu-nvidia-gpu-utilization");
        assert_eq!((charts[1].title.as_str(), charts[1].y_label.as_str()), ("NVIDIA GPU Utilization", "%"));
        let crate::report::chart::ChartBody::Xy(series) = &charts[1].body else { panic!("not an x-y chart") };
        assert_eq!(series.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(), ["GPU 0 H100", "GPU 1 H100"]);
        assert_eq!(series[0].points, vec![(0.0, 50.0), (1.0, 70.0)]);
    }
}
