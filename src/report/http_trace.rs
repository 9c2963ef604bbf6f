//! The HTTP-trace breakdown (k6's phases of a request: blocked, DNS, connecting, TLS, sending,
//! waiting, receiving) as stacked bars: a run's average and percentiles, or every run's
//! average side by side.

use super::artifacts::RunArtifacts;
use super::chart::{Chart, ChartBody};

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
    let columns: Vec<(String, &RunArtifacts, &str)> = STATS.iter().map(|s| (s.to_string(), run, *s)).collect();
    chart(&format!("{id_prefix}http-trace"), "HTTP trace breakdown", &columns)
}

/// Every run's average side by side; `None` when none has trace metrics.
pub fn comparison_chart(runs: &[RunArtifacts]) -> Option<Chart> {
    let columns: Vec<(String, &RunArtifacts, &str)> = runs.iter().map(|r| (r.label.clone(), r, "avg")).collect();
    chart("compare-http-trace", "HTTP trace breakdown (average per run)", &columns)
}

fn chart(id: &str, title: &str, columns: &[(String, &RunArtifacts, &str)]) -> Option<Chart> {
    let layers: Vec<(String, Vec<f64>)> = PARTS
        .iter()
        .map(|(metric, name)| {
            (name.to_string(), columns.iter().map(|(_, run, stat)| run.stat(metric, stat).unwrap_or(0.0)).collect())
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
