//! The server's first HTTP/2 SETTINGS frame read off the bytes of a new connection, for its
//! SETTINGS_MAX_CONCURRENT_STREAMS: how many streams the pool may open on that connection.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::oneshot;

/// A frame header: length (3 bytes), type, flags, stream id (4 bytes).
const FRAME_HEADER_BYTES: usize = 9;
const SETTINGS_FRAME: u8 = 0x4;
const MAX_CONCURRENT_STREAMS: u16 = 0x3;
/// Larger than any SETTINGS frame a server sends before it has read ours (the default
/// SETTINGS_MAX_FRAME_SIZE).
const MAX_FIRST_FRAME_BYTES: usize = 16_384;

/// What the server's first frame said about streams: `Some(limit)` when it set
/// SETTINGS_MAX_CONCURRENT_STREAMS, `None` when it set none (no limit).
pub(crate) type StreamLimit = Option<u32>;

/// A connection's byte stream that hands the server's first SETTINGS frame's stream limit to
/// `told` as soon as it has been read, then passes bytes through untouched.
pub(crate) struct SettingsWatch<S> {
    inner: S,
    /// The first frame's bytes so far; emptied once it has been read.
    first_frame: Vec<u8>,
    told: Option<oneshot::Sender<StreamLimit>>,
}

impl<S> SettingsWatch<S> {
    pub fn new(inner: S) -> (Self, oneshot::Receiver<StreamLimit>) {
        let (told, limit) = oneshot::channel();
        (Self { inner, first_frame: Vec::new(), told: Some(told) }, limit)
    }

    /// Take in the bytes just read until the first frame is whole; a first frame that is not
    /// SETTINGS (a protocol error the h2 layer reports) or too large to be one tells nothing.
    fn read_of_first_frame(&mut self, bytes: &[u8]) {
        if self.told.is_none() {
            return;
        }
        self.first_frame.extend_from_slice(bytes);
        let Some(header) = self.first_frame.get(..FRAME_HEADER_BYTES) else { return };
        let length = usize::from(header[0]) << 16 | usize::from(header[1]) << 8 | usize::from(header[2]);
        let is_settings = header[3] == SETTINGS_FRAME;
        if is_settings && length <= MAX_FIRST_FRAME_BYTES && self.first_frame.len() < FRAME_HEADER_BYTES + length {
            return;
        }
        let limit = match is_settings && length <= MAX_FIRST_FRAME_BYTES {
            true => stream_limit(&self.first_frame[FRAME_HEADER_BYTES..FRAME_HEADER_BYTES + length]),
            false => None,
        };
        self.first_frame = Vec::new();
        if let Some(told) = self.told.take() {
            // The pool may have stopped waiting (the handshake failed): nothing to tell then.
            let _ = told.send(limit);
        }
    }
}

/// The last SETTINGS_MAX_CONCURRENT_STREAMS of a SETTINGS payload (six bytes a setting).
fn stream_limit(payload: &[u8]) -> StreamLimit {
    payload
        .chunks_exact(6)
        .filter(|setting| u16::from_be_bytes([setting[0], setting[1]]) == MAX_CONCURRENT_STREAMS)
        .map(|setting| u32::from_be_bytes([setting[2], setting[3], setting[4], setting[5]]))
        .next_back()
}

impl<S: AsyncRead + Unpin> AsyncRead for SettingsWatch<S> {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let polled = Pin::new(&mut this.inner).poll_read(cx, buf);
        if this.told.is_some() {
            this.read_of_first_frame(&buf.filled()[before..]);
        }
        polled
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for SettingsWatch<S> {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    fn settings_frame(settings: &[(u16, u32)]) -> Vec<u8> {
        let length = settings.len() * 6;
        let mut frame = vec![0, (length >> 8) as u8, length as u8, SETTINGS_FRAME, 0, 0, 0, 0, 0];
        for (id, value) in settings {
            frame.extend_from_slice(&id.to_be_bytes());
            frame.extend_from_slice(&value.to_be_bytes());
        }
        frame
    }

    /// Feeds `bytes` through a watch a few bytes at a time, as a slow network would.
    async fn limit_read_from(bytes: Vec<u8>) -> StreamLimit {
        let (reader, mut writer) = tokio::io::duplex(4);
        tokio::spawn(async move { tokio::io::AsyncWriteExt::write_all(&mut writer, &bytes).await });
        let (mut watch, limit) = SettingsWatch::new(reader);
        let mut passed = Vec::new();
        watch.read_to_end(&mut passed).await.unwrap();
        limit.await.unwrap_or(None)
    }

    #[tokio::test]
    async fn the_stream_limit_is_read_across_split_reads() {
        let mut bytes = settings_frame(&[(0x1, 4096), (MAX_CONCURRENT_STREAMS, 128), (0x4, 65_535)]);
        bytes.extend_from_slice(&settings_frame(&[(MAX_CONCURRENT_STREAMS, 7)]));
        assert_eq!(limit_read_from(bytes).await, Some(128), "the first frame's, not a later one's");
        assert_eq!(limit_read_from(settings_frame(&[(0x4, 65_535)])).await, None, "no limit set");
        let ping = vec![0, 0, 8, 0x6, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8];
        assert_eq!(limit_read_from(ping).await, None, "a first frame that is not SETTINGS");
    }
}
