//! Reads a generation request body (OpenAI chat or completions here; Responses API and TGI
//! in their own files) into what the mock needs: model, prompt, streaming options and the
//! number of tokens to generate.

use serde::Deserialize;
use serde_json::Value;

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
}

#[derive(Debug)]
pub struct GenerationRequest {
    /// The model named in the request, if any.
    pub model: Option<String>,
    pub prompt: PromptInput,
    pub stream: bool,
    pub include_usage: bool,
    pub output_tokens: Option<u64>,
}

/// The prompt as sent: texts to tokenize, plus tokens sent already as ids.
#[derive(Debug, Default)]
pub struct PromptInput {
    pub texts: Vec<String>,
    pub token_ids: u64,
}

impl PromptInput {
    pub fn text_bytes(&self) -> usize {
        self.texts.iter().map(String::len).sum()
    }

    pub fn token_count(&self, tokenizer: &Tokenizer) -> u64 {
        self.token_ids + self.texts.iter().map(|text| tokenizer.count(text) as u64).sum::<u64>()
    }
}

#[derive(Deserialize)]
struct WireRequest {
    model: Option<String>,
    messages: Option<Vec<WireMessage>>,
    prompt: Option<Value>,
    stream: Option<bool>,
    stream_options: Option<WireStreamOptions>,
    max_tokens: Option<u64>,
    max_completion_tokens: Option<u64>,
}

#[derive(Deserialize)]
pub struct WireMessage {
    content: Option<Value>,
}

#[derive(Deserialize)]
struct WireStreamOptions {
    include_usage: Option<bool>,
}

/// Parse a request body; the error is a message for a 400 reply.
pub fn parse(endpoint: Endpoint, body: &[u8]) -> Result<GenerationRequest, String> {
    let wire: WireRequest = match endpoint {
        Endpoint::Responses => return super::responses_api::parse(body),
        Endpoint::Tgi { stream } => return super::tgi::parse(body, stream),
        Endpoint::Chat | Endpoint::Completions => parse_json(body)?,
    };
    let prompt = match endpoint {
        Endpoint::Chat => chat_prompt(wire.messages.ok_or("missing field `messages`")?)?,
        _ => completion_prompt(&wire.prompt.ok_or("missing field `prompt`")?)?,
    };
    let output_tokens = checked_output_tokens(wire.max_completion_tokens.or(wire.max_tokens))?;
    Ok(GenerationRequest {
        model: wire.model,
        prompt,
        stream: wire.stream.unwrap_or(false),
        include_usage: wire.stream_options.and_then(|options| options.include_usage).unwrap_or(false),
        output_tokens,
    })
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

/// Chat: the text of every message, joined with newlines.
pub fn chat_prompt(messages: Vec<WireMessage>) -> Result<PromptInput, String> {
    let mut parts = Vec::with_capacity(messages.len());
    for (index, message) in messages.into_iter().enumerate() {
        match message.content {
            None | Some(Value::Null) => {}
            Some(Value::String(text)) => parts.push(text),
            Some(Value::Array(content_parts)) => {
                if let Some(bad) = content_parts.iter().position(|part| !is_valid_image_part(part)) {
                    return Err(format!(
                        "messages[{index}].content[{bad}]: an image_url part needs image_url.url, a data:image/…;base64 \
                         URL or an http(s) URL"
                    ));
                }
                let texts: Vec<&str> =
                    content_parts.iter().filter_map(|part| part.get("text").and_then(Value::as_str)).collect();
                parts.push(texts.join("\n"));
            }
            Some(_) => return Err(format!("messages[{index}].content must be a string or an array of content parts")),
        }
    }
    Ok(PromptInput { texts: vec![parts.join("\n")], token_ids: 0 })
}

/// Anything but an `image_url` part passes; that one needs a base64 data URL of an image or a web URL.
fn is_valid_image_part(part: &Value) -> bool {
    if part.get("type").and_then(Value::as_str) != Some("image_url") {
        return true;
    }
    let url = part.pointer("/image_url/url").and_then(Value::as_str).unwrap_or_default();
    match url.strip_prefix("data:image/") {
        Some(rest) => rest.split_once(";base64,").is_some_and(|(_, data)| !data.is_empty()),
        None => url.starts_with("http://") || url.starts_with("https://"),
    }
}

/// Completions: a string, an array of strings, an array of token ids, or an array of those.
fn completion_prompt(prompt: &Value) -> Result<PromptInput, String> {
    let mut input = PromptInput::default();
    let malformed = || "prompt must be a string, an array of strings, or token ids".to_string();
    match prompt {
        Value::String(text) => input.texts.push(text.clone()),
        Value::Array(items) => {
            for item in items {
                match item {
                    Value::String(text) => input.texts.push(text.clone()),
                    Value::Number(_) => input.token_ids += 1,
                    Value::Array(ids) if ids.iter().all(Value::is_number) => input.token_ids += ids.len() as u64,
                    _ => return Err(malformed()),
                }
            }
        }
        _ => return Err(malformed()),
    }
    Ok(input)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chat_reads_string_and_part_contents_and_prefers_max_completion_tokens() {
        let body = br#"{"model":"m","messages":[{"role":"system","content":"be brief"},
            {"role":"user","content":[{"type":"text","text":"hello"},{"type":"image_url","image_url":{"url":"data:image/png;base64,AAAA"}}]}],
            "stream":true,"stream_options":{"include_usage":true},"max_tokens":5,"max_completion_tokens":9,"ignore_eos":true}"#;
        let request = parse(Endpoint::Chat, body).unwrap();
        assert_eq!(request.model.as_deref(), Some("m"));
        assert_eq!(request.prompt.texts, vec!["be brief\nhello".to_string()]);
        assert!(request.stream && request.include_usage);
        assert_eq!(request.output_tokens, Some(9));
    }

    #[test]
    fn completions_accept_strings_and_token_ids() {
        let request = parse(Endpoint::Completions, br#"{"prompt":["a b","c"],"max_tokens":3}"#).unwrap();
        assert_eq!(request.prompt.texts, vec!["a b".to_string(), "c".to_string()]);
        assert!(!request.stream);
        let request = parse(Endpoint::Completions, br#"{"prompt":[[1,2,3],[4]]}"#).unwrap();
        assert_eq!(request.prompt.token_ids, 4);
        assert_eq!(request.output_tokens, None);
    }

    #[test]
    fn image_parts_are_accepted_and_malformed_ones_refused() {
        let with_image = br#"{"messages":[{"role":"user","content":[{"type":"text","text":"what is this"},
            {"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo="}}]}]}"#;
        let request = parse(Endpoint::Chat, with_image).unwrap();
        assert_eq!(request.prompt.texts, ["what is this"]);
        let web =
            br#"{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"https://x/y.png"}}]}]}"#;
        assert!(parse(Endpoint::Chat, web).is_ok());
        for bad in [r#"{"url":"data:image/png;base64,"}"#, r#"{"url":"ftp://x"}"#, r#"{}"#] {
            let body =
                format!(r#"{{"messages":[{{"role":"user","content":[{{"type":"image_url","image_url":{bad}}}]}}]}}"#);
            let error = parse(Endpoint::Chat, body.as_bytes()).unwrap_err();
            assert!(error.contains("messages[0].content[0]"), "{bad}: {error}");
        }
    }

    #[test]
    fn malformed_requests_name_the_problem() {
        assert!(parse(Endpoint::Chat, b"{not json").unwrap_err().starts_with("invalid JSON body"));
        assert!(parse(Endpoint::Chat, b"{}").unwrap_err().contains("messages"));
        assert!(parse(Endpoint::Completions, b"{}").unwrap_err().contains("prompt"));
        assert!(parse(Endpoint::Completions, br#"{"prompt":{}}"#).unwrap_err().contains("prompt must be"));
        assert!(parse(Endpoint::Chat, br#"{"messages":[{"content":5}]}"#).unwrap_err().contains("messages[0]"));
        assert!(parse(Endpoint::Chat, br#"{"messages":[],"max_tokens":0}"#).unwrap_err().contains("max tokens"));
        assert!(parse(Endpoint::Chat, br#"{"messages":[],"max_tokens":"x"}"#).unwrap_err().contains("invalid type"));
    }
}
