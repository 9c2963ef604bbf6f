//! HTTP/1.1's wire format without IO: the request head written, and the response read from
//! a buffer by `ResponseReader`: its head parsed by `httparse`, 1xx answers skipped, how the
//! body ends decided (RFC 9112 §6.3), the body decoded (content-length, chunked, or to the
//! close). Every bound on what a server may send is here, and so is whether the connection
//! may take another request. The caller (`http1.rs`) only reads into the buffer.

use std::io;

use bytes::{Buf, Bytes, BytesMut};
use http::header::{CONNECTION, CONTENT_LENGTH, TRANSFER_ENCODING};
use http::{HeaderMap, HeaderName, HeaderValue, Method, Response, StatusCode, Version};

/// Bounds on what a server may send before the body, and between chunks.
const MAX_HEAD_BYTES: usize = 64 * 1024;
const MAX_HEADERS: usize = 100;
const MAX_CHUNK_LINE_BYTES: usize = 4 * 1024;
const MAX_TRAILER_BYTES: usize = 16 * 1024;

/// One response, read from the bytes a connection receives.
pub(crate) struct ResponseReader {
    body: Option<Framing>,
    keep_alive: bool,
}

/// What the body's next step is.
pub(crate) enum BodyStep {
    Data(Bytes),
    End,
    NeedMore,
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
    /// The trailer fields after the last chunk and the blank line: this many bytes so far.
    Trailers(usize),
}

/// The server closed the connection before any byte of the response: on a reused connection
/// that means it had closed it while idle, and the request may go again on a new one.
#[derive(Debug)]
pub(crate) struct ClosedBeforeResponse;

impl std::fmt::Display for ClosedBeforeResponse {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("connection closed before message completed")
    }
}

impl std::error::Error for ClosedBeforeResponse {}

impl ResponseReader {
    /// Before the response head.
    pub fn new() -> Self {
        Self { body: None, keep_alive: false }
    }

    /// A reader with nothing more to read (no response is expected).
    pub fn finished() -> Self {
        Self { body: Some(Framing::Done), keep_alive: false }
    }

    /// The response head, once `read` holds it (skipping 1xx answers); `None` while more is
    /// needed. `ended`: the connection has ended, nothing more will come.
    pub fn head(&mut self, read: &mut BytesMut, ended: bool) -> io::Result<Option<Response<()>>> {
        let head = self.next_head(read, ended);
        if head.is_err() {
            self.break_off();
        }
        head
    }

    fn next_head(&mut self, read: &mut BytesMut, ended: bool) -> io::Result<Option<Response<()>>> {
        loop {
            let Some((length, response)) = parse_head(read)? else {
                if read.len() >= MAX_HEAD_BYTES {
                    return Err(head_too_large());
                }
                return match (ended, read.is_empty()) {
                    (false, _) => Ok(None),
                    (true, true) => Err(io::Error::new(io::ErrorKind::UnexpectedEof, ClosedBeforeResponse)),
                    (true, false) => {
                        Err(io::Error::new(io::ErrorKind::UnexpectedEof, "connection closed inside the response head"))
                    }
                };
            };
            if length > MAX_HEAD_BYTES {
                return Err(head_too_large());
            }
            read.advance(length);
            let status = response.status();
            if status.is_informational() && status != StatusCode::SWITCHING_PROTOCOLS {
                continue;
            }
            let (body, keep_alive) = framing(&response)?;
            (self.body, self.keep_alive) = (Some(body), keep_alive);
            return Ok(Some(response));
        }
    }

    /// The body's next step from what `read` holds (`ended` as for `head`); after an error
    /// the body is over and the connection is not reused.
    pub fn body(&mut self, read: &mut BytesMut, ended: bool) -> io::Result<BodyStep> {
        let step = match self.decode(read) {
            Ok(BodyStep::NeedMore) if ended => match self.body {
                Some(Framing::UntilClose) => {
                    (self.body, self.keep_alive) = (Some(Framing::Done), false);
                    Ok(BodyStep::End)
                }
                _ => Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "connection closed before the response body ended",
                )),
            },
            step => step,
        };
        if step.is_err() {
            self.break_off();
        }
        step
    }

    /// The response was read to its end, nothing follows it, and the server keeps the
    /// connection open: it may take the next request.
    pub fn reusable(&self, read: &BytesMut) -> bool {
        matches!(self.body, Some(Framing::Done)) && self.keep_alive && read.is_empty()
    }

    /// The body is at its end (nothing more will come).
    pub fn is_end_stream(&self) -> bool {
        matches!(self.body, Some(Framing::Done | Framing::Length(0)))
    }

    fn break_off(&mut self) {
        (self.body, self.keep_alive) = (Some(Framing::Done), false);
    }

    /// The next step of the body from what is in the buffer.
    fn decode(&mut self, read: &mut BytesMut) -> io::Result<BodyStep> {
        loop {
            let buffered = read.len();
            let Some(body) = &mut self.body else {
                return Err(invalid("the response body was read before its head".to_owned()));
            };
            match body {
                Framing::Done => return Ok(BodyStep::End),
                Framing::Length(0) => *body = Framing::Done,
                Framing::Length(left) | Framing::Chunked(Chunk::Data(left)) => {
                    if buffered == 0 {
                        return Ok(BodyStep::NeedMore);
                    }
                    let take = (*left).min(buffered as u64);
                    *left -= take;
                    if *left == 0 && matches!(body, Framing::Chunked(_)) {
                        *body = Framing::Chunked(Chunk::DataEnd);
                    }
                    return Ok(BodyStep::Data(read.split_to(take as usize).freeze()));
                }
                Framing::UntilClose if buffered == 0 => return Ok(BodyStep::NeedMore),
                Framing::UntilClose => return Ok(BodyStep::Data(read.split().freeze())),
                Framing::Chunked(Chunk::Size) => match httparse::parse_chunk_size(read) {
                    Ok(httparse::Status::Complete((used, size))) if used <= MAX_CHUNK_LINE_BYTES => {
                        read.advance(used);
                        *body = Framing::Chunked(if size == 0 { Chunk::Trailers(0) } else { Chunk::Data(size) });
                    }
                    Ok(httparse::Status::Partial) if buffered <= MAX_CHUNK_LINE_BYTES => {
                        return Ok(BodyStep::NeedMore);
                    }
                    _ => return Err(invalid("invalid chunk size line in the response body".to_owned())),
                },
                Framing::Chunked(Chunk::DataEnd) => match &read[..buffered.min(2)] {
                    b"\r\n" => {
                        read.advance(2);
                        *body = Framing::Chunked(Chunk::Size);
                    }
                    b"" | b"\r" => return Ok(BodyStep::NeedMore),
                    _ => return Err(invalid("a chunk of the response body is longer than its size".to_owned())),
                },
                Framing::Chunked(Chunk::Trailers(seen)) => {
                    // Every line counts, the blank one too, whole or in part: the same bytes
                    // pass the bound however they arrive.
                    let line_end = memchr::memchr(b'\n', read);
                    let line = line_end.map_or(buffered, |end| end + 1);
                    if *seen + line > MAX_TRAILER_BYTES {
                        return Err(invalid(format!("the response trailers passed {MAX_TRAILER_BYTES} bytes")));
                    }
                    let Some(end) = line_end else { return Ok(BodyStep::NeedMore) };
                    *seen += line;
                    let blank = read[..end].iter().all(|&byte| byte == b'\r');
                    read.advance(line);
                    if blank {
                        *body = Framing::Done;
                    }
                }
            }
        }
    }
}

fn invalid(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message)
}

fn head_too_large() -> io::Error {
    invalid(format!("the response head passed {MAX_HEAD_BYTES} bytes"))
}

/// `METHOD path HTTP/1.1`, the headers, and a content-length where there is a body (or the
/// method carries one).
pub(crate) fn request_head(parts: &http::request::Parts, body_length: usize) -> Vec<u8> {
    let mut head = Vec::with_capacity(256);
    head.extend_from_slice(parts.method.as_str().as_bytes());
    head.push(b' ');
    head.extend_from_slice(parts.uri.path_and_query().map_or("/", |path| path.as_str()).as_bytes());
    head.extend_from_slice(b" HTTP/1.1\r\n");
    for (name, value) in &parts.headers {
        head.extend_from_slice(super::header_case::wire_name(name).as_bytes());
        head.extend_from_slice(b": ");
        head.extend_from_slice(value.as_bytes());
        head.extend_from_slice(b"\r\n");
    }
    let carries_body = body_length > 0 || matches!(parts.method, Method::POST | Method::PUT | Method::PATCH);
    if carries_body && !parts.headers.contains_key(CONTENT_LENGTH) {
        head.extend_from_slice(format!("Content-Length: {body_length}\r\n").as_bytes());
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
        let last_coding = list_items(headers, TRANSFER_ENCODING).rfind(|coding| !coding.is_empty());
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
    for item in list_items(headers, CONTENT_LENGTH) {
        let parsed = std::str::from_utf8(item).ok().filter(|text| text.bytes().all(|byte| byte.is_ascii_digit()));
        match (parsed.and_then(|text| text.parse::<u64>().ok()), length) {
            (Some(value), None) => length = Some(value),
            (Some(value), Some(known)) if value == known => {}
            _ => return Err(invalid("invalid content-length in the response".to_owned())),
        }
    }
    Ok(length)
}

/// `header` lists `token` (any letter case).
fn has_token(headers: &HeaderMap, header: HeaderName, token: &str) -> bool {
    list_items(headers, header).any(|item| item.eq_ignore_ascii_case(token.as_bytes()))
}

/// The comma-separated items of every `header` value, in order, without their spaces.
fn list_items(headers: &HeaderMap, header: HeaderName) -> impl DoubleEndedIterator<Item = &[u8]> {
    headers
        .get_all(header)
        .into_iter()
        .flat_map(|value| value.as_bytes().split(|&byte| byte == b','))
        .map(<[u8]>::trim_ascii)
}

/// Reading `input` as one response that arrives `piece` bytes at a time, then ends: its
/// status, its body, and whether it ended cleanly. However it is cut, a response reads the
/// same (`tests`, and the `http1_response` fuzz target).
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) fn read_in_pieces(input: &[u8], piece: usize) -> (Option<u16>, Vec<u8>, bool) {
    let mut reader = ResponseReader::new();
    let mut read = BytesMut::new();
    let mut rest = input;
    // Adds the next piece; true once there is none left.
    let mut feed = |read: &mut BytesMut| {
        let Some(take) = (!rest.is_empty()).then(|| piece.clamp(1, rest.len())) else { return true };
        let (now, later) = rest.split_at(take);
        read.extend_from_slice(now);
        rest = later;
        false
    };
    let mut ended = false;
    let status = loop {
        match reader.head(&mut read, ended) {
            Ok(Some(head)) => break head.status().as_u16(),
            Ok(None) => ended = feed(&mut read),
            Err(_) => return (None, Vec::new(), false),
        }
    };
    let mut body = Vec::new();
    loop {
        match reader.body(&mut read, ended) {
            Ok(BodyStep::Data(data)) => body.extend_from_slice(&data),
            Ok(BodyStep::End) => return (Some(status), body, true),
            Ok(BodyStep::NeedMore) => ended = feed(&mut read),
            Err(_) => return (Some(status), body, false),
        }
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::rng::SeededRng;

    /// A response carrying `body`, chunked or with a content-length, maybe with interim
    /// answers, chunk extensions and trailers (also `http1.rs`'s, over a socket).
    pub(in crate::client) fn response(rng: &mut SeededRng, body: &[u8]) -> Vec<u8> {
        let mut draw = |bound: u64| rng.below(bound) as usize;
        let mut response = Vec::new();
        if draw(4) == 0 {
            response.extend_from_slice(b"HTTP/1.1 100 Continue\r\n\r\n");
        }
        if draw(2) == 0 {
            response.extend_from_slice(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n");
            for chunk in body.chunks(1 + draw(300)) {
                let extension = if draw(4) == 0 { ";name=value" } else { "" };
                response.extend_from_slice(format!("{:X}{extension}\r\n", chunk.len()).as_bytes());
                response.extend_from_slice(chunk);
                response.extend_from_slice(b"\r\n");
            }
            response.extend_from_slice(if draw(3) == 0 { b"0\r\nx-trailer: 1\r\n\r\n" } else { b"0\r\n\r\n" });
        } else {
            response.extend_from_slice(format!("HTTP/1.1 200 OK\r\ncontent-length: {}\r\n\r\n", body.len()).as_bytes());
            response.extend_from_slice(body);
        }
        response
    }

    #[test]
    fn any_response_reads_the_same_however_it_is_cut_and_a_valid_one_reads_whole() {
        let mut rng = SeededRng::new(9);
        for case in 0..600 {
            let body: Vec<u8> = (0..rng.below(1200)).map(|_| rng.below(256) as u8).collect();
            let mut input = response(&mut rng, &body);
            let mutated = case % 2 == 1;
            if mutated {
                // Broken the way a server or a network might: bytes changed, lost or cut off.
                for _ in 0..1 + rng.below(3) {
                    let at = rng.below(input.len() as u64) as usize;
                    match rng.below(3) {
                        0 => input[at] = rng.below(256) as u8,
                        1 => drop(input.remove(at)),
                        _ => input.truncate(at),
                    }
                }
            }
            let whole = read_in_pieces(&input, input.len());
            if !mutated {
                assert_eq!(whole, (Some(200), body.clone(), true), "case {case}");
            }
            for piece in [1, 2, 3, 7, 64, 1 + rng.below(512) as usize] {
                assert_eq!(read_in_pieces(&input, piece), whole, "case {case}, pieces of {piece}");
            }
        }
    }

    #[test]
    fn what_a_server_may_send_is_bounded_however_it_arrives() {
        let long_head =
            format!("HTTP/1.1 200 OK\r\nx-long: {}\r\ncontent-length: 0\r\n\r\n", "a".repeat(MAX_HEAD_BYTES));
        let long_chunk_line = format!(
            "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n1;{}\r\nx\r\n0\r\n\r\n",
            "e".repeat(MAX_CHUNK_LINE_BYTES)
        );
        let long_trailers = format!(
            "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n0\r\nx-t: {}\r\n\r\n",
            "t".repeat(MAX_TRAILER_BYTES)
        );
        for input in [long_head, long_chunk_line, long_trailers] {
            for piece in [61, 997, input.len()] {
                assert!(!read_in_pieces(input.as_bytes(), piece).2, "{:.60}… in pieces of {piece}", input);
            }
        }
        let many_headers = format!("HTTP/1.1 200 OK\r\n{}content-length: 0\r\n\r\n", "x-h: 1\r\n".repeat(MAX_HEADERS));
        assert_eq!(read_in_pieces(many_headers.as_bytes(), 10), (None, Vec::new(), false));
    }

    #[test]
    fn keep_alive_follows_the_version_and_the_connection_header() {
        let reusable = |input: &[u8]| {
            let mut reader = ResponseReader::new();
            let mut read = BytesMut::from(input);
            reader.head(&mut read, true).unwrap().unwrap();
            while let BodyStep::Data(_) = reader.body(&mut read, true).unwrap() {}
            reader.reusable(&read)
        };
        assert!(reusable(b"HTTP/1.1 200 OK\r\ncontent-length: 1\r\n\r\nx"));
        assert!(!reusable(b"HTTP/1.1 200 OK\r\nconnection: keep-alive, close\r\ncontent-length: 1\r\n\r\nx"));
        assert!(!reusable(b"HTTP/1.0 200 OK\r\ncontent-length: 1\r\n\r\nx"));
        assert!(reusable(b"HTTP/1.0 200 OK\r\nconnection: Keep-Alive\r\ncontent-length: 1\r\n\r\nx"));
        assert!(!reusable(b"HTTP/1.1 200 OK\r\n\r\nto the close"));
        assert!(!reusable(b"HTTP/1.1 200 OK\r\ncontent-length: 1\r\n\r\nx and more"), "bytes after the body");
        assert!(!reusable(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\ncontent-length: 3\r\n\r\n0\r\n\r\n"));
        assert!(reusable(b"HTTP/1.1 304 Not Modified\r\ncontent-length: 7\r\n\r\n"), "no body, whatever the length");
    }
}
