//! The smooth-isotonic SLA planner: widen the range by extrapolating the SLA margin until it
//! breaks, then probe the zero of the monotone regression of the margin over every measured
//! point, and confirm it beside that point, never where halving could no longer finish in as
//! many runs as halving the first bracket; stops when feasible and infeasible are neighbours.

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

/// A probe strictly between the feasible `f` and infeasible `i`: where `aimed` points, within
/// bisection's budget.
fn inside(dim: &Dimension, history: &[Iteration], f: f64, i: f64) -> Decision {
    let (x, kind) = aimed(history, f, i);
    let (lo, hi) = within_budget(history, f, i);
    if x < lo || x > hi {
        return probe(dim, x.clamp(lo, hi), ProbeKind::Bisect);
    }
    probe(dim, x, kind)
}

/// Where halving could still finish in as many runs as halving the first bracket would have
/// taken (⌈log2 of its gap⌉): the probe this many runs into the bracket must leave a gap of at
/// most 2^(runs left after it), on either side. A fit pulled toward one end by a curved
/// margin, or a confirmation beside a fit that missed, so costs no run beyond bisection's.
fn within_budget(history: &[Iteration], f: f64, i: f64) -> (f64, f64) {
    let inside = |it: &Iteration| matches!(it.probe, ProbeKind::Fit | ProbeKind::Verify | ProbeKind::Bisect);
    let first = history.iter().position(inside).unwrap_or(history.len());
    let bracket = Bracket::of(&history[..first]);
    let first_gap = match (bracket.feasible_max, bracket.infeasible_min) {
        (Some(f0), Some(i0)) => i0 - f0,
        _ => i - f,
    };
    let budget = first_gap.log2().ceil() as i32;
    let probed = (history.len() - first) as i32;
    let reach = 2f64.powi((budget - probed - 1).max(0));
    let (lo, hi) = ((i - reach).max(f + 1.0), (f + reach).min(i - 1.0));
    // Spent only when the history came from elsewhere (a checkpoint of another planner's runs).
    if lo <= hi { (lo, hi) } else { (f + 1.0, i - 1.0) }
}

/// Beside the last fitted point to confirm it; the midpoint when that confirmation missed (the
/// fit is off, e.g. on a staircase); else the fitted zero kept a quarter of the gap from either
/// end.
fn aimed(history: &[Iteration], f: f64, i: f64) -> (f64, ProbeKind) {
    match history {
        [.., last] if last.probe == ProbeKind::Fit => {
            let beside = if last.feasible { last.x() + 1.0 } else { last.x() - 1.0 };
            if beside > f && beside < i && !tried(history, &[beside]) {
                return (beside, ProbeKind::Verify);
            }
        }
        [.., fitted, last] if last.probe == ProbeKind::Verify && fitted.probe == ProbeKind::Fit => {
            return (((f + i) / 2.0).floor(), ProbeKind::Bisect);
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
    (x, ProbeKind::Fit)
}

#[cfg(test)]
mod tests {
    use super::super::config::PlannerKind;
    use super::super::iteration::tests::Fixed;
    use super::super::iteration::{Bracket, ProbeKind};
    use super::super::testing::{boundary_search, config, knee, search, staircase};

    #[test]
    fn finds_the_mocks_boundary_in_six_runs() {
        let (tried, reason, found) = boundary_search(PlannerKind::SmoothIsotonic, 1, 64, staircase(24));
        assert_eq!(found, Some(24), "{tried:?}");
        assert_eq!(reason, "smooth_isotonic_precision_reached");
        assert!(tried.len() <= 7, "{tried:?}");
    }

    /// Every boundary in [1, 64] found exactly, and inside the first bracket in no more runs
    /// than halving it takes.
    fn finds_every_boundary_within_bisections_runs(server: impl Fn(i64) -> Box<dyn Fn(f64) -> Fixed>) {
        for truth in 1..64 {
            let (history, _) = search(&config(PlannerKind::SmoothIsotonic, 1, 64), server(truth));
            let tried: Vec<i64> = history.iter().map(|it| it.x() as i64).collect();
            assert_eq!(Bracket::of(&history).feasible_max, Some(truth as f64), "{tried:?}");
            let widening = history.iter().take_while(|it| it.probe == ProbeKind::Bracket).count();
            let first = Bracket::of(&history[..widening]);
            let Some(failed) = first.infeasible_min else { continue };
            let halvings = (failed - first.feasible_max.unwrap_or(1.0)).log2().ceil() as usize;
            assert!(history.len() - widening <= halvings, "boundary {truth}: {tried:?}");
        }
    }

    #[test]
    fn finds_every_boundary_of_a_staircase_within_bisections_runs() {
        finds_every_boundary_within_bisections_runs(|truth| Box::new(staircase(truth)));
    }

    #[test]
    fn a_knee_pulling_the_fit_to_one_end_costs_no_run_beyond_bisection() {
        finds_every_boundary_within_bisections_runs(|truth| Box::new(knee(truth)));
    }

    #[test]
    fn says_when_the_range_holds_no_boundary() {
        let (_, reason, found) = boundary_search(PlannerKind::SmoothIsotonic, 1, 16, staircase(100));
        assert_eq!((reason.as_str(), found), ("smooth_isotonic_no_failure_in_range", Some(16)));
        let (_, reason, found) = boundary_search(PlannerKind::SmoothIsotonic, 4, 16, staircase(2));
        assert_eq!((reason.as_str(), found), ("smooth_isotonic_no_pass_in_range", None));
    }
}
