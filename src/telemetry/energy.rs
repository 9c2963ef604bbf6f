//! AIPerf 0.13's GPU energy-efficiency metrics (`nvidia_total_gpu_energy`,
//! `nvidia_energy_per_output_token`, `nvidia_output_tokens_per_joule`, …): the GPUs' energy
//! over the profiling window against the run's token, request and latency totals. The energy
//! is the energy counters' growth summed over the GPUs, or, when no GPU counts energy, their
//! summed mean power times the window.

use super::fields::GpuField;
use super::sample::GpuSample;
use super::summary::counter_growth;
use crate::metrics::registry::{self, MetricDef};
use crate::plan::{LoadMode, Plan};
use crate::result::{MetricResult, Stats};

/// Readings this long after the window still close its energy: the collector's last reading
/// lands up to an interval after the last response (AIPerf's `FINAL_SCRAPE_GRACE_NS`).
const END_GRACE_NS: u64 = 666_000_000;

/// What the GPUs drew over the profiling window.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FleetEnergy {
    /// The GPUs' mean power readings in the window, summed, W; None without a reading.
    pub total_power_w: Option<f64>,
    /// The GPUs' energy counters' growth over the window, summed, J; None without a counter.
    pub counted_energy_j: Option<f64>,
    pub duration_s: f64,
}

impl FleetEnergy {
    /// From every GPU reading and the profiling window (epoch ns).
    pub fn of(samples: &[GpuSample], start_ns: u64, end_ns: u64) -> Self {
        let mut gpus: Vec<(&str, &str)> = samples.iter().map(|s| (s.source.as_str(), s.gpu_uuid.as_str())).collect();
        gpus.sort_unstable();
        gpus.dedup();
        let (mut total_power_w, mut counted_energy_j) = (None, None);
        for (source, uuid) in gpus {
            let readings: Vec<&GpuSample> =
                samples.iter().filter(|s| s.source == source && s.gpu_uuid == uuid).collect();
            let series = |field: GpuField| -> Vec<(u64, f64)> {
                readings.iter().filter_map(|s| Some((s.timestamp_ns, s.value(field)?))).collect()
            };
            let power: Vec<f64> = series(GpuField::PowerUsage)
                .into_iter()
                .filter(|(at, _)| (start_ns..=end_ns).contains(at))
                .map(|(_, watts)| watts)
                .collect();
            if !power.is_empty() {
                *total_power_w.get_or_insert(0.0) += power.iter().sum::<f64>() / power.len() as f64;
            }
            if let Some(growth) = counter_growth(&series(GpuField::EnergyConsumption), start_ns, end_ns + END_GRACE_NS)
            {
                // MJ → J
                *counted_energy_j.get_or_insert(0.0) += growth * 1e6;
            }
        }
        Self { total_power_w, counted_energy_j, duration_s: end_ns.saturating_sub(start_ns) as f64 / 1e9 }
    }

    /// The window's energy (J) and mean power (W): the counters' when they grew, else the
    /// power readings' times the window.
    fn energy_and_power(&self) -> Option<(f64, f64)> {
        if let Some(energy) = self.counted_energy_j.filter(|e| *e > 0.0) {
            let power = if self.duration_s > 0.0 { energy / self.duration_s } else { 0.0 };
            return Some((energy, power));
        }
        let power = self.total_power_w.filter(|p| *p > 0.0 && self.duration_s > 0.0)?;
        Some((power * self.duration_s, power))
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
    let energy = efficiency_metrics(fleet, metrics, users);
    metrics.extend(energy);
    metrics.sort_by_key(|m| registry::metric(m.tag).map_or(usize::MAX, registry::position));
}

/// Every energy metric its inputs allow, each a single value, in the registry's order.
fn efficiency_metrics(fleet: &FleetEnergy, metrics: &[MetricResult], users: Option<u64>) -> Vec<MetricResult> {
    let avg = |tag: &str| metrics.iter().find(|m| m.tag == tag).map(|m| m.stats.avg).filter(|v| v.is_finite());
    let mut out: Vec<(&'static MetricDef, f64)> = Vec::new();
    if let Some(power) = fleet.total_power_w.filter(|p| *p > 0.0) {
        out.push((&registry::NVIDIA_TOTAL_GPU_POWER, power));
    }
    if let Some((energy, power)) = fleet.energy_and_power() {
        if power > 0.0 {
            out.push((&registry::NVIDIA_AVERAGE_GPU_POWER, power));
        }
        out.push((&registry::NVIDIA_TOTAL_GPU_ENERGY, energy));
        let output_tokens = avg("total_osl").filter(|t| *t > 0.0);
        if let Some(tokens) = output_tokens {
            out.push((&registry::NVIDIA_OUTPUT_TOKENS_PER_JOULE, tokens / energy));
            out.push((&registry::NVIDIA_ENERGY_PER_OUTPUT_TOKEN, energy * 1e3 / tokens));
        }
        let all_tokens = avg("total_isl").unwrap_or(0.0) + output_tokens.unwrap_or(0.0);
        if all_tokens > 0.0 {
            out.push((&registry::NVIDIA_ENERGY_PER_TOTAL_TOKEN, energy * 1e3 / all_tokens));
        }
        let per_request = avg("request_count").filter(|n| *n > 0.0).map(|n| energy / n);
        if let Some(per_request) = per_request {
            out.push((&registry::NVIDIA_ENERGY_PER_REQUEST, per_request));
        }
        if let Some(users) = users {
            out.push((&registry::NVIDIA_ENERGY_PER_USER, energy / users as f64));
        }
        if let (Some(per_request), Some(latency_ms)) = (per_request, avg("request_latency").filter(|l| *l > 0.0)) {
            out.push((&registry::NVIDIA_ENERGY_DELAY_PRODUCT, per_request * latency_ms / 1e3));
        }
        if power > 0.0 {
            let per_watt = [
                ("request_throughput", &registry::NVIDIA_PERFORMANCE_PER_WATT),
                ("output_token_throughput", &registry::NVIDIA_OUTPUT_TPS_PER_WATT),
                ("goodput", &registry::NVIDIA_GOODPUT_PER_WATT),
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
        assert!((fleet.counted_energy_j.unwrap() - 5_000.0).abs() < 1e-6, "{fleet:?}");
        assert_eq!(fleet.total_power_w, Some(300.0 + 200.0));

        let metrics = [
            metric(&registry::TOTAL_OSL, 10_000.0),
            metric(&registry::TOTAL_ISL, 40_000.0),
            metric(&registry::REQUEST_COUNT, 100.0),
            metric(&registry::REQUEST_LATENCY, 2_000.0),
            metric(&registry::REQUEST_THROUGHPUT, 10.0),
        ];
        let out = efficiency_metrics(&fleet, &metrics, Some(8));
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
        assert_eq!(fleet.counted_energy_j, None);
        let out = efficiency_metrics(&fleet, &[], None);
        assert_near(&out, "nvidia_total_gpu_energy", 1_200.0);
        assert_near(&out, "nvidia_average_gpu_power", 300.0);
        assert_eq!(value(&out, "nvidia_energy_per_user"), None);

        assert!(efficiency_metrics(&FleetEnergy::of(&[], S, 5 * S), &[], Some(4)).is_empty());
    }
}
