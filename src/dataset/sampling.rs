//! The order in which requests take a file's entries (or sessions): file order, seeded draws
//! with replacement, or a seeded permutation. Requests cycle through the arranged items.

use crate::plan::Sampling;
use crate::rng::SeededRng;

/// `items` arranged by `sampling`; as many items come out as went in.
pub fn arrange<T: Clone>(items: Vec<T>, sampling: Sampling, seed: u64) -> Vec<T> {
    let mut rng = SeededRng::new(seed);
    match sampling {
        Sampling::Sequential => items,
        Sampling::Random => {
            let len = items.len() as u64;
            (0..len).map(|_| items[rng.below(len) as usize].clone()).collect()
        }
        Sampling::Shuffle => {
            let mut items = items;
            // Fisher-Yates.
            for i in (1..items.len()).rev() {
                let j = rng.below(i as u64 + 1) as usize;
                items.swap(i, j);
            }
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
}
