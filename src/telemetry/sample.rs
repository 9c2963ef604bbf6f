//! One reading of one GPU: which source and GPU it came from, when, and its field values.

use super::fields::GpuField;

#[derive(Debug, Clone, PartialEq)]
pub struct GpuSample {
    /// `nvml` for local GPUs, else the DCGM exporter URL.
    pub source: String,
    pub gpu_index: u32,
    pub gpu_uuid: String,
    pub gpu_name: String,
    pub hostname: String,
    /// Epoch ns.
    pub timestamp_ns: u64,
    pub values: Vec<(GpuField, f64)>,
}
