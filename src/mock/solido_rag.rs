//! The mock's SOLIDO RAG route, `POST /rag/api/prompt`: reads `query` (a list of texts) and
//! `inference_model`, and answers with the generated `content` and the `sources` it "found",
//! streamed (one `{"content"}` event per token, when the request accepts `text/event-stream`;
//! the last event also lists the sources) or whole.

use std::fmt::Write;

use http::HeaderMap;
use http::header::ACCEPT;
use serde::Deserialize;
use serde_json::{Value, json};

use super::request::{GenerationRequest, PromptInput, parse_json};
use super::words;

#[derive(Deserialize)]
struct WireRequest {
    query: Option<Vec<String>>,
    inference_model: Option<String>,
}

/// SOLIDO's body has no stream flag: a client that accepts an event stream gets one.
pub fn wants_stream(headers: &HeaderMap) -> bool {
    headers
        .get(ACCEPT)
        .and_then(|accept| accept.to_str().ok())
        .is_some_and(|accept| accept.contains("text/event-stream"))
}

/// Parse a request body; the error is a message for a 400 reply. The answer has the mock's
/// default length (the API has no output cap).
pub fn parse(body: &[u8], stream: bool) -> Result<GenerationRequest, String> {
    let wire: WireRequest = parse_json(body)?;
    let query = wire.query.filter(|query| !query.is_empty()).ok_or("query: a non-empty list of texts is required")?;
    Ok(GenerationRequest {
        model: wire.inference_model,
        prompt: PromptInput::from_texts(query),
        stream,
        include_usage: false,
        continuous_usage: false,
        output_tokens: None,
        thinking_tokens: 0,
        prompt_caching: true,
    })
}

/// The documents every answer cites.
fn sources() -> Value {
    json!([{"title": "mock-document-1", "score": 0.9}])
}

/// The event of the token at `index` of `output_tokens`; the mock's words need no escaping.
pub fn push_token(out: &mut String, index: u64, output_tokens: u64) {
    let word = words::word_at(index);
    let _ = match index + 1 == output_tokens {
        true => write!(out, r#"data: {{"content":"{word}","sources":{}}}"#, sources()),
        false => write!(out, r#"data: {{"content":"{word}"}}"#),
    };
    out.push_str("\n\n");
}

/// The whole answer.
pub fn whole_response(text: &str) -> String {
    json!({"content": text, "sources": sources()}).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_and_inference_model_are_read_and_streaming_follows_accept() {
        let request =
            parse(br#"{"query":["a","b"],"filters":{"family":"Solido"},"inference_model":"m"}"#, true).unwrap();
        assert_eq!(
            (request.prompt.texts, request.model.as_deref(), request.stream),
            (vec!["a".into(), "b".into()], Some("m"), true)
        );
        assert!(parse(br#"{"query":[]}"#, false).unwrap_err().contains("query"));
        let mut headers = HeaderMap::new();
        assert!(!wants_stream(&headers));
        headers.insert(ACCEPT, "text/event-stream".parse().unwrap());
        assert!(wants_stream(&headers));
    }

    #[test]
    fn the_last_event_and_the_whole_answer_carry_the_sources() {
        let mut out = String::new();
        push_token(&mut out, 0, 2);
        push_token(&mut out, 1, 2);
        let data = out.lines().filter_map(|line| line.strip_prefix("data: "));
        let events = data.map(serde_json::from_str).collect::<Result<Vec<Value>, _>>().unwrap();
        assert_eq!(events[0], json!({"content": words::word_at(0)}));
        assert_eq!(events[1]["sources"], sources());
        let whole: Value = serde_json::from_str(&whole_response(" a b")).unwrap();
        assert_eq!(whole["content"], " a b");
    }
}
