//! The order in which requests take a file's entries (or sessions): file order, seeded draws
//! with replacement, or a seeded permutation, each AIPerf 0.13's sampler's draws from the same
//! seed (`choice` from its `dataset.sampler.random` stream, NumPy's `shuffle` from its
//! `dataset.sampler.shuffle` one). Requests cycle through the arranged items; a shuffled file's
//! later passes are reshuffled (`load::dataset_order`).

use crate::plan::Sampling;
use crate::rng::aiperf_streams::{SAMPLER_RANDOM, SAMPLER_SHUFFLE, derived, derived_numpy};

/// `items` arranged by `sampling`; as many items come out as went in.
pub fn arrange<T: Clone>(items: Vec<T>, sampling: Sampling, seed: u64) -> Vec<T> {
    match sampling {
        Sampling::Sequential => items,
        Sampling::Random => {
            let mut rng = derived(seed, SAMPLER_RANDOM);
            (0..items.len()).map(|_| items[rng.below(items.len())].clone()).collect()
        }
        Sampling::Shuffle => {
            let mut items = items;
            derived_numpy(seed, SAMPLER_SHUFFLE).shuffle(&mut items);
            items
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn items(n: u64) -> Vec<u64> {
        (0..n).collect()
    }

    #[test]
    fn sequential_keeps_file_order() {
        assert_eq!(arrange(items(4), Sampling::Sequential, 9), [0, 1, 2, 3]);
    }

    #[test]
    fn shuffle_is_a_seeded_permutation() {
        let a = arrange(items(50), Sampling::Shuffle, 7);
        let b = arrange(items(50), Sampling::Shuffle, 7);
        let c = arrange(items(50), Sampling::Shuffle, 8);
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_ne!(a, items(50));
        let mut sorted = a.clone();
        sorted.sort();
        assert_eq!(sorted, items(50), "every item exactly once");
    }

    #[test]
    fn random_draws_with_replacement_per_seed() {
        let a = arrange(items(50), Sampling::Random, 7);
        let b = arrange(items(50), Sampling::Random, 7);
        let c = arrange(items(50), Sampling::Random, 8);
        assert_eq!(a.len(), 50);
        assert_eq!(a, b);
        assert_ne!(a, c);
        let mut distinct = a.clone();
        distinct.sort();
        distinct.dedup();
        assert!(distinct.len() < 50, "50 draws from 50 items repeat some (p ≈ 1 - 50!/50^50)");
    }

    /// What AIPerf 0.13 sent from an 8-line file with `--random-seed 3` (run beside this one):
    /// the lines its `random` and `shuffle` samplers took first.
    #[test]
    fn the_draws_are_aiperfs_samplers() {
        assert_eq!(arrange(items(8), Sampling::Random, 3), [5, 3, 4, 1, 7, 2, 2, 6]);
        assert_eq!(arrange(items(8), Sampling::Shuffle, 3), [4, 7, 2, 5, 1, 3, 6, 0]);
    }
}
