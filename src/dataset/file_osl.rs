//! AIPerf's `--osl` over a file dataset: an entry that names no output length (and sends no
//! body of its own) asks for one drawn from the distribution, a whole number of at least 1;
//! a line's own `output_length` wins. A normal is AIPerf 0.13's draw from the same seed (its
//! composer's `composer.turn.max_tokens` stream, about the mean's whole tokens, one draw per
//! such entry in file order); other shapes are this project's.

use super::DatasetEntry;
use super::aiperf_draws::{MAX_TOKENS, positive_normal_integer};
use crate::plan::Dist;
use crate::rng::SeededRng;
use crate::rng::aiperf_streams::derived;

/// Give each entry of `entries` that names no output length one drawn from `osl` (seeded).
pub fn ask_for(entries: &mut [DatasetEntry], osl: &Dist, seed: u64) {
    let mut own = SeededRng::new(seed ^ 0x6f73_6c5f_6669_6c65);
    let mut aiperf = derived(seed, MAX_TOKENS);
    // Whole tokens, as AIPerf takes the mean and the spread; a mean under 1 asks for nothing.
    let normal = osl.as_plain_normal().map(|(mean, stddev)| (mean.trunc(), stddev.trunc()));
    if normal.is_some_and(|(mean, _)| mean < 1.0) {
        return;
    }
    for entry in entries.iter_mut().filter(|entry| entry.max_tokens.is_none() && entry.own_body.is_none()) {
        entry.max_tokens = Some(match normal {
            Some((mean, 0.0)) => mean as u64,
            Some((mean, stddev)) => positive_normal_integer(&mut aiperf, mean, stddev),
            None => osl.sample_count(&mut own),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::tokenizer::Tokenizer;

    #[test]
    fn entries_without_an_output_length_ask_for_one_and_a_lines_own_wins() {
        let tokenizer = Tokenizer::shared_builtin();
        let mut entries: Vec<DatasetEntry> =
            [None, Some(7), None].into_iter().map(|max| DatasetEntry::counted(&tokenizer, "hi".into(), max)).collect();
        ask_for(&mut entries, &Dist::fixed(5.0), 1);
        assert_eq!(entries.iter().map(|e| e.max_tokens).collect::<Vec<_>>(), [Some(5), Some(7), Some(5)]);
        let mut spread: Vec<DatasetEntry> =
            (0..200).map(|_| DatasetEntry::counted(&tokenizer, "hi".into(), None)).collect();
        ask_for(&mut spread, &Dist::normal(3.0, 4.0), 2);
        let asked: Vec<u64> = spread.iter().filter_map(|e| e.max_tokens).collect();
        assert!(asked.iter().all(|tokens| *tokens >= 1), "at least one token each");
        assert!(asked.iter().any(|tokens| *tokens != asked[0]), "drawn per entry");
    }
}
