//! Single-turn JSONL: one prompt per line, `{"text": ..}` or `{"texts": [..]}` (joined with a
//! space), with an optional `output_length` (the max tokens asked for).

use std::path::Path;

use anyhow::Result;

use super::fields::{Record, json_lines};
use super::{DatasetEntry, tokenizer::Tokenizer};

pub fn parse(path: &Path, text: &str, tokenizer: &Tokenizer) -> Result<Vec<DatasetEntry>> {
    let mut entries = Vec::new();
    for (at, object) in json_lines(path, text)? {
        let line = Record::new(&at, &object);
        let prompt = if line.has("texts") && !line.has("text") {
            line.strings("texts")?.join(" ")
        } else {
            line.string("text")?.to_string()
        };
        entries.push(DatasetEntry::counted(tokenizer, prompt, line.opt_u64("output_length")?));
    }
    Ok(entries)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::test_fixture;

    #[test]
    fn each_line_is_an_entry_with_its_output_length() {
        let tokenizer = Tokenizer::shared_builtin().unwrap();
        let (path, text) = test_fixture("single_turn.jsonl");
        let entries = parse(&path, &text, &tokenizer).unwrap();
        let prompts: Vec<&str> = entries.iter().map(|e| e.prompt.as_str()).collect();
        assert_eq!(
            prompts,
            [
                "What is the capital of France?",
                "Summarize this: The quick brown fox jumps over the lazy dog.",
                "Write a haiku about the sea."
            ]
        );
        assert_eq!(entries.iter().map(|e| e.max_tokens).collect::<Vec<_>>(), [Some(12), None, Some(20)]);
        // GPT-2: What| is| the| capital| of| France|?
        assert_eq!(entries[0].input_tokens, 7);
        for entry in &entries {
            assert_eq!(entry.input_tokens as usize, tokenizer.count(&entry.prompt));
        }
    }

    #[test]
    fn a_bad_line_is_named() {
        let tokenizer = Tokenizer::shared_builtin().unwrap();
        let (path, text) = test_fixture("single_turn_broken.jsonl");
        let err = parse(&path, &text, &tokenizer).unwrap_err().to_string();
        assert!(err.ends_with("single_turn_broken.jsonl:3: missing \"text\""), "{err}");

        let err = parse(&path, "{\"text\": 5}\n", &tokenizer).unwrap_err().to_string();
        assert!(err.contains(":1: \"text\" must be a string, got `5`"), "{err}");
        let err = parse(&path, "\n{\"text\": \"a\", \"output_length\": -3}\n", &tokenizer).unwrap_err().to_string();
        assert!(err.contains(":2: \"output_length\" must be a whole number"), "{err}");
        let err = parse(&path, "{\"text\": \"a\"\n", &tokenizer).unwrap_err().to_string();
        assert!(err.contains(":1: invalid JSON"), "{err}");
    }
}
