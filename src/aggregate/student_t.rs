//! Student's t distribution: its CDF through the regularized incomplete beta function, and
//! the two-sided critical value that a confidence interval over a few trials needs.

/// Relative precision the series and the root search aim for.
const EPSILON: f64 = 1e-14;
/// Iterations allowed to the incomplete-beta continued fraction.
const MAX_FRACTION_TERMS: usize = 300;
/// Bisection steps: enough to narrow [0, 1e7] to well below 1e-12.
const BISECTION_STEPS: usize = 200;

/// The two-sided critical value `t` with `P(|T| <= t) = confidence` for `degrees_of_freedom`
/// (e.g. 4.3027 for 95 % and 2 degrees of freedom); `None` without degrees of freedom or for a
/// confidence outside (0, 1).
pub fn two_sided_critical_value(confidence: f64, degrees_of_freedom: u64) -> Option<f64> {
    if degrees_of_freedom == 0 || !(confidence > 0.0 && confidence < 1.0) {
        return None;
    }
    Some(quantile(0.5 + confidence / 2.0, degrees_of_freedom as f64))
}

/// The `probability` quantile (above one half) of the t distribution, by bisection on the CDF,
/// which is monotone, so the search cannot diverge.
fn quantile(probability: f64, degrees_of_freedom: f64) -> f64 {
    let (mut low, mut high) = (0.0_f64, 1.0_f64);
    while cdf(high, degrees_of_freedom) < probability && high < 1e7 {
        high *= 2.0;
    }
    for _ in 0..BISECTION_STEPS {
        let middle = 0.5 * (low + high);
        if cdf(middle, degrees_of_freedom) < probability {
            low = middle;
        } else {
            high = middle;
        }
        if high - low <= EPSILON * high {
            break;
        }
    }
    0.5 * (low + high)
}

/// `P(T <= t)` for `t >= 0`: `1 - I_x(ν/2, 1/2) / 2` with `x = ν / (ν + t²)`.
fn cdf(t: f64, degrees_of_freedom: f64) -> f64 {
    let x = degrees_of_freedom / (degrees_of_freedom + t * t);
    1.0 - 0.5 * regularized_incomplete_beta(x, degrees_of_freedom / 2.0, 0.5)
}

/// `I_x(a, b)`, from its continued fraction (modified Lentz), using the symmetry
/// `I_x(a, b) = 1 - I_{1-x}(b, a)` where the fraction converges slowly.
fn regularized_incomplete_beta(x: f64, a: f64, b: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let log_front = ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln();
    if x < (a + 1.0) / (a + b + 2.0) {
        log_front.exp() * beta_fraction(x, a, b) / a
    } else {
        1.0 - log_front.exp() * beta_fraction(1.0 - x, b, a) / b
    }
}

/// The continued fraction of the incomplete beta function.
fn beta_fraction(x: f64, a: f64, b: f64) -> f64 {
    let tiny = 1e-300;
    let clamp = |value: f64| if value.abs() < tiny { tiny } else { value };
    let mut c = 1.0;
    let mut d = 1.0 / clamp(1.0 - (a + b) * x / (a + 1.0));
    let mut fraction = d;
    for m in 1..=MAX_FRACTION_TERMS {
        let m = m as f64;
        let even = m * (b - m) * x / ((a + 2.0 * m - 1.0) * (a + 2.0 * m));
        d = 1.0 / clamp(1.0 + even * d);
        c = clamp(1.0 + even / c);
        fraction *= d * c;
        let odd = -(a + m) * (a + b + m) * x / ((a + 2.0 * m) * (a + 2.0 * m + 1.0));
        d = 1.0 / clamp(1.0 + odd * d);
        c = clamp(1.0 + odd / c);
        let step = d * c;
        fraction *= step;
        if (step - 1.0).abs() < EPSILON {
            break;
        }
    }
    fraction
}

/// `ln Γ(x)` for `x > 0` (Lanczos, g = 7, nine coefficients; about 15 significant digits).
fn ln_gamma(x: f64) -> f64 {
    const COEFFICIENTS: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // Reflection: Γ(x) Γ(1 - x) = π / sin(π x).
        return (std::f64::consts::PI / (std::f64::consts::PI * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut series = COEFFICIENTS[0];
    for (i, coefficient) in COEFFICIENTS.iter().enumerate().skip(1) {
        series += coefficient / (x + i as f64);
    }
    let t = x + 7.5;
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + series.ln()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_close(actual: f64, expected: f64, tolerance: f64) {
        assert!((actual - expected).abs() <= tolerance, "got {actual}, expected {expected}");
    }

    #[test]
    fn critical_values_match_the_t_table() {
        // (confidence, degrees of freedom, two-sided critical value) from the standard table.
        let table = [
            (0.90, 1, 6.313_752),
            (0.95, 1, 12.706_205),
            (0.99, 1, 63.656_741),
            (0.90, 2, 2.919_986),
            (0.95, 2, 4.302_653),
            (0.99, 2, 9.924_843),
            (0.90, 4, 2.131_847),
            (0.95, 4, 2.776_445),
            (0.99, 4, 4.604_095),
            (0.90, 9, 1.833_113),
            (0.95, 9, 2.262_157),
            (0.99, 9, 3.249_836),
            (0.90, 29, 1.699_127),
            (0.95, 29, 2.045_230),
            (0.99, 29, 2.756_386),
        ];
        for (confidence, df, expected) in table {
            let t = two_sided_critical_value(confidence, df).unwrap();
            assert_close(t, expected, 1e-5);
        }
    }

    #[test]
    fn the_reference_aggregate_s_t_critical_is_reproduced() {
        // AIPerf's multi-run sample: three runs at 95 % give t_critical 4.302652729749462.
        assert_close(two_sided_critical_value(0.95, 2).unwrap(), 4.302_652_729_749_462, 1e-9);
    }

    #[test]
    fn large_samples_approach_the_normal_quantile() {
        assert_close(two_sided_critical_value(0.95, 100_000).unwrap(), 1.959_964, 1e-4);
    }

    #[test]
    fn no_degrees_of_freedom_or_a_bad_confidence_has_no_value() {
        assert_eq!(two_sided_critical_value(0.95, 0), None);
        assert_eq!(two_sided_critical_value(1.0, 5), None);
        assert_eq!(two_sided_critical_value(0.0, 5), None);
        assert_eq!(two_sided_critical_value(f64::NAN, 5), None);
    }

    #[test]
    fn ln_gamma_matches_factorials_and_half_integers() {
        assert_close(ln_gamma(1.0), 0.0, 1e-13);
        assert_close(ln_gamma(5.0), 24f64.ln(), 1e-12);
        assert_close(ln_gamma(0.5), std::f64::consts::PI.sqrt().ln(), 1e-12);
    }
}
