//! The phase's session metrics: each finished session adds its outcome to the phase's
//! `ScriptedSessionsTally`, which the phase's end turns into its summary (`session_metrics.rs`).

use std::sync::Arc;

use crate::session_metrics::{ScriptedSessionsSummary, ScriptedSessionsTally};

/// How a session ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ended {
    Completed,
    Failed(String),
    Cut,
}

/// One request of a session, as the tally keeps it.
#[derive(Debug, Clone)]
pub struct StepDone {
    pub tag: Arc<str>,
    pub ok: bool,
    /// Cancelled in flight (not ok, and not an error).
    pub cancelled: bool,
    pub latency_ns: u64,
    pub ttft_ns: Option<u64>,
}

/// One finished session.
#[derive(Debug, Clone)]
pub struct SessionOutcome {
    /// First request sent to last answer; None when it sent nothing.
    pub latency_ns: Option<u64>,
    pub tool_calls: u64,
    /// Sub-agents it started.
    pub sub_agents: u64,
    pub steps: Vec<StepDone>,
    pub ended: Ended,
}

/// A phase's sessions as they end.
#[derive(Debug, Default)]
pub struct Tally(ScriptedSessionsTally);

impl Tally {
    /// Add a finished session; true when it failed with an error not seen before.
    pub fn add(&mut self, session: SessionOutcome) -> bool {
        let tally = &mut self.0;
        tally.started += 1;
        tally.steps_per_session.push(session.steps.len() as f64);
        tally.tool_calls_per_session.push(session.tool_calls as f64);
        tally.tool_calls += session.tool_calls;
        tally.sub_agents += session.sub_agents;
        for step in session.steps {
            let values = tally.tags.entry(step.tag.to_string()).or_default();
            values.requests += 1;
            if step.ok {
                values.latency_ms.push(step.latency_ns as f64 / 1e6);
                values.ttft_ms.extend(step.ttft_ns.map(|ns| ns as f64 / 1e6));
            } else if step.cancelled {
                values.cancelled += 1;
            } else {
                values.errors += 1;
            }
        }
        match session.ended {
            Ended::Completed => {
                tally.completed += 1;
                tally.session_latency_ms.extend(session.latency_ns.map(|ns| ns as f64 / 1e6));
                false
            }
            Ended::Cut => {
                tally.cut += 1;
                false
            }
            Ended::Failed(error) => {
                tally.failed += 1;
                let count = tally.errors.entry(error).or_default();
                *count += 1;
                *count == 1
            }
        }
    }

    /// The summary, with the most sessions that were live at once.
    pub fn summary(&mut self, peak_live: u64) -> ScriptedSessionsSummary {
        self.0.peak_live = peak_live;
        self.0.summary()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session_metrics::SessionError;

    fn step(tag: &str, ok: bool, latency_ms: u64) -> StepDone {
        StepDone { tag: tag.into(), ok, cancelled: false, latency_ns: latency_ms * 1_000_000, ttft_ns: Some(1_000_000) }
    }

    #[test]
    fn sessions_add_up_by_outcome_and_steps_by_tag() {
        let mut tally = Tally::default();
        let done = SessionOutcome {
            latency_ns: Some(30_000_000),
            tool_calls: 2,
            sub_agents: 3,
            steps: vec![
                step("plan", true, 10),
                step("plan", true, 20),
                step("embed", false, 5),
                StepDone { cancelled: true, ..step("embed", false, 7) },
            ],
            ended: Ended::Completed,
        };
        assert!(!tally.add(done));
        let failed = || SessionOutcome {
            latency_ns: None,
            tool_calls: 0,
            sub_agents: 1,
            steps: Vec::new(),
            ended: Ended::Failed("a.rhai:3:5: boom".into()),
        };
        assert!(tally.add(failed()), "a new error is reported");
        assert!(!tally.add(failed()), "once");
        let summary = tally.summary(1);
        assert_eq!((summary.started, summary.completed, summary.failed, summary.cut), (3, 1, 2, 0));
        assert_eq!(summary.session_latency_ms.map(|s| s.avg), Some(30.0));
        assert_eq!(summary.steps["plan"].requests, 2);
        assert_eq!(summary.steps["plan"].latency_ms.as_ref().map(|s| s.avg), Some(15.0));
        let embed = &summary.steps["embed"];
        assert_eq!((embed.requests, embed.errors, embed.cancelled), (2, 1, 1), "a cancelled step is not an error");
        assert_eq!(embed.latency_ms, None, "nor has it a latency");
        assert_eq!(summary.errors, vec![SessionError { message: "a.rhai:3:5: boom".into(), sessions: 2 }]);
        assert_eq!((summary.tool_calls, summary.sub_agents), (2, 5), "a failed session's sub-agents count too");
    }
}
