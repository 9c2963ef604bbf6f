//! Results where users look, beside the run's own exports: the live metrics pushed to
//! OpenTelemetry (`otel.rs` over `otlp_messages.rs`), the run uploaded to MLflow
//! (`mlflow.rs`, its payload in `mlflow_payload.rs`, files chosen by `artifact_globs.rs`),
//! AIPerf's `run_config.json` (`run_config.rs`) and `logs/aiperf.log` (`run_log.rs`), the
//! user's files (`user_files.rs`), and the SPEED-Bench matrix of several runs
//! (`speed_bench_report.rs`).

mod artifact_globs;
mod http;
pub mod mlflow;
mod mlflow_payload;
pub mod otel;
mod otlp_messages;
pub mod run_config;
pub mod run_log;
pub mod speed_bench_report;
pub mod user_files;
