//! Counting tokens under a Hugging Face pipeline without building an encoding: the pipeline's
//! own steps up to its pre-tokens (added tokens split off, the normalizer, the pre-tokenizer),
//! then each pre-token's count from the model, remembered (`word_memo`). A whole encode also
//! builds ids, token strings, offsets and masks and runs the post-processor (which adds
//! nothing without special tokens); the count is the same by construction. A pipeline that
//! truncates is left to the whole encode.

use tokenizers::{Model, OffsetReferential, OffsetType, PreTokenizer};

use super::word_memo::WordMemo;

/// Tokens in `text` under `pipeline` without special tokens, its pre-tokens' counts kept in
/// `memo`; None where only a whole encode gives the count (the pipeline truncates, or a step
/// failed).
pub(super) fn count(pipeline: &tokenizers::Tokenizer, text: &str, memo: &WordMemo) -> Option<usize> {
    if pipeline.get_truncation().is_some() {
        return None;
    }
    let mut pre_tokens = pipeline.get_added_vocabulary().extract_and_normalize(pipeline.get_normalizer(), text);
    if let Some(pre_tokenizer) = pipeline.get_pre_tokenizer() {
        pre_tokenizer.pre_tokenize(&mut pre_tokens).ok()?;
    }
    let splits = pre_tokens.get_splits(OffsetReferential::Normalized, OffsetType::None);
    // Added tokens come out of the first step already matched.
    let added: usize = splits.iter().filter_map(|(_, _, tokens)| tokens.as_ref().map(Vec::len)).sum();
    let words = splits.iter().filter(|(_, _, tokens)| tokens.is_none()).map(|(word, _, _)| *word);
    let model = pipeline.get_model();
    Some(added + memo.sum(words, |word| model.tokenize(word).ok().map(|tokens| tokens.len()))?)
}
