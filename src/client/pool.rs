//! The connection pool: at most `max` connections (HTTP/2: streams) in use (waiting for one is
//! `blocked`), never more than the open-file limit allows, and idle keep-alive connections reused
//! by strategy: pooled, never reused, or sticky per session. HTTP/2 requests share connections,
//! each carrying as many streams as the server's SETTINGS allow, a new one opened when all are full.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use bytes::Bytes;
use http::Response;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::connect::{Connection, Connector, Sender};
use super::http2::{Http2Body, Http2Connection};
use super::open_files::OpenFileLimit;
use super::response_body::ResponseBody;
use crate::clock::RunClock;
use crate::http_trace::{ConnectionInfo, HttpTrace};
use crate::plan::{ConnectionSettings, ConnectionStrategy};

pub(crate) struct Pool {
    connector: Connector,
    strategy: ConnectionStrategy,
    /// One permit per connection in use.
    slots: Arc<Semaphore>,
    /// At most this many connections in use at once.
    max: usize,
    /// The connections asked for, when the open-file limit allows fewer (`max`).
    held_back: Option<HeldBack>,
    max_idle: usize,
    idle: Mutex<Idle>,
    /// Held while a shared HTTP/2 connection is being opened, so that requests starting
    /// together wait for it (and the streams it allows) instead of each opening one.
    opening_http2: tokio::sync::Mutex<()>,
    /// At most this many shared HTTP/2 connections: `connections.http2_connections`, within
    /// the open-file limit.
    http2_connections_max: usize,
    /// More HTTP/2 streams were wanted than the connections allowed carry: said once.
    http2_streams_queued: AtomicBool,
    /// HTTP/2 was asked for but the server chose HTTP/1.1 (TLS's ALPN): connections open side
    /// by side from then on, a connection a request.
    http2_refused: AtomicBool,
    clock: RunClock,
}

/// More connections were asked for than the open-file limit allows; said once, when a request
/// first waits for that reason.
struct HeldBack {
    wanted: usize,
    limit: OpenFileLimit,
    said: AtomicBool,
}

#[derive(Default)]
struct Idle {
    /// Pooled HTTP/1.1 connections, most recently used last.
    shared: Vec<Connection>,
    /// Sticky HTTP/1.1 connections by session.
    by_session: HashMap<u64, Connection>,
    /// The HTTP/2 connections requests multiplex over (pooled and sticky), filled in order.
    http2: Vec<SharedHttp2>,
}

/// An HTTP/2 connection every request may use, and how many of its streams are in use.
struct SharedHttp2 {
    sender: Http2Connection,
    info: ConnectionInfo,
    /// The server's SETTINGS_MAX_CONCURRENT_STREAMS (`usize::MAX`: none).
    streams_max: usize,
    streams_in_use: Arc<AtomicUsize>,
}

impl SharedHttp2 {
    fn has_room(&self) -> bool {
        self.streams_in_use.load(Ordering::Relaxed) < self.streams_max
    }

    /// A stream of it for one request: counted in use until the lease is dropped.
    fn lease_stream(&self) -> (Connection, Option<StreamInUse>) {
        self.streams_in_use.fetch_add(1, Ordering::Relaxed);
        let connection = Connection {
            sender: Sender::Http2(self.sender.clone()),
            wire: None,
            info: self.info,
            streams_max: self.streams_max,
        };
        (connection, Some(StreamInUse(self.streams_in_use.clone())))
    }
}

/// One stream in use on a shared HTTP/2 connection; dropped with its lease.
struct StreamInUse(Arc<AtomicUsize>);

impl Drop for StreamInUse {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// A connection checked out for one request; dropping it without `check_in` closes it.
pub(crate) struct Lease {
    pub connection: Connection,
    session: u64,
    /// The body of the response to an HTTP/2 request, until it is read.
    http2_body: Option<Http2Body>,
    _stream: Option<StreamInUse>,
    _slot: OwnedSemaphorePermit,
}

impl Lease {
    /// Send `request` and wait for the response head; its body is `body()`. Over HTTP/2 also
    /// when the connection took the request's body (run ns; HTTP/1.1 times its writes on the
    /// wire instead). An HTTP/2 error is h2's, inside the `io::Error`.
    pub async fn send(&mut self, request: http::Request<Bytes>) -> std::io::Result<(Response<()>, Option<u64>)> {
        match &mut self.connection.sender {
            Sender::Http1(connection) => Ok((connection.send(request).await?, None)),
            Sender::Http2(sender) => {
                let (response, body, taken_ns) = sender.send(request).await?;
                self.http2_body = Some(body);
                Ok((response, taken_ns))
            }
        }
    }

    /// The body of the response `send` returned.
    pub fn body(&mut self) -> ResponseBody<'_> {
        match &mut self.connection.sender {
            Sender::Http1(connection) => ResponseBody::Http1(connection),
            Sender::Http2(_) => self.http2_body.take().map_or(ResponseBody::Taken, ResponseBody::Http2),
        }
    }
}

impl Pool {
    /// `wanted` connections (HTTP/2: streams) in use at once (at least 1), as far as the
    /// open-file limit (raised to its hard limit here) leaves room for them.
    pub fn new(connector: Connector, settings: ConnectionSettings, wanted: usize, clock: RunClock) -> Self {
        let wanted = wanted.max(1);
        let strategy = settings.strategy;
        let (max, held_back) = within_file_limit(wanted, files_each(&connector, strategy, 1));
        Self {
            http2_connections_max: http2_connections_max(settings.http2_connections, 1),
            http2_streams_queued: AtomicBool::new(false),
            connector,
            strategy,
            slots: Arc::new(Semaphore::new(max)),
            max,
            held_back,
            max_idle: max,
            idle: Mutex::new(Idle::default()),
            opening_http2: tokio::sync::Mutex::new(()),
            http2_refused: AtomicBool::new(false),
            clock,
        }
    }

    /// The same pool for a server in this process, whose end of each connection takes a
    /// descriptor too.
    pub fn sharing_files_with_server(self) -> Self {
        let wanted = self.held_back.as_ref().map_or(self.max, |held_back| held_back.wanted);
        let (max, held_back) = within_file_limit(wanted, files_each(&self.connector, self.strategy, 2));
        let http2_connections_max = self.http2_connections_max.min(http2_connections_max(None, 2));
        Self { slots: Arc::new(Semaphore::new(max)), max, held_back, max_idle: max, http2_connections_max, ..self }
    }

    /// At most this many connections are in use at once.
    pub fn max(&self) -> usize {
        self.max
    }

    fn idle(&self) -> MutexGuard<'_, Idle> {
        self.idle.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// A connection for a request of `session`: wait for a slot if all are in use, then reuse
    /// an idle connection (unless `fresh`) or open a new one, noting each step in `trace`.
    pub async fn check_out(&self, session: u64, fresh: bool, trace: &mut HttpTrace) -> Result<Lease, String> {
        let slot = match self.slots.clone().try_acquire_owned() {
            Ok(slot) => slot,
            Err(_) => {
                if let Some(held_back) = &self.held_back
                    && !held_back.said.swap(true, Ordering::Relaxed)
                {
                    tracing::warn!("{}", held_back.limit.holds_back(held_back.wanted, self.max));
                }
                trace.pool_wait_start_ns = Some(self.clock.now_ns());
                let slot = self.slots.clone().acquire_owned().await.map_err(|_| "the connection pool was closed")?;
                trace.pool_wait_end_ns = Some(self.clock.now_ns());
                slot
            }
        };
        let mut reused = if fresh { None } else { self.reusable(session) };
        let mut opening = None;
        if reused.is_none() && !fresh && self.shares_http2_connections() {
            let turn = self.opening_http2.lock().await;
            // Those that waited while the first connection turned out HTTP/1.1 go on together.
            opening = self.shares_http2_connections().then_some(turn);
            reused = self.reusable(session).or_else(|| self.queue_on_least_busy_http2());
        }
        let (connection, stream) = match reused {
            Some(reused) => {
                trace.connection_reused_ns = Some(self.clock.now_ns());
                reused
            }
            None => {
                // Boxed: connecting is most of this future's size (1.4 KB, more with TLS), yet
                // only a request that opens a connection needs it.
                let connection = Box::pin(self.connector.connect(trace)).await?;
                let stream = match (&connection.sender, opening.is_some()) {
                    (Sender::Http2(sender), true) => Some(self.share_http2(sender, &connection)),
                    (Sender::Http1(_), true) => {
                        self.http2_refused_by_server();
                        None
                    }
                    (_, false) => None,
                };
                (connection, stream)
            }
        };
        drop(opening);
        trace.connection = Some(connection.info);
        Ok(Lease { connection, session, http2_body: None, _stream: stream, _slot: slot })
    }

    /// Every request is to go over the shared HTTP/2 connections, as far as is known.
    fn shares_http2_connections(&self) -> bool {
        self.connector.wants_http2()
            && self.strategy != ConnectionStrategy::NeverReuse
            && !self.http2_refused.load(Ordering::Relaxed)
    }

    /// The server answered the offer of HTTP/2 with HTTP/1.1: said once.
    fn http2_refused_by_server(&self) {
        if !self.http2_refused.swap(true, Ordering::Relaxed) {
            tracing::warn!(
                "http2 was asked for, but the server chose HTTP/1.1 (TLS ALPN): requests go over HTTP/1.1, a \
                 connection for each one in flight"
            );
        }
    }

    /// A new HTTP/2 connection (its one stream in use by the request that opened it) for
    /// every request to share from now on.
    fn share_http2(&self, sender: &Http2Connection, connection: &Connection) -> StreamInUse {
        let streams_in_use = Arc::new(AtomicUsize::new(1));
        let mut idle = self.idle();
        idle.http2.retain(|shared| !shared.sender.is_closed());
        idle.http2.push(SharedHttp2 {
            sender: sender.clone(),
            info: connection.info,
            streams_max: connection.streams_max,
            streams_in_use: streams_in_use.clone(),
        });
        StreamInUse(streams_in_use)
    }

    /// Every shared HTTP/2 connection's streams are in use and no more connections are
    /// allowed: the least busy one, where h2 queues the request until a stream ends (said once).
    fn queue_on_least_busy_http2(&self) -> Option<(Connection, Option<StreamInUse>)> {
        let idle = self.idle();
        let open = idle.http2.iter().filter(|shared| !shared.sender.is_closed());
        if open.clone().count() < self.http2_connections_max {
            return None;
        }
        let least_busy = open.min_by_key(|shared| shared.streams_in_use.load(Ordering::Relaxed))?;
        if !self.http2_streams_queued.swap(true, Ordering::Relaxed) {
            tracing::warn!(
                "{} HTTP/2 streams wanted at once, but {} connections of {} streams each (the server's \
                 SETTINGS_MAX_CONCURRENT_STREAMS) carry fewer; the rest wait for a free stream. Raise \
                 connections.http2_connections or the open-file limit (ulimit -n) to open more connections",
                self.max,
                self.http2_connections_max,
                least_busy.streams_max
            );
        }
        Some(least_busy.lease_stream())
    }

    /// An idle connection that is still open (over HTTP/2: a shared one with a free stream,
    /// and that stream's count), if the strategy allows one.
    fn reusable(&self, session: u64) -> Option<(Connection, Option<StreamInUse>)> {
        if self.strategy == ConnectionStrategy::NeverReuse {
            return None;
        }
        loop {
            let candidate = {
                let mut idle = self.idle();
                let open_with_room = idle.http2.iter().find(|shared| shared.has_room() && !shared.sender.is_closed());
                if let Some(shared) = open_with_room {
                    return Some(shared.lease_stream());
                }
                match self.strategy {
                    ConnectionStrategy::Sticky => idle.by_session.remove(&session),
                    _ => idle.shared.pop(),
                }
            };
            let connection = candidate?;
            if !connection.sender.closed_while_idle() {
                return Some((connection, None));
            }
        }
    }

    /// Stop sharing the HTTP/2 connection `info` (the server closed it), so that the requests
    /// it failed share new connections when they are sent again instead of each opening one.
    pub fn forget_http2(&self, info: &ConnectionInfo) {
        self.idle().http2.retain(|shared| shared.info != *info);
    }

    /// Return a connection whose response was read to the end, for reuse.
    pub fn check_in(&self, lease: Lease) {
        let Lease { connection, session, .. } = lease;
        if self.strategy == ConnectionStrategy::NeverReuse || connection.sender.is_closed() {
            return;
        }
        let mut idle = self.idle();
        match connection.sender {
            Sender::Http2(sender) => {
                // A connection of its own (sent again, or a probe's): shared when none is.
                if idle.http2.iter().all(|shared| shared.sender.is_closed()) {
                    idle.http2 = vec![SharedHttp2 {
                        sender,
                        info: connection.info,
                        streams_max: connection.streams_max,
                        streams_in_use: Arc::new(AtomicUsize::new(0)),
                    }];
                }
            }
            Sender::Http1(_) if self.strategy == ConnectionStrategy::Sticky => {
                if idle.by_session.len() >= self.max_idle
                    && !idle.by_session.contains_key(&session)
                    && let Some(&evicted) = idle.by_session.keys().next()
                {
                    idle.by_session.remove(&evicted);
                }
                idle.by_session.insert(session, connection);
            }
            Sender::Http1(_) => {
                if idle.shared.len() < self.max_idle {
                    idle.shared.push(connection);
                }
            }
        }
    }
}

/// The connections that fit the open-file limit, at `files_each` descriptors apiece, and what
/// was held back if not all of `wanted` do.
fn within_file_limit(wanted: usize, files_each: u64) -> (usize, Option<HeldBack>) {
    let Some(limit) = OpenFileLimit::raised().filter(|_| files_each > 0) else { return (wanted, None) };
    let max = wanted.min(limit.connections_allowed(files_each));
    (max, (max < wanted).then(|| HeldBack { wanted, limit, said: AtomicBool::new(false) }))
}

/// Shared HTTP/2 connections allowed: `asked` (none: no limit of the user's), within the
/// open-file limit at `files_each` descriptors a connection.
fn http2_connections_max(asked: Option<usize>, files_each: u64) -> usize {
    let asked = asked.unwrap_or(usize::MAX).max(1);
    OpenFileLimit::raised().map_or(asked, |limit| asked.min(limit.connections_allowed(files_each).max(1)))
}

/// Open files a request in use takes: `per_connection` over HTTP/1.1, none where every request
/// multiplexes over the one HTTP/2 connection (a TLS server that does not offer h2 gets a
/// connection each after all; past the limit those fail with the open-file advice).
fn files_each(connector: &Connector, strategy: ConnectionStrategy, per_connection: u64) -> u64 {
    if connector.wants_http2() && strategy != ConnectionStrategy::NeverReuse { 0 } else { per_connection }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connections_beyond_the_open_file_limit_are_held_back() {
        let limit = OpenFileLimit::raised().expect("the limit can be read");
        let (max, held_back) = within_file_limit(3, 1);
        assert_eq!((max, held_back.is_none()), (3, true), "a few connections fit");
        let wanted = usize::try_from(limit.soft).unwrap_or(usize::MAX);
        let (max, held_back) = within_file_limit(wanted, 1);
        assert_eq!(max, limit.connections_allowed(1));
        assert!(max < wanted && held_back.is_some_and(|held_back| held_back.wanted == wanted));
        let (shared, _) = within_file_limit(wanted, 2);
        assert_eq!(shared, limit.connections_allowed(2), "a server in the process halves the room");
        let (multiplexed, held_back) = within_file_limit(wanted, 0);
        assert_eq!(
            (multiplexed, held_back.is_none()),
            (wanted, true),
            "streams of one HTTP/2 connection take no files"
        );
    }
}
