//! ShareGPT JSON: an array of `{"conversations": [{"from": "human"|"gpt", "value": ..}]}`.
//! The first human turn is the prompt; the token count of the gpt answer that follows it is
//! the output length (none without an answer). A conversation with no human turn is skipped.

use std::path::Path;

use anyhow::{Result, anyhow, bail};
use serde_json::Value;
use serde_json::value::RawValue;

use super::fields::Record;
use super::{DatasetEntry, tokenizer::Tokenizer};

pub fn parse(path: &Path, text: &str, tokenizer: &Tokenizer) -> Result<Vec<DatasetEntry>> {
    let items: Vec<&RawValue> = serde_json::from_str(text)
        .map_err(|e| anyhow!("{}:{}: not a JSON array of conversations: {e}", path.display(), e.line()))?;
    let mut entries = Vec::new();
    for item in items {
        let at = format!("{}:{}", path.display(), line_of(text, item.get()));
        let object = match serde_json::from_str::<Value>(item.get()) {
            Ok(Value::Object(object)) => object,
            _ => bail!("{at}: expected a conversation object, got `{}`", item.get()),
        };
        if let Some(entry) = conversation_entry(&Record::new(&at, &object), tokenizer)? {
            entries.push(entry);
        }
    }
    Ok(entries)
}

/// The entry of one conversation: its first human turn and the answer's length.
fn conversation_entry(conversation: &Record<'_>, tokenizer: &Tokenizer) -> Result<Option<DatasetEntry>> {
    let mut turns = Vec::new();
    for turn in conversation.objects("conversations")? {
        turns.push((turn.string("from")?, turn.string("value")?));
    }
    let Some(human) = turns.iter().position(|(from, _)| *from == "human") else { return Ok(None) };
    let answer = turns[human + 1..].iter().find(|(from, _)| *from == "gpt");
    let max_tokens = answer.map(|(_, value)| tokenizer.count(value) as u64);
    Ok(Some(DatasetEntry::counted(tokenizer, turns[human].1.to_string(), max_tokens)))
}

/// The line (from 1) where `part`, a slice of `text`, starts.
fn line_of(text: &str, part: &str) -> usize {
    let offset = (part.as_ptr() as usize).saturating_sub(text.as_ptr() as usize).min(text.len());
    text[..offset].matches('\n').count() + 1
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::test_fixture;
    use serde_json::Map;

    fn conversation(turns: &[(&str, &str)]) -> Map<String, Value> {
        let turns = turns.iter().map(|(from, value)| serde_json::json!({"from": from, "value": value})).collect();
        let mut object = Map::new();
        object.insert("conversations".into(), Value::Array(turns));
        object
    }

    #[test]
    fn the_first_human_turn_is_the_prompt_and_the_answer_sets_the_output_length() {
        let tokenizer = Tokenizer::shared_builtin();
        let (path, text) = test_fixture("sharegpt.json");
        let entries = parse(&path, &text, &tokenizer).unwrap();
        let prompts: Vec<&str> = entries.iter().map(|e| e.prompt.as_str()).collect();
        assert_eq!(prompts, ["Why is the sky blue?", "Say nothing.", "Count to three."]);
        let answer = "Sunlight scatters off the air, and blue light scatters the most.";
        assert_eq!(entries[0].max_tokens, Some(tokenizer.count(answer) as u64));
        assert_eq!(entries[1].max_tokens, None, "no answer, no output length");
        assert_eq!(entries[2].max_tokens, Some(tokenizer.count("One, two, three.") as u64));
        assert_eq!(entries[0].input_tokens as usize, tokenizer.count("Why is the sky blue?"));
    }

    #[test]
    fn a_conversation_without_a_human_turn_is_skipped() {
        let tokenizer = Tokenizer::shared_builtin();
        let only_gpt = conversation(&[("gpt", "Hi")]);
        assert_eq!(conversation_entry(&Record::new("x:1", &only_gpt), &tokenizer).unwrap(), None);
    }

    #[test]
    fn a_bad_conversation_names_the_line_it_starts_on() {
        let tokenizer = Tokenizer::shared_builtin();
        let (path, text) = test_fixture("sharegpt_broken.json");
        let err = parse(&path, &text, &tokenizer).unwrap_err().to_string();
        assert!(
            err.ends_with("sharegpt_broken.json:8: conversations[0]: \"value\" must be a string, got `42`"),
            "{err}"
        );

        let err = parse(&path, "[\n {\"conversations\": []},\n {\"id\": 1}\n]", &tokenizer).unwrap_err().to_string();
        assert!(err.ends_with(":3: missing \"conversations\""), "{err}");
        let err = parse(&path, "[\n {\"conversations\": [}\n]", &tokenizer).unwrap_err().to_string();
        assert!(err.contains("sharegpt_broken.json:2: not a JSON array"), "{err}");
    }
}
