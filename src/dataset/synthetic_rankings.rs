//! Synthetic rankings entries as AIPerf 0.13 makes them: a query and passages, each cut from the
//! corpus to a length drawn from its own distribution, instead of one prompt cut into pieces.
//! The lengths are drawn as AIPerf's rankings composer draws them (each entry's query, then its
//! passages, from its prompt-length stream: `aiperf_draws`).

use super::aiperf_draws::{PassageCounts, PromptDraws};
use super::exact_length::text_of_length;
use super::{DatasetEntry, Ranking, corpus::Corpus, tokenizer::Tokenizer};
use crate::plan::{Dist, RankingLengths};
use crate::rng::SeededRng;

/// Seeds the queries' and passages' lengths and places apart from the prompts'.
const RANKINGS_SALT: u64 = 0x4A4E_6B1E_55ED;

/// Give every entry a query and its drawn count of passages (`lengths.passages`, spread by
/// `lengths.passages_stddev`) of its own, cut from `corpus` (its prompt their text joined, its
/// input tokens theirs).
pub fn apply(entries: &mut [DatasetEntry], lengths: &RankingLengths, tokenizer: &Tokenizer, corpus: Corpus, seed: u64) {
    let mut rng = SeededRng::new(seed ^ RANKINGS_SALT);
    let mut aiperf = PromptDraws::new(seed);
    let mut passage_counts = PassageCounts::new(seed);
    let mut cut = |dist: &Dist| {
        let tokens = aiperf.prompt_length(dist, &mut rng);
        let offset = rng.below(corpus.text().len() as u64) as usize;
        text_of_length(tokenizer, None, corpus, offset, tokens)
    };
    for entry in entries {
        let count = passage_counts.next(lengths.passages, lengths.passages_stddev);
        let query = cut(&lengths.query_tokens);
        let passages: Vec<_> = (0..count).map(|_| cut(&lengths.passage_tokens)).collect();
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
        let lengths = RankingLengths {
            query_tokens: Dist::fixed(12.0),
            passage_tokens: Dist::fixed(40.0),
            passages: 5,
            passages_stddev: 0,
        };
        apply(&mut entries, &lengths, &tokenizer, Corpus::Shakespeare, 7);
        for entry in &entries {
            let ranking = entry.ranking.as_ref().expect("a ranking");
            assert_eq!(tokenizer.count(&ranking.query), 12);
            assert_eq!(ranking.passages.len(), 5);
            assert!(ranking.passages.iter().all(|passage| tokenizer.count(passage) == 40));
            assert_eq!(entry.input_tokens, 12 + 5 * 40);
        }
        assert_ne!(entries[0].ranking, entries[1].ranking, "each entry its own texts");
    }

    /// What AIPerf 0.13 sent for `--endpoint-type hf-tei-rankings --rankings-passages-mean 3
    /// --rankings-query-prompt-token-mean 12 --rankings-query-prompt-token-stddev 3
    /// --rankings-passages-prompt-token-mean 30 --rankings-passages-prompt-token-stddev 6
    /// --random-seed 2` (counted with GPT-2, its tokenizer there): each entry's query and passages;
    /// and with `--rankings-passages-stddev 2` too, which draws each entry's passage count from a
    /// stream of its own (the lengths then go on through the same prompt-length stream).
    const AIPERF_SEED_2: [(usize, &[usize]); 4] =
        [(11, &[36, 32, 29]), (9, &[22, 30, 26]), (18, &[34, 25, 34]), (11, &[29, 22, 29])];
    const AIPERF_SEED_2_SPREAD_COUNTS: [(usize, &[usize]); 6] = [
        (11, &[36]),
        (13, &[29, 24, 22, 30]),
        (10, &[41, 34, 25, 34]),
        (11, &[29, 22, 29, 34]),
        (12, &[31, 29, 35]),
        (19, &[27, 34, 19]),
    ];

    #[test]
    fn spread_lengths_and_counts_are_the_ones_aiperfs_rankings_composer_draws() {
        let tokenizer = Tokenizer::shared_builtin();
        for (passages_stddev, expected) in [(0, &AIPERF_SEED_2[..]), (2, &AIPERF_SEED_2_SPREAD_COUNTS[..])] {
            let mut entries: Vec<DatasetEntry> =
                (0..expected.len()).map(|_| DatasetEntry::counted(&tokenizer, "unused".into(), Some(1))).collect();
            let lengths = RankingLengths {
                query_tokens: Dist::normal(12.0, 3.0),
                passage_tokens: Dist::normal(30.0, 6.0),
                passages: 3,
                passages_stddev,
            };
            apply(&mut entries, &lengths, &tokenizer, Corpus::Shakespeare, 2);
            let drawn: Vec<(usize, Vec<usize>)> = entries
                .iter()
                .map(|entry| entry.ranking.as_ref().expect("a ranking"))
                .map(|ranking| {
                    (tokenizer.count(&ranking.query), ranking.passages.iter().map(|p| tokenizer.count(p)).collect())
                })
                .collect();
            let expected: Vec<(usize, Vec<usize>)> =
                expected.iter().map(|(query, passages)| (*query, passages.to_vec())).collect();
            assert_eq!(drawn, expected, "passages stddev {passages_stddev}");
        }
    }
}
