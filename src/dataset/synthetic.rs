//! Synthetic prompts: ISL and OSL drawn from normal distributions, each prompt cut from the
//! corpus so that it counts to its target length under the run's tokenizer. Seeded: the same
//! seed and tokenizer give byte-identical prompts.

use crate::dataset::{DatasetEntry, corpus, tokenizer::Tokenizer};
use crate::plan::{Dist, SyntheticDataset};
use crate::rng::SeededRng;

/// Generate `spec.entries` prompts.
pub fn generate(spec: &SyntheticDataset, tokenizer: &Tokenizer) -> Vec<DatasetEntry> {
    let text = corpus::shakespeare();
    let mut rng = SeededRng::new(spec.random_seed);
    (0..spec.entries.max(1))
        .map(|_| {
            let input_tokens = sample_length(&mut rng, spec.isl);
            let output_tokens = sample_length(&mut rng, spec.osl);
            let offset = rng.below(text.len() as u64) as usize;
            let prompt = prompt_of_length(tokenizer, text, offset, input_tokens);
            let counted = tokenizer.count(&prompt) as u64;
            DatasetEntry { prompt, input_tokens: counted, max_tokens: Some(output_tokens) }
        })
        .collect()
}

/// A length drawn from `dist`, at least 1 token.
fn sample_length(rng: &mut SeededRng, dist: Dist) -> u64 {
    rng.normal(dist.mean, dist.stddev).round().max(1.0) as u64
}

/// Text from the corpus at `offset` that encodes to `target` tokens (exactly, save for rare
/// merges at the edges that no cut can avoid).
pub(super) fn prompt_of_length(tokenizer: &Tokenizer, corpus: &str, offset: usize, target: u64) -> String {
    let target = target as usize;
    let mut approx_bytes = target * 6 + 32;
    let ids = loop {
        let ids = tokenizer.encode(&corpus::window(corpus, offset, approx_bytes));
        if ids.len() > target || approx_bytes > corpus.len() {
            break ids;
        }
        approx_bytes *= 2;
    };
    let mut take = target.min(ids.len());
    let mut prompt = tokenizer.decode(&ids[..take]);
    // Decoding then re-encoding can merge tokens at the cut; nudge the cut until it counts right.
    for _ in 0..4 {
        let counted = tokenizer.count(&prompt);
        if counted == target {
            break;
        }
        if counted > target && take > 1 {
            take -= 1;
        } else if counted < target && take < ids.len() {
            take += 1;
        } else {
            break;
        }
        prompt = tokenizer.decode(&ids[..take]);
    }
    prompt
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(seed: u64) -> SyntheticDataset {
        SyntheticDataset {
            isl: Dist { mean: 100.0, stddev: 20.0 },
            osl: Dist { mean: 50.0, stddev: 0.0 },
            random_seed: seed,
            entries: 20,
            images: None,
        }
    }

    #[test]
    fn prompts_hit_their_token_targets_and_are_reproducible() {
        let tokenizer = Tokenizer::shared_builtin().unwrap();
        let a = generate(&spec(42), &tokenizer);
        let b = generate(&spec(42), &tokenizer);
        let c = generate(&spec(43), &tokenizer);
        assert_eq!(a.len(), 20);
        assert_eq!(a.iter().map(|e| &e.prompt).collect::<Vec<_>>(), b.iter().map(|e| &e.prompt).collect::<Vec<_>>());
        assert_ne!(a[0].prompt, c[0].prompt);
        for entry in &a {
            assert_eq!(entry.input_tokens as usize, tokenizer.count(&entry.prompt));
            assert_eq!(entry.max_tokens, Some(50));
        }
        let mean = a.iter().map(|e| e.input_tokens as f64).sum::<f64>() / a.len() as f64;
        assert!((mean - 100.0).abs() < 15.0, "mean isl {mean}");
    }

    #[test]
    fn fixed_lengths_are_exact() {
        let tokenizer = Tokenizer::shared_builtin().unwrap();
        let fixed = SyntheticDataset {
            isl: Dist { mean: 128.0, stddev: 0.0 },
            osl: Dist { mean: 64.0, stddev: 0.0 },
            random_seed: 1,
            entries: 30,
            images: None,
        };
        let entries = generate(&fixed, &tokenizer);
        let exact = entries.iter().filter(|e| e.input_tokens == 128).count();
        assert!(exact >= 29, "only {exact} of 30 prompts have exactly 128 tokens");
    }
}
