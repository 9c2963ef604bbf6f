//! The pooled hyper client: keep-alive connections over TCP (no Nagle) or TLS (rustls with
//! ring and the webpki roots), HTTP/1.1, or HTTP/2 where the server offers it through ALPN.

use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use bytes::Bytes;
use http_body_util::Full;
use hyper_rustls::{ConfigBuilderExt, HttpsConnector, HttpsConnectorBuilder};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::{TokioExecutor, TokioTimer};

/// How long an unused pooled connection is kept open.
const POOL_IDLE_TIMEOUT: Duration = Duration::from_secs(90);

pub(crate) type PooledClient = Client<HttpsConnector<HttpConnector>, Full<Bytes>>;

/// A client that keeps up to `max_idle_per_host` idle connections per host for reuse.
pub(crate) fn pooled_client(max_idle_per_host: usize) -> Result<PooledClient> {
    let tls = rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .context("setting up TLS")?
        .with_webpki_roots()
        .with_no_client_auth();

    let mut tcp = HttpConnector::new();
    tcp.set_nodelay(true);
    tcp.enforce_http(false);

    let connector = HttpsConnectorBuilder::new()
        .with_tls_config(tls)
        .https_or_http()
        .enable_http1()
        .enable_http2()
        .wrap_connector(tcp);

    Ok(Client::builder(TokioExecutor::new())
        .pool_idle_timeout(POOL_IDLE_TIMEOUT)
        .pool_max_idle_per_host(max_idle_per_host)
        .pool_timer(TokioTimer::new())
        .build(connector))
}
