//! AMD device-metrics-exporter text → GPU samples: one sample per `gpu_id` label, its
//! `gpu_*` metrics mapped onto AIPerf's `amd_*` fields (the fields its amdsmi collector fills).

use std::collections::BTreeMap;

use super::fields::{GpuField, MIB_BYTES};
use super::sample::GpuSample;
use crate::server_metrics::parse::{Scrape, SeriesValue};

/// The field an exporter metric fills, the factor from the exporter's unit to the field's,
/// and its rank among the metrics filling the same field (0 wins): power as AIPerf's amdsmi
/// collector prefers it, the junction temperature before the edge one (MI2xx has no junction).
fn from_amd_exporter(metric: &str) -> Option<(GpuField, f64, u8)> {
    Some(match metric {
        "gpu_power_usage" => (GpuField::AmdPower, 1.0, 0),
        "gpu_package_power" => (GpuField::AmdPower, 1.0, 1),
        "gpu_average_package_power" => (GpuField::AmdPower, 1.0, 2),
        // µJ → MJ
        "gpu_energy_consumed" => (GpuField::AmdEnergyConsumption, 1e-12, 0),
        "gpu_gfx_activity" => (GpuField::AmdGfxActivity, 1.0, 0),
        "gpu_umc_activity" => (GpuField::AmdUmcActivity, 1.0, 0),
        "gpu_mma_activity" => (GpuField::AmdMmActivity, 1.0, 0),
        // MB (MiB, as amd-smi counts them) → GB
        "gpu_used_vram" => (GpuField::AmdMemoryUsed, MIB_BYTES / 1e9, 0),
        "gpu_junction_temperature" => (GpuField::AmdTemperature, 1.0, 0),
        "gpu_edge_temperature" => (GpuField::AmdTemperature, 1.0, 1),
        "gpu_ecc_uncorrect_total" => (GpuField::AmdEccUncorrectable, 1.0, 0),
        _ => return None,
    })
}

/// Each field's value with the rank of the metric that gave it.
type RankedValues = BTreeMap<GpuField, (u8, f64)>;

fn label<'a>(labels: &'a [(String, String)], name: &str) -> Option<&'a str> {
    labels.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str()).filter(|v| !v.is_empty())
}

/// The samples of one exporter scrape taken at `timestamp_ns` (none when the page has no
/// AMD GPU metric).
pub fn samples_of(scrape: &Scrape, source: &str, timestamp_ns: u64) -> Vec<GpuSample> {
    let mut gpus: BTreeMap<u32, (GpuSample, RankedValues)> = BTreeMap::new();
    for family in &scrape.families {
        let Some((field, scale, rank)) = from_amd_exporter(&family.name) else { continue };
        for series in &family.series {
            let SeriesValue::Scalar(value) = series.value else { continue };
            let labels = &series.labels;
            let Some(index) = label(labels, "gpu_id").and_then(|g| g.parse::<u32>().ok()) else { continue };
            let (_, values) = gpus.entry(index).or_insert_with(|| {
                let uuid = label(labels, "gpu_uuid").or_else(|| label(labels, "serial_number"));
                let sample = GpuSample {
                    source: source.to_string(),
                    gpu_index: index,
                    gpu_uuid: uuid.map_or_else(|| format!("amd-gpu-{index}"), str::to_string),
                    gpu_name: label(labels, "card_series")
                        .or_else(|| label(labels, "card_model"))
                        .unwrap_or_default()
                        .to_string(),
                    pci_bus_id: None,
                    device: Some(format!("amd{index}")),
                    hostname: label(labels, "hostname").unwrap_or_default().to_string(),
                    timestamp_ns,
                    values: Vec::new(),
                };
                (sample, RankedValues::new())
            });
            let better = values.get(&field).is_none_or(|(held, _)| rank < *held);
            if value.is_finite() && better {
                values.insert(field, (rank, value * scale));
            }
        }
    }
    gpus.into_values()
        .filter(|(_, values)| !values.is_empty())
        .map(|(mut sample, values)| {
            sample.values = values.into_iter().map(|(field, (_, value))| (field, value)).collect();
            sample
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server_metrics::parse::parse;
    use crate::telemetry::fields::Vendor;

    const FIRST: &str = include_str!("../../tests/fixtures/amd_exporter_mi300x_a.prom");
    const SECOND: &str = include_str!("../../tests/fixtures/amd_exporter_mi300x_b.prom");

    #[test]
    fn exporter_names_map_onto_the_amd_fields_per_gpu() {
        let samples = samples_of(&parse(FIRST), "http://h:5000/metrics", 7);
        assert_eq!(samples.len(), 2, "gpu_nodes_total has no gpu_id and makes no GPU");
        let gpu1 = &samples[1];
        assert_eq!((gpu1.gpu_index, gpu1.vendor()), (1, Vendor::Amd));
        assert_eq!(gpu1.gpu_uuid, "93ff74a1-0000-1000-8046-0f9b7c3d2e02");
        assert_eq!(gpu1.gpu_name, "AMD Instinct MI300X OAM");
        assert_eq!((gpu1.hostname.as_str(), gpu1.device.as_deref()), ("mi300x-node-07", Some("amd1")));
        let value = |f: GpuField| gpu1.value(f);
        assert_eq!(value(GpuField::AmdPower), Some(315.5), "gpu_power_usage before gpu_package_power");
        assert!((value(GpuField::AmdEnergyConsumption).unwrap() - 188.765432).abs() < 1e-9);
        assert_eq!(value(GpuField::AmdGfxActivity), Some(41.0));
        assert_eq!(value(GpuField::AmdUmcActivity), Some(18.0));
        assert!((value(GpuField::AmdMemoryUsed).unwrap() - 149_876.0 * MIB_BYTES / 1e9).abs() < 1e-9);
        assert_eq!(value(GpuField::AmdTemperature), Some(59.0), "the junction, not the memory temperature");
        assert_eq!(value(GpuField::AmdEccUncorrectable), Some(2.0));
        assert_eq!(value(GpuField::AmdMmActivity), None);
        assert!(gpu1.values.iter().all(|(field, _)| field.vendor() == Vendor::Amd));
    }

    #[test]
    fn the_energy_counter_grows_between_the_recorded_scrapes_by_power_times_a_second() {
        let (first, second) = (samples_of(&parse(FIRST), "s", 0), samples_of(&parse(SECOND), "s", 1));
        for (a, b) in first.iter().zip(&second) {
            let grown_j = (b.value(GpuField::AmdEnergyConsumption).unwrap()
                - a.value(GpuField::AmdEnergyConsumption).unwrap())
                * 1e6;
            assert!((grown_j - a.value(GpuField::AmdPower).unwrap()).abs() < 1e-3, "{grown_j}");
        }
    }

    #[test]
    fn a_dcgm_page_or_a_gpu_without_an_id_gives_no_amd_sample() {
        let dcgm = include_str!("../../tests/fixtures/dcgm_two_gpus.prom");
        assert!(samples_of(&parse(dcgm), "s", 0).is_empty());
        let partial = "gpu_power_usage{hostname=\"h\"} 300\ngpu_power_usage{gpu_id=\"x\"} 300\n\
                       gpu_gfx_activity{gpu_id=\"3\"} 12\n";
        let samples = samples_of(&parse(partial), "s", 0);
        assert_eq!(samples.len(), 1);
        assert_eq!((samples[0].gpu_index, samples[0].gpu_uuid.as_str()), (3, "amd-gpu-3"));
    }
}
