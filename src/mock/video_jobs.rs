//! The mock's table of video generation jobs not yet fetched: what each job will report and
//! when it is done. Bounded: `MAX_JOBS` at once; once it is full, the completed jobs whose
//! video was not fetched within `FETCH_WINDOW` (a client that does not download videos never
//! fetches them) make room.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use tokio::time::Instant;

/// Jobs held at once; submissions past it are refused (429) until videos are fetched.
pub const MAX_JOBS: usize = 10_000;
/// How long a completed job's video waits to be fetched before a full table forgets it.
pub const FETCH_WINDOW: Duration = Duration::from_secs(10);

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

/// Whether `jobs` has room for one more at `now`, forgetting (when it is full) the completed
/// jobs left unfetched past their window.
pub fn make_room(jobs: &mut HashMap<String, VideoJob>, now: Instant) -> bool {
    if jobs.len() >= MAX_JOBS {
        jobs.retain(|_, job| now < job.ready_at + FETCH_WINDOW);
    }
    jobs.len() < MAX_JOBS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_table_forgets_the_videos_left_unfetched_past_their_window() {
        let now = Instant::now();
        let job = |ready_at| VideoJob { model: "m".into(), ready_at, inference_s: 1.0, peak_memory_mb: 1.0 };
        let mut jobs: HashMap<String, VideoJob> = (0..MAX_JOBS).map(|i| (i.to_string(), job(now))).collect();
        assert!(!make_room(&mut jobs, now + FETCH_WINDOW / 2), "every job is within its window");
        assert_eq!(jobs.len(), MAX_JOBS);
        jobs.insert("late".into(), job(now + FETCH_WINDOW));
        assert!(make_room(&mut jobs, now + FETCH_WINDOW + Duration::from_millis(1)));
        assert_eq!(jobs.keys().collect::<Vec<_>>(), ["late"], "the one still in its window stays");
    }
}
