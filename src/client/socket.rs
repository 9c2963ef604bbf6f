//! A connection's byte stream: TCP, or TLS over it (boxed: rustls's state is kilobytes, and a
//! plain connection should not hold room for it), and whether the server has closed it while
//! it sat idle.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;

pub(crate) enum Socket {
    Plain(TcpStream),
    Tls(Box<TlsStream<TcpStream>>),
}

impl Socket {
    /// The server closed an idle connection, or sent something nobody asked for (a plain
    /// connection only: over TLS that may be a session ticket). One non-blocking peek.
    pub fn closed_while_idle(&self) -> bool {
        let (tcp, plain) = match self {
            Socket::Plain(tcp) => (tcp, true),
            Socket::Tls(tls) => (tls.get_ref().0, false),
        };
        let mut byte = [0u8; 1];
        let mut peeked = ReadBuf::new(&mut byte);
        match tcp.poll_peek(&mut Context::from_waker(Waker::noop()), &mut peeked) {
            Poll::Pending => false,
            Poll::Ready(Ok(0)) | Poll::Ready(Err(_)) => true,
            Poll::Ready(Ok(_)) => plain,
        }
    }
}

impl AsyncRead for Socket {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Socket::Plain(tcp) => Pin::new(tcp).poll_read(cx, buf),
            Socket::Tls(tls) => Pin::new(tls.as_mut()).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Socket {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Socket::Plain(tcp) => Pin::new(tcp).poll_write(cx, buf),
            Socket::Tls(tls) => Pin::new(tls.as_mut()).poll_write(cx, buf),
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Socket::Plain(tcp) => Pin::new(tcp).poll_write_vectored(cx, bufs),
            Socket::Tls(tls) => Pin::new(tls.as_mut()).poll_write_vectored(cx, bufs),
        }
    }

    fn is_write_vectored(&self) -> bool {
        match self {
            Socket::Plain(tcp) => tcp.is_write_vectored(),
            Socket::Tls(tls) => tls.is_write_vectored(),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Socket::Plain(tcp) => Pin::new(tcp).poll_flush(cx),
            Socket::Tls(tls) => Pin::new(tls.as_mut()).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Socket::Plain(tcp) => Pin::new(tcp).poll_shutdown(cx),
            Socket::Tls(tls) => Pin::new(tls.as_mut()).poll_shutdown(cx),
        }
    }
}
