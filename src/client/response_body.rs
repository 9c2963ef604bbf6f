//! A response body as its request reads it: from the HTTP/1.1 connection the request holds,
//! or from its HTTP/2 stream.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use hyper::body::{Body, Frame};

use super::http1::Http1Connection;
use super::http2::Http2Body;

pub(crate) enum ResponseBody<'a> {
    Http1(&'a mut Http1Connection),
    Http2(Http2Body),
    /// Taken already (a lease gives its HTTP/2 body once).
    Taken,
}

impl Body for ResponseBody<'_> {
    type Data = Bytes;
    type Error = io::Error;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, io::Error>>> {
        match self.get_mut() {
            ResponseBody::Http1(connection) => {
                connection.poll_data(cx).map(|data| data.map(|data| data.map(Frame::data)))
            }
            ResponseBody::Http2(body) => body.poll_frame(cx),
            ResponseBody::Taken => Poll::Ready(None),
        }
    }

    fn is_end_stream(&self) -> bool {
        match self {
            ResponseBody::Http1(connection) => connection.is_end_stream(),
            ResponseBody::Http2(body) => body.is_end_stream(),
            ResponseBody::Taken => true,
        }
    }
}
