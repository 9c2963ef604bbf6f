//! A mooncake trace as JSON lines: each line's object kept whole (fields nobody here reads
//! pass through to the output), with typed reads whose errors name `file:line`.

use std::path::Path;

use anyhow::{Result, bail};
use serde_json::{Map, Value};

/// One request of a trace and where it came from.
#[derive(Debug, Clone)]
pub struct TraceLine {
    /// `file:line`, the prefix of every error about this line.
    pub at: String,
    /// Its line in the file, from 1.
    pub number: usize,
    pub fields: Map<String, Value>,
}

/// Every non-blank line of `text` (the trace `path`) as a JSON object.
pub fn parse(path: &Path, text: &str) -> Result<Vec<TraceLine>> {
    let mut lines = Vec::new();
    for (index, line) in text.trim_start_matches('\u{feff}').lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let at = format!("{}:{}", path.display(), index + 1);
        match serde_json::from_str::<Value>(line) {
            Ok(Value::Object(fields)) => lines.push(TraceLine { at, number: index + 1, fields }),
            Ok(other) => bail!("{at}: expected a JSON object, got `{other}`"),
            Err(e) => bail!("{at}: invalid JSON: {e}"),
        }
    }
    Ok(lines)
}

/// The lines as JSONL text, one object per line.
pub fn to_jsonl(lines: &[TraceLine]) -> String {
    lines.iter().map(|line| format!("{}\n", serde_json::to_string(&line.fields).unwrap_or_default())).collect()
}

/// The lines as JSONL text, each on its line of the file it was read from (blank lines where
/// lines were dropped), so that a reader of the text names the file's own lines.
pub fn to_jsonl_in_place(lines: &[TraceLine]) -> String {
    let mut text = String::new();
    let mut written = 0;
    for line in lines {
        text.extend(std::iter::repeat_n('\n', line.number.saturating_sub(written + 1)));
        text.push_str(&serde_json::to_string(&line.fields).unwrap_or_default());
        text.push('\n');
        written = written.max(line.number);
    }
    text
}

impl TraceLine {
    fn present(&self, key: &str) -> Option<&Value> {
        self.fields.get(key).filter(|value| !value.is_null())
    }

    /// A whole number ≥ 0 (`12.0` counts as one), or None when the key is absent.
    pub fn count(&self, key: &str) -> Result<Option<u64>> {
        match self.present(key) {
            None => Ok(None),
            Some(value) => match value.as_u64().or_else(|| whole(value.as_f64()?)) {
                Some(count) => Ok(Some(count)),
                None => bail!("{}: \"{key}\" must be a whole number ≥ 0, got `{value}`", self.at),
            },
        }
    }

    /// The `timestamp` (ms), or None when absent.
    pub fn timestamp_ms(&self) -> Result<Option<f64>> {
        match self.present("timestamp") {
            None => Ok(None),
            Some(value) => match value.as_f64().filter(|ms| ms.is_finite()) {
                Some(ms) => Ok(Some(ms)),
                None => bail!("{}: \"timestamp\" must be a number of ms, got `{value}`", self.at),
            },
        }
    }

    /// The `hash_ids` (empty when absent).
    pub fn hash_ids(&self) -> Result<Vec<u64>> {
        let Some(value) = self.present("hash_ids") else { return Ok(Vec::new()) };
        let wrong = || anyhow::anyhow!("{}: \"hash_ids\" must be an array of whole numbers, got `{value}`", self.at);
        value.as_array().ok_or_else(wrong)?.iter().map(|id| id.as_u64().ok_or_else(wrong)).collect()
    }

    /// The `session_id` as text (a string or a number), or None when absent.
    pub fn session_id(&self) -> Option<String> {
        self.present("session_id").map(|value| match value {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        })
    }

    /// Whether the line carries its prompt as text rather than as a length.
    pub fn has_literal_prompt(&self) -> bool {
        ["text_input", "messages", "payload"].iter().any(|key| self.present(key).is_some())
    }
}

fn whole(number: f64) -> Option<u64> {
    (number >= 0.0 && number.fract() == 0.0 && number <= u64::MAX as f64).then_some(number as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_pass_through_and_bad_values_name_their_line() {
        let path = Path::new("t.jsonl");
        let text = "{\"timestamp\": 5, \"input_length\": 10.0, \"hash_ids\": [1, 2], \"extra\": \"kept\"}\n\n[1]\n";
        let err = parse(path, text).unwrap_err().to_string();
        assert_eq!(err, "t.jsonl:3: expected a JSON object, got `[1]`");
        let lines = parse(path, &text[..text.find('\n').unwrap()]).unwrap();
        let line = &lines[0];
        assert_eq!((line.count("input_length").unwrap(), line.hash_ids().unwrap()), (Some(10), vec![1, 2]));
        assert_eq!(line.timestamp_ms().unwrap(), Some(5.0));
        assert_eq!(to_jsonl(&lines), "{\"timestamp\":5,\"input_length\":10.0,\"hash_ids\":[1,2],\"extra\":\"kept\"}\n");
        let spaced = parse(path, "{\"a\": 1}\n\n{\"b\": 2}\n{\"c\": 3}\n").unwrap();
        let kept: Vec<TraceLine> = spaced.into_iter().filter(|line| !line.fields.contains_key("b")).collect();
        assert_eq!(to_jsonl_in_place(&kept), "{\"a\":1}\n\n\n{\"c\":3}\n", "line 4 stays line 4");

        let bad = parse(path, "{\"input_length\": -3, \"hash_ids\": [\"a\"]}").unwrap();
        assert_eq!(
            bad[0].count("input_length").unwrap_err().to_string(),
            "t.jsonl:1: \"input_length\" must be a whole number ≥ 0, got `-3`"
        );
        assert!(bad[0].hash_ids().unwrap_err().to_string().starts_with("t.jsonl:1: \"hash_ids\" must be an array"));
    }
}
