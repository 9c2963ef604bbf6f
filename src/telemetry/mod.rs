//! GPU telemetry: local GPUs through NVML and amd-smi, DCGM and AMD device-metrics exporter
//! endpoints, sampled during the run and summarised as `telemetry_data` (plus the GPU
//! telemetry JSONL/CSV exports).

pub mod amd_exporter;
pub mod amd_smi;
pub mod collector;
pub mod dcgm;
pub mod energy;
pub mod fields;
pub mod nvml;
pub mod sample;
pub mod summary;

pub use collector::{AmdSmiUse, TelemetryCollected, TelemetryCollector};
