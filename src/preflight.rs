//! The pre-flight check before a run's first phase: does anything answer at each of the
//! endpoint's urls? One GET of `/v1/models` through the run's own client stack (TLS settings, headers),
//! with a short time limit, tried again until `wait_timeout` when asked. No answer stops the
//! run before anything is sent, with an `Unreachable` error (exit code 69 on the command line).

use std::time::Duration;

use anyhow::{Context, Result};

use crate::cancel::CancelSignal;
use crate::client::HttpClient;
use crate::clock::RunClock;
use crate::plan::{Endpoint, Preflight};

/// What the check asks for; any HTTP answer, even 404 or 401, means a server is there.
pub const PROBE_PATH: &str = "/v1/models";

/// Nothing answered at the endpoint's url.
#[derive(Debug, Clone, PartialEq)]
pub struct Unreachable {
    pub url: String,
    /// Why the last try got no answer: refused, unresolvable host, TLS, timed out, …
    pub cause: String,
    pub tries: u32,
    /// How long the check waited for the server, seconds (0 for a single try).
    pub waited_s: f64,
}

impl std::fmt::Display for Unreachable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.cause.starts_with(crate::client::TLS_FAILURE_OPENING) {
            // A server answered: its certificate is the problem, which waiting does not cure.
            return write!(f, "the endpoint {} was reached, but {}; nothing was sent", self.url, self.cause);
        }
        write!(f, "the endpoint {} does not answer: {}", self.url, self.cause)?;
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
        let cause = match tokio::time::timeout(timeout, client.probe(PROBE_PATH)).await {
            Ok(Ok(status)) => {
                tracing::debug!("pre-flight: {} answered {status} after {tries} tries", endpoint.url);
                return Ok(());
            }
            Ok(Err(why)) => why,
            Err(_) => format!("no answer within {:.1} s", preflight.timeout_s),
        };
        let next_try = tokio::time::Instant::now() + Duration::from_secs_f64(preflight.wait_interval_s);
        if next_try > deadline {
            let waited_s = started.elapsed().as_secs_f64();
            return Err(Unreachable { url: endpoint.url.clone(), cause, tries, waited_s }.into());
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
    async fn waiting_tries_again_until_the_deadline() {
        let url = format!("http://127.0.0.1:{}", closed_port());
        let wait = Preflight { wait_timeout_s: 0.3, wait_interval_s: 0.1, ..Preflight::default() };
        let error = check(&endpoint(&url), &wait, &CancelSignal::new()).await.unwrap_err();
        let unreachable = error.downcast_ref::<Unreachable>().expect("an Unreachable error");
        assert!(unreachable.tries >= 3, "{unreachable:?}");
        assert!(error.to_string().contains("tries over"), "{error}");
    }
}
