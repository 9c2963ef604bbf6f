//! Local GPUs through NVML: the library is opened when the run starts (nvml-wrapper uses
//! dlopen), so machines without a driver run fine and are told "no NVML" once. The fields and
//! units are those of AIPerf 0.13's pynvml collector.

use nvml_wrapper::Nvml;
use nvml_wrapper::enum_wrappers::device::{Clock, PerformancePolicy, TemperatureSensor};

use super::fields::GpuField;
use super::sample::GpuSample;

/// AIPerf's source identifier for local GPUs (its `telemetry_source_url`), kept so that
/// tools reading its exports find ours under the same name.
pub const LOCAL_SOURCE: &str = "pynvml://localhost";

/// NVML if it can be opened; otherwise None after one info line.
pub fn open() -> Option<Nvml> {
    match Nvml::init() {
        Ok(nvml) => Some(nvml),
        Err(e) => {
            tracing::info!("GPU telemetry: no NVML on this machine ({e}); local GPUs are not sampled");
            None
        }
    }
}

/// One reading of every local GPU; a field the GPU does not support is left out.
pub fn sample_all(nvml: &Nvml, hostname: &str, timestamp_ns: u64) -> Vec<GpuSample> {
    let count = nvml.device_count().unwrap_or(0);
    let mut out = Vec::with_capacity(count as usize);
    for index in 0..count {
        let Ok(device) = nvml.device_by_index(index) else { continue };
        let mut values = Vec::new();
        if let Ok(milliwatts) = device.power_usage() {
            values.push((GpuField::PowerUsage, f64::from(milliwatts) / 1e3));
        }
        if let Ok(millijoules) = device.total_energy_consumption() {
            values.push((GpuField::EnergyConsumption, millijoules as f64 / 1e9));
        }
        if let Ok(rates) = device.utilization_rates() {
            values.push((GpuField::GpuUtilization, f64::from(rates.gpu)));
            values.push((GpuField::MemoryUtilization, f64::from(rates.memory)));
        }
        if let Ok(memory) = device.memory_info() {
            values.push((GpuField::MemoryUsed, memory.used as f64 / 1e9));
            values.push((GpuField::MemoryTotal, memory.total as f64 / 1e9));
        }
        if let Ok(celsius) = device.temperature(TemperatureSensor::Gpu) {
            values.push((GpuField::Temperature, f64::from(celsius)));
        }
        if let Ok(decoder) = device.decoder_utilization() {
            values.push((GpuField::DecoderUtilization, f64::from(decoder.utilization)));
        }
        if let Ok(encoder) = device.encoder_utilization() {
            values.push((GpuField::EncoderUtilization, f64::from(encoder.utilization)));
        }
        if let Ok(violation) = device.violation_status(PerformancePolicy::Power) {
            values.push((GpuField::PowerViolation, violation.violation_time as f64 / 1e3));
        }
        if let Ok(mhz) = device.clock_info(Clock::SM) {
            values.push((GpuField::SmClock, f64::from(mhz)));
        }
        if let Ok(mhz) = device.clock_info(Clock::Memory) {
            values.push((GpuField::MemoryClock, f64::from(mhz)));
        }
        out.push(GpuSample {
            source: LOCAL_SOURCE.to_string(),
            gpu_index: index,
            gpu_uuid: device.uuid().unwrap_or_default(),
            gpu_name: device.name().unwrap_or_default(),
            pci_bus_id: device.pci_info().ok().map(|pci| pci.bus_id),
            device: Some(format!("nvidia{index}")),
            hostname: hostname.to_string(),
            timestamp_ns,
            values,
        });
    }
    out
}
