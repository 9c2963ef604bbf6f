//! AIPerf's in-phase ramps as load modes: a closed loop whose users and prefill cap step up
//! from 1, a rate that climbs to its target, and a piecewise-linear rate series, all held.

use serde::{Deserialize, Serialize};

use super::{Arrival, LoadMode, RampStage, RampedQuantity};

/// How often AIPerf moves a ramping rate (`AIPERF_TIMING_RATE_RAMP_UPDATE_INTERVAL`): its rate
/// ramps start at one such step's share of the target.
pub const RATE_RAMP_UPDATE_S: f64 = 0.1;

/// At most `concurrency` requests wait for their first token at once. With `ramp_s` the cap
/// starts at 1 and grows by one at even steps, reaching `concurrency` after `ramp_s` seconds
/// (AIPerf's `prefill_ramp`).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct PrefillCap {
    pub concurrency: usize,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub ramp_s: Option<f64>,
}

/// A closed loop of `users`: plain, or, with a ramp of its users (AIPerf's `concurrency_ramp`,
/// from 1 user) or of its prefill cap, a held concurrency ramp.
pub fn closed_loop(users: usize, ramp_s: Option<f64>, prefill: Option<PrefillCap>) -> LoadMode {
    if ramp_s.is_none() && prefill.is_none_or(|cap| cap.ramp_s.is_none()) {
        return LoadMode::Concurrency { concurrency: users, prefill_concurrency: prefill.map(|cap| cap.concurrency) };
    }
    LoadMode::Ramp {
        ramped: RampedQuantity::Concurrency,
        start: if ramp_s.is_some() { 1.0 } else { users as f64 },
        stages: ramp_s.map(|duration_s| RampStage { duration_s, target: users as f64 }).into_iter().collect(),
        arrival: Arrival::Constant,
        seed: 0,
        hold: true,
        max_concurrency: None,
        max_concurrency_ramp_s: None,
        prefill,
    }
}

impl LoadMode {
    /// An open-loop mode (a rate, a rate ramp) with the prefill cap `prefill`.
    pub fn with_prefill(mut self, cap: Option<PrefillCap>) -> LoadMode {
        if let LoadMode::Rate { prefill, .. } | LoadMode::Ramp { ramped: RampedQuantity::Rate, prefill, .. } = &mut self
        {
            *prefill = cap;
        }
        self
    }

    /// The users, ramp seconds and prefill cap of a mode `closed_loop` builds with a ramp.
    pub fn ramped_closed_loop(&self) -> Option<(usize, Option<f64>, Option<PrefillCap>)> {
        let LoadMode::Ramp {
            ramped: RampedQuantity::Concurrency,
            start,
            stages,
            arrival: Arrival::Constant,
            seed: 0,
            hold: true,
            max_concurrency: None,
            prefill,
            ..
        } = self
        else {
            return None;
        };
        let whole = |users: f64| (users >= 1.0 && users.fract() == 0.0).then_some(users as usize);
        match stages.as_slice() {
            [] => Some((whole(*start)?, None, *prefill)),
            [stage] if *start == 1.0 => Some((whole(stage.target)?, Some(stage.duration_s), *prefill)),
            _ => None,
        }
    }
}

/// AIPerf's rate ramp to `rate` over `ramp_s`: its start (one update step's share of the
/// target) and its stage.
pub fn rate_ramp(rate: f64, ramp_s: f64) -> (f64, Vec<RampStage>) {
    let start = rate * (RATE_RAMP_UPDATE_S / ramp_s).min(1.0);
    (start, vec![RampStage { duration_s: ramp_s, target: rate }])
}

/// One point of a rate series: `rps` requests per second at `time_s` seconds into the series.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RatePoint {
    pub time_s: f64,
    pub rps: f64,
}

/// AIPerf's `rate_series` as a held rate ramp's start and stages: the rate is the first
/// point's until its time, moves linearly from point to point, and holds the last point's
/// after it. The series' clock starts once a rate ramp (to the first point's rate) is over.
pub fn rate_series(points: &[RatePoint], ramp_s: Option<f64>) -> Result<(f64, Vec<RampStage>), String> {
    let [first, .., _] = points else {
        return Err(format!("a rate series needs at least two points, got {}", points.len()));
    };
    for (index, point) in points.iter().enumerate() {
        if !(point.time_s.is_finite() && point.time_s >= 0.0) {
            return Err(format!("point {index}: the time must be a number of seconds ≥ 0, got {}", point.time_s));
        }
        if !(point.rps.is_finite() && point.rps > 0.0) {
            return Err(format!("point {index}: the rate must be above 0 requests/s, got {}", point.rps));
        }
    }
    if let Some(index) = points.windows(2).position(|pair| pair[1].time_s <= pair[0].time_s) {
        return Err(format!(
            "point {}: times must increase strictly, {} follows {}",
            index + 1,
            points[index + 1].time_s,
            points[index].time_s
        ));
    }
    let (start, mut stages) = match ramp_s {
        Some(ramp_s) => rate_ramp(first.rps, ramp_s),
        None => (first.rps, Vec::new()),
    };
    if first.time_s > 0.0 {
        stages.push(RampStage { duration_s: first.time_s, target: first.rps });
    }
    stages.extend(
        points.windows(2).map(|pair| RampStage { duration_s: pair[1].time_s - pair[0].time_s, target: pair[1].rps }),
    );
    Ok((start, stages))
}

/// An open loop whose rate runs from `start` through `stages`, then holds the last target;
/// at most `max_concurrency` in flight, a cap that grows from 1 over `max_concurrency_ramp_s`
/// (AIPerf's `concurrency_ramp` of a rate phase).
pub fn held_rate(
    start: f64,
    stages: Vec<RampStage>,
    arrival: Arrival,
    (max_concurrency, max_concurrency_ramp_s): (Option<usize>, Option<f64>),
    seed: u64,
) -> LoadMode {
    LoadMode::Ramp {
        ramped: RampedQuantity::Rate,
        start,
        stages,
        arrival,
        seed,
        hold: true,
        max_concurrency,
        max_concurrency_ramp_s: max_concurrency_ramp_s.filter(|_| max_concurrency.is_some()),
        prefill: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(time_s: f64, rps: f64) -> RatePoint {
        RatePoint { time_s, rps }
    }

    #[test]
    fn closed_loops_are_plain_without_ramps_and_read_back_with_them() {
        let cap = PrefillCap { concurrency: 2, ramp_s: None };
        assert_eq!(
            closed_loop(8, None, Some(cap)),
            LoadMode::Concurrency { concurrency: 8, prefill_concurrency: Some(2) }
        );
        for (ramp_s, prefill_ramp_s) in [(Some(3.0), None), (None, Some(1.5)), (Some(3.0), Some(1.5))] {
            let prefill = Some(PrefillCap { concurrency: 2, ramp_s: prefill_ramp_s });
            let mode = closed_loop(8, ramp_s, prefill);
            assert_eq!(mode.ramped_closed_loop(), Some((8, ramp_s, prefill)), "{mode:?}");
        }
        let k6 = LoadMode::Ramp {
            ramped: RampedQuantity::Concurrency,
            start: 0.0,
            stages: vec![RampStage { duration_s: 1.0, target: 4.0 }],
            arrival: Arrival::Constant,
            seed: 0,
            hold: true,
            max_concurrency: None,
            max_concurrency_ramp_s: None,
            prefill: None,
        };
        assert_eq!(k6.ramped_closed_loop(), None, "a ramp from 0 users is not AIPerf's");
    }

    #[test]
    fn a_rate_ramp_starts_at_one_update_steps_share() {
        assert_eq!(rate_ramp(50.0, 10.0), (0.5, vec![RampStage { duration_s: 10.0, target: 50.0 }]));
        assert_eq!(rate_ramp(50.0, 0.05).0, 50.0, "a ramp shorter than a step starts at the target");
    }

    #[test]
    fn a_series_holds_its_first_rate_then_moves_between_points() {
        let (start, stages) = rate_series(&[point(2.0, 5.0), point(4.0, 15.0), point(5.0, 15.0)], None).unwrap();
        assert_eq!(start, 5.0);
        let expected =
            [(2.0, 5.0), (2.0, 15.0), (1.0, 15.0)].map(|(duration_s, target)| RampStage { duration_s, target });
        assert_eq!(stages, expected);
        let (start, stages) = rate_series(&[point(0.0, 10.0), point(1.0, 20.0)], Some(4.0)).unwrap();
        assert_eq!(start, 0.25, "the ramp to the first point comes first");
        assert_eq!(stages[0], RampStage { duration_s: 4.0, target: 10.0 });
        assert_eq!(stages[1], RampStage { duration_s: 1.0, target: 20.0 });
    }

    #[test]
    fn a_series_with_too_few_points_or_times_out_of_order_is_refused() {
        assert!(rate_series(&[point(0.0, 1.0)], None).unwrap_err().contains("two points"));
        assert!(rate_series(&[point(1.0, 1.0), point(1.0, 2.0)], None).unwrap_err().contains("increase strictly"));
        assert!(rate_series(&[point(0.0, 1.0), point(1.0, 0.0)], None).unwrap_err().contains("point 1"));
    }
}
