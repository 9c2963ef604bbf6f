//! AIPerf 0.13's named random streams (`rng.derive(identifier)`): each component's generators
//! (CPython's, and NumPy's for shuffles) are seeded with the first 8 bytes (big-endian) of SHA-256
//! over `"{seed}:{identifier}"`, where `seed` is the run's `--random-seed`. Drawing from the same
//! stream as AIPerf, with the same seed, gives the same arrival gaps, cancelled requests,
//! lengths and dataset order.

use ring::digest::{SHA256, digest};

use super::numpy::NumpyGenerator;
use super::python::PythonRandom;

/// The gaps of Poisson arrivals (`expovariate(rate)`).
pub const POISSON_INTERVAL: &str = "timing.request.poisson_interval";
/// The gaps of gamma arrivals (`gammavariate(smoothness, 1 / (rate × smoothness))`).
pub const GAMMA_INTERVAL: &str = "timing.request.gamma_interval";
/// Which requests a phase cancels (`random() < rate / 100`, once per request issued).
pub const CANCELLATION: &str = "timing.request.cancellation";
/// A shuffled dataset's order (NumPy's `shuffle`, again after each pass).
pub const SAMPLER_SHUFFLE: &str = "dataset.sampler.shuffle";
/// A dataset sampled with replacement (`choice`).
pub const SAMPLER_RANDOM: &str = "dataset.sampler.random";
/// The model each turn names under the random model selection (`choice`).
pub const MODEL_SELECTION: &str = "composer.turn.model_selection";
/// The model each turn of a ShareGPT conversation names under the random model selection: its
/// loader names them, from a stream of its own (`choice`).
pub const SHAREGPT_MODEL_SELECTION: &str = "dataset.loader.sharegpt";
/// Which copy of the prefix tree each request of a synthesized trace goes to (`randint`).
pub const SYNTHESIZER: &str = "dataset.synthesis.synthesizer";
/// Which sessions of a Baseten trace a session sample ratio keeps (`uniform(0, 1)`, `choice`).
pub const BASETEN_SESSION_SAMPLING: &str = "dataset.loader.baseten_trace.session_sampling";

/// The Python generator AIPerf derives for `identifier` from the run's `seed`.
pub fn derived(seed: u64, identifier: &str) -> PythonRandom {
    PythonRandom::new(derived_seed(seed, identifier))
}

/// The NumPy generator AIPerf derives for `identifier` from the run's `seed`.
pub fn derived_numpy(seed: u64, identifier: &str) -> NumpyGenerator {
    NumpyGenerator::new(derived_seed(seed, identifier))
}

fn derived_seed(seed: u64, identifier: &str) -> u64 {
    let hash = digest(&SHA256, format!("{seed}:{identifier}").as_bytes());
    let mut first = [0u8; 8];
    first.copy_from_slice(&hash.as_ref()[..8]);
    u64::from_be_bytes(first)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn draws(seed: u64, identifier: &str, draw: impl Fn(&mut PythonRandom) -> f64) -> Vec<f64> {
        let mut rng = derived(seed, identifier);
        (0..3).map(|_| draw(&mut rng)).collect()
    }

    /// Values printed by CPython 3.11 with AIPerf's derivation:
    /// `random.Random(int.from_bytes(sha256(f"{seed}:{identifier}".encode()).digest()[:8], "big"))`.
    #[test]
    fn the_streams_are_the_ones_aiperf_derives() {
        // .expovariate(1.0) three times
        assert_eq!(
            draws(7, POISSON_INTERVAL, PythonRandom::exponential),
            [1.605147518802048, 1.649293716657253, 0.0239603501796661]
        );
        // .gammavariate(2.5, 1.0), then (0.4, 1.0) on a fresh stream
        assert_eq!(
            draws(0, GAMMA_INTERVAL, |r| r.gamma(2.5)),
            [4.3539508797135165, 5.12129864863852, 0.8849251707817328]
        );
        assert_eq!(
            draws(0, GAMMA_INTERVAL, |r| r.gamma(0.4)),
            [0.6913082503861497, 1.0235270279247413, 0.005830678755665342]
        );
        // .random()
        assert_eq!(
            draws(42, CANCELLATION, PythonRandom::random),
            [0.388698556193494, 0.9961740261633488, 0.027304163487953614]
        );
    }

    /// AIPerf 0.13's own `ShuffleSampler` after `rng.init(3)`, over eight ids in order: its first
    /// two passes (a shuffle, then the shuffled list shuffled again).
    #[test]
    fn a_shuffle_is_the_one_aiperf_makes() {
        let mut generator = derived_numpy(3, SAMPLER_SHUFFLE);
        let mut ids: Vec<u32> = (0..8).collect();
        generator.shuffle(&mut ids);
        assert_eq!(ids, [4, 7, 2, 5, 1, 3, 6, 0]);
        generator.shuffle(&mut ids);
        assert_eq!(ids, [7, 3, 2, 6, 1, 5, 4, 0]);
    }
}
