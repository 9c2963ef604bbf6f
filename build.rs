//! Build step: the builtin tokenizer's GPT-2 BPE tables (`src/dataset/gpt2_bpe.rs`), derived
//! once here from the embedded `tokenizer.json`. Resolving its 50,000 merges to ids means
//! 150,000 string lookups in a 50,257-entry vocabulary; done at start-up, that was most of
//! the time before a run's first request. Four little-endian files go to `OUT_DIR`:
//! - `gpt2_merges.bin`: per merge, in rank order, the left, right and merged token ids (u32);
//! - `gpt2_byte_ids.bin`: per byte value, the id of the one-byte token (u32);
//! - `gpt2_token_bytes.bin` and `gpt2_token_ends.bin`: every token's bytes (the byte-level
//!   alphabet read back), one after the other, and where each token's bytes end (u32).

use std::collections::HashMap;
use std::path::Path;

#[path = "src/dataset/byte_level_alphabet.rs"]
mod byte_level_alphabet;

const SOURCE: &str = "assets/tokenizers/gpt2.tokenizer.json";

fn main() {
    println!("cargo::rerun-if-changed={SOURCE}");
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-changed=src/dataset/byte_level_alphabet.rs");
    let text = std::fs::read(SOURCE).unwrap_or_else(|e| panic!("cannot read {SOURCE}: {e}"));
    let json: serde_json::Value = serde_json::from_slice(&text).unwrap_or_else(|e| panic!("{SOURCE}: {e}"));
    let model = &json["model"];

    let vocab: HashMap<&str, u32> = model["vocab"]
        .as_object()
        .unwrap_or_else(|| panic!("{SOURCE}: model.vocab is not an object"))
        .iter()
        .map(|(token, id)| {
            let id = id.as_u64().and_then(|id| u32::try_from(id).ok());
            (token.as_str(), id.unwrap_or_else(|| panic!("{SOURCE}: the id of {token:?} is not a u32")))
        })
        .collect();
    let mut by_id = vec![None; vocab.len()];
    for (&token, &id) in &vocab {
        let slot = by_id.get_mut(id as usize).unwrap_or_else(|| panic!("{SOURCE}: ids are not 0..{}", vocab.len()));
        *slot = Some(token);
    }
    let id_of =
        |token: &str| *vocab.get(token).unwrap_or_else(|| panic!("{SOURCE}: {token:?} is not in the vocabulary"));

    let alphabet = byte_level_alphabet::ALPHABET;
    let byte_of: HashMap<char, u8> = alphabet.iter().enumerate().map(|(byte, &c)| (c, byte as u8)).collect();

    let mut merges = Vec::new();
    for merge in model["merges"].as_array().unwrap_or_else(|| panic!("{SOURCE}: model.merges is not a list")) {
        let pair: Vec<&str> = match merge {
            serde_json::Value::Array(parts) => parts.iter().filter_map(serde_json::Value::as_str).collect(),
            serde_json::Value::String(spaced) => spaced.split(' ').collect(),
            other => panic!("{SOURCE}: merge {other} is neither a pair nor \"a b\""),
        };
        let [left, right] = pair[..] else { panic!("{SOURCE}: merge {merge} is not a pair") };
        for id in [id_of(left), id_of(right), id_of(&format!("{left}{right}"))] {
            merges.extend_from_slice(&id.to_le_bytes());
        }
    }

    let byte_ids: Vec<u8> = alphabet.iter().flat_map(|c| id_of(&c.to_string()).to_le_bytes()).collect();

    // A token's bytes as the byte-level decoder gives them back: each character's byte, or the
    // token's own UTF-8 where a character is not in the alphabet (the decoder does the same).
    let (mut token_bytes, mut token_ends) = (Vec::new(), Vec::new());
    for (id, token) in by_id.iter().enumerate() {
        let token = token.unwrap_or_else(|| panic!("{SOURCE}: no token has id {id}"));
        match token.chars().map(|c| byte_of.get(&c).copied()).collect::<Option<Vec<u8>>>() {
            Some(bytes) => token_bytes.extend_from_slice(&bytes),
            None => token_bytes.extend_from_slice(token.as_bytes()),
        }
        token_ends.extend_from_slice(&(token_bytes.len() as u32).to_le_bytes());
    }

    let out_dir = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    for (name, bytes) in [
        ("gpt2_merges.bin", &merges),
        ("gpt2_byte_ids.bin", &byte_ids),
        ("gpt2_token_bytes.bin", &token_bytes),
        ("gpt2_token_ends.bin", &token_ends),
    ] {
        let path = Path::new(&out_dir).join(name);
        std::fs::write(&path, bytes).unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
    }
}
