//! Synthetic rankings entries as AIPerf 0.13 makes them: a query and passages, each cut from the
//! corpus to a length drawn from its own distribution, instead of one prompt cut into pieces.

use super::exact_length::text_of_length;
use super::{DatasetEntry, Ranking, corpus, tokenizer::Tokenizer};
use crate::plan::{Dist, RankingLengths};
use crate::rng::SeededRng;

/// Seeds the queries' and passages' lengths and places apart from the prompts'.
const RANKINGS_SALT: u64 = 0x4A4E_6B1E_55ED;

/// Give every entry a query and `lengths.passages` passages of its own (its prompt their text
/// joined, its input tokens theirs).
pub fn apply(entries: &mut [DatasetEntry], lengths: &RankingLengths, tokenizer: &Tokenizer, seed: u64) {
    let text = corpus::shakespeare();
    let mut rng = SeededRng::new(seed ^ RANKINGS_SALT);
    let mut cut = |dist: &Dist| {
        let tokens = dist.sample_count(&mut rng);
        let offset = rng.below(text.len() as u64) as usize;
        text_of_length(tokenizer, None, text, offset, tokens)
    };
    for entry in entries {
        let query = cut(&lengths.query_tokens);
        let passages: Vec<_> = (0..lengths.passages.max(1)).map(|_| cut(&lengths.passage_tokens)).collect();
        entry.input_tokens = query.tokens + passages.iter().map(|passage| passage.tokens).sum::<u64>();
        let passages: Vec<String> = passages.into_iter().map(|passage| passage.text).collect();
        entry.prompt = std::iter::once(query.text.as_str())
            .chain(passages.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join("\n");
        entry.ranking = Some(Ranking { query: query.text, passages });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_entry_gets_a_query_and_passages_of_the_lengths_asked() {
        let tokenizer = Tokenizer::shared_builtin();
        let mut entries: Vec<DatasetEntry> =
            (0..3).map(|_| DatasetEntry::counted(&tokenizer, "unused".into(), Some(1))).collect();
        let lengths =
            RankingLengths { query_tokens: Dist::fixed(12.0), passage_tokens: Dist::fixed(40.0), passages: 5 };
        apply(&mut entries, &lengths, &tokenizer, 7);
        for entry in &entries {
            let ranking = entry.ranking.as_ref().expect("a ranking");
            assert_eq!(tokenizer.count(&ranking.query), 12);
            assert_eq!(ranking.passages.len(), 5);
            assert!(ranking.passages.iter().all(|passage| tokenizer.count(passage) == 40));
            assert_eq!(entry.input_tokens, 12 + 5 * 40);
        }
        assert_ne!(entries[0].ranking, entries[1].ranking, "each entry its own texts");
    }
}
