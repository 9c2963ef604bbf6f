//! Raw payloads (AIPerf's `raw_payload`): JSONL lines that are whole chat request bodies, each
//! sent byte for byte. A file is one single-turn request per line; a folder is one session per
//! `.jsonl` file (sorted by name), its lines the turns, each sent verbatim after the previous
//! answer (the bodies carry their own history).

use std::path::Path;

use anyhow::{Context, Result, bail};
use bytes::Bytes;
use serde_json::Value;

use super::own_body::{into_session, verbatim_entry};
use super::{DatasetEntry, fields, tokenizer::Tokenizer};

/// Every request of the file, or every session of the folder, at `path`.
pub fn load(path: &Path, records: Option<&str>, tokenizer: &Tokenizer) -> Result<Vec<DatasetEntry>> {
    if let Some(records) = records {
        return parse(path, records, tokenizer);
    }
    if !path.is_dir() {
        return parse(path, &fields::read(path)?, tokenizer);
    }
    let mut files: Vec<_> = std::fs::read_dir(path)
        .with_context(|| format!("cannot read dataset folder {}", path.display()))?
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|file| file.extension().is_some_and(|ext| ext == "jsonl"))
        .collect();
    files.sort();
    if files.is_empty() {
        bail!("dataset folder {}: no .jsonl files (raw_payload reads one session per file)", path.display());
    }
    let mut entries = Vec::new();
    for file in files {
        let mut turns = parse(&file, &fields::read(&file)?, tokenizer)?;
        into_session(&mut turns);
        entries.extend(turns);
    }
    Ok(entries)
}

/// One request per non-blank line: a JSON object with a `messages` array, sent as written.
pub fn parse(path: &Path, text: &str, tokenizer: &Tokenizer) -> Result<Vec<DatasetEntry>> {
    let mut entries = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let at = format!("{}:{}", path.display(), index + 1);
        let body: Value = serde_json::from_str(line).with_context(|| format!("{at}: invalid JSON"))?;
        if !body.is_object() {
            bail!("{at}: a raw payload must be a JSON object (a whole request body), got `{line}`");
        }
        if !body.get("messages").is_some_and(Value::is_array) {
            bail!("{at}: a raw payload needs a \"messages\" array");
        }
        entries.push(verbatim_entry(tokenizer, Bytes::copy_from_slice(line.as_bytes()), &body));
    }
    Ok(entries)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::own_body::OwnBody;

    #[test]
    fn each_line_is_sent_as_written_and_a_folder_holds_sessions() {
        let tokenizer = Tokenizer::shared_builtin();
        let dir = tempfile::tempdir().unwrap();
        let line = r#"{"model":"x","messages":[{"role":"user","content":"hello there"}],"max_tokens":4}"#;
        let file = dir.path().join("bodies.jsonl");
        std::fs::write(&file, format!("{line}\n\n{line}\n")).unwrap();
        let entries = load(&file, None, &tokenizer).unwrap();
        assert_eq!(entries.len(), 2);
        assert_eq!(entries[0].own_body, Some(OwnBody::Verbatim(Bytes::from(line))));
        assert_eq!(
            (entries[0].prompt.as_str(), entries[0].max_tokens, entries[0].turn),
            ("hello there", Some(4), None)
        );

        let folder = dir.path().join("sessions");
        std::fs::create_dir(&folder).unwrap();
        std::fs::write(folder.join("b.jsonl"), format!("{line}\n")).unwrap();
        std::fs::write(folder.join("a.jsonl"), format!("{line}\n{line}\n")).unwrap();
        std::fs::write(folder.join("notes.txt"), "not a session").unwrap();
        let turns: Vec<u32> =
            load(&folder, None, &tokenizer).unwrap().iter().map(|entry| entry.turn.unwrap().index).collect();
        assert_eq!(turns, [0, 1, 0]);
    }

    #[test]
    fn a_line_that_is_not_a_chat_body_is_named() {
        let tokenizer = Tokenizer::shared_builtin();
        let path = Path::new("bodies.jsonl");
        let error = parse(path, "{\"messages\": []}\n{\"model\": \"x\"}\n", &tokenizer).unwrap_err();
        assert_eq!(error.to_string(), "bodies.jsonl:2: a raw payload needs a \"messages\" array");
        let error = parse(path, "[1]", &tokenizer).unwrap_err();
        assert!(error.to_string().starts_with("bodies.jsonl:1: a raw payload must be a JSON object"), "{error}");
        let error = parse(path, "{oops", &tokenizer).unwrap_err();
        assert!(format!("{error:#}").starts_with("bodies.jsonl:1: invalid JSON"), "{error:#}");
    }
}
