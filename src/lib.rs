//! aiperf: a benchmark runner for LLM inference servers, driven by Rhai scenarios.
//! The engine as a library; `src/main.rs` is a thin CLI over it.

pub mod client;
pub mod clock;
pub mod dataset;
pub mod export;
pub mod metrics;
pub mod mock;
pub mod plan;
pub mod record;
pub mod result;
pub mod rng;
