//! Results over several runs: the confidence aggregate of repeated trials of one plan
//! (`trials.rs`), the sweep aggregate over variations (`sweep.rs`), the statistics they use
//! and the coordinates that place a run in a sweep.

pub mod confidence;
pub mod coordinates;
pub mod student_t;
pub mod sweep;
#[cfg(test)]
pub(crate) mod test_support;
pub mod trials;

pub use confidence::ConfidenceStats;
pub use coordinates::RunCoordinates;
pub use trials::{AggregateMetric, TrialSet};
