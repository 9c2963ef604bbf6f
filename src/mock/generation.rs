//! One request from admission to its last token: it waits for a running slot, knows when
//! each token is due (after the prefill of its uncached prompt tokens, then one decode step
//! after another), and feeds the live stats; dropping it (done or abandoned) frees all.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;

use super::fine_timer;
use super::request::PromptCacheUse;
use super::spec_decode::SpecDecodeRun;
use super::stats::ModelStats;

/// The configured delays.
#[derive(Debug, Clone, Copy)]
pub struct Timing {
    /// Before the first token, whatever the prompt.
    pub time_to_first_token: Duration,
    /// Added to that for each prompt token not read from the prefix cache.
    pub prefill_per_token: Duration,
    /// One decode step.
    pub inter_token: Duration,
}

impl Timing {
    /// The time to first token of a prompt with `uncached_tokens` to compute.
    pub fn first_token_delay(&self, uncached_tokens: u64) -> Duration {
        let per_token_ns = u64::try_from(self.prefill_per_token.as_nanos()).unwrap_or(u64::MAX);
        self.time_to_first_token + Duration::from_nanos(per_token_ns.saturating_mul(uncached_tokens))
    }
}

/// What a request asks of the generator.
#[derive(Debug, Clone, Copy)]
pub struct Job {
    pub arrival: Instant,
    pub prompt_tokens: u64,
    /// The prefix cache's part in the prompt (`None` without a cache).
    pub prompt_cache: Option<PromptCacheUse>,
    pub output_tokens: u64,
}

impl Job {
    fn uncached_prompt_tokens(&self) -> u64 {
        self.prompt_tokens - self.prompt_cache.map_or(0, |cache| cache.read_tokens.min(self.prompt_tokens))
    }
}

/// How many tokens each decode step emits.
#[derive(Debug)]
pub enum DecodeSteps {
    OneTokenEach,
    /// As a speculative decoding run accepted them.
    Speculative(SpecDecodeRun),
}

impl DecodeSteps {
    /// Tokens out once `steps` decode steps ran after the first token, at most `output_tokens`.
    fn emitted_after(&self, steps: u64, output_tokens: u64) -> u64 {
        let emitted = match self {
            DecodeSteps::OneTokenEach => steps.saturating_add(1),
            DecodeSteps::Speculative(run) => run.emitted_after(steps),
        };
        emitted.min(output_tokens)
    }

    /// The decode step that emits token `index` (0: none, the first token).
    fn step_of_token(&self, index: u64) -> u64 {
        match self {
            DecodeSteps::OneTokenEach => index,
            DecodeSteps::Speculative(run) => run.step_of_token(index),
        }
    }
}

pub struct Generation {
    stats: Arc<ModelStats>,
    _running_slot: OwnedSemaphorePermit,
    job: Job,
    first_token_due: Instant,
    inter_token: Duration,
    steps: DecodeSteps,
    emitted: u64,
    last_emitted_at: Instant,
    kv_tokens_held: u64,
}

/// Counts a request as waiting for as long as it lives (also when the wait is abandoned).
struct WaitingMark<'a>(&'a AtomicU64);

impl<'a> WaitingMark<'a> {
    fn new(waiting: &'a AtomicU64) -> Self {
        waiting.fetch_add(1, Relaxed);
        Self(waiting)
    }
}

impl Drop for WaitingMark<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Relaxed);
    }
}

/// Take a running slot, waiting in line when all are busy. Time to first token counts from
/// arrival when a slot is free at once, and from the moment one frees up otherwise, so the
/// queueing delay adds to it. `None` only if the slots were closed (they never are).
pub async fn admit(
    slots: &Arc<Semaphore>,
    stats: Arc<ModelStats>,
    job: Job,
    timing: Timing,
    steps: DecodeSteps,
) -> Option<Generation> {
    let (running_slot, started) = match slots.clone().try_acquire_owned() {
        Ok(slot) => (slot, job.arrival),
        Err(_) => {
            let _waiting = WaitingMark::new(&stats.waiting);
            (slots.clone().acquire_owned().await.ok()?, Instant::now())
        }
    };
    stats.running.fetch_add(1, Relaxed);
    stats.prompt_tokens.fetch_add(job.prompt_tokens, Relaxed);
    stats.kv_tokens.fetch_add(job.prompt_tokens, Relaxed);
    Some(Generation {
        stats,
        _running_slot: running_slot,
        job,
        first_token_due: started + timing.first_token_delay(job.uncached_prompt_tokens()),
        inter_token: timing.inter_token,
        steps,
        emitted: 0,
        last_emitted_at: started,
        kv_tokens_held: job.prompt_tokens,
    })
}

impl Generation {
    pub fn job(&self) -> &Job {
        &self.job
    }

    pub fn emitted(&self) -> u64 {
        self.emitted
    }

    /// The speculative decoding run behind the schedule, if the mock simulates one.
    pub fn spec_decode(&self) -> Option<&SpecDecodeRun> {
        match &self.steps {
            DecodeSteps::Speculative(run) => Some(run),
            DecodeSteps::OneTokenEach => None,
        }
    }

    pub fn is_complete(&self) -> bool {
        self.emitted >= self.job.output_tokens
    }

    /// When token `index` (0-based) is due: at the end of the decode step that emits it.
    pub fn due(&self, index: u64) -> Instant {
        let inter_token_ns = u64::try_from(self.inter_token.as_nanos()).unwrap_or(u64::MAX);
        let step = self.steps.step_of_token(index);
        self.first_token_due + Duration::from_nanos(inter_token_ns.saturating_mul(step))
    }

    /// How many not yet emitted tokens are due at `now`.
    pub fn tokens_due_by(&self, now: Instant) -> u64 {
        if self.is_complete() || now < self.first_token_due {
            return 0;
        }
        let due_in_total = if self.inter_token.is_zero() {
            self.job.output_tokens
        } else {
            let steps = (now - self.first_token_due).as_nanos() / self.inter_token.as_nanos();
            self.steps.emitted_after(u64::try_from(steps).unwrap_or(u64::MAX), self.job.output_tokens)
        };
        due_in_total.saturating_sub(self.emitted)
    }

    /// Record that `count` more tokens went out at `now`: the first one's TTFT, the others'
    /// inter-token latency (spread evenly over a batch), and the end of the request.
    pub fn emit(&mut self, count: u64, now: Instant) {
        let count = count.min(self.job.output_tokens - self.emitted);
        if count == 0 {
            return;
        }
        let mut following_tokens = count;
        if self.emitted == 0 {
            self.stats.time_to_first_token.observe(now - self.job.arrival);
            self.last_emitted_at = now;
            following_tokens -= 1;
        }
        let gap_ns = u64::try_from((now - self.last_emitted_at).as_nanos()).unwrap_or(u64::MAX);
        if let Some(each_ns) = gap_ns.checked_div(following_tokens) {
            self.stats.inter_token_latency.observe_many(Duration::from_nanos(each_ns), following_tokens);
        }
        self.stats.generation_tokens.fetch_add(count, Relaxed);
        self.stats.kv_tokens.fetch_add(count, Relaxed);
        self.kv_tokens_held += count;
        self.emitted += count;
        self.last_emitted_at = now;
        if self.is_complete() {
            self.stats.e2e_latency.observe(now - self.job.arrival);
            self.stats.finished_by_length.fetch_add(1, Relaxed);
            if let Some(run) = self.spec_decode() {
                self.stats.spec_decode.record(run);
            }
        }
    }

    /// Non-streaming: wait for the first token, then for the last, recording both.
    pub async fn run_to_end(&mut self) {
        let last_index = self.job.output_tokens.saturating_sub(1);
        for index in [0, last_index] {
            let due = self.due(index);
            if due > Instant::now() {
                fine_timer::sleep_until(due).await;
            }
            let now = Instant::now();
            self.emit((index + 1).saturating_sub(self.emitted), now);
        }
    }
}

impl Drop for Generation {
    fn drop(&mut self) {
        self.stats.running.fetch_sub(1, Relaxed);
        self.stats.kv_tokens.fetch_sub(self.kv_tokens_held, Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::super::spec_decode::SpecDecoder;
    use super::super::stats::StatsRegistry;
    use super::*;

    fn timing(ttft_ms: u64, itl_ms: u64) -> Timing {
        Timing {
            time_to_first_token: Duration::from_millis(ttft_ms),
            prefill_per_token: Duration::ZERO,
            inter_token: Duration::from_millis(itl_ms),
        }
    }

    #[tokio::test]
    async fn deadlines_batches_and_gauges_follow_the_schedule() {
        let registry = StatsRegistry::new(&[]);
        let stats = registry.for_model("m");
        let slots = Arc::new(Semaphore::new(1));
        let arrival = Instant::now();
        let job = Job { arrival, prompt_tokens: 10, prompt_cache: None, output_tokens: 4 };
        let mut generation =
            admit(&slots, stats.clone(), job, timing(100, 10), DecodeSteps::OneTokenEach).await.unwrap();
        assert_eq!(stats.running.load(Relaxed), 1);
        assert_eq!(generation.due(2), arrival + Duration::from_millis(120));
        assert_eq!(generation.tokens_due_by(arrival + Duration::from_millis(99)), 0);
        assert_eq!(generation.tokens_due_by(arrival + Duration::from_millis(115)), 2);
        generation.emit(2, arrival + Duration::from_millis(115));
        assert_eq!(generation.tokens_due_by(arrival + Duration::from_secs(9)), 2);
        generation.emit(2, arrival + Duration::from_millis(135));
        assert!(generation.is_complete());
        assert_eq!(stats.kv_tokens.load(Relaxed), 14);
        assert_eq!(stats.finished_by_length.load(Relaxed), 1);
        assert_eq!(stats.time_to_first_token.snapshot().count, 1);
        assert_eq!(stats.inter_token_latency.snapshot().count, 3);
        drop(generation);
        assert_eq!(stats.running.load(Relaxed), 0);
        assert_eq!(stats.kv_tokens.load(Relaxed), 0);
    }

    #[tokio::test]
    async fn a_full_server_makes_requests_wait() {
        let registry = StatsRegistry::new(&[]);
        let stats = registry.for_model("m");
        let slots = Arc::new(Semaphore::new(1));
        let job = Job { arrival: Instant::now(), prompt_tokens: 1, prompt_cache: None, output_tokens: 1 };
        let first = admit(&slots, stats.clone(), job, timing(0, 0), DecodeSteps::OneTokenEach).await.unwrap();
        let queued = tokio::spawn(admit_and_report(slots.clone(), stats.clone(), job));
        while stats.waiting.load(Relaxed) == 0 {
            tokio::task::yield_now().await;
        }
        drop(first);
        assert!(queued.await.unwrap());
        assert_eq!(stats.waiting.load(Relaxed), 0);
        assert_eq!(stats.running.load(Relaxed), 0);
    }

    async fn admit_and_report(slots: Arc<Semaphore>, stats: Arc<ModelStats>, job: Job) -> bool {
        admit(&slots, stats, job, timing(0, 0), DecodeSteps::OneTokenEach).await.is_some()
    }

    #[tokio::test]
    async fn only_uncached_prompt_tokens_add_prefill_time() {
        let registry = StatsRegistry::new(&[]);
        let slots = Arc::new(Semaphore::new(2));
        let timing = Timing { prefill_per_token: Duration::from_micros(100), ..timing(10, 1) };
        let arrival = Instant::now();
        let cold = Job { arrival, prompt_tokens: 1000, prompt_cache: None, output_tokens: 2 };
        let cache = PromptCacheUse { read_tokens: 800, written_tokens: 0 };
        let warm = Job { prompt_cache: Some(cache), ..cold };
        let cold = admit(&slots, registry.for_model("m"), cold, timing, DecodeSteps::OneTokenEach).await.unwrap();
        let warm = admit(&slots, registry.for_model("m"), warm, timing, DecodeSteps::OneTokenEach).await.unwrap();
        assert_eq!(cold.due(0), arrival + Duration::from_millis(110));
        assert_eq!(warm.due(0), arrival + Duration::from_millis(30));
        assert_eq!(warm.due(1), arrival + Duration::from_millis(31));
    }

    #[tokio::test]
    async fn speculative_steps_emit_several_tokens_each_and_are_counted_at_the_end() {
        let registry = StatsRegistry::new(&[]);
        let stats = registry.for_model("m");
        let slots = Arc::new(Semaphore::new(1));
        let arrival = Instant::now();
        let job = Job { arrival, prompt_tokens: 1, prompt_cache: None, output_tokens: 11 };
        let run = SpecDecoder::new(4, 1.0).simulate(3, 11);
        let mut generation =
            admit(&slots, stats.clone(), job, timing(100, 10), DecodeSteps::Speculative(run)).await.unwrap();
        // Every draft accepted: the prefill's token, then 5 tokens a step.
        assert_eq!(generation.due(5), arrival + Duration::from_millis(110));
        assert_eq!(generation.due(6), arrival + Duration::from_millis(120));
        assert_eq!(generation.tokens_due_by(arrival + Duration::from_millis(100)), 1);
        assert_eq!(generation.tokens_due_by(arrival + Duration::from_millis(111)), 6);
        generation.emit(6, arrival + Duration::from_millis(111));
        assert_eq!(stats.spec_decode.drafts.load(Relaxed), 0, "counted when the request ends");
        generation.run_to_end().await;
        assert_eq!(stats.spec_decode.drafts.load(Relaxed), 2);
        assert_eq!(stats.spec_decode.accepted_tokens.load(Relaxed), 8);
    }
}
