//! The phases of a plan: their kind, timing mode, stop conditions and cancellation.

use serde::{Deserialize, Serialize};

use super::{AdaptiveScale, AgenticReplay, Dist, PrefillCap};

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum PhaseKind {
    /// Requests that warm the server; never in the results.
    Warmup,
    /// Requests whose records feed the metrics.
    Profiling,
    /// Requests that keep the server busy after profiling; never in the results.
    Cooldown,
}

impl PhaseKind {
    pub fn as_str(self) -> &'static str {
        match self {
            PhaseKind::Warmup => "warmup",
            PhaseKind::Profiling => "profiling",
            PhaseKind::Cooldown => "cooldown",
        }
    }
}

/// How a phase paces its requests.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum LoadMode {
    /// Closed loop: `concurrency` users, each sends its next request when the last one ends;
    /// at most `prefill_concurrency` of them wait for their first token at once.
    Concurrency {
        concurrency: usize,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        prefill_concurrency: Option<usize>,
    },
    /// Open loop: requests arrive at `rate` per second, whatever the server does.
    Rate {
        rate: f64,
        arrival: Arrival,
        /// At most this many requests in flight; a due request waits for a free slot.
        #[serde(skip_serializing_if = "Option::is_none", default)]
        max_concurrency: Option<usize>,
        seed: u64,
        /// At most this many requests waiting for their first token; an arrival that finds
        /// every place taken sends nothing, and the request goes at the next arrival that
        /// finds one (AIPerf's rule).
        #[serde(skip_serializing_if = "Option::is_none", default)]
        prefill: Option<PrefillCap>,
    },
    /// Concurrency or rate moved linearly from `start` through each stage's target (k6 stages);
    /// with `hold`, the last target (or `start`, without stages) then holds until the phase's
    /// requests or duration stop it (AIPerf's in-phase ramps). Users come and go in whole steps,
    /// each due at its share of the stage. A rate ramp keeps at most `max_concurrency` in
    /// flight (a cap that may ramp too); either at most `prefill` waiting for their first
    /// token (a rate ramp's arrivals as a rate phase's).
    Ramp {
        ramped: RampedQuantity,
        start: f64,
        stages: Vec<RampStage>,
        arrival: Arrival,
        seed: u64,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        hold: bool,
        #[serde(skip_serializing_if = "Option::is_none", default)]
        max_concurrency: Option<usize>,
        /// `max_concurrency` grows from 1 over these seconds, in whole steps.
        #[serde(skip_serializing_if = "Option::is_none", default)]
        max_concurrency_ramp_s: Option<f64>,
        #[serde(skip_serializing_if = "Option::is_none", default)]
        prefill: Option<PrefillCap>,
    },
    /// Replay the send times of a trace.
    Schedule(FixedSchedule),
    /// Multi-turn sessions: new sessions arrive at `session_rate` per second, at most `users` live;
    /// each turn waits for the previous answer plus a think time and carries the history.
    Users { users: usize, session_rate: f64, turns: Dist, think_time_s: Dist, seed: u64 },
    /// AIPerf's user-centric rate: `users` users share `rate` requests per second in all, each
    /// sending its turns `users / rate` seconds apart, at staggered points of their sessions
    /// at t = 0 and replaced as they finish (`load/user_centric.rs`). `turns` shapes the
    /// sessions of a dataset that has none of its own.
    UserCentric { users: usize, rate: f64, turns: Dist, seed: u64 },
    /// AIPerf's agentic replay of a recorded agentic trace (`agents/replay/`).
    AgenticReplay(AgenticReplay),
    /// Scripted sessions (`agents/scripted/`): `users` sessions live at once, each played by the
    /// scenario's function `session` (its name; the function itself stays with the script), a
    /// new one started as each ends, or with `session_rate` new ones started at that many a
    /// second, at most `users` live; `seed` seeds the sessions' own random draws; `workers`
    /// script workers run them (None: a quarter of the cores).
    Scripted {
        users: usize,
        session: String,
        #[serde(default)]
        seed: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        workers: Option<usize>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        session_rate: Option<f64>,
    },
    /// AIPerf's adaptive scale: a closed loop whose concurrency an SLA controller moves during
    /// the phase (`load/adaptive_scale.rs`).
    AdaptiveScale(AdaptiveScale),
}

/// The pattern of open-loop arrival times.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
#[serde(tag = "pattern", rename_all = "snake_case")]
pub enum Arrival {
    /// Evenly spaced.
    Constant,
    /// Exponential gaps (coefficient of variation 1).
    Poisson,
    /// Gamma gaps with shape `smoothness`: below 1 burstier than Poisson, above 1 smoother
    /// (vLLM's `--burstiness`, AIPerf's `--arrival-smoothness`).
    Gamma { smoothness: f64 },
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum RampedQuantity {
    Concurrency,
    Rate,
}

/// One k6-style stage: move linearly to `target` over `duration_s`.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct RampStage {
    pub duration_s: f64,
    pub target: f64,
}

/// A trace replayed at its own timestamps.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct FixedSchedule {
    pub trace: ScheduleTrace,
    /// Replay only timestamps at or after this one (ms).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub start_offset_ms: Option<f64>,
    /// Replay only timestamps at or before this one (ms).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub end_offset_ms: Option<f64>,
    /// Shift the first replayed timestamp to the start of the phase.
    pub auto_offset: bool,
    /// Replay this many times faster than recorded.
    pub speedup: f64,
}

impl FixedSchedule {
    /// The trace's finite timestamps between the offsets, ascending (ms).
    pub fn kept_timestamps_ms(&self) -> Vec<f64> {
        let start_ms = self.start_offset_ms.unwrap_or(f64::NEG_INFINITY);
        let end_ms = self.end_offset_ms.unwrap_or(f64::INFINITY);
        let mut kept: Vec<f64> = self
            .trace
            .timestamps_ms()
            .iter()
            .copied()
            .filter(|t| t.is_finite() && *t >= start_ms && *t <= end_ms)
            .collect();
        kept.sort_by(f64::total_cmp);
        kept
    }
}

/// Where a schedule's timestamps (ms) come from.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "snake_case")]
pub enum ScheduleTrace {
    Inline {
        timestamps_ms: Vec<f64>,
    },
    /// Read from a JSONL file when the scenario was built; the file's name stands for them in exports.
    File {
        path: String,
        #[serde(skip_serializing, default)]
        timestamps_ms: Vec<f64>,
    },
}

impl ScheduleTrace {
    pub fn timestamps_ms(&self) -> &[f64] {
        match self {
            ScheduleTrace::Inline { timestamps_ms } | ScheduleTrace::File { timestamps_ms, .. } => timestamps_ms,
        }
    }
}

/// Cancel a seeded fraction of a phase's requests this long after they were sent.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct Cancellation {
    pub fraction: f64,
    pub after_s: f64,
    /// Seeds which requests are picked: AIPerf's `--random-seed` picks the ones AIPerf cancels.
    #[serde(default)]
    pub seed: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Phase {
    pub name: String,
    pub kind: PhaseKind,
    #[serde(flatten)]
    pub mode: LoadMode,
    /// Stop after this many requests have been sent.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub requests: Option<u64>,
    /// Stop after this many sessions have started (AIPerf's `--conversation-num`): whole
    /// conversations where the phase plays them, else this many requests.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub sessions: Option<u64>,
    /// Stop sending after this many seconds.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub duration_s: Option<f64>,
    /// After `duration_s`, how long in-flight requests may still finish before they are cancelled.
    pub grace_period_s: f64,
    /// The phase's records feed the metrics.
    #[serde(default = "feeds_results_by_default")]
    pub results: bool,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub cancel: Option<Cancellation>,
}

impl Phase {
    /// AIPerf's agentic warm-up (an agentic replay's priming stage), which AIPerf synthesizes
    /// rather than lists as a phase: its records carry no `phase_index`, and the phases after
    /// it count from 0.
    pub fn is_synthesized_warmup(&self) -> bool {
        self.kind == PhaseKind::Warmup
            && matches!(&self.mode, LoadMode::AgenticReplay(replay) if replay.stage == super::ReplayStage::Priming)
    }

    /// Whether it sends the dataset's requests: scripted sessions write their own.
    pub fn reads_dataset(&self) -> bool {
        !matches!(self.mode, LoadMode::Scripted { .. })
    }

    /// The most requests a phase of single requests sends: its `requests` or its `sessions`
    /// (each request a session of its own), whichever is lower.
    pub fn single_request_limit(&self) -> Option<u64> {
        match (self.requests, self.sessions) {
            (Some(requests), Some(sessions)) => Some(requests.min(sessions)),
            (requests, sessions) => requests.or(sessions),
        }
    }
}

#[cfg(test)]
impl Phase {
    /// A measured phase named `profiling`: `requests` at `concurrency` users (tests' plans).
    pub fn profiling(concurrency: usize, requests: Option<u64>) -> Self {
        Phase {
            name: "profiling".to_string(),
            kind: PhaseKind::Profiling,
            mode: LoadMode::Concurrency { concurrency, prefill_concurrency: None },
            requests,
            sessions: None,
            duration_s: None,
            grace_period_s: 30.0,
            results: true,
            cancel: None,
        }
    }
}

fn feeds_results_by_default() -> bool {
    true
}
