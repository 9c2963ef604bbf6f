//! The endpoint's base urls as the client sends to them: each one's request uri, Host header
//! and connection pool of its own, and how many requests are in flight there.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use anyhow::{Result, anyhow};
use http::Uri;
use http::header::HeaderValue;

use super::connect::Connector;
use super::pool::Pool;
use super::target;
use crate::clock::RunClock;
use crate::plan::Endpoint;

pub(crate) struct Destination {
    pub pool: Pool,
    /// The absolute request uri (HTTP/2) and its origin form (HTTP/1.1, with a Host header).
    pub uri: Uri,
    pub origin_form: Uri,
    pub host: HeaderValue,
    /// `uri` as text, for error messages.
    pub uri_text: String,
    /// The base url as the plan names it (a record names it when there are several).
    pub base_url: Arc<str>,
    in_flight: AtomicUsize,
}

impl Destination {
    /// `base_url` of `endpoint`, over a pool of at most `max_connections` connections.
    pub fn new(base_url: &str, endpoint: &Endpoint, clock: RunClock, max_connections: usize) -> Result<Self> {
        let uri = target::request_uri(base_url, endpoint.request_path())?;
        let transport = &endpoint.transport;
        let connector = Connector::new(&uri, transport, clock)?;
        let origin_form = match uri.path_and_query() {
            Some(path) => Uri::from(path.clone()),
            None => Uri::from_static("/"),
        };
        let authority = uri.authority().ok_or_else(|| anyhow!("the endpoint url {base_url} has no host"))?;
        Ok(Self {
            pool: Pool::new(connector, transport.connections, max_connections, clock),
            uri_text: uri.to_string(),
            host: HeaderValue::from_str(authority.as_str())?,
            origin_form,
            uri,
            base_url: Arc::from(base_url),
            in_flight: AtomicUsize::new(0),
        })
    }

    /// The same destination in the process that serves it (`Pool::sharing_files_with_server`).
    pub fn sharing_files_with_server(self) -> Self {
        Self { pool: self.pool.sharing_files_with_server(), ..self }
    }

    pub fn in_flight(&self) -> usize {
        self.in_flight.load(Ordering::Relaxed)
    }

    /// Counts a request in flight here until the guard drops.
    pub fn enter(&self) -> InFlightHere<'_> {
        self.in_flight.fetch_add(1, Ordering::Relaxed);
        InFlightHere(&self.in_flight)
    }
}

pub(crate) struct InFlightHere<'a>(&'a AtomicUsize);

impl Drop for InFlightHere<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}
