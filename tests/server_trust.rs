//! Trusting an https server through `tls: #{ ca_file }`, against a real TLS server on
//! 127.0.0.1 with certificates made here: a self-signed certificate with the CA flag (as
//! `openssl req -x509 -subj /CN=localhost` makes one, no alternative names) given as `ca_file`
//! is accepted, refused without it with a message that names the fix, and refused even
//! through `ca_file` when it names another host or has expired; a server certificate signed by
//! a CA in `ca_file` is still verified the ordinary way.

mod common;

use std::sync::Arc;
use std::time::Duration;

use aiperf::client::HttpClient;
use aiperf::clock::RunClock;
use aiperf::plan::{Endpoint, EndpointKind, TlsSettings};
use aiperf::record::RequestRecord;
use aiperf::request_bodies::request_body;
use bytes::Bytes;
use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;

const ANSWER: &str = r#"{"choices":[{"message":{"content":"hi"},"finish_reason":"stop"}]}"#;

/// A certificate and its key, as the server presents them.
struct ServerCertificate {
    der: rustls::pki_types::CertificateDer<'static>,
    pem: String,
    key: KeyPair,
}

/// A self-signed certificate with the CA flag for `common_name`, with `alternative_names`
/// (none, as `openssl req -x509 -subj /CN=..` gives) and an expiry `expired` or not.
fn self_signed_ca(common_name: &str, alternative_names: &[&str], expired: bool) -> ServerCertificate {
    let key = KeyPair::generate().unwrap();
    let mut params =
        CertificateParams::new(alternative_names.iter().map(|name| name.to_string()).collect::<Vec<_>>()).unwrap();
    params.distinguished_name.push(DnType::CommonName, common_name);
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    if expired {
        params.not_before = rcgen::date_time_ymd(2020, 1, 1);
        params.not_after = rcgen::date_time_ymd(2021, 1, 1);
    }
    let certificate = params.self_signed(&key).unwrap();
    ServerCertificate { der: certificate.der().clone(), pem: certificate.pem(), key }
}

/// A TLS server on 127.0.0.1 presenting `chain` (its first certificate signed by `key`) that
/// answers each request on a connection with the same chat JSON; its port.
async fn start_server(chain: Vec<rustls::pki_types::CertificateDer<'static>>, key: &KeyPair) -> u16 {
    let key = rustls::pki_types::PrivateKeyDer::Pkcs8(key.serialize_der().into());
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .unwrap();
    let acceptor = TlsAcceptor::from(Arc::new(config));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let Ok(mut stream) = acceptor.accept(socket).await else { return };
                let mut request = Vec::new();
                let mut buffer = [0u8; 4096];
                while let Ok(read @ 1..) = stream.read(&mut buffer).await {
                    request.extend_from_slice(&buffer[..read]);
                    let Some(head_end) = request.windows(4).position(|w| w == b"\r\n\r\n").map(|at| at + 4) else {
                        continue;
                    };
                    let head = String::from_utf8_lossy(&request[..head_end]).to_lowercase();
                    let length: usize = head
                        .lines()
                        .find_map(|l| l.strip_prefix("content-length:"))
                        .unwrap_or("0")
                        .trim()
                        .parse()
                        .unwrap();
                    if request.len() < head_end + length {
                        continue;
                    }
                    request.drain(..head_end + length);
                    let answer = format!(
                        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{ANSWER}",
                        ANSWER.len()
                    );
                    if stream.write_all(answer.as_bytes()).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    port
}

/// One chat request to `url` trusting `ca_pem` (written to a file) when given; its record.
async fn send(url: String, ca_pem: Option<&str>) -> RequestRecord {
    let dir = tempfile::tempdir().unwrap();
    let mut endpoint = Endpoint::new(url, "m", EndpointKind::Chat, false);
    if let Some(pem) = ca_pem {
        let path = dir.path().join("server.pem");
        std::fs::write(&path, pem).unwrap();
        endpoint.transport.tls = TlsSettings { ca_file: Some(path.to_str().unwrap().to_owned()), insecure: false };
    }
    let client = HttpClient::new(&endpoint, RunClock::start(), Duration::from_secs(10), 1).unwrap();
    let mut record = common::profiling_record("req-0");
    client.send(Bytes::from(request_body(&endpoint, "hello", Some(8))), &mut record).await;
    record
}

fn error_of(record: &RequestRecord) -> String {
    record.error.as_ref().expect("the request should fail").message.clone()
}

#[tokio::test]
async fn a_self_signed_ca_certificate_given_as_ca_file_is_trusted_and_refused_without_it() {
    let server = self_signed_ca("localhost", &[], false);
    let port = start_server(vec![server.der.clone()], &server.key).await;
    let url = format!("https://localhost:{port}");

    let trusted = send(url.clone(), Some(&server.pem)).await;
    assert!(trusted.error.is_none(), "{:?}", trusted.error);
    assert_eq!(trusted.content, "hi");

    let refused = error_of(&send(url, None).await);
    assert!(refused.starts_with("TLS handshake with localhost failed: invalid peer certificate"), "{refused}");
    assert!(refused.contains("ca_file: \"server.pem\" } the server's own certificate"), "{refused}");
    assert!(refused.contains("skips verification, only as a last resort"), "{refused}");
}

#[tokio::test]
async fn a_self_signed_certificate_with_alternative_names_is_trusted_by_them() {
    let server = self_signed_ca("gateway", &["localhost", "127.0.0.1"], false);
    let port = start_server(vec![server.der.clone()], &server.key).await;
    for host in ["localhost", "127.0.0.1"] {
        let record = send(format!("https://{host}:{port}"), Some(&server.pem)).await;
        assert!(record.error.is_none(), "{host}: {:?}", record.error);
    }
}

#[tokio::test]
async fn a_certificate_for_another_name_or_expired_is_refused_even_through_ca_file() {
    let other = self_signed_ca("other.example", &[], false);
    let port = start_server(vec![other.der.clone()], &other.key).await;
    let error = error_of(&send(format!("https://localhost:{port}"), Some(&other.pem)).await);
    assert!(error.contains("certificate not valid for name"), "{error}");
    assert!(error.contains("the certificate does not name localhost"), "{error}");

    let ip_only_by_name = self_signed_ca("127.0.0.1", &[], false);
    let port = start_server(vec![ip_only_by_name.der.clone()], &ip_only_by_name.key).await;
    let error = error_of(&send(format!("https://127.0.0.1:{port}"), Some(&ip_only_by_name.pem)).await);
    assert!(error.contains("does not name 127.0.0.1"), "an IP address is matched only by alternative names: {error}");

    let expired = self_signed_ca("localhost", &["localhost"], true);
    let port = start_server(vec![expired.der.clone()], &expired.key).await;
    let error = error_of(&send(format!("https://localhost:{port}"), Some(&expired.pem)).await);
    assert!(error.contains("expired"), "{error}");
    assert!(error.contains("outside its validity period"), "{error}");
}

#[tokio::test]
async fn a_server_certificate_signed_by_a_ca_in_ca_file_is_verified_the_usual_way() {
    let ca_key = KeyPair::generate().unwrap();
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.distinguished_name.push(DnType::CommonName, "Test CA");
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca = ca_params.self_signed(&ca_key).unwrap();
    let issuer = Issuer::new(ca_params, &ca_key);
    let leaf_key = KeyPair::generate().unwrap();
    let leaf = CertificateParams::new(vec!["localhost".to_owned()]).unwrap().signed_by(&leaf_key, &issuer).unwrap();
    let port = start_server(vec![leaf.der().clone()], &leaf_key).await;

    let record = send(format!("https://localhost:{port}"), Some(&ca.pem())).await;
    assert!(record.error.is_none(), "{:?}", record.error);
    let error = error_of(&send(format!("https://127.0.0.1:{port}"), Some(&ca.pem())).await);
    assert!(error.contains("certificate not valid for name"), "the CA's leaf names only localhost: {error}");
    let stranger = self_signed_ca("localhost", &["localhost"], false);
    let error = error_of(&send(format!("https://localhost:{port}"), Some(&stranger.pem)).await);
    assert!(error.contains("UnknownIssuer") || error.contains("unknown issuer"), "{error}");
}
