//! Results over several runs: the confidence aggregate of repeated trials of one plan
//! (`trials.rs`), the sweep aggregate over variations (`sweep.rs`) and the statistics they use.

pub mod confidence;
pub mod convergence;
pub mod student_t;
pub mod sweep;
#[cfg(test)]
pub(crate) mod test_support;
pub mod trials;

pub use confidence::ConfidenceStats;
pub use trials::{AggregateMetric, TrialSet};
