//! One reading of one GPU: which source and GPU it came from, when, and its field values.

use super::fields::{GpuField, Vendor};

#[derive(Debug, Clone, PartialEq)]
pub struct GpuSample {
    /// AIPerf's `telemetry_source_url`: `pynvml://localhost` for local GPUs, else the DCGM
    /// exporter URL.
    pub source: String,
    pub gpu_index: u32,
    pub gpu_uuid: String,
    pub gpu_name: String,
    /// e.g. `00000000:02:00.0`, when the source tells.
    pub pci_bus_id: Option<String>,
    /// e.g. `nvidia0`, when the source tells.
    pub device: Option<String>,
    pub hostname: String,
    /// Epoch ns.
    pub timestamp_ns: u64,
    pub values: Vec<(GpuField, f64)>,
}

impl GpuSample {
    /// This reading's value of `field`, if it has one.
    pub fn value(&self, field: GpuField) -> Option<f64> {
        self.values.iter().find(|(f, _)| *f == field).map(|(_, v)| *v)
    }

    /// Whose GPU this is: every source reads one vendor's fields (NVIDIA when it read none).
    pub fn vendor(&self) -> Vendor {
        self.values.first().map_or(Vendor::Nvidia, |(field, _)| field.vendor())
    }
}
