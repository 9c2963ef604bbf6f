//! The next step of a search, decided from the iterations measured so far alone (so a search
//! resumed from its checkpoint continues exactly where it stopped).

use super::config::{PlannerKind, SearchConfig};
pub use super::decision::Decision;
use super::iteration::Iteration;

pub fn next(config: &SearchConfig, history: &[Iteration]) -> Decision {
    if history.len() >= config.max_iterations {
        return Decision::Stop("max_iterations".into());
    }
    if !config.sla_tiers.is_empty() {
        return super::multi_tier::next(config, history);
    }
    match config.planner {
        PlannerKind::Grid => super::grid::next(config, history),
        PlannerKind::MonotonicSla => super::monotonic::next(config, history),
        PlannerKind::SmoothIsotonic => super::smooth_isotonic::next(config, history),
        PlannerKind::Bayesian | PlannerKind::Optuna => super::bayesian::next(config, history),
    }
}
