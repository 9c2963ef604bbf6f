//! MMVU (yale-nlp/MMVU): each row's `question` with its `choices` (`A.first B.second …`, as
//! vLLM's benchmark and AIPerf join them) and its `video` as a `video_url` part: a URL as it
//! is (a bare path as `file://`), hub bytes as a base64 `data:` URL. Rows without a prompt or
//! a video are skipped, as AIPerf skips them.

use std::path::PathBuf;

use anyhow::Result;
use serde_json::Value;

use super::rows;
use crate::dataset::{DatasetEntry, tokenizer::Tokenizer};

pub fn read(files: &[PathBuf], limit: Option<usize>, tokenizer: &Tokenizer) -> Result<Vec<DatasetEntry>> {
    let mut entries = Vec::new();
    rows::each(files, |row| {
        let prompt = prompt(row.cells.get("question"), row.cells.get("choices"));
        let video = row.cells.get("video").and_then(video_url);
        if let (false, Some(video)) = (prompt.is_empty(), video) {
            let mut entry = DatasetEntry::counted(tokenizer, prompt, None);
            entry.videos = vec![video];
            entries.push(entry);
        }
        Ok(limit.is_none_or(|limit| entries.len() < limit))
    })?;
    Ok(entries)
}

/// The question and its lettered choices (those with text), joined with spaces.
fn prompt(question: Option<&Value>, choices: Option<&Value>) -> String {
    let question = question.and_then(Value::as_str).unwrap_or_default().trim();
    let choices: Vec<String> = choices
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter_map(|(letter, text)| {
            text.as_str().filter(|text| !text.is_empty()).map(|text| format!("{letter}.{text}"))
        })
        .collect();
    [question.to_string(), choices.join(" ")].into_iter().filter(|part| !part.is_empty()).collect::<Vec<_>>().join(" ")
}

/// The URL a video cell is sent as, if it holds a video.
fn video_url(cell: &Value) -> Option<String> {
    match cell {
        Value::String(url) if url.contains("://") || url.starts_with("data:") => Some(url.clone()),
        Value::String(path) if !path.is_empty() => Some(format!("file://{path}")),
        Value::Object(media) => {
            let bytes = media.get("bytes").and_then(Value::as_str).filter(|bytes| !bytes.is_empty())?;
            let path = media.get("path").and_then(Value::as_str).unwrap_or_default().to_ascii_lowercase();
            let mime = if path.ends_with(".webm") { "video/webm" } else { "video/mp4" };
            Some(format!("data:{mime};base64,{bytes}"))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_prompt_joins_the_question_and_its_lettered_choices() {
        let choices = json!({"A": "red", "B": "blue", "C": "", "D": null});
        assert_eq!(prompt(Some(&json!(" What colour? ")), Some(&choices)), "What colour? A.red B.blue");
        assert_eq!(prompt(Some(&json!("Open question")), None), "Open question");
        assert_eq!(prompt(None, Some(&json!({"A": "x"}))), "A.x");
        assert_eq!(video_url(&json!("https://h/v.mp4")).unwrap(), "https://h/v.mp4");
        assert_eq!(video_url(&json!("videos/v.mp4")).unwrap(), "file://videos/v.mp4");
        assert_eq!(video_url(&json!({"bytes": "AAAA", "path": "v.webm"})).unwrap(), "data:video/webm;base64,AAAA");
        assert_eq!(video_url(&json!({"bytes": null, "path": "v.mp4"})), None);
    }
}
