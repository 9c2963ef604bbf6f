//! The console's GPU telemetry tables, as AIPerf prints them after the metrics: which
//! sources answered, then per GPU its fields with avg, min, max, p99, p90, p50 and std (a
//! counter has only its growth over the window, under avg), then each vendor's energy metrics.

use serde_json::Value;

use super::table::{COLUMNS, draw, draw_rows, format_number};
use crate::metrics::registry::{self, MetricFlags};
use crate::result::{MetricResult, RunResult};
use crate::telemetry::fields::{Vendor, row_label};
use crate::telemetry::summary::{endpoint_display, gpus_of};

/// Empty when no GPU was watched.
pub fn render(result: &RunResult) -> String {
    let mut out = gpu_tables(result);
    for vendor in Vendor::ALL {
        let prefix = format!("{}_", vendor.platform());
        let energy: Vec<&MetricResult> = result
            .metrics
            .iter()
            .filter(|m| m.tag.starts_with(&prefix))
            .filter(|m| registry::metric(m.tag).is_some_and(|d| d.has(MetricFlags::GPU_ENERGY)))
            .collect();
        if !energy.is_empty() {
            let title = format!("aiperf | GPU Power Efficiency ({}) | {}", vendor.display(), result.name);
            out.push_str(&draw(&title, &energy));
        }
    }
    out
}

/// The sources line, then a table per GPU.
fn gpu_tables(result: &RunResult) -> String {
    let Some(data) = &result.telemetry_data else { return String::new() };
    let mut out = String::new();
    for (endpoint, gpu) in gpus_of(data) {
        let rows: Vec<[String; 8]> = gpu["metrics"].as_object().into_iter().flatten().map(row).collect();
        if rows.is_empty() {
            continue;
        }
        if out.is_empty() {
            out.push_str(&sources_line(data));
        }
        let name = gpu["gpu_name"].as_str().unwrap_or("");
        let title = format!("aiperf | GPU Telemetry | {endpoint} | GPU {} | {name}", gpu["gpu_index"]);
        out.push_str(&draw_rows(&title, &rows));
    }
    out
}

/// `GPU telemetry: 1/2 sources reachable: localhost ✔, node2:9400 ✘ (unreachable)`
fn sources_line(data: &Value) -> String {
    let names = |key: &str| -> Vec<String> {
        data["summary"][key].as_array().into_iter().flatten().filter_map(|v| v.as_str().map(str::to_string)).collect()
    };
    let (configured, answered) = (names("endpoints_configured"), names("endpoints_successful"));
    let marks: Vec<String> = configured
        .iter()
        .map(|source| {
            let shown = endpoint_display(source);
            if answered.contains(source) { format!("{shown} ✔") } else { format!("{shown} ✘ (unreachable)") }
        })
        .collect();
    format!("GPU telemetry: {}/{} sources reachable: {}\n", answered.len(), configured.len(), marks.join(", "))
}

fn row((name, stats): (&String, &Value)) -> [String; 8] {
    let label = row_label(name);
    let mut cells: [String; 8] = Default::default();
    cells[0] = label;
    for (cell, column) in cells[1..].iter_mut().zip(COLUMNS) {
        *cell = stats[column].as_f64().map_or_else(|| "N/A".to_string(), format_number);
    }
    cells
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::test_support::sample_result;

    #[test]
    fn a_table_per_gpu_after_the_sources_line_and_nothing_without_gpus() {
        let mut result = sample_result();
        assert_eq!(render(&result), "");
        result.telemetry_data = Some(serde_json::json!({
            "summary": {
                "endpoints_configured": ["pynvml://localhost", "http://node2:9400/metrics"],
                "endpoints_successful": ["pynvml://localhost"],
            },
            "endpoints": {"localhost": {"gpus": {"gpu_0": {
                "gpu_index": 0, "gpu_name": "NVIDIA H100 80GB HBM3",
                "metrics": {
                    "nvidia_power_usage": {"unit": "W", "avg": 361.28, "min": 75.1, "max": 701.55, "p99": 701.47,
                        "p90": 698.58, "p50": 157.24, "std": 300.03},
                    "nvidia_energy_consumption": {"unit": "MJ", "avg": 0.0079},
                },
            }}}},
        }));
        let text = render(&result);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "GPU telemetry: 1/2 sources reachable: localhost ✔, node2:9400 ✘ (unreachable)");
        assert!(lines[1].contains("aiperf | GPU Telemetry | localhost | GPU 0 | NVIDIA H100 80GB HBM3"), "{text}");
        let power = lines.iter().find(|l| l.contains("NVIDIA GPU Power Usage (W)")).expect("power row");
        assert!(power.contains("361.28") && power.contains("701.55") && power.contains("300.03"), "{power}");
        let energy = lines.iter().find(|l| l.contains("NVIDIA Energy Consumption (MJ)")).expect("energy row");
        assert_eq!(energy.matches("N/A").count(), 6, "{energy}");
        assert!(energy.contains("0.01"), "{energy}");
        assert!(!text.contains("GPU Power Efficiency"), "no energy metrics, no table");

        result.metrics.push(registry::NVIDIA_TOTAL_GPU_ENERGY.result(crate::result::Stats::scalar(7_997.0)));
        let text = render(&result);
        assert!(text.contains("aiperf | GPU Power Efficiency (NVIDIA)"), "{text}");
        assert!(text.lines().any(|l| l.contains("Total GPU Energy (J)") && l.contains("7,997.00")), "{text}");
    }
}
