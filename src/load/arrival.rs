//! Open-loop arrival times: seeded gaps of a unit-rate process (constant, Poisson, gamma) at a
//! piecewise-linear rate profile, read as AIPerf 0.13's rate loop reads a changing rate, so a
//! plain rate and a rate ramp share one path. The gaps are drawn from AIPerf's own streams
//! (`rng::aiperf_streams`), so a seed gives the schedule AIPerf sends with that `--random-seed`.

use crate::plan::segment::ExecutionSegment;
use crate::plan::{Arrival, RampStage};
use crate::rng::aiperf_streams::{self, GAMMA_INTERVAL, POISSON_INTERVAL};
use crate::rng::python::PythonRandom;

/// Gaps with mean 1 drawn from the arrival pattern: AIPerf's interval at a rate of 1 (its gap at
/// rate r is this over r).
#[derive(Debug, Clone)]
pub struct UnitGaps {
    arrival: Arrival,
    rng: PythonRandom,
}

impl UnitGaps {
    pub fn new(arrival: Arrival, seed: u64) -> Self {
        let stream = match arrival {
            Arrival::Gamma { .. } => GAMMA_INTERVAL,
            Arrival::Constant | Arrival::Poisson => POISSON_INTERVAL,
        };
        Self { arrival, rng: aiperf_streams::derived(seed, stream) }
    }

    pub fn next_gap(&mut self) -> f64 {
        match self.arrival {
            Arrival::Constant => 1.0,
            Arrival::Poisson => self.rng.exponential(),
            Arrival::Gamma { smoothness } => self.rng.gamma(smoothness) / smoothness,
        }
    }
}

/// One straight piece of a profile.
#[derive(Debug, Clone, Copy)]
struct Segment {
    start_s: f64,
    duration_s: f64,
    from: f64,
    to: f64,
}

/// A value over time that moves linearly through k6-style stages, then holds `tail` forever
/// (or ends, when `tail` is None).
#[derive(Debug, Clone)]
pub struct Profile {
    start: f64,
    segments: Vec<Segment>,
    tail: Option<f64>,
}

impl Profile {
    /// A constant value forever.
    pub fn constant(value: f64) -> Self {
        Self { start: value, segments: Vec::new(), tail: Some(value) }
    }

    /// From `start` through each stage's target; ends after the last stage.
    pub fn stages(start: f64, stages: &[RampStage]) -> Self {
        let mut segments = Vec::with_capacity(stages.len());
        let (mut from, mut start_s) = (start, 0.0);
        for stage in stages {
            let segment = Segment { start_s, duration_s: stage.duration_s, from, to: stage.target };
            start_s += stage.duration_s;
            from = stage.target;
            segments.push(segment);
        }
        Self { start, segments, tail: None }
    }

    /// The same stages, then their last target (the start, without stages) forever.
    pub fn holding_last_target(self) -> Self {
        let tail = Some(self.segments.last().map_or(self.start, |segment| segment.to));
        Self { tail, ..self }
    }

    /// The value at `t_s` moved in whole steps: each stage steps by one at a time, each step
    /// due at its share of the stage (AIPerf's stepped concurrency ramps); after the end, the
    /// last target.
    pub fn stepped_value_at(&self, t_s: f64) -> f64 {
        for segment in &self.segments {
            if t_s < segment.start_s + segment.duration_s {
                let progress = ((t_s - segment.start_s) / segment.duration_s).clamp(0.0, 1.0);
                let change = segment.to - segment.from;
                // The margin keeps a step due exactly now from rounding down to the last one.
                let steps_taken = (change.abs() * progress + 1e-9).floor().min(change.abs());
                return segment.from + steps_taken.copysign(change);
            }
        }
        self.value_at(t_s)
    }

    /// The value at `t_s` seconds; after the end, the last target.
    pub fn value_at(&self, t_s: f64) -> f64 {
        for segment in &self.segments {
            if t_s < segment.start_s + segment.duration_s {
                let progress = ((t_s - segment.start_s) / segment.duration_s).clamp(0.0, 1.0);
                return segment.from + (segment.to - segment.from) * progress;
            }
        }
        self.tail.or(self.segments.last().map(|s| s.to)).unwrap_or(self.start)
    }

    /// When the stages end: the value changes no more after it.
    pub fn stages_end_s(&self) -> f64 {
        self.segments.last().map_or(0.0, |segment| segment.start_s + segment.duration_s)
    }

    /// When a finite profile ends (None when it holds a value forever).
    fn end_s(&self) -> Option<f64> {
        self.tail.is_none().then(|| self.stages_end_s())
    }
}

/// How often AIPerf 0.13's ramps set a changing rate (its `RATE_RAMP_UPDATE_INTERVAL`).
const RATE_UPDATE_S: f64 = 0.1;

/// Arrival offsets (ns from the phase start) of a pattern at a rate profile in requests/s, as
/// AIPerf 0.13's rate loop paces them: each gap is drawn at the rate of its moment, the rate is
/// the profile's value read every `RATE_UPDATE_S` from the start, and a change of rate pulls the
/// pending arrival in to the change plus a fresh gap at the new rate when that is sooner. So the
/// first arrival comes one gap after the start (as a Poisson process started at 0 has it): 5
/// req/s over 1.5 s sends 7 (at 0.2 … 1.4 s), not 8 from 0; and a ramp's rate climbs in steps.
pub struct ArrivalTimes {
    gaps: UnitGaps,
    rate: Profile,
    rate_now: f64,
    /// The index of the next rate update (at index × `RATE_UPDATE_S`).
    next_update: u64,
    /// The pending arrival is `units` unit gaps at `rate_now` after `anchor_s` (so a constant
    /// rate's arrivals fall on exact multiples of its period).
    anchor_s: f64,
    units: f64,
}

impl ArrivalTimes {
    pub fn new(arrival: Arrival, seed: u64, rate: Profile) -> Self {
        let mut gaps = UnitGaps::new(arrival, seed);
        let units = gaps.next_gap();
        let ramped = !rate.segments.is_empty();
        let mut times = Self { gaps, rate_now: rate.value_at(0.0), rate, next_update: 1, anchor_s: 0.0, units };
        // AIPerf's ramp sets its start rate as the phase starts, which its rate loop reads as a
        // change: a fresh gap from the start, the sooner of the two kept.
        if ramped {
            times.change_rate(times.rate_now, 0.0);
        }
        times
    }

    /// When the pending arrival is due (s); infinite while the rate is 0.
    fn pending_s(&self) -> f64 {
        match self.units {
            0.0 => self.anchor_s,
            units if self.rate_now > 0.0 => self.anchor_s + units / self.rate_now,
            _ => f64::INFINITY,
        }
    }

    /// The rate becomes `rate` at `update_s`: the pending arrival is pulled in to a fresh gap
    /// at the new rate from now when that is sooner; the ones after it go at the new rate.
    fn change_rate(&mut self, rate: f64, update_s: f64) {
        let pending_s = self.pending_s();
        let fresh = self.gaps.next_gap();
        self.rate_now = rate;
        let pulled_s = if rate > 0.0 { update_s + fresh / rate } else { f64::INFINITY };
        (self.anchor_s, self.units) = match pulled_s < pending_s || !pending_s.is_finite() {
            true => (update_s, fresh),
            false => (pending_s, 0.0),
        };
    }
}

impl Iterator for ArrivalTimes {
    type Item = u64;

    fn next(&mut self) -> Option<u64> {
        let stages_end_s = self.rate.stages_end_s();
        loop {
            let update_s = self.next_update as f64 * RATE_UPDATE_S;
            // The last update reads the value the stages end at; no change comes after it.
            if update_s >= self.pending_s() || update_s - RATE_UPDATE_S >= stages_end_s {
                break;
            }
            self.next_update += 1;
            let rate = self.rate.value_at(update_s);
            if rate != self.rate_now {
                self.change_rate(rate, update_s);
            }
        }
        let at_s = self.pending_s();
        if !at_s.is_finite() || self.rate.end_s().is_some_and(|end_s| at_s > end_s) {
            return None;
        }
        self.units += self.gaps.next_gap();
        Some((at_s * 1e9) as u64)
    }
}

/// The arrivals of execution segment `segment` (arrival k when k % N == I): the segments
/// together send the one seeded schedule. All of them without a segment.
pub fn of_segment(arrivals: ArrivalTimes, segment: Option<ExecutionSegment>) -> impl Iterator<Item = u64> {
    arrivals.enumerate().filter(move |(k, _)| segment.is_none_or(|s| s.keeps(*k as u64))).map(|(_, at_ns)| at_ns)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Mean and coefficient of variation of the gaps between `times_ns`, in seconds.
    fn gap_stats(times_ns: &[u64]) -> (f64, f64) {
        let gaps: Vec<f64> = times_ns.windows(2).map(|w| (w[1] - w[0]) as f64 / 1e9).collect();
        let mean = gaps.iter().sum::<f64>() / gaps.len() as f64;
        let var = gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / (gaps.len() - 1) as f64;
        (mean, var.sqrt() / mean)
    }

    fn arrivals(arrival: Arrival, rate: f64, n: usize) -> Vec<u64> {
        ArrivalTimes::new(arrival, 42, Profile::constant(rate)).take(n).collect()
    }

    #[test]
    fn constant_arrivals_are_evenly_spaced_from_one_gap_after_the_start() {
        let times = arrivals(Arrival::Constant, 100.0, 5);
        assert_eq!(times, vec![10_000_000, 20_000_000, 30_000_000, 40_000_000, 50_000_000]);
    }

    #[test]
    fn poisson_gaps_have_the_rate_and_a_cv_of_one() {
        let (mean, cv) = gap_stats(&arrivals(Arrival::Poisson, 200.0, 20_000));
        assert!((mean - 0.005).abs() < 0.0002, "mean gap {mean}");
        assert!((cv - 1.0).abs() < 0.05, "cv {cv}");
    }

    #[test]
    fn gamma_smoothness_sets_the_cv() {
        for smoothness in [0.25, 1.0, 4.0] {
            let (mean, cv) = gap_stats(&arrivals(Arrival::Gamma { smoothness }, 50.0, 20_000));
            let expected_cv = 1.0 / smoothness.sqrt();
            assert!((mean - 0.02).abs() < 0.02 * 0.05, "smoothness {smoothness}: mean gap {mean}");
            assert!((cv - expected_cv).abs() < expected_cv * 0.08, "smoothness {smoothness}: cv {cv}");
        }
    }

    #[test]
    fn the_same_seed_gives_the_same_times() {
        assert_eq!(arrivals(Arrival::Poisson, 10.0, 100), arrivals(Arrival::Poisson, 10.0, 100));
        let other: Vec<u64> = ArrivalTimes::new(Arrival::Poisson, 43, Profile::constant(10.0)).take(100).collect();
        assert_ne!(arrivals(Arrival::Poisson, 10.0, 100), other);
    }

    #[test]
    fn a_ramp_reads_its_rate_every_tenth_of_a_second_as_aiperf_paces_it() {
        // `--request-rate 10 --request-rate-ramp-duration 2 --arrival-pattern constant`: from
        // 0.5 req/s (one update's share), 10 req/s at 2 s, then held. AIPerf 0.13 issued its
        // first four at 0.820, 1.049, 1.238 and 1.397 s after the phase start on that command.
        let ramp = Profile::stages(0.5, &[RampStage { duration_s: 2.0, target: 10.0 }]).holding_last_target();
        let times: Vec<u64> = ArrivalTimes::new(Arrival::Constant, 1, ramp).take(40).collect();
        let ms: Vec<u64> = times.iter().take(4).map(|ns| (*ns + 500_000) / 1_000_000).collect();
        assert_eq!(ms, [817, 1049, 1240, 1401], "each pulled in by the updates before it");
        let later: Vec<u64> = times.windows(2).skip(30).map(|pair| pair[1] - pair[0]).collect();
        assert!(later.iter().all(|gap| *gap == 100_000_000), "10 req/s once the ramp is over: {later:?}");
        // A finite ramp ends with its stages; a rate of 0 sends nothing.
        let up_and_over = Profile::stages(0.0, &[RampStage { duration_s: 1.0, target: 20.0 }]);
        let times: Vec<u64> = ArrivalTimes::new(Arrival::Constant, 1, up_and_over).collect();
        assert!(!times.is_empty() && times.iter().all(|ns| *ns <= 1_000_000_000), "{times:?}");
        assert_eq!(ArrivalTimes::new(Arrival::Poisson, 1, Profile::constant(0.0)).next(), None);
    }

    #[test]
    fn a_poisson_ramp_draws_a_fresh_gap_as_it_sets_its_start_rate() {
        // `--request-rate 40 --request-rate-ramp-duration 0.5 --random-seed 2`: from 8 req/s.
        // AIPerf 0.13's rate loop, run with its own generator, puts the first five at 34.3,
        // 90.2, 208.4, 210.6 and 277.6 ms (its sends on that command: the same gaps within
        // 1-4 ms); without the fresh gap at the start the first comes at 119 ms.
        let ramp = Profile::stages(8.0, &[RampStage { duration_s: 0.5, target: 40.0 }]).holding_last_target();
        let ms: Vec<f64> =
            ArrivalTimes::new(Arrival::Poisson, 2, ramp).take(5).map(|ns| (ns as f64 / 1e5).round() / 10.0).collect();
        assert_eq!(ms, [34.3, 90.2, 208.4, 210.6, 277.6]);
    }

    #[test]
    fn a_held_ramp_keeps_its_last_target_after_the_stages() {
        // 0 → 10 req/s over 2 s, then 10 req/s held: 10 more each second.
        let stages = [RampStage { duration_s: 2.0, target: 10.0 }];
        let held = Profile::stages(0.0, &stages).holding_last_target();
        let times: Vec<u64> = ArrivalTimes::new(Arrival::Constant, 1, held).take(60).collect();
        assert_eq!(times.len(), 60, "a held ramp does not end");
        let count = |from_s: u64, to_s: u64| {
            times.iter().filter(|&&t| t >= from_s * 1_000_000_000 && t < to_s * 1_000_000_000).count()
        };
        assert_eq!((count(4, 5), count(5, 6)), (10, 10), "the target once held");
        assert!(count(0, 2) < 10, "the ramp's rate steps up from 0: {} in its 2 s", count(0, 2));
    }

    #[test]
    fn a_stepped_profile_moves_one_whole_step_at_each_share_of_the_stage() {
        // 1 → 5 over 2 s: 2 at 0.5 s, 3 at 1 s, 4 at 1.5 s, 5 at 2 s (AIPerf's step times).
        let up = Profile::stages(1.0, &[RampStage { duration_s: 2.0, target: 5.0 }]).holding_last_target();
        let at = |t: f64| up.stepped_value_at(t);
        assert_eq!(
            [at(0.0), at(0.49), at(0.5), at(1.2), at(1.99), at(2.0), at(60.0)],
            [1.0, 1.0, 2.0, 3.0, 4.0, 5.0, 5.0]
        );
        let down = Profile::stages(4.0, &[RampStage { duration_s: 4.0, target: 0.0 }]);
        assert_eq!([down.stepped_value_at(0.5), down.stepped_value_at(1.0)], [4.0, 3.0]);
        let flat = Profile::stages(7.0, &[]).holding_last_target();
        assert_eq!(flat.stepped_value_at(3.0), 7.0, "no stages: the start holds");
    }

    #[test]
    fn segments_deal_out_the_one_schedule() {
        let whole = arrivals(Arrival::Poisson, 50.0, 30);
        let mut union: Vec<u64> = (0..3)
            .flat_map(|index| {
                let segment = ExecutionSegment::new(index, 3).ok();
                of_segment(ArrivalTimes::new(Arrival::Poisson, 42, Profile::constant(50.0)), segment)
                    .take(10)
                    .collect::<Vec<_>>()
            })
            .collect();
        union.sort_unstable();
        assert_eq!(union, whole);
    }
}
