//! GPU telemetry: local GPUs through NVML and DCGM exporter endpoints, sampled during the
//! run and summarised as `telemetry_data` (plus the GPU telemetry JSONL/CSV exports).

pub mod collector;
pub mod dcgm;
pub mod energy;
pub mod fields;
pub mod nvml;
pub mod sample;
pub mod summary;

pub use collector::{TelemetryCollected, TelemetryCollector};
