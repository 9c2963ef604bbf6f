//! DCGM exporter text → GPU samples: one sample per `gpu` label, with the DCGM_FI_* gauges
//! and counters mapped onto the telemetry fields.

use std::collections::BTreeMap;

use super::fields::from_dcgm;
use super::sample::GpuSample;
use crate::server_metrics::parse::{Scrape, SeriesValue};

fn label<'a>(labels: &'a [(String, String)], name: &str) -> Option<&'a str> {
    labels.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
}

/// The samples of one DCGM scrape taken at `timestamp_ns`.
pub fn samples_of(scrape: &Scrape, source: &str, timestamp_ns: u64) -> Vec<GpuSample> {
    let mut gpus: BTreeMap<u32, GpuSample> = BTreeMap::new();
    for family in &scrape.families {
        let Some((field, scale)) = from_dcgm(&family.name) else { continue };
        for series in &family.series {
            let SeriesValue::Scalar(value) = series.value else { continue };
            let Some(index) = label(&series.labels, "gpu").and_then(|g| g.parse::<u32>().ok()) else { continue };
            let gpu = gpus.entry(index).or_insert_with(|| GpuSample {
                source: source.to_string(),
                gpu_index: index,
                gpu_uuid: label(&series.labels, "UUID").unwrap_or_default().to_string(),
                gpu_name: label(&series.labels, "modelName").unwrap_or_default().to_string(),
                pci_bus_id: label(&series.labels, "pci_bus_id").map(str::to_string),
                device: label(&series.labels, "device").map(str::to_string),
                hostname: label(&series.labels, "Hostname").unwrap_or_default().to_string(),
                timestamp_ns,
                values: Vec::new(),
            });
            if value.is_finite() {
                gpu.values.push((field, value * scale));
            }
        }
    }
    gpus.into_values().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server_metrics::parse::parse;
    use crate::telemetry::fields::GpuField;

    const FIXTURE: &str = include_str!("../../tests/fixtures/dcgm_two_gpus.prom");

    #[test]
    fn dcgm_names_map_onto_fields_per_gpu() {
        let samples = samples_of(&parse(FIXTURE), "http://h:9400/metrics", 7);
        assert_eq!(samples.len(), 2);
        let gpu1 = &samples[1];
        assert_eq!(gpu1.gpu_index, 1);
        assert_eq!(gpu1.gpu_name, "NVIDIA H100 80GB HBM3");
        assert_eq!(gpu1.gpu_uuid, "GPU-bbbb");
        assert_eq!(gpu1.hostname, "node-a");
        assert_eq!(gpu1.pci_bus_id.as_deref(), Some("00000000:2A:00.0"));
        assert_eq!(gpu1.device.as_deref(), Some("nvidia1"));
        let value = |f: GpuField| gpu1.value(f);
        assert_eq!(value(GpuField::PowerUsage), Some(350.5));
        assert_eq!(value(GpuField::GpuUtilization), Some(87.0));
        assert!((value(GpuField::EnergyConsumption).unwrap() - 1.5).abs() < 1e-12);
        assert!((value(GpuField::MemoryUsed).unwrap() - 40960.0 * 1_048_576.0 / 1e9).abs() < 1e-9);
        assert_eq!(value(GpuField::Temperature), Some(61.0));
        assert_eq!(value(GpuField::XidErrors), Some(0.0));
    }
}
