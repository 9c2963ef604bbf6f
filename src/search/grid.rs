//! The grid planner: every listed point (or every combination of each dimension's log-spaced
//! steps), in order; a 1-D integer grid under SLAs then bisects its bracket down to neighbours.

use super::config::{DimensionKind, SearchConfig};
use super::decision::{Decision, tried};
use super::iteration::{Bracket, Iteration, ProbeKind};

/// AIPerf's default number of grid steps per dimension.
pub const DEFAULT_STEPS: usize = 8;

pub fn next(config: &SearchConfig, history: &[Iteration]) -> Decision {
    if let Some(point) = points(config).into_iter().find(|point| !tried(history, point)) {
        return Decision::Probe { point, probe: ProbeKind::Grid };
    }
    if !refines_boundary(config) {
        return Decision::Stop("grid_exhausted".into());
    }
    match Bracket::of(history) {
        Bracket { feasible_max: Some(feasible), infeasible_min: Some(infeasible) } if infeasible - feasible > 1.0 => {
            Decision::Probe { point: vec![((feasible + infeasible) / 2.0).floor()], probe: ProbeKind::Bisect }
        }
        Bracket { feasible_max: Some(_), infeasible_min: Some(_) } => Decision::Stop("grid_precision_reached".into()),
        _ => Decision::Stop("grid_exhausted".into()),
    }
}

/// Whether the grid goes on past its points: a stepped grid over one integer dimension with
/// SLAs bisects between its highest feasible and lowest infeasible point, so the boundary it
/// reports is exact rather than the grid's resolution (AIPerf's grid stops at its points).
fn refines_boundary(config: &SearchConfig) -> bool {
    config.grid_points.is_empty()
        && !config.sla_filters.is_empty()
        && matches!(config.search_space.as_slice(), [dim] if dim.kind == DimensionKind::Int)
}

/// The grid's points in the order they run.
pub fn points(config: &SearchConfig) -> Vec<Vec<f64>> {
    if !config.grid_points.is_empty() {
        return config
            .grid_points
            .iter()
            .map(|values| {
                config.search_space.iter().map(|dim| values.get(&dim.path).copied().unwrap_or(dim.lo)).collect()
            })
            .collect();
    }
    let steps = config.grid_steps.unwrap_or(DEFAULT_STEPS);
    config.search_space.iter().fold(vec![Vec::new()], |partial, dim| {
        let values = match dim.kind {
            DimensionKind::Int if dim.lo > 0.0 => logspace_int(dim.lo, dim.hi, steps),
            _ => (0..steps.max(2)).map(|k| dim.from_unit(k as f64 / (steps.max(2) - 1) as f64)).collect(),
        };
        partial
            .iter()
            .flat_map(|start| values.iter().map(move |v| start.iter().copied().chain([*v]).collect::<Vec<f64>>()))
            .collect()
    })
}

/// `steps` log-spaced integers from `lo` to `hi`, both included, repeats dropped (AIPerf's).
pub fn logspace_int(lo: f64, hi: f64, steps: usize) -> Vec<f64> {
    if hi <= lo || steps < 2 {
        return vec![lo.round()];
    }
    let mut values: Vec<f64> = (0..steps)
        .map(|k| (lo.ln() + (hi.ln() - lo.ln()) * k as f64 / (steps - 1) as f64).exp().round().max(1.0))
        .collect();
    values.dedup();
    values
}

#[cfg(test)]
mod tests {
    use super::super::config::PlannerKind;
    use super::super::testing::{boundary_search, search, staircase};
    use super::*;

    #[test]
    fn log_spaced_steps_match_aiperfs() {
        assert_eq!(logspace_int(1.0, 1000.0, 8), [1.0, 3.0, 7.0, 19.0, 52.0, 139.0, 373.0, 1000.0]);
        assert_eq!(logspace_int(1.0, 4.0, 8), [1.0, 2.0, 3.0, 4.0]);
    }

    #[test]
    fn runs_the_log_grid_then_bisects_to_the_exact_boundary() {
        let (tried, reason, found) = boundary_search(PlannerKind::Grid, 1, 64, staircase(24));
        assert_eq!(tried, [1, 2, 3, 6, 11, 20, 35, 64, 27, 23, 25, 24]);
        assert_eq!(reason, "grid_precision_reached");
        assert_eq!(found, Some(24));
    }

    #[test]
    fn finds_every_boundary_inside_the_range() {
        for boundary in 1..64 {
            let (tried, reason, found) = boundary_search(PlannerKind::Grid, 1, 64, staircase(boundary));
            assert_eq!(
                (reason.as_str(), found),
                ("grid_precision_reached", Some(boundary)),
                "boundary {boundary}: {tried:?}"
            );
            assert!(tried.len() <= 8 + 5, "boundary {boundary}: {} runs", tried.len());
        }
    }

    #[test]
    fn a_grid_without_a_bracket_stops_at_its_points() {
        let (tried, reason, found) = boundary_search(PlannerKind::Grid, 1, 64, staircase(100));
        assert_eq!((tried.len(), reason.as_str(), found), (8, "grid_exhausted", Some(64)));
        let mut two_dimensional = super::super::testing::config(PlannerKind::Grid, 1, 64);
        two_dimensional.search_space.push(two_dimensional.search_space[0].clone());
        two_dimensional.max_iterations = 100;
        let (history, reason) = search(&two_dimensional, staircase(24));
        assert_eq!((history.len(), reason.as_str()), (64, "grid_exhausted"));
    }
}
