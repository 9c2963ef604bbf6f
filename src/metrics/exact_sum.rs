//! `ExactSum`: the sum of f64 values and of their squares kept exactly, as fixed-point integers
//! over the whole f64 range, so that the sum and the standard deviation do not depend on the
//! order the values come in (spilled runs, merged runs and memory give the same bits).

/// Bits a limb holds once carried; limbs are `i64`, so ~2^31 values add before a carry.
const LIMB_BITS: u32 = 32;
const LIMB_MASK: i64 = (1 << LIMB_BITS) - 1;
/// Values added between two carries, well inside what an `i64` limb takes.
const ADDS_BETWEEN_CARRIES: u32 = 1 << 30;
/// Limbs one value touches (up to 106 bits at any of 32 offsets).
const PIECES: usize = 5;
/// Limbs kept above the highest touched: room for the carries of 2^64 values.
const HEADROOM: usize = 3;
/// A finite f64 is m·2^e with m < 2^53 and e >= -1074: the sum counts units of 2^-1074, the
/// squares units of 2^-2148.
const SUM_LOWEST_EXP: i32 = -1074;
const SQUARE_LOWEST_EXP: i32 = 2 * SUM_LOWEST_EXP;

#[derive(Debug, Clone, Default)]
pub struct ExactSum {
    count: u64,
    sum: Limbs,
    squares: Limbs,
    /// Adds since the last carry.
    uncarried: u32,
    /// The infinities and NaNs, summed as floats (0 when there are none).
    non_finite: f64,
}

/// A fixed-point integer held only over the limbs its values touched (a metric's values span a
/// few of the thousands the f64 range needs): limb `at` of the whole number is `limbs[at - first]`.
#[derive(Debug, Clone, Default)]
struct Limbs {
    first: usize,
    limbs: Vec<i64>,
}

impl Limbs {
    /// Adds (or subtracts) `value` (at most 106 bits) times 2^`shift`.
    fn add(&mut self, value: u128, shift: u32, negative: bool) {
        let at = (shift / LIMB_BITS) as usize;
        if self.limbs.is_empty() {
            self.first = at;
        }
        if at < self.first {
            self.limbs.splice(0..0, std::iter::repeat_n(0, self.first - at));
            self.first = at;
        }
        let end = at + PIECES + HEADROOM - self.first;
        if end > self.limbs.len() {
            self.limbs.resize(end, 0);
        }
        add_shifted(&mut self.limbs[at - self.first..], value, shift % LIMB_BITS, negative);
    }

    /// The whole number, carried, over `len` limbs at least.
    fn whole(&self, len: usize) -> Vec<i64> {
        let mut whole = vec![0; len.max(self.first + self.limbs.len())];
        whole[self.first..][..self.limbs.len()].copy_from_slice(&self.limbs);
        carry(&mut whole);
        whole
    }
}

impl ExactSum {
    pub fn of(values: &[f64]) -> Self {
        let mut sums = Self::default();
        values.iter().for_each(|&value| sums.add(value));
        sums
    }

    pub fn add(&mut self, value: f64) {
        self.count += 1;
        if !value.is_finite() {
            self.non_finite += value;
            return;
        }
        let bits = value.to_bits();
        let biased = ((bits >> 52) & 0x7ff) as i32;
        let fraction = bits & ((1 << 52) - 1);
        // value = ±mantissa · 2^(shift + SUM_LOWEST_EXP)
        let (mantissa, shift) = if biased == 0 { (fraction, 0) } else { (fraction | 1 << 52, biased as u32 - 1) };
        if mantissa == 0 {
            return;
        }
        let negative = bits >> 63 == 1;
        let mantissa = u128::from(mantissa);
        self.sum.add(mantissa, shift, negative);
        self.squares.add(mantissa * mantissa, 2 * shift, false);
        self.uncarried += 1;
        if self.uncarried == ADDS_BETWEEN_CARRIES {
            carry(&mut self.sum.limbs);
            carry(&mut self.squares.limbs);
            self.uncarried = 0;
        }
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    /// The exact sum, rounded once to the nearest f64 (NaN or ±inf when those were added).
    pub fn sum(&self) -> f64 {
        if self.non_finite != 0.0 || self.non_finite.is_nan() {
            return self.non_finite;
        }
        let mut sum = self.sum.whole(1);
        let negative = sum.last().is_some_and(|&top| top < 0);
        if negative {
            negate(&mut sum);
        }
        let magnitude = rounded(&sum, SUM_LOWEST_EXP);
        if negative { -magnitude } else { magnitude }
    }

    /// The population standard deviation (ddof=0): √(n·Σx² − (Σx)²) / n from the exact sums,
    /// rounded at the end; NaN when an infinity or a NaN was added, None when nothing was.
    pub fn population_std(&self) -> Option<f64> {
        if self.count == 0 {
            return None;
        }
        if self.non_finite != 0.0 || self.non_finite.is_nan() {
            return Some(f64::NAN);
        }
        let mut sum = self.sum.whole(1);
        if sum.last().is_some_and(|&top| top < 0) {
            negate(&mut sum);
        }
        // Room for the square of the sum and for the squares times the count.
        let mut spread = self.squares.whole(2 * sum.len());
        spread.resize(spread.len() + HEADROOM, 0);
        // Scaled both to 2^SQUARE_LOWEST_EXP: n·Σx² − (Σx)², never negative.
        multiply_by(&mut spread, self.count);
        subtract_square(&mut spread, &sum);
        carry(&mut spread);
        let (mantissa, exp) = top_bits(&spread, SQUARE_LOWEST_EXP);
        if mantissa == 0.0 {
            return Some(0.0);
        }
        // √(m·2^e) with e even: √m·2^(e/2).
        let (mantissa, exp) = if exp % 2 == 0 { (mantissa, exp) } else { (mantissa * 2.0, exp - 1) };
        Some(scaled(mantissa.sqrt(), exp / 2) / self.count as f64)
    }
}

/// Adds (or subtracts) `value` (at most 106 bits) times 2^`offset` (below `LIMB_BITS`) to the
/// limbs from the first.
fn add_shifted(limbs: &mut [i64], value: u128, offset: u32, negative: bool) {
    let low = value << offset;
    let high = if offset == 0 { 0 } else { value >> (128 - offset) };
    let pieces: [u128; PIECES] = [low, low >> 32, low >> 64, low >> 96, high];
    for (limb, piece) in limbs.iter_mut().zip(pieces) {
        let piece = (piece as i64) & LIMB_MASK;
        if negative {
            *limb -= piece;
        } else {
            *limb += piece;
        }
    }
}

/// Carries every limb's excess into the next: each limb then holds 0..2^32, but the top one,
/// whose sign is the number's.
fn carry(limbs: &mut [i64]) {
    for at in 0..limbs.len() - 1 {
        let excess = limbs[at] >> LIMB_BITS;
        limbs[at] &= LIMB_MASK;
        limbs[at + 1] += excess;
    }
}

/// Negates carried limbs.
fn negate(limbs: &mut [i64]) {
    limbs.iter_mut().for_each(|limb| *limb = -*limb);
    carry(limbs);
}

/// Multiplies carried, non-negative limbs by `factor`.
fn multiply_by(limbs: &mut [i64], factor: u64) {
    let mut carried = 0u128;
    for limb in limbs.iter_mut() {
        let product = u128::from(*limb as u64) * u128::from(factor) + carried;
        *limb = (product as u64 as i64) & LIMB_MASK;
        carried = product >> LIMB_BITS;
    }
    debug_assert_eq!(carried, 0, "the limbs have room for the count");
}

/// Subtracts the square of `root` (carried, non-negative, half the limbs' weight exponent) from
/// carried `limbs`.
fn subtract_square(limbs: &mut [i64], root: &[i64]) {
    let top = root.iter().rposition(|&limb| limb != 0).map_or(0, |top| top + 1);
    let mut square = vec![0u128; 2 * top];
    for (i, &a) in root[..top].iter().enumerate() {
        for (j, &b) in root[..top].iter().enumerate() {
            // Each product is below 2^64: 2·top of them fit a u128.
            square[i + j] += u128::from(a as u64 * b as u64);
        }
    }
    let mut carried = 0u128;
    for (at, limb) in limbs.iter_mut().enumerate() {
        if at >= square.len() && carried == 0 {
            break;
        }
        let value = square.get(at).copied().unwrap_or(0) + carried;
        *limb -= (value as u64 as i64) & LIMB_MASK;
        carried = value >> LIMB_BITS;
    }
    carry(limbs);
}

/// Carried, non-negative limbs whose lowest bit weighs 2^`lowest_exp`, as m·2^e: m the top 64
/// bits with the rest folded into its lowest bit, then rounded once to an f64.
fn top_bits(limbs: &[i64], lowest_exp: i32) -> (f64, i32) {
    let Some(top) = limbs.iter().rposition(|&limb| limb != 0) else {
        return (0.0, 0);
    };
    // Up to three limbs (96 bits) from the top one: 65 significant bits at least when three.
    let below = top.saturating_sub(2);
    let window = limbs[below..=top]
        .iter()
        .enumerate()
        .fold(0u128, |window, (at, &limb)| window | u128::from(limb as u64) << (32 * at));
    let significant = 128 - window.leading_zeros() as i32;
    // The top 64 bits of the window, the rest folded into the lowest (sticky).
    let cut = (significant - 64).max(0);
    let (kept, dropped) = (window >> cut, window & ((1u128 << cut) - 1));
    let sticky = dropped != 0 || limbs[..below].iter().any(|&limb| limb != 0);
    let mantissa = (kept as u64 | u64::from(sticky)) as f64;
    (mantissa, lowest_exp + below as i32 * LIMB_BITS as i32 + cut)
}

/// Carried, non-negative limbs whose lowest bit weighs 2^`lowest_exp`, rounded to an f64.
fn rounded(limbs: &[i64], lowest_exp: i32) -> f64 {
    let (mantissa, exp) = top_bits(limbs, lowest_exp);
    scaled(mantissa, exp)
}

/// `value`·2^`exp`, in steps that stay inside the f64 range.
fn scaled(mut value: f64, mut exp: i32) -> f64 {
    let step = 2f64.powi(600);
    while exp > 600 {
        value *= step;
        exp -= 600;
    }
    while exp < -600 {
        value /= step;
        exp += 600;
    }
    value * 2f64.powi(exp)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sum_is_exact_and_the_same_in_any_order() {
        let values = [1e16, 1.0, -1e16, 1.0, 0.1, 3.5e-300];
        let naive = |values: &[f64]| values.iter().sum::<f64>();
        let mut reversed = values;
        reversed.reverse();
        assert_ne!(naive(&values), naive(&reversed), "a naive sum depends on the order");
        // 2 + 0.1 + 3.5e-300, rounded once.
        let exact = ExactSum::of(&values).sum();
        assert_eq!(exact, 2.1);
        assert_eq!(ExactSum::of(&reversed).sum().to_bits(), exact.to_bits());
        assert_eq!(ExactSum::of(&[0.1; 10]).sum(), 1.0);
        assert_eq!(ExactSum::of(&[-2.5, -0.25]).sum(), -2.75);
        assert_eq!(ExactSum::of(&[f64::MAX, f64::MAX, -f64::MAX]).sum(), f64::MAX);
        assert_eq!(ExactSum::of(&[5e-324, 5e-324]).sum(), 1e-323);
        assert_eq!(ExactSum::of(&[]).sum(), 0.0);
        assert!(ExactSum::of(&[1.0, f64::NAN]).sum().is_nan());
        assert_eq!(ExactSum::of(&[1.0, f64::INFINITY]).sum(), f64::INFINITY);
    }

    #[test]
    fn the_population_std_is_exact_where_a_naive_one_cancels() {
        let std = |values: &[f64]| ExactSum::of(values).population_std().unwrap();
        assert_eq!(std(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]), 2.0);
        assert_eq!(std(&[3.5]), 0.0);
        // Spread 1 around 1e9: Σx² − (Σx)²/n loses everything in f64, the exact sums do not.
        let around: Vec<f64> = [-1.0, 1.0, -1.0, 1.0].iter().map(|d| 1e9 + d).collect();
        assert_eq!(std(&around), 1.0);
        let tiny = [1e-310, 3e-310];
        assert!((std(&tiny) - 1e-310).abs() < 1e-320);
        let spread: Vec<f64> = (0..1000).map(|i| f64::from(i) * 0.37 - 100.0).collect();
        let mean = spread.iter().sum::<f64>() / 1000.0;
        let two_pass = (spread.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / 1000.0).sqrt();
        assert!((std(&spread) - two_pass).abs() <= 1e-12 * two_pass);
        assert!(ExactSum::default().population_std().is_none());
        assert!(std(&[1.0, f64::INFINITY]).is_nan());
    }
}
