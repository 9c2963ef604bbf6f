//! The server control requests of a run, as AIPerf 0.13 sends them: an empty POST to each
//! origin (`scheme://host:port`) of the endpoint, through clients of their own (the load's
//! pool and records never see them). A KV-cache reset is tried again while the server is busy
//! (409, 423, 429, 503) or does not answer, up to `max_retry`; profiler starts and stops are
//! tried once.

use std::time::Duration;

use anyhow::{Context, Result};
use bytes::Bytes;
use http::Method;

use crate::client::HttpClient;
use crate::clock::RunClock;
use crate::plan::segment::ExecutionSegment;
use crate::plan::{Endpoint, Plan, ServerControl};

/// Statuses that mean "busy now, try again" for a KV-cache reset (AIPerf's).
const RETRYABLE_STATUSES: [u16; 4] = [409, 423, 429, 503];
const FIRST_RETRY_WAIT: Duration = Duration::from_secs(1);
const LONGEST_RETRY_WAIT: Duration = Duration::from_secs(8);

/// A control request that got no 2xx answer, and what the run does about it.
#[derive(Debug, Clone, PartialEq)]
pub struct ControlRequestFailed {
    /// "KV-cache reset", "server profiler start", …
    pub what: &'static str,
    pub url: String,
    /// "answered 404", "got no answer: connection refused", …
    pub cause: String,
    /// "the run stops before sending anything", "the run goes on", …
    pub outcome: &'static str,
}

impl std::fmt::Display for ControlRequestFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: POST {} {}; {}", self.what, self.url, self.cause, self.outcome)
    }
}

impl std::error::Error for ControlRequestFailed {}

/// Why one attempt failed, and whether a reset may try again.
struct Attempt {
    cause: String,
    retryable: bool,
}

/// The control requests of one run and a client for each origin they go to.
pub struct ServerControlRequests {
    settings: ServerControl,
    /// Each origin of the endpoint's urls, once, in order, with its client.
    origins: Vec<(String, HttpClient)>,
}

impl ServerControlRequests {
    /// The requests `plan` asks for, sent to `endpoint` (the built-in server's url resolved).
    /// Of a run split into execution segments only the first segment sends them, so the server
    /// sees one reset and one profile per run.
    pub fn of(plan: &Plan, endpoint: &Endpoint, segment: Option<ExecutionSegment>, clock: RunClock) -> Result<Self> {
        let sends = segment.is_none_or(|segment| segment.index == 0);
        let settings = if sends { plan.server_control.clone() } else { ServerControl::default() };
        let urls: Vec<&str> = if settings.is_off() { Vec::new() } else { endpoint.urls().collect() };
        let timeouts_s = [
            settings.reset_kv_cache.as_ref().map(|r| r.timeout_s),
            settings.server_profiler.as_ref().map(|p| p.timeout_s),
        ];
        let longest_timeout = Duration::from_secs_f64(timeouts_s.into_iter().flatten().fold(0.0, f64::max));
        let mut origins = Vec::new();
        for origin in unique_origins(urls)? {
            let at_origin = Endpoint { url: origin.clone(), more_urls: Vec::new(), ..endpoint.clone() };
            let client = HttpClient::new(&at_origin, clock, longest_timeout, 1)
                .with_context(|| format!("server control requests to {origin}"))?;
            origins.push((origin, client));
        }
        Ok(Self { settings, origins })
    }

    /// POST the KV-cache reset to every origin; the first that fails stops the run.
    pub async fn reset_kv_cache(&self) -> Result<(), ControlRequestFailed> {
        let Some(reset) = &self.settings.reset_kv_cache else { return Ok(()) };
        for (origin, client) in &self.origins {
            let deadline = tokio::time::Instant::now() + Duration::from_secs_f64(reset.max_retry_s);
            let mut wait = FIRST_RETRY_WAIT;
            loop {
                let Err(attempt) = post(client, origin, &reset.path, reset.timeout_s).await else { break };
                if !attempt.retryable || tokio::time::Instant::now() + wait >= deadline {
                    return Err(ControlRequestFailed {
                        what: "KV-cache reset",
                        url: format!("{origin}{}", reset.path),
                        cause: attempt.cause,
                        outcome: "the run stops before sending anything (as AIPerf's does)",
                    });
                }
                tokio::time::sleep(wait).await;
                wait = (wait * 2).min(LONGEST_RETRY_WAIT);
            }
        }
        Ok(())
    }

    /// POST the profiler start to every origin; when one fails, those already started are
    /// stopped (last first) and the run stops.
    pub async fn start_profiler(&self) -> Result<(), ControlRequestFailed> {
        let Some(profiler) = &self.settings.server_profiler else { return Ok(()) };
        for (index, (origin, client)) in self.origins.iter().enumerate() {
            if let Err(attempt) = post(client, origin, &profiler.start_path, profiler.timeout_s).await {
                for (origin, client) in self.origins[..index].iter().rev() {
                    self.stop_at(origin, client).await;
                }
                return Err(ControlRequestFailed {
                    what: "server profiler start",
                    url: format!("{origin}{}", profiler.start_path),
                    cause: attempt.cause,
                    outcome: "the run stops (as AIPerf's does)",
                });
            }
        }
        Ok(())
    }

    /// POST the profiler stop to every origin; a failure is warned about and the run goes on.
    pub async fn stop_profiler(&self) {
        for (origin, client) in &self.origins {
            self.stop_at(origin, client).await;
        }
    }

    async fn stop_at(&self, origin: &str, client: &HttpClient) {
        let Some(profiler) = &self.settings.server_profiler else { return };
        if let Err(attempt) = post(client, origin, &profiler.stop_path, profiler.timeout_s).await {
            let failed = ControlRequestFailed {
                what: "server profiler stop",
                url: format!("{origin}{}", profiler.stop_path),
                cause: attempt.cause,
                outcome: "the run goes on (as AIPerf's does)",
            };
            tracing::warn!("{failed}");
        }
    }
}

/// One empty POST within `timeout_s`: Ok for a 2xx answer.
async fn post(client: &HttpClient, origin: &str, path: &str, timeout_s: f64) -> Result<(), Attempt> {
    let sent = client.request_aside(Method::POST, origin, path, Bytes::new());
    match tokio::time::timeout(Duration::from_secs_f64(timeout_s), sent).await {
        Ok(Ok((status, _))) if (200..300).contains(&status) => Ok(()),
        Ok(Ok((status, _))) => {
            Err(Attempt { cause: format!("answered {status}"), retryable: RETRYABLE_STATUSES.contains(&status) })
        }
        Ok(Err(why)) => Err(Attempt { cause: format!("got no answer: {why}"), retryable: true }),
        Err(_) => Err(Attempt { cause: format!("got no answer within {timeout_s} s"), retryable: true }),
    }
}

/// The origins of `urls`, each once, in order.
fn unique_origins<'a>(urls: impl IntoIterator<Item = &'a str>) -> Result<Vec<String>> {
    let mut origins: Vec<String> = Vec::new();
    for url in urls {
        let origin = origin_of(url).with_context(|| format!("endpoint url `{url}`"))?;
        if !origins.contains(&origin) {
            origins.push(origin);
        }
    }
    Ok(origins)
}

/// `scheme://host:port` of an http(s) url: control requests go to the server, not under the
/// endpoint's path prefix.
fn origin_of(url: &str) -> Result<String> {
    let uri: http::Uri = url.parse().context("not a url")?;
    match (uri.scheme_str(), uri.authority()) {
        (Some(scheme), Some(authority)) => Ok(format!("{scheme}://{authority}")),
        _ => anyhow::bail!("needs a scheme and a host"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_origin_drops_the_path_prefix() {
        assert_eq!(origin_of("http://127.0.0.1:8000/prefix/v1").unwrap(), "http://127.0.0.1:8000");
        assert_eq!(origin_of("https://host").unwrap(), "https://host");
        assert!(origin_of("mock").is_err());
        let origins = unique_origins(["http://a:1/x", "http://b:2", "http://a:1/y"]).unwrap();
        assert_eq!(origins, ["http://a:1", "http://b:2"]);
    }

    /// A server on a loopback port answering its requests with `statuses` in turn (then 200),
    /// and how many it got.
    async fn answering(statuses: Vec<u16>) -> (String, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
        use std::sync::atomic::{AtomicUsize, Ordering};
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let served = std::sync::Arc::new(AtomicUsize::new(0));
        let count = served.clone();
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                let mut head = vec![0u8; 4096];
                let _ = stream.read(&mut head).await;
                let status = statuses.get(count.fetch_add(1, Ordering::SeqCst)).copied().unwrap_or(200);
                let answer = format!("HTTP/1.1 {status} X\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
                let _ = stream.write_all(answer.as_bytes()).await;
            }
        });
        (url, served)
    }

    fn resetting(url: &str) -> ServerControlRequests {
        let mut plan = crate::export::test_support::sample_result().plan;
        plan.server_control.reset_kv_cache = Some(crate::plan::ResetKvCache::default());
        let endpoint = Endpoint { url: url.to_string(), ..plan.endpoint.clone() };
        ServerControlRequests::of(&plan, &endpoint, None, RunClock::start()).unwrap()
    }

    #[tokio::test]
    async fn a_busy_server_is_asked_again_and_a_refusal_is_not() {
        use std::sync::atomic::Ordering;
        let (url, served) = answering(vec![503]).await;
        let started = std::time::Instant::now();
        resetting(&url).reset_kv_cache().await.unwrap();
        assert_eq!(served.load(Ordering::SeqCst), 2);
        assert!(started.elapsed() >= FIRST_RETRY_WAIT, "waited {:?} before trying again", started.elapsed());

        let (url, served) = answering(vec![404]).await;
        let failed = resetting(&url).reset_kv_cache().await.unwrap_err();
        assert_eq!((failed.cause.as_str(), served.load(Ordering::SeqCst)), ("answered 404", 1));
    }

    #[test]
    fn a_failure_names_the_url_the_cause_and_what_follows() {
        let failed = ControlRequestFailed {
            what: "KV-cache reset",
            url: "http://h:1/reset_prefix_cache".into(),
            cause: "answered 404".into(),
            outcome: "the run stops before sending anything (as AIPerf's does)",
        };
        assert_eq!(
            failed.to_string(),
            "KV-cache reset: POST http://h:1/reset_prefix_cache answered 404; the run stops before sending anything (as AIPerf's does)"
        );
    }
}
