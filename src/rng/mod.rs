//! A small seeded PRNG (SplitMix64) whose output never changes between versions, so the
//! same seed gives byte-identical datasets forever; and CPython's and NumPy's generators, for
//! the draws that must be AIPerf's own (`python`, `numpy`, `numpy_legacy`, `aiperf_streams`).

pub mod aiperf_streams;
pub mod numpy;
pub mod numpy_legacy;
pub mod python;

#[derive(Debug, Clone)]
pub struct SeededRng {
    state: u64,
}

impl SeededRng {
    pub fn new(seed: u64) -> Self {
        Self { state: seed ^ 0x5DEE_CE66_D1CE_4E5B }
    }

    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform integer in [0, bound); 0 when bound is 0.
    pub fn below(&mut self, bound: u64) -> u64 {
        if bound == 0 { 0 } else { self.next_u64() % bound }
    }

    /// A normal sample (Box-Muller).
    pub fn normal(&mut self, mean: f64, stddev: f64) -> f64 {
        if stddev <= 0.0 {
            return mean;
        }
        let u1 = self.next_f64().max(f64::MIN_POSITIVE);
        let u2 = self.next_f64();
        mean + stddev * (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
    }

    /// A random id formatted like a UUID v4 (its version and variant bits set), written digit by
    /// digit: each request makes one.
    pub fn uuid(&mut self) -> String {
        let a = (self.next_u64() & !0xf000) | 0x4000;
        let b = (self.next_u64() & !(0xc << 60)) | (0x8 << 60);
        let mut text = String::with_capacity(36);
        for (place, word) in [a, b].into_iter().flat_map(|word| [word; 16]).enumerate() {
            if matches!(place, 8 | 12 | 16 | 20) {
                text.push('-');
            }
            let nibble = (word >> (60 - 4 * (place % 16))) & 0xf;
            text.push(char::from(b"0123456789abcdef"[nibble as usize]));
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_sequence_and_normal_has_the_right_moments() {
        let mut a = SeededRng::new(42);
        let mut b = SeededRng::new(42);
        assert_eq!(
            (0..10).map(|_| a.next_u64()).collect::<Vec<_>>(),
            (0..10).map(|_| b.next_u64()).collect::<Vec<_>>()
        );
        let mut r = SeededRng::new(7);
        let xs: Vec<f64> = (0..20000).map(|_| r.normal(100.0, 10.0)).collect();
        let mean = xs.iter().sum::<f64>() / xs.len() as f64;
        let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (xs.len() - 1) as f64;
        assert!((mean - 100.0).abs() < 0.5, "mean {mean}");
        assert!((var.sqrt() - 10.0).abs() < 0.5, "sd {}", var.sqrt());
        assert_eq!(r.uuid().len(), 36);
    }

    #[test]
    fn a_uuid_is_the_two_words_in_hex_with_the_version_and_variant_set() {
        let (mut r, mut words) = (SeededRng::new(9), SeededRng::new(9));
        for _ in 0..100 {
            let (a, b) = (words.next_u64(), words.next_u64());
            let formatted = format!(
                "{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}",
                a >> 32,
                (a >> 16) & 0xffff,
                a & 0x0fff,
                ((b >> 48) & 0x3fff) | 0x8000,
                b & 0xffff_ffff_ffff
            );
            assert_eq!(r.uuid(), formatted);
        }
    }
}
