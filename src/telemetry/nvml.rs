//! Local GPUs through NVML: the library is opened when the run starts (nvml-wrapper uses
//! dlopen), so machines without a driver run fine and are told "no NVML" once.

use nvml_wrapper::Nvml;
use nvml_wrapper::enum_wrappers::device::{Clock, TemperatureSensor};

use super::fields::GpuField;
use super::sample::GpuSample;

/// The source name of local GPUs in telemetry_data.
pub const NVML_SOURCE: &str = "nvml";

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
        if let Ok(rates) = device.utilization_rates() {
            values.push((GpuField::GpuUtilization, f64::from(rates.gpu)));
            values.push((GpuField::MemoryCopyUtilization, f64::from(rates.memory)));
        }
        if let Ok(memory) = device.memory_info() {
            values.push((GpuField::GpuMemoryUsed, memory.used as f64 / 1e9));
            values.push((GpuField::GpuMemoryTotal, memory.total as f64 / 1e9));
        }
        if let Ok(milliwatts) = device.power_usage() {
            values.push((GpuField::GpuPowerUsage, f64::from(milliwatts) / 1e3));
        }
        if let Ok(millijoules) = device.total_energy_consumption() {
            values.push((GpuField::EnergyConsumption, millijoules as f64 / 1e9));
        }
        if let Ok(celsius) = device.temperature(TemperatureSensor::Gpu) {
            values.push((GpuField::GpuTemperature, f64::from(celsius)));
        }
        if let Ok(mhz) = device.clock_info(Clock::SM) {
            values.push((GpuField::SmClock, f64::from(mhz)));
        }
        if let Ok(mhz) = device.clock_info(Clock::Memory) {
            values.push((GpuField::MemoryClock, f64::from(mhz)));
        }
        out.push(GpuSample {
            source: NVML_SOURCE.to_string(),
            gpu_index: index,
            gpu_uuid: device.uuid().unwrap_or_default(),
            gpu_name: device.name().unwrap_or_default(),
            hostname: hostname.to_string(),
            timestamp_ns,
            values,
        });
    }
    out
}
