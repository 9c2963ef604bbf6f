//! The adaptive_scale SLA controller (AIPerf's `ramp_until_fail`): each window passing every
//! SLA raises the control value (concurrency or request rate); the first failing window sets the boundary at the last passing
//! value, which it then holds for the sustain time (one step down allowed if it breaks).
//! Every decision becomes one of AIPerf's `adaptive_scale_events.jsonl` events.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::sla_window::{WindowStats, sla_key};
use crate::plan::{AdaptiveScale, SlaFilter, StepPolicy};
use crate::result::AdaptiveScaleLog;

/// The version of AIPerf's adaptive-scale artifacts these payloads follow.
const SCHEMA_VERSION: u64 = 2;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    Discover,
    Sustain,
    Complete,
}

impl Stage {
    fn name(self) -> &'static str {
        match self {
            Stage::Discover => "discover",
            Stage::Sustain => "sustain",
            Stage::Complete => "complete",
        }
    }
}

/// What the phase does after a window.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Action {
    /// Run at this control value (users, or requests per second) from now on.
    Control(f64),
    /// Send nothing more; let what is in flight finish.
    StopSending,
}

/// A window's numbers as the events carry them.
#[derive(Debug, Clone, Default)]
struct WindowFacts {
    sla_value: Option<f64>,
    sla_values: BTreeMap<String, f64>,
    throughput: f64,
    samples: u64,
    errors: u64,
    cancelled: u64,
}

impl WindowFacts {
    fn of(stats: &WindowStats) -> Self {
        WindowFacts {
            throughput: stats.throughput(),
            samples: stats.succeeded.len() as u64,
            errors: stats.errors,
            cancelled: stats.cancelled,
            ..WindowFacts::default()
        }
    }
}

pub(super) struct SlaController {
    settings: AdaptiveScale,
    phase_name: String,
    stage: Stage,
    current: f64,
    last_passing: Option<f64>,
    first_failing: Option<f64>,
    boundary: Option<f64>,
    sustain_started_ns: Option<u64>,
    recovery_used: bool,
    sustain_windows: u64,
    sustain_passed_windows: u64,
    completed_reason: Option<String>,
    iteration: u64,
    candidates: Vec<Value>,
    events: Vec<Value>,
}

impl SlaController {
    /// A controller at the lowest control value, its start already an event.
    pub fn start(settings: AdaptiveScale, phase_name: &str) -> Self {
        let mut controller = SlaController {
            current: settings.control_min,
            settings,
            phase_name: phase_name.to_string(),
            stage: Stage::Discover,
            last_passing: None,
            first_failing: None,
            boundary: None,
            sustain_started_ns: None,
            recovery_used: false,
            sustain_windows: 0,
            sustain_passed_windows: 0,
            completed_reason: None,
            iteration: 0,
            candidates: Vec::new(),
            events: Vec::new(),
        };
        let facts = WindowFacts::default();
        controller.emit("adaptive_phase_started", "adaptive scale discover phase started", &facts, None, None, None);
        controller
    }

    pub fn control_value(&self) -> f64 {
        self.current
    }

    /// Requests issued before this (run-clock ns) are not judged: they belong to the search.
    pub fn judged_from_ns(&self) -> Option<u64> {
        self.sustain_started_ns
    }

    pub fn is_complete(&self) -> bool {
        self.stage == Stage::Complete
    }

    /// Judge one window that ended at `now_ns` (run clock) and decide.
    pub fn assess(&mut self, stats: &WindowStats, now_ns: u64) -> Action {
        let action = self.judge(stats, now_ns);
        self.iteration += 1;
        action
    }

    fn judge(&mut self, stats: &WindowStats, now_ns: u64) -> Action {
        let filters = self.settings.sla.clone();
        let mut facts = WindowFacts::of(stats);
        let judgeable_anyway = stats.succeeded.is_empty() && stats.judgeable_without_successes(&filters);
        if stats.succeeded.is_empty() && stats.errors + stats.cancelled > 0 && !judgeable_anyway {
            let reason = "no successful requests in assessment window";
            self.emit("adaptive_window", reason, &facts, Some(false), None, None);
            self.record_candidate(stats, false, "error_threshold");
            return self.all_failed(&facts, now_ns);
        }
        if (stats.succeeded.len() as u64) < self.settings.min_completed_requests && !judgeable_anyway {
            let reason = "inconclusive: completed request count below minimum";
            self.emit("adaptive_window", reason, &facts, None, None, None);
            self.record_candidate(stats, false, "insufficient_samples");
            return Action::Control(self.current);
        }
        facts.sla_values = stats.sla_values(&filters);
        facts.sla_value = facts.sla_values.get(&sla_key(&filters[0])).copied();
        let passing =
            filters.iter().all(|filter| facts.sla_values.get(&sla_key(filter)).is_some_and(|v| filter.passes(*v)));
        self.emit("adaptive_window", "SLA window evaluated", &facts, Some(passing), None, None);
        self.record_candidate(stats, passing, "sla_miss");
        match self.stage {
            Stage::Discover => self.discover(passing, &facts, now_ns),
            Stage::Sustain => self.sustain(passing, &facts, now_ns, None),
            Stage::Complete => Action::StopSending,
        }
    }

    fn all_failed(&mut self, facts: &WindowFacts, now_ns: u64) -> Action {
        let reason = "all requests failed in assessment window";
        match self.stage {
            Stage::Discover if self.last_passing.is_none() => {
                self.first_failing = Some(self.current);
                self.complete("no_sustainable_concurrency_found", "adaptive_failed", facts)
            }
            Stage::Discover => {
                self.first_failing = Some(self.current);
                self.enter_sustain(facts, now_ns, reason)
            }
            Stage::Sustain => self.sustain(false, facts, now_ns, Some(reason)),
            Stage::Complete => Action::StopSending,
        }
    }

    fn discover(&mut self, passing: bool, facts: &WindowFacts, now_ns: u64) -> Action {
        let shown = facts.sla_value.map_or("none".to_string(), |value| format!("{value:.3}"));
        if !passing {
            self.first_failing = Some(self.current);
            if self.last_passing.is_none() {
                return self.complete("no_sustainable_concurrency_found", "adaptive_failed", facts);
            }
            return self.enter_sustain(facts, now_ns, &format!("SLA value {shown} breaches configured filters"));
        }
        self.last_passing = Some(self.current);
        if self.current >= self.settings.control_max {
            return self.complete("max_control_value_reached_without_saturation", "adaptive_incomplete", facts);
        }
        let before = self.current;
        self.current = (before + self.step_size(before, &facts.sla_values)).min(self.settings.control_max);
        let reason = format!("SLA value {shown} passes configured filters");
        self.emit("adaptive_decision", &reason, facts, None, Some(before), Some(self.current - before));
        Action::Control(self.current)
    }

    fn enter_sustain(&mut self, facts: &WindowFacts, now_ns: u64, reason: &str) -> Action {
        let boundary = self.last_passing.unwrap_or(self.settings.control_min).max(self.settings.control_min);
        let before = self.current;
        self.boundary = Some(boundary);
        self.current = boundary;
        self.stage = Stage::Sustain;
        self.sustain_started_ns = Some(now_ns);
        let holding = format!("holding boundary_value={boundary}");
        self.emit("sustain_started", &holding, facts, None, Some(before), None);
        self.emit("boundary_discovered", reason, facts, None, Some(boundary), None);
        Action::Control(self.current)
    }

    fn sustain(&mut self, passing: bool, facts: &WindowFacts, now_ns: u64, reason: Option<&str>) -> Action {
        self.sustain_windows += 1;
        let shown = facts.sla_value.map_or("none".to_string(), |value| format!("{value:.3}"));
        if passing {
            self.sustain_passed_windows += 1;
            self.last_passing = Some(self.current);
            self.recovery_used = false;
            let reason = format!("SLA value {shown} passes configured filters during sustain");
            self.emit("adaptive_decision", &reason, facts, None, None, None);
            let sustained_s = now_ns.saturating_sub(self.sustain_started_ns.unwrap_or(now_ns)) as f64 / 1e9;
            if sustained_s >= self.settings.sustain_s {
                return self.complete("sustain_duration_completed", "adaptive_complete", facts);
            }
            return Action::Control(self.current);
        }
        if self.recovery_used {
            return self.complete("sustain_failed_after_recovery", "adaptive_failed", facts);
        }
        self.recovery_used = true;
        let before = self.current;
        let minimum = self.settings.control_min;
        let last_good = self.last_passing.unwrap_or(minimum).max(minimum);
        let target = if last_good < before {
            last_good
        } else {
            (before - self.step_size(before, &facts.sla_values)).max(minimum)
        };
        if target == before && before == minimum {
            return self.complete("sustain_failed_sla_unrecoverable", "adaptive_failed", facts);
        }
        self.current = target;
        let reason = reason
            .map_or_else(|| format!("SLA value {shown} breaches configured filters during sustain"), str::to_string);
        self.emit("adaptive_decision", &reason, facts, None, Some(before), Some((before - target).abs()));
        Action::Control(self.current)
    }

    /// AIPerf's step, a whole number for a rate too: a percentage of the current value, or the
    /// base step times a multiplier that grows with the tightest SLA's margin (1 at the
    /// boundary, the maximum far from it).
    fn step_size(&self, current: f64, sla_values: &BTreeMap<String, f64>) -> f64 {
        let settings = &self.settings;
        if settings.step_policy == StepPolicy::FixedPercentStep {
            return (current * settings.step_percent / 100.0).ceil().max(1.0);
        }
        let base_step = settings.base_step as f64;
        let margins = settings.sla.iter().filter_map(|filter| headroom(filter, sla_values.get(&sla_key(filter))?));
        let Some(tightest) = margins.reduce(f64::min) else { return base_step };
        let multiplier = (tightest.max(0.0) * settings.max_step_multiplier as f64) as usize;
        base_step * multiplier.clamp(1, settings.max_step_multiplier) as f64
    }

    fn complete(&mut self, reason: &str, event: &str, facts: &WindowFacts) -> Action {
        if self.completed_reason.is_none() {
            self.stage = Stage::Complete;
            self.completed_reason = Some(reason.to_string());
            self.emit(event, reason, facts, None, None, None);
        }
        Action::StopSending
    }

    /// The phase ended before the controller did (its duration, a cancel).
    pub fn phase_ended(&mut self, cancelled: bool) {
        let (reason, event) =
            if cancelled { ("phase_cancelled", "adaptive_failed") } else { ("phase_stopped", "adaptive_complete") };
        self.complete(reason, event, &WindowFacts::default());
    }

    fn record_candidate(&mut self, stats: &WindowStats, accepted: bool, rejection: &str) {
        let values = |pick: fn(&super::sla_window::RequestSample) -> Option<f64>| -> Vec<f64> {
            let mut values: Vec<f64> = stats.succeeded.iter().filter_map(pick).collect();
            values.sort_by(f64::total_cmp);
            values
        };
        let pct = |sorted: &[f64], pct: f64| {
            if sorted.is_empty() { 0.0 } else { crate::metrics::stats::percentile(sorted, pct) }
        };
        let latency = values(|s| Some(s.latency_ms));
        let ttft = values(|s| s.ttft_ms);
        let itl = values(|s| s.itl_ms);
        let total = stats.total();
        self.candidates.push(json!({
            "adaptive_iteration": self.iteration,
            "candidate_value": self.settings.value_json(self.current),
            "control_value": self.settings.value_json(self.current),
            "duration_s": stats.elapsed_s,
            "request_count": total,
            "error_count": stats.errors,
            "cancelled": stats.cancelled,
            "success_count": stats.succeeded.len(),
            "success_rate": if total > 0 { stats.succeeded.len() as f64 / total as f64 } else { 0.0 },
            "throughput_rps": stats.throughput(),
            "latency_avg_ms": if latency.is_empty() { 0.0 } else { latency.iter().sum::<f64>() / latency.len() as f64 },
            "latency_p50_ms": pct(&latency, 50.0), "latency_p95_ms": pct(&latency, 95.0), "latency_p99_ms": pct(&latency, 99.0),
            "ttft_p50_ms": pct(&ttft, 50.0), "ttft_p95_ms": pct(&ttft, 95.0), "ttft_p99_ms": pct(&ttft, 99.0),
            "itl_p50_ms": pct(&itl, 50.0), "itl_p95_ms": pct(&itl, 95.0), "itl_p99_ms": pct(&itl, 99.0),
            "accepted": accepted,
            "rejection_reason": if accepted { None } else { Some(rejection) },
        }));
    }

    fn emit(
        &mut self,
        event: &str,
        reason: &str,
        facts: &WindowFacts,
        passed: Option<bool>,
        before: Option<f64>,
        step_size: Option<f64>,
    ) {
        let value = |v: f64| self.settings.value_json(v);
        let maybe = |v: Option<f64>| v.map(value);
        let primary = &self.settings.sla[0];
        let now = chrono::Utc::now();
        let binding = binding_sla(&self.settings.sla, &facts.sla_values);
        let sla_values: serde_json::Map<String, Value> =
            facts.sla_values.iter().map(|(key, value)| (key.clone(), finite(*value))).collect();
        self.events.push(json!({
            "schema_version": SCHEMA_VERSION,
            "timestamp_ns": now.timestamp_nanos_opt(),
            "timestamp_utc": now.to_rfc3339_opts(chrono::SecondsFormat::Micros, true),
            "event": event,
            "phase": self.stage.name(),
            "phase_name": self.phase_name,
            "adaptive_iteration": self.iteration,
            "control_variable": self.settings.control.name(),
            "control_value_before": value(before.unwrap_or(self.current)),
            "control_value_after": value(self.current),
            "control_value": value(self.current),
            "candidate_value": value(before.unwrap_or(self.current)),
            "accepted_value": value(self.current),
            "boundary_value": maybe(self.boundary),
            "last_passing_value": maybe(self.last_passing),
            "first_failing_value": maybe(self.first_failing),
            "sla_metric": primary.metric_tag,
            "sla_stat": primary.stat,
            "sla_op": primary.op,
            "sla_bound": primary.threshold,
            "sla_value": facts.sla_value.map(finite),
            "sla_values": sla_values,
            "binding_sla": binding,
            "throughput": facts.throughput,
            "sample_count": facts.samples,
            "completed": facts.samples,
            "sent": facts.samples + facts.errors + facts.cancelled,
            "errored": facts.errors,
            "error_count": facts.errors,
            "cancelled": facts.cancelled,
            "sla_passed": passed,
            "strategy_type": "ramp_until_fail",
            "step_policy": self.settings.step_policy.name(),
            "step_size": maybe(step_size),
            "reason": reason,
        }));
    }

    /// The events and AIPerf's `adaptive_scale_summary.json` for the phase's artifacts.
    pub fn into_log(mut self, totals: (u64, u64, u64)) -> AdaptiveScaleLog {
        self.phase_ended(false);
        let reason = self.completed_reason.clone().unwrap_or_default();
        let status = match reason.as_str() {
            "max_control_value_reached_without_saturation" => "incomplete",
            "phase_cancelled"
            | "no_sustainable_concurrency_found"
            | "sustain_failed_sla_unrecoverable"
            | "sustain_failed_after_recovery" => "failed",
            _ => "completed",
        };
        let primary = &self.settings.sla[0];
        let (completed, errored, cancelled) = totals;
        let settings = &self.settings;
        let maybe = |v: Option<f64>| v.map(|v| settings.value_json(v));
        let summary = json!({
            "schema_version": SCHEMA_VERSION,
            "status": status,
            "phase_name": self.phase_name,
            "control_variable": settings.control.name(),
            "control_value": settings.value_json(self.current),
            "boundary_value": maybe(self.boundary),
            "last_passing_value": maybe(self.last_passing),
            "first_failing_value": maybe(self.first_failing),
            "result": {
                "last_passing_value": maybe(self.last_passing),
                "first_failing_value": maybe(self.first_failing),
                "boundary_value": maybe(self.boundary),
            },
            "sustain_started_at": self.sustain_started_ns,
            "sustain_duration_seconds": settings.sustain_s,
            "completed_reason": reason,
            "sla_passed_during_sustain": self.sustain_windows > 0 && self.sustain_passed_windows == self.sustain_windows,
            "sustain_windows": self.sustain_windows,
            "sustain_passed_windows": self.sustain_passed_windows,
            "sla_metric": primary.metric_tag,
            "sla_stat": primary.stat,
            "sla_op": primary.op,
            "sla_bound": primary.threshold,
            "sla": {"metric": primary.metric_tag, "stat": primary.stat, "op": primary.op, "bound": primary.threshold},
            "totals": {"sent": completed + errored + cancelled, "completed": completed, "errored": errored, "cancelled": cancelled},
            "candidates": self.candidates,
            "strategy_type": "ramp_until_fail",
            "step_policy": settings.step_policy.name(),
            "base_step": settings.base_step,
            "max_step_multiplier": settings.max_step_multiplier,
            "step_percent": settings.step_percent,
        });
        AdaptiveScaleLog { events: self.events, summary }
    }
}

/// How far inside its threshold a value is, as a fraction of the threshold (AIPerf's margin:
/// positive inside, negative past it); None for a threshold of 0.
fn headroom(filter: &SlaFilter, value: &f64) -> Option<f64> {
    (filter.threshold != 0.0 && value.is_finite()).then(|| -filter.margin(*value))
}

/// The key of the SLA with the least headroom.
fn binding_sla(filters: &[SlaFilter], values: &BTreeMap<String, f64>) -> Option<String> {
    filters
        .iter()
        .filter_map(|filter| Some((sla_key(filter), headroom(filter, values.get(&sla_key(filter))?)?)))
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(key, _)| key)
}

/// JSON has no infinity: an SLA value with nothing to measure is null.
fn finite(value: f64) -> Value {
    if value.is_finite() { json!(value) } else { Value::Null }
}

#[cfg(test)]
mod tests {
    use super::super::sla_window::{Observation, Outcome, RequestSample};
    use super::*;
    use crate::plan::{AdaptiveControl, Arrival};

    /// The mock's staircase: C users on 8 slots, 82 ms answers, 20 ms to the first token.
    fn window_at(users: usize) -> WindowStats {
        let ttft_ms = 20.0 + 82.0 * ((users as f64 / 8.0).ceil() - 1.0);
        let sample = RequestSample {
            latency_ms: ttft_ms + 62.0,
            ttft_ms: Some(ttft_ms),
            itl_ms: Some(2.0),
            output_tokens: Some(32),
        };
        WindowStats::of((0..50).map(|_| Observation { issued_ns: 0, outcome: Outcome::Succeeded(sample) }), 1.0)
    }

    fn settings() -> AdaptiveScale {
        let sla = vec![SlaFilter::parse("time_to_first_token:p95:lt:200").unwrap()];
        AdaptiveScale {
            base_step: 4,
            assessment_period_s: 1.0,
            ..AdaptiveScale::new(AdaptiveControl::Concurrency, 1.0, 64.0, 3.0, sla)
        }
    }

    /// Run the controller against the staircase, one window a second, until it stops.
    fn trajectory(settings: AdaptiveScale) -> (Vec<usize>, AdaptiveScaleLog) {
        let mut controller = SlaController::start(settings, "profiling");
        let mut tried = vec![controller.control_value() as usize];
        for second in 1..100u64 {
            match controller.assess(&window_at(controller.control_value() as usize), second * 1_000_000_000) {
                Action::Control(users) => tried.push(users as usize),
                Action::StopSending => break,
            }
        }
        (tried, controller.into_log((1, 0, 0)))
    }

    #[test]
    fn steps_by_margin_to_the_first_failure_then_holds_the_last_pass() {
        let (tried, log) = trajectory(settings());
        // 1 → +12 (margin 0.9), 13 → +4 (margin 0.49), 17 → +4, 21 → +4, 25 → fails (266 ms) → 21 held.
        assert_eq!(&tried[..6], &[1, 13, 17, 21, 25, 21]);
        assert!(tried[6..].iter().all(|users| *users == 21), "{tried:?}");
        assert_eq!(log.summary["status"], "completed");
        assert_eq!(log.summary["completed_reason"], "sustain_duration_completed");
        assert_eq!(log.summary["boundary_value"], 21);
        assert_eq!(log.summary["first_failing_value"], 25);
        assert_eq!(log.summary["sla_passed_during_sustain"], true);
        let events: Vec<&str> = log.events.iter().filter_map(|event| event["event"].as_str()).collect();
        assert_eq!(events.first(), Some(&"adaptive_phase_started"));
        assert!(events.contains(&"boundary_discovered"));
        assert_eq!(events.last(), Some(&"adaptive_complete"));
    }

    #[test]
    fn fixed_percent_steps_and_the_ceiling_without_saturation() {
        let (tried, _) = trajectory(AdaptiveScale { step_policy: StepPolicy::FixedPercentStep, ..settings() });
        assert_eq!(&tried[..5], &[1, 2, 3, 4, 5], "25 % of the current value, at least 1");
        let (_, log) = trajectory(AdaptiveScale { control_max: 8.0, ..settings() });
        assert_eq!(log.summary["status"], "incomplete");
        assert_eq!(log.summary["completed_reason"], "max_control_value_reached_without_saturation");
    }

    #[test]
    fn a_request_rate_keeps_its_fraction_and_steps_whole_requests_per_second() {
        let rate = AdaptiveControl::RequestRate { arrival: Arrival::Constant, seed: 0, max_concurrency: None };
        let settings = AdaptiveScale { control: rate, control_min: 0.5, control_max: 20.0, ..settings() };
        let mut controller = SlaController::start(settings, "profiling");
        // Far inside the SLA: the multiplier is 3 of 4, so 0.5 → 12.5 → 20 (the maximum).
        assert_eq!(controller.assess(&window_at(1), 1_000_000_000), Action::Control(12.5));
        assert_eq!(controller.assess(&window_at(1), 2_000_000_000), Action::Control(20.0));
        assert_eq!(controller.assess(&window_at(40), 3_000_000_000), Action::Control(12.5));
        let log = controller.into_log((3, 0, 0));
        assert_eq!(log.summary["control_variable"], "request_rate");
        assert_eq!(log.summary["boundary_value"], 12.5);
        assert_eq!(log.summary["first_failing_value"], 20.0);
    }

    #[test]
    fn a_first_window_that_fails_finds_nothing_sustainable() {
        let strict = vec![SlaFilter::parse("time_to_first_token:p95:lt:10").unwrap()];
        let (tried, log) = trajectory(AdaptiveScale { sla: strict, ..settings() });
        assert_eq!(tried, vec![1]);
        assert_eq!(log.summary["status"], "failed");
        assert_eq!(log.summary["completed_reason"], "no_sustainable_concurrency_found");
    }
}
