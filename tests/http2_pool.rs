//! HTTP/2 connections chosen from the server's SETTINGS_MAX_CONCURRENT_STREAMS: the mock
//! advertising a limit (`aiperf mock --http2-max-streams`), over h2c and over TLS (ALPN h2,
//! through a TLS relay made here in front of the mock), and the user's cap on connections.

mod common;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use aiperf::client::HttpClient;
use aiperf::clock::RunClock;
use aiperf::mock::{MockConfig, MockServer};
use aiperf::plan::{Endpoint, EndpointKind, PhaseKind, TlsSettings};
use aiperf::record::{RequestOrigin, RequestRecord};
use aiperf::request_bodies::request_body;
use bytes::Bytes;
use common::mock_process::MockProcess;
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::TlsAcceptor;

#[test]
fn four_hundred_users_open_eight_connections_when_the_server_allows_fifty_streams_each() {
    let port = common::closed_port();
    let _mock = MockProcess::listening(
        port,
        &["--http2-max-streams", "50", "--ttft-ms", "5000", "--itl-ms", "1", "--max-running", "1000"],
    );
    let run = common::run_scenario(
        "limited",
        &format!(
            r#"run(#{{
                endpoint: endpoint(#{{ url: "http://127.0.0.1:{port}", model: "mock-model", http2: true }}),
                dataset: synthetic(#{{ isl: 16, osl: 4 }}),
                phases: [concurrency(#{{ users: 400, requests: 400 }})],
                export_http_trace: true,
            }});"#
        ),
    );
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    let records = run.records("limited");
    assert_eq!(records.len(), 400);
    assert!(records.iter().all(|record| record.get("error").is_none()), "every request completed");
    let mut spans_by_connection = BTreeMap::new();
    for record in &records {
        let trace = &record["trace_data"];
        let port = trace["local_port"].as_u64().expect("a local port");
        let span =
            (trace["request_send_start_ns"].as_u64().unwrap(), trace["response_receive_end_ns"].as_u64().unwrap());
        spans_by_connection.entry(port).or_insert_with(Vec::new).push(span);
    }
    // Every request waits out the 5 s TTFT, so all 400 are in flight at once: 50 a connection.
    let peaks: Vec<usize> = spans_by_connection.into_values().map(peak_overlap).collect();
    assert!(peaks.len() >= 8 && peaks.iter().all(|peak| *peak <= 50), "streams at once, by connection: {peaks:?}");
}

/// The most of `spans` (start, end) open at one moment.
fn peak_overlap(spans: Vec<(u64, u64)>) -> usize {
    let mut edges: Vec<(u64, i64)> = spans.iter().flat_map(|(start, end)| [(*start, 1), (*end, -1)]).collect();
    // Ends before starts at the same instant: a stream freed and taken again is not two.
    edges.sort();
    let mut open = 0i64;
    edges
        .iter()
        .map(|(_, step)| {
            open += step;
            open
        })
        .max()
        .unwrap_or(0) as usize
}

/// The mock on a port of this process's, advertising `max_streams` streams a connection.
async fn mock_allowing(max_streams: u32, ttft_ms: f64) -> MockServer {
    let config = MockConfig {
        ttft_ms,
        itl_ms: 1.0,
        max_running: 10_000,
        http2_max_streams: Some(max_streams),
        ..MockConfig::default()
    };
    MockServer::start(config, "127.0.0.1:0".parse().unwrap()).await.unwrap()
}

/// `count` requests sent at once over HTTP/2 to `endpoint`; their records.
async fn send_at_once(endpoint: &Endpoint, count: usize) -> Vec<RequestRecord> {
    let client = Arc::new(HttpClient::new(endpoint, RunClock::start(), Duration::from_secs(30), count).unwrap());
    let body = Bytes::from(request_body(endpoint, "hello", Some(4)));
    let tasks: Vec<_> = (0..count)
        .map(|index| {
            let (client, body) = (client.clone(), body.clone());
            tokio::spawn(async move {
                let mut record = RequestRecord::new(origin(index), format!("req-{index}"), 0, 4, Some(4));
                client.send(body, &mut record).await;
                record
            })
        })
        .collect();
    let mut records = Vec::new();
    for task in tasks {
        records.push(task.await.unwrap());
    }
    records
}

fn origin(index: usize) -> RequestOrigin {
    RequestOrigin {
        phase_index: 0,
        phase_name: Arc::from("profiling"),
        phase_kind: PhaseKind::Profiling,
        index_in_phase: index as u64,
        dataset_index: index,
    }
}

/// The most streams in use at once on each connection (by local address); every request must
/// have succeeded over HTTP/2.
fn streams_at_once_by_connection(records: &[RequestRecord], tls: bool) -> BTreeMap<SocketAddr, usize> {
    let mut spans = BTreeMap::new();
    for record in records {
        assert!(record.error.is_none(), "{:?}", record.error);
        let trace = record.trace.as_deref().expect("a trace");
        let connection = trace.connection.expect("a connection");
        assert!(connection.http2 && connection.tls == tls, "{connection:?}");
        let span = (trace.request_send_start_ns.unwrap(), trace.response_receive_end_ns.unwrap());
        spans.entry(connection.local).or_insert_with(Vec::new).push(span);
    }
    spans.into_iter().map(|(connection, spans)| (connection, peak_overlap(spans))).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cap_on_connections_queues_the_streams_beyond_it_and_all_complete() {
    let mock = mock_allowing(25, 1_000.0).await;
    let mut endpoint = Endpoint::new(format!("http://{}", mock.addr()), "mock-model", EndpointKind::Chat, true);
    endpoint.transport.http2 = true;
    endpoint.transport.connections.http2_connections = Some(2);
    let started = std::time::Instant::now();
    let records = send_at_once(&endpoint, 150).await;
    let by_connection = streams_at_once_by_connection(&records, false);
    assert_eq!(by_connection.len(), 2, "at most two connections: {by_connection:?}");
    // 150 requests of 1 s through 2 × 25 streams: three rounds, the later ones queued by h2.
    assert!(started.elapsed() >= Duration::from_millis(2_900), "{:?}", started.elapsed());
}

/// A TLS server offering h2 by ALPN whose decrypted bytes go to `target` (the mock): the
/// port it listens on.
async fn tls_relay(target: SocketAddr, acceptor: TlsAcceptor) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        loop {
            let (client, _) = listener.accept().await.unwrap();
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let Ok(mut client) = acceptor.accept(client).await else { return };
                let mut server = TcpStream::connect(target).await.unwrap();
                let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
            });
        }
    });
    port
}

/// A self-signed certificate for localhost offering h2 then http/1.1: (acceptor, CA file).
fn h2_over_tls(dir: &std::path::Path) -> (TlsAcceptor, String) {
    let certified = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).unwrap();
    let ca_file = dir.join("ca.pem");
    std::fs::write(&ca_file, certified.cert.pem()).unwrap();
    let key = rustls::pki_types::PrivateKeyDer::Pkcs8(certified.signing_key.serialize_der().into());
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![certified.cert.der().clone()], key)
        .unwrap();
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    (TlsAcceptor::from(Arc::new(config)), ca_file.to_str().unwrap().to_owned())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn h2_over_tls_opens_connections_by_the_server_s_stream_limit() {
    let mock = mock_allowing(50, 2_000.0).await;
    let dir = tempfile::tempdir().unwrap();
    let (acceptor, ca_file) = h2_over_tls(dir.path());
    let port = tls_relay(mock.addr(), acceptor).await;
    let mut endpoint = Endpoint::new(format!("https://localhost:{port}"), "mock-model", EndpointKind::Chat, true);
    endpoint.transport.http2 = true;
    endpoint.transport.tls = TlsSettings { ca_file: Some(ca_file), insecure: false };
    let records = send_at_once(&endpoint, 120).await;
    let by_connection = streams_at_once_by_connection(&records, true);
    assert!(by_connection.len() >= 3, "120 streams at 50 a connection: {by_connection:?}");
    assert!(by_connection.values().all(|streams| *streams <= 50), "{by_connection:?}");
}

/// 20,000 streams in flight at once from one connection pool, against `aiperf mock` in a
/// process of its own allowing 1,000 streams a connection (so 20 connections). Slow in debug:
/// `scripts/test.sh --release-only`.
#[test]
#[ignore]
fn release_only_twenty_thousand_http2_streams_at_once_from_one_pool() {
    let port = common::closed_port();
    let _mock = MockProcess::listening(
        port,
        &["--http2-max-streams", "1000", "--ttft-ms", "8000", "--itl-ms", "5", "--max-running", "100000"],
    );
    let run = common::run_scenario(
        "streams",
        &format!(
            r#"run(#{{
                name: "streams",
                endpoint: endpoint(#{{ url: "http://127.0.0.1:{port}", model: "mock-model", http2: true }}),
                dataset: synthetic(#{{ isl: 16, osl: 4 }}),
                preflight: false, server_metrics: #{{ enabled: false }}, gpu_telemetry: #{{ enabled: false }},
                request_timeout: seconds(120),
                phases: [concurrency(#{{ users: 20000, requests: 20000 }})],
                export_http_trace: true,
            }});"#
        ),
    );
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    let summary = run.summary("streams");
    assert_eq!(common::stat(&summary, "request_count", "avg"), 20_000.0, "every stream completed");
    assert_eq!(summary["phases"][0]["errors"].as_u64(), Some(0));
    assert_eq!(summary["client_self_check"][0]["peak_in_flight"].as_u64(), Some(20_000), "all at once");
    let records = run.records("streams");
    let connections: std::collections::BTreeSet<u64> =
        records.iter().filter_map(|record| record["trace_data"]["local_port"].as_u64()).collect();
    assert!((20..=40).contains(&connections.len()), "1,000 streams a connection: {} connections", connections.len());
}
