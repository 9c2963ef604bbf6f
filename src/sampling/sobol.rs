//! Sobol' points as SciPy's `qmc.Sobol(d, scramble=..., seed=...).random(n)` draws them: 30-bit
//! direction numbers (Joe and Kuo's), scrambled by a random lower-triangular matrix and a random
//! digital shift (LMS + shift) drawn from NumPy's generator, then taken in Gray-code order
//! starting with the first point.

use super::sobol_directions::DIRECTIONS;
use crate::rng::numpy::NumpyGenerator;

/// Bits of each coordinate (SciPy's default).
const BITS: usize = 30;

/// The most dimensions a Sobol' design has here.
pub const MAX_DIMENSIONS: usize = DIRECTIONS.len();

/// `n` points of `dimensions` coordinates in [0, 1); scrambled from `seed` when `scramble`.
pub fn sobol_points(dimensions: usize, n: usize, scramble: bool, seed: u64) -> Vec<Vec<f64>> {
    assert!(dimensions <= MAX_DIMENSIONS, "at most {MAX_DIMENSIONS} Sobol' dimensions");
    let mut directions = direction_numbers(dimensions);
    let mut quasi = vec![0u32; dimensions];
    if scramble {
        let mut generator = NumpyGenerator::new(seed);
        for shift in quasi.iter_mut() {
            *shift = (0..BITS).fold(0, |shift, bit| shift | (generator.next_bit() << bit));
        }
        // Every matrix is drawn whole, then its upper triangle dropped and its diagonal set.
        let matrices: Vec<Vec<u32>> =
            (0..dimensions).map(|_| (0..BITS * BITS).map(|_| generator.next_bit()).collect()).collect();
        for (row, matrix) in directions.iter_mut().zip(&matrices) {
            scramble_row(row, matrix);
        }
    }
    let scale = 1.0 / f64::from(1u32 << BITS);
    let mut points = Vec::with_capacity(n);
    for index in 0..n {
        if index > 0 {
            let bit = (index - 1).trailing_ones() as usize;
            for (coordinate, row) in quasi.iter_mut().zip(&directions) {
                *coordinate ^= row[bit];
            }
        }
        points.push(quasi.iter().map(|&coordinate| f64::from(coordinate) * scale).collect());
    }
    points
}

/// Each dimension's direction numbers, scaled to `BITS` bits (SciPy's `_initialize_v`).
fn direction_numbers(dimensions: usize) -> Vec<[u32; BITS]> {
    let mut rows = vec![[0u32; BITS]; dimensions];
    for (dimension, row) in rows.iter_mut().enumerate() {
        if dimension == 0 {
            *row = [1; BITS];
            continue;
        }
        let (polynomial, initial) = DIRECTIONS[dimension];
        let degree = initial.len();
        row[..degree].copy_from_slice(initial);
        for j in degree..BITS {
            let mut value = row[j - degree];
            for k in 0..degree {
                if (polynomial >> (degree - 1 - k)) & 1 == 1 {
                    value ^= row[j - k - 1] << (k + 1);
                }
            }
            row[j] = value;
        }
    }
    for row in &mut rows {
        for (bit, value) in row.iter_mut().enumerate() {
            *value <<= BITS - 1 - bit;
        }
    }
    rows
}

/// One dimension's direction numbers times its lower-triangular matrix over GF(2) (`matrix`:
/// `BITS` × `BITS` drawn bits, row-major; SciPy's `_cscramble`).
fn scramble_row(row: &mut [u32; BITS], matrix: &[u32]) {
    let matrix_rows: Vec<u32> = (0..BITS)
        .map(|p| {
            (0..BITS)
                .filter(|&k| k == p || (k < p && matrix[p * BITS + k] == 1))
                .fold(0, |bits, k| bits | (1 << (BITS - 1 - k)))
        })
        .collect();
    for value in row.iter_mut() {
        *value = (0..BITS)
            .map(|step| {
                let p = BITS - 1 - step;
                ((matrix_rows[p] & *value).count_ones() % 2) << step
            })
            .sum();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unscrambled_points_are_the_plain_sequence() {
        let points = sobol_points(2, 4, false, 0);
        assert_eq!(points, [[0.0, 0.0], [0.5, 0.5], [0.75, 0.25], [0.25, 0.75]]);
    }

    // Reference points printed by SciPy 1.17 (`qmc.Sobol(d=2, scramble=True, seed=7).random(4)`)
    // in the AIPerf 0.13 venv.
    #[test]
    fn scrambled_points_are_scipys() {
        let points = sobol_points(2, 4, true, 7);
        let expected = [
            [0.5792599907144904, 0.7402846803888679],
            [0.04158296622335911, 0.0006920695304870605],
            [0.478844853118062, 0.7752583613619208],
            [0.8924996918067336, 0.4837839603424072],
        ];
        assert_eq!(points, expected);
    }

    #[test]
    fn every_coordinate_of_a_power_of_two_design_falls_in_its_own_stratum() {
        let points = sobol_points(3, 16, true, 42);
        for dimension in 0..3 {
            let mut strata: Vec<usize> = points.iter().map(|point| (point[dimension] * 16.0) as usize).collect();
            strata.sort_unstable();
            assert_eq!(strata, (0..16).collect::<Vec<_>>());
        }
    }
}
