//! Monotone (non-decreasing) regression by pool-adjacent-violators, and the first zero of the
//! fitted curve between two points.

/// The non-decreasing fit of `values` (in order of x), each weighted by `weights`.
pub fn non_decreasing(values: &[f64], weights: &[f64]) -> Vec<f64> {
    // Blocks of pooled neighbours: (mean, weight, how many points).
    let mut blocks: Vec<(f64, f64, usize)> = Vec::with_capacity(values.len());
    for (&value, &weight) in values.iter().zip(weights) {
        blocks.push((value, weight, 1));
        while blocks.len() > 1 && blocks[blocks.len() - 2].0 > blocks[blocks.len() - 1].0 {
            let (mean_b, weight_b, count_b) = blocks.pop().unwrap_or_default();
            let Some(last) = blocks.last_mut() else { break };
            let weight = last.1 + weight_b;
            last.0 = (last.0 * last.1 + mean_b * weight_b) / weight;
            last.1 = weight;
            last.2 += count_b;
        }
    }
    blocks.into_iter().flat_map(|(mean, _, count)| std::iter::repeat_n(mean, count)).collect()
}

/// Where the piecewise-linear curve through `points` (sorted by x) first reaches zero from
/// below, looking only within [from, to].
pub fn first_zero(points: &[(f64, f64)], from: f64, to: f64) -> Option<f64> {
    let inside: Vec<&(f64, f64)> = points.iter().filter(|(x, _)| *x >= from && *x <= to).collect();
    inside.windows(2).find_map(|pair| {
        let ((x0, y0), (x1, y1)) = (*pair[0], *pair[1]);
        (y0 < 0.0 && y1 >= 0.0 && y1 > y0).then(|| x0 + (x1 - x0) * (-y0) / (y1 - y0))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pools_violators_into_their_weighted_mean() {
        assert_eq!(non_decreasing(&[1.0, 3.0, 2.0, 4.0], &[1.0; 4]), [1.0, 2.5, 2.5, 4.0]);
        assert_eq!(non_decreasing(&[3.0, 1.0], &[1.0, 3.0]), [1.5, 1.5]);
    }

    #[test]
    fn finds_the_crossing_inside_the_range() {
        let points = [(16.0, -0.5), (36.0, 0.75)];
        assert_eq!(first_zero(&points, 16.0, 36.0), Some(24.0));
        assert_eq!(first_zero(&points, 20.0, 36.0), None);
    }
}
