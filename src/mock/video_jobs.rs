//! The mock's table of video generation jobs not yet fetched: what each job will report and
//! when it is done. Bounded: `MAX_JOBS` at once.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

use tokio::time::Instant;

/// Jobs held at once; submissions past it are refused (429) until videos are fetched.
pub const MAX_JOBS: usize = 10_000;

/// The jobs not yet fetched, by id.
#[derive(Default)]
pub struct VideoJobs {
    jobs: Mutex<HashMap<String, VideoJob>>,
}

#[derive(Clone)]
pub struct VideoJob {
    pub model: String,
    pub ready_at: Instant,
    pub inference_s: f64,
    pub peak_memory_mb: f64,
}

impl VideoJobs {
    /// The table, locked (a panic elsewhere never leaves it unusable).
    pub fn lock(&self) -> MutexGuard<'_, HashMap<String, VideoJob>> {
        self.jobs.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}
