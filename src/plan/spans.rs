//! Every span of time a plan names, so that one check keeps them all within what a run can
//! wait: a timer or a deadline of 1e300 seconds cannot be made, and would otherwise fail deep
//! inside the run instead of as one message naming the setting.

use super::{NetworkLatency, Plan};

/// The longest span a setting may name, seconds (about 31 years).
pub const MAX_SECONDS: f64 = 1e9;

impl Plan {
    /// The first span outside 0 ..= `MAX_SECONDS` (or not a number), as a message naming its
    /// setting.
    pub fn span_problem(&self) -> Option<String> {
        let (setting, seconds) =
            self.spans().into_iter().find(|(_, seconds)| !(0.0..=MAX_SECONDS).contains(seconds))?;
        let shown = if seconds.abs() < 1e6 { seconds.to_string() } else { format!("{seconds:e}") };
        Some(format!("{setting}: {shown} s is not a time a run can wait (from 0 to {MAX_SECONDS:e} s, about 31 years)"))
    }

    /// Each span with the setting it comes from.
    fn spans(&self) -> Vec<(String, f64)> {
        let mut spans = vec![
            ("request_timeout".to_string(), self.request_timeout_s),
            ("preflight.timeout".to_string(), self.preflight.timeout_s),
            ("preflight.wait_timeout".to_string(), self.preflight.wait_timeout_s),
            ("preflight.wait_interval".to_string(), self.preflight.wait_interval_s),
            ("server_metrics.interval".to_string(), self.server_metrics.interval_s),
            ("server_metrics.reachability_timeout".to_string(), self.server_metrics.reachability_timeout_s),
            ("gpu_telemetry.interval".to_string(), self.gpu_telemetry.interval_s),
        ];
        let optional = [
            ("slice_duration", self.server_metrics.slice_duration_s),
            ("server_metrics.flush_period", self.server_metrics.flush_period_s),
        ];
        spans.extend(optional.into_iter().filter_map(|(setting, seconds)| Some((setting.to_string(), seconds?))));
        if let NetworkLatency::Automatic { ping_interval_s } = self.network_latency {
            spans.push(("network_latency.ping_interval".to_string(), ping_interval_s));
        }
        for phase in &self.phases {
            let setting = |field: &str| format!("phase `{}`: {field}", phase.name);
            spans.push((setting("grace_period"), phase.grace_period_s));
            if let Some(duration_s) = phase.duration_s {
                spans.push((setting("duration"), duration_s));
            }
            if let Some(cancel) = &phase.cancel {
                spans.push((setting("cancel after"), cancel.after_s));
            }
        }
        spans
    }
}

#[cfg(test)]
mod tests {
    use crate::plan::*;

    fn plan() -> Plan {
        let endpoint: Endpoint = serde_json::from_value(
            serde_json::json!({ "url": "mock", "model": "m", "type": "chat", "streaming": true }),
        )
        .unwrap();
        let dataset = Dataset::Synthetic(SyntheticDataset::new(Dist::fixed(8.0), Dist::fixed(4.0), 1, 10));
        Plan::new("spans", endpoint, dataset, vec![Phase::profiling(1, Some(1))], 60.0)
    }

    #[test]
    fn a_span_no_timer_can_hold_is_named_by_its_setting() {
        let mut plan = plan();
        assert_eq!(plan.span_problem(), None);
        plan.request_timeout_s = 1e300;
        assert!(plan.span_problem().is_some_and(|problem| problem.starts_with("request_timeout: 1e300 s")));
        plan.request_timeout_s = 60.0;
        plan.phases[0].cancel = Some(Cancellation { fraction: 0.5, after_s: f64::INFINITY, seed: 0 });
        let problem = plan.span_problem().expect("an endless cancel delay");
        assert!(problem.contains("cancel after: inf s"), "{problem}");
        plan.phases[0].cancel = None;
        plan.phases[0].duration_s = Some(f64::NAN);
        assert!(plan.span_problem().is_some_and(|problem| problem.contains("duration: NaN s")));
    }
}
