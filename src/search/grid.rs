//! The grid planner: every listed point (or every combination of each dimension's log-spaced
//! steps), in order.

use super::config::{DimensionKind, SearchConfig};
use super::decision::{Decision, tried};
use super::iteration::{Iteration, ProbeKind};

/// AIPerf's default number of grid steps per dimension.
pub const DEFAULT_STEPS: usize = 8;

pub fn next(config: &SearchConfig, history: &[Iteration]) -> Decision {
    match points(config).into_iter().find(|point| !tried(history, point)) {
        Some(point) => Decision::Probe { point, probe: ProbeKind::Grid },
        None => Decision::Stop("grid_exhausted".into()),
    }
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
    use super::*;

    #[test]
    fn log_spaced_steps_match_aiperfs() {
        assert_eq!(logspace_int(1.0, 1000.0, 8), [1.0, 3.0, 7.0, 19.0, 52.0, 139.0, 373.0, 1000.0]);
        assert_eq!(logspace_int(1.0, 4.0, 8), [1.0, 2.0, 3.0, 4.0]);
    }
}
