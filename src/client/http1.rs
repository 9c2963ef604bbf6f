//! HTTP/1.1 on one connection, driven by the task of the request that uses it: the request's
//! head and body written together, then the response read as it arrives, by the IO-free
//! reader of `http1_codec.rs`. There is no connection task and no request channel, and the
//! read buffer starts at 1 KiB, grows only while reads fill it and is let go while a read
//! waits with nothing unread: hyper's client held ~16 KB resident for each connection (two
//! 8 KiB buffers, the request channel, the connection task), which kept 10,000 streams above
//! 200 MB (docs/performance.md).

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use bytes::{Buf, Bytes, BytesMut};
use http::{Request, Response};
use tokio::io::AsyncWrite;

use super::http1_codec::{BodyStep, ClosedBeforeResponse, ResponseReader, request_head};
use super::socket::Socket;
use super::wire::WireIo;

/// What the first read makes room for; a read that fills the room doubles it, up to `MAX_READ`.
const FIRST_READ: usize = 1024;
const MAX_READ: usize = 64 * 1024;

/// One HTTP/1.1 connection; a request at a time.
pub(crate) struct Http1Connection {
    io: WireIo<Socket>,
    read: BytesMut,
    next_read: usize,
    response: ResponseReader,
    /// The request was written whole (not cut short by an early answer).
    request_written: bool,
    /// Not to be used again: from the moment a request is written until its response has
    /// been read to the end over a connection the server keeps open.
    closed: bool,
}

/// True for the failures of a request sent on a connection the server had already closed.
pub(crate) fn is_stale(error: &io::Error) -> bool {
    use io::ErrorKind::{BrokenPipe, ConnectionAborted, ConnectionReset, NotConnected};
    matches!(error.kind(), BrokenPipe | ConnectionAborted | ConnectionReset | NotConnected)
        || error.get_ref().is_some_and(|inner| inner.is::<ClosedBeforeResponse>())
}

impl Http1Connection {
    pub fn new(io: WireIo<Socket>) -> Self {
        Self {
            io,
            read: BytesMut::new(),
            next_read: FIRST_READ,
            response: ResponseReader::finished(),
            request_written: false,
            closed: false,
        }
    }

    /// No further request may use it.
    pub fn is_closed(&self) -> bool {
        self.closed
    }

    /// Closed, or closed by the server while it sat idle.
    pub fn closed_while_idle(&self) -> bool {
        self.closed || self.io.get_ref().closed_while_idle()
    }

    /// Write `request` (its uri in origin form) and read the response head; the body is read
    /// next, with `poll_data`. A server may answer before it has read the whole request (a 413
    /// for a body too large, say), then stop reading or close: the answer is watched for while
    /// the server takes no more of the request, and still read after it broke the connection,
    /// so the request ends with the server's answer (RFC 9112 §9.5), not with a broken pipe or
    /// a timeout. A connection whose request was cut short is not used again.
    pub async fn send(&mut self, request: Request<Bytes>) -> io::Result<Response<()>> {
        if self.closed {
            return Err(io::Error::new(io::ErrorKind::NotConnected, "the connection was closed"));
        }
        self.closed = true;
        self.request_written = false;
        self.response = ResponseReader::new();
        let written = {
            // In a scope of its own: what is written is not kept while the response is awaited
            // (nor room for it in the request's task).
            let (head, body) = {
                let (parts, body) = request.into_parts();
                (request_head(&parts, body.len()), body)
            };
            let mut outgoing = Buf::chain(&head[..], &body[..]);
            std::future::poll_fn(|cx| self.poll_write_request(cx, &mut outgoing)).await
        };
        match written {
            Ok(Some(early_answer)) => Ok(early_answer),
            Ok(None) => {
                self.request_written = true;
                std::future::poll_fn(|cx| self.poll_head(cx)).await
            }
            // Reset or closed by the server: an answer it sent first is still there to read.
            Err(broken) if is_stale(&broken) => std::future::poll_fn(|cx| self.poll_head(cx)).await.map_err(|_| broken),
            Err(error) => Err(error),
        }
    }

    /// Write what is left of the request and flush it (`None` once done); while the server
    /// takes no more of it, a response head it has sent ends the writing (`Some`).
    fn poll_write_request(
        &mut self,
        cx: &mut Context<'_>,
        outgoing: &mut impl Buf,
    ) -> Poll<io::Result<Option<Response<()>>>> {
        let written = loop {
            if !outgoing.has_remaining() {
                break Pin::new(&mut self.io).poll_flush(cx);
            }
            match tokio_util::io::poll_write_buf(Pin::new(&mut self.io), cx, outgoing) {
                Poll::Ready(Ok(0)) => break Poll::Ready(Err(io::ErrorKind::WriteZero.into())),
                Poll::Ready(Ok(_)) => {}
                Poll::Ready(Err(error)) => break Poll::Ready(Err(error)),
                Poll::Pending => break Poll::Pending,
            }
        };
        match written {
            Poll::Ready(done) => Poll::Ready(done.map(|()| None)),
            Poll::Pending => self.poll_head(cx).map_ok(Some),
        }
    }

    fn poll_head(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<Response<()>>> {
        let mut ended = false;
        loop {
            if let Some(head) = self.response.head(&mut self.read, ended)? {
                return Poll::Ready(Ok(head));
            }
            ended = ready!(self.poll_fill(cx))? == 0;
        }
    }

    /// The next piece of the response body; `None` at its end, after which the connection
    /// may take the next request if the server keeps it open.
    pub fn poll_data(&mut self, cx: &mut Context<'_>) -> Poll<Option<io::Result<Bytes>>> {
        let mut ended = false;
        loop {
            match self.response.body(&mut self.read, ended) {
                Ok(BodyStep::Data(data)) => return Poll::Ready(Some(Ok(data))),
                Ok(BodyStep::End) => {
                    self.closed = !(self.request_written && self.response.reusable(&self.read));
                    return Poll::Ready(None);
                }
                Ok(BodyStep::NeedMore) => {}
                Err(error) => return Poll::Ready(Some(Err(error))),
            }
            match ready!(self.poll_fill(cx)) {
                Ok(read) => ended = read == 0,
                Err(error) => return Poll::Ready(Some(Err(error))),
            }
        }
    }

    /// The body is at its end (nothing more will come).
    pub fn is_end_stream(&self) -> bool {
        self.response.is_end_stream()
    }

    /// Read what has arrived into the buffer (0 at the connection's end). While nothing has
    /// arrived and nothing is left unread, no room is held: a stream waiting for its next
    /// token would otherwise keep its whole read buffer resident for nothing.
    fn poll_fill(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<usize>> {
        // Reclaims the buffer's room when the body pieces given out have been dropped.
        self.read.reserve(self.next_read);
        let room = self.read.capacity() - self.read.len();
        let Poll::Ready(read) = tokio_util::io::poll_read_buf(Pin::new(&mut self.io), cx, &mut self.read) else {
            if self.read.is_empty() {
                self.read = BytesMut::new();
            }
            return Poll::Pending;
        };
        let read = read?;
        if read == room {
            self.next_read = (self.next_read * 2).min(MAX_READ);
        }
        Poll::Ready(Ok(read))
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use http_body_util::BodyExt;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::{TcpListener, TcpStream};

    use super::*;
    use crate::client::response_body::ResponseBody;
    use crate::client::wire::WireLog;
    use crate::clock::RunClock;

    type Served = tokio::task::JoinHandle<Vec<Vec<u8>>>;

    /// A server on a real socket that answers each request on its one connection with the next
    /// script (each piece written and flushed 2 ms apart), then closes; it reports the requests.
    async fn server(scripts: Vec<Vec<&'static [u8]>>) -> (Http1Connection, Served) {
        server_with_gaps(scripts, Some(Duration::from_millis(2))).await
    }

    /// `server`, its pieces `gap` apart, or (`None`) each after the runtime has run the client.
    async fn server_with_gaps(scripts: Vec<Vec<&'static [u8]>>, gap: Option<Duration>) -> (Http1Connection, Served) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let served = tokio::spawn(async move {
            let (mut stream, _) = listener.accept().await.unwrap();
            let mut requests = Vec::new();
            for script in scripts {
                requests.push(read_request(&mut stream).await);
                for piece in script {
                    stream.write_all(piece).await.unwrap();
                    stream.flush().await.unwrap();
                    match gap {
                        Some(gap) => tokio::time::sleep(gap).await,
                        None => tokio::task::yield_now().await,
                    }
                }
            }
            requests
        });
        let tcp = TcpStream::connect(address).await.unwrap();
        (Http1Connection::new(WireIo::new(Socket::Plain(tcp), WireLog::new(RunClock::start()))), served)
    }

    /// One request: its head and as many body bytes as its content-length says.
    async fn read_request(stream: &mut TcpStream) -> Vec<u8> {
        let mut request = Vec::new();
        let mut byte = [0u8; 1];
        while !request.ends_with(b"\r\n\r\n") {
            assert_eq!(stream.read(&mut byte).await.unwrap(), 1, "the request head ends");
            request.push(byte[0]);
        }
        let head = String::from_utf8(request.clone()).unwrap().to_ascii_lowercase();
        let length = head
            .lines()
            .find_map(|line| line.strip_prefix("content-length: "))
            .map_or(0, |length| length.parse::<usize>().unwrap());
        let mut body = vec![0u8; length];
        stream.read_exact(&mut body).await.unwrap();
        request.extend(body);
        request
    }

    fn post(body: impl Into<Bytes>) -> Request<Bytes> {
        Request::post("/v1/chat/completions")
            .header("host", "example:8000")
            .header("x-request-id", "r1")
            .body(body.into())
            .unwrap()
    }

    /// The response's status and its body's pieces.
    async fn exchange(connection: &mut Http1Connection, body: impl Into<Bytes>) -> io::Result<(u16, Vec<Bytes>)> {
        let status = connection.send(post(body)).await?.status().as_u16();
        let mut response = ResponseBody::Http1(connection);
        let mut pieces = Vec::new();
        while let Some(frame) = response.frame().await {
            pieces.push(frame?.into_data().unwrap());
        }
        Ok((status, pieces))
    }

    fn joined(pieces: &[Bytes]) -> String {
        String::from_utf8(pieces.concat()).unwrap()
    }

    #[tokio::test]
    async fn a_request_is_written_whole_and_keep_alive_answers_share_the_connection() {
        let first: &[u8] = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 11\r\n\r\n{\"a\":";
        let (mut connection, served) =
            server(vec![vec![first, b"12345}"], vec![b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok"]]).await;
        let (status, pieces) = exchange(&mut connection, "{\"x\":1}").await.unwrap();
        assert_eq!((status, joined(&pieces).as_str()), (200, "{\"a\":12345}"));
        assert!(pieces.len() >= 2, "each arrival is a piece of its own: {pieces:?}");
        assert!(!connection.is_closed() && !connection.closed_while_idle());
        assert_eq!(connection.next_read, FIRST_READ, "small answers keep the read buffer small");
        let (status, pieces) = exchange(&mut connection, "{}").await.unwrap();
        assert_eq!((status, joined(&pieces).as_str()), (200, "ok"));
        let requests = served.await.unwrap();
        assert_eq!(
            String::from_utf8(requests[0].clone()).unwrap(),
            "POST /v1/chat/completions HTTP/1.1\r\nHost: example:8000\r\nX-Request-ID: r1\r\nContent-Length: 7\r\n\r\n\
             {\"x\":1}"
        );
        assert_eq!(requests.len(), 2);
    }

    #[tokio::test]
    async fn a_response_waited_for_holds_no_read_buffer() {
        let head: &[u8] = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: 9\r\n\r\n";
        let (mut connection, served) =
            server_with_gaps(vec![vec![head, b"data: 1\n\n"]], Some(Duration::from_millis(300))).await;
        assert_eq!(connection.send(post("{}")).await.unwrap().status(), 200);
        let waiting = std::future::poll_fn(|cx| Poll::Ready(connection.poll_data(cx).is_pending())).await;
        assert!(waiting, "the body comes 300 ms after the head");
        assert_eq!(connection.read.capacity(), 0, "nothing unread: no room held while the body is awaited");
        let mut response = ResponseBody::Http1(&mut connection);
        let mut pieces = Vec::new();
        while let Some(frame) = response.frame().await {
            pieces.push(frame.unwrap().into_data().unwrap());
        }
        assert_eq!(joined(&pieces), "data: 1\n\n");
        assert!(!connection.is_closed(), "read to the end: the connection is ready again");
        served.await.unwrap();
    }

    #[tokio::test]
    async fn chunked_bodies_are_decoded_across_any_split_with_extensions_and_trailers() {
        let response: &[u8] =
            b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5;name=value\r\nhello\r\n7\r\n, world\r\n0\r\nx-t: 1\r\n\r\n";
        // Byte by byte: every state of the decoder meets a cut.
        let pieces: Vec<&'static [u8]> = (0..response.len()).map(|at| &response[at..at + 1]).collect();
        let (mut connection, served) = server(vec![pieces, vec![b"HTTP/1.1 204 No Content\r\n\r\n"]]).await;
        let (_, body) = exchange(&mut connection, "{}").await.unwrap();
        assert_eq!(joined(&body), "hello, world");
        assert!(!connection.is_closed(), "the trailers were read: the connection is ready again");
        let (status, body) = exchange(&mut connection, "{}").await.unwrap();
        assert_eq!((status, body.len()), (204, 0));
        served.await.unwrap();
    }

    #[tokio::test]
    async fn random_bodies_cut_anywhere_are_read_whole_and_leave_the_connection_ready() {
        let mut rng = crate::rng::SeededRng::new(16);
        for case in 0..32 {
            let body: Vec<u8> = (0..rng.below(3000)).map(|_| rng.below(256) as u8).collect();
            let response = crate::client::http1_codec::tests::response(&mut rng, &body);
            let response: &'static [u8] = response.leak();
            let mut pieces = Vec::new();
            let mut rest = response;
            while !rest.is_empty() {
                let (piece, after) = rest.split_at((1 + rng.below(64) as usize).min(rest.len()));
                pieces.push(piece);
                rest = after;
            }
            let (mut connection, served) =
                server_with_gaps(vec![pieces, vec![b"HTTP/1.1 204 No Content\r\n\r\n"]], None).await;
            let (_, read) = exchange(&mut connection, "{}").await.unwrap();
            assert_eq!(read.concat(), body, "case {case}");
            let (status, _) = exchange(&mut connection, "{}").await.unwrap();
            assert_eq!(status, 204, "case {case}: the connection was left ready for the next request");
            served.await.unwrap();
        }
    }

    #[tokio::test]
    async fn interim_answers_are_skipped() {
        let (mut connection, served) = server(vec![vec![
            b"HTTP/1.1 100 Continue\r\n\r\n",
            b"HTTP/1.1 103 Early Hints\r\nlink: </a>\r\n\r\nHTTP/1.1 201 Created\r\ncontent-length: 1\r\n\r\nx",
        ]])
        .await;
        let (status, body) = exchange(&mut connection, "{}").await.unwrap();
        assert_eq!((status, joined(&body).as_str()), (201, "x"));
        served.await.unwrap();
    }

    #[tokio::test]
    async fn a_connection_the_server_will_close_is_not_reused() {
        for head in [
            &b"HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-length: 2\r\n\r\nok"[..],
            b"HTTP/1.0 200 OK\r\ncontent-length: 2\r\n\r\nok",
        ] {
            let (mut connection, served) = server(vec![vec![head]]).await;
            let (_, body) = exchange(&mut connection, "{}").await.unwrap();
            assert_eq!(joined(&body), "ok");
            assert!(connection.is_closed(), "{}", String::from_utf8_lossy(head));
            served.await.unwrap();
        }
        // HTTP/1.0 keep-alive is kept; no length: the body runs to the connection's end.
        let (mut connection, served) =
            server(vec![vec![b"HTTP/1.0 200 OK\r\nconnection: keep-alive\r\ncontent-length: 0\r\n\r\n"]]).await;
        exchange(&mut connection, "{}").await.unwrap();
        assert!(!connection.is_closed());
        served.await.unwrap();
        let (mut connection, served) = server(vec![vec![b"HTTP/1.1 200 OK\r\n\r\nto the ", b"end"]]).await;
        let (_, body) = exchange(&mut connection, "{}").await.unwrap();
        assert_eq!(joined(&body), "to the end");
        assert!(connection.is_closed());
        served.await.unwrap();
    }

    #[tokio::test]
    async fn the_server_closing_an_idle_connection_is_seen_and_a_request_on_it_is_stale() {
        let (mut connection, served) = server(vec![vec![b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n"]]).await;
        exchange(&mut connection, "{}").await.unwrap();
        served.await.unwrap();
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(connection.closed_while_idle(), "the server's close is seen without a request");
        let error = exchange(&mut connection, "{}").await.unwrap_err();
        assert!(is_stale(&error), "{error}");
        let cause = crate::client::failure::root_cause(&error);
        assert!(["connection closed before message completed", "connection reset by peer"].contains(&cause.as_str()));
    }

    #[tokio::test]
    async fn broken_bodies_and_heads_are_errors_that_say_what_broke() {
        let cases: [(&'static [u8], &str); 5] = [
            (b"HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nhalf", "connection closed before the response body ended"),
            (b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n", "invalid chunk size line"),
            (b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\r\nabc\r\n", "longer than its size"),
            (b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\ncontent-length: 3\r\n\r\nab", "invalid content-length"),
            (b"HTTP/1.1 2xx OK\r\n\r\n", "invalid HTTP response head"),
        ];
        for (response, expected) in cases {
            let (mut connection, served) = server(vec![vec![response]]).await;
            let error = exchange(&mut connection, "{}").await.unwrap_err();
            assert!(error.to_string().contains(expected), "{error} should say {expected:?}");
            assert!(!is_stale(&error), "{error}");
            assert!(connection.is_closed());
            served.await.unwrap();
        }
    }

    #[tokio::test]
    async fn a_large_body_is_read_whole_in_growing_reads() {
        static BODY: std::sync::LazyLock<Vec<u8>> = std::sync::LazyLock::new(|| {
            let mut response = b"HTTP/1.1 200 OK\r\ncontent-length: 300000\r\n\r\n".to_vec();
            response.extend((0..300_000).map(|index| b'a' + (index % 26) as u8));
            response
        });
        let (mut connection, served) = server(vec![vec![&BODY[..]]]).await;
        let (_, body) = exchange(&mut connection, "{}").await.unwrap();
        assert_eq!(body.concat(), BODY[BODY.len() - 300_000..]);
        assert!(connection.next_read > FIRST_READ, "reads that filled the buffer made it larger");
        assert!(connection.next_read <= MAX_READ);
        served.await.unwrap();
    }

    /// A server that reads a request's head only, waits for the client to be held up writing
    /// the rest, answers 413, then closes (the unread request makes that a reset) or keeps the
    /// connection open, reading nothing more.
    async fn answering_early(close: bool) -> (Http1Connection, tokio::task::JoinHandle<Option<TcpStream>>) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let served = tokio::spawn(async move {
            let (mut stream, _) = listener.accept().await.unwrap();
            let mut head = Vec::new();
            while !head.ends_with(b"\r\n\r\n") {
                head.push(stream.read_u8().await.unwrap());
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
            stream.write_all(b"HTTP/1.1 413 Payload Too Large\r\ncontent-length: 9\r\n\r\ntoo large").await.unwrap();
            (!close).then_some(stream)
        });
        let tcp = TcpStream::connect(address).await.unwrap();
        (Http1Connection::new(WireIo::new(Socket::Plain(tcp), WireLog::new(RunClock::start()))), served)
    }

    #[tokio::test]
    async fn an_answer_before_the_request_is_written_whole_is_the_response() {
        for close in [false, true] {
            let (mut connection, served) = answering_early(close).await;
            // Far more than the sockets' buffers hold: the server's answer comes while the
            // client still has most of it to write.
            let sent = tokio::time::timeout(Duration::from_secs(20), exchange(&mut connection, vec![b'x'; 64 << 20]));
            let (status, body) = sent.await.expect("the answer ends the request").unwrap();
            assert_eq!((status, joined(&body).as_str()), (413, "too large"), "closed: {close}");
            assert!(connection.is_closed(), "closed: {close}: a request cut short leaves the connection unused");
            drop(served.await.unwrap());
        }
    }
}
