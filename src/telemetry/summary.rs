//! `telemetry_data` of profile_export_aiperf.json, as AIPerf 0.13 builds it: per source (its
//! URL without scheme and `/metrics`), per GPU, each field over the profiling window, a gauge
//! as its distribution and a counter as how much it grew.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use super::collector::TelemetryCollected;
use super::fields::GpuField;
use super::sample::GpuSample;
use crate::metric_result::Stats;
use crate::metrics::stats::sample_distribution;

/// The `telemetry_data` block; `start_ns`/`end_ns` bound the profiling window (epoch ns).
pub fn telemetry_data(
    collected: &TelemetryCollected,
    start_ns: u64,
    end_ns: u64,
    iso: impl Fn(u64) -> String,
) -> Value {
    // Sources in the order they first answered, GPUs by index.
    let mut sources: Vec<(&str, BTreeMap<u32, Vec<&GpuSample>>)> = Vec::new();
    for sample in &collected.samples {
        let at = match sources.iter().position(|(source, _)| *source == sample.source) {
            Some(at) => at,
            None => {
                sources.push((sample.source.as_str(), BTreeMap::new()));
                sources.len() - 1
            }
        };
        sources[at].1.entry(sample.gpu_index).or_default().push(sample);
    }
    let mut endpoints = Map::new();
    for (source, gpus) in sources {
        let mut gpus_json = Map::new();
        for (index, samples) in gpus {
            let Some(first) = samples.iter().find(|s| s.timestamp_ns >= start_ns) else { continue };
            let mut metrics = Map::new();
            for field in GpuField::ALL {
                if let Some(block) = field_block(field, &samples, start_ns) {
                    metrics.insert(field.name().into(), block);
                }
            }
            let mut gpu = json!({
                "gpu_index": index,
                "gpu_name": first.gpu_name,
                "gpu_uuid": first.gpu_uuid,
                "platform": first.vendor().platform(),
            });
            if !first.hostname.is_empty() {
                gpu["hostname"] = json!(first.hostname);
            }
            gpu["metrics"] = Value::Object(metrics);
            gpus_json.insert(format!("gpu_{index}"), gpu);
        }
        if !gpus_json.is_empty() {
            endpoints.insert(endpoint_display(source), json!({ "gpus": gpus_json }));
        }
    }
    json!({
        "summary": {
            "endpoints_configured": collected.configured,
            "endpoints_successful": collected.successful,
            "start_time": iso(start_ns),
            "end_time": iso(end_ns),
        },
        "endpoints": endpoints,
        "error_summary": [],
    })
}

/// Every GPU of a `telemetry_data` block with the source it is under, in their order.
pub fn gpus_of(telemetry_data: &Value) -> impl Iterator<Item = (&String, &Value)> {
    let endpoints = telemetry_data["endpoints"].as_object().into_iter().flatten();
    endpoints
        .flat_map(|(source, entry)| entry["gpus"].as_object().into_iter().flatten().map(move |(_, gpu)| (source, gpu)))
}

/// A gauge's stats over the samples from `start_ns` on; a counter's growth from the last
/// reading before the window (or its first inside) to its last, never below zero (a reset).
fn field_block(field: GpuField, samples: &[&GpuSample], start_ns: u64) -> Option<Value> {
    let readings: Vec<(u64, f64)> = samples.iter().filter_map(|s| Some((s.timestamp_ns, s.value(field)?))).collect();
    if field.is_counter() {
        let growth = counter_growth(&readings, start_ns, u64::MAX)?;
        return Some(Stats::scalar(growth).block(field.unit()));
    }
    let inside: Vec<f64> = readings.iter().filter(|(at, _)| *at >= start_ns).map(|(_, v)| *v).collect();
    Some(sample_distribution(&inside)?.block(field.unit()))
}

/// A counter's growth over `start_ns..=end_ns`: from its last reading before the window (or
/// its first inside) to its last inside, never below zero (a reset). `readings` are
/// `(epoch ns, value)` in time order; None without a reading inside.
pub fn counter_growth(readings: &[(u64, f64)], start_ns: u64, end_ns: u64) -> Option<f64> {
    let inside = || readings.iter().filter(|(at, _)| (start_ns..=end_ns).contains(at));
    let last = inside().next_back()?.1;
    let before = readings.iter().rev().find(|(at, _)| *at < start_ns);
    let baseline = before.or_else(|| inside().next())?.1;
    Some((last - baseline).max(0.0))
}

/// How AIPerf names a source: its URL without the scheme and a trailing `/metrics`
/// (`http://node1:9400/metrics` → `node1:9400`, `pynvml://localhost` → `localhost`).
pub fn endpoint_display(source: &str) -> String {
    let rest = source.split_once("://").map_or(source, |(_, rest)| rest);
    let rest = rest.split(['?', '#']).next().unwrap_or(rest);
    let (authority, path) = rest.find('/').map_or((rest, ""), |at| rest.split_at(at));
    format!("{authority}{}", path.strip_suffix("/metrics").unwrap_or(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    const URL: &str = "http://h:9400/metrics";

    fn sample(at: u64, values: Vec<(GpuField, f64)>) -> GpuSample {
        GpuSample {
            source: URL.into(),
            gpu_index: 0,
            gpu_uuid: "GPU-a".into(),
            gpu_name: "H100".into(),
            pci_bus_id: None,
            device: None,
            hostname: "node".into(),
            timestamp_ns: at,
            values,
        }
    }

    fn data(samples: Vec<GpuSample>) -> Value {
        let collected = TelemetryCollected { configured: vec![URL.into()], successful: vec![URL.into()], samples };
        telemetry_data(&collected, 10, 30, |ns| ns.to_string())
    }

    #[test]
    fn gauges_are_distributions_over_the_window_only() {
        let power = |w| vec![(GpuField::PowerUsage, w)];
        let data = data(vec![
            sample(5, power(999.0)),
            sample(10, power(100.0)),
            sample(20, power(200.0)),
            sample(30, power(300.0)),
        ]);
        let gpu = &data["endpoints"]["h:9400"]["gpus"]["gpu_0"];
        assert_eq!(gpu["gpu_name"], "H100");
        assert_eq!(gpu["platform"], "nvidia");
        let block = &gpu["metrics"]["nvidia_power_usage"];
        let keys: Vec<&str> = block.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "unit", "avg", "p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99", "min", "max", "std",
                "count", "sum"
            ]
        );
        assert_eq!((block["avg"].as_f64(), block["max"].as_f64()), (Some(200.0), Some(300.0)));
        assert_eq!((block["std"].as_f64(), block["count"].as_u64()), (Some(100.0), Some(3)));
        assert_eq!(block["unit"], "W");
        assert!(gpu["metrics"].get("nvidia_temperature").is_none());
        assert_eq!(data["summary"]["start_time"], "10");
        assert_eq!(data["error_summary"], json!([]));
    }

    #[test]
    fn counters_are_their_growth_from_the_last_reading_before_the_window() {
        let energy = |mj| vec![(GpuField::EnergyConsumption, mj)];
        let data = data(vec![
            sample(2, energy(1.0)),
            sample(8, energy(1.5)),
            sample(15, energy(2.0)),
            sample(25, energy(4.0)),
        ]);
        let block = &data["endpoints"]["h:9400"]["gpus"]["gpu_0"]["metrics"]["nvidia_energy_consumption"];
        assert_eq!(block, &json!({"unit": "MJ", "avg": 2.5}));
    }

    #[test]
    fn a_counter_without_an_earlier_reading_starts_from_its_first_and_a_reset_is_zero() {
        let xid = |n| vec![(GpuField::XidErrors, n)];
        let grew = data(vec![sample(12, xid(3.0)), sample(20, xid(5.0))]);
        assert_eq!(grew["endpoints"]["h:9400"]["gpus"]["gpu_0"]["metrics"]["nvidia_xid_errors"]["avg"], 2.0);
        let reset = data(vec![sample(5, xid(9.0)), sample(20, xid(1.0))]);
        assert_eq!(reset["endpoints"]["h:9400"]["gpus"]["gpu_0"]["metrics"]["nvidia_xid_errors"]["avg"], 0.0);
    }

    #[test]
    fn sources_are_named_as_aiperf_names_them() {
        assert_eq!(endpoint_display("http://node1:9400/metrics"), "node1:9400");
        assert_eq!(endpoint_display("https://host:9400/api/metrics"), "host:9400/api");
        assert_eq!(endpoint_display("pynvml://localhost"), "localhost");
        assert_eq!(endpoint_display("http://node1:9401/"), "node1:9401/");
    }
}
