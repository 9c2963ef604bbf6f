//! Local GPUs through NVML, read on a thread of its own: the library is opened when the run
//! starts (nvml-wrapper uses dlopen), so machines without a driver run fine and are told "no
//! NVML" once; the thread keeps each GPU's last GPM sample, since SM utilization is the SMs'
//! activity between two samples (Hopper and newer). The fields and units are those of AIPerf
//! 0.13's pynvml collector.

use std::sync::mpsc;

use nvml_wrapper::enum_wrappers::device::{Clock, PerformancePolicy, TemperatureSensor};
use nvml_wrapper::enums::gpm::GpmMetricId;
use nvml_wrapper::gpm::gpm_metrics_get;
use nvml_wrapper::{Device, GpmSample, Nvml};
use tokio::sync::oneshot;

use super::fields::GpuField;
use super::sample::GpuSample;

/// AIPerf's source identifier for local GPUs (its `telemetry_source_url`), kept so that
/// tools reading its exports find ours under the same name.
pub const LOCAL_SOURCE: &str = "pynvml://localhost";

/// A reading asked of the thread: its timestamp (epoch ns) and where the samples go.
type Ask = (u64, oneshot::Sender<Vec<GpuSample>>);

/// The NVML thread; it ends when this is dropped.
pub struct NvmlSampler {
    asks: mpsc::Sender<Ask>,
}

impl NvmlSampler {
    /// The thread, once NVML opened; None (after one info line) when it cannot be.
    pub fn start(hostname: String) -> Option<Self> {
        let (opened, was_opened) = mpsc::channel();
        let (asks, inbox) = mpsc::channel::<Ask>();
        let thread = std::thread::Builder::new().name("aiperf-nvml".into()).spawn(move || {
            let nvml = match Nvml::init() {
                Ok(nvml) => nvml,
                Err(e) => {
                    tracing::info!("GPU telemetry: no NVML on this machine ({e}); local GPUs are not sampled");
                    let _ = opened.send(false);
                    return;
                }
            };
            let _ = opened.send(true);
            let mut last_gpm: Vec<Option<GpmSample<'_>>> = Vec::new();
            for (timestamp_ns, reply) in inbox {
                let _ = reply.send(sample_all(&nvml, &hostname, timestamp_ns, &mut last_gpm));
            }
        });
        if let Err(e) = thread {
            tracing::warn!("GPU telemetry: cannot start the NVML thread ({e}); local GPUs are not sampled");
            return None;
        }
        was_opened.recv().unwrap_or(false).then_some(Self { asks })
    }

    /// One reading of every local GPU, stamped `timestamp_ns`; None once the thread is gone.
    pub async fn sample(&self, timestamp_ns: u64) -> Option<Vec<GpuSample>> {
        let (reply, answer) = oneshot::channel();
        self.asks.send((timestamp_ns, reply)).ok()?;
        answer.await.ok()
    }
}

/// One reading of every local GPU; a field the GPU does not support is left out.
fn sample_all<'nvml>(
    nvml: &'nvml Nvml,
    hostname: &str,
    timestamp_ns: u64,
    last_gpm: &mut Vec<Option<GpmSample<'nvml>>>,
) -> Vec<GpuSample> {
    let count = nvml.device_count().unwrap_or(0);
    last_gpm.resize_with(count as usize, || None);
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
        if let Some(percent) = sm_utilization(nvml, &device, &mut last_gpm[index as usize]) {
            values.push((GpuField::SmUtilization, percent));
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

/// The SMs' activity (%) since this GPU's last GPM sample, which this one replaces; None on
/// the first reading and on GPUs without GPM (before Hopper).
fn sm_utilization<'nvml>(
    nvml: &'nvml Nvml,
    device: &Device<'nvml>,
    last: &mut Option<GpmSample<'nvml>>,
) -> Option<f64> {
    let current = device.gpm_sample().ok()?;
    let previous = last.replace(current)?;
    let results = gpm_metrics_get(nvml, &previous, last.as_ref()?, &[GpmMetricId::SmUtil]).ok()?;
    let percent = results.into_iter().next()?.ok()?.value;
    percent.is_finite().then_some(percent.clamp(0.0, 100.0))
}
