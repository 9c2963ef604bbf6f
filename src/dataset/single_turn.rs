//! Single-turn JSONL: one prompt per line, `{"text": ..}` or `{"texts": [..]}` (joined with a
//! space), with an optional `output_length` (the max tokens asked for) and images (`image` or
//! `images`: paths or URLs, with vLLM cache ids in `image_uuids`). A rankings entry has `query`
//! and `passages` instead of text. Lines that share a `session_id` are the turns of one session
//! (AIPerf's grouping), each after the previous answer and its `delay` (ms).

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use anyhow::{Result, bail};

use super::fields::{Record, json_lines};
use super::image_files::ImageFiles;
use super::image_uuids;
use super::{DatasetEntry, FileTurn, Ranking, tokenizer::Tokenizer};

pub fn parse(path: &Path, text: &str, tokenizer: &Tokenizer) -> Result<Vec<DatasetEntry>> {
    let mut images = ImageFiles::beside(path);
    // Each line's entry with its `session_id`, if it has one.
    let mut lines = Vec::new();
    for (at, object) in json_lines(path, text)? {
        let line = Record::new(&at, &object);
        let mut entry = if line.has("query") || line.has("passages") {
            ranking_entry(&line, tokenizer)?
        } else {
            let prompt = if line.has("texts") && !line.has("text") {
                line.strings("texts")?.join(" ")
            } else {
                line.string("text")?.to_string()
            };
            DatasetEntry::counted(tokenizer, prompt, line.opt_u64("output_length")?)
        };
        (entry.images, entry.image_uuids) = image_uuids::images_and_uuids(&line, &mut images)?;
        let session = if line.has("session_id") { Some(line.string("session_id")?.to_string()) } else { None };
        entry.conversation = session.as_deref().map(Arc::from);
        let delay_ms = line.opt_number("delay")?;
        if delay_ms.is_some_and(|delay| delay < 0.0) {
            bail!("{at}: \"delay\" cannot be negative");
        }
        entry.turn = Some(FileTurn { index: 0, delay_ms, timestamp_ms: None });
        lines.push((session, entry));
    }
    if lines.iter().all(|(session, _)| session.is_none()) {
        return Ok(lines.into_iter().map(|(_, entry)| DatasetEntry { turn: None, ..entry }).collect());
    }
    Ok(sessions(lines))
}

/// Lines that share a `session_id` as the turns of one session (AIPerf's grouping), the
/// sessions in the order their first lines come; a line without one is a session of its own.
fn sessions(lines: Vec<(Option<String>, DatasetEntry)>) -> Vec<DatasetEntry> {
    let mut sessions: Vec<Vec<DatasetEntry>> = Vec::new();
    let mut by_id: HashMap<String, usize> = HashMap::new();
    for (session, entry) in lines {
        let place = match session {
            Some(id) => *by_id.entry(id).or_insert_with(|| {
                sessions.push(Vec::new());
                sessions.len() - 1
            }),
            None => {
                sessions.push(Vec::new());
                sessions.len() - 1
            }
        };
        sessions[place].push(entry);
    }
    for session in &mut sessions {
        for (index, entry) in session.iter_mut().enumerate() {
            if let Some(turn) = &mut entry.turn {
                turn.index = index as u32;
            }
        }
    }
    sessions.into_iter().flatten().collect()
}

/// An entry of `query` and `passages` (at least one) for a rankings endpoint. Its prompt joins
/// them with spaces; its input tokens are the query's and each passage's, counted apart.
fn ranking_entry(line: &Record<'_>, tokenizer: &Tokenizer) -> Result<DatasetEntry> {
    if line.has("text") || line.has("texts") {
        bail!("{}: give either \"text\" or \"query\" and \"passages\", not both", line.at);
    }
    let query = line.string("query")?.to_string();
    let passages: Vec<String> = line.strings("passages")?.into_iter().map(str::to_string).collect();
    if passages.is_empty() {
        bail!("{}: \"passages\" is empty; a query needs at least one passage to rank", line.at);
    }
    let input_tokens = std::iter::once(&query).chain(&passages).map(|text| tokenizer.count(text) as u64).sum();
    Ok(DatasetEntry {
        prompt: format!("{query} {}", passages.join(" ")),
        input_tokens,
        max_tokens: None,
        system_prompt: None,
        user_context: None,
        turn: None,
        images: Vec::new(),
        image_uuids: Vec::new(),
        audio: Vec::new(),
        videos: Vec::new(),
        ranking: Some(Ranking { query, passages }),
        batch: Vec::new(),
        trace: None,
        own_body: None,
        messages: None,
        conversation: None,
        file_place: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::test_fixture;

    #[test]
    fn each_line_is_an_entry_with_its_output_length() {
        let tokenizer = Tokenizer::shared_builtin();
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
    fn rankings_entries_keep_their_query_and_passages_and_text_entries_their_images() {
        let tokenizer = Tokenizer::shared_builtin();
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("cat.png"), b"png").unwrap();
        let path = dir.path().join("mixed.jsonl");
        let text = r#"{"query": "what is rust", "passages": ["a language", "a red mineral"]}
{"text": "describe it", "image": "cat.png", "output_length": 9}"#;
        let entries = parse(&path, text, &tokenizer).unwrap();
        let ranking = entries[0].ranking.as_ref().unwrap();
        assert_eq!(
            (ranking.query.as_str(), ranking.passages.as_slice()),
            ("what is rust", &["a language".to_string(), "a red mineral".to_string()][..])
        );
        assert_eq!(entries[0].prompt, "what is rust a language a red mineral");
        // GPT-2: what| is| rust + a| language + a| red| mineral, each counted on its own.
        assert_eq!(entries[0].input_tokens, 3 + 2 + 3);
        assert_eq!((entries[0].max_tokens, entries[0].images.len()), (None, 0));
        assert_eq!(entries[1].ranking, None);
        assert_eq!(entries[1].images, ["data:image/png;base64,cG5n"]);
        assert_eq!(entries[1].max_tokens, Some(9));

        let error = |line: &str| parse(&path, line, &tokenizer).unwrap_err().to_string();
        assert!(error(r#"{"query": "q"}"#).ends_with("mixed.jsonl:1: missing \"passages\""));
        assert!(error(r#"{"passages": ["p"]}"#).ends_with(":1: missing \"query\""));
        assert!(error(r#"{"query": "q", "passages": []}"#).contains(":1: \"passages\" is empty"));
        assert!(error(r#"{"query": "q", "passages": ["p"], "text": "t"}"#).contains("give either \"text\" or"));
        assert!(error(r#"{"query": "q", "passages": [1]}"#).contains("\"passages\" must be an array of strings"));
        assert!(error(r#"{"text": "t", "image": "dog.png"}"#).contains(":1: cannot read image"));
    }

    #[test]
    fn lines_that_share_a_session_id_are_the_turns_of_one_session() {
        let tokenizer = Tokenizer::shared_builtin();
        let path = Path::new("sessions.jsonl");
        let text = r#"{"session_id": "a", "text": "a1"}
{"session_id": "b", "text": "b1"}
{"text": "alone"}
{"session_id": "a", "text": "a2", "delay": 250}"#;
        let entries = parse(path, text, &tokenizer).unwrap();
        let turns: Vec<(&str, u32, Option<f64>)> = entries
            .iter()
            .map(|entry| {
                let turn = entry.turn.unwrap();
                (entry.prompt.as_str(), turn.index, turn.delay_ms)
            })
            .collect();
        assert_eq!(turns, [("a1", 0, None), ("a2", 1, Some(250.0)), ("b1", 0, None), ("alone", 0, None)]);
        let plain = parse(path, "{\"text\": \"x\"}\n{\"text\": \"y\", \"delay\": 5}", &tokenizer).unwrap();
        assert!(plain.iter().all(|entry| entry.turn.is_none()), "no session ids: prompts of their own");
        let error = parse(path, "{\"text\": \"x\", \"delay\": -1}", &tokenizer).unwrap_err().to_string();
        assert!(error.ends_with("sessions.jsonl:1: \"delay\" cannot be negative"), "{error}");
    }

    #[test]
    fn a_bad_line_is_named() {
        let tokenizer = Tokenizer::shared_builtin();
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
