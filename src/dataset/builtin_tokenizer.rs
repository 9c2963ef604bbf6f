//! The builtin tokenizer's Hugging Face pipeline (GPT-2's BPE), for the text its own tables
//! (`gpt2_bpe`) do not take: non-ASCII text, or text holding the special token. It is
//! assembled from the embedded `tokenizer.json`'s vocabulary and merges, with the file's
//! pipeline (byte-level pre-tokenizer, post-processor and decoder; `<|endoftext|>` as the
//! special token) set here in code: the generic loader reads a model through untyped JSON
//! values and copies it twice, while reading the two typed lists directly (the two at once)
//! is several times faster. A test checks that both loaders give a tokenizer that serializes
//! to the same JSON.

use anyhow::{Result, anyhow};
use serde::de::DeserializeOwned;
use tokenizers::models::bpe::{BPE, Merges, Vocab};
use tokenizers::pre_tokenizers::byte_level::ByteLevel;
use tokenizers::{AddedToken, Tokenizer};

/// The file: GPT-2's tokenizer.json as Hugging Face publishes it.
static GPT2_JSON: &[u8] = include_bytes!("../../assets/tokenizers/gpt2.tokenizer.json");

/// GPT-2's one special token (id 50256, already in the vocabulary).
pub(super) const END_OF_TEXT: &str = "<|endoftext|>";
pub(super) const END_OF_TEXT_ID: u32 = 50_256;
/// GPT-2's vocabulary: ids 0 to 50256.
pub(super) const VOCAB_SIZE: u32 = 50_257;

/// The typed value that starts right after `"key":` in the file; the rest of the file is not
/// read (each key occurs once in it).
fn member<T: DeserializeOwned>(key: &str) -> Result<T> {
    let quoted = format!("\"{key}\":");
    let start = memchr::memmem::find(GPT2_JSON, quoted.as_bytes())
        .ok_or_else(|| anyhow!("the embedded tokenizer has no \"{key}\""))?;
    let mut json = serde_json::Deserializer::from_slice(&GPT2_JSON[start + quoted.len()..]);
    T::deserialize(&mut json).map_err(|e| anyhow!("the embedded tokenizer's \"{key}\": {e}"))
}

pub(super) fn load() -> Result<Tokenizer> {
    // The merges are two thirds of the file: read on a thread of their own beside the vocabulary.
    let (vocab, merges) = std::thread::scope(|scope| {
        let merges = scope.spawn(|| member::<Merges>("merges"));
        let vocab = member::<Vocab>("vocab");
        (vocab, merges.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
    });
    let model = BPE::builder().vocab_and_merges(vocab?, merges?).build().map_err(|e| anyhow!("{e}"))?;
    let mut tokenizer = Tokenizer::new(model);
    // As the file says: add_prefix_space, trim_offsets, use_regex for each byte-level step.
    tokenizer
        .with_pre_tokenizer(Some(ByteLevel::new(false, true, true)))
        .with_post_processor(Some(ByteLevel::new(true, false, true)))
        .with_decoder(Some(ByteLevel::new(true, true, true)));
    tokenizer.add_special_tokens([AddedToken::from(END_OF_TEXT, true)]).map_err(|e| anyhow!("{e}"))?;
    Ok(tokenizer)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gives_the_tokenizer_the_generic_loader_reads_from_the_same_file() {
        let generic = Tokenizer::from_bytes(GPT2_JSON).unwrap();
        let assembled = load().unwrap();
        assert_eq!(assembled.to_string(false).unwrap(), generic.to_string(false).unwrap());
        let text = "Hello world! <|endoftext|> Ünïcödé, tabs\tand  spaces\n\nend";
        let ids = assembled.encode_fast(text, false).unwrap().get_ids().to_vec();
        assert_eq!(ids, generic.encode_fast(text, false).unwrap().get_ids());
        assert!(ids.contains(&50256), "the special token is one id: {ids:?}");
        assert_eq!(assembled.decode(&ids, false).unwrap(), generic.decode(&ids, false).unwrap());
    }
}
