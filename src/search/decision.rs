//! What a planner answers: the next point to run, or why the search is over.

use super::iteration::{Iteration, ProbeKind};

#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    /// Run this point (in the order of the search space).
    Probe { point: Vec<f64>, probe: ProbeKind },
    /// The search is over, for this reason (AIPerf's `convergence_reason`).
    Stop(String),
}

/// Whether `point` already ran.
pub fn tried(history: &[Iteration], point: &[f64]) -> bool {
    history.iter().any(|iteration| iteration.point == point)
}
