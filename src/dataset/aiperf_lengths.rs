//! The lengths of synthetic prompts as AIPerf 0.13 draws them when they are its own: a normal
//! of a mean and a stddev (`--isl`/`--isl-stddev`, `--osl`/`--osl-stddev`,
//! `--conversation-turn-mean`/`-stddev`), or a weighted mixture of such pairs
//! (`--sequence-distribution`). Each comes from the stream AIPerf derives for it from the seed,
//! by Python's `gauss`, redrawn while negative, rounded up, at least 1; so with the same
//! `--random-seed` the n-th prompt asks for the lengths AIPerf's n-th prompt asks for. Other
//! shapes (lognormal, mixtures of them, bounds: this project's) keep the dataset's own generator.

use crate::plan::{Dist, LengthPair};
use crate::rng::SeededRng;
use crate::rng::aiperf_streams::derived;
use crate::rng::python::PythonRandom;

const PROMPT_LENGTH: &str = "dataset.prompt.length";
const MAX_TOKENS: &str = "composer.turn.max_tokens";
const TURN_COUNT: &str = "composer.conversation.turn_count";
const SEQUENCE_DISTRIBUTION: &str = "models.sequence.distribution";

/// AIPerf's tries at a non-negative draw before it takes the mean.
const TRIES: usize = 10_000;

/// One of AIPerf's length streams.
pub struct LengthStream(PythonRandom);

impl LengthStream {
    pub fn prompt_lengths(seed: u64) -> Self {
        Self(derived(seed, PROMPT_LENGTH))
    }

    pub fn max_tokens(seed: u64) -> Self {
        Self(derived(seed, MAX_TOKENS))
    }

    pub fn turn_counts(seed: u64) -> Self {
        Self(derived(seed, TURN_COUNT))
    }

    pub fn length_pairs(seed: u64) -> Self {
        Self(derived(seed, SEQUENCE_DISTRIBUTION))
    }

    /// The next count of `dist`: AIPerf's draw for a plain normal (none for a fixed one), else
    /// `dist`'s own from `rng`.
    pub fn count(&mut self, dist: &Dist, rng: &mut SeededRng) -> u64 {
        match dist.as_plain_normal() {
            Some((mean, stddev)) if stddev > 0.0 => self.positive_normal(mean, stddev),
            _ => dist.sample_count(rng),
        }
    }

    /// A pair of `mix` and its lengths as AIPerf's sequence distribution draws them, all from
    /// this stream: a uniform draw against the running sum of the weights (as fractions of their
    /// total), then the pair's ISL and OSL. None when a pair's lengths are not plain normals.
    pub fn pair(&mut self, mix: &[LengthPair]) -> Option<(u64, u64)> {
        let normals: Option<Vec<_>> =
            mix.iter().map(|pair| Some((pair.isl.as_plain_normal()?, pair.osl.as_plain_normal()?))).collect();
        let normals = normals.filter(|normals| !normals.is_empty())?;
        let total: f64 = mix.iter().map(|pair| pair.weight).sum();
        let point = self.0.random();
        let mut reached = 0.0;
        let chosen = mix.iter().position(|pair| {
            reached += pair.weight / total;
            reached > point
        });
        let ((isl_mean, isl_stddev), (osl_mean, osl_stddev)) = normals[chosen.unwrap_or(mix.len() - 1)];
        let isl = if isl_stddev > 0.0 { self.positive_normal(isl_mean, isl_stddev) } else { isl_mean.round() as u64 };
        let osl = if osl_stddev > 0.0 { self.positive_normal(osl_mean, osl_stddev) } else { osl_mean.round() as u64 };
        Some((isl, osl))
    }

    /// `sample_positive_normal_integer`: a draw redrawn while negative, rounded up, at least 1.
    fn positive_normal(&mut self, mean: f64, stddev: f64) -> u64 {
        let draw = (0..TRIES).map(|_| self.0.gauss(mean, stddev)).find(|draw| *draw >= 0.0).unwrap_or(mean);
        draw.ceil().max(1.0) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// CPython 3.11 with AIPerf's derivation and `sample_positive_normal_integer`, seed 5:
    /// the first 12 ISLs of mean 50, stddev 10 and OSLs of mean 20, stddev 5.
    const PYTHON_ISL_50_10: [u64; 12] = [73, 55, 33, 39, 57, 44, 54, 60, 54, 46, 45, 41];
    const PYTHON_OSL_20_5: [u64; 12] = [35, 21, 23, 19, 16, 20, 22, 18, 16, 24, 26, 13];

    /// What AIPerf 0.13 sent for `--sequence-distribution "30|5,10|2:60;60|8,20|3:40"
    /// --random-seed 4` (run beside this one): its first eight (ISL, OSL) pairs.
    const AIPERF_MIX_SEED_4: [(u64, u64); 8] =
        [(33, 8), (41, 9), (37, 11), (36, 10), (63, 17), (64, 20), (35, 10), (31, 10)];

    #[test]
    fn a_mixture_of_normal_pairs_draws_aiperfs_pairs_and_lengths() {
        let mix = [
            LengthPair { isl: Dist::normal(30.0, 5.0), osl: Dist::normal(10.0, 2.0), weight: 60.0 },
            LengthPair { isl: Dist::normal(60.0, 8.0), osl: Dist::normal(20.0, 3.0), weight: 40.0 },
        ];
        let mut stream = LengthStream::length_pairs(4);
        let drawn: Vec<(u64, u64)> = (0..8).map(|_| stream.pair(&mix).expect("plain normals")).collect();
        assert_eq!(drawn, AIPERF_MIX_SEED_4);
        let lognormal = [LengthPair { isl: Dist::lognormal(30.0, 25.0), osl: Dist::fixed(4.0), weight: 1.0 }];
        assert_eq!(stream.pair(&lognormal), None, "this project's shapes draw their own");
    }

    #[test]
    fn plain_normal_lengths_are_the_ones_aiperf_draws_and_other_shapes_keep_their_own() {
        let mut rng = SeededRng::new(1);
        let mut isl = LengthStream::prompt_lengths(5);
        let drawn: Vec<u64> = (0..12).map(|_| isl.count(&Dist::normal(50.0, 10.0), &mut rng)).collect();
        assert_eq!(drawn, PYTHON_ISL_50_10);
        let mut osl = LengthStream::max_tokens(5);
        let drawn: Vec<u64> = (0..12).map(|_| osl.count(&Dist::normal(20.0, 5.0), &mut rng)).collect();
        assert_eq!(drawn, PYTHON_OSL_20_5);
        // A fixed length draws from neither.
        let (mut fixed, before) = (LengthStream::prompt_lengths(5), rng.clone().next_u64());
        assert_eq!(fixed.count(&Dist::normal(64.0, 0.0), &mut rng), 64);
        assert_eq!(rng.next_u64(), before, "nothing drawn from the dataset's generator");
        assert_eq!(fixed.count(&Dist::normal(50.0, 10.0), &mut rng), PYTHON_ISL_50_10[0], "nor from the stream");
    }
}
