//! HTTP/2 over `h2` directly: the request's own task opens its stream, sends the body and reads
//! the answer, with no per-request task or channel between it and the connection.

use std::future::{Future, poll_fn};
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll, ready};

use bytes::Bytes;
use h2::client::{ResponseFuture, SendRequest};
use h2::{Reason, RecvStream, SendStream};
use http::header::{CONNECTION, CONTENT_LENGTH, HeaderValue, TE, TRANSFER_ENCODING, UPGRADE};
use http::{HeaderMap, Method, Request, Response};
use hyper::body::Frame;
use tokio::io::{AsyncRead, AsyncWrite};

use crate::clock::RunClock;

// hyper's HTTP/2 client settings, which the client used before it spoke h2 directly.
const STREAM_WINDOW_BYTES: u32 = 2 * 1024 * 1024;
const CONNECTION_WINDOW_BYTES: u32 = 5 * 1024 * 1024;
const MAX_FRAME_BYTES: u32 = 16 * 1024;
const MAX_HEADER_LIST_BYTES: u32 = 16 * 1024;
const MAX_SEND_BUFFER_BYTES: usize = 1024 * 1024;
const MAX_LOCAL_ERROR_RESETS: usize = 1024;
/// How much framing overhead of small DATA frames (256 bytes less each frame's length) may wait
/// unread before h2 closes the connection with ENHANCE_YOUR_CALM "too_many_data_frames". Its
/// default, half the connection window (2.5 MiB, ~16,000 unread tokens), is met when tens of
/// thousands of streams get their first events at once while their tasks are still sending:
/// this allows a million.
const DATA_FRAME_BUDGET_BYTES: usize = 256 * 1024 * 1024;

/// One HTTP/2 connection; clones share it. Its frames are read and written by a task of its
/// own, which ends when the connection does.
#[derive(Clone)]
pub(crate) struct Http2Connection {
    sender: SendRequest<Bytes>,
    closed: Arc<AtomicBool>,
    clock: RunClock,
}

impl Http2Connection {
    /// The client's side of the handshake over `socket` (its preface and SETTINGS), with no
    /// limit on streams before the server's SETTINGS say one.
    pub async fn handshake<S>(socket: S, clock: RunClock) -> Result<Self, h2::Error>
    where
        S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    {
        let (sender, connection) = h2::client::Builder::new()
            .initial_max_send_streams(usize::MAX)
            .initial_window_size(STREAM_WINDOW_BYTES)
            .initial_connection_window_size(CONNECTION_WINDOW_BYTES)
            .max_frame_size(MAX_FRAME_BYTES)
            .max_header_list_size(MAX_HEADER_LIST_BYTES)
            .max_send_buffer_size(MAX_SEND_BUFFER_BYTES)
            .max_local_error_reset_streams(Some(MAX_LOCAL_ERROR_RESETS))
            .enable_push(false)
            .data_frame_budget(DATA_FRAME_BUDGET_BYTES)
            .handshake::<_, Bytes>(socket)
            .await?;
        let closed = Arc::new(AtomicBool::new(false));
        let closed_when_done = closed.clone();
        tokio::spawn(async move {
            if let Err(error) = connection.await {
                tracing::debug!("connection closed: {error}");
            }
            closed_when_done.store(true, Ordering::Release);
        });
        Ok(Self { sender, closed, clock })
    }

    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    /// Opens a stream for `request`, sends its body and waits for the response head; the body
    /// is read from the returned `Http2Body`. Also when the connection took the body (run ns;
    /// the wire is shared, so that is the send time to be seen). An error is h2's, inside the
    /// `io::Error`.
    pub async fn send(&mut self, request: Request<Bytes>) -> io::Result<(Response<()>, Http2Body, Option<u64>)> {
        let (mut head, data) = request.into_parts();
        strip_connection_headers(&mut head.headers);
        if !data.is_empty() || !matches!(head.method, Method::GET | Method::HEAD | Method::DELETE | Method::CONNECT) {
            head.headers.entry(CONTENT_LENGTH).or_insert_with(|| HeaderValue::from(data.len()));
        }
        poll_fn(|cx| self.sender.poll_ready(cx)).await.map_err(io::Error::other)?;
        let (response, stream) =
            self.sender.send_request(Request::from_parts(head, ()), data.is_empty()).map_err(io::Error::other)?;
        let mut sending =
            (!data.is_empty()).then(|| BodySend { stream, data: Some(data), clock: self.clock, taken_ns: None });
        let response = respond_while_sending(response, &mut sending).await.map_err(io::Error::other)?;
        let (head, recv) = response.into_parts();
        let taken_ns = sending.and_then(|body| body.taken_ns);
        Ok((Response::from_parts(head, ()), Http2Body { recv, data_done: false }, taken_ns))
    }
}

/// Waits for the response head while the body goes out; a body cut off by the answer (or by a
/// reset, which the answer then reports) is sent no further.
async fn respond_while_sending(
    mut response: ResponseFuture,
    sending: &mut Option<BodySend>,
) -> Result<Response<RecvStream>, h2::Error> {
    poll_fn(|cx| {
        if let Some(body) = sending
            && let Poll::Ready(Err(error)) = body.poll_send(cx)
        {
            tracing::debug!("request body not sent: {error}");
        }
        Pin::new(&mut response).poll(cx)
    })
    .await
}

/// A request body waiting for room in the flow-control windows, then when it was taken.
struct BodySend {
    stream: SendStream<Bytes>,
    data: Option<Bytes>,
    clock: RunClock,
    taken_ns: Option<u64>,
}

impl BodySend {
    /// Hands the body to the connection once the stream may send a byte (as hyper did: h2
    /// sends the rest as the windows open), noting when.
    fn poll_send(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), h2::Error>> {
        let Some(data) = self.data.take() else { return Poll::Ready(Ok(())) };
        self.stream.reserve_capacity(1);
        while self.stream.capacity() == 0 {
            match self.stream.poll_capacity(cx) {
                Poll::Ready(Some(Ok(_))) => {}
                Poll::Ready(Some(Err(error))) => return Poll::Ready(Err(error)),
                Poll::Ready(None) => return Poll::Ready(Err(h2::Error::from(Reason::STREAM_CLOSED))),
                Poll::Pending => {
                    self.data = Some(data);
                    return Poll::Pending;
                }
            }
        }
        self.taken_ns = Some(self.clock.now_ns());
        Poll::Ready(self.stream.send_data(data, true))
    }
}

/// The body of an HTTP/2 response: its data frames, then its trailers. Each frame's bytes are
/// given back to the flow-control windows as it is read.
pub(crate) struct Http2Body {
    recv: RecvStream,
    data_done: bool,
}

impl Http2Body {
    pub fn poll_frame(&mut self, cx: &mut Context<'_>) -> Poll<Option<io::Result<Frame<Bytes>>>> {
        if !self.data_done {
            match ready!(self.recv.poll_data(cx)) {
                Some(Ok(data)) => {
                    let _ = self.recv.flow_control().release_capacity(data.len());
                    return Poll::Ready(Some(Ok(Frame::data(data))));
                }
                Some(Err(error)) => return Poll::Ready(ended_early(error)),
                None => self.data_done = true,
            }
        }
        match ready!(self.recv.poll_trailers(cx)) {
            Ok(trailers) => Poll::Ready(trailers.map(|trailers| Ok(Frame::trailers(trailers)))),
            Err(error) => Poll::Ready(ended_early(error)),
        }
    }

    pub fn is_end_stream(&self) -> bool {
        self.recv.is_end_stream()
    }
}

/// A reset with NO_ERROR ends a body the server finished early (RFC 9113 §8.1); any other error
/// fails it.
fn ended_early(error: h2::Error) -> Option<io::Result<Frame<Bytes>>> {
    (error.reason() != Some(Reason::NO_ERROR)).then(|| Err(io::Error::other(error)))
}

/// HTTP/1.1's connection-specific headers, which HTTP/2 forbids (RFC 9113 §8.2.2): removed, as
/// hyper did, rather than failing the request.
fn strip_connection_headers(headers: &mut HeaderMap) {
    for name in [CONNECTION, TRANSFER_ENCODING, UPGRADE] {
        headers.remove(name);
    }
    for name in ["keep-alive", "proxy-connection"] {
        headers.remove(name);
    }
    if headers.get(TE).is_some_and(|te| te != "trailers") {
        headers.remove(TE);
    }
}

/// True when the connection was gone, shut down by the server (GOAWAY) or the stream refused
/// before any answer: the request may go again over another connection.
pub(crate) fn is_stale(error: &h2::Error) -> bool {
    use io::ErrorKind::{BrokenPipe, ConnectionAborted, ConnectionReset, UnexpectedEof};
    error.is_go_away()
        || error.reason() == Some(Reason::REFUSED_STREAM)
        || error
            .get_io()
            .is_some_and(|io| matches!(io.kind(), BrokenPipe | ConnectionAborted | ConnectionReset | UnexpectedEof))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connection_specific_headers_are_removed_and_te_trailers_kept() {
        let mut headers = HeaderMap::new();
        for (name, value) in [("connection", "keep-alive"), ("keep-alive", "5"), ("upgrade", "h2c"), ("x-a", "1")] {
            headers.insert(name, HeaderValue::from_static(value));
        }
        headers.insert(TE, HeaderValue::from_static("trailers"));
        strip_connection_headers(&mut headers);
        let mut names: Vec<&str> = headers.keys().map(|name| name.as_str()).collect();
        names.sort_unstable();
        assert_eq!(names, ["te", "x-a"]);
        headers.insert(TE, HeaderValue::from_static("gzip"));
        strip_connection_headers(&mut headers);
        assert!(headers.get(TE).is_none());
    }

    #[test]
    fn a_refused_stream_is_stale_another_stream_error_is_not() {
        assert!(is_stale(&h2::Error::from(Reason::REFUSED_STREAM)));
        assert!(!is_stale(&h2::Error::from(Reason::INTERNAL_ERROR)));
    }
}
