//! Datasets: what is sent. Synthetic prompts cut from an embedded corpus, dataset files
//! (single-turn, multi-turn, mooncake traces, ShareGPT) in the order their sampling gives,
//! and the tokenizer that counts them.

pub mod corpus;
mod fields;
mod file;
mod image_png;
pub mod images;
mod mooncake;
mod multi_turn;
mod sampling;
mod sharegpt;
mod single_turn;
pub mod synthetic;
pub mod tokenizer;
pub mod tokenizer_hub;

use anyhow::Result;

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

impl DatasetEntry {
    /// An entry for `prompt`, its tokens counted with `tokenizer`.
    pub fn counted(tokenizer: &Tokenizer, prompt: String, max_tokens: Option<u64>) -> Self {
        let input_tokens = tokenizer.count(&prompt) as u64;
        Self { prompt, input_tokens, max_tokens }
    }
}

/// Build every entry of `dataset` (before the run, off the hot path). A dataset file that
/// cannot be read or has a bad line is an error naming the file (and line).
pub fn build(dataset: &Dataset, tokenizer: &Tokenizer) -> Result<Vec<DatasetEntry>> {
    match dataset {
        Dataset::Synthetic(spec) => Ok(synthetic::generate(spec, tokenizer)),
        Dataset::File(spec) => file::load(spec, tokenizer),
    }
}

/// A fixture of `tests/fixtures/datasets/`: its path and its text.
#[cfg(test)]
fn test_fixture(name: &str) -> (std::path::PathBuf, String) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/datasets").join(name);
    let text = fields::read(&path).unwrap();
    (path, text)
}
