//! Accepts TCP connections and serves each with hyper (HTTP/1.1 keep-alive or HTTP/2) until
//! told to stop; then lets in-flight responses finish, within a grace period.

use std::sync::Arc;
use std::time::Duration;

use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinSet;

use super::router;
use super::state::MockState;

/// How long a shutdown waits for in-flight responses before cutting them off.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);
/// Pause after a failed accept (e.g. out of file descriptors) before trying again.
const ACCEPT_RETRY_DELAY: Duration = Duration::from_millis(50);

/// Streams one HTTP/2 connection may hold open at once unless `http2_max_streams` says:
/// practically any number (hyper's own default is 200), so that, as over HTTP/1.1, how many the
/// mock serves at once is up to `max_running` alone.
const HTTP2_MAX_STREAMS: u32 = 1_000_000;
/// The HTTP/2 connection's receive window (hyper's default is 1 MiB). Thousands of streams
/// opened at once send more request bytes than that before the handlers read them; with a small
/// window the client cuts the bodies into small DATA frames, and h2 answers that flood with a
/// GOAWAY (`too_many_data_frames`) that fails every stream on the connection.
const HTTP2_CONNECTION_WINDOW: u32 = 64 << 20;

type ConnectionBuilder = auto::Builder<TokioExecutor>;

/// Serve `listener` until `stop` changes or its sender is dropped.
pub async fn serve(listener: TcpListener, state: Arc<MockState>, mut stop: watch::Receiver<bool>) {
    let mut builder = ConnectionBuilder::new(TokioExecutor::new());
    let max_streams = state.config.http2_max_streams.unwrap_or(HTTP2_MAX_STREAMS);
    builder.http2().max_concurrent_streams(max_streams).initial_connection_window_size(HTTP2_CONNECTION_WINDOW);
    let builder = Arc::new(builder);
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _peer)) => {
                    connections.spawn(serve_connection(builder.clone(), stream, state.clone(), stop.clone()));
                }
                Err(error) => {
                    tracing::warn!("mock server: accept failed: {error}");
                    tokio::time::sleep(ACCEPT_RETRY_DELAY).await;
                }
            },
            _ = stop.changed() => break,
            Some(_) = connections.join_next() => {}
        }
    }
    drop(listener);
    let drained =
        tokio::time::timeout(SHUTDOWN_GRACE, async { while connections.join_next().await.is_some() {} }).await;
    if drained.is_err() {
        tracing::warn!("mock server: cut off {} connections still busy after {SHUTDOWN_GRACE:?}", connections.len());
    }
}

async fn serve_connection(
    builder: Arc<ConnectionBuilder>,
    stream: TcpStream,
    state: Arc<MockState>,
    mut stop: watch::Receiver<bool>,
) {
    if let Err(error) = stream.set_nodelay(true) {
        tracing::debug!("mock server: cannot set TCP_NODELAY: {error}");
    }
    let service = service_fn(move |request| router::route(state.clone(), request));
    let connection = builder.serve_connection(TokioIo::new(stream), service);
    tokio::pin!(connection);
    let finished = tokio::select! {
        result = connection.as_mut() => Some(result),
        _ = stop.changed() => None,
    };
    let result = match finished {
        Some(result) => result,
        None => {
            connection.as_mut().graceful_shutdown();
            connection.await
        }
    };
    if let Err(error) = result {
        tracing::debug!("mock server: connection ended with an error: {error}");
    }
}
