//! NumPy's default generator, draw for draw: `numpy.random.default_rng(seed)` (a `SeedSequence`
//! hashing the seed into the state of a PCG64), and the few draws SciPy's QMC engines and
//! AIPerf's shuffles take from it (doubles, bits, bounded integers, shuffles). A sweep that
//! AIPerf samples with SciPy draws the same points here from the same seed, and a shuffled
//! dataset goes in AIPerf's order.

/// `SeedSequence`'s hashing constants (NumPy's `bit_generator.pyx`).
const INIT_A: u32 = 0x43b0_d7e5;
const MULT_A: u32 = 0x931e_8875;
const INIT_B: u32 = 0x8b51_f9dd;
const MULT_B: u32 = 0x58f3_8ded;
const MIX_MULT_L: u32 = 0xca01_f9dd;
const MIX_MULT_R: u32 = 0x4973_f715;
const XSHIFT: u32 = 16;
const POOL_SIZE: usize = 4;

/// PCG64's multiplier (the 128-bit LCG of O'Neill's `pcg_setseq_128`).
const PCG_MULTIPLIER: u128 = 0x2360_ED05_1FC6_5DA4_4385_DF64_9FCC_F645;

/// `numpy.random.Generator(PCG64(SeedSequence(seed)))`.
pub struct NumpyGenerator {
    state: u128,
    increment: u128,
    /// The high half of the last 64-bit draw, kept for the next 32-bit one (as PCG64 does).
    spare_u32: Option<u32>,
}

impl NumpyGenerator {
    /// `numpy.random.default_rng(seed)`.
    pub fn new(seed: u64) -> Self {
        let words = seed_sequence_words(seed, 8);
        let word = |i: usize| u64::from(words[2 * i]) | (u64::from(words[2 * i + 1]) << 32);
        let initial_state = (u128::from(word(0)) << 64) | u128::from(word(1));
        let sequence = (u128::from(word(2)) << 64) | u128::from(word(3));
        let mut generator = Self { state: 0, increment: (sequence << 1) | 1, spare_u32: None };
        generator.step();
        generator.state = generator.state.wrapping_add(initial_state);
        generator.step();
        generator
    }

    fn step(&mut self) {
        self.state = self.state.wrapping_mul(PCG_MULTIPLIER).wrapping_add(self.increment);
    }

    /// The next 64 bits (PCG's XSL-RR output).
    pub fn next_u64(&mut self) -> u64 {
        self.step();
        let folded = ((self.state >> 64) as u64) ^ (self.state as u64);
        folded.rotate_right((self.state >> 122) as u32)
    }

    /// The next 32 bits: the low half of a fresh 64-bit draw, then its high half.
    pub fn next_u32(&mut self) -> u32 {
        if let Some(spare) = self.spare_u32.take() {
            return spare;
        }
        let draw = self.next_u64();
        self.spare_u32 = Some((draw >> 32) as u32);
        draw as u32
    }

    /// A double in [0, 1) (`Generator.random`, `uniform(0, 1)`).
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / 9_007_199_254_740_992.0)
    }

    /// `Generator.integers(0, 2, dtype=uint32)`: one bit, the top of a 32-bit draw.
    pub fn next_bit(&mut self) -> u32 {
        self.lemire_u32(1)
    }

    /// An integer in [0, `most`] (`Generator.integers(0, most, endpoint=True)`), by Lemire's
    /// multiply-and-reject over 32-bit draws, as NumPy bounds ranges below 2^32.
    pub fn lemire_u32(&mut self, most: u32) -> u32 {
        if most == 0 {
            return 0;
        }
        if most == u32::MAX {
            return self.next_u32();
        }
        let range = u64::from(most) + 1;
        let mut scaled = u64::from(self.next_u32()) * range;
        if (scaled as u32 as u64) < range {
            let threshold = (u64::from(u32::MAX) - u64::from(most)) % range;
            while (scaled as u32 as u64) < threshold {
                scaled = u64::from(self.next_u32()) * range;
            }
        }
        (scaled >> 32) as u32
    }

    /// An index in [0, `most`] by masked rejection (NumPy's `random_interval`, what shuffles use).
    fn interval(&mut self, most: u64) -> u64 {
        if most == 0 {
            return 0;
        }
        let mask = u64::MAX >> most.leading_zeros();
        loop {
            let value =
                if most <= u64::from(u32::MAX) { u64::from(self.next_u32()) & mask } else { self.next_u64() & mask };
            if value <= most {
                return value;
            }
        }
    }

    /// `Generator.shuffle` of a slice: Fisher-Yates from the last element down.
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for last in (1..items.len()).rev() {
            let other = self.interval(last as u64) as usize;
            items.swap(last, other);
        }
    }
}

/// `SeedSequence(seed).generate_state(words, uint32)`.
fn seed_sequence_words(seed: u64, words: usize) -> Vec<u32> {
    let entropy: Vec<u32> = if seed >> 32 == 0 { vec![seed as u32] } else { vec![seed as u32, (seed >> 32) as u32] };
    let mut hash_constant = INIT_A;
    let mut hash_mix = |value: u32| {
        let mut value = value ^ hash_constant;
        hash_constant = hash_constant.wrapping_mul(MULT_A);
        value = value.wrapping_mul(hash_constant);
        value ^ (value >> XSHIFT)
    };
    let mix = |x: u32, y: u32| {
        let result = MIX_MULT_L.wrapping_mul(x).wrapping_sub(MIX_MULT_R.wrapping_mul(y));
        result ^ (result >> XSHIFT)
    };
    let mut pool = [0u32; POOL_SIZE];
    for (slot, word) in pool.iter_mut().enumerate() {
        *word = hash_mix(entropy.get(slot).copied().unwrap_or(0));
    }
    for source in 0..POOL_SIZE {
        for target in 0..POOL_SIZE {
            if source != target {
                let hashed = hash_mix(pool[source]);
                pool[target] = mix(pool[target], hashed);
            }
        }
    }
    let mut hash_constant = INIT_B;
    (0..words)
        .map(|index| {
            let mut value = pool[index % POOL_SIZE] ^ hash_constant;
            hash_constant = hash_constant.wrapping_mul(MULT_B);
            value = value.wrapping_mul(hash_constant);
            value ^ (value >> XSHIFT)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    // Reference draws printed by NumPy 2.4 (`np.random.default_rng(seed)`), in the AIPerf 0.13
    // venv `shared/tools/aiperf-anchor.sh` builds.
    #[test]
    fn draws_what_numpy_draws_from_the_same_seed() {
        let mut generator = NumpyGenerator::new(7);
        let raw: Vec<u64> = (0..3).map(|_| generator.next_u64()).collect();
        assert_eq!(raw, [11530976094092348043, 16550673365885938325, 14308875409591826786]);
        let mut generator = NumpyGenerator::new(12_345_678_901_234);
        assert_eq!(generator.next_f64(), 0.40637757035390765);
        assert_eq!(generator.next_f64(), 0.026203563409374464);
    }

    #[test]
    fn thirty_two_bit_draws_use_both_halves_of_a_sixty_four_bit_one() {
        let mut wide = NumpyGenerator::new(3);
        let mut narrow = NumpyGenerator::new(3);
        let draw = wide.next_u64();
        assert_eq!(narrow.next_u32(), draw as u32);
        assert_eq!(narrow.next_u32(), (draw >> 32) as u32);
        assert_eq!(narrow.next_u64(), wide.next_u64());
    }

    #[test]
    fn bounded_draws_stay_in_range_and_shuffles_keep_every_item() {
        let mut generator = NumpyGenerator::new(1);
        for most in [1, 2, 5, 1000] {
            assert!((0..200).all(|_| generator.lemire_u32(most) <= most));
        }
        let mut items: Vec<u32> = (1..=50).collect();
        generator.shuffle(&mut items);
        let mut sorted = items.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (1..=50).collect::<Vec<_>>());
        assert_ne!(items, sorted, "50 items stay in order once in 50! shuffles");
    }
}
