//! Amazon SageMaker Data Capture files (JSONL, AIPerf's `sagemaker_data_capture`): a captured
//! request per line, replayed with its own chat `messages` (and `tools`) and `max_tokens`, at
//! its `eventMetadata.inferenceTime` taken from the earliest capture (ms, in time order). A
//! folder is read whole (every `.jsonl` under it). Chat endpoints only.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use base64::Engine;
use serde_json::{Map, Value};

use super::own_body::{OwnBody, asked_max_tokens, counted_text};
use super::recorded_times::{first_json_object, in_time_order};
use super::{DatasetEntry, fields, tokenizer::Tokenizer};

/// One captured request.
struct Capture {
    /// ms since the Unix epoch.
    inference_time_ms: f64,
    request: Map<String, Value>,
    /// `usage.prompt_tokens` of the captured answer, if it has one.
    prompt_tokens: Option<u64>,
}

/// The captures of the file at `path`, or of every `.jsonl` under the folder at `path` (in
/// path order), or of the inline `records`.
fn captures(path: &Path, records: Option<&str>) -> Result<Vec<Capture>> {
    if let Some(records) = records {
        return parse_captures(path, records);
    }
    let mut captures = Vec::new();
    for file in capture_files(path)? {
        captures.extend(parse_captures(&file, &fields::read(&file)?)?);
    }
    Ok(captures)
}

fn capture_files(path: &Path) -> Result<Vec<PathBuf>> {
    if !path.is_dir() {
        return Ok(vec![path.to_path_buf()]);
    }
    let mut files = Vec::new();
    let mut folders = vec![path.to_path_buf()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).with_context(|| format!("cannot read folder {}", folder.display()))? {
            let entry = entry.with_context(|| format!("cannot read folder {}", folder.display()))?.path();
            if entry.is_dir() {
                folders.push(entry);
            } else if entry.extension().is_some_and(|ext| ext == "jsonl") {
                files.push(entry);
            }
        }
    }
    files.sort();
    if files.is_empty() {
        bail!("dataset folder {}: no .jsonl capture files under it", path.display());
    }
    Ok(files)
}

fn parse_captures(path: &Path, text: &str) -> Result<Vec<Capture>> {
    let mut captures = Vec::new();
    for (at, object) in fields::json_lines(path, text)? {
        let inference_time = object
            .get("eventMetadata")
            .and_then(|metadata| metadata.get("inferenceTime"))
            .and_then(Value::as_str)
            .with_context(|| format!("{at}: missing \"eventMetadata\".\"inferenceTime\""))?;
        let inference_time_ms = epoch_ms(inference_time)
            .with_context(|| format!("{at}: \"inferenceTime\" `{inference_time}` is not an ISO 8601 time"))?;
        let capture = object.get("captureData").with_context(|| format!("{at}: missing \"captureData\""))?;
        let input =
            capture.get("endpointInput").with_context(|| format!("{at}: missing \"captureData\".\"endpointInput\""))?;
        let request = match decoded(input).with_context(|| format!("{at}: endpointInput"))? {
            Some(Value::Object(request)) if request.get("messages").is_some_and(Value::is_array) => request,
            _ => bail!("{at}: the captured request has no \"messages\" array (only chat requests are replayed)"),
        };
        let answer = match capture.get("endpointOutput") {
            Some(output) => decoded(output).with_context(|| format!("{at}: endpointOutput"))?,
            None => None,
        };
        let prompt_tokens =
            answer.as_ref().and_then(|answer| answer.pointer("/usage/prompt_tokens")).and_then(Value::as_u64);
        captures.push(Capture { inference_time_ms, request, prompt_tokens });
    }
    Ok(captures)
}

/// A capture's `data` in its `encoding` (`JSON`, or `BASE64` when not given); `None` for
/// other encodings (CSV) and for no data.
fn decoded(entry: &Value) -> Result<Option<Value>> {
    let Some(data) = entry.get("data").and_then(Value::as_str) else { return Ok(None) };
    let bytes = match entry.get("encoding").and_then(Value::as_str).unwrap_or("BASE64") {
        "JSON" => data.as_bytes().to_vec(),
        "BASE64" => base64::engine::general_purpose::STANDARD.decode(data).context("not base64")?,
        _ => return Ok(None),
    };
    Ok(Some(serde_json::from_slice(&bytes).context("not a JSON payload")?))
}

/// An ISO 8601 time as ms since the Unix epoch (a time without an offset is taken as UTC).
pub(crate) fn epoch_ms(text: &str) -> Option<f64> {
    let utc = chrono::DateTime::parse_from_rfc3339(text).map(|time| time.to_utc()).ok().or_else(|| {
        chrono::NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M:%S%.f").ok().map(|time| time.and_utc())
    })?;
    Some(utc.timestamp_micros() as f64 / 1000.0)
}

/// Every capture as a request at its time from the earliest capture.
pub fn load(path: &Path, records: Option<&str>, tokenizer: &Tokenizer) -> Result<Vec<DatasetEntry>> {
    let captures = captures(path, records)?;
    let first_ms = captures.iter().map(|capture| capture.inference_time_ms).fold(f64::INFINITY, f64::min);
    let timed = captures
        .into_iter()
        .map(|capture| {
            let request = Value::Object(capture.request);
            let mut entry = DatasetEntry::counted(tokenizer, counted_text(&request), asked_max_tokens(&request));
            if let Some(tokens) = capture.prompt_tokens {
                entry.input_tokens = tokens;
            }
            let mut own = Map::new();
            for key in ["messages", "tools"] {
                if let Some(value) = request.get(key).filter(|value| !value.is_null()) {
                    own.insert(key.to_string(), value.clone());
                }
            }
            entry.own_body = Some(OwnBody::Merged(own));
            (capture.inference_time_ms - first_ms, entry)
        })
        .collect();
    Ok(in_time_order(timed))
}

/// The captures' times (ms from the earliest), ascending.
pub fn times_ms(path: &Path) -> Result<Vec<f64>> {
    let times: Vec<f64> = captures(path, None)?.iter().map(|capture| capture.inference_time_ms).collect();
    let first_ms = times.iter().copied().fold(f64::INFINITY, f64::min);
    let mut times: Vec<f64> = times.iter().map(|time| time - first_ms).collect();
    times.sort_by(f64::total_cmp);
    Ok(times)
}

/// A capture file (or a folder whose first capture file is one): `captureData` and `eventMetadata`.
pub fn looks_like(path: &Path) -> bool {
    let file = match capture_files(path) {
        Ok(files) => files.into_iter().next(),
        Err(_) => None,
    };
    file.and_then(|file| first_json_object(&file))
        .is_some_and(|object| object.contains_key("captureData") && object.contains_key("eventMetadata"))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// A capture line at `time` asking `content` (JSON or base64 encoded).
    fn capture_line(time: &str, content: &str, base64_encoded: bool) -> String {
        let request = json!({"messages": [{"role": "user", "content": content}], "max_tokens": 6}).to_string();
        let (data, encoding) = if base64_encoded {
            (base64::engine::general_purpose::STANDARD.encode(&request), "BASE64")
        } else {
            (request, "JSON")
        };
        json!({"captureData": {"endpointInput": {"data": data, "encoding": encoding},
                               "endpointOutput": {"data": "{\"usage\":{\"prompt_tokens\":12}}", "encoding": "JSON"}},
               "eventMetadata": {"eventId": "e", "inferenceTime": time}, "eventVersion": "0"})
        .to_string()
    }

    #[test]
    fn captures_replay_their_messages_from_the_earliest_time() {
        let tokenizer = Tokenizer::shared_builtin();
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("2026/04/29")).unwrap();
        let late = capture_line("2026-04-29T00:03:19.500Z", "later", true);
        let early = capture_line("2026-04-29T00:03:18Z", "first", false);
        std::fs::write(dir.path().join("2026/04/29/a.jsonl"), format!("{late}\n{early}\n")).unwrap();
        assert!(looks_like(dir.path()));
        let entries = load(dir.path(), None, &tokenizer).unwrap();
        let seen: Vec<(&str, Option<f64>, u64, Option<u64>)> = entries
            .iter()
            .map(|e| (e.prompt.as_str(), e.turn.and_then(|t| t.timestamp_ms), e.input_tokens, e.max_tokens))
            .collect();
        assert_eq!(seen, [("first", Some(0.0), 12, Some(6)), ("later", Some(1500.0), 12, Some(6))]);
        assert!(entries[0].own_body.as_ref().is_some_and(OwnBody::sets_messages));
        assert_eq!(times_ms(dir.path()).unwrap(), vec![0.0, 1500.0]);
    }

    #[test]
    fn a_bad_capture_is_named() {
        let tokenizer = Tokenizer::shared_builtin();
        let path = Path::new("capture.jsonl");
        let good = capture_line("2026-04-29T00:03:18Z", "x", false);
        let error = |records: &str| format!("{:#}", load(path, Some(records), &tokenizer).unwrap_err());
        let no_time = good.replace("inferenceTime", "when");
        assert_eq!(
            error(&format!("{good}\n{no_time}")),
            "capture.jsonl:2: missing \"eventMetadata\".\"inferenceTime\""
        );
        let bad_time = good.replace("2026-04-29T00:03:18Z", "yesterday");
        assert_eq!(error(&bad_time), "capture.jsonl:1: \"inferenceTime\" `yesterday` is not an ISO 8601 time");
        let not_chat = json!({"captureData": {"endpointInput": {"data": "{\"inputs\": \"x\"}", "encoding": "JSON"}},
            "eventMetadata": {"inferenceTime": "2026-04-29T00:03:18Z"}});
        assert!(
            error(&not_chat.to_string()).starts_with("capture.jsonl:1: the captured request has no \"messages\" array")
        );
    }
}
