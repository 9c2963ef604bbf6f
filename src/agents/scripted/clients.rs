//! The clients of the endpoints a session calls besides the run's own: one per endpoint, made
//! on first use with the run's settings, the url "mock" meaning the run's built-in server (every
//! url does in `aiperf check`'s trial of the session functions), or one of the phase's own
//! when the run's endpoint is a real server or the endpoint's `mock:` settings are not the
//! run's (`side_mocks.rs`).

use std::sync::{Arc, Mutex};

use super::side_mocks::SideMocks;
use crate::client::HttpClient;
use crate::clock::RunClock;
use crate::load::scripted::SessionHook;
use crate::plan::Endpoint;

/// Another endpoint as a step reaches it: its client, and its base url for the step's record.
#[derive(Clone)]
pub struct OtherEndpoint {
    pub client: Arc<HttpClient>,
    pub url: Arc<str>,
}

/// What the phase's steps have reached so far.
#[derive(Default)]
struct Known {
    /// Each endpoint a step named, as the script gave it, and how it is reached (None: as the
    /// run's own), so a step finds its client without copying its endpoint.
    given: Vec<(Endpoint, Option<OtherEndpoint>)>,
    /// The clients made, by the endpoint they reach (two endpoints given may reach one).
    made: Vec<(Endpoint, OtherEndpoint)>,
}

pub struct EndpointClients {
    known: Mutex<Known>,
    pool_size: usize,
    /// Every endpoint is reached at the run's built-in server.
    all_mock: bool,
    /// The servers of the "mock" endpoints when the run's own is real.
    pub side_mocks: SideMocks,
}

impl EndpointClients {
    pub fn new(pool_size: usize, all_mock: bool, side_mocks: SideMocks) -> Self {
        Self { known: Mutex::default(), pool_size, all_mock, side_mocks }
    }

    /// The client for `endpoint`: None for the run's own (its client), else one of this
    /// phase's, with its url; an error names what cannot be reached.
    pub fn client_of(
        &self,
        endpoint: &Endpoint,
        hook: &SessionHook,
        clock: RunClock,
        runtime: &tokio::runtime::Handle,
    ) -> Result<Option<OtherEndpoint>, String> {
        let mut known = self.known.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some((_, other)) = known.given.iter().find(|(given, _)| given == endpoint) {
            return Ok(other.clone());
        }
        let other = self.reach(endpoint, hook, clock, runtime, &mut known.made)?;
        known.given.push((endpoint.clone(), other.clone()));
        Ok(other)
    }

    /// How `endpoint` is reached: at the built-in server for "mock" (the run's own when the run
    /// serves itself and the endpoint asks for no other `mock:` settings, else one of the
    /// phase's), by the run's own client when it is the run's endpoint, else by a client of its
    /// own, made now if none in `made`.
    fn reach(
        &self,
        endpoint: &Endpoint,
        hook: &SessionHook,
        clock: RunClock,
        runtime: &tokio::runtime::Handle,
        made: &mut Vec<(Endpoint, OtherEndpoint)>,
    ) -> Result<Option<OtherEndpoint>, String> {
        let mut endpoint = endpoint.clone();
        let in_process = endpoint.is_mock() || self.all_mock;
        // A trial sends every step to the run's server, whatever its settings.
        let settings_of_its_own = !self.all_mock && endpoint.mock.is_some() && endpoint.mock != hook.endpoint.mock;
        if in_process && hook.serving_itself && !settings_of_its_own {
            endpoint.url = hook.endpoint.url.clone();
            endpoint.mock = hook.endpoint.mock.clone();
        } else if in_process {
            endpoint.url = self.side_mocks.url_for(&endpoint.mock, runtime)?;
        }
        if endpoint == hook.endpoint {
            return Ok(None);
        }
        if let Some((_, other)) = made.iter().find(|(known, _)| *known == endpoint) {
            return Ok(Some(other.clone()));
        }
        let _inside = runtime.enter();
        let client = HttpClient::new(&endpoint, clock, hook.request_timeout, self.pool_size)
            .map_err(|e| format!("endpoint {}: {e:#}", endpoint.url))?
            .keep_trace_details(hook.http_trace)
            .keep_raw(hook.raw)
            .keep_sent_body(hook.sent_bodies)
            .serving_itself(in_process);
        let other = OtherEndpoint { client: Arc::new(client), url: Arc::from(endpoint.url.as_str()) };
        made.push((endpoint, other.clone()));
        Ok(Some(other))
    }
}
