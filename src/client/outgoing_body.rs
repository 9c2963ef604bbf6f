//! The outgoing body: one buffer prepared in `request_bodies/`, written with the head over
//! HTTP/1.1, sent by hyper as a single frame over HTTP/2, where it notes when the connection
//! took it (there the wire is shared, so that is the send time we can observe).

use std::convert::Infallible;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};

use bytes::Bytes;
use hyper::body::{Body, Frame, SizeHint};

use crate::clock::RunClock;

/// When the body was taken by the connection (run ns; 0 until then), on the run's clock.
#[derive(Debug)]
pub(crate) struct TakenAt {
    clock: RunClock,
    ns: AtomicU64,
}

impl TakenAt {
    pub fn new(clock: RunClock) -> Self {
        Self { clock, ns: AtomicU64::new(0) }
    }

    pub fn ns(&self) -> Option<u64> {
        Some(self.ns.load(Ordering::Relaxed)).filter(|&ns| ns > 0)
    }
}

/// Kept small on purpose: hyper's request channel (HTTP/2) holds 32 requests in one block,
/// so every byte here is 32 bytes of that block (docs/performance.md).
pub(crate) struct RequestBody {
    data: Option<Bytes>,
    taken_at: Option<Arc<TakenAt>>,
}

impl RequestBody {
    /// A body that is not timed (HTTP/1.1 times its writes on the wire instead).
    pub fn new(data: Bytes) -> Self {
        Self { data: Some(data), taken_at: None }
    }

    /// The data, for a connection that writes it itself (HTTP/1.1).
    pub fn into_data(self) -> Bytes {
        self.data.unwrap_or_default()
    }

    /// A body that notes into `taken_at` when the connection takes its data.
    pub fn timed(data: Bytes, taken_at: Arc<TakenAt>) -> Self {
        Self { data: Some(data), taken_at: Some(taken_at) }
    }
}

impl Body for RequestBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let frame = self.data.take().map(|data| Ok(Frame::data(data)));
        if frame.is_some()
            && let Some(taken_at) = &self.taken_at
        {
            taken_at.ns.store(taken_at.clock.now_ns().max(1), Ordering::Relaxed);
        }
        Poll::Ready(frame)
    }

    fn is_end_stream(&self) -> bool {
        self.data.is_none()
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(self.data.as_ref().map_or(0, |data| data.len() as u64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_body_is_a_buffer_and_one_pointer() {
        // Each byte more is 32 more in every connection's request channel block.
        assert_eq!(size_of::<RequestBody>(), size_of::<Option<Bytes>>() + size_of::<usize>());
    }

    #[tokio::test]
    async fn the_body_is_one_frame_and_a_timed_one_notes_when_it_was_taken() {
        use http_body_util::BodyExt;
        let taken_at = Arc::new(TakenAt::new(RunClock::start()));
        let mut body = RequestBody::timed(Bytes::from_static(b"{\"a\":1}"), taken_at.clone());
        assert_eq!(body.size_hint().exact(), Some(7));
        assert_eq!(taken_at.ns(), None);
        let frame = body.frame().await.expect("a frame").expect("infallible");
        assert_eq!(frame.into_data().expect("data"), Bytes::from_static(b"{\"a\":1}"));
        assert!(taken_at.ns().is_some());
        assert!(body.is_end_stream());
        assert_eq!(body.size_hint().exact(), Some(0));
        assert!(body.frame().await.is_none());
    }
}
