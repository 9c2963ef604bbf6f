//! How large a dataset may be, since it is made before the first request: a prompt of at
//! most 2^24 tokens, a synthetic dataset of at most 10 M entries and 2^31 prompt tokens, a
//! request of at most 65,536 texts. A mistyped length or count is an error naming it, not a
//! process that grows until it is killed.

use super::SyntheticDataset;

/// The most tokens a prompt may ask for (16 Mi): past every model's context; its text ~80 MB.
pub const MAX_PROMPT_TOKENS: u64 = 1 << 24;
/// The most prompt tokens a synthetic dataset may hold (2^31, ~10 GB of text).
const MAX_DATASET_TOKENS: f64 = (1u64 << 31) as f64;
/// The most entries a synthetic dataset may have, whatever their length (each costs a few
/// hundred bytes beside its text).
const MAX_DATASET_ENTRIES: usize = 10_000_000;
/// The most texts one request may carry (an embeddings `input` list; OpenAI's takes 2,048).
const MAX_BATCH_SIZE: u32 = 65_536;
/// How to give fewer entries, on every face: a dataset's entries default to the requests asked for.
const FEWER_ENTRIES: &str =
    "`entries`, --num-dataset-entries, else they follow the requests; requests cycle through them";

/// Why a prompt of `tokens` tokens cannot be made, if it cannot.
pub fn prompt_length_problem(tokens: u64) -> Option<String> {
    (tokens > MAX_PROMPT_TOKENS)
        .then(|| format!("{tokens} tokens is more than a prompt may have here ({MAX_PROMPT_TOKENS})"))
}

impl SyntheticDataset {
    /// Whether the dataset is larger than it may be: a prompt length it can draw or is given,
    /// its entries, its texts a request, or the prompt tokens it would hold.
    pub fn size_problem(&self) -> Option<String> {
        self.prompt_lengths_problem().or_else(|| self.holding_problem())
    }

    /// A prompt length that can exceed what a prompt may have (the ISL's reach, each mix
    /// pair's, a rankings query's or passage's, the shared system prompt, the user context,
    /// the prefixes).
    fn prompt_lengths_problem(&self) -> Option<String> {
        let options = &self.options;
        let rankings = options.rankings.iter().flat_map(|rankings| {
            [("rankings query_tokens", &rankings.query_tokens), ("rankings passage_tokens", &rankings.passage_tokens)]
        });
        let drawn = std::iter::once(("isl", &self.isl))
            .chain(options.mix.iter().map(|pair| ("mix isl", &pair.isl)))
            .chain(rankings);
        for (name, dist) in drawn {
            let longest = dist.reach();
            if longest > MAX_PROMPT_TOKENS as f64 {
                return Some(format!(
                    "{name} draws prompts of up to {longest:.0} tokens, more than a prompt may have here \
                     ({MAX_PROMPT_TOKENS}); lower its mean or spread, or give it a `max`"
                ));
            }
        }
        let fixed = [
            ("system_prompt_tokens", options.system_prompt_tokens),
            ("user_context_tokens", options.user_context_tokens),
            ("prefix_pool length", options.prefix_pool.map(|pool| pool.length)),
        ];
        fixed.into_iter().find_map(|(name, tokens)| {
            tokens.and_then(prompt_length_problem).map(|problem| format!("{name}: {problem}"))
        })
    }

    /// Whether the prompts, made up front, would be more than a dataset may hold: its entries'
    /// turns (each a batch of texts) at their mean length, each conversation's user context,
    /// the prefixes; or a batch larger than a request may carry.
    fn holding_problem(&self) -> Option<String> {
        if self.entries > MAX_DATASET_ENTRIES {
            return Some(format!(
                "{} entries are more than a dataset may have here ({MAX_DATASET_ENTRIES}); give fewer ({FEWER_ENTRIES})",
                self.entries
            ));
        }
        let options = &self.options;
        let batch = options.batch_size.unwrap_or(1);
        if batch > MAX_BATCH_SIZE {
            return Some(format!("batch_size {batch} is more texts than a request may carry here ({MAX_BATCH_SIZE})"));
        }
        let isl = match options.mix.as_slice() {
            [] => self.isl.mean(),
            mix => {
                let total: f64 = mix.iter().map(|pair| pair.weight).sum();
                mix.iter().map(|pair| pair.isl.mean() * pair.weight).sum::<f64>() / total
            }
        };
        let turns = options.conversation.as_ref().map_or(1.0, |shape| shape.turns.mean().max(1.0));
        let context = options.user_context_tokens.unwrap_or(0) as f64;
        let prefixes = options.prefix_pool.map_or(0.0, |pool| pool.prefixes as f64 * pool.length as f64);
        let tokens = self.entries as f64 * (turns * isl * batch as f64 + context) + prefixes;
        (tokens > MAX_DATASET_TOKENS).then(|| {
            let texts = if batch > 1 { format!(" in batches of {batch}") } else { String::new() };
            let held = match options.conversation {
                Some(_) => format!("{} conversations of ~{turns:.1} turns of ~{isl:.0} tokens{texts}", self.entries),
                None => format!("{} prompts of ~{isl:.0} tokens{texts}", self.entries),
            };
            let prefixes = options
                .prefix_pool
                .map(|pool| format!(" and {} prefixes of {}", pool.prefixes, pool.length))
                .unwrap_or_default();
            format!(
                "{held}{prefixes} are ~{tokens:.3e} prompt tokens, more than a dataset may hold here \
                 ({MAX_DATASET_TOKENS:.0}); give fewer entries ({FEWER_ENTRIES}) or fewer prefixes"
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{Dist, PrefixPool};

    fn synthetic(isl: Dist, entries: usize) -> SyntheticDataset {
        SyntheticDataset::new(isl, Dist::fixed(4.0), 1, entries)
    }

    #[test]
    fn a_prompt_length_no_prompt_can_have_is_named() {
        assert_eq!(synthetic(Dist::fixed(MAX_PROMPT_TOKENS as f64), 10).size_problem(), None);
        assert_eq!(
            synthetic(Dist::fixed(1e10), 10).size_problem().unwrap(),
            "isl draws prompts of up to 10000000000 tokens, more than a prompt may have here (16777216); lower its \
             mean or spread, or give it a `max`"
        );
        assert!(synthetic(Dist::normal(100.0, 1e7), 10).size_problem().unwrap().contains("up to 60000100 tokens"));
        let capped = Dist { max: Some(4096.0), ..Dist::normal(100.0, 1e7) };
        assert_eq!(synthetic(capped, 10).size_problem(), None, "a max bounds the draws");
        let mut prefixed = synthetic(Dist::fixed(100.0), 10);
        prefixed.options.prefix_pool = Some(PrefixPool { prefixes: 2, length: 20_000_000 });
        assert_eq!(
            prefixed.size_problem().unwrap(),
            "prefix_pool length: 20000000 tokens is more than a prompt may have here (16777216)"
        );
    }

    #[test]
    fn a_dataset_too_large_to_make_up_front_is_named_with_how_to_make_it_smaller() {
        let prompts = |count| synthetic(Dist::fixed(1000.0), count);
        assert_eq!(prompts(2_000_000).size_problem(), None, "2 G tokens is allowed");
        assert_eq!(
            prompts(3_000_000).size_problem().unwrap(),
            "3000000 prompts of ~1000 tokens are ~3.000e9 prompt tokens, more than a dataset may hold here \
             (2147483648); give fewer entries (`entries`, --num-dataset-entries, else they follow the requests; \
             requests cycle through them) or fewer prefixes"
        );
        assert_eq!(
            synthetic(Dist::fixed(10.0), 20_000_000).size_problem().unwrap(),
            "20000000 entries are more than a dataset may have here (10000000); give fewer (`entries`, \
             --num-dataset-entries, else they follow the requests; requests cycle through them)"
        );
        let mut prefixed = prompts(10);
        prefixed.options.prefix_pool = Some(PrefixPool { prefixes: 1_000_000_000, length: 10 });
        assert!(prefixed.size_problem().unwrap().contains("and 1000000000 prefixes of 10"));
        let mut batched = prompts(1_000);
        batched.options.batch_size = Some(4_000);
        assert!(batched.size_problem().unwrap().contains("1000 prompts of ~1000 tokens in batches of 4000"));
        batched.options.batch_size = Some(100_000);
        assert_eq!(
            batched.size_problem().unwrap(),
            "batch_size 100000 is more texts than a request may carry here (65536)"
        );
    }
}
