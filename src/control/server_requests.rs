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
        let mut origins: Vec<(String, HttpClient)> = Vec::new();
        if !settings.is_off() {
            for url in [endpoint.url.as_str()] {
                let origin = origin_of(url).with_context(|| format!("endpoint url `{url}`"))?;
                if origins.iter().any(|(known, _)| *known == origin) {
                    continue;
                }
                let at_origin = Endpoint { url: origin.clone(), ..endpoint.clone() };
                let client = HttpClient::new(&at_origin, clock, Duration::from_secs(24 * 3600), 1)
                    .with_context(|| format!("server control requests to {origin}"))?;
                origins.push((origin, client));
            }
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
