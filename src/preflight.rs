//! The pre-flight check before a run's first phase: does anything answer at each of the
//! endpoint's urls? One GET of `/v1/models` through the run's own client stack (TLS settings, headers),
//! with a short time limit, tried again until `wait_timeout` when asked; or, with a readiness
//! mode, AIPerf's probes (`/v1/models` lists the model; a one-token request is answered below
//! 500). No answer stops the run before anything is sent, with an `Unreachable` error (exit
//! code 69 on the command line).

use std::time::Duration;

use anyhow::{Context, Result};
use bytes::Bytes;
use http::Method;

use crate::cancel::CancelSignal;
use crate::client::HttpClient;
use crate::clock::RunClock;
use crate::plan::{Endpoint, EndpointKind, Preflight, ReadinessMode};

/// What the check asks for; any HTTP answer, even 404 or 401, means a server is there.
pub const PROBE_PATH: &str = "/v1/models";
/// The prompt of the inference probe (AIPerf's: one short word, one token asked for).
const PROBE_PROMPT: &str = "Lo";

/// Nothing answered at the endpoint's url.
#[derive(Debug, Clone, PartialEq)]
pub struct Unreachable {
    pub url: String,
    /// Why the last try got no answer: refused, unresolvable host, TLS, timed out, …
    pub cause: String,
    pub tries: u32,
    /// How long the check waited for the server, seconds (0 for a single try).
    pub waited_s: f64,
    /// The readiness probe that was not passed; None: the check for any answer.
    pub mode: Option<ReadinessMode>,
}

impl std::fmt::Display for Unreachable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.cause.starts_with(crate::client::TLS_FAILURE_OPENING) {
            // A server answered: its certificate is the problem, which waiting does not cure.
            return write!(f, "the endpoint {} was reached, but {}; nothing was sent", self.url, self.cause);
        }
        match self.mode {
            Some(mode) => write!(
                f,
                "the endpoint {} is not ready (wait_for_model_mode {}): {}",
                self.url,
                mode.as_str(),
                self.cause
            )?,
            None => write!(f, "the endpoint {} does not answer: {}", self.url, self.cause)?,
        }
        if self.tries > 1 {
            write!(f, " (pre-flight check: {} tries over {:.1} s)", self.tries, self.waited_s)?;
        }
        write!(
            f,
            "; nothing was sent. Check the url and that the server is up; wait for it with \
             preflight: #{{ wait_timeout: seconds(60) }}, or skip the check with preflight: false"
        )
    }
}

impl std::error::Error for Unreachable {}

/// Check that every url of `endpoint` answers, one after the other, as `preflight` says (skipped when it is off or the mock).
/// Returns at once, without an error, when `cancel` is raised while waiting.
pub async fn check(endpoint: &Endpoint, preflight: &Preflight, cancel: &CancelSignal) -> Result<()> {
    if !preflight.enabled || endpoint.is_mock() {
        return Ok(());
    }
    for url in endpoint.urls() {
        let one = Endpoint { url: url.to_string(), more_urls: Vec::new(), ..endpoint.clone() };
        check_url(&one, preflight, cancel).await?;
    }
    Ok(())
}

/// The check of an endpoint's one url.
async fn check_url(endpoint: &Endpoint, preflight: &Preflight, cancel: &CancelSignal) -> Result<()> {
    let timeout = Duration::from_secs_f64(preflight.timeout_s);
    let client = HttpClient::new(endpoint, RunClock::start(), timeout, 1)
        .with_context(|| format!("endpoint {}", endpoint.url))?;
    let started = tokio::time::Instant::now();
    let deadline = started + Duration::from_secs_f64(preflight.wait_timeout_s);
    let mut tries = 0;
    loop {
        tries += 1;
        let cause = match tokio::time::timeout(timeout, probe(&client, endpoint, preflight.mode)).await {
            Ok(Ok(answer)) => {
                tracing::debug!("pre-flight: {} {answer} after {tries} tries", endpoint.url);
                return Ok(());
            }
            Ok(Err(why)) => why,
            Err(_) => format!("no answer within {:.1} s", preflight.timeout_s),
        };
        let next_try = tokio::time::Instant::now() + Duration::from_secs_f64(preflight.wait_interval_s);
        if next_try > deadline {
            let waited_s = started.elapsed().as_secs_f64();
            return Err(Unreachable { url: endpoint.url.clone(), cause, tries, waited_s, mode: preflight.mode }.into());
        }
        if tries == 1 {
            eprintln!("waiting up to {:.0} s for {} to answer ({cause})", preflight.wait_timeout_s, endpoint.url);
        }
        tokio::select! {
            _ = tokio::time::sleep_until(next_try) => {}
            _ = cancel.cancelled() => return Ok(()),
        }
    }
}

/// One try of the check `mode` asks for, for every model of the endpoint (as AIPerf probes each
/// model): what the server answered when it passed, or why not.
async fn probe(client: &HttpClient, endpoint: &Endpoint, mode: Option<ReadinessMode>) -> Result<String, String> {
    let Some(mode) = mode else {
        return client.probe(&endpoint.url, PROBE_PATH).await.map(|status| format!("answered {status}"));
    };
    let mut answers = Vec::new();
    for model in endpoint.models() {
        if matches!(mode, ReadinessMode::Models | ReadinessMode::Both) {
            answers.push(models_listed(client, endpoint, model).await?);
        }
        if matches!(mode, ReadinessMode::Inference | ReadinessMode::Both) {
            answers.push(inference_answered(client, endpoint, model).await?);
        }
    }
    Ok(answers.join("; "))
}

/// `GET /v1/models` lists `model`; a server without that route (404) passes when its base url
/// answers 2xx.
async fn models_listed(client: &HttpClient, endpoint: &Endpoint, model: &str) -> Result<String, String> {
    let (status, body) = client.request_aside(Method::GET, &endpoint.url, PROBE_PATH, Bytes::new()).await?;
    if status == 404 {
        let (status, _) = client.request_aside(Method::GET, &endpoint.url, "/", Bytes::new()).await?;
        return match status {
            200..=299 => Ok(format!("has no {PROBE_PATH}; its base url answered {status}")),
            _ => Err(format!("GET {PROBE_PATH} answered 404 and the base url {status}")),
        };
    }
    let listed = serde_json::from_slice::<serde_json::Value>(&body).ok().is_some_and(|models| {
        models["data"].as_array().is_some_and(|data| data.iter().any(|listed| listed["id"] == model))
    });
    match (status, listed) {
        (200, true) => Ok(format!("lists model `{model}`")),
        (200, false) => Err(format!("GET {PROBE_PATH} does not list model `{model}`")),
        _ => Err(format!("GET {PROBE_PATH} answered {status}")),
    }
}

/// A one-token request to the endpoint's own path gets any status below 500 (a 4xx says the
/// server is up and will answer the benchmark's requests the same way).
async fn inference_answered(client: &HttpClient, endpoint: &Endpoint, model: &str) -> Result<String, String> {
    let body = match endpoint.kind {
        EndpointKind::Completions => serde_json::json!({ "model": model, "prompt": PROBE_PROMPT, "max_tokens": 1 }),
        EndpointKind::Embeddings | EndpointKind::NimEmbeddings => {
            serde_json::json!({ "model": model, "input": PROBE_PROMPT })
        }
        _ => {
            serde_json::json!({ "model": model, "messages": [{ "role": "user", "content": PROBE_PROMPT }], "max_tokens": 1 })
        }
    };
    let path = endpoint.request_path();
    let (status, _) = client.request_aside(Method::POST, &endpoint.url, path, Bytes::from(body.to_string())).await?;
    match status {
        0..=499 => Ok(format!("answered a one-token request with {status}")),
        _ => Err(format!("a one-token request to {path} was answered {status}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::EndpointKind;

    fn endpoint(url: &str) -> Endpoint {
        Endpoint::new(url, "m", EndpointKind::Chat, true)
    }

    /// A port on 127.0.0.1 that nothing listens on.
    fn closed_port() -> u16 {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    }

    #[test]
    fn a_refused_certificate_is_told_apart_from_a_server_that_is_not_there() {
        let tls = Unreachable {
            url: "https://localhost:1".into(),
            cause: format!(
                "{}localhost failed: invalid peer certificate: UnknownIssuer",
                crate::client::TLS_FAILURE_OPENING
            ),
            tries: 1,
            waited_s: 0.0,
            mode: None,
        };
        assert_eq!(
            tls.to_string(),
            "the endpoint https://localhost:1 was reached, but TLS handshake with localhost failed: invalid peer \
             certificate: UnknownIssuer; nothing was sent"
        );
        let refused = Unreachable { cause: "connection refused".into(), ..tls };
        assert!(refused.to_string().contains("does not answer: connection refused; nothing was sent. Check the url"));
    }

    #[tokio::test]
    async fn a_refused_connection_names_the_url_and_the_cause() {
        let url = format!("http://127.0.0.1:{}", closed_port());
        let error = check(&endpoint(&url), &Preflight::default(), &CancelSignal::new()).await.unwrap_err();
        let unreachable = error.downcast_ref::<Unreachable>().expect("an Unreachable error");
        assert_eq!(unreachable.cause, "connection refused");
        assert_eq!(unreachable.tries, 1);
        assert!(error.to_string().starts_with(&format!("the endpoint {url} does not answer: connection refused;")));
    }

    #[tokio::test]
    async fn any_http_answer_passes_and_the_mock_or_a_disabled_check_is_not_probed() {
        let server = crate::mock::MockServer::start(Default::default(), "127.0.0.1:0".parse().unwrap()).await.unwrap();
        check(&endpoint(&server.base_url()), &Preflight::default(), &CancelSignal::new()).await.unwrap();
        let not_found = format!("{}/no/such/prefix", server.base_url());
        check(&endpoint(&not_found), &Preflight::default(), &CancelSignal::new()).await.unwrap();
        server.shutdown().await;
        let off = Preflight { enabled: false, ..Preflight::default() };
        let url = format!("http://127.0.0.1:{}", closed_port());
        check(&endpoint(&url), &off, &CancelSignal::new()).await.unwrap();
        check(&endpoint("mock"), &Preflight::default(), &CancelSignal::new()).await.unwrap();
    }

    #[tokio::test]
    async fn a_server_that_drops_every_connection_does_not_count_as_answering() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let dropper = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                drop(stream);
            }
        });
        let error = check(&endpoint(&url), &Preflight::default(), &CancelSignal::new()).await.unwrap_err();
        dropper.abort();
        let unreachable = error.downcast_ref::<Unreachable>().expect("an Unreachable error");
        let closed = ["connection reset by peer", "connection closed before message completed"];
        assert!(closed.contains(&unreachable.cause.as_str()) && unreachable.url == url, "{unreachable:?}");
    }

    #[tokio::test]
    async fn readiness_modes_ask_for_the_model_and_a_one_token_answer() {
        let server = crate::mock::MockServer::start(Default::default(), "127.0.0.1:0".parse().unwrap()).await.unwrap();
        let served = Endpoint::new(server.base_url(), "mock-model", EndpointKind::Chat, false);
        for mode in [ReadinessMode::Models, ReadinessMode::Inference, ReadinessMode::Both] {
            let preflight = Preflight { mode: Some(mode), ..Preflight::default() };
            check(&served, &preflight, &CancelSignal::new()).await.unwrap();
        }
        // Every model is asked for: the second one is not served.
        let other_model = Endpoint { more_models: vec!["other".into()], ..served.clone() };
        let preflight = Preflight { mode: Some(ReadinessMode::Both), ..Preflight::default() };
        let error = check(&other_model, &preflight, &CancelSignal::new()).await.unwrap_err();
        assert_eq!(
            error.downcast_ref::<Unreachable>().map(|u| u.cause.as_str()),
            Some("GET /v1/models does not list model `other`")
        );
        assert!(error.to_string().contains("is not ready (wait_for_model_mode both)"), "{error}");
        let inference = Preflight { mode: Some(ReadinessMode::Inference), ..Preflight::default() };
        check(&other_model, &inference, &CancelSignal::new()).await.unwrap();
        let no_route = Endpoint {
            request: crate::plan::RequestOptions { path: Some("/nothing".into()), ..Default::default() },
            ..served
        };
        check(&no_route, &inference, &CancelSignal::new()).await.unwrap();
        server.shutdown().await;
    }

    #[tokio::test]
    async fn waiting_tries_again_until_the_deadline() {
        let url = format!("http://127.0.0.1:{}", closed_port());
        let wait = Preflight { wait_timeout_s: 0.3, wait_interval_s: 0.1, ..Preflight::default() };
        let error = check(&endpoint(&url), &wait, &CancelSignal::new()).await.unwrap_err();
        let unreachable = error.downcast_ref::<Unreachable>().expect("an Unreachable error");
        assert!(unreachable.tries >= 3, "{unreachable:?}");
        assert!(error.to_string().contains("tries over"), "{error}");
    }
}
