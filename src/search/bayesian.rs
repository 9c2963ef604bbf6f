//! Bayesian optimisation: quasi-random initial points, then the candidate of highest expected
//! improvement of the objective times the probability that every SLA holds (two Gaussian
//! processes: the objective, and the worst SLA margin).

use super::config::{DimensionKind, Direction, SearchConfig};
use super::decision::{Decision, tried};
use super::gaussian_process::{GaussianProcess, normal_cdf, normal_pdf};
use super::iteration::{Iteration, ProbeKind};

/// Candidates scored per step when the space is not a short integer range.
const CANDIDATES: usize = 1024;
/// An integer dimension this short is scored at every value.
const ENUMERATED_SPAN: f64 = 4096.0;
/// Below this expected improvement (in standard deviations of the objective) nothing is left to gain.
const EXHAUSTED: f64 = 1e-4;
/// The worst margins the constraint model sees: a breach far past the SLA tells no more than one just past it.
const MARGIN_RANGE: (f64, f64) = (-1.0, 1.0);

const PRIMES: [u64; 10] = [2, 3, 5, 7, 11, 13, 17, 19, 23, 29];

pub fn next(config: &SearchConfig, history: &[Iteration]) -> Decision {
    let seed_offset = config.random_seed.unwrap_or(0) % 997;
    if history.len() < config.n_initial_points {
        let dims = config.search_space.len();
        for index in (history.len() as u64 + 1 + seed_offset)..(history.len() as u64 + 1 + seed_offset + 256) {
            let point = to_point(config, &halton(index, dims));
            if !tried(history, &point) {
                return Decision::Probe { point, probe: ProbeKind::Initial };
            }
        }
    }
    let candidates: Vec<Vec<f64>> =
        candidates(config, seed_offset).into_iter().filter(|c| !tried(history, c)).collect();
    if candidates.is_empty() {
        return Decision::Stop("search_space_exhausted".into());
    }
    let unit = |point: &[f64]| -> Vec<f64> {
        config.search_space.iter().zip(point).map(|(dim, value)| dim.to_unit(*value)).collect()
    };
    let direction = config.objectives.first().map_or(Direction::Maximize, |o| o.direction);
    let signed = |value: f64| if direction == Direction::Maximize { value } else { -value };
    let scored: Vec<(&Iteration, f64)> = history
        .iter()
        .filter_map(|it| it.objective_values.as_ref().and_then(|v| v.first()).map(|v| (it, signed(*v))))
        .collect();
    let objective = GaussianProcess::fit(
        &scored.iter().map(|(it, _)| unit(&it.point)).collect::<Vec<_>>(),
        &scored.iter().map(|(_, y)| *y).collect::<Vec<_>>(),
    );
    let with_margin: Vec<&Iteration> = history.iter().filter(|it| it.margin.is_some()).collect();
    let constraint = GaussianProcess::fit(
        &with_margin.iter().map(|it| unit(&it.point)).collect::<Vec<_>>(),
        &with_margin
            .iter()
            .map(|it| it.margin.unwrap_or(0.0).clamp(MARGIN_RANGE.0, MARGIN_RANGE.1))
            .collect::<Vec<_>>(),
    );
    let best = scored
        .iter()
        .filter(|(it, _)| it.feasible)
        .map(|(_, y)| *y)
        .fold(None, |best: Option<f64>, y| Some(best.map_or(y, |b| b.max(y))));
    let mut chosen: Option<(f64, &Vec<f64>)> = None;
    for candidate in &candidates {
        let x = unit(candidate);
        let feasible = match &constraint {
            Some(model) => {
                let (mean, sd) = model.predict(&x);
                normal_cdf(-mean / sd)
            }
            None => 1.0,
        };
        let score = match (&objective, best) {
            (Some(model), Some(best)) => {
                let (mean, sd) = model.predict(&x);
                let z = (mean - best) / sd;
                feasible * ((mean - best) * normal_cdf(z) + sd * normal_pdf(z)) / model_scale(&scored)
            }
            _ => feasible,
        };
        if chosen.is_none_or(|(top, _)| score > top) {
            chosen = Some((score, candidate));
        }
    }
    match chosen {
        Some((score, _)) if best.is_some() && score < EXHAUSTED => {
            Decision::Stop("expected_improvement_exhausted".into())
        }
        Some((_, point)) => Decision::Probe { point: point.clone(), probe: ProbeKind::Acquisition },
        None => Decision::Stop("search_space_exhausted".into()),
    }
}

/// The spread of the objective values seen, to state improvement in its units.
fn model_scale(scored: &[(&Iteration, f64)]) -> f64 {
    let (low, high) =
        scored.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), (_, y)| (lo.min(*y), hi.max(*y)));
    if high > low { high - low } else { high.abs().max(1.0) }
}

fn to_point(config: &SearchConfig, unit: &[f64]) -> Vec<f64> {
    config.search_space.iter().zip(unit).map(|(dim, u)| dim.from_unit(*u)).collect()
}

/// Every point a step may choose: each value of a short integer range, else a Halton set.
fn candidates(config: &SearchConfig, seed_offset: u64) -> Vec<Vec<f64>> {
    if let [dim] = config.search_space.as_slice()
        && dim.kind == DimensionKind::Int
        && dim.hi - dim.lo <= ENUMERATED_SPAN
    {
        return (dim.lo.round() as i64..=dim.hi.round() as i64).map(|v| vec![v as f64]).collect();
    }
    let dims = config.search_space.len();
    let mut points: Vec<Vec<f64>> =
        (0..CANDIDATES as u64).map(|k| to_point(config, &halton(k + 1 + seed_offset, dims))).collect();
    points.sort_by(|a, b| {
        a.iter().zip(b).map(|(x, y)| x.total_cmp(y)).find(|o| o.is_ne()).unwrap_or(std::cmp::Ordering::Equal)
    });
    points.dedup();
    points
}

/// The `index`-th point of the Halton sequence in `dims` dimensions.
fn halton(index: u64, dims: usize) -> Vec<f64> {
    PRIMES.iter().cycle().take(dims).map(|&base| radical_inverse(index, base)).collect()
}

fn radical_inverse(mut index: u64, base: u64) -> f64 {
    let mut value = 0.0;
    let mut fraction = 1.0 / base as f64;
    while index > 0 {
        value += (index % base) as f64 * fraction;
        index /= base;
        fraction /= base as f64;
    }
    value
}

#[cfg(test)]
mod tests {
    use super::super::config::PlannerKind;
    use super::super::testing::{config, search, staircase};

    #[test]
    fn reaches_the_throughput_plateau_without_leaving_the_sla() {
        // The staircase's throughput saturates at 8 users: the best feasible trial is on the
        // plateau, between 8 users and the boundary (24).
        let (history, _) = search(&config(PlannerKind::Bayesian, 1, 64), staircase(24));
        assert!(history.len() <= 30);
        let best = history
            .iter()
            .filter(|it| it.feasible)
            .max_by(|a, b| a.objective_values.as_ref().unwrap()[0].total_cmp(&b.objective_values.as_ref().unwrap()[0]))
            .expect("a feasible trial");
        assert!((8.0..=24.0).contains(&best.x()), "{:?}", history.iter().map(|it| it.x()).collect::<Vec<_>>());
    }
}
