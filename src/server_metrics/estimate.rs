//! Histogram percentile estimates: the polynomial algorithm (learned per-bucket means,
//! +Inf back-calculation, placement strategies, sum-constrained adjustment) and, for
//! comparison, Prometheus' plain linear interpolation.

use crate::metrics::stats::percentile;

/// Most observations the estimate materialises; larger histograms are scaled down.
const MAX_GENERATED_OBSERVATIONS: f64 = 100_000.0;
/// The sum-constrained shift of a bucket's observations is capped at this share of its width.
const MAX_ADJUST_SHARE_OF_WIDTH: f64 = 0.4;

/// What the scrape intervals taught about one finite bucket: intervals in which every new
/// observation landed in that bucket reveal the bucket's mean exactly (Δsum / Δcount).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct BucketLearning {
    /// Observations seen in single-bucket intervals.
    observations: f64,
    /// Σ n_k · mean_k over those intervals.
    weighted_mean_sum: f64,
    /// Σ n_k · mean_k² over those intervals.
    weighted_square_sum: f64,
    intervals: u32,
}

impl BucketLearning {
    fn mean(&self) -> Option<f64> {
        (self.observations > 0.0).then(|| self.weighted_mean_sum / self.observations)
    }

    /// Spread of single observations, from the spread of interval means (Var(mean_k) ≈ σ²/n_k).
    fn std(&self) -> Option<f64> {
        let mean = self.mean()?;
        if self.intervals < 2 {
            return None;
        }
        let between = self.weighted_square_sum - self.observations * mean * mean;
        Some((between.max(0.0) / f64::from(self.intervals - 1)).sqrt())
    }
}

/// Accumulate bucket means from one scrape interval: `counts` are per-bucket (not cumulative)
/// deltas of the finite buckets then +Inf; `sum` is the interval's Δsum.
pub fn accumulate_bucket_statistics(learned: &mut Vec<BucketLearning>, counts: &[f64], sum: f64) {
    if learned.len() < counts.len() {
        learned.resize(counts.len(), BucketLearning::default());
    }
    let total: f64 = counts.iter().sum();
    if total <= 0.0 || !sum.is_finite() {
        return;
    }
    let finite = counts.len().saturating_sub(1);
    if let Some(bucket) = counts[..finite].iter().position(|c| *c == total) {
        let mean = sum / total;
        let entry = &mut learned[bucket];
        entry.observations += total;
        entry.weighted_mean_sum += total * mean;
        entry.weighted_square_sum += total * mean * mean;
        entry.intervals += 1;
    }
}

/// Lower and upper edge of every finite bucket (`bounds` ascending, +Inf excluded).
fn bucket_edges(bounds: &[f64]) -> Vec<(f64, f64)> {
    bounds
        .iter()
        .enumerate()
        .map(|(i, &upper)| {
            let lower = match i {
                0 if upper > 0.0 => 0.0,
                0 => upper - bounds.get(1).map_or(1.0, |next| next - upper),
                _ => bounds[i - 1],
            };
            (lower, upper)
        })
        .collect()
}

/// `n` evenly spaced points of the uniform distribution on [a, b] (midpoint rule).
fn uniform_points(a: f64, b: f64, n: usize, out: &mut Vec<f64>) {
    for j in 0..n {
        out.push(a + (b - a) * (j as f64 + 0.5) / n as f64);
    }
}

/// Place `n` observations in [lower, upper] as the bucket's learned mean and spread suggest.
fn place_bucket(lower: f64, upper: f64, n: usize, learned: Option<&BucketLearning>, out: &mut Vec<f64>) {
    let width = upper - lower;
    let middle = lower + width / 2.0;
    let mean = learned.and_then(BucketLearning::mean).map(|m| m.clamp(lower, upper));
    let std = learned.and_then(BucketLearning::std);
    let start = out.len();
    match (mean, std) {
        // F3 two-point mass: the bucket's values barely vary.
        (Some(m), Some(s)) if s < 0.01 * width => {
            for j in 0..n {
                out.push(if j % 2 == 0 { m - s } else { m + s });
            }
        }
        // Blended: a tight cluster near the centre plus a thin uniform floor over the bucket.
        (Some(m), Some(s)) if s < 0.2 * width && (m - middle).abs() < 0.3 * width => {
            let floor = n / 5;
            let half = s * 3f64.sqrt();
            uniform_points(m - half, m + half, n - floor, out);
            uniform_points(lower, upper, floor, out);
        }
        // Variance-aware: uniform with the learned mean and standard deviation.
        (Some(m), Some(s)) => {
            let half = (s * 3f64.sqrt()).min(width / 2.0);
            uniform_points(m - half, m + half, n, out);
        }
        // Shifted uniform: the widest uniform inside the bucket whose mean is the learned one.
        (Some(m), None) => {
            let (a, b) = if m < middle { (lower, 2.0 * m - lower) } else { (2.0 * m - upper, upper) };
            uniform_points(a, b, n, out);
        }
        (None, _) => uniform_points(lower, upper, n, out),
    }
    for value in &mut out[start..] {
        *value = value.clamp(lower, upper);
    }
}

/// Percentiles (`pcts` in 0..=100) of a histogram by the polynomial algorithm.
/// `bounds`: finite upper bounds, ascending; `counts`: per-bucket counts (finite, then +Inf);
/// `sum`: the observations' total. None when there are no observations.
pub fn polynomial_percentiles(
    bounds: &[f64],
    counts: &[f64],
    sum: f64,
    learned: &[BucketLearning],
    pcts: &[f64],
) -> Option<Vec<f64>> {
    let total: f64 = counts.iter().sum();
    if total <= 0.0 || counts.len() != bounds.len() + 1 {
        return None;
    }
    let scale = (MAX_GENERATED_OBSERVATIONS / total).min(1.0);
    let scaled = |c: f64| (c * scale).round().max(if c > 0.0 { 1.0 } else { 0.0 }) as usize;
    let edges = bucket_edges(bounds);

    // Phase 2: estimated sum of the finite buckets (learned means, else midpoints).
    let estimated_finite_sum: f64 = edges
        .iter()
        .zip(counts)
        .enumerate()
        .map(|(i, ((lower, upper), c))| {
            let mean = learned.get(i).and_then(BucketLearning::mean).map(|m| m.clamp(*lower, *upper));
            c * mean.unwrap_or((lower + upper) / 2.0)
        })
        .sum();

    // Phase 3: the +Inf bucket's observations spread around the back-calculated mean.
    let inf_count = counts[bounds.len()];
    let last_bound = bounds.last().copied().unwrap_or(0.0);
    let mut observations = Vec::with_capacity((total * scale) as usize + bounds.len());
    let mut inf_sum = 0.0;
    if inf_count > 0.0 {
        let inf_mean = ((sum - estimated_finite_sum) / inf_count).max(last_bound);
        inf_sum = inf_mean * inf_count;
        uniform_points(last_bound, 2.0 * inf_mean - last_bound, scaled(inf_count), &mut observations);
    }

    // Phase 4: finite observations, then shifted towards the sum they must add up to.
    let mut placed = Vec::with_capacity(edges.len());
    for (i, ((lower, upper), c)) in edges.iter().zip(counts).enumerate() {
        let mut points = Vec::new();
        place_bucket(*lower, *upper, scaled(*c), learned.get(i), &mut points);
        placed.push(points);
    }
    let target = sum - inf_sum;
    let current: f64 = edges
        .iter()
        .zip(&placed)
        .zip(counts)
        .map(
            |((_, points), c)| {
                if points.is_empty() { 0.0 } else { c * points.iter().sum::<f64>() / points.len() as f64 }
            },
        )
        .sum();
    let weight: f64 = edges.iter().zip(counts).map(|((lower, upper), c)| c * (upper - lower)).sum();
    let shift_per_width = if weight > 0.0 && target.is_finite() { (target - current) / weight } else { 0.0 };
    for ((lower, upper), points) in edges.iter().zip(&mut placed) {
        let width = upper - lower;
        let shift =
            (shift_per_width * width).clamp(-MAX_ADJUST_SHARE_OF_WIDTH * width, MAX_ADJUST_SHARE_OF_WIDTH * width);
        observations.extend(points.iter().map(|p| (p + shift).clamp(*lower, *upper)));
    }
    observations.sort_by(f64::total_cmp);
    if observations.is_empty() {
        return None;
    }
    Some(pcts.iter().map(|p| percentile(&observations, *p)).collect())
}

/// Prometheus' `histogram_quantile`: linear within the bucket; the +Inf bucket answers
/// with the last finite bound.
pub fn linear_percentiles(bounds: &[f64], counts: &[f64], pcts: &[f64]) -> Option<Vec<f64>> {
    let total: f64 = counts.iter().sum();
    if total <= 0.0 || counts.len() != bounds.len() + 1 {
        return None;
    }
    let edges = bucket_edges(bounds);
    let answer = |pct: f64| {
        let rank = pct / 100.0 * total;
        let mut below = 0.0;
        for ((lower, upper), c) in edges.iter().zip(counts) {
            if *c > 0.0 && below + c >= rank {
                return lower + (upper - lower) * ((rank - below) / c);
            }
            below += c;
        }
        bounds.last().copied().unwrap_or(0.0)
    };
    Some(pcts.iter().map(|p| answer(*p)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::SeededRng;

    const PCTS: [f64; 3] = [50.0, 90.0, 99.0];

    /// Per-bucket counts (finite then +Inf) of `values`.
    fn bucket_counts(bounds: &[f64], values: &[f64]) -> Vec<f64> {
        let mut counts = vec![0.0; bounds.len() + 1];
        for v in values {
            let at = bounds.iter().position(|b| v <= b).unwrap_or(bounds.len());
            counts[at] += 1.0;
        }
        counts
    }

    /// Mean relative error of p50/p90/p99 (linear, polynomial) on lognormal latencies
    /// observed a few per scrape interval, with vLLM's TTFT buckets.
    fn skewed_errors(seed: u64, median_s: f64, sigma: f64) -> ([f64; 3], [f64; 3]) {
        let bounds = [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0];
        let mut rng = SeededRng::new(seed);
        let mut learned = Vec::new();
        let mut all = Vec::new();
        for _ in 0..400 {
            let n = 1 + rng.below(4) as usize;
            let interval: Vec<f64> = (0..n).map(|_| median_s * rng.normal(0.0, sigma).exp()).collect();
            accumulate_bucket_statistics(&mut learned, &bucket_counts(&bounds, &interval), interval.iter().sum());
            all.extend(interval);
        }
        let counts = bucket_counts(&bounds, &all);
        let sum: f64 = all.iter().sum();
        all.sort_by(f64::total_cmp);
        let truth: Vec<f64> = PCTS.iter().map(|p| percentile(&all, *p)).collect();
        let linear = linear_percentiles(&bounds, &counts, &PCTS).unwrap();
        let poly = polynomial_percentiles(&bounds, &counts, sum, &learned, &PCTS).unwrap();
        let err = |est: &[f64]| -> [f64; 3] { std::array::from_fn(|i| ((est[i] - truth[i]) / truth[i]).abs()) };
        (err(&linear), err(&poly))
    }

    #[test]
    fn polynomial_beats_linear_interpolation_on_skewed_latencies() {
        let mut linear_total = [0.0; 3];
        let mut poly_total = [0.0; 3];
        let cases = [(1, 0.03, 0.6), (2, 0.3, 0.8), (3, 0.015, 1.0), (4, 0.12, 0.5), (5, 0.6, 0.7)];
        for (seed, median, sigma) in cases {
            let (linear, poly) = skewed_errors(seed, median, sigma);
            for i in 0..3 {
                linear_total[i] += linear[i] / cases.len() as f64;
                poly_total[i] += poly[i] / cases.len() as f64;
            }
        }
        println!("mean relative error p50/p90/p99: linear {linear_total:.4?} polynomial {poly_total:.4?}");
        for i in 0..3 {
            assert!(
                poly_total[i] < linear_total[i],
                "p{}: polynomial {poly_total:?} vs linear {linear_total:?}",
                PCTS[i]
            );
        }
    }

    #[test]
    fn learned_exact_values_come_back_exactly() {
        // Every request had 128 prompt tokens: each interval teaches the (100, 200] bucket mean 128.
        let bounds = [50.0, 100.0, 200.0, 500.0];
        let mut learned = Vec::new();
        for _ in 0..10 {
            accumulate_bucket_statistics(&mut learned, &[0.0, 0.0, 8.0, 0.0, 0.0], 8.0 * 128.0);
        }
        let counts = [0.0, 0.0, 80.0, 0.0, 0.0];
        let p = polynomial_percentiles(&bounds, &counts, 80.0 * 128.0, &learned, &[1.0, 50.0, 99.0]).unwrap();
        for v in p {
            assert!((v - 128.0).abs() < 1e-9, "{v}");
        }
        let linear = linear_percentiles(&bounds, &counts, &[50.0]).unwrap();
        assert_eq!(linear, vec![150.0]);
    }

    #[test]
    fn inf_only_histograms_use_the_back_calculated_mean() {
        let bounds = [1.0, 2.0];
        let counts = [0.0, 0.0, 10.0];
        let p = polynomial_percentiles(&bounds, &counts, 40.0, &[], &[0.0, 50.0, 100.0]).unwrap();
        assert!((p[0] - 2.0).abs() < 0.5, "{p:?}");
        assert!((p[1] - 4.0).abs() < 1e-9, "{p:?}");
        assert!(p[2] > 5.0 && p[2] <= 6.0, "{p:?}");
        assert_eq!(linear_percentiles(&bounds, &counts, &[50.0]).unwrap(), vec![2.0]);
    }

    #[test]
    fn empty_histograms_have_no_estimate() {
        assert_eq!(polynomial_percentiles(&[1.0], &[0.0, 0.0], 0.0, &[], &[50.0]), None);
        assert_eq!(linear_percentiles(&[1.0], &[0.0, 0.0], &[50.0]), None);
    }

    #[test]
    fn the_sum_constraint_moves_unlearned_observations_at_most_forty_percent() {
        // All 10 in (0, 1] with sum 9: uniform placement (mean 0.5) shifts up by 0.4 at most.
        let p = polynomial_percentiles(&[1.0], &[10.0, 0.0], 9.0, &[], &[0.0, 100.0]).unwrap();
        assert!((p[0] - 0.45).abs() < 1e-9, "{p:?}");
        assert!((p[1] - 1.0).abs() < 1e-9, "{p:?}");
    }
}
