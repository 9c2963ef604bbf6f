//! The HTTP-trace breakdown (k6's phases of a request: blocked, DNS, connecting, TLS, sending,
//! waiting, receiving) as stacked bars: a run's average and percentiles, or every run's
//! average side by side.

use super::artifacts::RunArtifacts;
use super::chart::{Chart, ChartBody};
use super::variations;

const PARTS: [(&str, &str); 7] = [
    ("http_req_blocked", "blocked"),
    ("http_req_dns_lookup", "DNS"),
    ("http_req_connecting", "connecting"),
    ("http_req_tls_handshaking", "TLS"),
    ("http_req_sending", "sending"),
    ("http_req_waiting", "waiting"),
    ("http_req_receiving", "receiving"),
];
const STATS: [&str; 4] = ["avg", "p50", "p90", "p99"];

/// One run's bars (avg, p50, p90, p99); `None` when it has no trace metrics.
pub fn run_chart(run: &RunArtifacts, id_prefix: &str) -> Option<Chart> {
    let columns: Vec<(String, Vec<&RunArtifacts>, &str)> =
        STATS.iter().map(|s| (s.to_string(), vec![run], *s)).collect();
    chart(&format!("{id_prefix}http-trace"), "HTTP trace breakdown", &columns)
}

/// Every variation's average side by side (its trials' mean); `None` when none has trace
/// metrics.
pub fn comparison_chart(runs: &[RunArtifacts]) -> Option<Chart> {
    let columns: Vec<(String, Vec<&RunArtifacts>, &str)> =
        variations::group(runs).into_iter().map(|v| (v.label, v.trials, "avg")).collect();
    chart("compare-http-trace", "HTTP trace breakdown (average per run)", &columns)
}

/// Stacked bars, one per column: (label, the runs whose mean it draws, statistic).
fn chart(id: &str, title: &str, columns: &[(String, Vec<&RunArtifacts>, &str)]) -> Option<Chart> {
    let mean = |runs: &[&RunArtifacts], metric: &str, stat: &str| {
        let values: Vec<f64> = runs.iter().filter_map(|run| run.stat(metric, stat)).collect();
        variations::estimate(&values, variations::DEFAULT_CONFIDENCE).map_or(0.0, |e| e.mean)
    };
    let layers: Vec<(String, Vec<f64>)> = PARTS
        .iter()
        .map(|(metric, name)| {
            (name.to_string(), columns.iter().map(|(_, runs, stat)| mean(runs, metric, stat)).collect())
        })
        .collect();
    if layers.iter().all(|(_, values)| values.iter().all(|v| *v <= 0.0)) {
        return None;
    }
    Some(Chart {
        body: ChartBody::StackedBars { categories: columns.iter().map(|c| c.0.clone()).collect(), layers },
        ..Chart::xy(id, title, "", "ms", Vec::new())
    })
}
