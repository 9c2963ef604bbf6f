//! What a generation request asks for (endpoint, prompt, output length) and what its reply
//! reports (usage), with the request-reading helpers every API shape shares.

use std::borrow::Cow;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde::Deserialize;
use serde_json::Value;

use super::text_ids::TextIds;
use super::video_parts::video_part_problem;
use crate::dataset::input_texts::{part_texts, tool_texts};
use crate::dataset::tokenizer::Tokenizer;

/// The most tokens one request may ask for (keeps a zero-delay response buffer bounded).
pub const MAX_OUTPUT_TOKENS: u64 = 262_144;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Endpoint {
    Chat,
    Completions,
    /// OpenAI's Responses API (`responses_api.rs`).
    Responses,
    /// HF TGI `/generate` or, with `stream`, `/generate_stream` (`tgi.rs`).
    Tgi {
        stream: bool,
    },
    /// Anthropic's Messages API (`messages_api.rs`).
    Messages,
    /// SOLIDO RAG, streamed when the client accepts an event stream (`solido_rag.rs`).
    SolidoRag {
        stream: bool,
    },
}

#[derive(Debug)]
pub struct GenerationRequest {
    /// The model named in the request, if any.
    pub model: Option<String>,
    pub prompt: PromptInput,
    pub stream: bool,
    pub include_usage: bool,
    /// Usage on every streamed chunk too (`stream_options.continuous_usage_stats`, vLLM's).
    pub continuous_usage: bool,
    pub output_tokens: Option<u64>,
    /// How many of the first output tokens are thinking or reasoning (0 unless asked for).
    pub thinking_tokens: u64,
    /// Whether the prompt goes through the prefix cache: always, except a Messages API request
    /// that marks no `cache_control` breakpoint (Anthropic caches only what is marked).
    pub prompt_caching: bool,
}

/// The prompt as sent: texts to tokenize, plus tokens sent already as ids.
#[derive(Debug, Default)]
pub struct PromptInput {
    pub texts: Vec<String>,
    /// The offered tools' texts: read ahead of the texts (where a chat template renders them),
    /// counted after them (where AIPerf's client counts them).
    pub tools: Option<String>,
    pub token_ids: Vec<u32>,
    /// Chat `video_url` parts, each checked (`video_parts.rs`).
    pub videos: u64,
}

impl PromptInput {
    pub fn from_texts(texts: Vec<String>) -> Self {
        Self { texts, ..Self::default() }
    }

    pub fn text_bytes(&self) -> usize {
        self.texts.iter().chain(&self.tools).map(String::len).sum()
    }

    /// The prompt's tokens: its texts joined by spaces, counted whole (as AIPerf's client and
    /// this project's count a body of several texts, so a run against the mock finds its usage
    /// equal to its own count), and the ids sent as ids.
    pub fn token_count(&self, tokenizer: &Tokenizer) -> u64 {
        self.token_ids.len() as u64 + tokenizer.count(&self.joined_texts()) as u64
    }

    /// The whole prompt as one token sequence, as a server's chat template reads it: the tools,
    /// each text apart, then the ids sent as ids.
    pub fn token_sequence(&self, tokenizer: &Tokenizer) -> Vec<u32> {
        let mut tokens = Vec::new();
        for text in self.tools.iter().chain(&self.texts) {
            tokenizer.extend_ids_by_chunks(text, &mut tokens);
        }
        tokens.extend_from_slice(&self.token_ids);
        tokens
    }

    /// The prompt's token sequence (`token_sequence`) and its count (`token_count`), from one
    /// tokenization (each long text's ids remembered in `text_ids`): the texts' own ids, each
    /// text after the first of the join with what the space changes in it
    /// (`Tokenizer::join_delta`), where every text is counted whole; else counted apart.
    pub fn token_sequence_and_count(&self, tokenizer: &Tokenizer, text_ids: &TextIds) -> (Vec<u32>, u64) {
        if !self.texts.iter().chain(&self.tools).all(|text| tokenizer.counts_whole(text)) {
            return (self.token_sequence(tokenizer), self.token_count(tokenizer));
        }
        let mut tokens = Vec::new();
        for text in self.tools.iter().chain(&self.texts) {
            text_ids.extend(tokenizer, text, &mut tokens);
        }
        let joined_after_first = self.texts.iter().chain(&self.tools).skip(1);
        let deltas: i64 = joined_after_first.map(|text| tokenizer.join_delta(text)).sum();
        let count = (tokens.len() as u64).saturating_add_signed(deltas) + self.token_ids.len() as u64;
        tokens.extend_from_slice(&self.token_ids);
        (tokens, count)
    }

    /// The texts, then the tools, joined by spaces.
    fn joined_texts(&self) -> Cow<'_, str> {
        match (self.texts.as_slice(), &self.tools) {
            ([text], None) => Cow::Borrowed(text),
            (texts, tools) => Cow::Owned(texts.iter().chain(tools).map(String::as_str).collect::<Vec<_>>().join(" ")),
        }
    }
}

#[derive(Debug, Clone, Copy)]
pub struct Usage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    /// The prefix cache's part in the prompt; `None` when the mock runs without one.
    pub prompt_cache: Option<PromptCacheUse>,
}

/// What the prefix cache did for one prompt, in tokens.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PromptCacheUse {
    /// Prompt tokens found cached (a whole-block prefix): not computed again.
    pub read_tokens: u64,
    /// Prompt tokens of the whole blocks newly stored in the cache.
    pub written_tokens: u64,
}

#[derive(Deserialize)]
pub struct WireMessage {
    content: Option<Value>,
    /// An assistant turn's tool calls: the prompt holds each one's name and arguments.
    #[serde(default)]
    tool_calls: Option<Vec<Value>>,
}

impl WireMessage {
    pub fn content(&self) -> Option<&Value> {
        self.content.as_ref()
    }

    /// Whether a content part carries an Anthropic `cache_control` breakpoint.
    pub fn marks_cache_breakpoint(&self) -> bool {
        has_cache_control(self.content.as_ref())
    }
}

/// Whether `blocks` is a list of content blocks one of which has a `cache_control`.
pub fn has_cache_control(blocks: Option<&Value>) -> bool {
    blocks
        .and_then(Value::as_array)
        .is_some_and(|blocks| blocks.iter().any(|block| block.get("cache_control").is_some()))
}

/// A request body as `T`; the error is a message for a 400 reply.
pub fn parse_json<'a, T: Deserialize<'a>>(body: &'a [u8]) -> Result<T, String> {
    serde_json::from_slice(body).map_err(|error| format!("invalid JSON body: {error}"))
}

/// The requested output length, if it is within what the mock serves.
pub fn checked_output_tokens(requested: Option<u64>) -> Result<Option<u64>, String> {
    match requested {
        Some(requested) if !(1..=MAX_OUTPUT_TOKENS).contains(&requested) => {
            Err(format!("max tokens must be between 1 and {MAX_OUTPUT_TOKENS}, got {requested}"))
        }
        requested => Ok(requested),
    }
}

/// The tokens the mock reasons for before it answers, by the `effort` a request names (OpenAI's
/// Responses `reasoning.effort` and chat `reasoning_effort`): 16 for `low`, 64 for `medium` or
/// an effort it does not know, 256 for `high`, none for `minimal` or `none`.
pub fn effort_reasoning_tokens(effort: Option<&str>) -> u64 {
    match effort {
        Some("none" | "minimal") => 0,
        Some("low") => 16,
        Some("high") => 256,
        _ => 64,
    }
}

/// Chat: the text of every message (the `text` of its parts of a text type, joined with spaces)
/// and the name and arguments of the tool calls it makes, each a text of its own, as a client
/// counts them.
pub fn chat_prompt(messages: Vec<WireMessage>) -> Result<PromptInput, String> {
    let mut parts = Vec::with_capacity(messages.len());
    let mut videos = 0;
    for (index, WireMessage { content, tool_calls }) in messages.into_iter().enumerate() {
        match content {
            None | Some(Value::Null) => {}
            Some(Value::String(text)) => parts.push(text),
            Some(Value::Array(content_parts)) => {
                if let Some(bad) = content_parts.iter().position(|part| !is_valid_image_part(part)) {
                    return Err(format!(
                        "messages[{index}].content[{bad}]: an image_url part needs image_url.url, a data:image/…;base64 \
                         URL or an http(s) URL (or an empty one with a uuid)"
                    ));
                }
                if let Some(bad) = content_parts.iter().position(|part| !is_valid_audio_part(part)) {
                    return Err(format!(
                        "messages[{index}].content[{bad}]: an input_audio part needs input_audio.data (base64) and \
                         input_audio.format (wav or mp3)"
                    ));
                }
                if let Some((bad, problem)) =
                    content_parts.iter().enumerate().find_map(|(at, part)| Some((at, video_part_problem(part)?)))
                {
                    return Err(format!("messages[{index}].content[{bad}]: {problem}"));
                }
                videos += content_parts.iter().filter(|part| part["type"] == "video_url").count() as u64;
                let texts: Vec<Cow<str>> = part_texts(&content_parts).collect();
                // A message of media alone holds no text (nor a space in the join).
                if !texts.is_empty() {
                    parts.push(texts.join(" "));
                }
            }
            Some(_) => return Err(format!("messages[{index}].content must be a string or an array of content parts")),
        }
        let calls: Vec<String> = tool_calls.iter().flatten().map(tool_call_text).collect();
        if !calls.is_empty() {
            parts.push(calls.join(" "));
        }
    }
    Ok(PromptInput { videos, ..PromptInput::from_texts(parts) })
}

/// The texts of a request's offered `tools` (each one's name, description and parameters, as
/// the client counts them), joined; None without any.
pub fn offered_tools(tools: Option<&Value>) -> Option<String> {
    let texts = tools.map(tool_texts).unwrap_or_default();
    (!texts.is_empty()).then(|| texts.join(" "))
}

/// A tool call as the prompt holds it: its function's name, then its arguments.
fn tool_call_text(call: &Value) -> String {
    let function = &call["function"];
    let arguments = match &function["arguments"] {
        Value::String(text) => Cow::Borrowed(text.as_str()),
        Value::Null => Cow::Borrowed(""),
        other => Cow::Owned(other.to_string()),
    };
    let name = function["name"].as_str().unwrap_or_default();
    [name, &arguments].into_iter().filter(|text| !text.is_empty()).collect::<Vec<_>>().join(" ")
}

/// Anything but an `input_audio` part passes; that one needs base64 data and a wav or mp3 format.
fn is_valid_audio_part(part: &Value) -> bool {
    if part.get("type").and_then(Value::as_str) != Some("input_audio") {
        return true;
    }
    let data = part.pointer("/input_audio/data").and_then(Value::as_str).unwrap_or_default();
    let format = part.pointer("/input_audio/format").and_then(Value::as_str);
    matches!(format, Some("wav" | "mp3")) && !data.is_empty() && BASE64.decode(data).is_ok()
}

/// Anything but an `image_url` part passes; that one needs a base64 data URL of an image or a web
/// URL, or an empty URL with a `uuid` (vLLM's reference to an image its cache holds).
fn is_valid_image_part(part: &Value) -> bool {
    if part.get("type").and_then(Value::as_str) != Some("image_url") {
        return true;
    }
    let url = part.pointer("/image_url/url").and_then(Value::as_str).unwrap_or_default();
    let cache_id = part.get("uuid").and_then(Value::as_str).unwrap_or_default();
    if url.is_empty() && !cache_id.is_empty() {
        return true;
    }
    match url.strip_prefix("data:image/") {
        Some(rest) => rest.split_once(";base64,").is_some_and(|(_, data)| !data.is_empty()),
        None => url.starts_with("http://") || url.starts_with("https://"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chat_prompt_holds_the_messages_texts_and_the_tool_calls_names_and_arguments() {
        let messages: Vec<WireMessage> = serde_json::from_str(
            r#"[{"role":"user","content":"find x"},
                {"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"search","arguments":"{\"q\":\"x\"}"}}]},
                {"role":"tool","tool_call_id":"c","content":"x is 1"},
                {"role":"assistant","content":"done","tool_calls":null}]"#,
        )
        .unwrap();
        let prompt = chat_prompt(messages).unwrap();
        assert_eq!(prompt.texts, ["find x", "search {\"q\":\"x\"}", "x is 1", "done"]);
    }

    #[test]
    fn a_prompt_s_sequence_and_count_from_one_tokenization_are_those_counted_apart() {
        let tokenizer = Tokenizer::builtin();
        let texts = |texts: &[&str]| texts.iter().map(|text| text.to_string()).collect::<Vec<_>>();
        let long = "word ".repeat(20_000);
        let text_ids = TextIds::default();
        let tool_output = "The tool found this. ".repeat(60);
        for prompt in [
            PromptInput {
                texts: texts(&["Hello there, it's 2024!", "  Tabs\tand\nnew lines \u{3000}wide"]),
                ..Default::default()
            },
            PromptInput {
                texts: texts(&["", " leading", "trailing  ", "ümlaut café", "", "x"]),
                token_ids: vec![5, 6],
                ..Default::default()
            },
            PromptInput {
                texts: texts(&["a"]),
                tools: Some("search Looks it up. object".into()),
                ..Default::default()
            },
            PromptInput { texts: texts(&["\nx"]), tools: Some("y".into()), ..Default::default() },
            PromptInput { texts: Vec::new(), tools: Some(" tools alone".into()), ..Default::default() },
            PromptInput { texts: texts(&["before", &long, "after"]), ..Default::default() },
            PromptInput { texts: texts(&["ask", &tool_output, "go on"]), ..Default::default() },
            PromptInput { texts: texts(&["ask", &tool_output, "go on", &tool_output]), ..Default::default() },
        ] {
            let (sequence, count) = prompt.token_sequence_and_count(&tokenizer, &text_ids);
            assert_eq!(sequence, prompt.token_sequence(&tokenizer), "{prompt:?}");
            assert_eq!(count, prompt.token_count(&tokenizer), "{prompt:?}");
        }
    }
}
