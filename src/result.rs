//! `RunResult`: pure data that one benchmark produced. Exporters, the console UI and the
//! script's results object read it; nothing reads the engine's internals.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

pub use crate::metric_result::{MetricKind, MetricResult, Stats};
use crate::plan::Plan;
use crate::record::RecordError;

/// The client metrics of one timeslice of the profiling time (`slice_duration`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Timeslice {
    /// 0-based, from when profiling began.
    pub index: u64,
    /// The slice's bounds, wall-clock ns since the Unix epoch.
    pub start_ns: u64,
    pub end_ns: u64,
    /// False for the last slice when the run ended inside it: its end is the run's (the last
    /// answer's), and its rates are per second of that shorter window.
    pub is_complete: bool,
    /// The metrics of the requests that started in the slice, and the time-weighted metrics
    /// over the slice's time, in registry order.
    pub metrics: Vec<MetricResult>,
}

/// The main metrics of the requests sent to one of the endpoint's urls (when it has several).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UrlMetrics {
    /// Its place among the endpoint's urls.
    pub url_index: u32,
    pub url: String,
    pub metrics: Vec<MetricResult>,
}

/// The metrics of one phase's records alone, for a run of several measured phases (AIPerf's
/// `phases/<name>/` summaries).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PhaseMetrics {
    /// The phase's place in the plan (`RunResult::phases` has the same order).
    pub phase_index: usize,
    /// The first request's start and the last one's end, in epoch ns.
    pub start_ns: u64,
    pub end_ns: u64,
    pub metrics: Vec<MetricResult>,
    pub error_summary: Vec<ErrorCount>,
    /// What the phase's failed token checks point to.
    #[serde(skip)]
    pub token_check_causes: crate::metrics::token_check_causes::TokenCheckCauses,
}

/// How many requests failed with one kind of error.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorCount {
    pub error_details: RecordError,
    pub count: u64,
}

/// Counts for one phase of the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PhaseSummary {
    pub name: String,
    #[serde(deserialize_with = "phase_kind_name")]
    pub kind: PhaseKindName,
    pub sent: u64,
    pub completed: u64,
    pub errors: u64,
    pub cancelled: u64,
    pub duration_s: f64,
    /// The phase's records fed the metrics.
    pub results: bool,
    /// When the phase started and ended (monotonic ns since the run started), for collectors.
    pub window_start_ns: u64,
    pub window_end_ns: u64,
    /// What the phase's multi-turn sessions did; None when it played none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sessions: Option<SessionSummary>,
    /// What the phase's scripted sessions did; None for other modes (a segment keeps its values
    /// in `segment.json`, for a merge).
    #[serde(default, skip_deserializing, skip_serializing_if = "Option::is_none")]
    pub scripted_sessions: Option<Box<crate::session_metrics::ScriptedSessionsSummary>>,
    /// What the sub-agents and joins of a phase that played an agentic trace's trees did
    /// (AIPerf's `branch_stats`); None for other phases.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch_stats: Option<crate::agents::replay::BranchStats>,
    /// An adaptive_scale phase's controller decisions; None for other modes (and in a merge).
    #[serde(default, skip_deserializing, skip_serializing_if = "Option::is_none")]
    pub adaptive_scale: Option<Box<AdaptiveScaleLog>>,
    /// Exported on its own as `client_self_check`.
    #[serde(skip)]
    pub self_check: ClientSelfCheck,
}

/// What an adaptive_scale phase's controller decided: AIPerf's `adaptive_scale_events.jsonl`
/// lines and `adaptive_scale_summary.json`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AdaptiveScaleLog {
    pub events: Vec<serde_json::Value>,
    pub summary: serde_json::Value,
}

/// A phase kind's name (`PhaseKind::as_str`); a named type, so that serde reads it back as a
/// `PhaseKind` instead of borrowing it from its input.
pub type PhaseKindName = &'static str;

/// A phase kind read back as its name.
fn phase_kind_name<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<PhaseKindName, D::Error> {
    crate::plan::PhaseKind::deserialize(deserializer).map(crate::plan::PhaseKind::as_str)
}

/// The multi-turn sessions of one phase: how many started, and how many sent every turn or were
/// cut (by the phase's request limit, a duration end, a cancel or a failed turn).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SessionSummary {
    pub started: u64,
    /// Sessions that sent every turn.
    pub completed: u64,
    /// Sessions that ended with turns unsent.
    pub cut: u64,
    pub unsent_turns: u64,
}

/// How well the client kept to its own schedule in one phase, and whether it was the bottleneck.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ClientSelfCheck {
    pub phase: String,
    /// The rate the phase was asked for (open-loop modes), requests/s.
    pub target_rate_rps: Option<f64>,
    /// The rate of the drawn arrival times (random patterns stray from the target), requests/s.
    pub scheduled_rate_rps: Option<f64>,
    /// The rate at which requests actually went out, requests/s.
    pub achieved_rate_rps: Option<f64>,
    /// How late the scheduler woke for each request, ms.
    pub pacing_error_p50_ms: Option<f64>,
    pub pacing_error_p99_ms: Option<f64>,
    /// Send start − scheduled time, ms (pacing, task start, and any wait for a concurrency slot),
    /// of every request but the timer-woken turns below.
    pub dispatch_delay_p50_ms: Option<f64>,
    pub dispatch_delay_p99_ms: Option<f64>,
    /// Send start − due time, ms, of the closed-loop turns that slept out a think time or
    /// `delay` on a timer; None when the phase had none.
    pub timer_wake_lateness_p50_ms: Option<f64>,
    pub timer_wake_lateness_p99_ms: Option<f64>,
    pub peak_in_flight: u64,
    /// Process CPU time over wall time, in % of one core (includes an in-process mock server),
    /// less the open-loop pacer thread's below.
    pub client_cpu_percent: f64,
    /// The open-loop pacer thread's CPU time over wall time (and the precise timer's, which
    /// paces user-centric turns, session starts and the turns after a think time, `delay` or
    /// recorded wait), in % of one core: it spins through the last moments before each arrival
    /// by design (a whole core from 5,000 req/s), so it is kept out of the client's CPU use.
    /// None in a phase with neither.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pacer_cpu_percent: Option<f64>,
    /// The open-loop pacer thread's (or the precise timer's) scheduling priority: real-time
    /// where the system permitted it, or normal and why. None in a phase with neither.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pacer_priority: Option<String>,
    /// With `--keep-cores-awake`: the CPU time of the idle-priority threads that kept idle
    /// cores from sleeping while the pacer ran, in % of one core; kept out of the client's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_spin_cpu_percent: Option<f64>,
    pub cpu_cores: usize,
    /// A scripted phase's script workers (threads of their own that run the session functions):
    /// how many, and the share of their time they had sessions to run rather than waiting for
    /// answers, in % (100: never idle). None in other modes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub script_workers: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub script_workers_busy_percent: Option<f64>,
    /// The script workers' CPU time over wall time, in % of one core: what running the session
    /// functions cost the client (part of its CPU above). None in other modes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub script_workers_cpu_percent: Option<f64>,
    /// How long a scripted session's answer (or client-side wait) waited for its script worker
    /// before the session went on, ms. None in other modes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub script_resume_delay_p50_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub script_resume_delay_p99_ms: Option<f64>,
    /// The share of a scripted phase's sessions (of those that ended) whose answers waited for
    /// their script worker over 5 % of the session's time and 10 ms in all, in %. None in other
    /// modes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub script_sessions_slowed_percent: Option<f64>,
    /// Requests that waited for a slot under the phase's `max_concurrency` (a rate phase's or
    /// a rate ramp's), or sessions that waited for one of a `users` phase's users (None: none
    /// waited).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub concurrency_cap_wait: Option<HeldBack>,
    /// Requests that waited for a connection of the client's pool (None: none waited).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub connection_pool_wait: Option<HeldBack>,
    /// At least half of the phase's requests failed: no verdict on the client's pacing.
    pub requests_failed: bool,
    /// The client, not the server, limited what was measured.
    pub client_bound: bool,
    /// Why the client is blamed (with `client_bound`), or why the phase got no verdict.
    pub warnings: Vec<String>,
    /// Limits of the plan that made requests wait before they went out (the concurrency cap,
    /// the connection pool): named, never blamed on the client.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub held_back_by: Vec<String>,
}

/// Requests held back by a limit before they went out.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HeldBack {
    /// The limit: concurrent requests, or connections.
    pub limit: u64,
    /// How many requests waited.
    pub requests: u64,
    pub total_wait_s: f64,
    pub max_wait_ms: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct RunResult {
    pub name: String,
    pub benchmark_id: String,
    /// UTC, ISO 8601.
    pub start_time: String,
    pub end_time: String,
    pub was_cancelled: bool,
    pub plan: Plan,
    /// The tokenizer that counted the tokens.
    pub tokenizer: String,
    /// Profiling metrics in registry order.
    pub metrics: Vec<MetricResult>,
    /// The warm-up's metrics, measured as the profiling ones (`warmup_metrics` in the summary
    /// JSON); empty without a warm-up.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warmup_metrics: Vec<MetricResult>,
    /// Each measured phase's metrics alone, when the run measured several phases
    /// (`phase_manifest.json` and `phases/<name>/`); empty otherwise.
    #[serde(skip)]
    pub by_phase: Vec<PhaseMetrics>,
    pub error_summary: Vec<ErrorCount>,
    /// The main metrics of each url, when the endpoint has several (`by_url` in the summary JSON).
    #[serde(skip)]
    pub by_url: Vec<UrlMetrics>,
    pub phases: Vec<PhaseSummary>,
    pub artifact_dir: PathBuf,
    /// The command line that launched the run (secrets removed), for `run_info`.
    pub cli_command: Option<String>,
    /// The run's random seed, for `run_info`.
    pub random_seed: Option<u64>,
    /// Prometheus server metrics of the run, when any endpoint was scraped (exported to
    /// their own files, so not part of this struct's JSON form).
    #[serde(skip)]
    pub server_metrics: Option<std::sync::Arc<crate::server_metrics::ServerMetricsResult>>,
    /// `telemetry_data` of the summary JSON, when GPU telemetry was collected.
    pub telemetry_data: Option<serde_json::Value>,
    /// The plan's thresholds judged on this run's metrics (empty when it has none).
    pub thresholds: Vec<crate::thresholds::ThresholdOutcome>,
    /// The client metrics per timeslice, when the plan sets `slice_duration` (exported to
    /// their own files).
    #[serde(skip)]
    pub timeslices: Vec<Timeslice>,
    /// Index j: the verify steps of all requests that accepted exactly j draft tokens (empty
    /// when no response reported speculative decoding).
    pub spec_decode_histogram: Vec<u64>,
    /// What the failed token checks point to, for the end-of-run warnings.
    #[serde(skip)]
    pub token_check_causes: crate::metrics::token_check_causes::TokenCheckCauses,
    /// The graded answers of an accuracy benchmark run, per task and overall.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub accuracy: Option<crate::accuracy::AccuracySummary>,
}

impl RunResult {
    /// The result as if the run had measured `phase` alone: its metrics, errors, times and
    /// summary; nothing of the run's other parts (urls, timeslices, thresholds, telemetry).
    pub fn phase_alone(&self, phase: &PhaseMetrics) -> RunResult {
        let time =
            |ns: u64| chrono::DateTime::from_timestamp_nanos(ns as i64).format("%Y-%m-%dT%H:%M:%S%.6f").to_string();
        RunResult {
            start_time: time(phase.start_ns),
            end_time: time(phase.end_ns),
            metrics: phase.metrics.clone(),
            warmup_metrics: Vec::new(),
            by_phase: Vec::new(),
            error_summary: phase.error_summary.clone(),
            by_url: Vec::new(),
            phases: self.phases.get(phase.phase_index).cloned().into_iter().collect(),
            server_metrics: None,
            telemetry_data: None,
            thresholds: Vec::new(),
            timeslices: Vec::new(),
            spec_decode_histogram: Vec::new(),
            token_check_causes: phase.token_check_causes.clone(),
            accuracy: None,
            ..self.clone()
        }
    }

    pub fn metric(&self, tag: &str) -> Option<&MetricResult> {
        self.metrics.iter().find(|m| m.tag == tag)
    }

    /// Every threshold passed (true when there are none).
    pub fn thresholds_passed(&self) -> bool {
        self.thresholds.iter().all(|t| t.passed)
    }

    /// A results phase whose every scripted session a script error ended (none completed, none
    /// was cut short): the session function is wrong, whatever the server answered.
    pub fn results_phase_whose_sessions_all_failed(
        &self,
    ) -> Option<(&PhaseSummary, &crate::session_metrics::ScriptedSessionsSummary)> {
        self.phases.iter().filter(|phase| phase.results).find_map(|phase| {
            let sessions = phase.scripted_sessions.as_deref()?;
            (sessions.started > 0 && sessions.failed == sessions.started).then_some((phase, sessions))
        })
    }

    /// The first phase feeding the results that measured nothing (none of its requests
    /// succeeded; some failed or were cancelled, or its scripted sessions failed before sending
    /// any), unless the run was cancelled.
    pub fn results_phase_without_success(&self) -> Option<&PhaseSummary> {
        if self.was_cancelled {
            return None;
        }
        let sessions_failed = |phase: &PhaseSummary| phase.scripted_sessions.as_ref().is_some_and(|s| s.failed > 0);
        self.phases.iter().find(|phase| {
            phase.results && phase.completed == 0 && (phase.errors + phase.cancelled > 0 || sessions_failed(phase))
        })
    }
}
