//! Latin hypercube points as SciPy's `qmc.LatinHypercube(d, seed=..., optimization=...)`
//! `.random(n)` draws them: a point placed at random in its cell of each axis, the cells
//! shuffled axis by axis; with `random-cd`, coordinates then swapped between points while that
//! lowers the centred discrepancy (at most 10,000 tries, stopping after 100 without a gain).

use crate::rng::numpy::NumpyGenerator;

/// SciPy's `random-cd` stopping rules.
const MAX_TRIES: usize = 10_000;
const MAX_TRIES_WITHOUT_GAIN: usize = 100;

/// `n` points of `dimensions` coordinates in [0, 1) from `seed`; `lower_discrepancy`: SciPy's
/// `optimization="random-cd"`.
pub fn latin_hypercube_points(dimensions: usize, n: usize, seed: u64, lower_discrepancy: bool) -> Vec<Vec<f64>> {
    let mut generator = NumpyGenerator::new(seed);
    let offsets: Vec<Vec<f64>> = (0..n).map(|_| (0..dimensions).map(|_| generator.next_f64()).collect()).collect();
    let cells: Vec<Vec<usize>> = (0..dimensions)
        .map(|_| {
            let mut cells: Vec<usize> = (1..=n).collect();
            generator.shuffle(&mut cells);
            cells
        })
        .collect();
    let mut points: Vec<Vec<f64>> = (0..n)
        .map(|row| (0..dimensions).map(|axis| (cells[axis][row] as f64 - offsets[row][axis]) / n as f64).collect())
        .collect();
    if lower_discrepancy && dimensions > 1 && n > 1 {
        lower_centred_discrepancy(&mut points, &mut generator);
    }
    points
}

/// SciPy's `_random_cd`: swap one coordinate between two points whenever that lowers the
/// centred discrepancy.
fn lower_centred_discrepancy(points: &mut [Vec<f64>], generator: &mut NumpyGenerator) {
    let (n, dimensions) = (points.len(), points[0].len());
    let mut best = centred_discrepancy(points);
    let (mut tries, mut without_gain) = (0, 0);
    while without_gain < MAX_TRIES_WITHOUT_GAIN && tries < MAX_TRIES {
        tries += 1;
        let axis = generator.lemire_u32(dimensions as u32 - 1) as usize;
        let first = generator.lemire_u32(n as u32 - 1) as usize;
        let second = generator.lemire_u32(n as u32 - 1) as usize;
        let discrepancy = discrepancy_after_swap(points, first, second, axis, best);
        if discrepancy < best {
            let swapped = points[first][axis];
            points[first][axis] = points[second][axis];
            points[second][axis] = swapped;
            best = discrepancy;
            without_gain = 0;
        } else {
            without_gain += 1;
        }
    }
}

/// The centred L2 discrepancy of `points` (SciPy's `discrepancy(method="CD")`).
fn centred_discrepancy(points: &[Vec<f64>]) -> f64 {
    let n = points.len() as f64;
    let dimensions = points[0].len();
    let own: f64 = points
        .iter()
        .map(|point| {
            point.iter().fold(1.0, |product, &x| {
                let z = (x - 0.5).abs();
                product * (1.0 + 0.5 * z - 0.5 * z * z)
            })
        })
        .sum();
    let mut pairs = 0.0;
    for a in points {
        for b in points {
            pairs += a.iter().zip(b).fold(1.0, |product, (&x, &y)| {
                product * (1.0 + 0.5 * (x - 0.5).abs() + 0.5 * (y - 0.5).abs() - 0.5 * (x - y).abs())
            });
        }
    }
    (13.0f64 / 12.0).powi(dimensions as i32) - 2.0 / n * own + 1.0 / (n * n) * pairs
}

/// The centred discrepancy once `points[first][axis]` and `points[second][axis]` are swapped,
/// from `discrepancy` before (Jin et al. 2005, eqs. 19-26, in SciPy's order of operations).
fn discrepancy_after_swap(points: &[Vec<f64>], first: usize, second: usize, axis: usize, discrepancy: f64) -> f64 {
    let n = points.len();
    let n_f = n as f64;
    let n_squared = (n * n) as f64;
    let z = |row: usize, column: usize| points[row][column] - 0.5;
    let product = |values: &mut dyn Iterator<Item = f64>| values.fold(1.0, |product, value| product * value);
    let dimensions = points[0].len();
    let cross = |i: usize, j: usize| {
        1.0 / n_squared
            * product(
                &mut (0..dimensions).map(|c| 0.5 * (2.0 + z(i, c).abs() + z(j, c).abs() - (z(i, c) - z(j, c)).abs())),
            )
    };
    let g = |i: usize| product(&mut (0..dimensions).map(|c| 1.0 + z(i, c).abs()));
    let h = |i: usize| product(&mut (0..dimensions).map(|c| 1.0 + 0.5 * z(i, c).abs() - 0.5 * (z(i, c) * z(i, c))));
    let own = |i: usize| 1.0 / n_squared * g(i) - 2.0 / n_f * h(i);
    let gamma = |j: usize| {
        (2.0 + z(second, axis).abs() + z(j, axis).abs() - (z(second, axis) - z(j, axis)).abs())
            / (2.0 + z(first, axis).abs() + z(j, axis).abs() - (z(first, axis) - z(j, axis)).abs())
    };
    let alpha = (1.0 + z(second, axis).abs()) / (1.0 + z(first, axis).abs());
    let beta = (2.0 - z(second, axis).abs()) / (2.0 - z(first, axis).abs());
    let own_first_after = (g(first) * alpha) / n_squared - 2.0 * alpha * beta * h(first) / n_f;
    let own_second_after = g(second) / (n_squared * alpha) - 2.0 * h(second) / (n_f * alpha * beta);
    let mut others = 0.0;
    for j in (0..n).filter(|&j| j != first && j != second) {
        let (cross_first, cross_second) = (cross(first, j), cross(second, j));
        let gamma = gamma(j);
        others += gamma * cross_first - cross_first + cross_second / gamma - cross_second;
    }
    discrepancy + own_first_after - own(first) + own_second_after - own(second) + 2.0 * others
}

#[cfg(test)]
mod tests {
    use super::*;

    // Reference points printed by SciPy 1.17 in the AIPerf 0.13 venv.
    #[test]
    fn plain_points_are_scipys() {
        let points = latin_hypercube_points(2, 3, 7, false);
        let expected = [
            [0.4583015111317777, 0.03426206634347484],
            [0.7414381032516021, 0.9249309366698028],
            [0.23327790502959153, 0.3754821848679127],
        ];
        assert_eq!(points, expected);
    }

    #[test]
    fn points_with_a_lower_discrepancy_are_scipys_random_cd() {
        let points = latin_hypercube_points(3, 5, 11, true);
        let expected = [
            [0.4756232814407234, 0.900144427511977, 0.17240638542660894],
            [0.7859158847691606, 0.3704147830845088, 0.8103343093416451],
            [0.994262198325611, 0.5449382368477742, 0.49772199563934744],
            [0.17428595944616007, 0.7262013752540418, 0.6797003284753285],
            [0.2674314094966402, 0.1740452101201404, 0.2143577954079261],
        ];
        assert_eq!(points, expected);
        assert!(centred_discrepancy(&points) < centred_discrepancy(&latin_hypercube_points(3, 5, 11, false)));
    }

    #[test]
    fn each_axis_has_one_point_in_each_cell() {
        for points in [latin_hypercube_points(4, 20, 3, false), latin_hypercube_points(4, 20, 3, true)] {
            for axis in 0..4 {
                let mut cells: Vec<usize> = points.iter().map(|point| (point[axis] * 20.0) as usize).collect();
                cells.sort_unstable();
                assert_eq!(cells, (0..20).collect::<Vec<_>>());
            }
        }
    }

    #[test]
    fn the_discrepancy_after_a_swap_is_the_discrepancy_of_the_swapped_points() {
        let mut points = latin_hypercube_points(3, 8, 5, false);
        let predicted = discrepancy_after_swap(&points, 1, 6, 2, centred_discrepancy(&points));
        let swapped = points[1][2];
        points[1][2] = points[6][2];
        points[6][2] = swapped;
        assert!((predicted - centred_discrepancy(&points)).abs() < 1e-12);
    }
}
