//! NumPy's legacy generator, draw for draw: `numpy.random.RandomState(seed)` (MT19937 seeded by
//! `init_genrand`) and its `randint`, which bounds a range by masked rejection. AIPerf draws an
//! SGLang-style random dataset's lengths and token offsets from it, as SGLang's own benchmark does.

use super::python::PythonRandom;

/// `numpy.random.RandomState(seed)`.
pub struct RandomState {
    twister: PythonRandom,
}

impl RandomState {
    /// A seed of any width, folded into 32 bits as AIPerf folds it for the legacy seeder
    /// (`fold_seed_to_uint32`: the high half XORed into the low; seeds below 2^32 unchanged).
    pub fn new(seed: u64) -> Self {
        Self { twister: PythonRandom::seeded_by_genrand((seed ^ (seed >> 32)) as u32) }
    }

    /// `randint(low, high)`: a whole number in [low, high), `high > low`.
    pub fn randint(&mut self, low: u64, high: u64) -> u64 {
        let most = high.saturating_sub(low).saturating_sub(1);
        if most == 0 {
            return low;
        }
        if most == u64::from(u32::MAX) {
            return low + u64::from(self.twister.next_u32());
        }
        let mask = u64::MAX >> most.leading_zeros();
        loop {
            let value = if most < u64::from(u32::MAX) {
                u64::from(self.twister.next_u32()) & mask
            } else {
                ((u64::from(self.twister.next_u32()) << 32) | u64::from(self.twister.next_u32())) & mask
            };
            if value <= most {
                return low + value;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values printed by NumPy 2.4 (`np.random.RandomState(seed).randint(low, high, size=n)`), in
    /// the AIPerf 0.13 venv `shared/tools/aiperf-anchor.sh` builds.
    #[test]
    fn draws_what_numpy_s_random_state_draws() {
        let mut state = RandomState::new(7);
        let draws: Vec<u64> = (0..4).map(|_| state.randint(0, 50_257)).collect();
        assert_eq!(draws, [49_689, 10_742, 38_467, 919]);
        let draws: Vec<u64> = (0..3).map(|_| state.randint(10, 21)).collect();
        assert_eq!(draws, [17, 19, 17]);

        let mut state = RandomState::new(4_294_967_295);
        let draws: Vec<u64> = (0..3).map(|_| state.randint(0, 100)).collect();
        assert_eq!(draws, [35, 34, 12]);

        let mut state = RandomState::new(0);
        let wide: Vec<u64> = (0..2).map(|_| state.randint(0, (1 << 32) - 1)).collect();
        assert_eq!(wide, [2_357_136_044, 2_546_248_239]);
        assert_eq!([state.randint(5, 6), state.randint(5, 6)], [5, 5]);
        let wider: Vec<u64> = (0..2).map(|_| state.randint(0, 1 << 33)).collect();
        assert_eq!(wider, [7_921_061_056, 7_979_815_675]);
    }

    #[test]
    fn a_wide_seed_is_folded_as_aiperf_folds_it() {
        let mut folded = RandomState::new((5 << 32) | 9);
        let mut plain = RandomState::new(5 ^ 9);
        assert_eq!(folded.randint(0, 1000), plain.randint(0, 1000));
    }
}
