//! The lengths of synthetic prompts as AIPerf 0.13 draws them when they are its own: a normal
//! of a mean and a stddev (`--isl`/`--isl-stddev`, `--osl`/`--osl-stddev`,
//! `--conversation-turn-mean`/`-stddev`), a weighted mixture of such pairs
//! (`--sequence-distribution`), or whole-number windows (`--random-range-ratio`). Each comes from
//! the stream AIPerf derives for it from the seed (a normal by Python's `gauss`, redrawn while
//! negative, rounded up, at least 1; a window by NumPy's `integers`); so with the same
//! `--random-seed` the n-th prompt asks for the lengths AIPerf's n-th prompt asks for. Other
//! shapes (lognormal, mixtures of them, bounds: this project's) keep the dataset's own generator.

use crate::plan::{Dist, LengthPair};
use crate::rng::SeededRng;
use crate::rng::aiperf_streams::{derived, derived_numpy};
use crate::rng::numpy::NumpyGenerator;
use crate::rng::python::PythonRandom;

const PROMPT_LENGTH: &str = "dataset.prompt.length";
const MAX_TOKENS: &str = "composer.turn.max_tokens";
const TURN_COUNT: &str = "composer.conversation.turn_count";
const SEQUENCE_DISTRIBUTION: &str = "models.sequence.distribution";
const RANGE_RATIO: &str = "models.range_ratio.distribution";

/// AIPerf's tries at a non-negative draw before it takes the mean.
const TRIES: usize = 10_000;

/// A synthetic prompt's ISL and OSL, each drawn from AIPerf's stream for its shape.
pub struct PromptLengths {
    isl: LengthStream,
    osl: LengthStream,
    pairs: LengthStream,
    windows: NumpyGenerator,
}

impl PromptLengths {
    pub fn new(seed: u64) -> Self {
        Self {
            isl: LengthStream(derived(seed, PROMPT_LENGTH)),
            osl: LengthStream(derived(seed, MAX_TOKENS)),
            pairs: LengthStream(derived(seed, SEQUENCE_DISTRIBUTION)),
            windows: derived_numpy(seed, RANGE_RATIO),
        }
    }

    /// The next prompt's ISL and OSL (none: the server chooses) from `mix` when it has pairs,
    /// else from `lengths`; what AIPerf does not draw comes from `rng`.
    pub fn draw(
        &mut self,
        mix: &[LengthPair],
        lengths: (&Dist, Option<&Dist>),
        rng: &mut SeededRng,
    ) -> (u64, Option<u64>) {
        let (isl, osl) = lengths;
        if !mix.is_empty() {
            return match self.pairs.pair(mix) {
                Some((isl, osl)) => (isl, Some(osl)),
                None => (isl.sample_count(rng), osl.map(|osl| osl.sample_count(rng))),
            };
        }
        if let Some(drawn) = self.windows(isl, osl) {
            return drawn;
        }
        (self.isl.count(isl, rng), osl.map(|osl| self.osl.count(osl, rng)))
    }

    /// Windows of whole numbers, as AIPerf's range-ratio distribution draws them: the ISL, then
    /// the OSL, each `integers(low, high + 1)` from one stream. None unless both are windows (or
    /// the ISL is and there is no OSL).
    fn windows(&mut self, isl: &Dist, osl: Option<&Dist>) -> Option<(u64, Option<u64>)> {
        let (isl_low, isl_high) = isl.as_window()?;
        let osl_window = match osl {
            Some(osl) => Some(osl.as_window()?),
            None => None,
        };
        let mut within = |(low, high): (u64, u64)| low + u64::from(self.windows.lemire_u32((high - low) as u32));
        let isl = within((isl_low, isl_high));
        Some((isl, osl_window.map(within)))
    }
}

/// One of AIPerf's length streams.
pub struct LengthStream(PythonRandom);

impl LengthStream {
    pub fn turn_counts(seed: u64) -> Self {
        Self(derived(seed, TURN_COUNT))
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
    fn pair(&mut self, mix: &[LengthPair]) -> Option<(u64, u64)> {
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
    /// the first 12 ISLs of mean 50, stddev 10 and OSLs of mean 20, stddev 5 (what AIPerf 0.13
    /// sent for `--isl 50 --isl-stddev 10 --osl 20 --osl-stddev 5 --random-seed 5`).
    const PYTHON_ISL_50_10: [u64; 12] = [73, 55, 33, 39, 57, 44, 54, 60, 54, 46, 45, 41];
    const PYTHON_OSL_20_5: [u64; 12] = [35, 21, 23, 19, 16, 20, 22, 18, 16, 24, 26, 13];
    /// What AIPerf 0.13 sent for `--sequence-distribution "30|5,10|2:60;60|8,20|3:40"
    /// --random-seed 4`: its first eight (ISL, OSL) pairs.
    const AIPERF_MIX_SEED_4: [(u64, u64); 8] =
        [(33, 8), (41, 9), (37, 11), (36, 10), (63, 17), (64, 20), (35, 10), (31, 10)];
    /// What AIPerf 0.13 sent for `--isl 50 --osl 20 --random-range-ratio 0.5 --random-seed 4`
    /// (windows [25, 75] and [10, 30]): its first eight (ISL, OSL) pairs.
    const AIPERF_WINDOWS_SEED_4: [(u64, u64); 8] =
        [(26, 26), (75, 12), (48, 12), (26, 26), (49, 11), (55, 17), (49, 28), (44, 23)];

    fn drawn(seed: u64, mix: &[LengthPair], isl: &Dist, osl: &Dist, count: usize) -> Vec<(u64, u64)> {
        let (mut lengths, mut rng) = (PromptLengths::new(seed), SeededRng::new(1));
        (0..count)
            .map(|_| lengths.draw(mix, (isl, Some(osl)), &mut rng))
            .map(|(isl, osl)| (isl, osl.unwrap()))
            .collect()
    }

    #[test]
    fn normal_lengths_are_the_ones_aiperf_draws() {
        let pairs = drawn(5, &[], &Dist::normal(50.0, 10.0), &Dist::normal(20.0, 5.0), 12);
        assert_eq!(pairs.iter().map(|pair| pair.0).collect::<Vec<_>>(), PYTHON_ISL_50_10);
        assert_eq!(pairs.iter().map(|pair| pair.1).collect::<Vec<_>>(), PYTHON_OSL_20_5);
        // A fixed length draws from neither its stream nor the dataset's generator.
        let (mut lengths, mut rng) = (PromptLengths::new(5), SeededRng::new(1));
        let before = rng.clone().next_u64();
        assert_eq!(lengths.draw(&[], (&Dist::normal(64.0, 0.0), None), &mut rng), (64, None));
        assert_eq!(rng.next_u64(), before, "nothing drawn from the dataset's generator");
        assert_eq!(lengths.draw(&[], (&Dist::normal(50.0, 10.0), None), &mut rng).0, PYTHON_ISL_50_10[0]);
    }

    #[test]
    fn a_mixture_of_normal_pairs_and_range_ratio_windows_draw_aiperfs_lengths() {
        let mix = [
            LengthPair { isl: Dist::normal(30.0, 5.0), osl: Dist::normal(10.0, 2.0), weight: 60.0 },
            LengthPair { isl: Dist::normal(60.0, 8.0), osl: Dist::normal(20.0, 3.0), weight: 40.0 },
        ];
        let unused = Dist::fixed(1.0);
        assert_eq!(drawn(4, &mix, &unused, &unused, 8), AIPERF_MIX_SEED_4);
        let windows = drawn(4, &[], &Dist::uniform(25.0, 75.0), &Dist::uniform(10.0, 30.0), 8);
        assert_eq!(windows, AIPERF_WINDOWS_SEED_4);
        let lognormal = [LengthPair { isl: Dist::lognormal(30.0, 25.0), osl: Dist::fixed(4.0), weight: 1.0 }];
        assert_eq!(PromptLengths::new(4).pairs.pair(&lognormal), None, "this project's shapes draw their own");
    }
}
