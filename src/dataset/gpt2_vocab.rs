//! Loading the embedded GPT-2 `tokenizer.json` straight into its BPE model. The generic
//! `tokenizers::Tokenizer::from_bytes` reads the model through two untyped copies of the
//! whole vocabulary (serde's buffered content, then a `serde_json::Value`) and that took most
//! of the start-up CPU; here the vocabulary and merges are read once, into their final types,
//! and the small fixed parts (GPT-2's byte-level pre-tokenizer, post-processor and decoder,
//! and its one special token) are set as the file declares them.

use serde::Deserialize;
use tokenizers::decoders::DecoderWrapper;
use tokenizers::models::bpe::{BPE, Merges, Vocab};
use tokenizers::pre_tokenizers::PreTokenizerWrapper;
use tokenizers::pre_tokenizers::byte_level::ByteLevel;
use tokenizers::processors::PostProcessorWrapper;
use tokenizers::{AddedToken, Tokenizer};

/// The parts of the file this loader reads; the rest is what `tokenizer` sets.
#[derive(Deserialize)]
struct TokenizerFile {
    model: BpeFile,
}

#[derive(Deserialize)]
struct BpeFile {
    vocab: Vocab,
    merges: Merges,
}

/// GPT-2's end-of-text marker, its only special token.
const END_OF_TEXT: &str = "<|endoftext|>";

/// The tokenizer of `json`, a GPT-2 `tokenizer.json` (byte-level BPE, no normalizer).
pub(super) fn tokenizer(json: &[u8]) -> anyhow::Result<Tokenizer> {
    let file: TokenizerFile = serde_json::from_slice(json)?;
    let model =
        BPE::builder().vocab_and_merges(file.model.vocab, file.model.merges).build().map_err(anyhow::Error::msg)?;
    let mut tokenizer = Tokenizer::new(model);
    tokenizer
        .with_pre_tokenizer(Some(PreTokenizerWrapper::ByteLevel(ByteLevel::new(false, true, true))))
        .with_post_processor(Some(PostProcessorWrapper::ByteLevel(ByteLevel::new(true, false, true))))
        .with_decoder(Some(DecoderWrapper::ByteLevel(ByteLevel::new(true, true, true))));
    tokenizer.add_special_tokens([AddedToken::from(END_OF_TEXT, true)]).map_err(anyhow::Error::msg)?;
    Ok(tokenizer)
}

#[cfg(test)]
mod tests {
    use super::*;

    static GPT2: &[u8] = include_bytes!("../../assets/tokenizers/gpt2.tokenizer.json");

    #[test]
    fn the_direct_load_is_the_same_tokenizer_as_the_generic_one() {
        let direct = tokenizer(GPT2).unwrap();
        let generic = Tokenizer::from_bytes(GPT2).unwrap();
        let as_json = |t: &Tokenizer| serde_json::to_value(t).unwrap();
        assert_eq!(as_json(&direct), as_json(&generic));
        let text = "Hello world! it's <|endoftext|> 42\n\n  naïve";
        let ids = |t: &Tokenizer| t.encode_fast(text, false).unwrap().get_ids().to_vec();
        assert_eq!(ids(&direct), ids(&generic));
        assert_eq!(direct.decode(&ids(&direct), false).unwrap(), generic.decode(&ids(&generic), false).unwrap());
    }
}
