//! profile_export_aiperf.csv in AIPerf's layout: a table of the metrics with a distribution
//! (record and time-weighted ones; a statistic a metric lacks is an empty cell), a blank line,
//! then a `Metric,Value` table of run-level values (rows sorted by tag), then AIPerf's GPU
//! telemetry table (its header alone when no GPU was watched). A run's scripted sessions add
//! their rows at the end of the first two tables (`sessions_csv.rs`).

use std::path::Path;

use anyhow::{Context, Result};

use super::sessions_csv::session_rows;
use crate::metric_result::Stats;
use crate::result::{MetricKind, MetricResult, RunResult};

const DISTRIBUTION_HEADER: [&str; 15] =
    ["Metric", "avg", "min", "max", "sum", "p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99", "std"];
const SCALAR_HEADER: [&str; 2] = ["Metric", "Value"];
/// Units AIPerf leaves out of the CSV's row labels.
const UNITS_NOT_SHOWN: [&str; 3] = ["", "requests", "count"];

pub fn write_summary_csv(result: &RunResult, path: &Path) -> Result<()> {
    let bytes = summary_csv(result).with_context(|| format!("cannot build {}", path.display()))?;
    std::fs::write(path, bytes).with_context(|| format!("cannot write {}", path.display()))
}

/// `Header (unit)`, or just the header for unitless, count-like metrics.
fn row_label(metric: &MetricResult) -> String {
    if UNITS_NOT_SHOWN.contains(&metric.unit) {
        metric.header.to_string()
    } else {
        format!("{} ({})", metric.header, metric.unit)
    }
}

fn two_decimals(value: Option<f64>) -> String {
    value.map(|v| format!("{v:.2}")).unwrap_or_default()
}

fn new_table() -> csv::Writer<Vec<u8>> {
    csv::WriterBuilder::new().terminator(csv::Terminator::CRLF).from_writer(Vec::new())
}

fn finish_table(table: csv::Writer<Vec<u8>>) -> Result<Vec<u8>> {
    table.into_inner().map_err(|e| anyhow::anyhow!("cannot finish a CSV table: {}", e.error()))
}

/// A row of the distributions' table: the label, then avg, min, max, sum and the percentiles.
fn distribution_row(label: String, s: &Stats) -> Vec<String> {
    let mut row = vec![label, two_decimals(Some(s.avg))];
    row.extend(
        [s.min, s.max, s.sum, s.p1, s.p5, s.p10, s.p25, s.p50, s.p75, s.p90, s.p95, s.p99, s.std].map(two_decimals),
    );
    row
}

/// The CSV file's bytes.
pub fn summary_csv(result: &RunResult) -> Result<Vec<u8>> {
    let mut by_tag: Vec<&MetricResult> = result.metrics.iter().collect();
    by_tag.sort_by_key(|m| m.tag);
    let (distributions, scalars): (Vec<&MetricResult>, Vec<&MetricResult>) =
        by_tag.into_iter().partition(|m| m.kind == MetricKind::Record || m.stats.p50.is_some());

    let (session_distributions, session_counts) = session_rows(result);

    let mut table = new_table();
    table.write_record(DISTRIBUTION_HEADER)?;
    let metric_rows = distributions.into_iter().map(|metric| (row_label(metric), &metric.stats));
    for (label, s) in metric_rows.chain(session_distributions.iter().map(|(label, s)| (label.clone(), s))) {
        table.write_record(distribution_row(label, s))?;
    }
    let mut bytes = finish_table(table)?;
    bytes.extend_from_slice(b"\r\n");

    let mut table = new_table();
    table.write_record(SCALAR_HEADER)?;
    for metric in scalars {
        table.write_record([row_label(metric), two_decimals(Some(metric.stats.avg))])?;
    }
    for (label, count) in session_counts {
        table.write_record([label, two_decimals(Some(count as f64))])?;
    }
    bytes.extend(finish_table(table)?);
    bytes.extend_from_slice(b"\r\n\r\n");
    bytes.extend(super::gpu_telemetry::gpu_table(result.telemetry_data.as_ref())?);
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::test_support::sample_result;

    #[test]
    fn both_tables_in_the_reference_layout() {
        let text = String::from_utf8(summary_csv(&sample_result()).unwrap()).unwrap();
        let expected = "Metric,avg,min,max,sum,p1,p5,p10,p25,p50,p75,p90,p95,p99,std\r\n\
            Request Latency (ms),25.00,10.00,40.00,100.00,10.30,11.50,13.00,17.50,25.00,32.50,37.00,38.50,39.70,11.18\r\n\
            Time to First Token (ms),1.50,1.00,2.00,3.00,1.01,1.05,1.10,1.25,1.50,1.75,1.90,1.95,1.99,0.50\r\n\
            \r\n\
            Metric,Value\r\n\
            Benchmark Duration (sec),2.00\r\n\
            Request Count,4.00\r\n\
            Request Throughput (requests/sec),2.00\r\n\
            \r\n\
            \r\n\
            Endpoint,GPU_Index,GPU_Name,GPU_UUID,Platform,Metric,avg,min,max,sum,p1,p5,p10,p25,p50,p75,p90,p95,p99,std\r\n";
        assert_eq!(text, expected);
    }

    #[test]
    fn watched_gpus_fill_the_gpu_table() {
        let mut result = sample_result();
        result.telemetry_data = Some(serde_json::json!({"endpoints": {"localhost": {"gpus": {"gpu_0": {
            "gpu_index": 0, "gpu_name": "H100", "gpu_uuid": "GPU-a", "platform": "nvidia",
            "metrics": {"nvidia_power_usage": {"unit": "W", "avg": 300.0, "min": 250.0, "max": 350.0, "p50": 301.0}},
        }}}}}));
        let text = String::from_utf8(summary_csv(&result).unwrap()).unwrap();
        let last_row =
            "localhost,0,H100,GPU-a,nvidia,NVIDIA GPU Power Usage (W),300.00,250.00,350.00,,,,,,301.00,,,,,\r\n";
        assert!(text.ends_with(&format!("\r\n\r\n\r\nEndpoint,GPU_Index,GPU_Name,GPU_UUID,Platform,Metric,avg,min,max,sum,p1,p5,p10,p25,p50,p75,p90,p95,p99,std\r\n{last_row}")), "{text}");
    }

    #[test]
    fn write_summaries_creates_the_folder_and_both_files() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("run/c8");
        crate::export::write_summaries(&sample_result(), &out).unwrap();
        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("profile_export_aiperf.json")).unwrap()).unwrap();
        assert_eq!(json["schema_version"], "1.4");
        assert!(
            std::fs::read_to_string(out.join("profile_export_aiperf.csv"))
                .unwrap()
                .contains("\r\n\r\nMetric,Value\r\n")
        );
    }

    #[test]
    fn errors_name_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let blocker = dir.path().join("not_a_dir");
        std::fs::write(&blocker, "x").unwrap();
        let err = crate::export::write_summaries(&sample_result(), &blocker).unwrap_err();
        assert!(format!("{err:#}").contains("not_a_dir"), "{err:#}");
    }
}
