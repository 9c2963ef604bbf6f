//! ShareGPT JSON: an array of `{"conversations": [{"from": "human"|"gpt", "value": ..}]}`, read
//! as AIPerf 0.13's ShareGPT loader reads it. Each human message answered by the gpt message
//! right after it is a turn of the conversation's session (other roles are passed over; a list
//! without roles is one turn of its first two values), the answer's tokens its output length.
//! A conversation any of whose turns fails vLLM's length filter (a prompt of 4 to 1,024 tokens,
//! an answer of at least 4 unless an output length is asked for, 2,048 together) is skipped
//! whole, as is one without a turn.

use std::path::Path;

use anyhow::{Result, anyhow, bail};
use serde_json::Value;
use serde_json::value::RawValue;

use super::fields::Record;
use super::{DatasetEntry, FileTurn, tokenizer::Tokenizer};

/// The shortest prompt (and, unless an output length is asked for, answer) kept, in tokens.
const MIN_SEQUENCE_TOKENS: usize = 4;
/// The longest prompt kept, in tokens.
const MAX_PROMPT_TOKENS: usize = 1024;
/// The longest prompt and answer kept together, in tokens.
const MAX_TOTAL_TOKENS: usize = 2048;

/// The turns of every conversation of the file that passes the length filter, in file order;
/// `output_length_asked`: the run asks for its own output length (`--osl`), so a short answer
/// does not fail the filter (each turn still asks for its answer's length).
pub fn parse(path: &Path, text: &str, tokenizer: &Tokenizer, output_length_asked: bool) -> Result<Vec<DatasetEntry>> {
    let items: Vec<&RawValue> = serde_json::from_str(text)
        .map_err(|e| anyhow!("{}:{}: not a JSON array of conversations: {e}", path.display(), e.line()))?;
    let filter = LengthFilter { output_length_asked };
    let mut entries = Vec::new();
    let mut lines = Lines { text, counted_to: 0, line: 1 };
    for item in &items {
        let at = format!("{}:{}", path.display(), lines.of(item.get()));
        let object = match serde_json::from_str::<Value>(item.get()) {
            Ok(Value::Object(object)) => object,
            _ => bail!("{at}: expected a conversation object, got `{}`", item.get()),
        };
        let pairs = prompt_answer_pairs(&Record::new(&at, &object))?;
        if let Some(turns) = filter.counted(&pairs, tokenizer) {
            entries.extend(turns);
        }
    }
    if entries.is_empty() && !items.is_empty() {
        bail!(
            "{}: none of its {} conversations has a human message answered by a gpt one within the length \
             filter AIPerf and vLLM apply (a prompt of {MIN_SEQUENCE_TOKENS} to {MAX_PROMPT_TOKENS} tokens, an \
             answer of at least {MIN_SEQUENCE_TOKENS} unless an output length is asked for, {MAX_TOTAL_TOKENS} \
             together)",
            path.display(),
            items.len()
        );
    }
    Ok(entries)
}

/// The (prompt, answer) pairs of one conversation, as AIPerf pairs them.
fn prompt_answer_pairs<'a>(conversation: &Record<'a>) -> Result<Vec<(&'a str, &'a str)>> {
    let messages = conversation.array("conversations")?;
    let messages: Vec<Record<'a>> = messages
        .iter()
        .enumerate()
        .filter_map(|(index, message)| {
            message
                .as_object()
                .map(|object| Record::new(&format!("{}: conversations[{index}]", conversation.at()), object))
        })
        .collect();
    if messages.len() < 2 {
        return Ok(Vec::new());
    }
    let role =
        |message: &Record<'a>| message.opt_str("from").ok().flatten().filter(|from| matches!(*from, "human" | "gpt"));
    if !messages.iter().any(|message| role(message).is_some()) {
        return Ok(answered(messages[0].opt_str("value")?, messages[1].opt_str("value")?).into_iter().collect());
    }
    let spoken: Vec<(&str, &Record<'a>)> =
        messages.iter().filter_map(|message| role(message).map(|from| (from, message))).collect();
    let mut pairs = Vec::new();
    let mut index = 0;
    while index + 1 < spoken.len() {
        let ((from, message), (next_from, next)) = (spoken[index], spoken[index + 1]);
        if from == "human" && next_from == "gpt" {
            pairs.extend(answered(message.opt_str("value")?, next.opt_str("value")?));
            index += 2;
        } else {
            index += 1;
        }
    }
    Ok(pairs)
}

/// A prompt and its answer when both say something (AIPerf passes over an empty one).
fn answered<'a>(prompt: Option<&'a str>, answer: Option<&'a str>) -> Option<(&'a str, &'a str)> {
    prompt.zip(answer).filter(|(prompt, answer)| !prompt.is_empty() && !answer.is_empty())
}

/// vLLM's (and AIPerf's) filter on a turn's prompt and answer lengths.
struct LengthFilter {
    output_length_asked: bool,
}

impl LengthFilter {
    fn keeps(&self, prompt_tokens: usize, answer_tokens: usize) -> bool {
        let answer_long_enough = self.output_length_asked || answer_tokens >= MIN_SEQUENCE_TOKENS;
        (MIN_SEQUENCE_TOKENS..=MAX_PROMPT_TOKENS).contains(&prompt_tokens)
            && answer_long_enough
            && prompt_tokens + answer_tokens <= MAX_TOTAL_TOKENS
    }

    /// The turns of a conversation of `pairs`, or `None` when it has none or one fails.
    fn counted(&self, pairs: &[(&str, &str)], tokenizer: &Tokenizer) -> Option<Vec<DatasetEntry>> {
        let mut turns = Vec::with_capacity(pairs.len());
        for (index, (prompt, answer)) in pairs.iter().enumerate() {
            let answer_tokens = tokenizer.count(answer);
            let mut turn = DatasetEntry::counted(tokenizer, prompt.to_string(), Some(answer_tokens as u64));
            if !self.keeps(turn.input_tokens as usize, answer_tokens) {
                return None;
            }
            turn.turn = Some(FileTurn { index: index as u32, delay_ms: None, timestamp_ms: None });
            turns.push(turn);
        }
        (!turns.is_empty()).then_some(turns)
    }
}

/// The lines of `text` counted up to the slices of it asked about, in order.
struct Lines<'a> {
    text: &'a str,
    counted_to: usize,
    line: usize,
}

impl Lines<'_> {
    /// The line (from 1) where `part`, a slice of the text after the last one asked about,
    /// starts (the text is read once however many parts are asked about).
    fn of(&mut self, part: &str) -> usize {
        let offset = (part.as_ptr() as usize).saturating_sub(self.text.as_ptr() as usize).min(self.text.len());
        let offset = offset.max(self.counted_to);
        self.line += self.text.as_bytes()[self.counted_to..offset].iter().filter(|byte| **byte == b'\n').count();
        self.counted_to = offset;
        self.line
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::test_fixture;

    fn sessions(entries: &[DatasetEntry]) -> Vec<Vec<&str>> {
        let mut sessions: Vec<Vec<&str>> = Vec::new();
        for entry in entries {
            match entry.turn {
                Some(FileTurn { index: 0, .. }) | None => sessions.push(vec![entry.prompt.as_str()]),
                Some(_) => sessions.last_mut().expect("a session").push(entry.prompt.as_str()),
            }
        }
        sessions
    }

    /// The conversations AIPerf 0.13 kept of this file (`--public-dataset sharegpt`, run beside
    /// this reader): its `inputs.json` held these sessions, each turn asking for its answer's
    /// GPT-2 tokens (16 and 14, 10, 9, 8, 10).
    #[test]
    fn every_answered_human_message_is_a_turn_and_the_length_filter_drops_whole_conversations() {
        let tokenizer = Tokenizer::shared_builtin();
        let (path, text) = test_fixture("sharegpt.json");
        let entries = parse(&path, &text, &tokenizer, false).unwrap();
        assert_eq!(
            sessions(&entries),
            [
                vec!["Why is the sky blue today?", "And why are sunsets red then?"],
                vec!["Count to three for me please."],
                vec!["Second question that does get one."],
                vec!["A prompt without any role names given."],
                vec!["What is two plus two, exactly?"],
            ]
        );
        let answers: Vec<Option<u64>> = entries.iter().map(|entry| entry.max_tokens).collect();
        assert_eq!(answers, [Some(16), Some(14), Some(10), Some(9), Some(8), Some(10)]);
        assert_eq!(entries[1].input_tokens as usize, tokenizer.count("And why are sunsets red then?"));
    }

    #[test]
    fn an_output_length_asked_for_keeps_short_answers() {
        let tokenizer = Tokenizer::shared_builtin();
        let (path, text) = test_fixture("sharegpt.json");
        let entries = parse(&path, &text, &tokenizer, true).unwrap();
        let prompts: Vec<&str> = entries.iter().map(|entry| entry.prompt.as_str()).collect();
        assert!(prompts.contains(&"Say nothing at all please."), "{prompts:?}");
        assert!(!prompts.contains(&"Tell me a joke about cats."), "a 1-token prompt still drops its conversation");
        assert!(!prompts.contains(&"Hi") && !prompts.iter().any(|prompt| prompt.starts_with("word word")));
    }

    #[test]
    fn the_filter_holds_vllms_bounds() {
        let filter = LengthFilter { output_length_asked: false };
        assert!(filter.keeps(4, 4) && filter.keeps(1024, 1024));
        assert!(!filter.keeps(3, 100) && !filter.keeps(1025, 4) && !filter.keeps(100, 3) && !filter.keeps(1024, 1025));
        assert!(LengthFilter { output_length_asked: true }.keeps(4, 0));
    }

    #[test]
    fn a_bad_conversation_names_the_line_it_starts_on() {
        let tokenizer = Tokenizer::shared_builtin();
        let (path, text) = test_fixture("sharegpt_broken.json");
        let err = parse(&path, &text, &tokenizer, false).unwrap_err().to_string();
        assert!(
            err.ends_with("sharegpt_broken.json:8: conversations[0]: \"value\" must be a string, got `42`"),
            "{err}"
        );

        let err =
            parse(&path, "[\n {\"conversations\": []},\n {\"id\": 1}\n]", &tokenizer, false).unwrap_err().to_string();
        assert!(err.ends_with(":3: missing \"conversations\""), "{err}");
        let err = parse(&path, "[\n {\"conversations\": [}\n]", &tokenizer, false).unwrap_err().to_string();
        assert!(err.contains("sharegpt_broken.json:2: not a JSON array"), "{err}");
        let short =
            r#"[{"conversations": [{"from": "human", "value": "Hi there"}, {"from": "gpt", "value": "Hello"}]}]"#;
        let err = parse(&path, short, &tokenizer, false).unwrap_err().to_string();
        assert!(err.contains("none of its 1 conversations") && err.contains("a prompt of 4 to 1024 tokens"), "{err}");
    }
}
