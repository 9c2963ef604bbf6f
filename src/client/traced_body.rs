//! The response body as the client reads it, with the arrival of each data frame noted:
//! the first one (`http_req_waiting` ends there), their count and size, and the end.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use hyper::body::{Body, Frame, SizeHint};

use super::response_body::ResponseBody;
use crate::clock::RunClock;
use crate::http_trace::TraceChunk;

/// What the client saw of a response body.
#[derive(Debug, Default)]
pub(crate) struct BodyTiming {
    pub first_data_ns: Option<u64>,
    pub frames: u64,
    pub bytes: u64,
    /// Every data frame, when asked for.
    pub chunks: Option<Vec<TraceChunk>>,
    /// The body was read to its end without an error.
    pub ended: bool,
}

pub(crate) struct TracedBody<'a> {
    inner: ResponseBody<'a>,
    clock: RunClock,
    timing: &'a mut BodyTiming,
}

impl<'a> TracedBody<'a> {
    pub fn new(inner: ResponseBody<'a>, clock: RunClock, timing: &'a mut BodyTiming) -> Self {
        Self { inner, clock, timing }
    }
}

impl Body for TracedBody<'_> {
    type Data = Bytes;
    type Error = io::Error;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, io::Error>>> {
        let this = &mut *self;
        let polled = Pin::new(&mut this.inner).poll_frame(cx);
        match &polled {
            Poll::Ready(Some(Ok(frame))) => {
                if let Some(data) = frame.data_ref().filter(|data| !data.is_empty()) {
                    let now_ns = this.clock.now_ns();
                    let timing = &mut *this.timing;
                    timing.first_data_ns.get_or_insert(now_ns);
                    timing.frames += 1;
                    timing.bytes += data.len() as u64;
                    if let Some(chunks) = &mut timing.chunks {
                        chunks.push((now_ns, data.len() as u64));
                    }
                }
            }
            Poll::Ready(None) => this.timing.ended = true,
            _ => {}
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}
