//! `LiveServer`: a small hyper HTTP/1.1 server on its own task that answers `GET /metrics`
//! with the live metrics as they stand (AIPerf's `aiperf_info` line first) and AIPerf's API
//! routes (`api.rs`); anything else gets 404.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;

use anyhow::{Context, Result};
use bytes::Bytes;
use http_body_util::Full;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio::task::JoinSet;

use super::LiveMetrics;
use super::api::{RunFacts, answer as api_answer, info_exposition};
use super::exposition::{CONTENT_TYPE, render};

/// The pause after a failed accept (out of file descriptors, say) before the next.
const ACCEPT_RETRY: std::time::Duration = std::time::Duration::from_millis(50);

pub struct LiveServer {
    address: SocketAddr,
    /// The accept loop, which owns every connection task.
    serving: tokio::task::JoinHandle<()>,
}

impl LiveServer {
    /// Listen on `address` (port 0 picks a free one) and serve `metrics` and the API of the
    /// run `facts` describe until stopped.
    pub async fn start(address: SocketAddr, metrics: Arc<LiveMetrics>, facts: RunFacts) -> Result<Self> {
        let listener = TcpListener::bind(address)
            .await
            .with_context(|| format!("cannot listen for live metrics on {address} (--metrics-listen)"))?;
        let address = listener.local_addr().context("live metrics: reading the bound address")?;
        tracing::info!("live metrics on http://{address}/metrics");
        let served = Arc::new(Served { metrics, facts });
        Ok(Self { address, serving: tokio::spawn(accept_loop(listener, served)) })
    }

    /// Where it listens.
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// Stop listening and drop every connection.
    pub fn stop(self) {
        self.serving.abort();
    }
}

impl Drop for LiveServer {
    fn drop(&mut self) {
        self.serving.abort();
    }
}

/// What the server answers from.
struct Served {
    metrics: Arc<LiveMetrics>,
    facts: RunFacts,
}

async fn accept_loop(listener: TcpListener, served: Arc<Served>) {
    let mut connections = JoinSet::new();
    loop {
        match listener.accept().await {
            Ok((stream, _)) => {
                let served = served.clone();
                let service = service_fn(move |request| answer(served.clone(), request));
                connections.spawn(async move {
                    let connection =
                        hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(stream), service);
                    if let Err(error) = connection.await {
                        tracing::debug!("live metrics: connection ended with an error: {error}");
                    }
                });
            }
            Err(error) => {
                tracing::warn!("live metrics: accept failed: {error}");
                tokio::time::sleep(ACCEPT_RETRY).await;
            }
        }
        while connections.try_join_next().is_some() {}
    }
}

async fn answer(
    served: Arc<Served>,
    request: Request<hyper::body::Incoming>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let path = request.uri().path();
    let api = (request.method() == Method::GET).then(|| api_answer(path, &served.metrics, &served.facts)).flatten();
    let response = if let Some(api) = api {
        Response::builder().header(hyper::header::CONTENT_TYPE, api.content_type).body(Full::new(Bytes::from(api.body)))
    } else if request.method() == Method::GET && path == "/metrics" {
        let text = info_exposition(&served.facts) + render(&served.metrics).as_str();
        Response::builder().header(hyper::header::CONTENT_TYPE, CONTENT_TYPE).body(Full::new(Bytes::from(text)))
    } else {
        Response::builder().status(StatusCode::NOT_FOUND).body(Full::new(Bytes::from_static(
            b"live metrics are at GET /metrics; AIPerf's API at /api/progress, /api/metrics, /api/run, /api/config, /healthz, /readyz\n",
        )))
    };
    Ok(response.unwrap_or_else(|_| Response::new(Full::new(Bytes::new()))))
}
