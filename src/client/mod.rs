//! The HTTP client: hyper 1 over a pooled keep-alive connector (rustls for https), request
//! bodies per endpoint kind, and streaming response parsing into a `RequestRecord`.

use std::time::Duration;

use anyhow::Result;
use bytes::Bytes;

use crate::clock::RunClock;
use crate::plan::Endpoint;
use crate::record::RequestRecord;

/// Sends requests to one endpoint and fills records with what came back.
pub struct HttpClient {
    _clock: RunClock,
}

impl HttpClient {
    /// A client for `endpoint` (its url must be a real http(s) base url, not `mock`).
    /// `max_connections` bounds the idle pool per host.
    pub fn new(endpoint: &Endpoint, clock: RunClock, request_timeout: Duration, max_connections: usize) -> Result<Self> {
        let _ = (endpoint, request_timeout, max_connections);
        Ok(Self { _clock: clock })
    }

    /// Send one request body and record the response into `record`: start_ns just before the
    /// request goes out, ack_ns at the response headers, one `ResponseChunk` per event with
    /// text, content/reasoning text, usage, finish_reason, end_ns at the last byte; on any
    /// failure `record.error` is set (never a panic).
    pub async fn send(&self, body: Bytes, record: &mut RequestRecord) {
        let _ = (body, record);
        todo!("client send")
    }
}

/// The JSON request body for one prompt, as the endpoint's kind wants it.
pub fn request_body(endpoint: &Endpoint, prompt: &str, max_tokens: Option<u64>) -> Vec<u8> {
    let _ = (endpoint, prompt, max_tokens);
    todo!("request body")
}
