//! AIPerf's config schema 2.0: a YAML file read into a normalized document, the document
//! lowered to the plans `aiperf profile` runs, and a plan described back in the schema's
//! `benchmark` shape (the exports' `input_config`).
//!
//! The normalized document is a `serde_json::Value` in the schema's shape with snake_case keys
//! and every shorthand expanded (`benchmark.models.items[]`, `benchmark.datasets[]` and
//! `benchmark.phases[]` as named lists, `benchmark.endpoint.urls[]`): `aiperf profile`'s flags
//! build one too, laid over the file's.

mod describe;
mod lower;
mod overlay;
mod path;
mod read;

use serde_json::Value;

pub use describe::benchmark_of_plan;
pub use lower::{artifact_location, lower};
pub use overlay::overlay;
pub use path::{get_path, set_path};
pub use read::{normalize, read_file};

use crate::plan::Plan;

/// A config that cannot be read or lowered; the message names the file and the key.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct ConfigError {
    pub message: String,
}

impl ConfigError {
    pub fn new(message: impl Into<String>) -> Self {
        Self { message: message.into() }
    }
}

/// What `aiperf profile` executes: one plan per sweep variation, each repeated `trials` times.
#[derive(Debug, Clone, PartialEq)]
pub struct ProfileJob {
    /// One entry without a sweep (empty `values`); one per variation with one.
    pub variations: Vec<JobVariation>,
    /// Runs of each variation (`multi_run.num_runs`), 1 by default.
    pub trials: u64,
    /// Pause between two trials, seconds.
    pub cooldown_s: f64,
    /// Confidence level of the trial aggregate.
    pub confidence: f64,
}

/// One point of a sweep: the swept values (dotted document path → value) and its plan.
#[derive(Debug, Clone, PartialEq)]
pub struct JobVariation {
    pub values: serde_json::Map<String, Value>,
    pub plan: Plan,
}
