//! AIPerf's monotonic SLA planner: double from `lo` until the SLA breaks, then halve the
//! bracket until feasible and infeasible values are neighbours.

use super::config::SearchConfig;
use super::decision::Decision;
use super::iteration::{Bracket, Iteration, ProbeKind};

pub fn next(config: &SearchConfig, history: &[Iteration]) -> Decision {
    let dim = &config.search_space[0];
    let probe = |x: f64, probe| Decision::Probe { point: vec![dim.clamp(x)], probe };
    if history.is_empty() {
        return probe(dim.lo, ProbeKind::Bracket);
    }
    let bracket = Bracket::of(history);
    match (bracket.feasible_max, bracket.infeasible_min) {
        (None, _) => Decision::Stop("monotonic_no_pass_in_range".into()),
        (Some(f), None) if f >= dim.hi => Decision::Stop("monotonic_no_failure_in_range".into()),
        (Some(f), None) => probe((2.0 * f).max(f + 1.0).min(dim.hi), ProbeKind::Bracket),
        (Some(f), Some(i)) if i - f <= 1.0 => Decision::Stop("monotonic_precision_reached".into()),
        (Some(f), Some(i)) => probe(((f + i) / 2.0).floor(), ProbeKind::Bisect),
    }
}

#[cfg(test)]
mod tests {
    use super::super::config::PlannerKind;
    use super::super::testing::{boundary_search, staircase};

    #[test]
    fn doubles_then_bisects_to_neighbours_as_aiperf() {
        let (tried, reason, found) = boundary_search(PlannerKind::MonotonicSla, 1, 64, staircase(24));
        assert_eq!(tried, [1, 2, 4, 8, 16, 32, 24, 28, 26, 25]);
        assert_eq!(reason, "monotonic_precision_reached");
        assert_eq!(found, Some(24));
    }
}
