//! The counting IO adapter under an HTTP/1.1 connection: every read and write is counted and
//! timestamped into a `WireLog` that the request using the connection takes at its end.

use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use crate::clock::RunClock;
use crate::http_trace::TraceChunk;

/// What crossed one connection since the current request began.
#[derive(Debug, Default)]
pub(crate) struct WireTotals {
    pub writes: u64,
    pub bytes_written: u64,
    pub first_write_ns: Option<u64>,
    pub last_write_ns: Option<u64>,
    pub reads: u64,
    pub bytes_read: u64,
    /// Every write and read, only when `begin(true)` asked for them.
    pub write_chunks: Vec<TraceChunk>,
    pub read_chunks: Vec<TraceChunk>,
    keep_chunks: bool,
}

/// Shared by a connection's IO and the request currently using it (HTTP/1.1: one at a time).
#[derive(Debug)]
pub(crate) struct WireLog {
    clock: RunClock,
    totals: Mutex<WireTotals>,
}

impl WireLog {
    pub fn new(clock: RunClock) -> Arc<Self> {
        Arc::new(Self { clock, totals: Mutex::new(WireTotals::default()) })
    }

    fn totals(&self) -> MutexGuard<'_, WireTotals> {
        // The counters stay meaningful even if a holder panicked.
        self.totals.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// A request starts: forget what came before; `keep_chunks` lists every read and write.
    pub fn begin(&self, keep_chunks: bool) {
        *self.totals() = WireTotals { keep_chunks, ..WireTotals::default() };
    }

    /// What the request moved, leaving the log empty.
    pub fn take(&self) -> WireTotals {
        std::mem::take(&mut *self.totals())
    }

    fn wrote(&self, bytes: usize) {
        let now_ns = self.clock.now_ns();
        let mut totals = self.totals();
        totals.writes += 1;
        totals.bytes_written += bytes as u64;
        totals.first_write_ns.get_or_insert(now_ns);
        totals.last_write_ns = Some(now_ns);
        if totals.keep_chunks {
            totals.write_chunks.push((now_ns, bytes as u64));
        }
    }

    fn read(&self, bytes: usize) {
        let now_ns = self.clock.now_ns();
        let mut totals = self.totals();
        totals.reads += 1;
        totals.bytes_read += bytes as u64;
        if totals.keep_chunks {
            totals.read_chunks.push((now_ns, bytes as u64));
        }
    }
}

/// A stream whose every completed read and write is reported to a `WireLog`.
pub(crate) struct WireIo<S> {
    inner: S,
    log: Arc<WireLog>,
}

impl<S> WireIo<S> {
    pub fn new(inner: S, log: Arc<WireLog>) -> Self {
        Self { inner, log }
    }

    pub fn get_ref(&self) -> &S {
        &self.inner
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for WireIo<S> {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        let read = buf.filled().len() - before;
        if read > 0 {
            self.log.read(read);
        }
        polled
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for WireIo<S> {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let polled = Pin::new(&mut self.inner).poll_write(cx, buf);
        if let Poll::Ready(Ok(written)) = polled
            && written > 0
        {
            self.log.wrote(written);
        }
        polled
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let polled = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        if let Poll::Ready(Ok(written)) = polled
            && written > 0
        {
            self.log.wrote(written);
        }
        polled
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;

    #[tokio::test]
    async fn reads_and_writes_are_counted_and_listed_on_request() {
        let (client, mut server) = tokio::io::duplex(64);
        let log = WireLog::new(RunClock::start());
        let mut io = WireIo::new(client, log.clone());
        log.begin(true);
        io.write_all(b"hello").await.unwrap();
        server.write_all(b"world!").await.unwrap();
        let mut got = [0u8; 6];
        io.read_exact(&mut got).await.unwrap();
        let totals = log.take();
        assert_eq!((totals.writes, totals.bytes_written), (1, 5));
        assert_eq!(totals.bytes_read, 6);
        assert_eq!(totals.read_chunks.iter().map(|chunk| chunk.1).sum::<u64>(), 6);
        assert_eq!(totals.write_chunks.len(), 1);
        assert!(totals.first_write_ns.is_some() && totals.first_write_ns == totals.last_write_ns);

        log.begin(false);
        io.write_all(b"x").await.unwrap();
        let totals = log.take();
        assert_eq!((totals.writes, totals.bytes_written), (1, 1));
        assert!(totals.write_chunks.is_empty(), "chunks are listed only when asked for");
    }
}
