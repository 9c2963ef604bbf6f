//! Datasets: what is sent. Synthetic prompts cut from an embedded corpus, and the tokenizer
//! that counts them.

pub mod corpus;
pub mod synthetic;
pub mod tokenizer;

use crate::plan::Dataset;
use tokenizer::Tokenizer;

/// One prompt ready to send.
#[derive(Debug, Clone, PartialEq)]
pub struct DatasetEntry {
    pub prompt: String,
    /// Tokens in `prompt` under the run's tokenizer.
    pub input_tokens: u64,
    /// The output length to ask for.
    pub max_tokens: Option<u64>,
}

/// Build every entry of `dataset` (before the run, off the hot path).
pub fn build(dataset: &Dataset, tokenizer: &Tokenizer) -> Vec<DatasetEntry> {
    match dataset {
        Dataset::Synthetic(spec) => synthetic::generate(spec, tokenizer),
    }
}
