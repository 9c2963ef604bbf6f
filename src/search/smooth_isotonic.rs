//! The smooth-isotonic SLA planner: widen the range by extrapolating the SLA margin until it
//! breaks, then probe the zero of the monotone regression of the margin over every measured
//! point, and confirm it beside that point; stops when feasible and infeasible are neighbours.

use super::config::{Dimension, SearchConfig};
use super::decision::{Decision, tried};
use super::isotonic::{first_zero, non_decreasing};
use super::iteration::{Bracket, Iteration, ProbeKind};

/// How far past the extrapolated boundary the widening step aims, so it lands beyond it.
const OVERSHOOT: f64 = 1.2;
/// The widening step moves at least this factor, and at most `MAX_WIDEN`.
const MIN_WIDEN: f64 = 1.5;
const MAX_WIDEN: f64 = 4.0;

pub fn next(config: &SearchConfig, history: &[Iteration]) -> Decision {
    let dim = &config.search_space[0];
    if history.is_empty() {
        return probe(dim, dim.lo, ProbeKind::Bracket);
    }
    let bracket = Bracket::of(history);
    match (bracket.feasible_max, bracket.infeasible_min) {
        (None, _) => Decision::Stop("smooth_isotonic_no_pass_in_range".into()),
        (Some(f), None) if f >= dim.hi => Decision::Stop("smooth_isotonic_no_failure_in_range".into()),
        (Some(f), None) => probe(dim, widen(history, f).min(dim.hi), ProbeKind::Bracket),
        (Some(f), Some(i)) if i - f <= 1.0 => Decision::Stop("smooth_isotonic_precision_reached".into()),
        (Some(f), Some(i)) => inside(dim, history, f, i),
    }
}

fn probe(dim: &Dimension, x: f64, probe: ProbeKind) -> Decision {
    Decision::Probe { point: vec![dim.clamp(x)], probe }
}

/// The margin at each measured x (repeats averaged, weighted by their count), sorted by x.
fn margins(history: &[Iteration]) -> Vec<(f64, f64, f64)> {
    let mut sums: Vec<(f64, f64, f64)> = Vec::new();
    for iteration in history {
        let Some(margin) = iteration.margin else { continue };
        match sums.iter_mut().find(|(x, _, _)| *x == iteration.x()) {
            Some(entry) => {
                entry.1 += margin;
                entry.2 += 1.0;
            }
            None => sums.push((iteration.x(), margin, 1.0)),
        }
    }
    sums.sort_by(|a, b| a.0.total_cmp(&b.0));
    sums.into_iter().map(|(x, sum, count)| (x, sum / count, count)).collect()
}

/// The next value while every probe passed: past the boundary the margin's last rise points
/// at, or ×4 while the margin is flat.
fn widen(history: &[Iteration], feasible_max: f64) -> f64 {
    let points = margins(history);
    let aimed = match points.as_slice() {
        [.., (x0, m0, _), (x1, m1, _)] if *x1 == feasible_max && m1 > m0 && *m1 < 0.0 => {
            let slope = (m1 - m0) / (x1 - x0);
            Some((x1 - m1 / slope) * OVERSHOOT)
        }
        _ => None,
    };
    let low = (feasible_max * MIN_WIDEN).max(feasible_max + 1.0);
    let high = (feasible_max * MAX_WIDEN).max(feasible_max + 1.0);
    aimed.map_or(high, |aimed| aimed.clamp(low, high)).round()
}

/// A probe strictly between the feasible `f` and infeasible `i`: beside the last fitted point
/// to confirm it; the midpoint when that confirmation missed (the fit is off, e.g. on a
/// staircase); else at the fitted zero kept a quarter of the gap from either end.
fn inside(dim: &Dimension, history: &[Iteration], f: f64, i: f64) -> Decision {
    match history {
        [.., last] if last.probe == ProbeKind::Fit => {
            let beside = if last.feasible { last.x() + 1.0 } else { last.x() - 1.0 };
            if beside > f && beside < i && !tried(history, &[beside]) {
                return probe(dim, beside, ProbeKind::Verify);
            }
        }
        [.., fitted, last] if last.probe == ProbeKind::Verify && fitted.probe == ProbeKind::Fit => {
            return probe(dim, ((f + i) / 2.0).floor(), ProbeKind::Bisect);
        }
        _ => {}
    }
    let points = margins(history);
    let values: Vec<f64> = points.iter().map(|p| p.1).collect();
    let weights: Vec<f64> = points.iter().map(|p| p.2).collect();
    let fitted: Vec<(f64, f64)> = points.iter().map(|p| p.0).zip(non_decreasing(&values, &weights)).collect();
    let gap = i - f;
    let keep_off = (gap / 4.0).floor().max(1.0);
    let zero = first_zero(&fitted, f, i).unwrap_or((f + i) / 2.0);
    let mut x = zero.round().clamp(f + keep_off, i - keep_off);
    if tried(history, &[x]) {
        x = ((f + i) / 2.0).floor();
    }
    probe(dim, x, ProbeKind::Fit)
}

#[cfg(test)]
mod tests {
    use super::super::config::PlannerKind;
    use super::super::testing::{boundary_search, staircase};

    #[test]
    fn finds_the_mocks_boundary_in_six_runs() {
        let (tried, reason, found) = boundary_search(PlannerKind::SmoothIsotonic, 1, 64, staircase(24));
        assert_eq!(found, Some(24), "{tried:?}");
        assert_eq!(reason, "smooth_isotonic_precision_reached");
        assert!(tried.len() <= 7, "{tried:?}");
    }

    #[test]
    fn finds_every_boundary_of_a_staircase_exactly() {
        for truth in 1..64 {
            let (tried, _, found) = boundary_search(PlannerKind::SmoothIsotonic, 1, 64, staircase(truth));
            assert_eq!(found, Some(truth), "{tried:?}");
            assert!(tried.len() <= 12, "boundary {truth}: {tried:?}");
        }
    }

    #[test]
    fn says_when_the_range_holds_no_boundary() {
        let (_, reason, found) = boundary_search(PlannerKind::SmoothIsotonic, 1, 16, staircase(100));
        assert_eq!((reason.as_str(), found), ("smooth_isotonic_no_failure_in_range", Some(16)));
        let (_, reason, found) = boundary_search(PlannerKind::SmoothIsotonic, 4, 16, staircase(2));
        assert_eq!((reason.as_str(), found), ("smooth_isotonic_no_pass_in_range", None));
    }
}
