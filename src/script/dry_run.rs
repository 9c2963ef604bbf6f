//! Scenarios run without load: `aiperf check` validates every plan a scenario builds, and
//! `aiperf run --dry-run` also prints them. `run(..)` then returns placeholder results (every
//! metric, all statistics 0, each phase apart as a run measures them, a scripted phase's
//! session metrics) so the rest of the script runs and is checked too.

use crate::metrics::registry::METRICS;
use crate::plan::{LoadMode, Phase, PhaseKind, Plan};
use crate::result::{PhaseMetrics, PhaseSummary, RunResult, Stats};
use crate::session_metrics::{ScriptedSessionsSummary, StepTagSummary};

/// How a scenario's `run(..)` calls behave.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScriptMode {
    /// Benchmark: every `run` executes its plan.
    Execute,
    /// Validate every plan; send nothing.
    Check,
    /// Validate and print every plan as JSON; send nothing.
    DryRun,
}

/// The `benchmark_id` of placeholder results.
const PLACEHOLDER_ID: &str = "dry-run";

/// Whether `result` is a placeholder, not a run's.
pub fn is_placeholder(result: &RunResult) -> bool {
    result.benchmark_id == PLACEHOLDER_ID
}

/// The results a `run` returns when nothing was sent: every exported metric, all zero (and an
/// accuracy run's accuracy, `r.accuracy()`); a scripted phase's session metrics all zero too,
/// with a step tag each for those `step_tags` gives its function (what `aiperf check`'s trial
/// session sent).
pub fn placeholder_result(
    plan: &Plan,
    artifact_root: &std::path::Path,
    step_tags: &dyn Fn(&str) -> Vec<String>,
) -> RunResult {
    let stats = zero_stats();
    let metrics: Vec<_> = METRICS.iter().filter(|def| def.exported()).map(|def| def.result(stats.clone())).collect();
    // Each phase measured apart as a run measures them, so `r.phase(name)` and `r.phases()` answer.
    let by_phase = match plan.measures_phases_apart() {
        true => (plan.phases.iter().enumerate())
            .filter(|(_, phase)| phase.results || phase.kind == PhaseKind::Warmup)
            .map(|(phase_index, _)| PhaseMetrics {
                phase_index,
                start_ns: 0,
                end_ns: 0,
                metrics: metrics.clone(),
                error_summary: Vec::new(),
                token_check_causes: Default::default(),
            })
            .collect(),
        false => Vec::new(),
    };
    RunResult {
        name: plan.name.clone(),
        benchmark_id: PLACEHOLDER_ID.to_string(),
        start_time: String::new(),
        end_time: String::new(),
        was_cancelled: false,
        plan: plan.clone(),
        tokenizer: plan.tokenizer.name(),
        metrics,
        warmup_metrics: Vec::new(),
        by_phase,
        error_summary: Vec::new(),
        by_url: Vec::new(),
        phases: plan.phases.iter().map(|phase| placeholder_phase(phase, step_tags)).collect(),
        artifact_dir: plan.run_info.artifact_dir(artifact_root, &plan.name),
        cli_command: None,
        random_seed: None,
        server_metrics: None,
        telemetry_data: None,
        thresholds: Vec::new(),
        timeslices: Vec::new(),
        spec_decode_histogram: Vec::new(),
        token_check_causes: Default::default(),
        accuracy: None,
    }
}

/// Every statistic 0.
fn zero_stats() -> Stats {
    let zero = Some(0.0);
    Stats {
        avg: 0.0,
        min: zero,
        max: zero,
        p1: zero,
        p5: zero,
        p10: zero,
        p25: zero,
        p50: zero,
        p75: zero,
        p90: zero,
        p95: zero,
        p99: zero,
        std: zero,
        count: Some(0),
        sum: zero,
    }
}

/// A phase that sent nothing.
fn placeholder_phase(phase: &Phase, step_tags: &dyn Fn(&str) -> Vec<String>) -> PhaseSummary {
    let scripted_sessions = match &phase.mode {
        LoadMode::Scripted { session, .. } => Some(Box::new(placeholder_sessions(step_tags(session)))),
        _ => None,
    };
    PhaseSummary {
        name: phase.name.clone(),
        kind: phase.kind.as_str(),
        sent: 0,
        completed: 0,
        errors: 0,
        cancelled: 0,
        duration_s: 0.0,
        results: phase.results,
        window_start_ns: 0,
        window_end_ns: 0,
        sessions: None,
        scripted_sessions,
        branch_stats: None,
        adaptive_scale: None,
        self_check: Default::default(),
    }
}

/// A scripted phase's session metrics with no session played: every count and statistic 0,
/// a step tag each of `tags`.
fn placeholder_sessions(tags: Vec<String>) -> ScriptedSessionsSummary {
    let step = StepTagSummary { latency_ms: Some(zero_stats()), ttft_ms: Some(zero_stats()), ..Default::default() };
    ScriptedSessionsSummary {
        session_latency_ms: Some(zero_stats()),
        steps_per_session: Some(zero_stats()),
        tool_calls_per_session: Some(zero_stats()),
        steps: tags.into_iter().map(|tag| (tag, step.clone())).collect(),
        ..Default::default()
    }
}
