//! `telemetry_data` of profile_export_aiperf.json: per source, per GPU, the stats of each
//! field over the profiling window (avg, min, max, std, p1…p99, unit).

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use super::collector::TelemetryCollected;
use super::fields::GpuField;
use crate::metrics::stats::distribution;

/// The `telemetry_data` block; `start_ns`/`end_ns` bound the profiling window (epoch ns).
pub fn telemetry_data(
    collected: &TelemetryCollected,
    start_ns: u64,
    end_ns: u64,
    iso: impl Fn(u64) -> String,
) -> Value {
    let mut endpoints: BTreeMap<&str, BTreeMap<u32, Vec<&super::sample::GpuSample>>> = BTreeMap::new();
    for sample in collected.samples.iter().filter(|s| s.timestamp_ns >= start_ns) {
        endpoints.entry(sample.source.as_str()).or_default().entry(sample.gpu_index).or_default().push(sample);
    }
    let mut endpoints_json = Map::new();
    for (source, gpus) in endpoints {
        let mut gpus_json = Map::new();
        for (index, samples) in gpus {
            let Some(first) = samples.first() else { continue };
            let mut metrics = Map::new();
            for field in GpuField::ALL {
                let values: Vec<f64> = samples
                    .iter()
                    .flat_map(|s| s.values.iter().filter(|(f, _)| *f == field).map(|(_, v)| *v))
                    .collect();
                let Some(stats) = distribution(&values) else { continue };
                metrics.insert(
                    field.name().into(),
                    json!({
                        "avg": stats.avg, "min": stats.min, "max": stats.max, "std": stats.std,
                        "p1": stats.p1, "p5": stats.p5, "p10": stats.p10, "p25": stats.p25, "p50": stats.p50,
                        "p75": stats.p75, "p90": stats.p90, "p95": stats.p95, "p99": stats.p99,
                        "unit": field.unit(),
                    }),
                );
            }
            gpus_json.insert(
                format!("gpu_{index}"),
                json!({
                    "gpu_index": index,
                    "gpu_name": first.gpu_name,
                    "gpu_uuid": first.gpu_uuid,
                    "hostname": first.hostname,
                    "metrics": metrics,
                }),
            );
        }
        endpoints_json.insert(source.to_string(), json!({ "gpus": gpus_json }));
    }
    json!({
        "summary": {
            "endpoints_configured": collected.configured,
            "endpoints_successful": collected.successful,
            "start_time": iso(start_ns),
            "end_time": iso(end_ns),
        },
        "endpoints": endpoints_json,
        "error_summary": [],
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::telemetry::sample::GpuSample;

    fn sample(at: u64, watts: f64) -> GpuSample {
        GpuSample {
            source: "http://h:9400/metrics".into(),
            gpu_index: 0,
            gpu_uuid: "GPU-a".into(),
            gpu_name: "H100".into(),
            hostname: "node".into(),
            timestamp_ns: at,
            values: vec![(GpuField::GpuPowerUsage, watts)],
        }
    }

    #[test]
    fn stats_per_gpu_over_the_window_only() {
        let collected = TelemetryCollected {
            configured: vec!["http://h:9400/metrics".into()],
            successful: vec!["http://h:9400/metrics".into()],
            samples: vec![sample(5, 999.0), sample(10, 100.0), sample(20, 200.0), sample(30, 300.0)],
        };
        let data = telemetry_data(&collected, 10, 30, |ns| ns.to_string());
        let gpu = &data["endpoints"]["http://h:9400/metrics"]["gpus"]["gpu_0"];
        assert_eq!(gpu["gpu_name"], "H100");
        let power = &gpu["metrics"]["gpu_power_usage"];
        assert_eq!(power["avg"], 200.0);
        assert_eq!(power["max"], 300.0);
        assert_eq!(power["std"], 100.0);
        assert_eq!(power["unit"], "W");
        assert!(gpu["metrics"].get("gpu_temperature").is_none());
        assert_eq!(data["summary"]["start_time"], "10");
        assert_eq!(data["error_summary"], json!([]));
    }
}
