//! HTTP trace, TLS and connection strategies against a counting keep-alive test server, over
//! plain HTTP and over TLS with a self-signed certificate made here, plus a full scenario run;
//! HTTP/2 requests whose shared connection is cut off, through a relay to the mock.

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use aiperf::client::{HttpClient, HttpTrace};
use aiperf::clock::RunClock;
use aiperf::plan::{ConnectionStrategy, Endpoint, EndpointKind, PhaseKind, TlsSettings};
use aiperf::record::{RequestOrigin, RequestRecord};
use aiperf::request_bodies::request_body;
use bytes::Bytes;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;

/// How long the server thinks before answering, so requests overlap.
const SERVER_DELAY: Duration = Duration::from_millis(20);
const ANSWER: &str = r#"{"choices":[{"message":{"content":"hi there"},"finish_reason":"stop"}]}"#;

/// Bytes the server read and wrote for each request, in order.
type Tally = Arc<Mutex<Vec<(u64, u64)>>>;

/// A keep-alive HTTP/1.1 server (over TLS when `tls` is given) that answers every request with
/// the same JSON after `SERVER_DELAY`, tallying the bytes of each exchange.
async fn start_server(tls: Option<TlsAcceptor>) -> (u16, Tally) {
    start_server_slow_to_shake_hands(tls, Duration::ZERO).await
}

/// `start_server`, its TLS handshakes starting `handshake_delay` after each connection.
async fn start_server_slow_to_shake_hands(tls: Option<TlsAcceptor>, handshake_delay: Duration) -> (u16, Tally) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let tally = Tally::default();
    let seen = tally.clone();
    tokio::spawn(async move {
        loop {
            let (socket, _) = listener.accept().await.unwrap();
            let (tls, seen) = (tls.clone(), seen.clone());
            tokio::spawn(async move {
                match tls {
                    Some(acceptor) => {
                        tokio::time::sleep(handshake_delay).await;
                        if let Ok(stream) = acceptor.accept(socket).await {
                            serve(stream, seen).await;
                        }
                    }
                    None => serve(socket, seen).await,
                }
            });
        }
    });
    (port, tally)
}

async fn serve<S: AsyncRead + AsyncWrite + Unpin>(mut stream: S, tally: Tally) {
    let mut pending = Vec::new();
    let mut buffer = [0u8; 8192];
    loop {
        let head_end = loop {
            if let Some(at) = pending.windows(4).position(|window| window == b"\r\n\r\n") {
                break at + 4;
            }
            match stream.read(&mut buffer).await {
                Ok(0) | Err(_) => return,
                Ok(read) => pending.extend_from_slice(&buffer[..read]),
            }
        };
        let head = String::from_utf8_lossy(&pending[..head_end]).to_lowercase();
        let body_length: usize =
            head.lines().find_map(|line| line.strip_prefix("content-length:")).unwrap().trim().parse().unwrap();
        while pending.len() < head_end + body_length {
            let read = stream.read(&mut buffer).await.unwrap();
            pending.extend_from_slice(&buffer[..read]);
        }
        pending.drain(..head_end + body_length);
        tokio::time::sleep(SERVER_DELAY).await;
        let answer = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{ANSWER}",
            ANSWER.len()
        );
        stream.write_all(answer.as_bytes()).await.unwrap();
        stream.flush().await.unwrap();
        tally.lock().unwrap().push(((head_end + body_length) as u64, answer.len() as u64));
    }
}

/// A self-signed certificate for localhost and 127.0.0.1: (server acceptor, CA file).
fn self_signed(dir: &std::path::Path) -> (TlsAcceptor, String) {
    let certified = rcgen::generate_simple_self_signed(vec!["localhost".to_owned(), "127.0.0.1".to_owned()]).unwrap();
    let ca_file = dir.join("ca.pem");
    std::fs::write(&ca_file, certified.cert.pem()).unwrap();
    let key = rustls::pki_types::PrivateKeyDer::Pkcs8(certified.signing_key.serialize_der().into());
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![certified.cert.der().clone()], key)
        .unwrap();
    (TlsAcceptor::from(Arc::new(config)), ca_file.to_str().unwrap().to_owned())
}

fn endpoint(url: String) -> Endpoint {
    Endpoint::new(url, "m", EndpointKind::Chat, false)
}

fn record(session: usize) -> RequestRecord {
    let origin = RequestOrigin {
        phase_index: 0,
        phase_name: Arc::from("profiling"),
        phase_kind: PhaseKind::Profiling,
        index_in_phase: 0,
        dataset_index: session,
    };
    RequestRecord::new(origin, format!("req-{session}"), 0, 4, Some(8))
}

/// Send `body` as a request of `session` on a task of its own; the task gives its record.
fn spawn_send(client: &Arc<HttpClient>, body: &Bytes, session: usize) -> tokio::task::JoinHandle<RequestRecord> {
    let (client, body) = (client.clone(), body.clone());
    tokio::spawn(async move {
        let mut record = record(session);
        client.send(body, &mut record).await;
        record
    })
}

/// Send `count` requests, `at_once` at a time, each of session `i % sessions`; their records.
async fn send_all(client: HttpClient, endpoint: &Endpoint, count: usize, at_once: usize) -> Vec<RequestRecord> {
    let client = Arc::new(client);
    let body = Bytes::from(request_body(endpoint, "hello", Some(8)));
    let mut records = Vec::new();
    for wave in 0..count.div_ceil(at_once) {
        let tasks: Vec<_> = (0..at_once.min(count - wave * at_once)).map(|i| spawn_send(&client, &body, i)).collect();
        for task in tasks {
            records.push(task.await.unwrap());
        }
    }
    records
}

fn trace(record: &RequestRecord) -> &HttpTrace {
    assert!(record.error.is_none(), "{:?}", record.error);
    record.trace.as_deref().expect("a trace")
}

fn client(endpoint: &Endpoint, max_connections: usize) -> HttpClient {
    HttpClient::new(endpoint, RunClock::start(), Duration::from_secs(10), max_connections).unwrap()
}

#[tokio::test]
async fn new_then_reused_connections_and_exact_byte_counts_over_plain_http() {
    let (port, tally) = start_server(None).await;
    let endpoint = endpoint(format!("http://127.0.0.1:{port}"));
    let records = send_all(client(&endpoint, 4), &endpoint, 3, 1).await;
    let first = trace(&records[0]);
    assert!(first.connecting_ns().unwrap() > 0 && !first.connection_reused());
    assert!(first.tls_handshaking_ns().is_none() && first.dns_lookup_ns().is_none(), "an IP needs no DNS");
    for later in &records[1..] {
        let later = trace(later);
        assert!(later.connection_reused() && later.connecting_ns().is_none());
        assert_eq!(later.connection.unwrap().local, first.connection.unwrap().local, "the same connection");
    }
    let tally = tally.lock().unwrap().clone();
    for (record, (server_read, server_wrote)) in records.iter().zip(tally) {
        let trace = trace(record);
        assert_eq!((trace.request_bytes_total, trace.response_bytes_total), (server_read, server_wrote));
        let phases_ns = trace.sending_ns().unwrap() + trace.waiting_ns().unwrap() + trace.receiving_ns().unwrap();
        assert_eq!(phases_ns, trace.duration_ns().unwrap(), "sending + waiting + receiving = duration");
        assert!(trace.waiting_ns().unwrap() >= SERVER_DELAY.as_nanos() as u64);
    }
}

#[tokio::test]
async fn a_pool_of_one_with_four_at_once_blocks_three() {
    let (port, _) = start_server(None).await;
    let endpoint = endpoint(format!("http://127.0.0.1:{port}"));
    let records = send_all(client(&endpoint, 1), &endpoint, 4, 4).await;
    let blocked: Vec<u64> = records.iter().filter_map(|record| trace(record).blocked_ns()).collect();
    assert_eq!(blocked.len(), 3, "all but the first wait for the one connection");
    assert!(blocked.iter().all(|&ns| ns >= SERVER_DELAY.as_nanos() as u64 / 2), "{blocked:?}");
    let reused = records.iter().filter(|record| trace(record).connection_reused()).count();
    assert_eq!(reused, 3);
}

#[tokio::test]
async fn never_reuse_and_sticky_strategies() {
    let (port, _) = start_server(None).await;
    let mut never = endpoint(format!("http://127.0.0.1:{port}"));
    never.transport.connections.strategy = ConnectionStrategy::NeverReuse;
    let records = send_all(client(&never, 4), &never, 3, 1).await;
    assert!(records.iter().all(|record| !trace(record).connection_reused()));

    let mut sticky = endpoint(format!("http://127.0.0.1:{port}"));
    sticky.transport.connections.strategy = ConnectionStrategy::Sticky;
    // Two waves of sessions 0 and 1: each session gets its own connection back.
    let records = send_all(client(&sticky, 4), &sticky, 4, 2).await;
    let local = |i: usize| trace(&records[i]).connection.unwrap().local;
    assert_ne!(local(0), local(1));
    assert_eq!((local(2), local(3)), (local(0), local(1)));
    assert!(trace(&records[2]).connection_reused() && trace(&records[3]).connection_reused());
}

#[tokio::test]
async fn tls_handshakes_are_timed_and_then_reused() {
    let dir = tempfile::tempdir().unwrap();
    let (acceptor, ca_file) = self_signed(dir.path());
    let (port, tally) = start_server(Some(acceptor)).await;
    let mut endpoint = endpoint(format!("https://localhost:{port}"));
    endpoint.transport.tls = TlsSettings { ca_file: Some(ca_file), insecure: false };
    let records = send_all(client(&endpoint, 4), &endpoint, 2, 1).await;
    let first = trace(&records[0]);
    assert!(
        first.tls_handshaking_ns().unwrap() > 0 && first.connecting_ns().unwrap() > first.tls_handshaking_ns().unwrap()
    );
    assert!(first.dns_lookup_ns().is_some(), "localhost is resolved");
    assert!(first.connection.unwrap().tls);
    let second = trace(&records[1]);
    assert!(second.connection_reused() && second.tls_handshaking_ns().is_none() && second.connecting_ns().is_none());
    let tally = tally.lock().unwrap().clone();
    assert_eq!(second.request_bytes_total, tally[1].0, "HTTP bytes inside TLS");
}

#[tokio::test]
async fn http2_refused_by_a_tls_server_opens_the_http1_connections_side_by_side() {
    let dir = tempfile::tempdir().unwrap();
    // The server offers no ALPN protocol, so HTTP/1.1 it is.
    let (acceptor, ca_file) = self_signed(dir.path());
    let (port, _) = start_server_slow_to_shake_hands(Some(acceptor), Duration::from_millis(50)).await;
    let mut endpoint = endpoint(format!("https://localhost:{port}"));
    endpoint.transport.tls = TlsSettings { ca_file: Some(ca_file), insecure: false };
    endpoint.transport.http2 = true;
    let records = send_all(client(&endpoint, 8), &endpoint, 8, 8).await;
    let mut opened: Vec<(u64, u64)> = records
        .iter()
        .filter_map(|record| {
            let trace = trace(record);
            assert!(!trace.connection.unwrap().http2, "HTTP/1.1 was chosen");
            Some((trace.tcp_connect_start_ns?, trace.tls_handshake_end_ns?))
        })
        .collect();
    opened.sort();
    // The first opens alone (it might have been HTTP/2, for all to share); the other seven, once
    // it turned out HTTP/1.1, each open their own at once instead of in turn (or waiting to
    // reuse the first).
    assert_eq!(opened.len(), 8, "a connection for each request in flight");
    let overlapping = opened.windows(2).filter(|pair| pair[1].0 < pair[0].1).count();
    assert_eq!(overlapping, 6, "connections opened (connect start, handshake end): {opened:?}");
}

#[tokio::test]
async fn an_untrusted_certificate_is_one_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let (acceptor, _) = self_signed(dir.path());
    let (port, _) = start_server(Some(acceptor)).await;
    let endpoint = endpoint(format!("https://127.0.0.1:{port}"));
    let records = send_all(client(&endpoint, 4), &endpoint, 1, 1).await;
    let error = records[0].error.clone().expect("an error");
    assert_eq!(error.kind, "connection_error");
    assert!(
        error.message.starts_with("TLS handshake with 127.0.0.1 failed: invalid peer certificate"),
        "{}",
        error.message
    );
    assert!(error.message.contains("ca_file"), "{}", error.message);

    let mut insecure = endpoint.clone();
    insecure.transport.tls.insecure = true;
    let records = send_all(client(&insecure, 4), &insecure, 1, 1).await;
    assert!(trace(&records[0]).tls_handshaking_ns().is_some());
}

#[test]
fn trace_data_is_written_with_aiperf_field_names() {
    let run = common::run_scenario(
        "traced",
        r#"run(#{
            endpoint: endpoint(#{ url: "mock", mock: #{ ttft: ms(2), itl: ms(1) }, connections: #{ max: 1 } }),
            dataset: synthetic(#{ isl: 16, osl: 4 }),
            phases: [concurrency(#{ users: 2, requests: 4 })],
            export_http_trace: true,
            trace_table: true,
        });"#,
    );
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    assert!(run.stdout().contains("HTTP Trace Timing"), "{}", run.stdout());
    let records = run.records("traced");
    let fields = [
        "trace_type",
        "request_send_start_ns",
        "request_headers",
        "request_headers_sent_ns",
        "request_chunks",
        "request_send_end_ns",
        "request_chunks_count",
        "request_bytes_total",
        "response_status_code",
        "response_reason",
        "response_receive_start_ns",
        "response_headers",
        "response_headers_received_ns",
        "response_chunks",
        "response_chunks_count",
        "response_bytes_total",
        "response_receive_end_ns",
        "local_ip",
        "local_port",
        "remote_ip",
        "remote_port",
        "sending_ns",
        "waiting_ns",
        "receiving_ns",
        "duration_ns",
    ];
    for record in &records {
        let trace_data = &record["trace_data"];
        for field in fields {
            assert!(trace_data.get(field).is_some(), "trace_data.{field} missing: {trace_data}");
        }
        let start = trace_data["request_send_start_ns"].as_u64().unwrap();
        assert!(start > 1_700_000_000_000_000_000, "wall-clock ns");
        assert!(record["metrics"]["http_req_duration"]["value"].as_f64().unwrap() > 0.0);
    }
    assert!(records.iter().any(|record| record["trace_data"].get("connection_pool_wait_start_ns").is_some()));
    assert!(records.iter().any(|record| record["trace_data"].get("connecting_ns").is_none()), "reused: omitted");
    let summary = run.summary("traced");
    assert_eq!(common::stat(&summary, "http_req_connection_reused", "max"), 1.0);
    assert!(common::stat(&summary, "http_req_blocked", "max") > 0.0);
}

/// The distinct local ports the records' connections used.
fn local_ports(records: &[serde_json::Value]) -> std::collections::BTreeSet<u64> {
    records.iter().filter_map(|record| record["trace_data"]["local_port"].as_u64()).collect()
}

#[test]
fn http2_multiplexes_every_request_over_one_connection() {
    let scenario = |http2: bool| {
        format!(
            r#"run(#{{
                endpoint: endpoint(#{{ url: "mock", http2: {http2}, mock: #{{ ttft: ms(30), itl: ms(2) }} }}),
                dataset: synthetic(#{{ isl: 16, osl: 8 }}),
                phases: [concurrency(#{{ users: 4, requests: 16 }})],
                export_http_trace: true,
            }});"#
        )
    };
    let h2 = common::run_scenario("h2", &scenario(true));
    assert_eq!(h2.code(), Some(0), "{}", h2.stderr());
    let records = h2.records("h2");
    assert_eq!(records.len(), 16);
    assert!(records.iter().all(|r| r.get("error").is_none()), "every HTTP/2 request succeeded");
    assert!(records.iter().all(|r| r["metrics"]["output_token_count"]["value"] == 8));
    assert_eq!(local_ports(&records).len(), 1, "4 concurrent users shared one HTTP/2 connection");

    // The same load over HTTP/1.1 needs a connection per user.
    let h1 = common::run_scenario("h1", &scenario(false));
    assert_eq!(h1.code(), Some(0), "{}", h1.stderr());
    assert_eq!(local_ports(&h1.records("h1")).len(), 4);
}

/// A TCP relay to `target` that counts the connections it accepts and cuts the first one off
/// (both ways, no reply) when `cut` is notified.
async fn relay_cutting_the_first(
    target: std::net::SocketAddr,
    cut: Arc<tokio::sync::Notify>,
) -> (u16, Arc<Mutex<usize>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let accepted = Arc::new(Mutex::new(0));
    let counted = accepted.clone();
    tokio::spawn(async move {
        loop {
            let (mut client, _) = listener.accept().await.unwrap();
            let first = {
                let mut accepted = counted.lock().unwrap();
                *accepted += 1;
                *accepted == 1
            };
            let cut = cut.clone();
            tokio::spawn(async move {
                let mut server = tokio::net::TcpStream::connect(target).await.unwrap();
                let relay = tokio::io::copy_bidirectional(&mut client, &mut server);
                if first {
                    tokio::select! {
                        _ = relay => {}
                        () = cut.notified() => {}
                    }
                } else {
                    let _ = relay.await;
                }
            });
        }
    });
    (port, accepted)
}

#[tokio::test]
async fn requests_cut_off_with_their_http2_connection_are_sent_again_over_one_new_connection() {
    let mock = aiperf::mock::MockServer::start(
        aiperf::mock::MockConfig { ttft_ms: 400.0, itl_ms: 0.0, ..aiperf::mock::MockConfig::default() },
        "127.0.0.1:0".parse().unwrap(),
    )
    .await
    .unwrap();
    let cut = Arc::new(tokio::sync::Notify::new());
    let (port, accepted) = relay_cutting_the_first(mock.addr(), cut.clone()).await;
    let mut endpoint = endpoint(format!("http://127.0.0.1:{port}"));
    endpoint.transport.http2 = true;
    let client = Arc::new(client(&endpoint, 16));
    let body = Bytes::from(request_body(&endpoint, "hello", Some(4)));
    // One request opens the shared connection; eight more multiplex over it.
    let mut opened = record(8);
    client.send(body.clone(), &mut opened).await;
    let first_connection = trace(&opened).connection.unwrap().local;
    let tasks: Vec<_> = (0..8).map(|i| spawn_send(&client, &body, i)).collect();
    // They wait out the mock's TTFT without an answer when the connection is cut.
    tokio::time::sleep(Duration::from_millis(150)).await;
    cut.notify_one();
    let mut locals = std::collections::BTreeSet::new();
    for task in tasks {
        let record = task.await.unwrap();
        let connection = trace(&record).connection.unwrap();
        assert_ne!(connection.local, first_connection, "sent again on a new connection");
        locals.insert(connection.local);
    }
    assert_eq!(locals.len(), 1, "the eight share one new connection");
    assert_eq!(*accepted.lock().unwrap(), 2, "the cut connection and the one that replaced it");
}
