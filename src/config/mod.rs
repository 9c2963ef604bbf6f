//! AIPerf's config schema 2.0: a YAML file read into a normalized document, and the document
//! lowered to the plans `aiperf profile` runs (the exports describe a plan back in the schema's
//! `benchmark` shape: `export/input_config.rs`).
//!
//! Reading (`read_file`): `${ENV}` / `${ENV:default}` replaced in the text, the YAML parsed,
//! `{{ expression }}` strings rendered with `variables:` (see `jinja`), then `normalize`, then
//! the schema check (`validate_document`). The normalized document — what `aiperf profile`'s
//! flags are set on too, each at its path (`cli/profile/complete.rs`) — is a `serde_json::Value` with:
//!
//! - snake_case keys everywhere (camelCase accepted on input), except in the free-form maps
//!   whose keys are the user's: `variables`, `plot`, `sweep.parameters`,
//!   `sweep.runs[].variables`, `endpoint.headers`, `endpoint.extra`, `slos`, a phase's `sla`,
//!   a dataset's `filters` and `records[]`, `artifacts.user_files[].content`,
//!   `post_process.params`, `mlflow.tags`, `otel.custom_resource_attributes`;
//! - top level: `schema_version`, `random_seed`, `variables` (rendered), `multi_run`
//!   (`num_runs`, `cooldown_seconds`, `confidence_level`, …), `sweep` (`type`: grid | zip |
//!   scenarios | sobol | latin_hypercube | adaptive_search; `parameters`, `runs`, `dimensions`…), `plot`, `benchmark`;
//! - `benchmark.models`: always `{items: [{name, ..}, ..], strategy?}` (from `model:` or
//!   `models:` as a string, a list of strings, or the long form);
//! - `benchmark.endpoint.urls`: always a list (from `url:` as a string or list);
//! - `benchmark.datasets`: always a list of datasets with a `name` (`default` when none is
//!   given; from `dataset:`); a synthetic dataset's `isl` / `osl` moved under `prompts`;
//!   distributions (`prompts.isl`, `prompts.osl`, `osl`, `turns`, `turn_delay`,
//!   `audio.length`, `images.width`, `images.height`, multimodal `peaks[]`) always carry
//!   `type`: a number N is `{type: fixed, value: N}`, `{mean, stddev}` is `normal`,
//!   `{mean, median}` `lognormal`, `{peaks}` `multimodal`, `{points}` `empirical`;
//! - `benchmark.phases`: always a list of phases with a `name` (a single mapping is
//!   `[{name: profiling, ..}]`; top-level `warmup:` / `profiling:` are the phases `warmup`
//!   (with `exclude_from_results: true` unless given) and `profiling`, in that order);
//!   `duration` and `grace_period` in seconds (numbers; `inf` is null), `concurrency_ramp`,
//!   `prefill_ramp`, `rate_ramp` as `{duration: seconds, strategy?}`;
//! - `benchmark.artifacts.slice_duration` in seconds.
//!
//! Sweeps (`variations`) and `multi_run` (`multi_run_settings`) are read from this form.

mod env;
pub(crate) mod jinja;
mod locate;
mod lower;
mod normalize;
mod path;
mod read;
mod scenario_lock;
mod schema;
pub mod search;
mod sweep;
mod sweep_sampling;

use serde_json::Value;

pub use lower::{artifact_location, lower};
pub use normalize::normalize;
pub use path::{get_path, set_path};
pub use read::read_file;
pub use sweep::{MultiRun, Variation, multi_run_settings, variations};
pub use sweep_sampling::sampled_values;

use crate::plan::Plan;

/// Check a normalized document (a file's, or one built from flags) against the schema; the
/// error lists every problem as `key.path: problem`, one a line.
pub fn validate_document(document: &Value) -> Result<(), ConfigError> {
    let problems = schema::validate(document);
    if problems.is_empty() { Ok(()) } else { Err(ConfigError::new(problems.join("\n"))) }
}

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
    /// Pause between two sweep variations, seconds (`sweep.cooldown_seconds`).
    pub variation_pause_s: f64,
    /// The order of a sweep's runs with several trials (`sweep.iteration_order`).
    pub sweep_order: crate::plan::SweepOrder,
    /// One line per setting read but not acted on, printed before the run.
    pub notes: Vec<String>,
    /// Confidence level of the trial aggregate.
    pub confidence: f64,
    /// Only the first trial runs the warmup (`multi_run.disable_warmup_after_first`).
    pub warmup_once: bool,
    /// Each trial draws its workload from a seed of its own (`multi_run.vary_seed_per_trial`),
    /// derived from the config's `random_seed` (or the consistent 42) when it has one.
    pub vary_seed: Option<Option<u64>>,
    /// A capacity search (`sweep.type: adaptive_search`): its iterations start from the one variation.
    pub search: Option<search::SearchJob>,
    /// Write the report after the run or sweep, where AIPerf plots (`plot:`, `artifacts.auto_plot`).
    pub report: bool,
    /// Stop a variation's trials once a metric settles (`multi_run.convergence`).
    pub convergence: Option<crate::aggregate::convergence::Convergence>,
}

/// One point of a sweep: the swept values as its scenario's function takes them (each dotted
/// path by its last key, the whole path where two end alike), how AIPerf reports it (label,
/// folder, values under their dotted paths), and its plan.
#[derive(Debug, Clone, PartialEq)]
pub struct JobVariation {
    pub values: serde_json::Map<String, Value>,
    /// None without a sweep.
    pub reported: Option<crate::plan::run_coordinates::ReportedVariation>,
    pub plan: Plan,
}
