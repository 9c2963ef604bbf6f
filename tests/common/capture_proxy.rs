//! A capturing proxy in front of the built-in mock: both on 127.0.0.1, on a thread and runtime
//! of their own, so a test can run the `aiperf` binary against the proxy and then read every
//! request it forwarded (method, path, content type, body) beside what the mock answered.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http::header::CONTENT_TYPE;
use http::{Request, Response};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::client::legacy::Client;
use hyper_util::rt::{TokioExecutor, TokioIo};

use aiperf::mock::{MockConfig, MockServer};

/// One request as it reached the proxy.
#[derive(Debug, Clone)]
pub struct Captured {
    pub method: String,
    pub path: String,
    pub content_type: String,
    pub body: Bytes,
}

/// The proxy's address and what it has captured; the proxy and the mock stop when it drops.
pub struct CaptureProxy {
    pub base_url: String,
    captured: Arc<Mutex<Vec<Captured>>>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl CaptureProxy {
    /// A mock with `config` and a proxy to it.
    pub fn start(config: MockConfig) -> CaptureProxy {
        let captured = Arc::new(Mutex::new(Vec::new()));
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let log = captured.clone();
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
            runtime.block_on(async move {
                let mock = MockServer::start(config, SocketAddr::from(([127, 0, 0, 1], 0))).await.unwrap();
                let upstream = mock.base_url();
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
                ready_tx.send(format!("http://{}", listener.local_addr().unwrap())).unwrap();
                let client: Client<_, Full<Bytes>> = Client::builder(TokioExecutor::new()).build_http();
                let serve = async move {
                    loop {
                        let Ok((stream, _)) = listener.accept().await else { continue };
                        let (client, upstream, log) = (client.clone(), upstream.clone(), log.clone());
                        tokio::spawn(async move {
                            let service = service_fn(move |request| {
                                forward(request, client.clone(), upstream.clone(), log.clone())
                            });
                            let _ = hyper::server::conn::http1::Builder::new()
                                .serve_connection(TokioIo::new(stream), service)
                                .await;
                        });
                    }
                };
                tokio::select! {
                    _ = serve => {}
                    _ = stopped => {}
                }
                drop(mock);
            });
        });
        let base_url = ready_rx.recv().expect("the capture proxy starts");
        CaptureProxy { base_url, captured, stop: Some(stop), thread: Some(thread) }
    }

    /// Every request captured so far to `path` (exact) with `method`.
    pub fn requests(&self, method: &str, path: &str) -> Vec<Captured> {
        let captured = self.captured.lock().unwrap();
        captured.iter().filter(|request| request.method == method && request.path == path).cloned().collect()
    }

    /// Every request captured so far whose path starts with `prefix`.
    pub fn requests_under(&self, prefix: &str) -> Vec<Captured> {
        let captured = self.captured.lock().unwrap();
        captured.iter().filter(|request| request.path.starts_with(prefix)).cloned().collect()
    }
}

impl Drop for CaptureProxy {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Keep the request, send it on to the mock, and hand back the mock's whole answer.
async fn forward(
    request: Request<Incoming>,
    client: Client<hyper_util::client::legacy::connect::HttpConnector, Full<Bytes>>,
    upstream: String,
    log: Arc<Mutex<Vec<Captured>>>,
) -> Result<Response<Full<Bytes>>, hyper::Error> {
    let (parts, body) = request.into_parts();
    let body = body.collect().await?.to_bytes();
    let path = parts.uri.path_and_query().map_or("/".to_string(), |path| path.to_string());
    let content_type =
        parts.headers.get(CONTENT_TYPE).and_then(|value| value.to_str().ok()).unwrap_or_default().to_string();
    log.lock().unwrap().push(Captured {
        method: parts.method.to_string(),
        path: path.clone(),
        content_type,
        body: body.clone(),
    });
    let mut onward = Request::builder().method(parts.method).uri(format!("{upstream}{path}"));
    for (name, value) in &parts.headers {
        if name != http::header::HOST {
            onward = onward.header(name, value);
        }
    }
    let answer = client.request(onward.body(Full::new(body)).unwrap()).await.expect("the mock answers");
    let (parts, body) = answer.into_parts();
    let body = body.collect().await?.to_bytes();
    Ok(Response::from_parts(parts, Full::new(body)))
}
