//! Python's `random.Random(seed)` for the draws AIPerf makes (its benchmark loaders' `shuffle`
//! and `randrange`, its timing's `random`, `expovariate` and `gammavariate`): the Mersenne
//! Twister MT19937 seeded as CPython seeds it from an integer, so a shuffle here puts items where
//! AIPerf's puts them and a seeded schedule has AIPerf's gaps.

const N: usize = 624;
const M: usize = 397;

#[derive(Debug, Clone)]
pub struct PythonRandom {
    state: [u32; N],
    next: usize,
    /// `gauss` draws two values at a time and keeps the second for its next call.
    gauss_next: Option<f64>,
}

impl PythonRandom {
    /// `random.Random(seed)` for a non-negative integer seed: `init_by_array` over the seed's
    /// 32-bit words, least significant first (`[0]` for 0).
    pub fn new(seed: u64) -> Self {
        let mut key = vec![seed as u32];
        if seed >> 32 != 0 {
            key.push((seed >> 32) as u32);
        }
        let mut rng = PythonRandom { state: [0; N], next: N, gauss_next: None };
        rng.init_by_array(&key);
        rng
    }

    /// The Mersenne Twister seeded by `init_genrand(seed)` alone, as NumPy's legacy
    /// `RandomState(seed)` seeds it (CPython's `Random` hashes the seed in with `init_by_array`).
    pub(super) fn seeded_by_genrand(seed: u32) -> Self {
        let mut rng = PythonRandom { state: [0; N], next: N, gauss_next: None };
        rng.init_genrand(seed);
        rng
    }

    fn init_genrand(&mut self, seed: u32) {
        self.state[0] = seed;
        for i in 1..N {
            let previous = self.state[i - 1];
            self.state[i] = 1_812_433_253u32.wrapping_mul(previous ^ (previous >> 30)).wrapping_add(i as u32);
        }
        self.next = N;
    }

    fn init_by_array(&mut self, key: &[u32]) {
        self.init_genrand(19_650_218);
        let (mut i, mut j) = (1usize, 0usize);
        for _ in 0..N.max(key.len()) {
            let previous = self.state[i - 1];
            self.state[i] = (self.state[i] ^ (previous ^ (previous >> 30)).wrapping_mul(1_664_525))
                .wrapping_add(key[j])
                .wrapping_add(j as u32);
            i += 1;
            j += 1;
            if i >= N {
                self.state[0] = self.state[N - 1];
                i = 1;
            }
            if j >= key.len() {
                j = 0;
            }
        }
        for _ in 0..N - 1 {
            let previous = self.state[i - 1];
            self.state[i] =
                (self.state[i] ^ (previous ^ (previous >> 30)).wrapping_mul(1_566_083_941)).wrapping_sub(i as u32);
            i += 1;
            if i >= N {
                self.state[0] = self.state[N - 1];
                i = 1;
            }
        }
        self.state[0] = 0x8000_0000;
    }

    fn twist(&mut self) {
        const UPPER: u32 = 0x8000_0000;
        const LOWER: u32 = 0x7fff_ffff;
        for i in 0..N {
            let y = (self.state[i] & UPPER) | (self.state[(i + 1) % N] & LOWER);
            let mag = if y & 1 == 0 { 0 } else { 0x9908_b0df };
            self.state[i] = self.state[(i + M) % N] ^ (y >> 1) ^ mag;
        }
        self.next = 0;
    }

    pub(super) fn next_u32(&mut self) -> u32 {
        if self.next >= N {
            self.twist();
        }
        let mut y = self.state[self.next];
        self.next += 1;
        y ^= y >> 11;
        y ^= (y << 7) & 0x9d2c_5680;
        y ^= (y << 15) & 0xefc6_0000;
        y ^ (y >> 18)
    }

    /// `getrandbits(bits)` for 1 to 32 bits.
    fn bits(&mut self, bits: u32) -> u32 {
        self.next_u32() >> (32 - bits)
    }

    /// `randrange(below)` (`_randbelow`): draws of `below`'s bit length until one is below it.
    pub fn below(&mut self, below: usize) -> usize {
        let bits = usize::BITS - below.leading_zeros();
        assert!(below > 0 && bits <= 32, "randrange takes 1 to 2^32 - 1 here, got {below}");
        loop {
            let drawn = self.bits(bits) as usize;
            if drawn < below {
                return drawn;
            }
        }
    }

    /// `random()`: a float in [0, 1) from 53 bits of two draws (27 and 26 bits).
    pub fn random(&mut self) -> f64 {
        let high = f64::from(self.next_u32() >> 5);
        let low = f64::from(self.next_u32() >> 6);
        (high * 67_108_864.0 + low) / 9_007_199_254_740_992.0
    }

    /// `expovariate(1.0)`: an exponential draw of mean 1.
    pub fn exponential(&mut self) -> f64 {
        -(1.0 - self.random()).ln()
    }

    /// `gauss(mean, stddev)`: Box and Muller's pair from two draws, the second kept for the next
    /// call.
    pub fn gauss(&mut self, mean: f64, stddev: f64) -> f64 {
        let z = match self.gauss_next.take() {
            Some(z) => z,
            None => {
                let angle = self.random() * std::f64::consts::TAU;
                let radius = (-2.0 * (1.0 - self.random()).ln()).sqrt();
                self.gauss_next = Some(angle.sin() * radius);
                angle.cos() * radius
            }
        };
        mean + z * stddev
    }

    /// `gammavariate(shape, 1.0)`, by CPython's methods: Cheng's (1977) rejection for a shape
    /// above 1, an exponential draw at 1, and Kennedy and Gentle's algorithm GS below 1. Their
    /// draws and tests are CPython's, so the samples are its samples.
    pub fn gamma(&mut self, shape: f64) -> f64 {
        assert!(shape > 0.0, "a gamma shape is positive, got {shape}");
        if shape == 1.0 {
            return self.exponential();
        }
        if shape > 1.0 {
            return self.gamma_above_one(shape);
        }
        self.gamma_below_one(shape)
    }

    fn gamma_above_one(&mut self, shape: f64) -> f64 {
        let spread = (2.0 * shape - 1.0).sqrt();
        let offset = shape - 4f64.ln();
        let slope = shape + spread;
        let bound = 1.0 + 4.5f64.ln();
        loop {
            let u1 = self.random();
            if !(1e-7 < u1 && u1 < 0.999_999_9) {
                continue;
            }
            let u2 = 1.0 - self.random();
            let v = (u1 / (1.0 - u1)).ln() / spread;
            let x = shape * v.exp();
            let z = u1 * u1 * u2;
            let r = offset + slope * v - x;
            if r + bound - 4.5 * z >= 0.0 || r >= z.ln() {
                return x;
            }
        }
    }

    fn gamma_below_one(&mut self, shape: f64) -> f64 {
        let e = std::f64::consts::E;
        loop {
            let b = (e + shape) / e;
            let p = b * self.random();
            let x = if p <= 1.0 { p.powf(1.0 / shape) } else { -((b - p) / shape).ln() };
            let u = self.random();
            let accepted = if p > 1.0 { u <= x.powf(shape - 1.0) } else { u <= (-x).exp() };
            if accepted {
                return x;
            }
        }
    }

    /// `shuffle(items)`: from the last place down, each swapped with a place drawn at or before it.
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for at in (1..items.len()).rev() {
            let other = self.below(at + 1);
            items.swap(at, other);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values printed by CPython 3.11: `random.Random(s)` then the calls named.
    #[test]
    fn draws_are_cpythons() {
        let mut rng = PythonRandom::new(0);
        let drawn: Vec<u32> = (0..3).map(|_| rng.next_u32()).collect();
        // random.Random(0).getrandbits(32) three times
        assert_eq!(drawn, [3626764237, 1654615998, 3255389356]);
        let mut items: Vec<u32> = (0..10).collect();
        PythonRandom::new(42).shuffle(&mut items);
        // l = list(range(10)); random.Random(42).shuffle(l)
        assert_eq!(items, [7, 3, 2, 8, 5, 6, 9, 4, 0, 1]);
        let mut rng = PythonRandom::new(3_000_000_000);
        let drawn: Vec<usize> = (0..5).map(|_| rng.below(7)).collect();
        // r = random.Random(3000000000); [r.randrange(7) for _ in range(5)]
        assert_eq!(drawn, PYTHON_RANDRANGE_7);
        let mut rng = PythonRandom::new(1 << 40 | 5);
        // random.Random(2**40 + 5).getrandbits(32)
        assert_eq!(rng.next_u32(), PYTHON_WIDE_SEED_FIRST);
    }

    const PYTHON_RANDRANGE_7: [usize; 5] = [6, 3, 6, 3, 3];
    const PYTHON_WIDE_SEED_FIRST: u32 = 2166296868;
}
