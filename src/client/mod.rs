//! The HTTP client: hyper 1 over a pooled keep-alive connector (rustls for https), request
//! bodies per endpoint kind, and streaming response parsing into a `RequestRecord`.

mod buffered;
mod chat;
mod completions;
mod connector;
mod failure;
mod headers;
mod response;
mod sse;
mod streaming;
mod target;

use std::time::Duration;

use anyhow::Result;
use bytes::Bytes;
use http::header::{CONTENT_TYPE, HeaderValue};
use http::{HeaderMap, Method, Request, Uri};
use http_body_util::Full;

use crate::clock::RunClock;
use crate::plan::{Endpoint, EndpointKind};
use crate::record::{RecordError, RequestRecord};

use connector::PooledClient;

/// Sends requests to one endpoint and fills records with what came back.
pub struct HttpClient {
    client: PooledClient,
    clock: RunClock,
    kind: EndpointKind,
    streaming: bool,
    uri: Uri,
    /// `uri` as text, for error messages.
    uri_text: String,
    /// Headers every request carries (may hold the api key: never log them).
    headers: HeaderMap,
    request_timeout: Duration,
}

impl HttpClient {
    /// A client for `endpoint` (its url must be a real http(s) base url, not `mock`).
    /// `max_connections` bounds the idle pool per host.
    pub fn new(
        endpoint: &Endpoint,
        clock: RunClock,
        request_timeout: Duration,
        max_connections: usize,
    ) -> Result<Self> {
        let uri = target::request_uri(&endpoint.url, endpoint.kind)?;
        Ok(Self {
            client: connector::pooled_client(max_connections)?,
            clock,
            kind: endpoint.kind,
            streaming: endpoint.streaming,
            uri_text: uri.to_string(),
            uri,
            headers: headers::static_headers(endpoint)?,
            request_timeout,
        })
    }

    /// Send one request body and record the response into `record`: start_ns just before the
    /// request goes out, ack_ns at the response headers, one `ResponseChunk` per event with
    /// text, content/reasoning text, usage, finish_reason, end_ns at the last byte; on any
    /// failure `record.error` is set (never a panic).
    pub async fn send(&self, body: Bytes, record: &mut RequestRecord) {
        let mut completed = false;
        let exchange = self.exchange(body, record, &mut completed);
        if tokio::time::timeout(self.request_timeout, exchange).await.is_err() && !completed {
            record.end_ns = self.clock.now_ns();
            record.error = Some(failure::timeout(self.request_timeout, record.ack_ns.is_some()));
        }
    }

    /// The request and its response, without the time limit. `completed` turns true once the
    /// response is complete even if its connection is still being drained.
    async fn exchange(&self, body: Bytes, record: &mut RequestRecord, completed: &mut bool) {
        let request = match self.request(body, &record.x_request_id) {
            Ok(request) => request,
            Err(error) => {
                record.end_ns = self.clock.now_ns();
                record.error = Some(error);
                return;
            }
        };
        record.start_ns = self.clock.now_ns();
        let response = match self.client.request(request).await {
            Ok(response) => response,
            Err(error) => {
                record.end_ns = self.clock.now_ns();
                record.error = Some(failure::connection_error(&error, &self.uri_text));
                return;
            }
        };
        record.ack_ns = Some(self.clock.now_ns());
        let status = response.status();
        record.status = Some(status.as_u16());
        let is_event_stream = match response.headers().get(CONTENT_TYPE) {
            Some(content_type) => is_event_stream_type(content_type),
            None => self.streaming,
        };
        let body = response.into_body();
        if !status.is_success() {
            buffered::read_error_response(body, status, &self.clock, record).await;
        } else if is_event_stream {
            streaming::read_event_stream(body, self.kind, &self.clock, record, completed).await;
        } else {
            buffered::read_json_response(body, status, self.kind, &self.clock, &self.uri_text, record).await;
        }
    }

    fn request(&self, body: Bytes, x_request_id: &str) -> Result<Request<Full<Bytes>>, RecordError> {
        let request_id = HeaderValue::from_str(x_request_id).map_err(|_| {
            failure::invalid_request(format!("x-request-id {x_request_id:?} is not a valid header value"))
        })?;
        let mut request = Request::new(Full::new(body));
        *request.method_mut() = Method::POST;
        *request.uri_mut() = self.uri.clone();
        *request.headers_mut() = self.headers.clone();
        request.headers_mut().insert("x-request-id", request_id);
        Ok(request)
    }
}

/// `text/event-stream`, with or without parameters, in any letter case.
fn is_event_stream_type(content_type: &HeaderValue) -> bool {
    let essence = content_type.as_bytes().split(|&byte| byte == b';').next().unwrap_or_default();
    essence.trim_ascii().eq_ignore_ascii_case(b"text/event-stream")
}

/// The JSON request body for one prompt, as the endpoint's kind wants it.
pub fn request_body(endpoint: &Endpoint, prompt: &str, max_tokens: Option<u64>) -> Vec<u8> {
    let mut body = match endpoint.kind {
        EndpointKind::Chat => chat::request_body(endpoint, prompt, max_tokens),
        EndpointKind::Completions => completions::request_body(endpoint, prompt, max_tokens),
    };
    for (key, value) in &endpoint.extra {
        body.insert(key.clone(), value.clone());
    }
    serde_json::Value::Object(body).to_string().into_bytes()
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    fn endpoint(kind: EndpointKind, extra: Value) -> Endpoint {
        Endpoint {
            url: "http://127.0.0.1:8000".into(),
            model: "m".into(),
            kind,
            streaming: false,
            api_key: None,
            headers: Default::default(),
            extra: extra.as_object().cloned().unwrap_or_default(),
            mock: None,
        }
    }

    fn body_json(endpoint: &Endpoint, max_tokens: Option<u64>) -> Value {
        serde_json::from_slice(&request_body(endpoint, "hello", max_tokens)).unwrap()
    }

    #[test]
    fn extra_fields_are_merged_and_win() {
        let endpoint =
            endpoint(EndpointKind::Chat, json!({"ignore_eos": true, "stream": true, "max_completion_tokens": 99}));
        let body = body_json(&endpoint, Some(5));
        assert_eq!(body["ignore_eos"], json!(true));
        assert_eq!(body["stream"], json!(true));
        assert_eq!(body["max_completion_tokens"], json!(99));
        assert_eq!(body["messages"], json!([{"role": "user", "content": "hello"}]));
    }

    #[test]
    fn each_kind_names_its_max_tokens_field() {
        let chat = body_json(&endpoint(EndpointKind::Chat, json!({})), Some(7));
        assert_eq!(chat["max_completion_tokens"], json!(7));
        assert!(chat.get("max_tokens").is_none());
        let completions = body_json(&endpoint(EndpointKind::Completions, json!({"min_tokens": 7})), Some(7));
        assert_eq!(completions["max_tokens"], json!(7));
        assert_eq!(completions["min_tokens"], json!(7));
        assert_eq!(completions["prompt"], json!("hello"));
        assert!(completions.get("max_completion_tokens").is_none());
    }

    #[test]
    fn event_stream_content_types_are_recognised() {
        assert!(is_event_stream_type(&HeaderValue::from_static("text/event-stream")));
        assert!(is_event_stream_type(&HeaderValue::from_static("Text/Event-Stream; charset=utf-8")));
        assert!(!is_event_stream_type(&HeaderValue::from_static("application/json")));
    }
}
