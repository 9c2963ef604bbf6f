//! The HTTP client of the outputs (an OpenTelemetry collector, an MLflow tracking server):
//! one request at a time with a body and a deadline, answered with its status and body.

use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result, anyhow};
use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper_rustls::{HttpsConnector, HttpsConnectorBuilder};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;

use crate::plan::TlsSettings;

/// The largest answer read: the servers answer with small JSON documents.
const MAX_ANSWER_BYTES: usize = 16 << 20;

#[derive(Clone)]
pub struct OutputClient {
    client: Client<HttpsConnector<HttpConnector>, Full<Bytes>>,
    timeout: Duration,
    /// The `Authorization` header every request carries, if any.
    authorization: Option<http::HeaderValue>,
}

/// A server's answer.
pub struct Answer {
    pub status: u16,
    pub body: Bytes,
}

impl Answer {
    pub fn is_success(&self) -> bool {
        (200..300).contains(&self.status)
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

impl OutputClient {
    /// A client for http and https urls (the system's and webpki's roots) with this deadline
    /// for each request.
    pub fn new(timeout: Duration) -> Result<Self> {
        let tls = crate::client::tls_client_config(&TlsSettings::default(), false).context("setting up TLS")?;
        let mut tls = Arc::unwrap_or_clone(tls);
        tls.alpn_protocols.clear();
        let mut tcp = HttpConnector::new();
        tcp.enforce_http(false);
        let connector =
            HttpsConnectorBuilder::new().with_tls_config(tls).https_or_http().enable_http1().wrap_connector(tcp);
        let client = Client::builder(TokioExecutor::new()).pool_max_idle_per_host(2).build(connector);
        Ok(Self { client, timeout, authorization: None })
    }

    /// Every request carries this `Authorization` value (marked sensitive: never logged).
    pub fn with_authorization(mut self, value: &str) -> Result<Self> {
        let mut header = http::HeaderValue::from_str(value).context("the credentials are not a valid header value")?;
        header.set_sensitive(true);
        self.authorization = Some(header);
        Ok(self)
    }

    /// `method url` with `body` of `content_type` (none for an empty body).
    pub async fn send(
        &self,
        method: http::Method,
        url: &str,
        content_type: Option<&str>,
        body: Bytes,
    ) -> Result<Answer> {
        let uri: http::Uri = url.parse().with_context(|| format!("`{url}` is not a valid url"))?;
        let mut request = http::Request::builder().method(method.clone()).uri(uri);
        if let Some(authorization) = &self.authorization {
            request = request.header(http::header::AUTHORIZATION, authorization.clone());
        }
        if let Some(content_type) = content_type {
            request = request.header(http::header::CONTENT_TYPE, content_type);
        }
        let request = request.body(Full::new(body)).context("building the request")?;
        let exchange = async {
            let response = self.client.request(request).await.map_err(|e| anyhow!("{e}"))?;
            let status = response.status().as_u16();
            let body = Limited::new(response.into_body(), MAX_ANSWER_BYTES)
                .collect()
                .await
                .map_err(|e| anyhow!("reading the answer: {e}"))?
                .to_bytes();
            Ok::<_, anyhow::Error>(Answer { status, body })
        };
        tokio::time::timeout(self.timeout, exchange)
            .await
            .map_err(|_| anyhow!("{method} {url}: no answer within {:?}", self.timeout))?
            .with_context(|| format!("{method} {url}"))
    }

    /// POST a JSON document; the answer's JSON when the status is 2xx, else an error naming it.
    pub async fn post_json(&self, url: &str, document: &serde_json::Value) -> Result<serde_json::Value> {
        let answer =
            self.send(http::Method::POST, url, Some("application/json"), Bytes::from(document.to_string())).await?;
        json_of(answer, url)
    }

    /// GET a JSON document.
    pub async fn get_json(&self, url: &str) -> Result<serde_json::Value> {
        json_of(self.send(http::Method::GET, url, None, Bytes::new()).await?, url)
    }
}

fn json_of(answer: Answer, url: &str) -> Result<serde_json::Value> {
    if !answer.is_success() {
        return Err(anyhow!(
            "{url} answered HTTP {}: {}",
            answer.status,
            answer.text().chars().take(500).collect::<String>()
        ));
    }
    if answer.body.is_empty() {
        return Ok(serde_json::Value::Null);
    }
    serde_json::from_slice(&answer.body).with_context(|| format!("{url} answered with a body that is not JSON"))
}
