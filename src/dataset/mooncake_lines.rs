//! One mooncake trace line's input, read and checked as AIPerf 0.13's `MooncakeTrace` takes it:
//! exactly one of `input_length` (with optional `hash_ids`), `text_input`, `messages` (with
//! optional `tools`) or `payload`; an optional `output_length` and `extra` body fields. Also
//! `aiperf validate mooncake-trace`: every line of a file checked so, the first errors listed.

use std::path::Path;

use anyhow::{Result, bail};
use serde_json::{Map, Value};

use super::fields::Record;
use super::mooncake_sessions::LinePlace;

/// The ways a line gives its input, one per line.
const INPUT_MODES: [&str; 4] = ["input_length", "text_input", "messages", "payload"];

pub enum Input {
    /// A prompt made of `input_length` tokens, its blocks from `hash_ids`.
    Tokens { input_length: u64, hash_ids: Vec<u64> },
    /// The prompt itself.
    Text(String),
    /// A chat body's `messages` (and `tools`), sent as they are.
    Messages(Map<String, Value>),
    /// A whole body, sent as it is.
    Payload(Value),
}

pub struct LineInput {
    pub input: Input,
    pub output_length: Option<u64>,
    pub extra: Option<Map<String, Value>>,
}

impl LineInput {
    pub fn read(request: &Record) -> Result<Self> {
        let at = &request.at;
        let given: Vec<&str> = INPUT_MODES.into_iter().filter(|key| request.has(key)).collect();
        let mode = match given.as_slice() {
            [] => bail!("{at}: missing \"input_length\" (or \"text_input\", \"messages\", \"payload\")"),
            [mode] => *mode,
            _ => bail!("{at}: {} are mutually exclusive; give one", given.join(", ")),
        };
        if request.has("hash_ids") && mode != "input_length" {
            bail!("{at}: \"hash_ids\" go with \"input_length\" only");
        }
        if request.has("tools") && mode != "messages" {
            bail!("{at}: \"tools\" go with \"messages\" only");
        }
        let output_length = request.opt_u64("output_length")?;
        let extra = match request.object.get("extra").filter(|value| !value.is_null()) {
            None => None,
            Some(Value::Object(extra)) => Some(extra.clone()),
            Some(other) => bail!("{at}: \"extra\" must be an object, got `{other}`"),
        };
        let input = match mode {
            "input_length" => Input::Tokens {
                input_length: request.u64("input_length")?,
                hash_ids: if request.has("hash_ids") { request.numbers("hash_ids")? } else { Vec::new() },
            },
            "text_input" => Input::Text(request.string("text_input")?.to_string()),
            "messages" => Input::Messages(chat_fields(request)?),
            _ => match request.object.get("payload") {
                Some(Value::Object(payload)) if !payload.is_empty() => Input::Payload(Value::Object(payload.clone())),
                other => bail!("{at}: \"payload\" must be a non-empty object, got `{}`", other.unwrap_or(&Value::Null)),
            },
        };
        Ok(Self { input, output_length, extra })
    }
}

/// A line's `messages` (each an object with a `role`) and `tools` (not empty), as body fields.
fn chat_fields(request: &Record) -> Result<Map<String, Value>> {
    let messages = request.array("messages")?;
    if messages.is_empty() {
        bail!("{}: \"messages\" must not be empty", request.at);
    }
    for (index, message) in messages.iter().enumerate() {
        if !message.get("role").is_some_and(Value::is_string) {
            bail!("{}: messages[{index}] needs a \"role\"", request.at);
        }
    }
    let mut fields = Map::new();
    fields.insert("messages".into(), Value::Array(messages.clone()));
    if request.has("tools") {
        let tools = request.array("tools")?;
        if tools.is_empty() {
            bail!("{}: \"tools\" must not be empty", request.at);
        }
        fields.insert("tools".into(), Value::Array(tools.clone()));
    }
    Ok(fields)
}

/// The lines of a trace and the errors of its first `max_errors` bad lines.
pub fn validate(path: &Path, text: &str, max_errors: usize) -> (usize, Vec<String>) {
    let mut rows = 0;
    let mut errors = Vec::new();
    for (index, line) in text.lines().enumerate().filter(|(_, line)| !line.trim().is_empty()) {
        rows += 1;
        let at = format!("{}:{}", path.display(), index + 1);
        let checked = match serde_json::from_str::<Value>(line) {
            Ok(Value::Object(object)) => {
                let request = Record::new(&at, &object);
                LineInput::read(&request).and_then(|_| LinePlace::read(&request)).map(|_| ())
            }
            Ok(other) => Err(anyhow::anyhow!("{at}: expected a JSON object, got `{other}`")),
            Err(e) => Err(anyhow::anyhow!("{at}: invalid JSON: {e}")),
        };
        if let Err(error) = checked {
            errors.push(format!("{error:#}"));
            if errors.len() >= max_errors {
                break;
            }
        }
    }
    (rows, errors)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validation_counts_the_lines_and_names_the_first_bad_ones() {
        let text = "{\"input_length\": 3}\n\n{\"text_input\": \"x\", \"delay\": 5, \"session_id\": \"s\"}\nnot json\n\
                    {\"payload\": {}}\n{\"input_length\": 3, \"session_id\": 7}\n";
        let (rows, errors) = validate(Path::new("t.jsonl"), text, 10);
        assert_eq!(rows, 5);
        assert_eq!(errors.len(), 3, "{errors:?}");
        assert!(errors[0].starts_with("t.jsonl:4: invalid JSON"), "{errors:?}");
        assert!(errors[1].starts_with("t.jsonl:5: \"payload\" must be a non-empty object"), "{errors:?}");
        assert!(errors[2].starts_with("t.jsonl:6: \"session_id\" must be a string"), "{errors:?}");
        assert_eq!(validate(Path::new("t.jsonl"), text, 1).1.len(), 1, "at most the errors asked for");
    }
}
