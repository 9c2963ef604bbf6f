//! Reads a generation request body (OpenAI chat or completions here; Responses API and TGI
//! in their own files, the shared pieces in request.rs) into what the mock needs: model, prompt, streaming options, the
//! number of tokens to generate and how many of them a chat answer reasons for.

use serde::Deserialize;
use serde_json::Value;

use super::request::{
    Endpoint, GenerationRequest, PromptInput, WireMessage, chat_prompt, checked_output_tokens, effort_reasoning_tokens,
    offered_tools, parse_json,
};

#[derive(Deserialize)]
struct WireRequest {
    model: Option<String>,
    messages: Option<Vec<WireMessage>>,
    prompt: Option<Value>,
    stream: Option<bool>,
    stream_options: Option<WireStreamOptions>,
    max_tokens: Option<u64>,
    max_completion_tokens: Option<u64>,
    /// The tools a chat request offers: a server's chat template renders them into the prompt.
    tools: Option<Value>,
    /// OpenAI's `"low" | "medium" | "high" | "minimal" | "none"`: how long a reasoning model
    /// reasons first.
    reasoning_effort: Option<String>,
    /// vLLM's and SGLang's arguments to the chat template, whose `enable_thinking` (Qwen3) or
    /// `thinking` (DeepSeek) switches a thinking model's reasoning on or off.
    chat_template_kwargs: Option<Value>,
}

#[derive(Deserialize)]
struct WireStreamOptions {
    include_usage: Option<bool>,
    continuous_usage_stats: Option<bool>,
}

/// Parse a request body; the error is a message for a 400 reply.
pub fn parse(endpoint: Endpoint, body: &[u8]) -> Result<GenerationRequest, String> {
    let wire: WireRequest = match endpoint {
        Endpoint::Responses => return super::responses_api::parse(body),
        Endpoint::Tgi { stream } => return super::tgi::parse(body, stream),
        Endpoint::Messages => return super::messages_api::parse(body),
        Endpoint::SolidoRag { stream } => return super::solido_rag::parse(body, stream),
        Endpoint::Chat | Endpoint::Completions => parse_json(body)?,
    };
    let thinking_tokens = if endpoint == Endpoint::Chat { chat_reasoning_tokens(&wire) } else { 0 };
    let prompt = match endpoint {
        Endpoint::Chat => {
            let mut prompt = chat_prompt(wire.messages.ok_or("missing field `messages`")?)?;
            prompt.tools = offered_tools(wire.tools.as_ref());
            prompt
        }
        _ => completion_prompt(&wire.prompt.ok_or("missing field `prompt`")?)?,
    };
    let output_tokens = checked_output_tokens(wire.max_completion_tokens.or(wire.max_tokens))?;
    Ok(GenerationRequest {
        model: wire.model,
        prompt,
        stream: wire.stream.unwrap_or(false),
        include_usage: wire.stream_options.as_ref().and_then(|options| options.include_usage).unwrap_or(false),
        continuous_usage: wire.stream_options.and_then(|options| options.continuous_usage_stats).unwrap_or(false),
        output_tokens,
        thinking_tokens,
        prompt_caching: true,
    })
}

/// The tokens a chat request asks the mock to reason for: by its `reasoning_effort`, else the
/// default effort's when its chat template's thinking switch is on, else none.
fn chat_reasoning_tokens(wire: &WireRequest) -> u64 {
    if let Some(effort) = &wire.reasoning_effort {
        return effort_reasoning_tokens(Some(effort));
    }
    let kwargs = wire.chat_template_kwargs.as_ref();
    let switch = kwargs.and_then(|kwargs| kwargs.get("enable_thinking").or_else(|| kwargs.get("thinking")));
    if switch.and_then(Value::as_bool) == Some(true) { effort_reasoning_tokens(None) } else { 0 }
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
                    Value::Number(id) => input.token_ids.push(token_id(id)),
                    Value::Array(ids) if ids.iter().all(Value::is_number) => {
                        input.token_ids.extend(ids.iter().filter_map(Value::as_number).map(token_id))
                    }
                    _ => return Err(malformed()),
                }
            }
        }
        _ => return Err(malformed()),
    }
    Ok(input)
}

/// A token id as sent; one that no vocabulary has (negative, fractional, huge) still counts as
/// a token, under a stand-in id.
fn token_id(id: &serde_json::Number) -> u32 {
    id.as_u64().and_then(|id| u32::try_from(id).ok()).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::dataset::input_texts::input_texts;
    use crate::dataset::tokenizer::Tokenizer;

    #[test]
    fn chat_reads_string_and_part_contents_and_prefers_max_completion_tokens() {
        let body = br#"{"model":"m","messages":[{"role":"system","content":"be brief"},
            {"role":"user","content":[{"type":"text","text":"hello"},{"type":"image_url","image_url":{"url":"data:image/png;base64,AAAA"}}]}],
            "stream":true,"stream_options":{"include_usage":true},"max_tokens":5,"max_completion_tokens":9,"ignore_eos":true}"#;
        let request = parse(Endpoint::Chat, body).unwrap();
        assert_eq!(request.model.as_deref(), Some("m"));
        assert_eq!(request.prompt.texts, ["be brief", "hello"]);
        assert!(request.stream && request.include_usage);
        assert_eq!(request.output_tokens, Some(9));
    }

    #[test]
    fn a_chat_request_reasons_by_its_effort_or_its_chat_template_s_thinking_switch() {
        let reasoning = |members: &str| {
            let body = format!(r#"{{"messages":[{{"role":"user","content":"q"}}]{members}}}"#);
            parse(Endpoint::Chat, body.as_bytes()).unwrap().thinking_tokens
        };
        assert_eq!(reasoning(""), 0);
        assert_eq!(reasoning(r#","reasoning_effort":"low""#), 16);
        assert_eq!(reasoning(r#","reasoning_effort":"high""#), 256);
        assert_eq!(reasoning(r#","reasoning_effort":"none","chat_template_kwargs":{"enable_thinking":true}"#), 0);
        assert_eq!(reasoning(r#","chat_template_kwargs":{"enable_thinking":true}"#), 64);
        assert_eq!(reasoning(r#","chat_template_kwargs":{"thinking":true}"#), 64);
        assert_eq!(reasoning(r#","chat_template_kwargs":{"enable_thinking":false}"#), 0);
        let completion = parse(Endpoint::Completions, br#"{"prompt":"q","reasoning_effort":"high"}"#).unwrap();
        assert_eq!(completion.thinking_tokens, 0, "completions never reason");
    }

    #[test]
    fn a_chat_request_s_tools_open_its_prompt_as_a_chat_template_renders_them() {
        let body = br#"{"messages":[{"role":"user","content":"find x"}],
            "tools":[{"type":"function","function":{"name":"search","description":"Looks up.","parameters":{"type":"object"}}}]}"#;
        let request = parse(Endpoint::Chat, body).unwrap();
        assert_eq!(request.prompt.texts, ["find x"]);
        assert_eq!(request.prompt.tools.as_deref(), Some("search Looks up. {\"type\":\"object\"}"));
        let tokenizer = Tokenizer::shared_builtin();
        let sequence = request.prompt.token_sequence(&tokenizer);
        assert_eq!(sequence[..tokenizer.encode_in_pieces("search").len()], tokenizer.encode_in_pieces("search")[..]);
    }

    #[test]
    fn completions_accept_strings_and_token_ids() {
        let request = parse(Endpoint::Completions, br#"{"prompt":["a b","c"],"max_tokens":3}"#).unwrap();
        assert_eq!(request.prompt.texts, vec!["a b".to_string(), "c".to_string()]);
        assert!(!request.stream);
        let request = parse(Endpoint::Completions, br#"{"prompt":[[1,2,3],[4]]}"#).unwrap();
        assert_eq!(request.prompt.token_ids, [1, 2, 3, 4]);
        assert_eq!(request.output_tokens, None);
    }

    /// The mock's usage agrees with the client's count (AIPerf's: the texts joined by spaces,
    /// tools last), so a run against it reports no usage discrepancy, however short the texts.
    #[test]
    fn a_chat_prompt_counts_as_the_client_counts_it() {
        let tokenizer = Tokenizer::shared_builtin();
        let call =
            json!({"id": "c", "type": "function", "function": {"name": "search", "arguments": "{\"q\":\"ountain\"}"}});
        let tool = json!({"type": "function", "function": {"name": "search", "description": "ountain finder", "parameters": {"type": "object"}}});
        let bodies = [
            json!({"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "ountain"},
                                {"role": "user", "content": "ountain ok"}]}),
            json!({"messages": [{"role": "system", "content": ""}, {"role": "user", "content": "ountain"}]}),
            json!({"messages": [{"role": "user", "content": "find it"}, {"role": "assistant", "content": null, "tool_calls": [call]},
                                {"role": "tool", "tool_call_id": "c", "content": "ountain"}], "tools": [tool]}),
            json!({"messages": [{"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "ountain"}]}]}),
            json!({"messages": [{"role": "user", "content": "a"},
                                {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}]},
                                {"role": "user", "content": "ountain"}]}),
            json!({"messages": [{"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "reasoning", "text": "ountain"}]}]}),
        ];
        for body in bodies {
            let client = tokenizer.count(&input_texts(&body).join(" ")) as u64;
            let mock = parse(Endpoint::Chat, body.to_string().as_bytes()).unwrap().prompt.token_count(&tokenizer);
            assert_eq!(mock, client, "{body}");
        }
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
    fn audio_parts_are_accepted_and_malformed_ones_refused() {
        let with_audio = br#"{"messages":[{"role":"user","content":[{"type":"text","text":"hear this"},
            {"type":"input_audio","input_audio":{"data":"UklGRg==","format":"wav"}}]}]}"#;
        assert_eq!(parse(Endpoint::Chat, with_audio).unwrap().prompt.texts, ["hear this"]);
        for bad in [r#"{"data":"","format":"wav"}"#, r#"{"data":"UklGRg==","format":"flac"}"#, r#"{"data":"%%"}"#] {
            let body = format!(
                r#"{{"messages":[{{"role":"user","content":[{{"type":"input_audio","input_audio":{bad}}}]}}]}}"#
            );
            let error = parse(Endpoint::Chat, body.as_bytes()).unwrap_err();
            assert!(error.contains("messages[0].content[0]: an input_audio part"), "{bad}: {error}");
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
