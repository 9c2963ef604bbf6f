//! AIPerf's `failed_request_threshold`: a record sink that counts each results phase's
//! requests and failures and, once more than the threshold's share of them failed (judged from
//! max(concurrency, 10) requests on, as AIPerf arms it), stops the run through its cancel
//! signal; in-flight requests end as cancelled and the partial artifacts are still written.

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use anyhow::Result;

use crate::cancel::CancelSignal;
use crate::metrics::record_sink::RecordSink;
use crate::metrics::record_values::RecordMetrics;
use crate::plan::{LoadMode, Phase, Plan};
use crate::record::RequestRecord;

/// The fewest requests of a phase judged (AIPerf's grace floor, with the phase's concurrency).
const SMALLEST_GRACE_FLOOR: u64 = 10;

/// A results phase that failed more of its requests than the threshold allows.
#[derive(Debug, Clone, PartialEq)]
pub struct FailedRequestsExceeded {
    pub phase: String,
    pub failed: u64,
    pub requests: u64,
    pub threshold: f64,
    /// Where the run's partial artifacts are, once written.
    pub artifact_dir: Option<PathBuf>,
}

impl std::fmt::Display for FailedRequestsExceeded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} of the first {} requests of phase `{}` failed ({:.1} %), more than the failed-request threshold of {} % \
             (failed_request_threshold, --failed-request-threshold); the run was stopped",
            self.failed,
            self.requests,
            self.phase,
            100.0 * self.failed as f64 / self.requests.max(1) as f64,
            100.0 * self.threshold
        )?;
        if let Some(dir) = &self.artifact_dir {
            write!(f, " and its partial artifacts are in {}", dir.display())?;
        }
        Ok(())
    }
}

impl std::error::Error for FailedRequestsExceeded {}

/// What the engine keeps of the watch: the verdict, once there is one.
pub type Verdict = Arc<OnceLock<FailedRequestsExceeded>>;

/// The record sink that judges each results phase against the threshold.
pub struct FailedRequestWatch {
    threshold: f64,
    /// By phase index; None for a phase that does not feed the results.
    phases: Vec<Option<PhaseCount>>,
    cancel: CancelSignal,
    verdict: Verdict,
}

struct PhaseCount {
    name: String,
    grace_floor: u64,
    requests: u64,
    failed: u64,
}

impl FailedRequestWatch {
    /// The watch of a plan with a threshold, raising `cancel` (the run's own signal) when it is
    /// passed, and the verdict it leaves.
    pub fn of(plan: &Plan, cancel: &CancelSignal) -> Option<(Self, Verdict)> {
        let threshold = plan.failed_request_threshold?;
        let phases = plan
            .phases
            .iter()
            .map(|phase| {
                phase.results.then(|| PhaseCount {
                    name: phase.name.clone(),
                    grace_floor: grace_floor(phase),
                    requests: 0,
                    failed: 0,
                })
            })
            .collect();
        let verdict = Verdict::default();
        Some((Self { threshold, phases, cancel: cancel.clone(), verdict: verdict.clone() }, verdict))
    }
}

/// max(the phase's concurrency, 10): a few early failures never stop a run.
fn grace_floor(phase: &Phase) -> u64 {
    let concurrency = match &phase.mode {
        LoadMode::Concurrency { concurrency, .. } => *concurrency,
        LoadMode::Users { users, .. } => *users,
        LoadMode::Rate { max_concurrency: Some(limit), .. } | LoadMode::Ramp { max_concurrency: Some(limit), .. } => {
            *limit
        }
        _ => 1,
    };
    (concurrency as u64).max(SMALLEST_GRACE_FLOOR)
}

impl RecordSink for FailedRequestWatch {
    fn write(&mut self, record: &RequestRecord, _: &RecordMetrics, _: Option<bool>) -> Result<()> {
        if self.verdict.get().is_some() {
            return Ok(());
        }
        let Some(Some(phase)) = self.phases.get_mut(record.origin.phase_index) else { return Ok(()) };
        phase.requests += 1;
        // A request the phase's cancellation ended is no failure of the server.
        if record.error.is_some() && !record.was_cancelled {
            phase.failed += 1;
        }
        let over = phase.failed as f64 > self.threshold * phase.requests as f64;
        if phase.requests >= phase.grace_floor && over {
            let _ = self.verdict.set(FailedRequestsExceeded {
                phase: phase.name.clone(),
                failed: phase.failed,
                requests: phase.requests,
                threshold: self.threshold,
                artifact_dir: None,
            });
            self.cancel.cancel();
        }
        Ok(())
    }

    fn finish(self: Box<Self>) -> Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{RecordError, RequestOrigin};

    fn record(failed: bool) -> RequestRecord {
        let mut record = RequestRecord::new(RequestOrigin::first_profiling(), "id".into(), 0, 1, None);
        if failed {
            record.error = Some(RecordError { code: Some(500), kind: "http_error".into(), message: "boom".into() });
        }
        record
    }

    fn watch(threshold: f64) -> (Box<dyn RecordSink>, Verdict, CancelSignal) {
        let mut plan = crate::export::test_support::sample_result().plan;
        plan.failed_request_threshold = Some(threshold);
        let cancel = CancelSignal::new();
        let (watch, verdict) = FailedRequestWatch::of(&plan, &cancel).expect("a watch");
        (Box::new(watch), verdict, cancel)
    }

    #[test]
    fn failures_before_the_grace_floor_are_not_judged() {
        let (mut sink, verdict, cancel) = watch(0.5);
        for _ in 0..9 {
            sink.write(&record(true), &RecordMetrics::default(), None).unwrap();
        }
        assert!(verdict.get().is_none() && !cancel.is_cancelled());
        sink.write(&record(true), &RecordMetrics::default(), None).unwrap();
        let exceeded = verdict.get().expect("judged at the tenth request");
        assert_eq!((exceeded.failed, exceeded.requests, exceeded.phase.as_str()), (10, 10, "profiling"));
        assert!(cancel.is_cancelled());
        assert!(exceeded.to_string().starts_with("10 of the first 10 requests of phase `profiling` failed (100.0 %), more than the failed-request threshold of 50 %"), "{exceeded}");
    }

    #[test]
    fn a_ratio_at_the_threshold_passes_and_one_over_it_stops() {
        let (mut sink, verdict, cancel) = watch(0.5);
        for failed in [false, true].repeat(6) {
            sink.write(&record(failed), &RecordMetrics::default(), None).unwrap();
        }
        assert!(verdict.get().is_none() && !cancel.is_cancelled());
        sink.write(&record(true), &RecordMetrics::default(), None).unwrap();
        assert_eq!(verdict.get().map(|v| (v.failed, v.requests)), Some((7, 13)));
        let mut cancelled = record(true);
        cancelled.was_cancelled = true;
        sink.write(&cancelled, &RecordMetrics::default(), None).unwrap();
        assert_eq!(verdict.get().map(|v| (v.failed, v.requests)), Some((7, 13)), "judged once");
    }

    #[test]
    fn the_grace_floor_is_the_concurrency_when_larger() {
        let mut phase = crate::export::test_support::sample_result().plan.phases[0].clone();
        assert_eq!(grace_floor(&phase), 10);
        phase.mode = LoadMode::Concurrency { concurrency: 64, prefill_concurrency: None };
        assert_eq!(grace_floor(&phase), 64);
    }
}
