//! HTTP/1.1 on one connection, driven by the task of the request that uses it: the request's
//! head and body written together, the response head parsed by `httparse`, the body read as
//! it arrives (content-length, chunked, or to the close). There is no connection task and no
//! request channel, and the read buffer starts at 1 KiB and grows only while reads fill it:
//! hyper's client held ~16 KB resident for each connection (two 8 KiB buffers, the request
//! channel, the connection task), which kept 10,000 streams above 200 MB (docs/performance.md).

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use bytes::{Buf, Bytes, BytesMut};
use http::header::{CONNECTION, CONTENT_LENGTH, TRANSFER_ENCODING};
use http::{HeaderMap, HeaderName, HeaderValue, Method, Request, Response, StatusCode, Version};
use tokio::io::AsyncWriteExt;

use super::outgoing_body::RequestBody;
use super::socket::Socket;
use super::wire::WireIo;

/// What the first read makes room for; a read that fills the room doubles it, up to `MAX_READ`.
const FIRST_READ: usize = 1024;
const MAX_READ: usize = 64 * 1024;
/// Bounds on what a server may send before the body, and between chunks.
const MAX_HEAD_BYTES: usize = 64 * 1024;
const MAX_HEADERS: usize = 100;
const MAX_CHUNK_LINE_BYTES: usize = 4 * 1024;
const MAX_TRAILER_BYTES: usize = 16 * 1024;

/// One HTTP/1.1 connection; a request at a time.
pub(crate) struct Http1Connection {
    io: WireIo<Socket>,
    read: BytesMut,
    next_read: usize,
    body: Framing,
    keep_alive: bool,
    /// Not to be used again: from the moment a request is written until its response has
    /// been read to the end over a connection the server keeps open.
    closed: bool,
}

/// How the current response's body ends.
enum Framing {
    Length(u64),
    Chunked(Chunk),
    /// At the end of the connection (then it is not reused).
    UntilClose,
    Done,
}

enum Chunk {
    Size,
    Data(u64),
    /// The CRLF after a chunk's data.
    DataEnd,
    /// The trailer fields after the last chunk, this many bytes of them so far.
    Trailers(usize),
}

enum Decoded {
    Data(Bytes),
    End,
    NeedMore,
}

/// The server closed the connection before any byte of the response: on a reused connection
/// that means it had closed it while idle, and the request may go again on a new one.
#[derive(Debug)]
struct ClosedBeforeResponse;

impl std::fmt::Display for ClosedBeforeResponse {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("connection closed before message completed")
    }
}

impl std::error::Error for ClosedBeforeResponse {}

/// True for the failures of a request sent on a connection the server had already closed.
pub(crate) fn is_stale(error: &io::Error) -> bool {
    use io::ErrorKind::{BrokenPipe, ConnectionAborted, ConnectionReset, NotConnected};
    matches!(error.kind(), BrokenPipe | ConnectionAborted | ConnectionReset | NotConnected)
        || error.get_ref().is_some_and(|inner| inner.is::<ClosedBeforeResponse>())
}

fn invalid(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message)
}

impl Http1Connection {
    pub fn new(io: WireIo<Socket>) -> Self {
        Self { io, read: BytesMut::new(), next_read: FIRST_READ, body: Framing::Done, keep_alive: false, closed: false }
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
    /// next, with `poll_data`.
    pub async fn send(&mut self, request: Request<RequestBody>) -> io::Result<Response<()>> {
        if self.closed {
            return Err(io::Error::new(io::ErrorKind::NotConnected, "the connection was closed"));
        }
        self.closed = true;
        {
            // In a scope of its own: what is written is not kept while the response is awaited
            // (nor room for it in the request's task).
            let (head, body) = {
                let (parts, body) = request.into_parts();
                let body = body.into_data();
                (request_head(&parts, body.len()), body)
            };
            let mut outgoing = Buf::chain(&head[..], &body[..]);
            self.io.write_all_buf(&mut outgoing).await?;
        }
        self.io.flush().await?;
        loop {
            let response = std::future::poll_fn(|cx| self.poll_head(cx)).await?;
            let status = response.status();
            if status.is_informational() && status != StatusCode::SWITCHING_PROTOCOLS {
                continue;
            }
            let (body, keep_alive) = framing(&response)?;
            self.body = body;
            self.keep_alive = keep_alive;
            return Ok(response);
        }
    }

    /// The next piece of the response body; `None` at its end, after which the connection
    /// may take the next request if the server keeps it open.
    pub fn poll_data(&mut self, cx: &mut Context<'_>) -> Poll<Option<io::Result<Bytes>>> {
        loop {
            match self.decode() {
                Ok(Decoded::Data(data)) => return Poll::Ready(Some(Ok(data))),
                Ok(Decoded::End) => {
                    self.body = Framing::Done;
                    self.closed = !self.keep_alive || !self.read.is_empty();
                    return Poll::Ready(None);
                }
                Ok(Decoded::NeedMore) => {}
                Err(error) => return Poll::Ready(Some(Err(self.broken(error)))),
            }
            match ready!(self.poll_fill(cx)) {
                Ok(0) if matches!(self.body, Framing::UntilClose) => {
                    self.body = Framing::Done;
                    self.keep_alive = false;
                    return Poll::Ready(None);
                }
                Ok(0) => {
                    let cut = io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "connection closed before the response body ended",
                    );
                    return Poll::Ready(Some(Err(self.broken(cut))));
                }
                Ok(_) => {}
                Err(error) => return Poll::Ready(Some(Err(self.broken(error)))),
            }
        }
    }

    /// The body reports no more than this error, and the connection is not reused.
    fn broken(&mut self, error: io::Error) -> io::Error {
        self.body = Framing::Done;
        self.keep_alive = false;
        error
    }

    /// The body is at its end (nothing more will come).
    pub fn is_end_stream(&self) -> bool {
        matches!(self.body, Framing::Done | Framing::Length(0))
    }

    fn poll_head(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<Response<()>>> {
        loop {
            if let Some((length, response)) = parse_head(&self.read)? {
                self.read.advance(length);
                return Poll::Ready(Ok(response));
            }
            if self.read.len() >= MAX_HEAD_BYTES {
                return Poll::Ready(Err(invalid(format!("the response head passed {MAX_HEAD_BYTES} bytes"))));
            }
            if ready!(self.poll_fill(cx))? == 0 {
                return Poll::Ready(Err(match self.read.is_empty() {
                    true => ClosedBeforeResponse.into_eof(),
                    false => io::Error::new(io::ErrorKind::UnexpectedEof, "connection closed inside the response head"),
                }));
            }
        }
    }

    /// Read what has arrived into the buffer (0 at the connection's end).
    fn poll_fill(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<usize>> {
        // Reclaims the buffer's room when the body pieces given out have been dropped.
        self.read.reserve(self.next_read);
        let room = self.read.capacity() - self.read.len();
        let read = ready!(tokio_util::io::poll_read_buf(Pin::new(&mut self.io), cx, &mut self.read))?;
        if read == room {
            self.next_read = (self.next_read * 2).min(MAX_READ);
        }
        Poll::Ready(Ok(read))
    }

    /// The next step of the body from what is in the buffer.
    fn decode(&mut self) -> io::Result<Decoded> {
        loop {
            let buffered = self.read.len();
            match &mut self.body {
                Framing::Done | Framing::Length(0) => return Ok(Decoded::End),
                Framing::Length(left) | Framing::Chunked(Chunk::Data(left)) => {
                    if buffered == 0 {
                        return Ok(Decoded::NeedMore);
                    }
                    let take = (*left).min(buffered as u64);
                    *left -= take;
                    if *left == 0 && matches!(self.body, Framing::Chunked(_)) {
                        self.body = Framing::Chunked(Chunk::DataEnd);
                    }
                    return Ok(Decoded::Data(self.read.split_to(take as usize).freeze()));
                }
                Framing::UntilClose if buffered == 0 => return Ok(Decoded::NeedMore),
                Framing::UntilClose => return Ok(Decoded::Data(self.read.split().freeze())),
                Framing::Chunked(Chunk::Size) => match httparse::parse_chunk_size(&self.read) {
                    Ok(httparse::Status::Complete((used, size))) => {
                        self.read.advance(used);
                        self.body = Framing::Chunked(if size == 0 { Chunk::Trailers(0) } else { Chunk::Data(size) });
                    }
                    Ok(httparse::Status::Partial) if buffered <= MAX_CHUNK_LINE_BYTES => {
                        return Ok(Decoded::NeedMore);
                    }
                    _ => return Err(invalid("invalid chunk size line in the response body".to_owned())),
                },
                Framing::Chunked(Chunk::DataEnd) => match &self.read[..buffered.min(2)] {
                    b"\r\n" => {
                        self.read.advance(2);
                        self.body = Framing::Chunked(Chunk::Size);
                    }
                    b"" | b"\r" => return Ok(Decoded::NeedMore),
                    _ => return Err(invalid("a chunk of the response body is longer than its size".to_owned())),
                },
                Framing::Chunked(Chunk::Trailers(seen)) => {
                    let Some(line_end) = memchr::memchr(b'\n', &self.read) else {
                        if *seen + buffered > MAX_TRAILER_BYTES {
                            return Err(invalid(format!("the response trailers passed {MAX_TRAILER_BYTES} bytes")));
                        }
                        return Ok(Decoded::NeedMore);
                    };
                    let blank = self.read[..line_end].iter().all(|&byte| byte == b'\r');
                    *seen += line_end + 1;
                    let too_long = *seen > MAX_TRAILER_BYTES;
                    self.read.advance(line_end + 1);
                    if blank {
                        return Ok(Decoded::End);
                    }
                    if too_long {
                        return Err(invalid(format!("the response trailers passed {MAX_TRAILER_BYTES} bytes")));
                    }
                }
            }
        }
    }
}

impl ClosedBeforeResponse {
    fn into_eof(self) -> io::Error {
        io::Error::new(io::ErrorKind::UnexpectedEof, self)
    }
}

/// `METHOD path HTTP/1.1`, the headers, and a content-length where there is a body (or the
/// method carries one).
fn request_head(parts: &http::request::Parts, body_length: usize) -> Vec<u8> {
    let mut head = Vec::with_capacity(256);
    head.extend_from_slice(parts.method.as_str().as_bytes());
    head.push(b' ');
    head.extend_from_slice(parts.uri.path_and_query().map_or("/", |path| path.as_str()).as_bytes());
    head.extend_from_slice(b" HTTP/1.1\r\n");
    for (name, value) in &parts.headers {
        head.extend_from_slice(name.as_str().as_bytes());
        head.extend_from_slice(b": ");
        head.extend_from_slice(value.as_bytes());
        head.extend_from_slice(b"\r\n");
    }
    let carries_body = body_length > 0 || matches!(parts.method, Method::POST | Method::PUT | Method::PATCH);
    if carries_body && !parts.headers.contains_key(CONTENT_LENGTH) {
        head.extend_from_slice(format!("content-length: {body_length}\r\n").as_bytes());
    }
    head.extend_from_slice(b"\r\n");
    head
}

/// A whole response head at the start of `buffer`: its length and the response; `None` while
/// it is still incomplete.
fn parse_head(buffer: &[u8]) -> io::Result<Option<(usize, Response<()>)>> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut parsed = httparse::Response::new(&mut headers);
    let length = match parsed.parse(buffer) {
        Ok(httparse::Status::Complete(length)) => length,
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(error) => return Err(invalid(format!("invalid HTTP response head: {error}"))),
    };
    let status = parsed
        .code
        .and_then(|code| StatusCode::from_u16(code).ok())
        .ok_or_else(|| invalid("invalid HTTP response status".to_owned()))?;
    let mut response = Response::new(());
    *response.status_mut() = status;
    *response.version_mut() = if parsed.version == Some(0) { Version::HTTP_10 } else { Version::HTTP_11 };
    let map = response.headers_mut();
    map.reserve(parsed.headers.len());
    for header in parsed.headers.iter() {
        let name = HeaderName::from_bytes(header.name.as_bytes());
        let value = HeaderValue::from_bytes(header.value);
        let (Ok(name), Ok(value)) = (name, value) else {
            return Err(invalid(format!("invalid response header {:?}", header.name)));
        };
        map.append(name, value);
    }
    Ok(Some((length, response)))
}

/// How the body of `response` ends, and whether the connection stays open after it
/// (RFC 9112 §6.3 and §9.3).
fn framing(response: &Response<()>) -> io::Result<(Framing, bool)> {
    let headers = response.headers();
    let mut keep_alive = match response.version() {
        Version::HTTP_10 => has_token(headers, CONNECTION, "keep-alive"),
        _ => !has_token(headers, CONNECTION, "close"),
    };
    let status = response.status();
    if status == StatusCode::SWITCHING_PROTOCOLS {
        // Never asked for: whatever follows is not HTTP/1.1.
        return Ok((Framing::Length(0), false));
    }
    if status.is_informational() || status == StatusCode::NO_CONTENT || status == StatusCode::NOT_MODIFIED {
        return Ok((Framing::Length(0), keep_alive));
    }
    if headers.contains_key(TRANSFER_ENCODING) {
        let last_coding = headers
            .get_all(TRANSFER_ENCODING)
            .iter()
            .flat_map(|value| value.as_bytes().split(|&byte| byte == b','))
            .map(<[u8]>::trim_ascii)
            .rfind(|coding| !coding.is_empty());
        if headers.contains_key(CONTENT_LENGTH) {
            keep_alive = false;
        }
        return Ok(match last_coding.is_some_and(|coding| coding.eq_ignore_ascii_case(b"chunked")) {
            true => (Framing::Chunked(Chunk::Size), keep_alive),
            false => (Framing::UntilClose, false),
        });
    }
    Ok(match content_length(headers)? {
        Some(length) => (Framing::Length(length), keep_alive),
        None => (Framing::UntilClose, false),
    })
}

/// The content-length, which every value (and list item) must agree on.
fn content_length(headers: &HeaderMap) -> io::Result<Option<u64>> {
    let mut length = None;
    for item in headers.get_all(CONTENT_LENGTH).iter().flat_map(|value| value.as_bytes().split(|&byte| byte == b',')) {
        let item = item.trim_ascii();
        let parsed = std::str::from_utf8(item).ok().filter(|text| text.bytes().all(|byte| byte.is_ascii_digit()));
        match (parsed.and_then(|text| text.parse::<u64>().ok()), length) {
            (Some(value), None) => length = Some(value),
            (Some(value), Some(known)) if value == known => {}
            _ => return Err(invalid("invalid content-length in the response".to_owned())),
        }
    }
    Ok(length)
}

/// `header` lists `token` (comma-separated, any letter case).
fn has_token(headers: &HeaderMap, header: HeaderName, token: &str) -> bool {
    headers
        .get_all(header)
        .iter()
        .flat_map(|value| value.as_bytes().split(|&byte| byte == b','))
        .any(|item| item.trim_ascii().eq_ignore_ascii_case(token.as_bytes()))
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use http_body_util::BodyExt;
    use tokio::io::AsyncReadExt;
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
        let head = String::from_utf8(request.clone()).unwrap();
        let length = head
            .lines()
            .find_map(|line| line.strip_prefix("content-length: "))
            .map_or(0, |length| length.parse::<usize>().unwrap());
        let mut body = vec![0u8; length];
        stream.read_exact(&mut body).await.unwrap();
        request.extend(body);
        request
    }

    fn post(body: &'static str) -> Request<RequestBody> {
        Request::post("/v1/chat/completions")
            .header("host", "example:8000")
            .header("x-request-id", "r1")
            .body(RequestBody::new(Bytes::from_static(body.as_bytes())))
            .unwrap()
    }

    /// The response's status and its body's pieces.
    async fn exchange(connection: &mut Http1Connection, body: &'static str) -> io::Result<(u16, Vec<Bytes>)> {
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
            "POST /v1/chat/completions HTTP/1.1\r\nhost: example:8000\r\nx-request-id: r1\r\ncontent-length: 7\r\n\r\n\
             {\"x\":1}"
        );
        assert_eq!(requests.len(), 2);
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
        let mut draw = |bound: usize| rng.below(bound as u64) as usize;
        for case in 0..32 {
            let body: Vec<u8> = (0..draw(3000)).map(|_| draw(256) as u8).collect();
            let mut response = Vec::new();
            if draw(2) == 0 {
                response.extend_from_slice(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n");
                for chunk in body.chunks(1 + draw(700)) {
                    let extension = if draw(4) == 0 { ";name=value" } else { "" };
                    response.extend_from_slice(format!("{:x}{extension}\r\n", chunk.len()).as_bytes());
                    response.extend_from_slice(chunk);
                    response.extend_from_slice(b"\r\n");
                }
                let trailers: &[u8] = if draw(3) == 0 { b"x-trailer: 1\r\n\r\n" } else { b"\r\n" };
                response.extend_from_slice(b"0\r\n");
                response.extend_from_slice(trailers);
            } else {
                response
                    .extend_from_slice(format!("HTTP/1.1 200 OK\r\ncontent-length: {}\r\n\r\n", body.len()).as_bytes());
                response.extend_from_slice(&body);
            }
            let response: &'static [u8] = response.leak();
            let mut pieces = Vec::new();
            let mut rest = response;
            while !rest.is_empty() {
                let (piece, after) = rest.split_at((1 + draw(64)).min(rest.len()));
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
}
