//! Opening one traced connection: DNS (resolved once per client), TCP, optional TLS, then the
//! HTTP/1.1 or HTTP/2 handshake, each step's start and end noted in the request's `HttpTrace`.

use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};

use anyhow::{Context, Result, anyhow};
use http::Uri;
use rustls::CertificateError;
use rustls::pki_types::ServerName;
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;

use super::failure;
use super::http1::Http1Connection;
use super::http2::Http2Connection;
use super::http2_settings::SettingsWatch;
use super::open_files::OpenFileLimit;
use super::socket::Socket;
use super::tls;
use super::wire::{WireIo, WireLog};
use crate::clock::RunClock;
use crate::http_trace::{ConnectionInfo, HttpTrace};
use crate::plan::Transport;

/// How long a new HTTP/2 connection waits for the server's first SETTINGS (sent at once by
/// any server; one round trip) before its streams are taken as unlimited.
const SERVER_SETTINGS_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// How requests go over an open connection: HTTP/1.1 of our own, or HTTP/2 over h2.
pub(crate) enum Sender {
    Http1(Http1Connection),
    Http2(Http2Connection),
}

impl Sender {
    pub fn is_closed(&self) -> bool {
        match self {
            Sender::Http1(connection) => connection.is_closed(),
            Sender::Http2(sender) => sender.is_closed(),
        }
    }

    /// Closed, or (HTTP/1.1) closed by the server while the connection sat idle.
    pub fn closed_while_idle(&self) -> bool {
        match self {
            Sender::Http1(connection) => connection.closed_while_idle(),
            Sender::Http2(sender) => sender.is_closed(),
        }
    }
}

/// An open connection; an HTTP/2 one's driver runs on its own task until every `Sender` is
/// dropped, an HTTP/1.1 one is driven by the request using it.
pub(crate) struct Connection {
    pub sender: Sender,
    /// HTTP/1.1 only: what crossed the connection during the current request.
    pub wire: Option<Arc<WireLog>>,
    pub info: ConnectionInfo,
    /// Streams it may carry at once: 1 over HTTP/1.1; over HTTP/2 the server's
    /// SETTINGS_MAX_CONCURRENT_STREAMS, `usize::MAX` when it sets none.
    pub streams_max: usize,
}

/// Opens connections to one endpoint.
pub(crate) struct Connector {
    host: String,
    port: u16,
    /// The host as an address, when it is one (no DNS then).
    ip: Option<IpAddr>,
    tls: Option<(TlsConnector, ServerName<'static>)>,
    http2: bool,
    clock: RunClock,
    /// The first DNS answer, reused for the rest of the run.
    resolved: Mutex<Option<Vec<SocketAddr>>>,
}

impl Connector {
    /// HTTP/2 was asked for (over TLS it still depends on what the server offers via ALPN).
    pub fn wants_http2(&self) -> bool {
        self.http2
    }

    /// A connector for the scheme, host and port of `uri`.
    pub fn new(uri: &Uri, transport: &Transport, clock: RunClock) -> Result<Self> {
        let host = uri.host().ok_or_else(|| anyhow!("the endpoint url has no host"))?;
        let host = host.trim_start_matches('[').trim_end_matches(']').to_owned();
        let https = uri.scheme_str().is_some_and(|scheme| scheme.eq_ignore_ascii_case("https"));
        let port = uri.port_u16().unwrap_or(if https { 443 } else { 80 });
        let tls = match https {
            true => {
                let config = tls::client_config(&transport.tls, transport.http2)?;
                let name = ServerName::try_from(host.clone())
                    .with_context(|| format!("{host:?} cannot be checked against a TLS certificate"))?;
                Some((TlsConnector::from(config), name))
            }
            false => None,
        };
        Ok(Self { ip: host.parse().ok(), host, port, tls, http2: transport.http2, clock, resolved: Mutex::new(None) })
    }

    /// A new connection, its steps timed into `trace`; on failure, one sentence that says why.
    pub async fn connect(&self, trace: &mut HttpTrace) -> Result<Connection, String> {
        let addresses = self.addresses(trace).await?;
        trace.tcp_connect_start_ns = Some(self.clock.now_ns());
        let tcp = open_tcp(&addresses).await?;
        trace.tcp_connect_end_ns = Some(self.clock.now_ns());
        let (local, remote) = match (tcp.local_addr(), tcp.peer_addr()) {
            (Ok(local), Ok(remote)) => (local, remote),
            (Err(error), _) | (_, Err(error)) => return Err(format!("connection lost at once: {error}")),
        };
        if let Err(error) = tcp.set_nodelay(true) {
            tracing::debug!("cannot set TCP_NODELAY: {error}");
        }
        let Some((connector, name)) = &self.tls else {
            let info = ConnectionInfo { local, remote, http2: self.http2, tls: false };
            return self.handshake(Socket::Plain(tcp), info).await;
        };
        // Boxed: the TLS state is most of a connecting future's size (~9 KB against 1.4 KB
        // without it), and at thousands of users connecting at once plain ones paid for it too.
        Box::pin(self.over_tls(tcp, connector, name, (local, remote), trace)).await
    }

    /// The TLS handshake, then the HTTP one over it.
    async fn over_tls(
        &self,
        tcp: TcpStream,
        connector: &TlsConnector,
        name: &ServerName<'static>,
        (local, remote): (SocketAddr, SocketAddr),
        trace: &mut HttpTrace,
    ) -> Result<Connection, String> {
        trace.tls_handshake_start_ns = Some(self.clock.now_ns());
        let stream = connector.connect(name.clone(), tcp).await.map_err(|error| tls_failure(&self.host, &error))?;
        trace.tls_handshake_end_ns = Some(self.clock.now_ns());
        let http2 = stream.get_ref().1.alpn_protocol() == Some(b"h2");
        self.handshake(Socket::Tls(Box::new(stream)), ConnectionInfo { local, remote, http2, tls: true }).await
    }

    /// The addresses to try: the host itself, the cached answer, or a timed lookup.
    async fn addresses(&self, trace: &mut HttpTrace) -> Result<Vec<SocketAddr>, String> {
        if let Some(ip) = self.ip {
            return Ok(vec![SocketAddr::new(ip, self.port)]);
        }
        let cached = self.resolved.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).clone();
        if let Some(addresses) = cached {
            trace.dns_cache_hit_ns = Some(self.clock.now_ns());
            return Ok(addresses);
        }
        let start_ns = self.clock.now_ns();
        trace.dns_cache_miss_ns = Some(start_ns);
        trace.dns_lookup_start_ns = Some(start_ns);
        let found = tokio::net::lookup_host((self.host.as_str(), self.port)).await;
        trace.dns_lookup_end_ns = Some(self.clock.now_ns());
        let addresses: Vec<SocketAddr> =
            found.map_err(|error| format!("cannot resolve {}: {error}", self.host))?.collect();
        if addresses.is_empty() {
            return Err(format!("cannot resolve {}: no addresses", self.host));
        }
        *self.resolved.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(addresses.clone());
        Ok(addresses)
    }

    /// HTTP/2's handshake, or an HTTP/1.1 connection (which has none) counting what crosses it.
    async fn handshake(&self, socket: Socket, info: ConnectionInfo) -> Result<Connection, String> {
        if info.http2 {
            let failed = |error: h2::Error| format!("HTTP handshake failed: {}", failure::root_cause(&error));
            let (socket, stream_limit) = SettingsWatch::new(socket);
            // No limit of our own before the server's SETTINGS, which are awaited below: a
            // server that sets none allows any number (RFC 9113 §6.5.2).
            let sender = Http2Connection::handshake(socket, self.clock).await.map_err(failed)?;
            let streams_max = match tokio::time::timeout(SERVER_SETTINGS_WAIT, stream_limit).await {
                Ok(Ok(Some(limit))) => usize::try_from(limit.max(1)).unwrap_or(usize::MAX),
                Ok(Ok(None)) | Ok(Err(_)) => usize::MAX,
                Err(_) => {
                    tracing::debug!("no HTTP/2 SETTINGS from the server within {SERVER_SETTINGS_WAIT:?}");
                    usize::MAX
                }
            };
            return Ok(Connection { sender: Sender::Http2(sender), wire: None, info, streams_max });
        }
        let wire = WireLog::new(self.clock);
        let connection = Http1Connection::new(WireIo::new(socket, wire.clone()));
        Ok(Connection { sender: Sender::Http1(connection), wire: Some(wire), info, streams_max: 1 })
    }
}

/// The first address that accepts, else why the last one did not (out of descriptors: the
/// open-file limit and how to raise it).
async fn open_tcp(addresses: &[SocketAddr]) -> Result<TcpStream, String> {
    let mut last_error = None;
    for address in addresses {
        match TcpStream::connect(address).await {
            Ok(stream) => return Ok(stream),
            Err(error) => last_error = Some(error),
        }
    }
    Err(match last_error {
        Some(error) if error.raw_os_error() == Some(libc::EMFILE) => match OpenFileLimit::raised() {
            Some(limit) => limit.exhausted(),
            None => failure::root_cause(&error),
        },
        Some(error) => failure::root_cause(&error),
        None => "no address to connect to".to_owned(),
    })
}

/// How a failed TLS handshake's message opens: a server answered, so waiting for it is no cure.
pub(crate) const TLS_FAILURE_OPENING: &str = "TLS handshake with ";

/// A failed handshake in one sentence; certificate problems say how to trust the server.
fn tls_failure(host: &str, error: &std::io::Error) -> String {
    let cause = failure::root_cause(error);
    let certificate_problem =
        error.get_ref().and_then(|inner| inner.downcast_ref::<rustls::Error>()).and_then(|tls| match tls {
            rustls::Error::InvalidCertificate(problem) => Some(problem),
            _ => None,
        });
    let Some(problem) = certificate_problem else {
        return format!("{TLS_FAILURE_OPENING}{host} failed: {cause}");
    };
    let advice = match problem {
        CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. } => format!(
            "the certificate does not name {host}: use a url whose host it names, or give the server a \
             certificate made for {host}"
        ),
        CertificateError::Expired
        | CertificateError::ExpiredContext { .. }
        | CertificateError::NotValidYet
        | CertificateError::NotValidYetContext { .. } => {
            "the certificate is outside its validity period: renew it, or check both machines' clocks".to_owned()
        }
        _ => "to trust this server give endpoint tls: #{ ca_file: \"server.pem\" } the server's own certificate \
              (self-signed) or the CA that signed it"
            .to_owned(),
    };
    format!(
        "{TLS_FAILURE_OPENING}{host} failed: {cause}; {advice} (tls: #{{ insecure: true }}, or \
         AIPERF_HTTP_SSL_VERIFY=false for an AIPerf command or config, skips verification, only as a last resort)"
    )
}
