//! `aiperf plot --dashboard`: a written report folder served over HTTP until Ctrl-C. AIPerf
//! starts its Dash app there; here the browser gets the same self-contained report page (`/`),
//! and the folder's other files by name.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result};
use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

use super::REPORT_FILE;

/// Serve `folder` on `address` until Ctrl-C; `on_listening` gets the address bound (a port 0
/// is a free one).
pub async fn serve(folder: PathBuf, address: SocketAddr, on_listening: impl FnOnce(SocketAddr)) -> Result<()> {
    let listener = TcpListener::bind(address).await.with_context(|| format!("cannot listen on {address}"))?;
    on_listening(listener.local_addr()?);
    let folder = Arc::new(folder);
    loop {
        let (stream, _) = tokio::select! {
            accepted = listener.accept() => accepted?,
            _ = tokio::signal::ctrl_c() => return Ok(()),
        };
        let folder = folder.clone();
        tokio::spawn(async move {
            let service = service_fn(move |request| answer(folder.clone(), request));
            if let Err(error) = http1::Builder::new().serve_connection(TokioIo::new(stream), service).await {
                tracing::debug!("report dashboard: connection ended with an error: {error}");
            }
        });
    }
}

async fn answer(folder: Arc<PathBuf>, request: Request<Incoming>) -> Result<Response<Full<Bytes>>, Infallible> {
    let name = request.uri().path().trim_start_matches('/');
    let name = if name.is_empty() { REPORT_FILE } else { name };
    let file = served_file(&folder, name);
    let read = match &file {
        Some(path) => tokio::fs::read(path).await.ok(),
        None => None,
    };
    let response = match read {
        Some(bytes) => Response::builder()
            .header(hyper::header::CONTENT_TYPE, content_type(name))
            .header(hyper::header::CACHE_CONTROL, "no-cache")
            .body(Full::new(Bytes::from(bytes))),
        None => Response::builder().status(StatusCode::NOT_FOUND).body(Full::new(Bytes::from_static(b"not found\n"))),
    };
    Ok(response.unwrap_or_else(|_| Response::new(Full::new(Bytes::new()))))
}

/// The file `name` names in `folder`: a plain file name only, so no request reaches outside it.
fn served_file(folder: &Path, name: &str) -> Option<PathBuf> {
    let plain = !name.is_empty() && !name.starts_with('.') && !name.contains(['/', '\\']);
    plain.then(|| folder.join(name))
}

fn content_type(name: &str) -> &'static str {
    match name.rsplit('.').next() {
        Some("html") => "text/html; charset=utf-8",
        Some("svg") => "image/svg+xml",
        Some("png") => "image/png",
        Some("json") => "application/json",
        _ => "application/octet-stream",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_names_in_the_folder_are_served() {
        let folder = Path::new("/tmp/plots");
        assert_eq!(served_file(folder, "report.html"), Some(folder.join("report.html")));
        for outside in ["../etc/passwd", "a/b.png", ".hidden", "..", "", "x\\y"] {
            assert_eq!(served_file(folder, outside), None, "{outside}");
        }
        assert_eq!(content_type("ttft.svg"), "image/svg+xml");
    }
}
