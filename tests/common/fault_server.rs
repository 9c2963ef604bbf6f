//! A fault-injecting OpenAI-style server for the fault tests and the soak benchmark: raw
//! HTTP/1.1 on 127.0.0.1 (an ephemeral port, optionally TLS with a self-signed certificate),
//! serving `/v1/chat/completions` (streamed or not) and `/metrics`, each with one fault mode.
//! It runs on its own thread and runtime, so a test can drive the `aiperf` binary meanwhile,
//! and `kill` stops it mid-run (every connection dropped, the port closed).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::TlsAcceptor;

/// What a faulty chat request gets instead of a good answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// Every request answered well.
    None,
    /// 429 with `Retry-After: <seconds>`.
    TooManyRequests { retry_after_s: u32 },
    /// 500 with an OpenAI error body.
    ServerError,
    /// 401 whose error message quotes the request's `Authorization` header back.
    UnauthorizedEcho,
    /// One good token, then an event that is not JSON.
    MalformedEvent,
    /// Some tokens, then the body ends cleanly without `[DONE]` or a finish reason.
    TruncatedStream,
    /// Some tokens, then the TCP connection is reset.
    ResetMidStream,
    /// One token, then nothing more (the connection stays open).
    StallAfterFirstToken,
    /// A whole answer and `[DONE]`, but the body never ends (the connection stays open).
    StallAfterDone,
    /// The response headers come only after this long.
    SlowHeaders(Duration),
    /// One event whose text is this many bytes without a space.
    HugeEvent(usize),
    /// A response of at least this many bytes (many ordinary events, or one JSON body).
    HugeResponse(usize),
    /// A good answer without `usage`.
    MissingUsage,
}

/// What `GET /metrics` answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetricsFault {
    /// Prometheus text with one vLLM counter.
    Prometheus,
    Json,
    Garbage,
    NotFound,
    /// Reads the request and never answers.
    NeverAnswers,
}

#[derive(Debug, Clone)]
pub struct FaultConfig {
    /// The faults faulty requests get, in turn.
    pub faults: Vec<Fault>,
    /// Request `n` (counting from 1) is faulty when `n % fault_every == 0`: 1 faults every
    /// request, 2 every other one, 100 one in a hundred.
    pub fault_every: u64,
    pub metrics: MetricsFault,
    /// Tokens of a good answer, and the pause before each streamed one.
    pub tokens: usize,
    pub token_gap: Duration,
}

impl FaultConfig {
    /// Every `fault_every`-th request gets `fault`; good answers have 8 tokens 1 ms apart.
    pub fn new(fault: Fault, fault_every: u64) -> Self {
        Self::rotating(vec![fault], fault_every)
    }

    /// Every `fault_every`-th request gets the next of `faults`, round and round.
    pub fn rotating(faults: Vec<Fault>, fault_every: u64) -> Self {
        Self { faults, fault_every, metrics: MetricsFault::Prometheus, tokens: 8, token_gap: Duration::from_millis(1) }
    }
}

pub struct FaultServer {
    port: u16,
    tls: bool,
    runtime: Option<tokio::runtime::Runtime>,
    requests: Arc<AtomicU64>,
}

impl FaultServer {
    pub fn start(config: FaultConfig) -> Self {
        Self::launch(config, None)
    }

    /// The server over TLS with a self-signed certificate for 127.0.0.1 and localhost.
    pub fn start_tls(config: FaultConfig) -> Self {
        Self::launch(config, Some(self_signed_acceptor()))
    }

    fn launch(config: FaultConfig, tls: Option<TlsAcceptor>) -> Self {
        let runtime =
            tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
        let listener = runtime.block_on(TcpListener::bind("127.0.0.1:0")).expect("bind 127.0.0.1");
        let port = listener.local_addr().expect("address").port();
        let requests = Arc::new(AtomicU64::new(0));
        let state = Arc::new(ServerState { config, requests: requests.clone() });
        let is_tls = tls.is_some();
        runtime.spawn(accept_loop(listener, tls, state));
        Self { port, tls: is_tls, runtime: Some(runtime), requests }
    }

    /// The base url (`http://127.0.0.1:<port>`, or https).
    pub fn url(&self) -> String {
        let scheme = if self.tls { "https" } else { "http" };
        format!("{scheme}://127.0.0.1:{}", self.port)
    }

    /// Chat requests received so far.
    pub fn chat_requests(&self) -> u64 {
        self.requests.load(Ordering::Relaxed)
    }

    /// Stop at once, as a crashed server would: open connections drop, the port closes.
    pub fn kill(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

impl Drop for FaultServer {
    fn drop(&mut self) {
        self.kill();
    }
}

struct ServerState {
    config: FaultConfig,
    requests: Arc<AtomicU64>,
}

async fn accept_loop(listener: TcpListener, tls: Option<TlsAcceptor>, state: Arc<ServerState>) {
    while let Ok((socket, _)) = listener.accept().await {
        let _ = socket.set_nodelay(true);
        let state = state.clone();
        let tls = tls.clone();
        tokio::spawn(async move {
            match tls {
                Some(acceptor) => {
                    // A client that refuses the certificate ends the handshake: nothing to serve.
                    if let Ok(mut stream) = acceptor.accept(socket).await {
                        let _ = serve_connection(&mut stream, &state).await;
                    }
                }
                None => serve_plain(socket, &state).await,
            }
        });
    }
}

/// A plain TCP connection, reset (RST instead of FIN) when the fault says so.
async fn serve_plain(mut socket: TcpStream, state: &ServerState) {
    if let Ok(Ending::Reset) = serve_connection(&mut socket, state).await {
        let _ = socket.set_zero_linger();
    }
}

/// How a connection's last answer ended.
enum Ending {
    /// The client closed the connection, or the answer was cut on purpose.
    Closed,
    /// The connection must be reset.
    Reset,
}

/// Serve the requests of one keep-alive connection until it closes or a fault ends it.
async fn serve_connection<S: AsyncRead + AsyncWrite + Unpin>(
    stream: &mut S,
    state: &ServerState,
) -> std::io::Result<Ending> {
    let mut buffered = Vec::new();
    loop {
        let Some(request) = read_request(stream, &mut buffered).await? else { return Ok(Ending::Closed) };
        let ending = if request.path.starts_with("/metrics") {
            answer_metrics(stream, state.config.metrics).await?
        } else if request.path.starts_with("/v1/chat/completions") {
            let number = state.requests.fetch_add(1, Ordering::Relaxed) + 1;
            let config = &state.config;
            let every = config.fault_every.max(1);
            let fault = match number % every {
                0 => config.faults.get((number / every - 1) as usize % config.faults.len().max(1)).copied(),
                _ => None,
            };
            let fault = fault.unwrap_or(Fault::None);
            answer_chat(stream, &request, fault, config).await?
        } else {
            write_response(stream, "404 Not Found", "text/plain", b"no such path").await?;
            None
        };
        if let Some(ending) = ending {
            return Ok(ending);
        }
    }
}

struct Request {
    path: String,
    streaming: bool,
    prompt_bytes: usize,
    /// The `Authorization` header's value as sent.
    authorization: String,
}

/// One request (head and content-length body) from `stream`; `None` once the client closed.
async fn read_request<S: AsyncRead + Unpin>(
    stream: &mut S,
    buffered: &mut Vec<u8>,
) -> std::io::Result<Option<Request>> {
    let mut chunk = vec![0u8; 64 * 1024];
    let head_end = loop {
        if let Some(at) = buffered.windows(4).position(|window| window == b"\r\n\r\n") {
            break at + 4;
        }
        let read = stream.read(&mut chunk).await?;
        if read == 0 {
            return Ok(None);
        }
        buffered.extend_from_slice(&chunk[..read]);
    };
    let sent_head = String::from_utf8_lossy(&buffered[..head_end]).into_owned();
    let authorization = sent_head
        .lines()
        .find_map(|line| line.split_once(':').filter(|(name, _)| name.eq_ignore_ascii_case("authorization")))
        .map(|(_, value)| value.trim().to_string())
        .unwrap_or_default();
    let head = sent_head.to_ascii_lowercase();
    let path = head.split_whitespace().nth(1).unwrap_or("/").to_string();
    let body_len: usize = head
        .lines()
        .find_map(|line| line.strip_prefix("content-length:"))
        .and_then(|value| value.trim().parse().ok())
        .unwrap_or(0);
    while buffered.len() < head_end + body_len {
        let read = stream.read(&mut chunk).await?;
        if read == 0 {
            return Ok(None);
        }
        buffered.extend_from_slice(&chunk[..read]);
    }
    let body = &buffered[head_end..head_end + body_len];
    let streaming = body.windows(13).any(|window| window == b"\"stream\":true");
    let request = Request { path, streaming, prompt_bytes: body_len, authorization };
    buffered.drain(..head_end + body_len);
    Ok(Some(request))
}

/// Answer one chat request; `Some` when the connection must end after it.
async fn answer_chat<S: AsyncWrite + Unpin>(
    stream: &mut S,
    request: &Request,
    fault: Fault,
    config: &FaultConfig,
) -> std::io::Result<Option<Ending>> {
    match fault {
        Fault::TooManyRequests { retry_after_s } => {
            let body = format!(r#"{{"error":{{"message":"rate limited: retry after {retry_after_s} s"}}}}"#);
            let head = format!(
                "HTTP/1.1 429 Too Many Requests\r\nretry-after: {retry_after_s}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
                body.len()
            );
            stream.write_all(head.as_bytes()).await?;
            stream.write_all(body.as_bytes()).await?;
            return Ok(None);
        }
        Fault::ServerError => {
            let body = br#"{"error":{"message":"injected internal server error","type":"server_error"}}"#;
            write_response(stream, "500 Internal Server Error", "application/json", body).await?;
            return Ok(None);
        }
        Fault::UnauthorizedEcho => {
            let body = format!(r#"{{"error":{{"message":"invalid credentials: {}"}}}}"#, request.authorization);
            write_response(stream, "401 Unauthorized", "application/json", body.as_bytes()).await?;
            return Ok(None);
        }
        Fault::SlowHeaders(delay) => tokio::time::sleep(delay).await,
        _ => {}
    }
    if !request.streaming {
        return answer_whole(stream, request, fault, config).await;
    }
    stream
        .write_all(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n")
        .await?;
    let tokens = match fault {
        Fault::MalformedEvent | Fault::StallAfterFirstToken => 1,
        _ => config.tokens,
    };
    for _ in 0..tokens {
        tokio::time::sleep(config.token_gap).await;
        write_chunk(stream, &delta_event("tok ")).await?;
    }
    match fault {
        Fault::MalformedEvent => write_chunk(stream, b"data: {\"choices\": [oops\n\n").await?,
        Fault::TruncatedStream => {
            stream.write_all(b"0\r\n\r\n").await?;
            return Ok(None);
        }
        Fault::ResetMidStream => {
            stream.flush().await?;
            return Ok(Some(Ending::Reset));
        }
        Fault::StallAfterFirstToken => {
            stream.flush().await?;
            std::future::pending::<()>().await;
        }
        Fault::HugeEvent(bytes) => write_huge_event(stream, bytes).await?,
        Fault::HugeResponse(bytes) => {
            let event = delta_event(&"word ".repeat(3000));
            for _ in 0..bytes.div_ceil(event.len()) {
                write_chunk(stream, &event).await?;
            }
        }
        _ => {}
    }
    let usage = match fault {
        Fault::MissingUsage => String::new(),
        _ => format!(r#","usage":{{"prompt_tokens":{},"completion_tokens":{tokens}}}"#, request.prompt_bytes / 4),
    };
    let last =
        format!("data: {{\"choices\":[{{\"delta\":{{}},\"finish_reason\":\"stop\"}}]{usage}}}\n\ndata: [DONE]\n\n");
    write_chunk(stream, last.as_bytes()).await?;
    if fault == Fault::StallAfterDone {
        stream.flush().await?;
        std::future::pending::<()>().await;
    }
    stream.write_all(b"0\r\n\r\n").await?;
    // A malformed event ends the stream for the client, which then drops the connection.
    Ok(matches!(fault, Fault::MalformedEvent).then_some(Ending::Closed))
}

/// A non-streamed answer: the whole JSON at once (huge when asked).
async fn answer_whole<S: AsyncWrite + Unpin>(
    stream: &mut S,
    request: &Request,
    fault: Fault,
    config: &FaultConfig,
) -> std::io::Result<Option<Ending>> {
    let content = match fault {
        Fault::HugeResponse(bytes) | Fault::HugeEvent(bytes) => "x".repeat(bytes),
        _ => "tok ".repeat(config.tokens),
    };
    let usage = match fault {
        Fault::MissingUsage => String::new(),
        _ => format!(
            r#","usage":{{"prompt_tokens":{},"completion_tokens":{}}}"#,
            request.prompt_bytes / 4,
            config.tokens
        ),
    };
    let body = format!(
        r#"{{"choices":[{{"message":{{"role":"assistant","content":"{content}"}},"finish_reason":"stop"}}]{usage}}}"#
    );
    write_response(stream, "200 OK", "application/json", body.as_bytes()).await?;
    Ok(None)
}

/// One `data:` event whose text is `bytes` letters, written in 64 KiB chunks.
async fn write_huge_event<S: AsyncWrite + Unpin>(stream: &mut S, bytes: usize) -> std::io::Result<()> {
    write_chunk(stream, b"data: {\"choices\":[{\"delta\":{\"content\":\"").await?;
    let piece = vec![b'x'; 64 * 1024];
    let mut left = bytes;
    while left > 0 {
        let take = left.min(piece.len());
        write_chunk(stream, &piece[..take]).await?;
        left -= take;
    }
    write_chunk(stream, b"\"}}]}\n\n").await
}

async fn answer_metrics<S: AsyncWrite + Unpin>(stream: &mut S, fault: MetricsFault) -> std::io::Result<Option<Ending>> {
    match fault {
        MetricsFault::Prometheus => {
            let text = b"# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{model_name=\"m\"} 1\n";
            write_response(stream, "200 OK", "text/plain; version=0.0.4", text).await?;
        }
        MetricsFault::Json => write_response(stream, "200 OK", "application/json", br#"{"requests": 1}"#).await?,
        MetricsFault::Garbage => {
            write_response(stream, "200 OK", "text/plain", b"\x01\x02 not {metrics} at all\n").await?
        }
        MetricsFault::NotFound => write_response(stream, "404 Not Found", "text/plain", b"not found").await?,
        MetricsFault::NeverAnswers => std::future::pending::<()>().await,
    }
    Ok(None)
}

fn delta_event(text: &str) -> Vec<u8> {
    format!("data: {{\"choices\":[{{\"delta\":{{\"content\":{text:?}}}}}]}}\n\n").into_bytes()
}

/// One chunk of a chunked body, flushed.
async fn write_chunk<S: AsyncWrite + Unpin>(stream: &mut S, data: &[u8]) -> std::io::Result<()> {
    stream.write_all(format!("{:x}\r\n", data.len()).as_bytes()).await?;
    stream.write_all(data).await?;
    stream.write_all(b"\r\n").await?;
    stream.flush().await
}

async fn write_response<S: AsyncWrite + Unpin>(
    stream: &mut S,
    status: &str,
    content_type: &str,
    body: &[u8],
) -> std::io::Result<()> {
    let head = format!("HTTP/1.1 {status}\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\n\r\n", body.len());
    stream.write_all(head.as_bytes()).await?;
    stream.write_all(body).await?;
    stream.flush().await
}

/// A TLS acceptor with a fresh self-signed certificate for 127.0.0.1 and localhost.
fn self_signed_acceptor() -> TlsAcceptor {
    let certified = rcgen::generate_simple_self_signed(vec!["localhost".to_owned(), "127.0.0.1".to_owned()])
        .expect("self-signed certificate");
    let key = rustls::pki_types::PrivateKeyDer::Pkcs8(certified.signing_key.serialize_der().into());
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("protocol versions")
        .with_no_client_auth()
        .with_single_cert(vec![certified.cert.der().clone()], key)
        .expect("server certificate");
    TlsAcceptor::from(Arc::new(config))
}
