//! The built-in OpenAI-compatible mock server (a product feature: quickstart, tests, and a
//! target for other tools via `aiperf mock`). Serves chat and completions, the Responses API,
//! TGI's generate, Anthropic's Messages API and SOLIDO RAG, streaming and not, with configurable
//! timing; embeddings and rerank (Cohere, TEI, NIM); audio transcription, image generation, edits and retrieval, and
//! SGLang-style video jobs; plus /v1/models, /health, Prometheus /metrics (vLLM names) and
//! vLLM's control routes (KV-cache reset, profiler start and stop).

mod answers;
mod audio_api;
mod body;
mod chunks;
mod control;
mod embeddings;
mod fine_timer;
mod form;
mod generate;
mod generation;
mod image_retrieval;
mod images_api;
mod info;
mod messages_api;
mod openai;
mod prefix_cache;
mod prom;
mod reply;
mod request;
mod rerank;
mod responses_api;
mod router;
mod server;
mod solido_rag;
mod spec_decode;
mod state;
mod stats;
mod text_ids;
mod tgi;
mod thinking;
mod tool_calls;
mod video_jobs;
mod video_parts;
mod videos_api;
mod words;

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;

use anyhow::{Context, Result};
use tokio::net::{TcpListener, TcpSocket};
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::builtin_server::{BoxedFuture, BuiltInServer, RunningServer};

pub use crate::plan::MockConfig;

/// A running mock server; dropping it (or `shutdown`) stops it.
pub struct MockServer {
    addr: SocketAddr,
    state: Arc<state::MockState>,
    stop: watch::Sender<bool>,
    /// The accept loop (which owns every connection task); `None` once shut down.
    serving: Option<JoinHandle<()>>,
}

impl MockServer {
    /// Bind `addr` (port 0 picks a free port) and serve until shut down.
    pub async fn start(config: MockConfig, addr: SocketAddr) -> Result<MockServer> {
        let name = config.tokenizer.clone();
        let tokenizer = tokio::task::spawn_blocking(move || state::load_tokenizer(name.as_deref()))
            .await
            .context("making the mock server's tokenizer")??;
        let state = Arc::new(state::MockState::new(config, tokenizer)?);
        let listener = listen(addr).with_context(|| format!("mock server cannot bind {addr}"))?;
        let addr = listener.local_addr().context("mock server: reading the bound address")?;
        let (stop, stop_requested) = watch::channel(false);
        let serving = tokio::spawn(server::serve(listener, state.clone(), stop_requested));
        tracing::debug!("mock server listening on http://{addr}");
        Ok(MockServer { addr, state, stop, serving: Some(serving) })
    }

    /// Empty the prefix cache (what vLLM's `POST /reset_prefix_cache` does); false when the
    /// server runs without one.
    pub fn reset_prefix_cache(&self) -> bool {
        self.state.reset_prefix_cache()
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:PORT`
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Stop accepting, let in-flight responses end, and return.
    pub async fn shutdown(mut self) {
        self.stop.send_replace(true);
        if let Some(serving) = self.serving.take()
            && let Err(error) = serving.await
        {
            tracing::warn!("mock server stopped abnormally: {error}");
        }
    }
}

impl Drop for MockServer {
    /// Stop at once: the accept loop and, with it, every connection.
    fn drop(&mut self) {
        if let Some(serving) = self.serving.take() {
            serving.abort();
        }
    }
}

/// Connections the kernel may hold completed for the accept loop: as many as it allows
/// (`net.core.somaxconn` caps it; tokio's `bind` asks for 1,024). Tens of thousands of clients
/// connecting at once overflowed 1,024, and the dropped handshakes ended in resets.
const LISTEN_BACKLOG: u32 = 65_535;

/// A listening socket on `addr` (address reuse as `TcpListener::bind` sets it) with the
/// longest accept queue the system allows.
fn listen(addr: SocketAddr) -> std::io::Result<TcpListener> {
    let socket = if addr.is_ipv4() { TcpSocket::new_v4()? } else { TcpSocket::new_v6()? };
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(LISTEN_BACKLOG)
}

/// Starts a `MockServer` on a free local port for each run that asks for the built-in server.
#[derive(Debug)]
pub struct MockStarter;

impl BuiltInServer for MockStarter {
    fn start(&self, config: MockConfig) -> BoxedFuture<'_, Result<Box<dyn RunningServer>>> {
        Box::pin(async move {
            let server = MockServer::start(config, SocketAddr::from((Ipv4Addr::LOCALHOST, 0))).await?;
            Ok(Box::new(server) as Box<dyn RunningServer>)
        })
    }
}

impl RunningServer for MockServer {
    fn base_url(&self) -> String {
        MockServer::base_url(self)
    }

    fn shutdown(self: Box<Self>) -> BoxedFuture<'static, ()> {
        Box::pin(MockServer::shutdown(*self))
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use tokio::net::TcpStream;

    use super::*;

    /// Connections the listener queues unaccepted here: past tokio's 1,024 where the system
    /// (`somaxconn`) and this process's open-file limit leave room, as many as they do otherwise.
    fn queued_connections_possible() -> usize {
        let somaxconn = std::fs::read_to_string("/proc/sys/net/core/somaxconn")
            .ok()
            .and_then(|text| text.trim().parse::<usize>().ok())
            .unwrap_or(128);
        let mut files = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
        // SAFETY: getrlimit writes one rlimit into the struct given.
        let open_files = if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &raw mut files) } == 0 {
            usize::try_from(files.rlim_cur).unwrap_or(usize::MAX)
        } else {
            256
        };
        somaxconn.min(1_500).min(open_files.saturating_sub(200))
    }

    #[tokio::test]
    async fn connections_not_yet_accepted_queue_up_to_the_systems_limit() {
        let listener = listen(SocketAddr::from((Ipv4Addr::LOCALHOST, 0))).expect("listening");
        let addr = listener.local_addr().expect("its address");
        let queued = queued_connections_possible();
        let mut connected = Vec::with_capacity(queued);
        for at in 0..queued {
            // A full accept queue drops the handshake, and the connect waits a second to retry.
            let connecting = tokio::time::timeout(Duration::from_millis(800), TcpStream::connect(addr)).await;
            let stream = connecting.unwrap_or_else(|_| panic!("connection {at} of {queued} waited: the queue is full"));
            connected.push(stream.expect("connected"));
        }
        assert_eq!(connected.len(), queued);
    }
}
