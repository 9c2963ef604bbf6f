//! Writes the response text of one generation: SSE chunks for streaming, or the whole JSON
//! body, in OpenAI's chat and completions shapes (the Responses API and TGI shapes come from
//! their own files). A chat answer asked to reason sends its first tokens as
//! `reasoning_content`, as vLLM's and SGLang's reasoning parsers do.

use std::borrow::Cow;
use std::fmt::Write;

use super::request::{Endpoint, PromptCacheUse, Usage};
use super::{messages_api, responses_api, solido_rag, tgi, tool_calls, words};

/// The fixed parts of one response (id, created, model), pre-rendered once per request.
pub struct ResponseWriter {
    endpoint: Endpoint,
    /// `{"id":…,"object":…,"created":…,"model":…,"choices":` for streamed chunks.
    chunk_head: String,
    /// The same head for the non-streaming body.
    whole_head: String,
    /// The request's prompt tokens, the cache's part in them (for the Messages API's events)
    /// and how many of the first output tokens are thinking or reasoning.
    prompt_tokens: u64,
    prompt_cache: Option<PromptCacheUse>,
    thinking_tokens: u64,
    /// TGI: the answer carries `details` (the generated token count), asked for by the request.
    reports_usage: bool,
    /// `"metrics":{…}` members for the response root (vLLM's per-request speculative decoding
    /// metrics), chat and completions only.
    root_metrics: Option<String>,
    /// The tool call the answer makes instead of text (`tool_calls.rs`): the tool's name and
    /// the call's step.
    tool_call: Option<(String, u64)>,
}

impl ResponseWriter {
    pub fn new(endpoint: Endpoint, id: &str, created_epoch_s: u64, model: &str) -> Self {
        let model_json = serde_json::Value::String(model.to_string()).to_string();
        let (chunk_object, whole_object) = match endpoint {
            Endpoint::Chat => ("chat.completion.chunk", "chat.completion"),
            Endpoint::Completions => ("text_completion", "text_completion"),
            Endpoint::Responses | Endpoint::Tgi { .. } => {
                let members = responses_api::object_members(id, created_epoch_s, &model_json);
                return Self::with_heads(endpoint, members.clone(), members);
            }
            Endpoint::Messages => {
                let members = messages_api::object_members(id, &model_json);
                return Self::with_heads(endpoint, members.clone(), members);
            }
            Endpoint::SolidoRag { .. } => return Self::with_heads(endpoint, String::new(), String::new()),
        };
        let head = |object: &str| {
            format!(r#"{{"id":"{id}","object":"{object}","created":{created_epoch_s},"model":{model_json},"choices":"#)
        };
        Self::with_heads(endpoint, head(chunk_object), head(whole_object))
    }

    fn with_heads(endpoint: Endpoint, chunk_head: String, whole_head: String) -> Self {
        Self {
            endpoint,
            chunk_head,
            whole_head,
            prompt_tokens: 0,
            prompt_cache: None,
            thinking_tokens: 0,
            reports_usage: true,
            root_metrics: None,
            tool_call: None,
        }
    }

    /// An answer that calls tool `name` at `step` rather than saying text.
    pub fn with_tool_call(mut self, name: &str, step: u64) -> Self {
        self.tool_call = Some((name.to_string(), step));
        self
    }

    /// What the Messages API's events report: the prompt's tokens, the cache's part in them,
    /// and how many of the first output tokens are thinking; and whether the request asked for
    /// its token counts (TGI's `details`).
    pub fn with_request(
        mut self,
        prompt_tokens: u64,
        prompt_cache: Option<PromptCacheUse>,
        thinking_tokens: u64,
        reports_usage: bool,
    ) -> Self {
        self.prompt_tokens = prompt_tokens;
        self.prompt_cache = prompt_cache;
        self.thinking_tokens = thinking_tokens;
        self.reports_usage = reports_usage;
        self
    }

    /// The root `metrics` object (a JSON object) that chat and completions answers carry, on
    /// the whole body or on the streamed usage chunk.
    pub fn with_root_metrics(mut self, metrics_json: Option<String>) -> Self {
        if matches!(self.endpoint, Endpoint::Chat | Endpoint::Completions) {
            self.root_metrics = metrics_json;
        }
        self
    }

    /// `,"metrics":{…}` when there are root metrics, else nothing.
    fn root_metrics_member(&self) -> String {
        self.root_metrics.as_ref().map(|metrics| format!(r#","metrics":{metrics}"#)).unwrap_or_default()
    }

    /// Chat streams open with the assistant role and empty content (as vLLM does); it carries
    /// no token, and `usage` (none completed yet) when usage goes on every chunk. Completions
    /// streams have no opening chunk.
    pub fn push_opening_chunk(&self, out: &mut String, usage: Option<Usage>) {
        if self.endpoint == Endpoint::Responses {
            responses_api::push_created(out, &self.chunk_head);
        }
        if self.endpoint == Endpoint::Messages {
            let prompt =
                Usage { prompt_tokens: self.prompt_tokens, completion_tokens: 0, prompt_cache: self.prompt_cache };
            messages_api::push_start(out, &self.chunk_head, prompt);
            if self.tool_call.is_none() {
                messages_api::push_block_start(out, 0, self.thinking_tokens > 0);
            }
        }
        if self.endpoint == Endpoint::Chat {
            out.push_str("data: ");
            out.push_str(&self.chunk_head);
            out.push_str(r#"[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]"#);
            self.push_usage_member(out, usage);
            out.push_str("}\n\n");
        }
    }

    /// The event of the token at `index` of `output_tokens`, in the endpoint's shape.
    pub fn push_token(&self, out: &mut String, index: u64, output_tokens: u64) {
        match self.endpoint {
            Endpoint::Responses => responses_api::push_token(out, index, self.thinking_tokens),
            Endpoint::Tgi { .. } => tgi::push_token(out, index, output_tokens, self.reports_usage),
            Endpoint::Messages => messages_api::push_token(out, index, output_tokens, self.thinking_tokens),
            Endpoint::SolidoRag { .. } => solido_rag::push_token(out, index, output_tokens),
            Endpoint::Chat | Endpoint::Completions => self.push_text_chunk(
                out,
                words::word_at(index),
                index + 1 == output_tokens,
                None,
                index < self.thinking_tokens,
            ),
        }
    }

    /// The events of tokens `first..end` of `output_tokens`: chat and completions send them
    /// as one chunk (a server's stream interval), carrying `usage` when given (usage on every
    /// chunk: the tokens sent by its end), though never reasoning and answer in one chunk; the
    /// other shapes send an event per token.
    pub fn push_tokens(&self, out: &mut String, first: u64, end: u64, output_tokens: u64, usage: Option<Usage>) {
        if !matches!(self.endpoint, Endpoint::Chat | Endpoint::Completions) {
            return (first..end).for_each(|index| self.push_token(out, index, output_tokens));
        }
        let thinking = self.thinking_tokens;
        if first < thinking && thinking < end {
            let reasoning_usage = usage.map(|usage| Usage { completion_tokens: thinking, ..usage });
            self.push_tokens(out, first, thinking, output_tokens, reasoning_usage);
            return self.push_tokens(out, thinking, end, output_tokens, usage);
        }
        let (is_last, reasoning) = (end == output_tokens, first < thinking);
        if end == first + 1 {
            return self.push_text_chunk(out, words::word_at(first), is_last, usage, reasoning);
        }
        self.push_text_chunk(out, &words::words_between(first, end), is_last, usage, reasoning);
    }

    /// One token's chunk; `token_text` must need no JSON escaping (the mock's words do not).
    pub fn push_token_chunk(&self, out: &mut String, token_text: &str, is_last: bool) {
        self.push_text_chunk(out, token_text, is_last, None, false);
    }

    /// A chunk of `text`: the answer's, or with `reasoning` (chat only) its reasoning's.
    fn push_text_chunk(&self, out: &mut String, text: &str, is_last: bool, usage: Option<Usage>, reasoning: bool) {
        let finish_reason = if is_last { r#""length""# } else { "null" };
        out.push_str("data: ");
        out.push_str(&self.chunk_head);
        let _ = match self.endpoint {
            Endpoint::Chat => {
                let member = if reasoning { "reasoning_content" } else { "content" };
                write!(out, r#"[{{"index":0,"delta":{{"{member}":"{text}"}},"finish_reason":{finish_reason}}}]"#)
            }
            _ => write!(out, r#"[{{"index":0,"text":"{text}","logprobs":null,"finish_reason":{finish_reason}}}]"#),
        };
        self.push_usage_member(out, usage);
        out.push_str("}\n\n");
    }

    /// `,"usage":{…}` when usage goes on this chunk.
    fn push_usage_member(&self, out: &mut String, usage: Option<Usage>) {
        if let Some(usage) = usage {
            out.push_str(r#","usage":"#);
            out.push_str(&self.usage_json(usage));
        }
    }

    /// The usage-only chunk sent when `stream_options.include_usage` is set; for the
    /// Responses API, the `response.completed` event; none for TGI, whose counts ride on its
    /// last token event.
    pub fn push_usage_chunk(&self, out: &mut String, usage: Usage) {
        if matches!(self.endpoint, Endpoint::Tgi { .. }) {
            return;
        }
        if self.endpoint == Endpoint::Responses {
            let thinking = self.thinking_tokens;
            let response = match &self.tool_call {
                Some((name, step)) => responses_api::whole_tool_call(&self.chunk_head, name, *step, usage, thinking),
                None => {
                    let text = words::output_text(usage.completion_tokens);
                    responses_api::whole_response(&self.chunk_head, &text, usage, thinking)
                }
            };
            return responses_api::push_completed(out, &response);
        }
        if self.endpoint == Endpoint::Messages {
            return messages_api::push_end(
                out,
                usage,
                if self.tool_call.is_some() { "tool_use" } else { "max_tokens" },
            );
        }
        out.push_str("data: ");
        out.push_str(&self.chunk_head);
        let _ = write!(out, r#"[],"usage":{}{}}}"#, self.usage_json(usage), self.root_metrics_member());
        out.push_str("\n\n");
    }

    /// The `[DONE]` that ends OpenAI chat and completions streams (the others have none).
    pub fn push_done(&self, out: &mut String) {
        if matches!(self.endpoint, Endpoint::Chat | Endpoint::Completions) {
            out.push_str("data: [DONE]\n\n");
        }
    }

    /// The non-streaming body; `text` must need no JSON escaping.
    pub fn whole_response(&self, text: &str, usage: Usage) -> String {
        let choice = match self.endpoint {
            Endpoint::Responses => {
                return responses_api::whole_response(&self.whole_head, text, usage, self.thinking_tokens);
            }
            Endpoint::Tgi { .. } => return tgi::whole_response(text, usage.completion_tokens, self.reports_usage),
            Endpoint::Messages => return messages_api::whole_response(&self.whole_head, usage, self.thinking_tokens),
            Endpoint::SolidoRag { .. } => return solido_rag::whole_response(text),
            Endpoint::Chat => {
                let (reasoning, text) = match self.thinking_tokens {
                    0 => (String::new(), Cow::Borrowed(text)),
                    tokens => (
                        format!(r#""reasoning_content":"{}","#, words::output_text(tokens)),
                        Cow::Owned(words::words_between(tokens, usage.completion_tokens)),
                    ),
                };
                format!(
                    r#"{{"index":0,"message":{{"role":"assistant",{reasoning}"content":"{text}"}},"finish_reason":"length"}}"#
                )
            }
            Endpoint::Completions => {
                format!(r#"{{"index":0,"text":"{text}","logprobs":null,"finish_reason":"length"}}"#)
            }
        };
        format!(r#"{}[{choice}],"usage":{}{}}}"#, self.whole_head, self.usage_json(usage), self.root_metrics_member())
    }

    /// OpenAI's usage object; with a prefix cache, `prompt_tokens_details.cached_tokens` as vLLM
    /// writes it (`--enable-prompt-tokens-details`); with reasoning,
    /// `completion_tokens_details.reasoning_tokens` as OpenAI writes it.
    fn usage_json(&self, usage: Usage) -> String {
        let mut json = format!(
            r#"{{"prompt_tokens":{},"completion_tokens":{},"total_tokens":{}"#,
            usage.prompt_tokens,
            usage.completion_tokens,
            usage.prompt_tokens + usage.completion_tokens
        );
        if let Some(cache) = usage.prompt_cache {
            let _ = write!(json, r#","prompt_tokens_details":{{"cached_tokens":{}}}"#, cache.read_tokens);
        }
        let reasoning = self.thinking_tokens.min(usage.completion_tokens);
        if reasoning > 0 {
            let _ = write!(json, r#","completion_tokens_details":{{"reasoning_tokens":{reasoning}}}"#);
        }
        json.push('}');
        json
    }
}

impl ResponseWriter {
    /// A streamed answer that calls a tool (`with_tool_call`), in the endpoint's shape: its
    /// events, one entry per output token of `tokens`; none for an answer that calls none or an
    /// endpoint without tools.
    pub fn tool_call_events(&self, tokens: u64) -> Vec<String> {
        let Some((name, step)) = &self.tool_call else { return Vec::new() };
        match self.endpoint {
            Endpoint::Chat => {
                let thinking = self.thinking_tokens;
                let mut events = tool_calls::events_per_token(thinking, |out, index| {
                    self.push_text_chunk(out, words::word_at(index), false, None, true)
                });
                let call_tokens = tokens.saturating_sub(thinking);
                events.extend(tool_calls::chat_token_events(&self.chunk_head, name, *step, call_tokens));
                events
            }
            Endpoint::Messages => messages_api::tool_call_events(name, *step, tokens, self.thinking_tokens),
            Endpoint::Responses => responses_api::tool_call_events(name, *step, tokens, self.thinking_tokens),
            _ => Vec::new(),
        }
    }

    /// The same answer as one JSON body.
    pub fn tool_call_body(&self, usage: Usage) -> String {
        let Some((name, step)) = &self.tool_call else { return String::new() };
        match self.endpoint {
            Endpoint::Messages => {
                messages_api::whole_tool_call(&self.whole_head, name, *step, usage, self.thinking_tokens)
            }
            Endpoint::Responses => {
                responses_api::whole_tool_call(&self.whole_head, name, *step, usage, self.thinking_tokens)
            }
            _ => {
                let choice = tool_calls::whole_choice(name, *step, self.thinking_tokens);
                format!(
                    r#"{}[{choice}],"usage":{}{}}}"#,
                    self.whole_head,
                    self.usage_json(usage),
                    self.root_metrics_member()
                )
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    fn events(text: &str) -> Vec<&str> {
        text.split("\n\n").filter(|event| !event.is_empty()).map(|event| &event["data: ".len()..]).collect()
    }

    #[test]
    fn chat_chunks_are_valid_openai_json() {
        let writer = ResponseWriter::new(Endpoint::Chat, "chatcmpl-1", 7, "m\"x");
        let mut out = String::new();
        writer.push_opening_chunk(&mut out, None);
        writer.push_token_chunk(&mut out, " the", false);
        writer.push_token_chunk(&mut out, " of", true);
        writer.push_usage_chunk(&mut out, Usage { prompt_tokens: 3, completion_tokens: 2, prompt_cache: None });
        writer.push_done(&mut out);
        let events = events(&out);
        assert_eq!(events.len(), 5);
        let opening: Value = serde_json::from_str(events[0]).unwrap();
        assert_eq!(opening["object"], "chat.completion.chunk");
        assert_eq!(opening["model"], "m\"x");
        assert_eq!(opening["choices"][0]["delta"], json!({"role": "assistant", "content": ""}));
        let last: Value = serde_json::from_str(events[2]).unwrap();
        assert_eq!(last["choices"][0]["delta"]["content"], " of");
        assert_eq!(last["choices"][0]["finish_reason"], "length");
        let usage: Value = serde_json::from_str(events[3]).unwrap();
        assert_eq!(usage["choices"], json!([]));
        assert_eq!(usage["usage"], json!({"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}));
        assert_eq!(events[4], "[DONE]");
    }

    #[test]
    fn completions_have_no_opening_chunk_and_use_text() {
        let writer = ResponseWriter::new(Endpoint::Completions, "cmpl-1", 7, "m");
        let mut out = String::new();
        writer.push_opening_chunk(&mut out, None);
        assert!(out.is_empty());
        writer.push_token_chunk(&mut out, " the", false);
        let chunk: Value = serde_json::from_str(events(&out)[0]).unwrap();
        assert_eq!(chunk["object"], "text_completion");
        assert_eq!(chunk["choices"][0]["text"], " the");
        assert_eq!(chunk["choices"][0]["finish_reason"], Value::Null);
    }

    #[test]
    fn whole_responses_carry_text_and_usage() {
        let usage = Usage { prompt_tokens: 1, completion_tokens: 2, prompt_cache: None };
        let chat: Value =
            serde_json::from_str(&ResponseWriter::new(Endpoint::Chat, "c", 1, "m").whole_response(" a b", usage))
                .unwrap();
        assert_eq!(chat["object"], "chat.completion");
        assert_eq!(chat["choices"][0]["message"]["content"], " a b");
        assert_eq!(chat["usage"]["total_tokens"], 3);
        let completion: Value =
            serde_json::from_str(&ResponseWriter::new(Endpoint::Completions, "c", 1, "m").whole_response(" a", usage))
                .unwrap();
        assert_eq!(completion["choices"][0]["text"], " a");
        assert_eq!(completion["choices"][0]["finish_reason"], "length");
    }

    #[test]
    fn cached_tokens_and_root_metrics_go_on_the_usage_chunk_and_the_whole_body() {
        let cache = PromptCacheUse { read_tokens: 16, written_tokens: 16 };
        let usage = Usage { prompt_tokens: 40, completion_tokens: 2, prompt_cache: Some(cache) };
        let metrics = Some(r#"{"speculative_decoding":{"num_spec_steps":1}}"#.to_string());
        let writer = ResponseWriter::new(Endpoint::Chat, "c", 1, "m").with_root_metrics(metrics.clone());
        let mut out = String::new();
        writer.push_usage_chunk(&mut out, usage);
        let chunk: Value = serde_json::from_str(events(&out)[0]).unwrap();
        let whole: Value = serde_json::from_str(&writer.whole_response(" a", usage)).unwrap();
        for reply in [chunk, whole] {
            assert_eq!(reply["usage"]["prompt_tokens_details"], json!({"cached_tokens": 16}));
            assert_eq!(reply["metrics"]["speculative_decoding"]["num_spec_steps"], 1);
        }
        let messages = ResponseWriter::new(Endpoint::Messages, "c", 1, "m").with_root_metrics(metrics);
        assert!(!messages.whole_response(" a", usage).contains("metrics"), "only chat and completions carry them");
    }

    /// The deltas of a chat stream's chunks, as (member, text) pairs.
    fn deltas(out: &str) -> Vec<(String, String)> {
        events(out)
            .iter()
            .filter(|event| event.starts_with('{'))
            .flat_map(|event| {
                let chunk: Value = serde_json::from_str(event).unwrap();
                let delta = chunk["choices"][0]["delta"].as_object().cloned().unwrap_or_default();
                delta.into_iter().map(|(member, text)| (member, text.as_str().unwrap_or_default().to_string()))
            })
            .collect()
    }

    #[test]
    fn a_chat_answer_that_reasons_sends_its_first_tokens_as_reasoning_content() {
        let usage = Usage { prompt_tokens: 3, completion_tokens: 5, prompt_cache: None };
        let writer = ResponseWriter::new(Endpoint::Chat, "c", 1, "m").with_request(3, None, 2, true);
        let mut one_by_one = String::new();
        (0..5).for_each(|index| writer.push_token(&mut one_by_one, index, 5));
        let members: Vec<String> = deltas(&one_by_one).into_iter().map(|(member, _)| member).collect();
        assert_eq!(members, ["reasoning_content", "reasoning_content", "content", "content", "content"]);
        // A stream interval's chunk across the end of the reasoning is sent as two, each with
        // the usage by its end.
        let mut chunked = String::new();
        writer.push_tokens(&mut chunked, 0, 4, 5, Some(Usage { completion_tokens: 4, ..usage }));
        assert_eq!(
            deltas(&chunked),
            [
                ("reasoning_content".to_string(), words::output_text(2)),
                ("content".to_string(), (2..4).map(words::word_at).collect()),
            ]
        );
        let counts: Vec<Value> = events(&chunked)
            .iter()
            .map(|event| serde_json::from_str::<Value>(event).unwrap()["usage"]["completion_tokens"].clone())
            .collect();
        assert_eq!(counts, [2, 4]);
        let mut usage_chunk = String::new();
        writer.push_usage_chunk(&mut usage_chunk, usage);
        let usage_chunk: Value = serde_json::from_str(events(&usage_chunk)[0]).unwrap();
        assert_eq!(usage_chunk["usage"]["completion_tokens_details"], json!({"reasoning_tokens": 2}));
        let whole: Value = serde_json::from_str(&writer.whole_response(&words::output_text(5), usage)).unwrap();
        let message = &whole["choices"][0]["message"];
        assert_eq!(message["reasoning_content"], words::output_text(2));
        assert_eq!(message["content"], (2..5).map(words::word_at).collect::<String>());
        assert_eq!(whole["usage"]["completion_tokens_details"]["reasoning_tokens"], 2);
        // Without reasoning, none of it.
        let plain = ResponseWriter::new(Endpoint::Chat, "c", 1, "m").whole_response(" a", usage);
        assert!(!plain.contains("reasoning"), "{plain}");
    }

    #[test]
    fn a_chat_tool_call_that_reasons_first_sends_its_reasoning_before_the_call() {
        let writer =
            ResponseWriter::new(Endpoint::Chat, "c", 1, "m").with_request(3, None, 3, true).with_tool_call("search", 0);
        let events = writer.tool_call_events(12);
        assert_eq!(events.len(), 12, "one entry per output token");
        let members: Vec<String> = events.iter().flat_map(|event| deltas(event)).map(|(member, _)| member).collect();
        assert_eq!(members[..4], ["reasoning_content", "reasoning_content", "reasoning_content", "tool_calls"]);
        let usage = Usage { prompt_tokens: 3, completion_tokens: 12, prompt_cache: None };
        let whole: Value = serde_json::from_str(&writer.tool_call_body(usage)).unwrap();
        let message = &whole["choices"][0]["message"];
        assert_eq!(message["reasoning_content"], words::output_text(3));
        assert_eq!(message["tool_calls"][0]["function"]["name"], "search");
        assert_eq!(whole["usage"]["completion_tokens_details"]["reasoning_tokens"], 3);
    }
}
