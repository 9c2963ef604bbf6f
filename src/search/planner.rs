//! The next step of a search, decided from the iterations measured so far alone (so a search
//! resumed from its checkpoint continues exactly where it stopped).

use super::config::{PlannerKind, SearchConfig};
use super::iteration::{Iteration, ProbeKind};

#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    /// Run this point (in the order of the search space).
    Probe { point: Vec<f64>, probe: ProbeKind },
    /// The search is over, for this reason (AIPerf's `convergence_reason`).
    Stop(String),
}

pub fn next(config: &SearchConfig, history: &[Iteration]) -> Decision {
    if history.len() >= config.max_iterations {
        return Decision::Stop("max_iterations".into());
    }
    match config.planner {
        PlannerKind::Grid => super::grid::next(config, history),
        PlannerKind::MonotonicSla => super::monotonic::next(config, history),
        PlannerKind::SmoothIsotonic => super::smooth_isotonic::next(config, history),
        PlannerKind::Bayesian | PlannerKind::Optuna => super::bayesian::next(config, history),
    }
}

/// Whether `point` already ran.
pub fn tried(history: &[Iteration], point: &[f64]) -> bool {
    history.iter().any(|iteration| iteration.point == point)
}
