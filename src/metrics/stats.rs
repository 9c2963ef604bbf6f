//! Distribution statistics of a record metric: mean, extremes, numpy-style (linear)
//! percentiles, standard deviation, count and sum. Record metrics take the population
//! standard deviation (ddof=0, numpy's default, as AIPerf 0.13 computes them); GPU telemetry the
//! sample one (ddof=1, as AIPerf's telemetry does). The sum and the std come from exact sums
//! (`ExactSum`), rounded once: the same bits whatever order the values come in.

use super::exact_sum::ExactSum;
use crate::metric_result::Stats;

/// The full stats block of `values` with the population standard deviation; None when there
/// are no values.
pub fn distribution(values: &[f64]) -> Option<Stats> {
    distribution_in_place(&mut values.to_vec())
}

/// `distribution` with the sample standard deviation (ddof=1): a time series' samples.
pub fn sample_distribution(values: &[f64]) -> Option<Stats> {
    let mut stats = distribution(values)?;
    let count = values.len() as f64;
    stats.std = stats.std.map(|population| if count < 2.0 { 0.0 } else { population * (count / (count - 1.0)).sqrt() });
    Some(stats)
}

/// `distribution`, sorting `values` where they lie instead of a copy (for the run's kept
/// values, which can be hundreds of MB).
pub fn distribution_in_place(values: &mut [f64]) -> Option<Stats> {
    let sums = ExactSum::of(values);
    summed_distribution_in_place(values, &sums)
}

/// `distribution_in_place` of `values` whose sums are `sums` already.
pub fn summed_distribution_in_place(values: &mut [f64], sums: &ExactSum) -> Option<Stats> {
    values.sort_by(f64::total_cmp);
    let sorted = &*values;
    let moments = Moments::of(sums, *sorted.first()?, *sorted.last()?)?;
    Some(moments.stats(|pct| percentile(sorted, pct)))
}

/// What a distribution's stats need besides its percentiles.
pub struct Moments {
    pub count: u64,
    pub sum: f64,
    pub min: f64,
    pub max: f64,
    /// Population standard deviation (ddof=0).
    pub std: f64,
}

impl Moments {
    /// The moments of the values summed in `sums`, the least `min` and the most `max`; None
    /// when there are none.
    pub fn of(sums: &ExactSum, min: f64, max: f64) -> Option<Self> {
        Some(Self { count: sums.count(), sum: sums.sum(), min, max, std: sums.population_std()? })
    }

    /// The full stats block, each percentile from `at` (a percentage in 0..=100).
    pub fn stats(&self, at: impl Fn(f64) -> f64) -> Stats {
        let at = |pct: f64| Some(at(pct));
        Stats {
            avg: self.sum / self.count as f64,
            min: Some(self.min),
            max: Some(self.max),
            p1: at(1.0),
            p5: at(5.0),
            p10: at(10.0),
            p25: at(25.0),
            p50: at(50.0),
            p75: at(75.0),
            p90: at(90.0),
            p95: at(95.0),
            p99: at(99.0),
            std: Some(self.std),
            count: Some(self.count),
            sum: Some(self.sum),
        }
    }
}

/// The `pct`-th percentile of ascending `sorted` values, interpolating linearly between the
/// two closest ranks (numpy's default method). `sorted` must not be empty.
pub fn percentile(sorted: &[f64], pct: f64) -> f64 {
    interpolate(sorted.len(), pct, |rank| sorted[rank])
}

/// The `pct`-th percentile of `count` values, `at(rank)` being the value of that rank in
/// ascending order: numpy's linear interpolation between the two closest ranks.
pub fn interpolate(count: usize, pct: f64, at: impl Fn(usize) -> f64) -> f64 {
    let rank = pct / 100.0 * (count - 1) as f64;
    let lower = rank.floor() as usize;
    let upper = rank.ceil() as usize;
    let fraction = rank - lower as f64;
    at(lower) + (at(upper) - at(lower)) * fraction
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn percentiles_interpolate_like_numpy() {
        let s = distribution(&[4.0, 1.0, 3.0, 2.0]).unwrap();
        assert!(close(s.p50.unwrap(), 2.5));
        // numpy.percentile([1,2,3,4], 25) == 1.75, 90 -> 3.7
        assert!(close(s.p25.unwrap(), 1.75));
        assert!(close(s.p90.unwrap(), 3.7));
        let hundred: Vec<f64> = (1..=100).map(f64::from).collect();
        let s = distribution(&hundred).unwrap();
        // numpy.percentile(range(1,101), 99) == 99.01; p1 == 1.99; p50 == 50.5
        assert!(close(s.p99.unwrap(), 99.01));
        assert!(close(s.p1.unwrap(), 1.99));
        assert!(close(s.p50.unwrap(), 50.5));
        assert!(close(s.p5.unwrap(), 5.95));
    }

    #[test]
    fn mean_extremes_sum_and_population_std_and_sample_std_for_series() {
        let s = distribution(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]).unwrap();
        assert!(close(s.avg, 5.0));
        assert_eq!((s.min, s.max, s.count), (Some(2.0), Some(9.0), Some(8)));
        assert!(close(s.sum.unwrap(), 40.0));
        // Sum of squared deviations is 32: numpy.std (ddof=0) -> sqrt(32/8) = 2, ddof=1 -> sqrt(32/7).
        assert!(close(s.std.unwrap(), 2.0));
        let series = sample_distribution(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]).unwrap();
        assert!(close(series.std.unwrap(), (32.0f64 / 7.0).sqrt()));
        assert_eq!(sample_distribution(&[3.0]).unwrap().std, Some(0.0));
    }

    #[test]
    fn a_single_value_has_zero_std_and_no_values_have_no_stats() {
        let s = distribution(&[3.5]).unwrap();
        assert_eq!(s.std, Some(0.0));
        assert_eq!(s.p1, Some(3.5));
        assert_eq!(s.p99, Some(3.5));
        assert!(distribution(&[]).is_none());
    }
}
