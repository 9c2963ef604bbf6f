//! The built-in servers a phase starts for the endpoints its sessions call at the url "mock"
//! when the run's own endpoint is a real server (a RAG pipeline's retrieval mocked beside a
//! real model), or when such an endpoint's `mock:` settings are not those of the run's own
//! built-in server: one server per `mock:` setting, started at its first step, stopped with the
//! phase.

use std::sync::{Arc, Mutex};

use crate::builtin_server::{BuiltInServer, RunningServer};
use crate::plan::MockConfig;

/// A server started, by the settings it was started with.
type Started = (Option<MockConfig>, Box<dyn RunningServer>);

pub struct SideMocks {
    starter: Option<Arc<dyn BuiltInServer>>,
    started: Mutex<Vec<Started>>,
}

impl SideMocks {
    /// Servers started by `starter` (None: the caller offers no built-in server).
    pub fn new(starter: Option<Arc<dyn BuiltInServer>>) -> Self {
        Self { starter, started: Mutex::new(Vec::new()) }
    }

    /// The base url of the server with `settings`, started now when it is the first step to
    /// need it; the calling thread waits for the start (a script worker, once per setting).
    pub fn url_for(&self, settings: &Option<MockConfig>, runtime: &tokio::runtime::Handle) -> Result<String, String> {
        let mut started = self.started.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some((_, server)) = started.iter().find(|(known, _)| known == settings) {
            return Ok(server.base_url());
        }
        let starter = self
            .starter
            .as_ref()
            .ok_or("the url \"mock\" needs the built-in server, which this caller does not provide")?;
        let config = settings.clone().unwrap_or_default();
        let server = runtime
            .block_on(starter.start(config))
            .map_err(|e| format!("cannot start the built-in mock server: {e:#}"))?;
        let url = server.base_url();
        started.push((settings.clone(), server));
        Ok(url)
    }

    /// Stop every server started, letting their answers in flight end.
    pub async fn stop(&self) {
        let started = std::mem::take(&mut *self.started.lock().unwrap_or_else(|poisoned| poisoned.into_inner()));
        for (_, server) in started {
            server.shutdown().await;
        }
    }
}
