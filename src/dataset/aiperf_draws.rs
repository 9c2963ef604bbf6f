//! What synthetic prompts draw as AIPerf 0.13 draws it: their prefix from the pool
//! (`--prefix-prompt-pool-size`, Python's `choice` over its `dataset.prompt.prefix` stream, for
//! each conversation's first prompt), and their lengths when those are AIPerf's own: a normal
//! of a mean and a stddev (`--isl`/`--isl-stddev`, `--osl`/`--osl-stddev`,
//! `--conversation-turn-mean`/`-stddev`), a weighted mixture of such pairs
//! (`--sequence-distribution`), or whole-number windows (`--random-range-ratio`). Each comes from
//! the stream AIPerf derives for it from the seed (a normal by Python's `gauss`, redrawn while
//! negative, rounded up, at least 1; a window by NumPy's `integers`); so with the same
//! `--random-seed` the n-th prompt asks for the lengths and prefix AIPerf's n-th prompt asks
//! for. Other shapes (lognormal, mixtures of them, bounds: this project's) keep the dataset's own
//! generator. Conversations' turn counts and delays likewise (`SessionDraws`).

use crate::plan::{Dist, LengthPair};
use crate::rng::SeededRng;
use crate::rng::aiperf_streams::{derived, derived_numpy};
use crate::rng::numpy::NumpyGenerator;
use crate::rng::python::PythonRandom;

const PROMPT_LENGTH: &str = "dataset.prompt.length";
pub(super) const MAX_TOKENS: &str = "composer.turn.max_tokens";
const TURN_COUNT: &str = "composer.conversation.turn_count";
const TURN_DELAY: &str = "composer.conversation.turn_delay";
const SEQUENCE_DISTRIBUTION: &str = "models.sequence.distribution";
const RANGE_RATIO: &str = "models.range_ratio.distribution";
const PREFIX: &str = "dataset.prompt.prefix";
const RANKING_PASSAGES: &str = "dataset.rankings.passages";

/// AIPerf's tries at a non-negative draw before it takes the mean.
const TRIES: usize = 10_000;

/// A synthetic prompt's ISL and OSL, each drawn from AIPerf's stream for its shape, and its
/// prefix.
pub struct PromptDraws {
    isl: LengthStream,
    osl: LengthStream,
    pairs: LengthStream,
    windows: NumpyGenerator,
    prefixes: PythonRandom,
}

impl PromptDraws {
    pub fn new(seed: u64) -> Self {
        Self {
            isl: LengthStream(derived(seed, PROMPT_LENGTH)),
            osl: LengthStream(derived(seed, MAX_TOKENS)),
            pairs: LengthStream(derived(seed, SEQUENCE_DISTRIBUTION)),
            windows: derived_numpy(seed, RANGE_RATIO),
            prefixes: derived(seed, PREFIX),
        }
    }

    /// A prompt's length of `dist` from AIPerf's prompt-length stream alone (a rankings query or
    /// passage).
    pub fn prompt_length(&mut self, dist: &Dist, rng: &mut SeededRng) -> u64 {
        self.isl.count(dist, rng)
    }

    /// Which of a pool's `count` prefixes a conversation's first prompt starts with.
    pub fn prefix(&mut self, count: usize) -> usize {
        self.prefixes.below(count)
    }

    /// The next prompt's ISL and OSL (none: the server chooses) from `mix` when it has pairs,
    /// else from `lengths`; what AIPerf does not draw comes from `rng`.
    pub fn lengths(
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

/// A synthetic conversation's turn count and the delays before its later turns.
pub struct SessionDraws {
    counts: LengthStream,
    delays: LengthStream,
}

impl SessionDraws {
    pub fn new(seed: u64) -> Self {
        Self { counts: LengthStream(derived(seed, TURN_COUNT)), delays: LengthStream(derived(seed, TURN_DELAY)) }
    }

    pub fn turns(&mut self, dist: &Dist, rng: &mut SeededRng) -> u64 {
        self.counts.count(dist, rng)
    }

    /// The delay before a later turn, in ms, of `dist` in seconds times `ratio`: a plain normal
    /// (a fixed delay too) is AIPerf's draw, in whole milliseconds (the mean's and the spread's
    /// whole milliseconds, drawn about, rounded up, at least 1; a fixed delay's at least 1),
    /// then scaled; other shapes draw from `rng`.
    pub fn delay_ms(&mut self, dist: &Dist, ratio: f64, rng: &mut SeededRng) -> f64 {
        let drawn = match dist.as_plain_normal() {
            Some((mean_s, stddev_s)) if mean_s > 0.0 => {
                let (mean_ms, stddev_ms) = (whole_ms(mean_s), whole_ms(stddev_s));
                match stddev_ms > 0.0 {
                    true => self.delays.positive_normal(mean_ms, stddev_ms) as f64,
                    false => mean_ms.max(1.0),
                }
            }
            _ => dist.sample(rng).max(0.0) * 1000.0,
        };
        drawn * ratio
    }
}

/// Seconds in whole milliseconds, as AIPerf truncates its millisecond flags (a micro-rounding
/// first, so 0.3 s is 300 ms and not 299.99…).
fn whole_ms(seconds: f64) -> f64 {
    ((seconds * 1e9).round() / 1e6).trunc()
}

/// How many passages each synthetic rankings entry has, as AIPerf's rankings composer draws it
/// from its passages stream: about the mean's whole passages, rounded up, at least 1; a fixed
/// count draws nothing.
pub struct PassageCounts(LengthStream);

impl PassageCounts {
    pub fn new(seed: u64) -> Self {
        Self(LengthStream(derived(seed, RANKING_PASSAGES)))
    }

    pub fn next(&mut self, mean: usize, stddev: u64) -> usize {
        match stddev {
            0 => mean.max(1),
            _ => self.0.positive_normal(mean as f64, stddev as f64) as usize,
        }
    }
}

/// One of AIPerf's length streams.
struct LengthStream(PythonRandom);

impl LengthStream {
    /// The next count of `dist`: AIPerf's draw for a plain normal (none for a fixed one), else
    /// `dist`'s own from `rng`.
    fn count(&mut self, dist: &Dist, rng: &mut SeededRng) -> u64 {
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

    fn positive_normal(&mut self, mean: f64, stddev: f64) -> u64 {
        positive_normal_integer(&mut self.0, mean, stddev)
    }
}

/// AIPerf's `sample_positive_normal_integer` from `rng`: a draw redrawn while negative, rounded
/// up, at least 1.
pub fn positive_normal_integer(rng: &mut PythonRandom, mean: f64, stddev: f64) -> u64 {
    normal_at_least(rng, mean, stddev, 0.0).ceil().max(1.0) as u64
}

/// AIPerf's `sample_normal(mean, stddev, lower)` from `rng`: Python's `gauss`, redrawn while
/// under `lower`; after its tries, the mean (at least `lower`).
pub fn normal_at_least(rng: &mut PythonRandom, mean: f64, stddev: f64, lower: f64) -> f64 {
    (0..TRIES).map(|_| rng.gauss(mean, stddev)).find(|draw| *draw >= lower).unwrap_or(mean.max(lower))
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
        let (mut draws, mut rng) = (PromptDraws::new(seed), SeededRng::new(1));
        (0..count)
            .map(|_| draws.lengths(mix, (isl, Some(osl)), &mut rng))
            .map(|(isl, osl)| (isl, osl.unwrap()))
            .collect()
    }

    #[test]
    fn normal_lengths_are_the_ones_aiperf_draws() {
        let pairs = drawn(5, &[], &Dist::normal(50.0, 10.0), &Dist::normal(20.0, 5.0), 12);
        assert_eq!(pairs.iter().map(|pair| pair.0).collect::<Vec<_>>(), PYTHON_ISL_50_10);
        assert_eq!(pairs.iter().map(|pair| pair.1).collect::<Vec<_>>(), PYTHON_OSL_20_5);
        // A fixed length draws from neither its stream nor the dataset's generator.
        let (mut draws, mut rng) = (PromptDraws::new(5), SeededRng::new(1));
        let before = rng.clone().next_u64();
        assert_eq!(draws.lengths(&[], (&Dist::normal(64.0, 0.0), None), &mut rng), (64, None));
        assert_eq!(rng.next_u64(), before, "nothing drawn from the dataset's generator");
        assert_eq!(draws.lengths(&[], (&Dist::normal(50.0, 10.0), None), &mut rng).0, PYTHON_ISL_50_10[0]);
    }

    /// CPython 3.11 with AIPerf's derivation, seed 11: three conversations of `normal(3, 1)`
    /// turns and the delays of `normal(300, 50)` ms before each later turn (AIPerf 0.13 waited
    /// 286, 360, 295, 222, 319, 330 ms; 313, 271; 208 between turns for the same flags).
    const PYTHON_DELAYS_SEED_11: [&[f64]; 3] = [&[281.0, 359.0, 294.0, 222.0, 318.0, 325.0], &[313.0, 269.0], &[207.0]];

    /// A ratio scales AIPerf's whole-millisecond draw (AIPerf's `delay * turn_delay_ratio`): the
    /// same draws, halved, not a draw of the halved delay.
    #[test]
    fn conversations_draw_aiperfs_turn_counts_and_whole_millisecond_delays() {
        for ratio in [1.0, 0.5] {
            let (mut draws, mut rng) = (SessionDraws::new(11), SeededRng::new(1));
            let (turns, delay) = (Dist::normal(3.0, 1.0), Dist::normal(0.3, 0.05));
            for expected in PYTHON_DELAYS_SEED_11 {
                let count = draws.turns(&turns, &mut rng);
                let delays: Vec<f64> = (1..count).map(|_| draws.delay_ms(&delay, ratio, &mut rng)).collect();
                assert_eq!(delays, expected.iter().map(|ms| ms * ratio).collect::<Vec<_>>(), "ratio {ratio}");
            }
        }
        let (mut draws, mut rng) = (SessionDraws::new(11), SeededRng::new(1));
        assert_eq!(draws.delay_ms(&Dist::fixed(0.2505), 1.0, &mut rng), 250.0, "whole milliseconds, as AIPerf's");
        assert_eq!(draws.delay_ms(&Dist::fixed(0.0004), 1.0, &mut rng), 1.0, "at least one");
        assert_eq!(draws.delay_ms(&Dist::fixed(0.0), 1.0, &mut rng), 0.0);
    }

    /// CPython 3.11, AIPerf's `dataset.prompt.prefix` stream for seed 6: `choice(range(4))`, 12
    /// times (AIPerf 0.13's 12 prompts for `--prefix-prompt-pool-size 4 --random-seed 6` start
    /// with prefixes in the same pattern).
    #[test]
    fn first_prompts_pick_aiperfs_prefixes() {
        let mut draws = PromptDraws::new(6);
        let picks: Vec<usize> = (0..12).map(|_| draws.prefix(4)).collect();
        assert_eq!(picks, [3, 1, 0, 3, 0, 0, 0, 3, 2, 2, 0, 2]);
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
        assert_eq!(PromptDraws::new(4).pairs.pair(&lognormal), None, "this project's shapes draw their own");
    }
}
