//! Multi-turn JSONL: a session per line, `{"session_id"?, "turns": [{"text", "output_length"?,
//! "delay"? (ms), "timestamp"? (ms), "image"? or "images"?}]}`. Each turn is an entry that knows
//! its place in its session; every phase replays the sessions with their history and delays. A
//! turn's images are named as in single-turn files (paths relative to the file, or URLs). A
//! session may name the session that spawned it (`parent_session_id`, with `spawned_after_turn`
//! and `joined_at_turn`): the sessions then form an agentic trace's trees (agentic replay).

use std::path::Path;
use std::sync::Arc;

use anyhow::{Result, bail};

use super::fields::{Record, json_lines};
use super::image_files::ImageFiles;
use super::image_uuids;
use super::trace_links::{TraceLink, attach_sessions};
use super::{DatasetEntry, FileTurn, tokenizer::Tokenizer};

pub fn parse(path: &Path, text: &str, tokenizer: &Tokenizer) -> Result<Vec<DatasetEntry>> {
    let mut images = ImageFiles::beside(path);
    let mut entries = Vec::new();
    let mut links = Vec::new();
    let mut timed = false;
    for (at, object) in json_lines(path, text)? {
        let session = Record::new(&at, &object);
        let named = session.has("session_id");
        let id = if named { session.string("session_id")?.to_string() } else { at.clone() };
        let conversation: Option<Arc<str>> = named.then(|| Arc::from(id.as_str()));
        let turn_number = |key: &str| -> Result<Option<u32>> { Ok(session.opt_u64(key)?.map(|turn| turn as u32)) };
        let parent = if session.has("parent_session_id") {
            Some(session.string("parent_session_id")?.to_string())
        } else {
            None
        };
        links.push(TraceLink {
            id,
            parent,
            spawned_after_turn: turn_number("spawned_after_turn")?,
            joined_at_turn: turn_number("joined_at_turn")?,
        });
        let turns = session.objects("turns")?;
        if turns.is_empty() {
            bail!("{at}: \"turns\" is empty");
        }
        for (index, turn) in turns.iter().enumerate() {
            let delay_ms = turn.opt_number("delay")?;
            if delay_ms.is_some_and(|delay| delay < 0.0) {
                bail!("{}: \"delay\" cannot be negative", turn.at);
            }
            let prompt = turn.string("text")?.to_string();
            let mut entry = DatasetEntry::counted(tokenizer, prompt, turn.opt_u64("output_length")?);
            let timestamp_ms = turn.opt_number("timestamp")?;
            timed |= timestamp_ms.is_some();
            entry.turn = Some(FileTurn { index: index as u32, delay_ms, timestamp_ms });
            entry.conversation = conversation.clone();
            (entry.images, entry.image_uuids) = image_uuids::images_and_uuids(turn, &mut images)?;
            entries.push(entry);
        }
    }
    if timed || links.iter().any(|link| link.parent.is_some()) {
        attach_sessions(path, &links, &mut entries)?;
    }
    Ok(entries)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::test_fixture;

    #[test]
    fn every_turn_becomes_an_entry_in_order() {
        let tokenizer = Tokenizer::shared_builtin();
        let (path, text) = test_fixture("multi_turn.jsonl");
        let entries = parse(&path, &text, &tokenizer).unwrap();
        let turns: Vec<(&str, Option<u64>)> = entries.iter().map(|e| (e.prompt.as_str(), e.max_tokens)).collect();
        assert_eq!(turns, [("Hello there.", Some(8)), ("Tell me more.", Some(16)), ("One question only.", None)]);
        assert_eq!(entries[1].input_tokens as usize, tokenizer.count("Tell me more."));
        let turns: Vec<Option<FileTurn>> = entries.iter().map(|e| e.turn).collect();
        assert_eq!(
            turns,
            [
                Some(FileTurn { index: 0, delay_ms: None, timestamp_ms: None }),
                Some(FileTurn { index: 1, delay_ms: Some(500.0), timestamp_ms: None }),
                Some(FileTurn { index: 0, delay_ms: None, timestamp_ms: None })
            ]
        );
    }

    #[test]
    fn turns_carry_their_own_images() {
        let tokenizer = Tokenizer::shared_builtin();
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("cat.png"), b"png").unwrap();
        let path = dir.path().join("chats.jsonl");
        let text = r#"{"turns": [{"text": "look", "image": "cat.png"}, {"text": "and now?"},
            {"text": "both", "images": ["https://example.com/dog.webp", "data:image/gif;base64,R0lG"]}]}"#
            .replace('\n', "");
        let entries = parse(&path, &text, &tokenizer).unwrap();
        let images: Vec<&[String]> = entries.iter().map(|entry| entry.images.as_slice()).collect();
        assert_eq!(
            images,
            [
                &["data:image/png;base64,cG5n".to_string()][..],
                &[],
                &["https://example.com/dog.webp".to_string(), "data:image/gif;base64,R0lG".to_string()]
            ]
        );

        let error = |text: &str| parse(&path, text, &tokenizer).unwrap_err().to_string();
        let missing = error(
            "{\"turns\": [{\"text\": \"a\"}]}\n{\"turns\": [{\"text\": \"a\"}, {\"text\": \"b\", \"image\": \"gone.png\"}]}",
        );
        assert!(missing.contains("chats.jsonl:2: turns[1]: cannot read image"), "{missing}");
        assert!(missing.contains("gone.png"), "{missing}");
        let both = error(r#"{"turns": [{"text": "a", "image": "cat.png", "images": []}]}"#);
        assert!(both.contains(":1: turns[0]: give either \"image\" or \"images\""), "{both}");
        let not_image = error(r#"{"turns": [{"text": "a", "image": "notes.txt"}]}"#);
        assert!(not_image.contains(":1: turns[0]: image `notes.txt` is not a .png"), "{not_image}");
    }

    #[test]
    fn a_bad_turn_names_its_line_and_turn() {
        let tokenizer = Tokenizer::shared_builtin();
        let (path, text) = test_fixture("multi_turn_broken.jsonl");
        let err = parse(&path, &text, &tokenizer).unwrap_err().to_string();
        assert!(err.ends_with("multi_turn_broken.jsonl:2: turns[1]: missing \"text\""), "{err}");

        let err = parse(&path, "{\"turns\": []}", &tokenizer).unwrap_err().to_string();
        assert!(err.ends_with(":1: \"turns\" is empty"), "{err}");
        let err = parse(&path, "{\"turns\": [{\"text\": \"a\", \"delay\": \"soon\"}]}", &tokenizer).unwrap_err();
        assert!(err.to_string().contains(":1: turns[0]: \"delay\" must be a number"), "{err}");
        let err = parse(&path, "{\"turns\": [{\"text\": \"a\", \"delay\": -5}]}", &tokenizer).unwrap_err();
        assert!(err.to_string().ends_with(":1: turns[0]: \"delay\" cannot be negative"), "{err}");
        let err = parse(&path, "{\"text\": \"a\"}", &tokenizer).unwrap_err().to_string();
        assert!(err.ends_with(":1: missing \"turns\""), "{err}");
    }
}
