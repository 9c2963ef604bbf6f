//! The HTTP client: pooled keep-alive connections (rustls for https), HTTP/1.1 of our own
//! (`http1.rs`) or hyper's HTTP/2, sending the bodies built in `request_bodies/`, and streaming
//! response parsing into a `RequestRecord` (one response reader per endpoint kind).

mod audio_transcription;
mod buffered;
mod chat;
mod completions;
mod connect;
mod destinations;
mod embeddings;
mod failure;
mod fast_payload;
#[cfg(feature = "fuzzing")]
pub mod fuzzing;
mod header_case;
mod headers;
mod http1;
mod http1_codec;
mod http2;
mod http2_settings;
mod image_retrieval;
mod images_api;
mod insecure;
mod json_cursor;
mod json_paths;
mod messages;
mod open_files;
mod payload;
mod pool;
mod probe;
mod rankings;
mod raw;
mod response;
mod response_body;
mod responses;
mod routing;
mod server_trust;
mod socket;
mod solido_rag;
pub mod sse;
mod streaming;
mod target;
mod template;
mod tgi;
mod tls;
mod traced_body;
mod video_generation;
mod video_jobs;
mod wire;
mod wire_usage;

use std::time::Duration;

use anyhow::Result;
use bytes::Bytes;
use http::header::{CONTENT_LENGTH, CONTENT_TYPE, HOST, HeaderValue};
use http::{HeaderMap, HeaderName, Method, Request, Uri};

use crate::clock::RunClock;
use crate::plan::{Endpoint, EndpointKind, REDACTED, ResponseLimits, is_secret_header};
use crate::record::{RawExchange, RecordError, RequestRecord, SentTo};

use connect::Sender;
pub(crate) use connect::TLS_FAILURE_OPENING;
use destinations::Destination;
pub(crate) use failure::cancelled_after;
use pool::Lease;
use response::PayloadFormat;
use routing::{Route, Router};
pub(crate) use target::credentials_problem;
pub(crate) use tls::client_config as tls_client_config;
use traced_body::{BodyTiming, TracedBody};

/// Fired once, when the first chunk with text arrives (dropped unfired otherwise).
pub type FirstToken = tokio::sync::oneshot::Sender<()>;

pub use crate::http_trace::{ConnectionInfo, HttpTrace, TraceChunk};

/// Sends requests to one endpoint (over each of its urls) and fills records with what came back.
pub struct HttpClient {
    /// Each base url of the endpoint, with its own pool; at least one.
    destinations: Vec<Destination>,
    router: Router,
    clock: RunClock,
    format: PayloadFormat,
    streaming: bool,
    /// Headers every request carries (may hold the api key: never log them).
    headers: HeaderMap,
    /// Headers that carry the request's correlation id (its conversation's).
    session_headers: Vec<HeaderName>,
    /// The credentials among them (the api key, secret headers' values), masked in any error
    /// message a server sends back, which may quote them.
    secrets: Vec<String>,
    request_timeout: Duration,
    limits: ResponseLimits,
    /// Keep every chunk and header of each request in its trace (for `export_http_trace`).
    trace_details: bool,
    /// Keep each request's headers, body and response events (for `export_level: "raw"`).
    raw: bool,
    /// Keep each request's body on its record (for counting it through a chat template).
    sent_body: bool,
    /// Video generation: fetch each finished video before the record ends.
    download_videos: bool,
    /// Video generation: the wait between a job's status polls.
    video_poll_interval: Duration,
}

impl HttpClient {
    /// A client for `endpoint` (its urls must be real http(s) base urls, not `mock`). At most
    /// `max_connections` connections are in use at once at each url, unless the endpoint sets
    /// its own limit.
    pub fn new(
        endpoint: &Endpoint,
        clock: RunClock,
        request_timeout: Duration,
        max_connections: usize,
    ) -> Result<Self> {
        let max_connections = endpoint.transport.connections.max.unwrap_or(max_connections);
        let destinations = endpoint
            .urls()
            .map(|url| Destination::new(url, endpoint, clock, max_connections))
            .collect::<Result<Vec<_>>>()?;
        let session_headers = headers::session_header_names(endpoint)?;
        let router =
            Router::new(endpoint.url_strategy, destinations.len(), !session_headers.is_empty(), clock.epoch_ns(0));
        Ok(Self {
            destinations,
            router,
            clock,
            format: PayloadFormat::of(endpoint),
            streaming: endpoint.streaming,
            headers: headers::static_headers(endpoint)?,
            session_headers,
            secrets: headers::secret_values(endpoint),
            request_timeout,
            limits: endpoint.limits,
            trace_details: false,
            raw: false,
            sent_body: false,
            download_videos: endpoint.request.download_video_content,
            video_poll_interval: endpoint.request.video_poll_interval(),
        })
    }

    /// At most this many connections are in use at once at each url (requests beyond wait for one).
    pub fn max_connections(&self) -> usize {
        self.destinations.iter().map(|destination| destination.pool.max()).min().unwrap_or(1)
    }

    /// The server runs in this process (the url `mock`): each connection then takes two of
    /// the process's open files, and the pool is bounded by that.
    pub fn serving_itself(mut self, in_process: bool) -> Self {
        if in_process {
            self.destinations = self.destinations.into_iter().map(Destination::sharing_files_with_server).collect();
        }
        self
    }

    /// Keep every transport chunk and the headers of each request in its trace.
    pub fn keep_trace_details(mut self, keep: bool) -> Self {
        self.trace_details = keep;
        self
    }

    /// Keep the request headers (in the trace), the request body and every response event
    /// (`record.raw`) of each request.
    pub fn keep_raw(mut self, keep: bool) -> Self {
        self.raw = keep;
        self
    }

    /// Keep each request's body on its record (`record.sent_body`), for the metrics to count
    /// its input tokens through the tokenizer's chat template.
    pub fn keep_sent_body(mut self, keep: bool) -> Self {
        self.sent_body = keep;
        self
    }

    /// Send one request body and record the response into `record`: start_ns just before the
    /// request goes out, ack_ns at the response headers, one `ResponseChunk` per event with
    /// text, content/reasoning text, usage, finish_reason, end_ns at the last byte, and the
    /// HTTP trace; on any failure `record.error` is set (never a panic).
    pub async fn send(&self, body: Bytes, record: &mut RequestRecord) {
        self.send_signalling(body, record, None).await;
    }

    /// `send`, firing `first_token` when the first chunk with text arrives (a streamed
    /// response), so a caller can tell prefill from decode.
    pub async fn send_signalling(&self, body: Bytes, record: &mut RequestRecord, first_token: Option<FirstToken>) {
        self.send_with_headers(body, None, record, first_token).await;
    }

    /// `send_signalling` with `own_headers` set on the request over the endpoint's (a recorded
    /// call's session id).
    pub async fn send_with_headers(
        &self,
        body: Bytes,
        own_headers: Option<&HeaderMap>,
        record: &mut RequestRecord,
        mut first_token: Option<FirstToken>,
    ) {
        let mut completed = false;
        let exchange = self.exchange(body, own_headers, record, &mut completed, &mut first_token);
        if tokio::time::timeout(self.request_timeout, exchange).await.is_err() && !completed {
            record.end_ns = self.clock.now_ns();
            record.error = Some(failure::timeout(self.request_timeout, record.ack_ns.is_some()));
            if let Some(trace) = &mut record.trace {
                trace.error_ns = Some(record.end_ns);
            }
        }
        self.mask_secrets(record);
    }

    /// A server may quote a request's credentials back (a 401 naming the key it refused):
    /// they are masked in the error message and the raw response events, the texts of a
    /// record that come from the server.
    fn mask_secrets(&self, record: &mut RequestRecord) {
        if self.secrets.is_empty() {
            return;
        }
        let mask = |text: &mut String| {
            for secret in &self.secrets {
                if text.contains(secret.as_str()) {
                    *text = text.replace(secret.as_str(), REDACTED);
                }
            }
        };
        if let Some(error) = &mut record.error {
            mask(&mut error.message);
        }
        if let Some(raw) = &mut record.raw {
            raw.responses.iter_mut().for_each(|response| mask(&mut response.data));
        }
    }

    /// The request and its response, without the time limit. `completed` turns true once the
    /// response is complete even if its connection is still being drained.
    async fn exchange(
        &self,
        body: Bytes,
        own_headers: Option<&HeaderMap>,
        record: &mut RequestRecord,
        completed: &mut bool,
        first_token: &mut Option<FirstToken>,
    ) {
        let request_id = match HeaderValue::from_str(&record.x_request_id) {
            Ok(request_id) => request_id,
            Err(_) => {
                let message = format!("x-request-id {:?} is not a valid header value", record.x_request_id);
                return self.fail(record, failure::invalid_request(message));
            }
        };
        if self.raw {
            record.raw = Some(Box::new(RawExchange { payload: body.clone(), responses: Vec::new() }));
        }
        if self.sent_body {
            record.sent_body = Some(body.clone());
        }
        let route = self.router.route(record, |url| self.destinations[url].in_flight());
        let destination = &self.destinations[route.url];
        let _in_flight_here = destination.enter();
        if self.destinations.len() > 1 {
            record.url = Some(SentTo { index: route.url as u32, url: destination.base_url.clone() });
        }
        record.start_ns = self.clock.now_ns();
        let trace = record.trace.insert(Box::default());
        let session = record.origin.dataset_index as u64;
        let body_bytes = body.len() as u64;
        // A reused connection the server already closed fails before any response; the request
        // then goes once more over a new connection (as curl and browsers do): its own on
        // HTTP/1.1, the one every request shares next on HTTP/2.
        let (mut fresh, mut sent_again) = (false, false);
        // Checking out, sending and reading a whole body are boxed: short-lived steps that every
        // streaming request's task would otherwise hold room for through the whole stream.
        let (mut lease, response) = loop {
            let mut lease = match Box::pin(destination.pool.check_out(session, fresh, trace)).await {
                Ok(lease) => lease,
                Err(why) => return self.fail(record, failure::connect_failed(why, &destination.uri_text)),
            };
            let reused = trace.connection_reused_ns.is_some();
            let http2 = matches!(lease.connection.sender, Sender::Http2(_));
            let mut request = self.request(destination, &route, body.clone(), request_id.clone(), http2);
            if let Some(own) = own_headers {
                request.headers_mut().extend(own.clone());
            }
            if self.trace_details || self.raw {
                // As written on the wire: HTTP/1.1 names capitalised, HTTP/2's lower-case.
                let as_sent = |name: &http::HeaderName| {
                    if http2 { name.to_string() } else { header_case::wire_name(name).into_owned() }
                };
                trace.request_headers = header_pairs(request.headers(), as_sent);
                trace.request_headers.push((as_sent(&CONTENT_LENGTH), body_bytes.to_string()));
            }
            if let Some(wire) = &lease.connection.wire {
                wire.begin(self.trace_details);
            }
            trace.request_send_start_ns = Some(self.clock.now_ns());
            match Box::pin(lease.send(request)).await {
                Ok((response, taken_ns)) => {
                    // Over HTTP/2, when the connection took the body; HTTP/1.1's come off the wire.
                    trace.request_headers_sent_ns = taken_ns;
                    trace.request_send_end_ns = taken_ns;
                    break (lease, response);
                }
                Err(error) if reused && !sent_again && failure::is_stale_connection(&error) => {
                    tracing::debug!("a reused connection was closed by the server; sending again on a new one");
                    trace.connection_reused_ns = None;
                    trace.connection = None;
                    sent_again = true;
                    match &lease.connection.sender {
                        Sender::Http2(_) => destination.pool.forget_http2(&lease.connection.info),
                        Sender::Http1(_) => fresh = true,
                    }
                }
                Err(error) => return self.fail(record, failure::connection_error(&error, &destination.uri_text)),
            }
        };
        // What only sending needed is not kept while the response streams in.
        drop((body, request_id, route));
        let ack_ns = self.clock.now_ns();
        trace.response_headers_received_ns = Some(ack_ns);
        if self.trace_details {
            trace.response_headers = header_pairs(response.headers(), http::HeaderName::to_string);
        }
        record.ack_ns = Some(ack_ns);
        let status = response.status();
        record.status = Some(status.as_u16());
        let is_event_stream = match response.headers().get(CONTENT_TYPE) {
            Some(content_type) => is_event_stream_type(content_type),
            None => self.streaming,
        };
        // Its headers are not kept while the body streams in.
        drop(response);
        let keep_frames = self.trace_details && lease.connection.wire.is_none();
        let mut timing = BodyTiming { chunks: keep_frames.then(Vec::new), ..BodyTiming::default() };
        let body = TracedBody::new(lease.body(), self.clock, &mut timing);
        if !status.is_success() {
            let max_bytes = self.limits.max_response_bytes;
            Box::pin(buffered::read_error_response(body, status, max_bytes, &self.clock, record)).await;
        } else if is_event_stream {
            let limits = self.limits;
            streaming::read_event_stream(body, &self.format, limits, &self.clock, record, completed, first_token).await;
        } else {
            let max_bytes = self.limits.max_response_bytes;
            let uri_text = &destination.uri_text;
            let reading =
                buffered::read_json_response(body, status, &self.format, max_bytes, &self.clock, uri_text, record);
            Box::pin(reading).await;
        }
        self.finish_trace(record, &lease, timing.first_data_ns.is_some().then_some(&timing), body_bytes);
        if timing.ended {
            destination.pool.check_in(lease);
        }
        if matches!(self.format, PayloadFormat::Kind(EndpointKind::VideoGeneration)) && record.error.is_none() {
            // Boxed, as is connecting in the pool: the future is large and rarely needed, and
            // every request's task would otherwise hold room for it while it streams.
            Box::pin(self.follow_video_job(destination, record)).await;
        }
    }

    /// Fill in what is known only once the response is over: the send times and the bytes
    /// (from the wire on HTTP/1.1, from the body frames on HTTP/2), the end, any error.
    fn finish_trace(&self, record: &mut RequestRecord, lease: &Lease, body: Option<&BodyTiming>, body_bytes: u64) {
        let end_ns = record.end_ns;
        let failed = record.error.is_some();
        let Some(trace) = record.trace.as_mut() else { return };
        trace.response_receive_start_ns = body.and_then(|body| body.first_data_ns);
        trace.response_receive_end_ns = Some(end_ns);
        if failed {
            trace.error_ns = Some(end_ns);
        }
        match (&lease.connection.wire, body) {
            (Some(wire), _) => {
                let totals = wire.take();
                trace.request_headers_sent_ns = totals.first_write_ns;
                trace.request_send_end_ns = totals.last_write_ns;
                trace.request_chunks_count = totals.writes;
                trace.request_bytes_total = totals.bytes_written;
                trace.response_chunks_count = totals.reads;
                trace.response_bytes_total = totals.bytes_read;
                trace.request_chunks = totals.write_chunks;
                trace.response_chunks = totals.read_chunks;
            }
            (None, body) => {
                trace.request_chunks_count = 1;
                trace.request_bytes_total = body_bytes;
                if let Some(taken_ns) = trace.request_send_end_ns.filter(|_| self.trace_details) {
                    trace.request_chunks = vec![(taken_ns, body_bytes)];
                }
                if let Some(body) = body {
                    trace.response_chunks_count = body.frames;
                    trace.response_bytes_total = body.bytes;
                    trace.response_chunks = body.chunks.clone().unwrap_or_default();
                }
            }
        }
    }

    fn fail(&self, record: &mut RequestRecord, error: RecordError) {
        record.end_ns = self.clock.now_ns();
        if let Some(trace) = &mut record.trace {
            trace.error_ns = Some(record.end_ns);
        }
        record.error = Some(error);
    }

    /// The POST to `destination`, with the request's id and its route's session headers.
    fn request(
        &self,
        destination: &Destination,
        route: &Route,
        body: Bytes,
        request_id: HeaderValue,
        http2: bool,
    ) -> Request<Bytes> {
        let uri = if http2 { &destination.uri } else { &destination.origin_form };
        let mut request = self.with_endpoint_headers(destination, Method::POST, uri.clone(), body);
        let headers = request.headers_mut();
        headers.insert("x-request-id", request_id);
        if let Some(session_id) = &route.session_id {
            for name in &self.session_headers {
                headers.insert(name.clone(), session_id.clone());
            }
        }
        request
    }

    /// A request carrying the endpoint's headers; `uri` is absolute (HTTP/2) or in origin form
    /// (HTTP/1.1, which then gets `destination`'s Host header).
    fn with_endpoint_headers(
        &self,
        destination: &Destination,
        method: Method,
        uri: Uri,
        body: Bytes,
    ) -> Request<Bytes> {
        let mut request = Request::new(body);
        *request.method_mut() = method;
        *request.uri_mut() = uri;
        *request.headers_mut() = self.headers.clone();
        if request.uri().authority().is_none() {
            request.headers_mut().insert(HOST, destination.host.clone());
        }
        request
    }
}

/// Headers as text pairs, credential values redacted.
fn header_pairs(headers: &HeaderMap, spelled: impl Fn(&http::HeaderName) -> String) -> Vec<(String, String)> {
    headers
        .iter()
        .map(|(name, value)| {
            let shown = if value.is_sensitive() || is_secret_header(name.as_str()) {
                REDACTED.to_owned()
            } else {
                String::from_utf8_lossy(value.as_bytes()).into_owned()
            };
            (spelled(name), shown)
        })
        .collect()
}

/// `text/event-stream`, with or without parameters, in any letter case.
fn is_event_stream_type(content_type: &HeaderValue) -> bool {
    let essence = content_type.as_bytes().split(|&byte| byte == b';').next().unwrap_or_default();
    essence.trim_ascii().eq_ignore_ascii_case(b"text/event-stream")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_stream_content_types_are_recognised() {
        assert!(is_event_stream_type(&HeaderValue::from_static("text/event-stream")));
        assert!(is_event_stream_type(&HeaderValue::from_static("Text/Event-Stream; charset=utf-8")));
        assert!(!is_event_stream_type(&HeaderValue::from_static("application/json")));
    }
}
