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
    /// Where each trajectory tree's cache-bust marker goes (None: no marker).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_bust: Option<CacheBustTarget>,
    pub seed: u64,
}

/// Where a trajectory tree's cache-bust marker (`[rid:<12 hex digits>]`, AIPerf's) goes in each
/// of its requests: before or after the first user message, or the system message (the first
/// user message when there is none). One marker per tree play, the same in its warm-up and its
/// profiled turns, so a tree keeps its own cached prefix and no two plays share one.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum CacheBustTarget {
    SystemPrefix,
    SystemSuffix,
    FirstTurnPrefix,
    FirstTurnSuffix,
}

impl CacheBustTarget {
    pub const ALL: [CacheBustTarget; 4] = [
        CacheBustTarget::SystemPrefix,
        CacheBustTarget::SystemSuffix,
        CacheBustTarget::FirstTurnPrefix,
        CacheBustTarget::FirstTurnSuffix,
    ];

    /// AIPerf's name (`first_turn_prefix`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            CacheBustTarget::SystemPrefix => "system_prefix",
            CacheBustTarget::SystemSuffix => "system_suffix",
            CacheBustTarget::FirstTurnPrefix => "first_turn_prefix",
            CacheBustTarget::FirstTurnSuffix => "first_turn_suffix",
        }
    }

    /// A target by AIPerf's name: Ok(None) for `none`; an error naming the choices otherwise.
    pub fn parse(name: &str) -> Result<Option<Self>, String> {
        if name == "none" {
            return Ok(None);
        }
        if let Some(target) = Self::ALL.into_iter().find(|target| target.as_str() == name) {
            return Ok(Some(target));
        }
        let why = match name {
            "warmup_isolation_system" | "warmup_isolation_first_turn" => {
                "the warm-up isolation targets do not go with agentic replay (AIPerf refuses them too: a warmed \
                 session carries its marked turns into profiling)"
            }
            _ => "not a cache-bust target",
        };
        let choices: Vec<&str> = Self::ALL.iter().map(|target| target.as_str()).collect();
        Err(format!("`{name}`: {why}; choose none, {}", choices.join(", ")))
    }

    /// Whether the marker goes before the text it marks.
    pub fn is_prefix(self) -> bool {
        matches!(self, CacheBustTarget::SystemPrefix | CacheBustTarget::FirstTurnPrefix)
    }

    /// Whether it marks the system message.
    pub fn is_system(self) -> bool {
        matches!(self, CacheBustTarget::SystemPrefix | CacheBustTarget::SystemSuffix)
    }
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
