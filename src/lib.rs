//! aiperf: a benchmark runner for LLM inference servers, driven by Rhai scenarios.
//! The engine as a library; `src/main.rs` is a thin CLI over it.
//!
//! Flow: script/ builds a `plan::Plan` → `engine::execute` runs it (dataset/, load/, client/,
//! mock/) → `record::RequestRecord`s → metrics/ → `result::RunResult` → export/ and ui/.

pub mod accuracy;
pub mod agents;
pub mod aggregate;
pub mod analyze;
pub mod builtin_server;
pub mod cancel;
pub mod cli;
pub mod client;
pub mod clock;
pub mod collectors;
pub mod config;
pub mod control;
pub mod dataset;
pub mod engine;
pub mod export;
pub mod http_trace;
pub mod kube;
pub mod libs;
pub mod live;
pub mod load;
pub mod metric_result;
pub mod metrics;
pub mod mock;
pub mod network_probe;
pub mod outputs;
pub mod plan;
pub mod preflight;
pub mod python_text;
pub mod record;
pub mod report;
pub mod request_bodies;
pub mod result;
pub mod rng;
pub mod sampling;
pub mod script;
pub mod search;
pub mod segment_merge;
pub mod server_metrics;
pub mod session_metrics;
pub mod spec_decode;
pub mod start_at;
pub mod suggest;
pub mod synthesis;
pub mod telemetry;
pub mod thresholds;
pub mod timer_slack;
pub mod ui;
pub mod yielding_receiver;
