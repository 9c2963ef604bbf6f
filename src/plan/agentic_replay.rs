//! AIPerf's agentic replay as a plan: recorded agentic trajectories cut at a sampled instant,
//! a priming phase for the mid-flight sessions, then the profiled rest (`agents/replay/`).

use serde::{Deserialize, Serialize};

/// Which half of an agentic replay a phase plays.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum ReplayStage {
    /// The warm-up: each session mid-flight at its trajectory's cut sends its last turn before
    /// the cut (one output token), then, with `cache_warmup_s`, the trajectories run on without
    /// their idle delays for that long.
    Priming,
    /// The turns at or after each cut, at their recorded offsets and delays; a finished tree
    /// hands its lane to the next root.
    Profiling,
}

/// One phase of an agentic replay; its priming and profiling phases share every field but
/// `stage`, so both cut the same trajectories.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct AgenticReplay {
    pub stage: ReplayStage,
    /// Trajectories played at once (AIPerf's concurrency): one root tree per lane.
    pub lanes: usize,
    /// The cut falls in [min, max] of each trajectory's recorded span (0 to 1).
    pub start_min_ratio: f64,
    pub start_max_ratio: f64,
    /// Fire each phase's first requests together instead of at their recorded offsets.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub burst_phase_starts: bool,
    /// With nothing in flight, pending requests move earlier so the replay idles at most this long.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_idle_gap_cap_s: Option<f64>,
    /// Seconds of idle-free, one-token replay after the priming requests (priming stage only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_warmup_s: Option<f64>,
    /// How long the warm-up waits for its requests once it has sent them (none: until all end).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmup_grace_s: Option<f64>,
    /// More lanes than root conversations reuse roots instead of stopping with an error.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub allow_dataset_wrap: bool,
    pub seed: u64,
}

impl AgenticReplay {
    /// AIPerf's defaults: cuts in the middle half of each trajectory.
    pub const DEFAULT_START_MIN_RATIO: f64 = 0.25;
    pub const DEFAULT_START_MAX_RATIO: f64 = 0.75;

    /// The same replay, playing `stage`.
    pub fn at(&self, stage: ReplayStage) -> Self {
        Self { stage, ..self.clone() }
    }

    /// What is wrong with its numbers, if anything.
    pub fn mistake(&self) -> Option<String> {
        let ratio = |value: f64| (0.0..=1.0).contains(&value);
        if self.lanes == 0 {
            return Some("agentic replay needs at least 1 lane (concurrency)".into());
        }
        if !ratio(self.start_min_ratio) || !ratio(self.start_max_ratio) {
            return Some("trajectory start ratios must lie between 0 and 1".into());
        }
        if self.start_min_ratio > self.start_max_ratio {
            return Some(format!(
                "the trajectory start min ratio ({}) is above the max ratio ({})",
                self.start_min_ratio, self.start_max_ratio
            ));
        }
        let seconds = |value: Option<f64>| value.is_some_and(|s| !(s.is_finite() && s >= 0.0));
        if seconds(self.system_idle_gap_cap_s) || seconds(self.cache_warmup_s) || seconds(self.warmup_grace_s) {
            return Some(
                "the idle-gap cap, the cache warm-up duration and the warm-up grace period must be seconds ≥ 0".into(),
            );
        }
        None
    }
}
