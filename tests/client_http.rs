//! The HTTP client against a scripted raw-HTTP/1.1 server written here: awkwardly split SSE,
//! error answers, cut-off streams, JSON answers, refused connections, bad urls and timeouts.

use std::sync::Arc;
use std::time::Duration;

use aiperf::client::HttpClient;
use aiperf::clock::RunClock;
use aiperf::plan::{Endpoint, EndpointKind, PhaseKind};
use aiperf::record::{RequestOrigin, RequestRecord, Usage};
use aiperf::request_bodies::request_body;
use bytes::Bytes;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

/// Pause between the server's writes, so that each write arrives as its own read.
const WRITE_GAP: Duration = Duration::from_millis(15);

/// What the test server saw: the request head (lowercase) and body.
struct SeenRequest {
    head: String,
    body: Vec<u8>,
}

/// Serve one connection: read one request, then send `writes` one by one with a pause
/// before each, then close the connection.
async fn serve_once(writes: Vec<Vec<u8>>) -> (String, JoinHandle<SeenRequest>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base_url = format!("http://{}", listener.local_addr().unwrap());
    let server = tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.unwrap();
        socket.set_nodelay(true).unwrap();
        let seen = read_request(&mut socket).await;
        for write in writes {
            tokio::time::sleep(WRITE_GAP).await;
            socket.write_all(&write).await.unwrap();
            socket.flush().await.unwrap();
        }
        seen
    });
    (base_url, server)
}

async fn read_request(socket: &mut TcpStream) -> SeenRequest {
    let mut received = Vec::new();
    let mut buffer = [0u8; 4096];
    let head_end = loop {
        if let Some(at) = received.windows(4).position(|window| window == b"\r\n\r\n") {
            break at + 4;
        }
        let read = socket.read(&mut buffer).await.unwrap();
        assert!(read > 0, "client closed before sending a request");
        received.extend_from_slice(&buffer[..read]);
    };
    let head = String::from_utf8_lossy(&received[..head_end]).to_lowercase();
    let content_length: usize = head
        .lines()
        .find_map(|line| line.strip_prefix("content-length:"))
        .map(|value| value.trim().parse().unwrap())
        .unwrap_or(0);
    while received.len() < head_end + content_length {
        let read = socket.read(&mut buffer).await.unwrap();
        assert!(read > 0);
        received.extend_from_slice(&buffer[..read]);
    }
    SeenRequest { head, body: received[head_end..head_end + content_length].to_vec() }
}

/// An HTTP/1.1 chunked response: the head, then `body` chunk-encoded in pieces of the given
/// sizes, then (if `terminated`) the last chunk; returned as one byte string.
fn chunked_response(content_type: &str, body: &[u8], piece_sizes: &[usize], terminated: bool) -> Vec<u8> {
    let mut wire =
        format!("HTTP/1.1 200 OK\r\ncontent-type: {content_type}\r\ntransfer-encoding: chunked\r\n\r\n").into_bytes();
    let mut rest = body;
    let mut sizes = piece_sizes.iter().cycle();
    while !rest.is_empty() {
        let size = (*sizes.next().unwrap()).min(rest.len());
        let (piece, tail) = rest.split_at(size);
        wire.extend_from_slice(format!("{size:x}\r\n").as_bytes());
        wire.extend_from_slice(piece);
        wire.extend_from_slice(b"\r\n");
        rest = tail;
    }
    if terminated {
        wire.extend_from_slice(b"0\r\n\r\n");
    }
    wire
}

/// Cut `wire` into writes of the given sizes (cycled), ignoring chunk and event boundaries.
fn split_into_writes(wire: &[u8], write_sizes: &[usize]) -> Vec<Vec<u8>> {
    let mut writes = Vec::new();
    let mut rest = wire;
    let mut sizes = write_sizes.iter().cycle();
    while !rest.is_empty() {
        let size = (*sizes.next().unwrap()).min(rest.len());
        let (write, tail) = rest.split_at(size);
        writes.push(write.to_vec());
        rest = tail;
    }
    writes
}

fn endpoint(url: &str, kind: EndpointKind, streaming: bool) -> Endpoint {
    Endpoint {
        api_key: Some("sk-test-key".into()),
        headers: [("X-Team".to_owned(), "infra".to_owned())].into(),
        ..Endpoint::new(url, "test-model", kind, streaming)
    }
}

fn record(x_request_id: &str) -> RequestRecord {
    let origin = RequestOrigin {
        phase_index: 0,
        phase_name: Arc::from("profiling"),
        phase_kind: PhaseKind::Profiling,
        index_in_phase: 0,
        dataset_index: 0,
    };
    RequestRecord::new(origin, x_request_id.to_owned(), 0, 4, Some(16))
}

/// Send one request from a spawned task, as the engine does (so `send` must be `Send`).
async fn send(endpoint: &Endpoint, timeout: Duration) -> RequestRecord {
    let client = Arc::new(HttpClient::new(endpoint, RunClock::start(), timeout, 4).unwrap());
    let body = Bytes::from(request_body(endpoint, "hello", Some(16)));
    let task = tokio::spawn(async move {
        let mut record = record("req-42");
        client.send(body, &mut record).await;
        record
    });
    task.await.unwrap()
}

fn chat_delta(field: &str, text: &str) -> String {
    format!(
        "data: {{\"id\":\"c1\",\"choices\":[{{\"index\":0,\"delta\":{{\"{field}\":{text:?}}},\"finish_reason\":null}}],\"usage\":null}}\n\n"
    )
}

fn chat_stream_body() -> String {
    [
        ": keep-alive\n\n".to_owned(),
        "data: {\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n".to_owned(),
        chat_delta("reasoning_content", "Let me think."),
        chat_delta("content", "Hel"),
        chat_delta("content", "lo, "),
        chat_delta("content", "w\u{f6}rld\n"),
        "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}\r\n\r\n".to_owned(),
        "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":4,\"completion_tokens\":5,\"total_tokens\":9,\"completion_tokens_details\":{\"reasoning_tokens\":2}}}\n\n".to_owned(),
        "data: [DONE]\n\n".to_owned(),
    ]
    .concat()
}

#[tokio::test]
async fn a_chat_stream_split_awkwardly_is_read_whole() {
    let wire =
        chunked_response("text/event-stream; charset=utf-8", chat_stream_body().as_bytes(), &[7, 61, 3, 130], true);
    let (base_url, server) = serve_once(split_into_writes(&wire, &[90, 5, 33, 120, 1])).await;
    let endpoint = endpoint(&base_url, EndpointKind::Chat, true);
    let record = send(&endpoint, Duration::from_secs(10)).await;
    let seen = server.await.unwrap();

    assert!(record.error.is_none(), "{:?}", record.error);
    assert_eq!(record.status, Some(200));
    assert_eq!(record.content, "Hello, w\u{f6}rld\n");
    assert_eq!(record.reasoning, "Let me think.");
    assert_eq!(record.finish_reason.as_deref(), Some("stop"));
    assert_eq!(
        record.usage,
        Some(Usage {
            prompt_tokens: Some(4),
            completion_tokens: Some(5),
            total_tokens: Some(9),
            reasoning_tokens: Some(2),
            ..Usage::default()
        })
    );
    assert_eq!(record.chunks.len(), 4, "{:?}", record.chunks);
    assert!(record.chunks[0].has_reasoning && !record.chunks[0].has_content);
    assert!(record.chunks[1..].iter().all(|chunk| chunk.has_content && !chunk.has_reasoning));

    let ack_ns = record.ack_ns.unwrap();
    assert!(record.start_ns <= ack_ns);
    let times: Vec<u64> = record.chunks.iter().map(|chunk| chunk.ns).collect();
    assert!(times.windows(2).all(|pair| pair[0] <= pair[1]), "{times:?}");
    assert!(ack_ns < times[0] && times[0] < times[3], "spread over several reads: {times:?}");
    assert!(times[3] <= record.end_ns);

    assert!(seen.head.starts_with("post /v1/chat/completions http/1.1\r\n"), "{}", seen.head);
    for header in [
        "x-request-id: req-42",
        "authorization: bearer sk-test-key",
        "content-type: application/json",
        "accept: text/event-stream",
        "x-team: infra",
        "user-agent: aiperf/",
    ] {
        assert!(seen.head.contains(header), "missing {header:?} in {}", seen.head);
    }
    let sent: serde_json::Value = serde_json::from_slice(&seen.body).unwrap();
    assert_eq!(sent["stream"], serde_json::json!(true));
    assert_eq!(sent["max_completion_tokens"], serde_json::json!(16));
}

#[tokio::test]
async fn a_completions_stream_ending_without_done_but_with_finish_reason_is_fine() {
    let body = "data: {\"choices\":[{\"text\":\"Once\"}]}\n\ndata: {\"choices\":[{\"text\":\" upon\",\"finish_reason\":\"length\"}]}";
    let wire = chunked_response("text/event-stream", body.as_bytes(), &[20], true);
    let (base_url, server) = serve_once(split_into_writes(&wire, &[25])).await;
    let record = send(&endpoint(&base_url, EndpointKind::Completions, true), Duration::from_secs(10)).await;
    let seen = server.await.unwrap();

    assert!(record.error.is_none(), "{:?}", record.error);
    assert_eq!(record.content, "Once upon");
    assert_eq!(record.chunks.len(), 2);
    assert_eq!(record.finish_reason.as_deref(), Some("length"));
    assert!(seen.head.starts_with("post /v1/completions "), "{}", seen.head);
}

#[tokio::test]
async fn a_stream_cut_short_is_a_stream_error_that_keeps_what_arrived() {
    let body = [chat_delta("content", "partial "), chat_delta("content", "answer")].concat();
    let wire = chunked_response("text/event-stream", body.as_bytes(), &[50], false);
    let (base_url, server) = serve_once(split_into_writes(&wire, &[64])).await;
    let record = send(&endpoint(&base_url, EndpointKind::Chat, true), Duration::from_secs(10)).await;
    server.await.unwrap();

    let error = record.error.expect("a cut stream is an error");
    assert_eq!(error.kind, "stream_error");
    assert!(error.message.starts_with("stream ended before [DONE] after 2 events"), "{}", error.message);
    assert_eq!(record.content, "partial answer");
    assert_eq!(record.chunks.len(), 2);
    assert!(record.end_ns >= record.chunks[1].ns);
}

#[tokio::test]
async fn a_stream_that_ends_cleanly_without_done_or_finish_reason_is_a_stream_error() {
    let wire = chunked_response("text/event-stream", chat_delta("content", "only").as_bytes(), &[100], true);
    let (base_url, server) = serve_once(vec![wire]).await;
    let record = send(&endpoint(&base_url, EndpointKind::Chat, true), Duration::from_secs(10)).await;
    server.await.unwrap();

    let error = record.error.unwrap();
    assert_eq!(
        (error.kind.as_str(), error.message.as_str()),
        ("stream_error", "stream ended before [DONE] after 1 events")
    );
    assert_eq!(record.content, "only");
}

#[tokio::test]
async fn a_500_with_an_openai_error_body_is_an_error_of_its_reason_phrase_with_its_message() {
    let body = r#"{"error":{"message":"The server had an error while processing your request.","type":"server_error","code":null}}"#;
    let response = format!(
        "HTTP/1.1 500 Internal Server Error\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    let (base_url, server) = serve_once(vec![response.into_bytes()]).await;
    let record = send(&endpoint(&base_url, EndpointKind::Chat, true), Duration::from_secs(10)).await;
    server.await.unwrap();

    let error = record.error.unwrap();
    assert_eq!(error.kind, "Internal Server Error", "AIPerf's type: the status's reason phrase");
    assert_eq!(error.code, Some(500));
    assert_eq!(error.message, "The server had an error while processing your request.");
    assert_eq!(record.status, Some(500));
    assert!(record.chunks.is_empty());
}

#[tokio::test]
async fn a_plain_text_error_body_becomes_the_message() {
    let response =
        "HTTP/1.1 429 Too Many Requests\r\ncontent-type: text/plain\r\ncontent-length: 17\r\n\r\nslow down please\n";
    let (base_url, server) = serve_once(vec![response.as_bytes().to_vec()]).await;
    let record = send(&endpoint(&base_url, EndpointKind::Completions, false), Duration::from_secs(10)).await;
    server.await.unwrap();

    let error = record.error.unwrap();
    assert_eq!(
        (error.kind.as_str(), error.code, error.message.as_str()),
        ("Too Many Requests", Some(429), "slow down please")
    );
}

#[tokio::test]
async fn a_json_response_is_one_chunk_even_when_streaming_was_asked_for() {
    let body = r#"{"id":"x","choices":[{"index":0,"message":{"role":"assistant","content":"Hi there","reasoning_content":"greet"},"finish_reason":"stop"}],"usage":{"prompt_tokens":4,"completion_tokens":2,"total_tokens":6}}"#;
    let response =
        format!("HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}", body.len());
    let writes = split_into_writes(response.as_bytes(), &[80]);
    for streaming in [false, true] {
        let (base_url, server) = serve_once(writes.clone()).await;
        let record = send(&endpoint(&base_url, EndpointKind::Chat, streaming), Duration::from_secs(10)).await;
        let seen = server.await.unwrap();

        assert!(record.error.is_none(), "{:?}", record.error);
        assert_eq!(record.content, "Hi there");
        assert_eq!(record.reasoning, "greet");
        assert_eq!(record.finish_reason.as_deref(), Some("stop"));
        assert_eq!(record.usage.and_then(|usage| usage.total_tokens), Some(6));
        assert_eq!(record.chunks.len(), 1);
        assert!(record.chunks[0].has_content && record.chunks[0].has_reasoning);
        assert_eq!(record.chunks[0].ns, record.end_ns);
        assert!(record.start_ns <= record.ack_ns.unwrap() && record.ack_ns.unwrap() <= record.end_ns);
        let accept = if streaming { "accept: text/event-stream" } else { "accept: application/json" };
        assert!(seen.head.contains(accept), "{}", seen.head);
    }
}

#[tokio::test]
async fn invalid_json_in_a_stream_is_an_invalid_response() {
    let wire = chunked_response("text/event-stream", b"data: {\"choices\": oops}\n\n", &[100], true);
    let (base_url, server) = serve_once(vec![wire]).await;
    let record = send(&endpoint(&base_url, EndpointKind::Chat, true), Duration::from_secs(10)).await;
    server.await.unwrap();

    let error = record.error.unwrap();
    assert_eq!(error.kind, "invalid_response");
    assert!(error.message.contains("{\"choices\": oops}"), "{}", error.message);
}

#[tokio::test]
async fn a_closed_port_is_a_connection_error_naming_the_cause_and_url() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base_url = format!("http://{}", listener.local_addr().unwrap());
    drop(listener);
    let record = send(&endpoint(&base_url, EndpointKind::Chat, true), Duration::from_secs(10)).await;

    let error = record.error.unwrap();
    assert_eq!(error.kind, "connection_error");
    assert_eq!(error.message, format!("connection refused ({base_url}/v1/chat/completions)"));
    assert!(record.ack_ns.is_none() && record.status.is_none());
    assert!(record.end_ns >= record.start_ns);
}

#[tokio::test]
async fn a_server_that_never_answers_is_a_timeout() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base_url = format!("http://{}", listener.local_addr().unwrap());
    let server = tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.unwrap();
        read_request(&mut socket).await;
        tokio::time::sleep(Duration::from_secs(5)).await;
    });
    let record = send(&endpoint(&base_url, EndpointKind::Chat, true), Duration::from_millis(200)).await;
    server.abort();

    let error = record.error.unwrap();
    assert_eq!(error.kind, "TimeoutError");
    assert!(error.message.contains("200ms"), "{}", error.message);
    let elapsed_ns = record.end_ns - record.start_ns;
    assert!((200_000_000..2_000_000_000).contains(&elapsed_ns), "{elapsed_ns}");
}

#[test]
fn a_bad_url_is_refused_by_new_with_the_url_in_the_message() {
    for bad_url in ["mock", "ftp://example.com", "http://", "not a url"] {
        let endpoint = endpoint(bad_url, EndpointKind::Chat, true);
        let error =
            HttpClient::new(&endpoint, RunClock::start(), Duration::from_secs(1), 1).err().expect(bad_url).to_string();
        assert!(error.contains(bad_url), "{error}");
        assert!(!error.contains("sk-test-key"), "{error}");
    }
}

/// Accept connections until the test ends, each served by `serve` on a task of its own.
/// Returns the url and a counter of accepted connections.
async fn serve_each_connection<F, Served>(serve: F) -> (String, Arc<std::sync::atomic::AtomicUsize>)
where
    F: Fn(TcpStream) -> Served + Send + 'static,
    Served: std::future::Future<Output = ()> + Send + 'static,
{
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base_url = format!("http://{}", listener.local_addr().unwrap());
    let accepted = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = accepted.clone();
    tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            tokio::spawn(serve(socket));
        }
    });
    (base_url, accepted)
}

/// Serve every connection one answered request; a second request on the same connection is
/// read and then the connection is closed unanswered, as a server closing an idle keep-alive
/// connection does.
async fn serve_one_request_per_connection(wire: Vec<u8>) -> (String, Arc<std::sync::atomic::AtomicUsize>) {
    serve_each_connection(move |mut socket| {
        let wire = wire.clone();
        async move {
            read_request(&mut socket).await;
            socket.write_all(&wire).await.unwrap();
            let mut buffer = [0u8; 4096];
            let _ = socket.read(&mut buffer).await;
        }
    })
    .await
}

#[tokio::test]
async fn a_keep_alive_connection_closed_by_the_server_is_retried_on_a_new_one() {
    let wire = chunked_response("text/event-stream", chat_stream_body().as_bytes(), &[64], true);
    let (base_url, accepted) = serve_one_request_per_connection(wire).await;
    let endpoint = endpoint(&base_url, EndpointKind::Chat, true);
    let client = HttpClient::new(&endpoint, RunClock::start(), Duration::from_secs(10), 1).unwrap();
    let body = Bytes::from(request_body(&endpoint, "hello", Some(16)));
    for i in 0..4 {
        let mut record = record(&format!("req-{i}"));
        client.send(body.clone(), &mut record).await;
        assert!(record.error.is_none(), "request {i}: {:?}", record.error);
        assert_eq!(record.content, "Hello, w\u{f6}rld\n");
        let trace = record.trace.as_ref().expect("trace");
        assert!(trace.connection_reused_ns.is_none(), "request {i} went over a new connection after the retry");
    }
    assert_eq!(accepted.load(std::sync::atomic::Ordering::SeqCst), 4, "one new connection per answered request");
}

/// Serve every connection an early 413: read the request's head only, answer, and close
/// without reading the body (which makes the close a reset).
async fn serve_too_large() -> (String, Arc<std::sync::atomic::AtomicUsize>) {
    serve_each_connection(|mut socket| async move {
        let mut head = Vec::new();
        while !head.ends_with(b"\r\n\r\n") {
            head.push(socket.read_u8().await.unwrap());
        }
        let body = r#"{"error":{"message":"request entity too large","type":"invalid_request_error"}}"#;
        let answer = format!(
            "HTTP/1.1 413 Payload Too Large\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
            body.len()
        );
        socket.write_all(answer.as_bytes()).await.unwrap();
    })
    .await
}

#[tokio::test]
async fn a_server_refusing_a_large_request_before_reading_it_is_an_error_status_with_its_message() {
    let (base_url, accepted) = serve_too_large().await;
    let endpoint = endpoint(&base_url, EndpointKind::Chat, true);
    let client = HttpClient::new(&endpoint, RunClock::start(), Duration::from_secs(20), 1).unwrap();
    // 48 MB: far more than the sockets' buffers take before the server answers.
    let body = Bytes::from(request_body(&endpoint, &"word ".repeat(48 << 18), Some(16)));
    for i in 0..2 {
        let mut record = record(&format!("req-{i}"));
        client.send(body.clone(), &mut record).await;
        let error = record.error.expect("an error");
        assert_eq!(
            (error.kind.as_str(), error.code),
            ("Payload Too Large", Some(413)),
            "request {i}: {}",
            error.message
        );
        assert_eq!(error.message, "request entity too large");
        assert_eq!(record.status, Some(413));
    }
    assert_eq!(accepted.load(std::sync::atomic::Ordering::SeqCst), 2, "each answered once, on its own connection");
}
