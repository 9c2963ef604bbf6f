//! The confidence statistics of one value measured over several trials: mean, sample standard
//! deviation, spread, coefficient of variation, standard error and the Student-t interval.

use serde::Serialize;

use super::student_t::two_sided_critical_value;

/// One value's statistics across trials (AIPerf's aggregate block, without its unit).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConfidenceStats {
    pub mean: f64,
    /// Sample standard deviation (n - 1 in the denominator); 0 for a single trial.
    pub std: f64,
    pub min: f64,
    pub max: f64,
    /// `std / mean`; `None` when the mean is 0.
    pub cv: Option<f64>,
    /// Standard error of the mean, `std / sqrt(n)`.
    pub se: f64,
    pub ci_low: f64,
    pub ci_high: f64,
    /// The two-sided Student-t value for n - 1 degrees of freedom; `None` for a single trial.
    pub t_critical: Option<f64>,
}

impl ConfidenceStats {
    /// The statistics of `samples` at `confidence` (e.g. 0.95); `None` without samples.
    pub fn of(samples: &[f64], confidence: f64) -> Option<Self> {
        let count = samples.len();
        if count == 0 {
            return None;
        }
        let n = count as f64;
        let mean = samples.iter().sum::<f64>() / n;
        let std =
            if count > 1 { (samples.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt() } else { 0.0 };
        let min = samples.iter().copied().fold(f64::INFINITY, f64::min);
        let max = samples.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let se = std / n.sqrt();
        let t_critical = two_sided_critical_value(confidence, count as u64 - 1);
        let margin = t_critical.map_or(0.0, |t| t * se);
        Some(Self {
            mean,
            std,
            min,
            max,
            cv: (mean != 0.0).then(|| std / mean),
            se,
            ci_low: mean - margin,
            ci_high: mean + margin,
            t_critical,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_close(actual: f64, expected: f64) {
        assert!((actual - expected).abs() <= 1e-9 * expected.abs().max(1.0), "got {actual}, expected {expected}");
    }

    #[test]
    fn three_trials_give_the_reference_s_interval() {
        // tokens_in_flight_max of AIPerf's multi-run sample: three runs.
        let stats = ConfidenceStats::of(&[1134.0, 1147.0, 1155.0], 0.95).unwrap();
        assert_close(stats.mean, 1_145.333_333_333_333_3);
        assert_close(stats.std, 10.598_742_063_723_098);
        assert_eq!((stats.min, stats.max), (1134.0, 1155.0));
        assert_close(stats.cv.unwrap(), 0.009_253_849_298_943_333);
        assert_close(stats.se, 6.119_186_583_561_94);
        assert_close(stats.ci_low, 1_119.004_598_475_724_2);
        assert_close(stats.ci_high, 1_171.662_068_190_942_4);
        assert_close(stats.t_critical.unwrap(), 4.302_652_729_749_462);
    }

    #[test]
    fn a_single_trial_has_no_spread_and_no_t_value() {
        let stats = ConfidenceStats::of(&[185.5], 0.95).unwrap();
        assert_eq!((stats.mean, stats.std, stats.se, stats.ci_low, stats.ci_high), (185.5, 0.0, 0.0, 185.5, 185.5));
        assert_eq!(stats.cv, Some(0.0));
        assert_eq!(stats.t_critical, None);
    }

    #[test]
    fn a_zero_mean_has_no_cv_and_no_samples_no_stats() {
        let stats = ConfidenceStats::of(&[0.0, 0.0], 0.9).unwrap();
        assert_eq!(stats.cv, None);
        assert_eq!(stats.t_critical.map(|t| (t * 1e3).round()), Some(6314.0));
        assert_eq!(ConfidenceStats::of(&[], 0.95), None);
    }

    #[test]
    fn the_confidence_level_widens_the_interval() {
        let samples = [10.0, 12.0, 11.0, 13.0, 9.0];
        let narrow = ConfidenceStats::of(&samples, 0.90).unwrap();
        let wide = ConfidenceStats::of(&samples, 0.99).unwrap();
        assert_close(narrow.mean, 11.0);
        assert_close(narrow.std, 2.5_f64.sqrt());
        assert!(wide.ci_low < narrow.ci_low && wide.ci_high > narrow.ci_high);
        assert!((narrow.ci_high - narrow.mean - 2.131_847 * 0.5_f64.sqrt()).abs() < 1e-5);
    }
}
