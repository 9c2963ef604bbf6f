//! A small Gaussian process (squared-exponential kernel, length scale by marginal likelihood)
//! over points in the unit cube, and the normal distribution the acquisition needs.

/// Noise variance of the standardized observations: runs repeat within a few percent.
const NOISE: f64 = 1e-3;
/// The length scales tried; the one of highest marginal likelihood is kept.
const LENGTH_SCALES: [f64; 6] = [0.05, 0.1, 0.2, 0.35, 0.6, 1.0];

pub struct GaussianProcess {
    xs: Vec<Vec<f64>>,
    /// Lower-triangular Cholesky factor of the kernel matrix.
    chol: Vec<Vec<f64>>,
    /// K⁻¹ y of the standardized observations.
    alpha: Vec<f64>,
    length: f64,
    mean: f64,
    scale: f64,
}

impl GaussianProcess {
    /// The process through `ys` at `xs`; `None` without at least two points.
    pub fn fit(xs: &[Vec<f64>], ys: &[f64]) -> Option<Self> {
        if xs.len() < 2 || xs.len() != ys.len() {
            return None;
        }
        let mean = ys.iter().sum::<f64>() / ys.len() as f64;
        let variance = ys.iter().map(|y| (y - mean).powi(2)).sum::<f64>() / ys.len() as f64;
        let scale = if variance > 0.0 { variance.sqrt() } else { 1.0 };
        let standardized: Vec<f64> = ys.iter().map(|y| (y - mean) / scale).collect();
        LENGTH_SCALES
            .iter()
            .filter_map(|&length| {
                let chol = cholesky(&kernel_matrix(xs, length))?;
                let alpha = solve(&chol, &standardized);
                let fit: f64 = standardized.iter().zip(&alpha).map(|(y, a)| y * a).sum::<f64>();
                let log_det: f64 = chol.iter().enumerate().map(|(i, row)| row[i].ln()).sum();
                let likelihood = -0.5 * fit - log_det;
                Some((likelihood, GaussianProcess { xs: xs.to_vec(), chol, alpha, length, mean, scale }))
            })
            .max_by(|a, b| a.0.total_cmp(&b.0))
            .map(|(_, process)| process)
    }

    /// The posterior mean and standard deviation at `x`, in the observations' units.
    pub fn predict(&self, x: &[f64]) -> (f64, f64) {
        let k: Vec<f64> = self.xs.iter().map(|xi| rbf(xi, x, self.length)).collect();
        let mean: f64 = k.iter().zip(&self.alpha).map(|(a, b)| a * b).sum();
        let v = forward(&self.chol, &k);
        let variance = (1.0 + NOISE - v.iter().map(|e| e * e).sum::<f64>()).max(1e-12);
        (self.mean + mean * self.scale, variance.sqrt() * self.scale)
    }
}

fn rbf(a: &[f64], b: &[f64], length: f64) -> f64 {
    let distance: f64 = a.iter().zip(b).map(|(x, y)| (x - y).powi(2)).sum();
    (-distance / (2.0 * length * length)).exp()
}

fn kernel_matrix(xs: &[Vec<f64>], length: f64) -> Vec<Vec<f64>> {
    xs.iter()
        .enumerate()
        .map(|(i, a)| {
            xs.iter().enumerate().map(|(j, b)| rbf(a, b, length) + if i == j { NOISE } else { 0.0 }).collect()
        })
        .collect()
}

fn cholesky(matrix: &[Vec<f64>]) -> Option<Vec<Vec<f64>>> {
    let n = matrix.len();
    let mut lower = vec![vec![0.0; n]; n];
    for i in 0..n {
        for j in 0..=i {
            let sum: f64 = (0..j).map(|k| lower[i][k] * lower[j][k]).sum();
            if i == j {
                let diagonal = matrix[i][i] - sum;
                if diagonal <= 0.0 {
                    return None;
                }
                lower[i][j] = diagonal.sqrt();
            } else {
                lower[i][j] = (matrix[i][j] - sum) / lower[j][j];
            }
        }
    }
    Some(lower)
}

/// L⁻¹ b.
fn forward(lower: &[Vec<f64>], b: &[f64]) -> Vec<f64> {
    let mut x = vec![0.0; b.len()];
    for i in 0..b.len() {
        x[i] = (b[i] - (0..i).map(|k| lower[i][k] * x[k]).sum::<f64>()) / lower[i][i];
    }
    x
}

/// (L Lᵀ)⁻¹ b.
fn solve(lower: &[Vec<f64>], b: &[f64]) -> Vec<f64> {
    let y = forward(lower, b);
    let n = y.len();
    let mut x = vec![0.0; n];
    for i in (0..n).rev() {
        x[i] = (y[i] - (i + 1..n).map(|k| lower[k][i] * x[k]).sum::<f64>()) / lower[i][i];
    }
    x
}

/// The standard normal density.
pub fn normal_pdf(z: f64) -> f64 {
    (-0.5 * z * z).exp() / (2.0 * std::f64::consts::PI).sqrt()
}

/// The standard normal distribution function (Abramowitz & Stegun 7.1.26, error < 2e-7).
pub fn normal_cdf(z: f64) -> f64 {
    let x = z.abs() / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.3275911 * x);
    let poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
    let erf = 1.0 - poly * (-x * x).exp();
    if z >= 0.0 { 0.5 * (1.0 + erf) } else { 0.5 * (1.0 - erf) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passes_near_its_points_and_is_unsure_far_from_them() {
        let xs: Vec<Vec<f64>> = [0.0, 0.25, 0.5, 0.75, 1.0].iter().map(|&x| vec![x]).collect();
        let ys: Vec<f64> = xs.iter().map(|x| (3.0 * x[0]).sin()).collect();
        let process = GaussianProcess::fit(&xs, &ys).unwrap();
        let (mean, sd) = process.predict(&[0.5]);
        assert!((mean - 1.5f64.sin()).abs() < 0.05, "{mean}");
        let (_, sd_between) = process.predict(&[0.625]);
        assert!(sd_between > sd);
    }

    #[test]
    fn the_normal_distribution_function_is_accurate() {
        assert!((normal_cdf(0.0) - 0.5).abs() < 1e-7);
        assert!((normal_cdf(1.959964) - 0.975).abs() < 1e-6);
        assert!((normal_cdf(-1.0) - 0.158655).abs() < 1e-6);
    }
}
