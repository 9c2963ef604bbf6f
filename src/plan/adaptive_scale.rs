//! AIPerf's `adaptive_scale` phase: a closed loop's concurrency or an open loop's request rate
//! that an SLA controller moves during the phase (ramp until an SLA fails, then hold the last
//! passing value).

use serde::{Deserialize, Serialize};

use super::{Arrival, SlaFilter};

/// AIPerf's default seconds of one SLA assessment window.
pub const DEFAULT_ASSESSMENT_PERIOD_S: f64 = 30.0;
/// AIPerf's shortest assessment window, seconds.
pub const MIN_ASSESSMENT_PERIOD_S: f64 = 1.0;

/// How the controller grows the concurrency after a passing window.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum StepPolicy {
    /// `base_step` × a multiplier (1 to `max_step_multiplier`) that grows with the tightest
    /// SLA's margin: big steps far from the boundary.
    SlaMargin,
    /// `step_percent` of the current concurrency (at least 1).
    FixedPercentStep,
}

impl StepPolicy {
    pub fn name(self) -> &'static str {
        match self {
            StepPolicy::SlaMargin => "sla_margin",
            StepPolicy::FixedPercentStep => "fixed_percent_step",
        }
    }

    pub fn parse(text: &str) -> Result<Self, String> {
        match text {
            "sla_margin" => Ok(StepPolicy::SlaMargin),
            "fixed_percent_step" => Ok(StepPolicy::FixedPercentStep),
            other => Err(format!("`{other}` is not a step policy; sla_margin or fixed_percent_step")),
        }
    }
}

/// What the controller moves (AIPerf's `control.variable`).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Default)]
#[serde(tag = "variable", rename_all = "snake_case")]
pub enum AdaptiveControl {
    /// The users of a closed loop, each sending its next request when the last one ends.
    #[default]
    Concurrency,
    /// The requests per second of an open loop with the phase's arrival pattern, at most
    /// `max_concurrency` in flight.
    RequestRate {
        arrival: Arrival,
        seed: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        max_concurrency: Option<usize>,
    },
}

impl AdaptiveControl {
    pub fn name(self) -> &'static str {
        match self {
            AdaptiveControl::Concurrency => "concurrency",
            AdaptiveControl::RequestRate { .. } => "request_rate",
        }
    }

    /// Whether its values are whole numbers (users), not a rate.
    pub fn is_integral(self) -> bool {
        matches!(self, AdaptiveControl::Concurrency)
    }
}

/// The controller's settings (AIPerf's `adaptive_scale` block, strategy `ramp_until_fail`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct AdaptiveScale {
    #[serde(default)]
    pub control: AdaptiveControl,
    /// The value (users, or requests per second) the phase starts at and never goes below.
    pub control_min: f64,
    pub control_max: f64,
    pub assessment_period_s: f64,
    /// Seconds to hold the discovered boundary before the phase ends.
    pub sustain_s: f64,
    /// Fewer completed requests in a window leave it inconclusive.
    pub min_completed_requests: u64,
    pub step_policy: StepPolicy,
    pub base_step: usize,
    pub max_step_multiplier: usize,
    pub step_percent: f64,
    /// Every window must pass all of them; the first is the primary one in the events.
    pub sla: Vec<SlaFilter>,
}

impl AdaptiveScale {
    /// AIPerf's defaults around the control, its bounds, the sustain time and the SLAs.
    pub fn new(
        control: AdaptiveControl,
        control_min: f64,
        control_max: f64,
        sustain_s: f64,
        sla: Vec<SlaFilter>,
    ) -> Self {
        AdaptiveScale {
            control,
            control_min,
            control_max,
            assessment_period_s: DEFAULT_ASSESSMENT_PERIOD_S,
            sustain_s,
            min_completed_requests: 1,
            step_policy: StepPolicy::SlaMargin,
            base_step: 10,
            max_step_multiplier: 4,
            step_percent: 25.0,
            sla,
        }
    }

    /// AIPerf's `adaptive_scale` block of a phase (its SLAs sit beside it, in the phase's `sla`).
    pub fn config_block(&self) -> serde_json::Value {
        serde_json::json!({
            "enabled": true,
            "control": {"variable": self.control.name(), "min": self.value_json(self.control_min), "max": self.value_json(self.control_max)},
            "strategy": {
                "type": "ramp_until_fail",
                "step_policy": self.step_policy.name(),
                "base_step": self.base_step,
                "max_step_multiplier": self.max_step_multiplier,
                "step_percent": self.step_percent,
            },
            "assessment_period": self.assessment_period_s,
            "sustain_duration": self.sustain_s,
            "min_completed_requests": self.min_completed_requests,
        })
    }

    /// A control value as JSON: a whole number of users, or a rate.
    pub fn value_json(&self, value: f64) -> serde_json::Value {
        if self.control.is_integral() { serde_json::json!(value as u64) } else { serde_json::json!(value) }
    }

    /// What is wrong with the settings, if anything.
    pub fn mistake(&self) -> Option<String> {
        let positive = |value: f64| value.is_finite() && value > 0.0;
        let variable = self.control.name();
        if !positive(self.control_min) || (self.control.is_integral() && self.control_min < 1.0) {
            return Some(format!(
                "adaptive_scale control.min must be {}",
                if self.control.is_integral() { "at least 1" } else { "above 0" }
            ));
        }
        if self.control.is_integral() && [self.control_min, self.control_max].iter().any(|v| v.fract() != 0.0) {
            return Some(format!("adaptive_scale control.min and control.max must be whole numbers for {variable}"));
        }
        if self.control_max <= self.control_min || !self.control_max.is_finite() {
            return Some(format!(
                "adaptive_scale control.max ({}) must be above control.min ({})",
                self.control_max, self.control_min
            ));
        }
        if !(self.assessment_period_s.is_finite() && self.assessment_period_s >= MIN_ASSESSMENT_PERIOD_S) {
            return Some(format!(
                "adaptive_scale assessment_period must be at least {MIN_ASSESSMENT_PERIOD_S} s, got {}",
                self.assessment_period_s
            ));
        }
        if !positive(self.sustain_s) {
            return Some("adaptive_scale sustain_duration must be a positive number of seconds".to_string());
        }
        if self.min_completed_requests == 0 {
            return Some("adaptive_scale min_completed_requests must be at least 1".to_string());
        }
        if self.base_step == 0 || self.max_step_multiplier == 0 {
            return Some("adaptive_scale strategy base_step and max_step_multiplier must be at least 1".to_string());
        }
        if !positive(self.step_percent) {
            return Some("adaptive_scale strategy step_percent must be above 0".to_string());
        }
        if self.sla.is_empty() {
            return Some("adaptive_scale needs at least one SLA filter (`sla`)".to_string());
        }
        self.sla.iter().find_map(|filter| sla_mistake(filter, &self.sla))
    }
}

/// Latency families (ms) and the statistics they take.
const LATENCY_STATS: &[&str] = &["avg", "min", "max", "p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99"];
/// Metrics measured per request, which a goodput SLA judges each request by.
pub const QUALITY_METRICS: &[&str] =
    &["request_latency", "time_to_first_token", "ttft", "inter_token_latency", "itl", "tpot"];
/// Metrics of the whole window (rates, fractions, percentages).
const WINDOW_METRICS: &[&str] = &[
    "throughput",
    "request_throughput",
    "completed_request_throughput",
    "output_token_throughput",
    "goodput",
    "goodput_ratio",
    "success_rate",
    "request_success_rate",
    "error_rate",
    "request_error_rate",
    "cancellation_rate",
    "request_cancellation_rate",
];

/// What AIPerf's adaptive scale refuses in one filter of `all`.
fn sla_mistake(filter: &SlaFilter, all: &[SlaFilter]) -> Option<String> {
    let tag = filter.metric_tag.as_str();
    let stats: &[&str] = if QUALITY_METRICS.contains(&tag) {
        LATENCY_STATS
    } else if WINDOW_METRICS.contains(&tag) {
        &["avg", "min", "max"]
    } else {
        return Some(format!(
            "adaptive_scale SLA metric `{tag}` is not supported; one of {}",
            [QUALITY_METRICS, WINDOW_METRICS].concat().join(", ")
        ));
    };
    if !stats.contains(&filter.stat.as_str()) {
        return Some(format!("adaptive_scale SLA `{tag}` takes the stat {}, not `{}`", stats.join(", "), filter.stat));
    }
    if matches!(tag, "error_rate" | "request_error_rate") && !(0.0..=100.0).contains(&filter.threshold) {
        return Some(format!("adaptive_scale SLA `{tag}` is in percent (0 to 100), got {}", filter.threshold));
    }
    let needs_quality = matches!(tag, "goodput" | "goodput_ratio");
    if needs_quality && !all.iter().any(|other| QUALITY_METRICS.contains(&other.metric_tag.as_str())) {
        return Some(format!(
            "adaptive_scale SLA `{tag}` needs a request_latency, TTFT or ITL filter to judge requests"
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ttft_under(ms: f64) -> SlaFilter {
        SlaFilter::parse(&format!("time_to_first_token:p95:lt:{ms}")).unwrap()
    }

    #[test]
    fn settings_with_aiperf_defaults_are_valid_and_mistakes_are_named() {
        let good = AdaptiveScale::new(AdaptiveControl::Concurrency, 1.0, 64.0, 10.0, vec![ttft_under(200.0)]);
        assert_eq!(good.mistake(), None);
        assert_eq!((good.assessment_period_s, good.base_step, good.max_step_multiplier), (30.0, 10, 4));
        let flat = AdaptiveScale { control_max: 1.0, ..good.clone() };
        assert!(flat.mistake().unwrap().contains("control.max"));
        let half_user = AdaptiveScale { control_min: 0.5, ..good.clone() };
        assert!(half_user.mistake().unwrap().contains("at least 1"));
        let rate = AdaptiveControl::RequestRate { arrival: Arrival::Poisson, seed: 0, max_concurrency: None };
        assert_eq!(
            AdaptiveScale { control: rate, control_min: 0.5, control_max: 40.5, ..good.clone() }.mistake(),
            None
        );
        let quick = AdaptiveScale { assessment_period_s: 0.5, ..good.clone() };
        assert!(quick.mistake().unwrap().contains("at least 1 s"));
        let no_sla = AdaptiveScale { sla: vec![], ..good.clone() };
        assert!(no_sla.mistake().unwrap().contains("SLA filter"));
        let odd_stat = AdaptiveScale { sla: vec![SlaFilter::parse("throughput:p95:ge:3").unwrap()], ..good.clone() };
        assert!(odd_stat.mistake().unwrap().contains("avg, min, max"));
        let lone_goodput = AdaptiveScale { sla: vec![SlaFilter::parse("goodput:avg:ge:3").unwrap()], ..good };
        assert!(lone_goodput.mistake().unwrap().contains("judge requests"));
    }
}
