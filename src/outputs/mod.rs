//! Results where users look, beside the run's own exports: the live metrics pushed to
//! OpenTelemetry (`otel.rs` over `otlp_messages.rs`), the run uploaded to MLflow
//! (`mlflow.rs`, its payload in `mlflow_payload.rs`, files chosen by `artifact_globs.rs`),
//! AIPerf's `run_config.json` (`run_config.rs`) and `logs/aiperf.log` (`run_log.rs`), and the
//! user's files (`user_files.rs`).

mod artifact_globs;
mod http;
pub mod mlflow;
mod mlflow_payload;
pub mod otel;
mod otlp_messages;
pub mod run_config;
pub mod run_log;
pub mod user_files;
