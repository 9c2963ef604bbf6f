//! One HTTP GET of a metrics endpoint (http or https), with a timeout; returns the status,
//! the content type, and the body unless the content type already rules it out.

use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result, anyhow};
use bytes::Bytes;
use http_body_util::{BodyExt, Empty, Limited};
use hyper_rustls::{HttpsConnector, HttpsConnectorBuilder};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;

use crate::plan::TlsSettings;

pub type ScrapeClient = Client<HttpsConnector<HttpConnector>, Empty<Bytes>>;

/// The largest page a scrape reads: a server's or an exporter's metrics are kilobytes to a
/// few megabytes, and a scrape never holds more whatever the endpoint sends.
const MAX_PAGE_BYTES: usize = 64 << 20;

/// A keep-alive client for scraping (one connection per endpoint is plenty).
pub fn scrape_client(tls_settings: &TlsSettings) -> Result<ScrapeClient> {
    // The endpoint's TLS settings (custom CA, insecure), as the benchmark client uses them.
    let tls = crate::client::tls_client_config(tls_settings, false).context("setting up TLS for metrics scrapes")?;
    let mut tls = Arc::unwrap_or_clone(tls);
    // hyper-rustls sets the ALPN protocols itself.
    tls.alpn_protocols.clear();
    Ok(client_with(tls))
}

/// A client for scraping `urls`: `scrape_client`'s when one of them is https, else one that
/// speaks plain http only and so skips reading the system's root certificates (hundreds of
/// files, tens of ms before a run's first request).
pub fn scrape_client_for<'a>(
    tls_settings: &TlsSettings,
    mut urls: impl Iterator<Item = &'a str>,
) -> Result<ScrapeClient> {
    if urls.any(|url| url.trim_start().get(..8).is_some_and(|scheme| scheme.eq_ignore_ascii_case("https://"))) {
        return scrape_client(tls_settings);
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let tls = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .context("setting up TLS for metrics scrapes")?
        .with_root_certificates(rustls::RootCertStore::empty())
        .with_no_client_auth();
    Ok(client_with(tls))
}

fn client_with(tls: rustls::ClientConfig) -> ScrapeClient {
    let mut tcp = HttpConnector::new();
    tcp.enforce_http(false);
    let connector =
        HttpsConnectorBuilder::new().with_tls_config(tls).https_or_http().enable_http1().wrap_connector(tcp);
    Client::builder(TokioExecutor::new()).pool_max_idle_per_host(1).build(connector)
}

/// What one GET returned.
#[derive(Debug)]
pub struct Fetched {
    pub status: u16,
    pub content_type: String,
    /// None when the content type is `application/json` (never read, as AIPerf does).
    pub body: Option<String>,
}

impl Fetched {
    pub fn is_json(&self) -> bool {
        self.content_type.trim_start().to_ascii_lowercase().starts_with("application/json")
    }
}

/// GET `url` within `timeout`.
pub async fn fetch(client: &ScrapeClient, url: &str, timeout: Duration) -> Result<Fetched> {
    let uri: http::Uri = url.parse().with_context(|| format!("`{url}` is not a valid URL"))?;
    let request = http::Request::get(uri)
        .header(http::header::ACCEPT, "text/plain;version=0.0.4;q=0.9,*/*;q=0.1")
        .body(Empty::new())
        .context("building the scrape request")?;
    let exchange = async {
        let response = client.request(request).await.map_err(|e| anyhow!("{e}"))?;
        let status = response.status().as_u16();
        let content_type =
            response.headers().get(http::header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("").to_string();
        let mut fetched = Fetched { status, content_type, body: None };
        if !fetched.is_json() {
            let body = Limited::new(response.into_body(), MAX_PAGE_BYTES);
            let bytes =
                body.collect().await.map_err(|e| match e.downcast_ref::<http_body_util::LengthLimitError>() {
                    Some(_) => anyhow!("the page is over {} MiB, more than a metrics page holds", MAX_PAGE_BYTES >> 20),
                    None => anyhow!("reading the body: {e}"),
                })?;
            fetched.body = Some(String::from_utf8_lossy(&bytes.to_bytes()).into_owned());
        }
        Ok::<_, anyhow::Error>(fetched)
    };
    tokio::time::timeout(timeout, exchange).await.map_err(|_| anyhow!("no answer within {timeout:?}"))?
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_client_for_plain_http_urls_scrapes_them() {
        let server = crate::mock::MockServer::start(Default::default(), "127.0.0.1:0".parse().unwrap()).await.unwrap();
        let url = format!("{}/metrics", server.base_url());
        let client = scrape_client_for(&TlsSettings::default(), [url.as_str()].into_iter()).unwrap();
        let fetched = fetch(&client, &url, Duration::from_secs(5)).await.unwrap();
        assert_eq!(fetched.status, 200);
        assert!(fetched.body.is_some_and(|body| body.contains("vllm:")), "the mock's Prometheus text");
        server.shutdown().await;
    }

    #[tokio::test]
    async fn a_page_past_the_limit_is_refused_without_being_held() {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/metrics", listener.local_addr().unwrap());
        tokio::spawn(async move {
            let (mut socket, _) = listener.accept().await.unwrap();
            let mut request = [0u8; 1024];
            let _ = socket.read(&mut request).await;
            let header = "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ntransfer-encoding: chunked\r\n\r\n";
            socket.write_all(header.as_bytes()).await.unwrap();
            let chunk = format!("{:x}\r\n{}\r\n", 1 << 20, "x".repeat(1 << 20));
            // An endless page: the scrape stops reading it at the limit.
            while socket.write_all(chunk.as_bytes()).await.is_ok() {}
        });
        let client = scrape_client_for(&TlsSettings::default(), [url.as_str()].into_iter()).unwrap();
        let error = fetch(&client, &url, Duration::from_secs(30)).await.unwrap_err().to_string();
        assert!(error.contains("the page is over 64 MiB"), "{error}");
    }
}
