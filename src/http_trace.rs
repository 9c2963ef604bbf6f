//! `HttpTrace`: what the traced connection saw of one request, in monotonic ns since the run
//! started (pool wait, DNS, TCP, TLS, send, response, chunks, bytes, addresses).

use std::net::SocketAddr;

/// One transport read or write: when it completed (run ns) and how many bytes it moved.
pub type TraceChunk = (u64, u64);

/// The HTTP lifecycle of one request. An event that did not happen is `None`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HttpTrace {
    /// Waiting for a free connection slot (only when the pool was full).
    pub pool_wait_start_ns: Option<u64>,
    pub pool_wait_end_ns: Option<u64>,
    /// A host name was resolved (not for IP literals or cached names).
    pub dns_lookup_start_ns: Option<u64>,
    pub dns_lookup_end_ns: Option<u64>,
    pub dns_cache_hit_ns: Option<u64>,
    pub dns_cache_miss_ns: Option<u64>,
    /// A new TCP connection was made.
    pub tcp_connect_start_ns: Option<u64>,
    pub tcp_connect_end_ns: Option<u64>,
    /// The new connection did a TLS handshake.
    pub tls_handshake_start_ns: Option<u64>,
    pub tls_handshake_end_ns: Option<u64>,
    /// An open connection was taken from the pool.
    pub connection_reused_ns: Option<u64>,
    /// The connection was in hand and the request started to go out.
    pub request_send_start_ns: Option<u64>,
    pub request_headers_sent_ns: Option<u64>,
    /// The last byte of the request was written.
    pub request_send_end_ns: Option<u64>,
    pub response_headers_received_ns: Option<u64>,
    /// The first response body chunk arrived.
    pub response_receive_start_ns: Option<u64>,
    /// The response body ended.
    pub response_receive_end_ns: Option<u64>,
    pub error_ns: Option<u64>,
    /// Transport writes (HTTP/1.1: head and body bytes; HTTP/2: body frames) of the request.
    pub request_chunks_count: u64,
    pub request_bytes_total: u64,
    /// Transport reads (HTTP/1.1: head and body bytes; HTTP/2: body frames) of the response.
    pub response_chunks_count: u64,
    pub response_bytes_total: u64,
    /// Every write / read, only when the run exports HTTP traces.
    pub request_chunks: Vec<TraceChunk>,
    pub response_chunks: Vec<TraceChunk>,
    /// Request and response headers (secret values redacted), only when the run exports HTTP traces.
    pub request_headers: Vec<(String, String)>,
    pub response_headers: Vec<(String, String)>,
    pub connection: Option<ConnectionInfo>,
}

/// The connection a request went over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectionInfo {
    pub local: SocketAddr,
    pub remote: SocketAddr,
    /// Negotiated HTTP/2 (else HTTP/1.1).
    pub http2: bool,
    pub tls: bool,
}

/// `end - start` when both happened, else `None`.
fn span_ns(start: Option<u64>, end: Option<u64>) -> Option<u64> {
    Some(end?.saturating_sub(start?))
}

impl HttpTrace {
    pub fn blocked_ns(&self) -> Option<u64> {
        span_ns(self.pool_wait_start_ns, self.pool_wait_end_ns)
    }

    pub fn dns_lookup_ns(&self) -> Option<u64> {
        span_ns(self.dns_lookup_start_ns, self.dns_lookup_end_ns)
    }

    /// TCP connect plus, for https, the TLS handshake (as AIPerf measures it).
    pub fn connecting_ns(&self) -> Option<u64> {
        span_ns(self.tcp_connect_start_ns, self.tls_handshake_end_ns.or(self.tcp_connect_end_ns))
    }

    pub fn tls_handshaking_ns(&self) -> Option<u64> {
        span_ns(self.tls_handshake_start_ns, self.tls_handshake_end_ns)
    }

    pub fn sending_ns(&self) -> Option<u64> {
        span_ns(self.request_send_start_ns, self.request_send_end_ns)
    }

    pub fn waiting_ns(&self) -> Option<u64> {
        span_ns(self.request_send_end_ns, self.response_receive_start_ns)
    }

    pub fn receiving_ns(&self) -> Option<u64> {
        span_ns(self.response_receive_start_ns, self.response_receive_end_ns)
    }

    /// Measured directly: request send start to the end of the response.
    pub fn duration_ns(&self) -> Option<u64> {
        span_ns(self.request_send_start_ns, self.response_receive_end_ns)
    }

    pub fn connection_reused(&self) -> bool {
        self.connection_reused_ns.is_some()
    }
}
