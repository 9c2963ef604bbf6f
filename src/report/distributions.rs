//! Distributions of one run: a histogram and a CDF each of TTFT, ITL, request latency, ISL
//! and OSL, from the run's records (their sample, for a large run: the title says so).

use super::artifacts::RunArtifacts;
use super::chart::{Chart, Series, Style};
use super::downsample;
use super::record_row::RecordRow;

const BINS: usize = 40;
const CDF_POINTS: usize = 200;

/// The metrics drawn: (id, title, unit, the record's value).
type Pick = fn(&RecordRow) -> Option<f64>;
const METRICS: [(&str, &str, &str, Pick); 5] = [
    ("ttft", "Time to first token", "ms", |r| r.ttft_ms),
    ("itl", "Inter-token latency", "ms", |r| r.itl_ms),
    ("latency", "Request latency", "ms", |r| r.latency_ms),
    ("isl", "Input sequence length", "tokens", |r| r.isl),
    ("osl", "Output sequence length", "tokens", |r| r.osl),
];

/// A histogram and a CDF per metric that the run's records hold.
pub fn charts(run: &RunArtifacts, id_prefix: &str) -> Vec<Chart> {
    let note = run.records.sample_note();
    let mut charts = Vec::new();
    for (id, title, unit, pick) in METRICS {
        let values: Vec<f64> = run.records.rows().iter().filter_map(pick).collect();
        if values.is_empty() {
            continue;
        }
        let (bins, width) = downsample::histogram(&values, BINS);
        charts.push(Chart::xy(
            &format!("{id_prefix}{id}-histogram"),
            &format!("{title}: histogram{note}"),
            unit,
            "requests",
            vec![Series::new("requests", Style::Columns { width }, bins)],
        ));
        let cdf = downsample::cdf(&values, CDF_POINTS).into_iter().map(|(v, f)| (v, f * 100.0)).collect();
        charts.push(Chart::xy(
            &format!("{id_prefix}{id}-cdf"),
            &format!("{title}: CDF{note}"),
            unit,
            "% of requests at or below",
            vec![Series::new("CDF", Style::Line, cdf)],
        ));
    }
    charts
}
