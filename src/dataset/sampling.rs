//! The order in which requests take a file's entries: file order, seeded draws with
//! replacement, or a seeded permutation. Requests cycle through the arranged entries.

use super::DatasetEntry;
use crate::plan::Sampling;
use crate::rng::SeededRng;

/// `entries` arranged by `sampling`; as many entries come out as went in.
pub fn arrange(entries: Vec<DatasetEntry>, sampling: Sampling, seed: u64) -> Vec<DatasetEntry> {
    let mut rng = SeededRng::new(seed);
    match sampling {
        Sampling::Sequential => entries,
        Sampling::Random => {
            let len = entries.len() as u64;
            (0..len).map(|_| entries[rng.below(len) as usize].clone()).collect()
        }
        Sampling::Shuffle => {
            let mut entries = entries;
            // Fisher-Yates.
            for i in (1..entries.len()).rev() {
                let j = rng.below(i as u64 + 1) as usize;
                entries.swap(i, j);
            }
            entries
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(n: u64) -> Vec<DatasetEntry> {
        (0..n).map(|i| DatasetEntry { prompt: format!("p{i}"), input_tokens: i, max_tokens: None }).collect()
    }

    fn prompts(entries: &[DatasetEntry]) -> Vec<&str> {
        entries.iter().map(|e| e.prompt.as_str()).collect()
    }

    #[test]
    fn sequential_keeps_file_order() {
        assert_eq!(prompts(&arrange(entries(4), Sampling::Sequential, 9)), ["p0", "p1", "p2", "p3"]);
    }

    #[test]
    fn shuffle_is_a_seeded_permutation() {
        let a = arrange(entries(50), Sampling::Shuffle, 7);
        let b = arrange(entries(50), Sampling::Shuffle, 7);
        let c = arrange(entries(50), Sampling::Shuffle, 8);
        assert_eq!(prompts(&a), prompts(&b));
        assert_ne!(prompts(&a), prompts(&c));
        assert_ne!(prompts(&a), prompts(&entries(50)));
        let mut sorted: Vec<u64> = a.iter().map(|e| e.input_tokens).collect();
        sorted.sort();
        assert_eq!(sorted, (0..50).collect::<Vec<_>>(), "every entry exactly once");
    }

    #[test]
    fn random_draws_with_replacement_per_seed() {
        let a = arrange(entries(50), Sampling::Random, 7);
        let b = arrange(entries(50), Sampling::Random, 7);
        let c = arrange(entries(50), Sampling::Random, 8);
        assert_eq!(a.len(), 50);
        assert_eq!(prompts(&a), prompts(&b));
        assert_ne!(prompts(&a), prompts(&c));
        let mut distinct: Vec<u64> = a.iter().map(|e| e.input_tokens).collect();
        distinct.sort();
        distinct.dedup();
        assert!(distinct.len() < 50, "50 draws from 50 entries repeat some (p ≈ 1 - 50!/50^50)");
    }
}
