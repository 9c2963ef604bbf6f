//! The outgoing body as hyper sends it: one buffer prepared in `request_bodies/`, sent as a
//! single frame; on HTTP/2 it notes when the connection took it (there the wire is shared, so
//! that is the send time we can observe).

use std::convert::Infallible;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};

use bytes::Bytes;
use hyper::body::{Body, Frame, SizeHint};

use crate::clock::RunClock;

/// When the body was taken by the connection (run ns; 0 until then).
#[derive(Debug, Default)]
pub(crate) struct TakenAt(AtomicU64);

impl TakenAt {
    pub fn ns(&self) -> Option<u64> {
        Some(self.0.load(Ordering::Relaxed)).filter(|&ns| ns > 0)
    }
}

pub(crate) struct RequestBody {
    data: Option<Bytes>,
    size_bytes: u64,
    taken_at: Option<(RunClock, Arc<TakenAt>)>,
}

impl RequestBody {
    /// A body that is not timed (HTTP/1.1 times its writes on the wire instead).
    pub fn new(data: Bytes) -> Self {
        Self { size_bytes: data.len() as u64, data: Some(data), taken_at: None }
    }

    /// A body that notes into `taken_at` when the connection takes its data.
    pub fn timed(data: Bytes, clock: RunClock, taken_at: Arc<TakenAt>) -> Self {
        Self { size_bytes: data.len() as u64, data: Some(data), taken_at: Some((clock, taken_at)) }
    }
}

impl Body for RequestBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let frame = self.data.take().map(|data| Ok(Frame::data(data)));
        if frame.is_some()
            && let Some((clock, taken_at)) = &self.taken_at
        {
            taken_at.0.store(clock.now_ns().max(1), Ordering::Relaxed);
        }
        Poll::Ready(frame)
    }

    fn is_end_stream(&self) -> bool {
        self.data.is_none()
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(self.size_bytes)
    }
}
