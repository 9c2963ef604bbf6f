//! Keeping large runs small: at most a fixed number of points per chart, whatever the number
//! of requests, so that a report of 100,000 requests stays a few MB.

/// At most `max` items, evenly spread over `items` (the first and last kept).
pub fn evenly<T: Clone>(items: &[T], max: usize) -> Vec<T> {
    if items.len() <= max || max < 2 {
        return items.iter().take(max).cloned().collect();
    }
    let last = items.len() - 1;
    (0..max).map(|i| items[i * last / (max - 1)].clone()).collect()
}

/// The empirical CDF of `values` as at most `max` points (value, fraction ≤ value).
pub fn cdf(values: &[f64], max: usize) -> Vec<(f64, f64)> {
    let mut sorted: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    sorted.sort_by(f64::total_cmp);
    let count = sorted.len() as f64;
    let points: Vec<(f64, f64)> = sorted.iter().enumerate().map(|(i, v)| (*v, (i + 1) as f64 / count)).collect();
    evenly(&points, max)
}

/// Counts of `values` in `bins` equal bins over their range: (bin centre, count), and the
/// bin width.
pub fn histogram(values: &[f64], bins: usize) -> (Vec<(f64, f64)>, f64) {
    let finite: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    let low = finite.iter().copied().fold(f64::INFINITY, f64::min);
    let high = finite.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if finite.is_empty() {
        return (Vec::new(), 1.0);
    }
    if high <= low {
        return (vec![(low, finite.len() as f64)], 1.0);
    }
    let width = (high - low) / bins as f64;
    let mut counts = vec![0.0; bins];
    for v in finite {
        counts[(((v - low) / width) as usize).min(bins - 1)] += 1.0;
    }
    (counts.into_iter().enumerate().map(|(i, c)| (low + (i as f64 + 0.5) * width, c)).collect(), width)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evenly_keeps_the_ends_and_the_count() {
        let items: Vec<u32> = (0..100_000).collect();
        let kept = evenly(&items, 1000);
        assert_eq!((kept.len(), kept[0], kept[999]), (1000, 0, 99_999));
        assert_eq!(evenly(&[1, 2, 3], 10), vec![1, 2, 3]);
    }

    #[test]
    fn cdf_and_histogram_count_every_value() {
        let values = [3.0, 1.0, 2.0, 2.0, f64::NAN];
        assert_eq!(cdf(&values, 10), vec![(1.0, 0.25), (2.0, 0.5), (2.0, 0.75), (3.0, 1.0)]);
        let (bins, width) = histogram(&values, 2);
        assert_eq!(width, 1.0);
        assert_eq!(bins, vec![(1.5, 1.0), (2.5, 3.0)]);
        assert_eq!(histogram(&[5.0, 5.0], 4).0, vec![(5.0, 2.0)]);
    }
}
