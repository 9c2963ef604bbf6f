//! The template kind's answers (its request body, written in the scenario, is filled in
//! `request_bodies/`): the text, finish reason and usage found by dotted paths
//! (`choices.0.text`).

use std::borrow::Cow;

use serde_json::Value;

use super::json_paths::{Found, PathSet};
use super::payload::ResponseFields;
use crate::plan::ResponsePaths;
use crate::record::Usage;

/// The parts read from each answer, in this order: text, finish reason, prompt tokens,
/// completion tokens, error.
const PARTS: usize = 5;

/// A template endpoint's response paths, compiled once for the whole run: one set for
/// streamed events (`stream_text`), one for whole answers (`text`).
#[derive(Debug)]
pub(crate) struct TemplateReader {
    stream: PathSet<PARTS>,
    whole: PathSet<PARTS>,
    /// The `text` path, which a whole answer must have.
    text_path: Option<String>,
}

impl TemplateReader {
    pub fn new(paths: &ResponsePaths) -> Self {
        let set = |text: &Option<String>| {
            PathSet::new([
                text.as_deref(),
                paths.finish_reason.as_deref(),
                paths.prompt_tokens.as_deref(),
                paths.completion_tokens.as_deref(),
                Some("error"),
            ])
        };
        Self { stream: set(&paths.stream_text), whole: set(&paths.text), text_path: paths.text.clone() }
    }

    /// Fields of one streamed event: the text at `stream_text` (events without it carry none).
    pub fn parse_stream_event<'a>(&self, data: &'a [u8]) -> serde_json::Result<ResponseFields<'a>> {
        Ok(fields(self.stream.read(data)?))
    }

    /// Fields of a whole answer: the text at `text`, which must be there when `text` is given.
    pub fn parse_full_body<'a>(&self, body: &'a [u8]) -> serde_json::Result<ResponseFields<'a>> {
        let fields = fields(self.whole.read(body)?);
        if let (None, Some(path), None) = (&fields.content, &self.text_path, &fields.error) {
            return Err(serde::de::Error::custom(format!("the response has no text at `{path}`")));
        }
        Ok(fields)
    }
}

fn as_text(found: Option<Found<'_>>) -> Option<Cow<'_, str>> {
    match found {
        Some(Found::Text(text)) => Some(text),
        _ => None,
    }
}

fn as_count(found: &Option<Found<'_>>) -> Option<u64> {
    match found {
        Some(Found::Count(count)) => Some(*count),
        _ => None,
    }
}

/// The fields a record keeps from what the paths found.
fn fields(found: [Option<Found<'_>>; PARTS]) -> ResponseFields<'_> {
    let [text, finish_reason, prompt_tokens, completion_tokens, error] = found;
    let usage = Usage {
        prompt_tokens: as_count(&prompt_tokens),
        completion_tokens: as_count(&completion_tokens),
        ..Default::default()
    };
    ResponseFields {
        content: as_text(text),
        finish_reason: as_text(finish_reason),
        usage: (usage != Usage::default()).then_some(usage),
        error: error.map(|error| match error {
            Found::Text(text) => Value::from(text.into_owned()),
            Found::Count(count) => Value::from(count),
            Found::Json(value) => value,
        }),
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_find_text_and_usage() {
        let paths = ResponsePaths {
            text: Some("choices.0.text".into()),
            stream_text: Some("choices.0.delta.content".into()),
            prompt_tokens: Some("usage.prompt_tokens".into()),
            completion_tokens: Some("usage.completion_tokens".into()),
            finish_reason: Some("choices.0.finish_reason".into()),
        };
        let reader = TemplateReader::new(&paths);
        let whole = reader
            .parse_full_body(br#"{"choices":[{"text":"Hi"}],"usage":{"prompt_tokens":3,"completion_tokens":1}}"#)
            .unwrap();
        assert_eq!(whole.content.as_deref(), Some("Hi"));
        assert_eq!(whole.usage.map(|usage| (usage.prompt_tokens, usage.completion_tokens)), Some((Some(3), Some(1))));
        let missing = reader.parse_full_body(br#"{"choices":[]}"#).unwrap_err();
        assert!(missing.to_string().contains("no text at `choices.0.text`"), "{missing}");
        let chunk = reader.parse_stream_event(br#"{"choices":[{"delta":{"content":" a"}}]}"#).unwrap();
        assert_eq!(chunk.content.as_deref(), Some(" a"));
        assert!(chunk.usage.is_none() && chunk.finish_reason.is_none());
        let last = reader.parse_stream_event(br#"{"choices":[{"delta":{},"finish_reason":"stop"}]}"#).unwrap();
        assert_eq!(last.finish_reason.as_deref(), Some("stop"));
        let usage_only = reader.parse_stream_event(br#"{"choices":[],"usage":{"completion_tokens":4}}"#).unwrap();
        assert!(usage_only.content.is_none());
        assert_eq!(usage_only.usage.and_then(|usage| usage.completion_tokens), Some(4));
    }
}
