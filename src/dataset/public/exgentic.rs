//! Exgentic agent traces (`exgentic`, `exgentic_v2`), replayed as AIPerf 0.13 replays them: a row
//! is an agent session, each of its LLM-call spans one turn sending the call's whole recorded
//! message array, tools, output limit, temperature and stop, with `x-dynamo-session-id`.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::path::PathBuf;

use anyhow::{Result, anyhow, bail};
use http::{HeaderMap, HeaderValue};
use serde_json::{Map, Value, json};

use super::rows;
use crate::dataset::own_body::{OwnBody, counted_text};
use crate::dataset::sagemaker_data_capture::epoch_ms;
use crate::dataset::{DatasetEntry, FileTurn, tokenizer::Tokenizer};

const HARNESSES: [&str; 5] =
    ["claude_code", "openai_solo", "smolagents_code", "tool_calling", "tool_calling_with_shortlisting"];
const SOURCE_MODELS: [&str; 6] =
    ["DeepSeek-V3.2", "Kimi-K2.5", "claude-opus-4-5", "gemini-3-pro-preview", "gpt-4.1", "gpt-5.2-2025-12-11"];
const BENCHMARKS: [&str; 6] = ["appworld", "browsecompplus", "swebench", "tau2_airline", "tau2_retail", "tau2_telecom"];

/// The (harness, source model) pairs the first release's traces do not hold.
const V1_MISSING_PAIRS: [(&str, &str); 8] = [
    ("openai_solo", "gpt-5.2-2025-12-11"),
    ("smolagents_code", "claude-opus-4-5"),
    ("smolagents_code", "gemini-3-pro-preview"),
    ("smolagents_code", "gpt-5.2-2025-12-11"),
    ("tool_calling", "gpt-5.2-2025-12-11"),
    ("tool_calling_with_shortlisting", "claude-opus-4-5"),
    ("tool_calling_with_shortlisting", "gpt-4.1"),
    ("tool_calling_with_shortlisting", "gpt-5.2-2025-12-11"),
];
/// The (harness, source model) pairs the v2 traces do not hold.
const V2_MISSING_PAIRS: [(&str, &str); 7] = [
    ("claude_code", "gpt-4.1"),
    ("openai_solo", "gpt-4.1"),
    ("smolagents_code", "gpt-4.1"),
    ("tool_calling", "gpt-4.1"),
    ("tool_calling_with_shortlisting", "claude-opus-4-5"),
    ("tool_calling_with_shortlisting", "gpt-4.1"),
    ("tool_calling_with_shortlisting", "gpt-5.2-2025-12-11"),
];

/// The header each turn carries its session's id in.
const SESSION_HEADER: &str = "x-dynamo-session-id";

/// Which release of the traces is read: v2 holds more pairs and names each row's benchmark.
#[derive(Clone, Copy)]
struct Release {
    missing_pairs: &'static [(&'static str, &'static str)],
    has_benchmarks: bool,
}

/// The `--dataset-filter` values, each spelled as AIPerf names it.
#[derive(Default)]
struct Filters {
    harness: Option<&'static str>,
    source_model: Option<&'static str>,
    benchmark: Option<&'static str>,
}

/// Every turn of the sessions of `files` that pass `filters`, at most `sessions_limit` sessions
/// (`exgentic_v2` when `v2`).
pub fn read(
    files: &[PathBuf],
    v2: bool,
    filters: &BTreeMap<String, String>,
    sessions_limit: Option<usize>,
    tokenizer: &Tokenizer,
) -> Result<Vec<DatasetEntry>> {
    let release = match v2 {
        true => Release { missing_pairs: &V2_MISSING_PAIRS, has_benchmarks: true },
        false => Release { missing_pairs: &V1_MISSING_PAIRS, has_benchmarks: false },
    };
    let filters = Filters::parse(filters, release)?;
    let mut entries = Vec::new();
    let mut combinations = BTreeSet::new();
    let mut seen_sessions = HashSet::new();
    rows::each(files, |row| {
        let Some(turns) = session_turns(&row.cells, &filters, &mut combinations)
            .map_err(|problem| anyhow!("{}: Exgentic row: {problem}", row.at))?
        else {
            return Ok(true);
        };
        if !seen_sessions.insert(turns.session_id.clone()) {
            bail!("{}: duplicate Exgentic session_id `{}`", row.at, turns.session_id);
        }
        entries.extend(turns.entries(tokenizer).map_err(|problem| anyhow!("{}: {problem}", row.at))?);
        Ok(sessions_limit.is_none_or(|limit| seen_sessions.len() < limit))
    })?;
    if entries.is_empty() {
        let available: Vec<String> = combinations.iter().map(|(harness, model)| format!("{harness}/{model}")).collect();
        let shown = |value: Option<&str>| value.unwrap_or("None").to_string();
        bail!(
            "no replayable Exgentic spans matched harness={}, source_model={}, benchmark={}; available combinations: {}",
            shown(filters.harness),
            shown(filters.source_model),
            shown(filters.benchmark),
            if available.is_empty() { "none".to_string() } else { available.join(", ") }
        );
    }
    Ok(entries)
}

/// A recorded model name without Exgentic's provider prefix (`azure/gpt-4.1` is `gpt-4.1`).
fn canonical_source_model(value: &str) -> &str {
    let lowered = value.to_lowercase();
    ["openai/azure/", "azure/", "aws/", "gcp/"]
        .iter()
        .find(|prefix| lowered.starts_with(*prefix))
        .map_or(value, |prefix| &value[prefix.len()..])
}

/// `value` as one of `names` (case-insensitively), in its own spelling.
fn one_of(names: &[&'static str], value: &str) -> Option<&'static str> {
    names.iter().find(|name| name.eq_ignore_ascii_case(value)).copied()
}

impl Filters {
    fn parse(given: &BTreeMap<String, String>, release: Release) -> Result<Self> {
        let supported = |harness: &str, model: &str| !release.missing_pairs.contains(&(harness, model));
        let available = || {
            let models: Vec<&str> =
                SOURCE_MODELS.into_iter().filter(|model| HARNESSES.iter().any(|h| supported(h, model))).collect();
            let mut text = format!("harness=[{}], source_model=[{}]", HARNESSES.join(", "), models.join(", "));
            if release.has_benchmarks {
                text.push_str(&format!(", benchmark=[{}]", BENCHMARKS.join(", ")));
            }
            text
        };
        let mut filters = Filters::default();
        for (key, value) in given {
            let (slot, names, value) = match key.as_str() {
                "harness" => (&mut filters.harness, &HARNESSES[..], value.as_str()),
                "source_model" => (&mut filters.source_model, &SOURCE_MODELS[..], canonical_source_model(value)),
                "benchmark" => (&mut filters.benchmark, &BENCHMARKS[..], value.as_str()),
                _ => bail!(
                    "--dataset-filter {key}={value}: Exgentic has no filter `{key}`; available filters: {}",
                    available()
                ),
            };
            let Some(known) = one_of(names, value) else {
                bail!(
                    "--dataset-filter {key}={value}: `{value}` is not an Exgentic {key}; available filters: {}",
                    available()
                )
            };
            *slot = Some(known);
        }
        if filters.benchmark.is_some() && !release.has_benchmarks {
            bail!("--dataset-filter benchmark: the Exgentic benchmark filter is only supported for Exgentic v2 traces");
        }
        if let (Some(harness), Some(model)) = (filters.harness, filters.source_model)
            && !supported(harness, model)
        {
            let models: Vec<&str> = SOURCE_MODELS.into_iter().filter(|m| supported(harness, m)).collect();
            bail!(
                "--dataset-filter: unsupported Exgentic filter combination harness={harness}, source_model={model}; \
                 available source models for this harness: {}",
                models.join(", ")
            );
        }
        if let Some(model) = filters.source_model
            && !HARNESSES.iter().any(|harness| supported(harness, model))
        {
            bail!("--dataset-filter: unsupported Exgentic source_model={model}; no harness supports it");
        }
        Ok(filters)
    }

    fn pass(&self, harness: &str, source_models: &BTreeSet<String>, benchmark: Option<&str>) -> bool {
        self.harness.is_none_or(|wanted| wanted.eq_ignore_ascii_case(harness))
            && self
                .source_model
                .is_none_or(|wanted| source_models.iter().any(|m| m.to_lowercase() == wanted.to_lowercase()))
            && self.benchmark.is_none_or(|wanted| benchmark.is_some_and(|b| wanted.eq_ignore_ascii_case(b)))
    }
}

/// One replayable LLM call of a session.
struct Call {
    start_ms: f64,
    end_ms: f64,
    max_tokens: u64,
    fields: Map<String, Value>,
}

/// A session's replayable calls in start order.
struct SessionTurns {
    session_id: String,
    calls: Vec<Call>,
}

/// The session of a row when it passes `filters` and has a replayable call (every row's
/// harness/model pairs noted in `combinations`).
fn session_turns(
    row: &Map<String, Value>,
    filters: &Filters,
    combinations: &mut BTreeSet<(String, String)>,
) -> Result<Option<SessionTurns>, String> {
    let text = |key: &str| row.get(key).and_then(Value::as_str).filter(|text| !text.is_empty());
    let harness = text("harness").ok_or("it has no harness")?;
    let session_id = text("session_id").ok_or("it has no session_id")?;
    let models = row
        .get("models")
        .and_then(Value::as_array)
        .and_then(|models| models.iter().map(|m| m.as_str().filter(|m| !m.is_empty())).collect::<Option<Vec<_>>>())
        .ok_or("models must be a list of non-empty strings")?;
    let spans = row
        .get("spans")
        .and_then(Value::as_array)
        .filter(|spans| spans.iter().all(Value::is_object))
        .ok_or("spans must be a list of objects")?;
    let source_models: BTreeSet<String> = models.iter().map(|m| canonical_source_model(m).to_string()).collect();
    combinations.extend(source_models.iter().map(|model| (harness.to_string(), model.clone())));
    if !filters.pass(harness, &source_models, row.get("benchmark").and_then(Value::as_str)) {
        return Ok(None);
    }
    let mut calls = Vec::new();
    for (index, span) in spans.iter().enumerate() {
        if let Some(call) =
            replayable_call(span).map_err(|problem| format!("session `{session_id}` span {index}: {problem}"))?
        {
            calls.push((call, index));
        }
    }
    calls.sort_by(|(a, a_index), (b, b_index)| a.start_ms.total_cmp(&b.start_ms).then(a_index.cmp(b_index)));
    let calls: Vec<Call> = calls.into_iter().map(|(call, _)| call).collect();
    Ok((!calls.is_empty()).then(|| SessionTurns { session_id: session_id.to_string(), calls }))
}

/// A span as the call it replays; `None` for a span that is not an LLM call, that failed, or
/// that used no tokens.
fn replayable_call(span: &Value) -> Result<Option<Call>, String> {
    let empty = Map::new();
    let attributes = span.get("attributes").and_then(Value::as_object).unwrap_or(&empty);
    let attribute = |key: &str| attributes.get(key).filter(|value| !value.is_null());
    let is_llm_call = match span.get("type").filter(|kind| !kind.is_null()) {
        Some(kind) => kind == "llm_call",
        None => attribute("gen_ai.operation.name").is_some_and(|name| name == "chat"),
    };
    let failed = span.get("status").and_then(|status| status.get("code")).and_then(Value::as_i64) == Some(2);
    if !is_llm_call || failed {
        return Ok(None);
    }
    let tokens = |key: &str| attribute(key).and_then(Value::as_i64).ok_or("it has non-integer token counts");
    let (input_tokens, output_tokens) = (tokens("gen_ai.usage.input_tokens")?, tokens("gen_ai.usage.output_tokens")?);
    if input_tokens <= 0 || output_tokens <= 0 {
        return Ok(None);
    }
    let time = |key: &str| {
        let text = span.get(key).and_then(Value::as_str).ok_or_else(|| format!("it has no {key}"))?;
        epoch_ms(text).ok_or_else(|| format!("{key} `{text}` is not an ISO 8601 time"))
    };
    let (start_ms, end_ms) = (time("start_time")?, time("end_time")?);
    if end_ms < start_ms {
        return Err("the span ends before it starts".into());
    }
    let max_tokens = match attribute("gen_ai.request.max_tokens") {
        None => output_tokens as u64,
        Some(value) => {
            value.as_u64().filter(|&limit| limit >= 1).ok_or("gen_ai.request.max_tokens must be a positive integer")?
        }
    };
    let mut messages = match attribute("gen_ai.system_instructions") {
        None => Vec::new(),
        Some(value) => system_messages(value)?,
    };
    messages.extend(input_messages(attribute("gen_ai.input.messages"))?);
    let mut fields = Map::new();
    fields.insert("messages".into(), Value::Array(messages));
    if let Some(tools) = attribute("gen_ai.tool.definitions").map(tool_definitions).transpose()?.flatten() {
        fields.insert("tools".into(), Value::Array(tools));
    }
    if let Some(temperature) = attribute("gen_ai.request.temperature") {
        if !temperature.as_f64().is_some_and(f64::is_finite) {
            return Err("gen_ai.request.temperature must be finite".into());
        }
        fields.insert("temperature".into(), temperature.clone());
    }
    if let Some(stop) = attribute("gen_ai.request.stop_sequences") {
        let sequences = stop.as_array().filter(|sequences| sequences.iter().all(Value::is_string));
        let sequences = sequences.ok_or("gen_ai.request.stop_sequences must be a list of strings")?;
        if !sequences.is_empty() {
            fields.insert("stop".into(), stop.clone());
        }
    }
    Ok(Some(Call { start_ms, end_ms, max_tokens, fields }))
}

/// A JSON array of objects, given as JSON text or as the array itself.
fn object_list(value: &Value, field: &str) -> Result<Vec<Map<String, Value>>, String> {
    let parsed = match value {
        Value::String(text) => {
            serde_json::from_str(text).map_err(|error| format!("{field} is not valid JSON: {error}"))?
        }
        other => other.clone(),
    };
    let objects = parsed.as_array().and_then(|items| items.iter().map(|item| item.as_object().cloned()).collect());
    objects.ok_or_else(|| format!("{field} must be a JSON array of objects"))
}

fn input_messages(value: Option<&Value>) -> Result<Vec<Value>, String> {
    let field = "gen_ai.input.messages";
    let mut messages = Vec::new();
    for message in object_list(value.unwrap_or(&Value::Null), field)? {
        let role = message.get("role").and_then(Value::as_str);
        let parts = message.get("parts").and_then(Value::as_array);
        let (Some(role), Some(parts)) = (role, parts) else {
            return Err("each input message requires a string role and parts array".into());
        };
        messages.extend(chat_messages(role, parts)?);
    }
    if messages.is_empty() {
        return Err(format!("{field} must contain at least one message"));
    }
    Ok(messages)
}

/// The system instructions: parts as a system message, or plain text as one.
fn system_messages(value: &Value) -> Result<Vec<Value>, String> {
    let Some(text) = value.as_str() else { return Err("gen_ai.system_instructions must be a string".into()) };
    if text.is_empty() {
        return Ok(Vec::new());
    }
    match object_list(value, "gen_ai.system_instructions") {
        Ok(parts) => {
            let parts: Vec<Value> = parts.into_iter().map(Value::Object).collect();
            chat_messages("system", &parts)
        }
        Err(_) => Ok(vec![json!({"role": "system", "content": text})]),
    }
}

/// A value sent as text: a string as it is, anything else as compact JSON.
fn json_text(value: Option<&Value>) -> String {
    match value {
        Some(Value::String(text)) => text.clone(),
        Some(other) => other.to_string(),
        None => "null".to_string(),
    }
}

/// One recorded message's parts as chat messages: its text, reasoning and tool calls in one
/// message, each tool result a `tool` message of its own (`developer` is sent as `system`).
fn chat_messages(role: &str, parts: &[Value]) -> Result<Vec<Value>, String> {
    let mut messages = Vec::new();
    let mut pending = Pending::default();
    for part in parts {
        let Some(part) = part.as_object() else { return Err("message parts must be objects".into()) };
        let kind = part.get("type").and_then(Value::as_str);
        let text_of = |key: &str| match part.get(key) {
            None | Some(Value::Null) | Some(Value::Bool(false)) => String::new(),
            Some(value) => json_text(Some(value)),
        };
        match kind {
            Some("tool_call_response") => {
                if !pending.is_empty() {
                    messages.push(pending.take(role));
                }
                messages.push(json!({
                    "role": "tool",
                    "tool_call_id": part.get("id").cloned().unwrap_or(Value::Null),
                    "content": json_text(part.get("result")),
                }));
            }
            Some("text") => pending.content.push_str(&text_of("content")),
            Some("thinking") => pending.reasoning.push_str(&text_of("thinking")),
            Some("tool_call") => pending.tool_calls.push(json!({
                "id": part.get("id").cloned().unwrap_or(Value::Null),
                "type": "function",
                "function": {
                    "name": part.get("name").cloned().unwrap_or(Value::Null),
                    "arguments": json_text(part.get("arguments")),
                },
            })),
            _ => {
                let kind = part.get("type").map_or("None".to_string(), Value::to_string);
                return Err(format!("unsupported `{role}` message part {kind}"));
            }
        }
    }
    if !pending.is_empty() || messages.is_empty() {
        messages.push(pending.take(role));
    }
    Ok(messages)
}

/// A message being gathered from its parts.
#[derive(Default)]
struct Pending {
    content: String,
    reasoning: String,
    tool_calls: Vec<Value>,
}

impl Pending {
    fn is_empty(&self) -> bool {
        self.content.is_empty() && self.reasoning.is_empty() && self.tool_calls.is_empty()
    }

    fn take(&mut self, role: &str) -> Value {
        let Pending { content, reasoning, tool_calls } = std::mem::take(self);
        let mut message = Map::new();
        message.insert("role".into(), Value::from(if role == "developer" { "system" } else { role }));
        message.insert("content".into(), Value::from(content));
        if !reasoning.is_empty() {
            message.insert("reasoning_content".into(), Value::from(reasoning));
        }
        if !tool_calls.is_empty() {
            message.insert("tool_calls".into(), Value::Array(tool_calls));
        }
        Value::Object(message)
    }
}

/// The tool definitions as chat `tools`; `None` when there are none.
fn tool_definitions(value: &Value) -> Result<Option<Vec<Value>>, String> {
    let mut tools = Vec::new();
    for tool in object_list(value, "gen_ai.tool.definitions")? {
        let kind = tool.get("type").cloned().unwrap_or(Value::Null);
        if kind != "function" {
            return Err(format!("unsupported tool type {kind}"));
        }
        let field = |key: &str| tool.get(key).cloned().unwrap_or(Value::Null);
        tools.push(json!({
            "type": "function",
            "function": {"name": field("name"), "description": field("description"), "parameters": field("parameters")},
        }));
    }
    Ok((!tools.is_empty()).then_some(tools))
}

impl SessionTurns {
    /// The session's turns: each sent as recorded after the gap between the previous call's end
    /// and its start (none when they overlap), with the session's id in `x-dynamo-session-id`.
    fn entries(self, tokenizer: &Tokenizer) -> Result<Vec<DatasetEntry>, String> {
        let session_value = HeaderValue::from_str(&self.session_id)
            .map_err(|_| format!("session_id `{}` cannot be sent as a header value", self.session_id))?;
        let mut headers = HeaderMap::new();
        headers.insert(SESSION_HEADER, session_value);
        let mut previous_end_ms = None;
        let mut entries = Vec::with_capacity(self.calls.len());
        for (index, call) in self.calls.into_iter().enumerate() {
            let delay_ms = previous_end_ms.map(|end_ms: f64| (call.start_ms - end_ms).max(0.0));
            previous_end_ms = Some(call.end_ms);
            let text = counted_text(&Value::Object(call.fields.clone()));
            let mut entry = DatasetEntry::counted(tokenizer, text, Some(call.max_tokens));
            entry.turn = Some(FileTurn { index: index as u32, delay_ms, timestamp_ms: None });
            entry.own_body = Some(OwnBody::Snapshot { fields: call.fields, headers: headers.clone() });
            entries.push(entry);
        }
        Ok(entries)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_become_chat_messages_as_aiperf_normalises_them() {
        let parts = json!([
            {"type": "thinking", "thinking": "plan"},
            {"type": "text", "content": "calling"},
            {"type": "tool_call", "id": "c1", "name": "ls", "arguments": {"path": "/"}},
            {"type": "tool_call_response", "id": "c1", "result": ["a", "b"]},
            {"type": "text", "content": "done"},
        ]);
        let messages = chat_messages("assistant", parts.as_array().unwrap()).unwrap();
        assert_eq!(
            Value::Array(messages),
            json!([
                {"role": "assistant", "content": "calling", "reasoning_content": "plan", "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "ls", "arguments": "{\"path\":\"/\"}"}}]},
                {"role": "tool", "tool_call_id": "c1", "content": "[\"a\",\"b\"]"},
                {"role": "assistant", "content": "done"},
            ])
        );
        assert_eq!(chat_messages("developer", &[]).unwrap(), [json!({"role": "system", "content": ""})]);
        let error = chat_messages("user", &[json!({"type": "image"})]).unwrap_err();
        assert_eq!(error, "unsupported `user` message part \"image\"");
    }

    #[test]
    fn system_instructions_are_parts_or_plain_text() {
        assert_eq!(system_messages(&json!("Be brief.")).unwrap(), [json!({"role": "system", "content": "Be brief."})]);
        let parts = json!("[{\"type\": \"text\", \"content\": \"Be \"}, {\"type\": \"text\", \"content\": \"kind.\"}]");
        assert_eq!(system_messages(&parts).unwrap(), [json!({"role": "system", "content": "Be kind."})]);
        assert!(system_messages(&json!("")).unwrap().is_empty());
        assert!(system_messages(&json!(3)).is_err());
    }

    #[test]
    fn filters_are_checked_against_the_release() {
        let v1 = Release { missing_pairs: &V1_MISSING_PAIRS, has_benchmarks: false };
        let v2 = Release { missing_pairs: &V2_MISSING_PAIRS, has_benchmarks: true };
        let given = |pairs: &[(&str, &str)]| pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        let filters =
            Filters::parse(&given(&[("source_model", "Azure/GPT-4.1"), ("harness", "Claude_Code")]), v1).unwrap();
        assert_eq!((filters.harness, filters.source_model), (Some("claude_code"), Some("gpt-4.1")));
        let error = Filters::parse(&given(&[("benchmark", "swebench")]), v1).err().unwrap().to_string();
        assert!(error.contains("only supported for Exgentic v2 traces"), "{error}");
        assert_eq!(Filters::parse(&given(&[("benchmark", "SWEBench")]), v2).unwrap().benchmark, Some("swebench"));
        let error =
            Filters::parse(&given(&[("harness", "claude_code"), ("source_model", "gpt-4.1")]), v2).err().unwrap();
        assert!(
            error.to_string().contains("available source models for this harness: DeepSeek-V3.2, Kimi-K2.5"),
            "{error}"
        );
        let error = Filters::parse(&given(&[("task", "x")]), v2).err().unwrap().to_string();
        assert!(error.contains("no filter `task`") && error.contains("benchmark=[appworld"), "{error}");
        assert!(Filters::parse(&given(&[("harness", "nope")]), v2).is_err());
    }
}
