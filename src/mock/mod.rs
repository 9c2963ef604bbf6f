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
mod tgi;
mod tool_calls;
mod video_jobs;
mod video_parts;
mod videos_api;
mod word_ids;
mod words;

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;

use anyhow::{Context, Result};
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::builtin_server::{BoxedFuture, BuiltInServer, RunningServer};
use crate::dataset::tokenizer::Tokenizer;

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
        let tokenizer = tokio::task::spawn_blocking(Tokenizer::shared_builtin)
            .await
            .context("making the builtin tokenizer for the mock server")?;
        let state = Arc::new(state::MockState::new(config, tokenizer)?);
        let listener = TcpListener::bind(addr).await.with_context(|| format!("mock server cannot bind {addr}"))?;
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
