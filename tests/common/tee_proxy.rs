//! A built-in mock server behind a forwarding proxy on 127.0.0.1 that keeps every byte the
//! client sent, so a test reads its HTTP/1.1 requests exactly as they went out (headers and
//! body) while the real mock answers them.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use aiperf::mock::{MockConfig, MockServer};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::runtime::Runtime;

/// The bytes each client connection sent, in the order the connections came.
type SentBytes = Arc<Mutex<Vec<Arc<Mutex<Vec<u8>>>>>>;

/// One request as it crossed the wire.
#[derive(Debug, Clone)]
pub struct SentRequest {
    pub method: String,
    pub path: String,
    /// Header names in lower case, in the order sent.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl SentRequest {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(key, _)| key == name).map(|(_, value)| value.as_str())
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&self.body)))
    }
}

/// The mock and the proxy in front of it, served by their own runtime until dropped.
pub struct MockBehindProxy {
    /// The proxy's base url, `http://127.0.0.1:PORT`: give it to a scenario as its `url`.
    pub url: String,
    sent: SentBytes,
    _mock: MockServer,
    _runtime: Runtime,
}

impl MockBehindProxy {
    pub fn start(config: MockConfig) -> Self {
        let runtime = Runtime::new().expect("a tokio runtime");
        let mock = runtime.block_on(MockServer::start(config, "127.0.0.1:0".parse().unwrap())).expect("the mock");
        let listener = runtime.block_on(TcpListener::bind("127.0.0.1:0")).expect("bind the proxy");
        let url = format!("http://{}", listener.local_addr().unwrap());
        let sent = Arc::new(Mutex::new(Vec::new()));
        runtime.spawn(accept(listener, mock.addr(), sent.clone()));
        MockBehindProxy { url, sent, _mock: mock, _runtime: runtime }
    }

    /// Every request sent so far, connection by connection.
    pub fn requests(&self) -> Vec<SentRequest> {
        let connections: Vec<Vec<u8>> =
            self.sent.lock().unwrap().iter().map(|bytes| bytes.lock().unwrap().clone()).collect();
        connections.iter().flat_map(|bytes| parse_requests(bytes)).collect()
    }

    /// The POST requests sent to `path`.
    pub fn posts_to(&self, path: &str) -> Vec<SentRequest> {
        self.requests().into_iter().filter(|request| request.method == "POST" && request.path == path).collect()
    }
}

async fn accept(listener: TcpListener, upstream: SocketAddr, sent: SentBytes) {
    while let Ok((client, _)) = listener.accept().await {
        let kept = Arc::new(Mutex::new(Vec::new()));
        sent.lock().unwrap().push(kept.clone());
        tokio::spawn(forward(client, upstream, kept));
    }
}

/// Copy both ways, keeping what the client wrote.
async fn forward(client: TcpStream, upstream: SocketAddr, kept: Arc<Mutex<Vec<u8>>>) {
    let Ok(server) = TcpStream::connect(upstream).await else { return };
    let (mut client_read, mut client_write) = client.into_split();
    let (mut server_read, mut server_write) = server.into_split();
    let to_server = async move {
        let mut buffer = vec![0u8; 64 * 1024];
        while let Ok(read) = client_read.read(&mut buffer).await {
            if read == 0 || server_write.write_all(&buffer[..read]).await.is_err() {
                break;
            }
            kept.lock().unwrap().extend_from_slice(&buffer[..read]);
        }
        let _ = server_write.shutdown().await;
    };
    let to_client = async move {
        let _ = tokio::io::copy(&mut server_read, &mut client_write).await;
        let _ = client_write.shutdown().await;
    };
    tokio::join!(to_server, to_client);
}

/// The requests in one connection's bytes (bodies by `content-length`).
fn parse_requests(mut bytes: &[u8]) -> Vec<SentRequest> {
    let mut requests = Vec::new();
    while let Some(head_end) = bytes.windows(4).position(|window| window == b"\r\n\r\n") {
        let head = String::from_utf8_lossy(&bytes[..head_end]).to_string();
        let mut lines = head.split("\r\n");
        let mut request_line = lines.next().unwrap_or_default().split(' ');
        let method = request_line.next().unwrap_or_default().to_string();
        let path = request_line.next().unwrap_or_default().to_string();
        let headers: Vec<(String, String)> = lines
            .filter_map(|line| line.split_once(':'))
            .map(|(name, value)| (name.trim().to_ascii_lowercase(), value.trim().to_string()))
            .collect();
        let length = headers
            .iter()
            .find(|(name, _)| name == "content-length")
            .and_then(|(_, value)| value.parse::<usize>().ok())
            .unwrap_or(0);
        let body_start = head_end + 4;
        let body_end = (body_start + length).min(bytes.len());
        requests.push(SentRequest { method, path, headers, body: bytes[body_start..body_end].to_vec() });
        bytes = &bytes[body_end..];
    }
    requests
}
