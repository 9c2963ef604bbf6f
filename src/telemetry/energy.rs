//! AIPerf 0.13's GPU energy-efficiency metrics, one family per vendor (`nvidia_*`, `amd_*`:
//! `_total_gpu_energy`, `_energy_per_output_token`, `_output_tokens_per_joule`, …): a vendor's
//! GPUs' energy over the profiling window against the run's token, request and latency
//! totals. The energy is the energy counters' growth summed over the GPUs, or, when no GPU
//! counts energy, their summed mean power times the window.

use super::fields::Vendor;
use super::sample::GpuSample;
use super::summary::counter_growth;
use crate::metrics::registry::{self, MetricDef};
use crate::plan::{LoadMode, Plan};
use crate::result::{MetricResult, Stats};

/// Readings this long after the window still close its energy: the collector's last reading
/// lands up to an interval after the last response (AIPerf's `FINAL_SCRAPE_GRACE_NS`).
const END_GRACE_NS: u64 = 666_000_000;

/// What one vendor's GPUs drew over the profiling window.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VendorEnergy {
    pub vendor: Vendor,
    /// The GPUs' mean power readings in the window, summed, W; None without a reading.
    pub total_power_w: Option<f64>,
    /// The GPUs' energy counters' growth over the window, summed, J; None without a counter.
    pub counted_energy_j: Option<f64>,
}

/// What the GPUs drew over the profiling window, per vendor that reported.
#[derive(Debug, Clone, PartialEq)]
pub struct FleetEnergy {
    pub vendors: Vec<VendorEnergy>,
    pub duration_s: f64,
}

impl FleetEnergy {
    /// From every GPU reading and the profiling window (epoch ns).
    pub fn of(samples: &[GpuSample], start_ns: u64, end_ns: u64) -> Self {
        let mut gpus: Vec<(Vendor, &str, &str)> =
            samples.iter().map(|s| (s.vendor(), s.source.as_str(), s.gpu_uuid.as_str())).collect();
        gpus.sort_unstable();
        gpus.dedup();
        let mut vendors: Vec<VendorEnergy> = Vec::new();
        for (vendor, source, uuid) in gpus {
            let readings: Vec<&GpuSample> =
                samples.iter().filter(|s| s.source == source && s.gpu_uuid == uuid).collect();
            let series = |field| -> Vec<(u64, f64)> {
                readings.iter().filter_map(|s| Some((s.timestamp_ns, s.value(field)?))).collect()
            };
            if vendors.last().is_none_or(|v| v.vendor != vendor) {
                vendors.push(VendorEnergy { vendor, total_power_w: None, counted_energy_j: None });
            }
            let Some(drawn) = vendors.last_mut() else { continue };
            let power: Vec<f64> = series(vendor.power_field())
                .into_iter()
                .filter(|(at, _)| (start_ns..=end_ns).contains(at))
                .map(|(_, watts)| watts)
                .collect();
            if !power.is_empty() {
                *drawn.total_power_w.get_or_insert(0.0) += power.iter().sum::<f64>() / power.len() as f64;
            }
            let energy = series(vendor.energy_field());
            if let Some(growth) = counter_growth(&energy, start_ns, end_ns + END_GRACE_NS) {
                // MJ → J
                *drawn.counted_energy_j.get_or_insert(0.0) += growth * 1e6;
            }
        }
        Self { vendors, duration_s: end_ns.saturating_sub(start_ns) as f64 / 1e9 }
    }

    /// What `vendor`'s GPUs drew, if any reported.
    pub fn of_vendor(&self, vendor: Vendor) -> Option<&VendorEnergy> {
        self.vendors.iter().find(|v| v.vendor == vendor)
    }
}

impl VendorEnergy {
    /// The window's energy (J) and mean power (W): the counters' when they grew, else the
    /// power readings' times the window.
    fn energy_and_power(&self, duration_s: f64) -> Option<(f64, f64)> {
        if let Some(energy) = self.counted_energy_j.filter(|e| *e > 0.0) {
            let power = if duration_s > 0.0 { energy / duration_s } else { 0.0 };
            return Some((energy, power));
        }
        let power = self.total_power_w.filter(|p| *p > 0.0 && duration_s > 0.0)?;
        Some((power * duration_s, power))
    }
}

/// One vendor's twelve metrics.
struct VendorMetrics {
    total_power: &'static MetricDef,
    average_power: &'static MetricDef,
    total_energy: &'static MetricDef,
    output_tokens_per_joule: &'static MetricDef,
    energy_per_output_token: &'static MetricDef,
    energy_per_total_token: &'static MetricDef,
    energy_per_request: &'static MetricDef,
    energy_per_user: &'static MetricDef,
    energy_delay_product: &'static MetricDef,
    performance_per_watt: &'static MetricDef,
    output_tps_per_watt: &'static MetricDef,
    goodput_per_watt: &'static MetricDef,
}

impl VendorMetrics {
    fn of(vendor: Vendor) -> Self {
        match vendor {
            Vendor::Nvidia => Self {
                total_power: &registry::NVIDIA_TOTAL_GPU_POWER,
                average_power: &registry::NVIDIA_AVERAGE_GPU_POWER,
                total_energy: &registry::NVIDIA_TOTAL_GPU_ENERGY,
                output_tokens_per_joule: &registry::NVIDIA_OUTPUT_TOKENS_PER_JOULE,
                energy_per_output_token: &registry::NVIDIA_ENERGY_PER_OUTPUT_TOKEN,
                energy_per_total_token: &registry::NVIDIA_ENERGY_PER_TOTAL_TOKEN,
                energy_per_request: &registry::NVIDIA_ENERGY_PER_REQUEST,
                energy_per_user: &registry::NVIDIA_ENERGY_PER_USER,
                energy_delay_product: &registry::NVIDIA_ENERGY_DELAY_PRODUCT,
                performance_per_watt: &registry::NVIDIA_PERFORMANCE_PER_WATT,
                output_tps_per_watt: &registry::NVIDIA_OUTPUT_TPS_PER_WATT,
                goodput_per_watt: &registry::NVIDIA_GOODPUT_PER_WATT,
            },
            Vendor::Amd => Self {
                total_power: &registry::AMD_TOTAL_GPU_POWER,
                average_power: &registry::AMD_AVERAGE_GPU_POWER,
                total_energy: &registry::AMD_TOTAL_GPU_ENERGY,
                output_tokens_per_joule: &registry::AMD_OUTPUT_TOKENS_PER_JOULE,
                energy_per_output_token: &registry::AMD_ENERGY_PER_OUTPUT_TOKEN,
                energy_per_total_token: &registry::AMD_ENERGY_PER_TOTAL_TOKEN,
                energy_per_request: &registry::AMD_ENERGY_PER_REQUEST,
                energy_per_user: &registry::AMD_ENERGY_PER_USER,
                energy_delay_product: &registry::AMD_ENERGY_DELAY_PRODUCT,
                performance_per_watt: &registry::AMD_PERFORMANCE_PER_WATT,
                output_tps_per_watt: &registry::AMD_OUTPUT_TPS_PER_WATT,
                goodput_per_watt: &registry::AMD_GOODPUT_PER_WATT,
            },
        }
    }
}

/// The closed-loop users of the first results phase (a rate phase's concurrency cap), as
/// AIPerf takes its `concurrency` for the energy per user.
pub fn users_of(plan: &Plan) -> Option<u64> {
    let phase = plan.phases.iter().find(|p| p.results)?;
    match phase.mode {
        LoadMode::Concurrency { concurrency, .. } => Some(concurrency as u64),
        LoadMode::Rate { max_concurrency, .. } => max_concurrency.map(|n| n as u64),
        _ => None,
    }
    .filter(|n| *n > 0)
}

/// The run's metrics with the energy metrics among them, in the registry's order.
pub fn add_efficiency_metrics(metrics: &mut Vec<MetricResult>, fleet: &FleetEnergy, users: Option<u64>) {
    let energy: Vec<MetricResult> =
        fleet.vendors.iter().flat_map(|drawn| efficiency_metrics(drawn, fleet.duration_s, metrics, users)).collect();
    metrics.extend(energy);
    metrics.sort_by_key(|m| registry::metric(m.tag).map_or(usize::MAX, registry::position));
}

/// Every energy metric of one vendor its inputs allow, each a single value, in the registry's
/// order.
fn efficiency_metrics(
    drawn: &VendorEnergy,
    duration_s: f64,
    metrics: &[MetricResult],
    users: Option<u64>,
) -> Vec<MetricResult> {
    let defs = VendorMetrics::of(drawn.vendor);
    let avg = |tag: &str| metrics.iter().find(|m| m.tag == tag).map(|m| m.stats.avg).filter(|v| v.is_finite());
    let mut out: Vec<(&'static MetricDef, f64)> = Vec::new();
    if let Some(power) = drawn.total_power_w.filter(|p| *p > 0.0) {
        out.push((defs.total_power, power));
    }
    if let Some((energy, power)) = drawn.energy_and_power(duration_s) {
        if power > 0.0 {
            out.push((defs.average_power, power));
        }
        out.push((defs.total_energy, energy));
        let output_tokens = avg("total_osl").filter(|t| *t > 0.0);
        if let Some(tokens) = output_tokens {
            out.push((defs.output_tokens_per_joule, tokens / energy));
            out.push((defs.energy_per_output_token, energy * 1e3 / tokens));
        }
        let all_tokens = avg("total_isl").unwrap_or(0.0) + output_tokens.unwrap_or(0.0);
        if all_tokens > 0.0 {
            out.push((defs.energy_per_total_token, energy * 1e3 / all_tokens));
        }
        let per_request = avg("request_count").filter(|n| *n > 0.0).map(|n| energy / n);
        if let Some(per_request) = per_request {
            out.push((defs.energy_per_request, per_request));
        }
        if let Some(users) = users {
            out.push((defs.energy_per_user, energy / users as f64));
        }
        if let (Some(per_request), Some(latency_ms)) = (per_request, avg("request_latency").filter(|l| *l > 0.0)) {
            out.push((defs.energy_delay_product, per_request * latency_ms / 1e3));
        }
        if power > 0.0 {
            let per_watt = [
                ("request_throughput", defs.performance_per_watt),
                ("output_token_throughput", defs.output_tps_per_watt),
                ("goodput", defs.goodput_per_watt),
            ];
            out.extend(per_watt.into_iter().filter_map(|(tag, def)| Some((def, avg(tag)? / power))));
        }
    }
    out.sort_by_key(|(def, _)| registry::position(def));
    out.into_iter().map(|(def, value)| def.result(Stats::scalar(value))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::telemetry::fields::GpuField;

    const S: u64 = 1_000_000_000;

    fn reading(uuid: &str, at_s: f64, watts: f64, megajoules: Option<f64>) -> GpuSample {
        let mut values = vec![(GpuField::PowerUsage, watts)];
        values.extend(megajoules.map(|mj| (GpuField::EnergyConsumption, mj)));
        GpuSample {
            source: "pynvml://localhost".into(),
            gpu_index: 0,
            gpu_uuid: uuid.into(),
            gpu_name: "H100".into(),
            pci_bus_id: None,
            device: None,
            hostname: String::new(),
            timestamp_ns: (at_s * 1e9) as u64,
            values,
        }
    }

    fn metric(def: &'static MetricDef, value: f64) -> MetricResult {
        def.result(Stats::scalar(value))
    }

    fn value(out: &[MetricResult], tag: &str) -> Option<f64> {
        out.iter().find(|m| m.tag == tag).map(|m| m.stats.avg)
    }

    fn assert_near(out: &[MetricResult], tag: &str, expected: f64) {
        let got = value(out, tag).unwrap_or_else(|| panic!("no {tag}"));
        assert!((got - expected).abs() <= 1e-9 * expected.abs(), "{tag}: {got} against {expected}");
    }

    #[test]
    fn counters_give_the_energy_summed_over_gpus_and_the_window_closes_with_its_next_reading() {
        // Two GPUs over a 10 s window (from 1 s to 11 s); a reading 0.5 s after the end still
        // counts, one 2 s after does not.
        let samples = vec![
            reading("a", 0.5, 100.0, Some(0.010)),
            reading("a", 6.0, 300.0, Some(0.011)),
            reading("a", 11.5, 300.0, Some(0.013)),
            reading("a", 13.0, 300.0, Some(0.099)),
            reading("b", 2.0, 200.0, Some(0.020)),
            reading("b", 10.0, 200.0, Some(0.022)),
        ];
        let fleet = FleetEnergy::of(&samples, S, 11 * S);
        assert_eq!(fleet.duration_s, 10.0);
        let drawn = fleet.of_vendor(Vendor::Nvidia).unwrap();
        assert!((drawn.counted_energy_j.unwrap() - 5_000.0).abs() < 1e-6, "{fleet:?}");
        assert_eq!(drawn.total_power_w, Some(300.0 + 200.0));
        assert_eq!(fleet.vendors.len(), 1);

        let metrics = [
            metric(&registry::TOTAL_OSL, 10_000.0),
            metric(&registry::TOTAL_ISL, 40_000.0),
            metric(&registry::REQUEST_COUNT, 100.0),
            metric(&registry::REQUEST_LATENCY, 2_000.0),
            metric(&registry::REQUEST_THROUGHPUT, 10.0),
        ];
        let out = efficiency_metrics(drawn, fleet.duration_s, &metrics, Some(8));
        assert_near(&out, "nvidia_total_gpu_energy", 5_000.0);
        assert_near(&out, "nvidia_average_gpu_power", 500.0);
        assert_near(&out, "nvidia_total_gpu_power", 500.0);
        assert_near(&out, "nvidia_output_tokens_per_joule", 2.0);
        assert_near(&out, "nvidia_energy_per_output_token", 500.0);
        assert_near(&out, "nvidia_energy_per_total_token", 100.0);
        assert_near(&out, "nvidia_energy_per_request", 50.0);
        assert_near(&out, "nvidia_energy_per_user", 625.0);
        assert_near(&out, "nvidia_energy_delay_product", 100.0);
        assert_near(&out, "nvidia_performance_per_watt", 0.02);
        assert_eq!(value(&out, "nvidia_goodput_per_watt"), None, "no SLOs, no goodput");
        let mut all = metrics.to_vec();
        add_efficiency_metrics(&mut all, &fleet, Some(8));
        assert_eq!(all.len(), metrics.len() + out.len());
        let order: Vec<usize> = all.iter().map(|m| registry::position(registry::metric(m.tag).unwrap())).collect();
        assert!(order.is_sorted(), "registry order: {:?}", all.iter().map(|m| m.tag).collect::<Vec<_>>());
    }

    #[test]
    fn without_an_energy_counter_power_times_the_window_stands_in_and_without_readings_nothing() {
        let samples = vec![reading("a", 2.0, 250.0, None), reading("a", 4.0, 350.0, None)];
        let fleet = FleetEnergy::of(&samples, S, 5 * S);
        let drawn = fleet.of_vendor(Vendor::Nvidia).unwrap();
        assert_eq!(drawn.counted_energy_j, None);
        let out = efficiency_metrics(drawn, fleet.duration_s, &[], None);
        assert_near(&out, "nvidia_total_gpu_energy", 1_200.0);
        assert_near(&out, "nvidia_average_gpu_power", 300.0);
        assert_eq!(value(&out, "nvidia_energy_per_user"), None);

        let mut none = Vec::new();
        add_efficiency_metrics(&mut none, &FleetEnergy::of(&[], S, 5 * S), Some(4));
        assert!(none.is_empty());
    }

    #[test]
    fn each_vendor_gets_its_own_family_from_its_own_fields() {
        let mut amd = reading("m", 2.0, 0.0, None);
        amd.values = vec![(GpuField::AmdPower, 750.0), (GpuField::AmdEnergyConsumption, 1.0)];
        let mut amd_later = amd.clone();
        amd_later.timestamp_ns = 4 * S;
        amd_later.values = vec![(GpuField::AmdPower, 750.0), (GpuField::AmdEnergyConsumption, 1.0015)];
        let samples = vec![reading("n", 2.0, 100.0, None), reading("n", 4.0, 100.0, None), amd, amd_later];
        let fleet = FleetEnergy::of(&samples, S, 5 * S);
        assert_eq!(fleet.vendors.len(), 2);
        let mut all = vec![metric(&registry::TOTAL_OSL, 3_000.0), metric(&registry::REQUEST_COUNT, 10.0)];
        add_efficiency_metrics(&mut all, &fleet, Some(2));
        // AMD: 1.5 kJ from its counter over 4 s; NVIDIA: 100 W times 4 s.
        assert_near(&all, "amd_total_gpu_energy", 1_500.0);
        assert_near(&all, "amd_total_gpu_power", 750.0);
        assert_near(&all, "amd_average_gpu_power", 375.0);
        assert_near(&all, "amd_output_tokens_per_joule", 2.0);
        assert_near(&all, "amd_energy_per_output_token", 500.0);
        assert_near(&all, "amd_energy_per_request", 150.0);
        assert_near(&all, "amd_energy_per_user", 750.0);
        assert_near(&all, "nvidia_total_gpu_energy", 400.0);
        assert_near(&all, "nvidia_energy_per_output_token", 400.0 * 1e3 / 3_000.0);
        let amd_tags = all.iter().filter(|m| m.tag.starts_with("amd_")).count();
        assert_eq!(amd_tags, all.iter().filter(|m| m.tag.starts_with("nvidia_")).count());
    }
}
