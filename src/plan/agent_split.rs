//! How a weka or TraceLab trace's flattened agents are told apart (AIPerf's
//! `AIPERF_DATASET_WEKA_*` settings, its defaults): requests of agents a capture recorded as one
//! list are split into one conversation per agent by their hash ids, and each split-off agent
//! is named a solo agent (`::fa:`), a member of a parallel group (`::wg:`) or a one-shot sidecar
//! (`::aux:`).

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct AgentSplit {
    /// Split at all (`WEKA_SPLIT_FLATTENED_AGENTS`); off: a trace's top-level requests are one
    /// conversation and a sub-agent entry's requests another.
    pub enabled: bool,
    /// A context edit (a seam) joins its agent back unless it comes more than this after the
    /// context it continues (`WEKA_SEAM_MAX_GAP_SECONDS`)…
    pub seam_max_gap_s: f64,
    /// … and keeps under this share of its blocks (`WEKA_SEAM_MIN_OVERLAP_RATIO`).
    pub seam_min_overlap: f64,
    /// A split-off agent of at most this many requests may be a sidecar (`WEKA_AUX_MAX_REQUESTS`, 0: none is).
    pub aux_max_requests: u64,
    /// … when its first input is under max(floor, ratio × the main agent's largest input)
    /// (`WEKA_AUX_ISL_RATIO`, `WEKA_AUX_ISL_FLOOR`) …
    pub aux_isl_ratio: f64,
    pub aux_isl_floor: u64,
    /// … or it runs another model than the main agent (`WEKA_AUX_CROSS_MODEL`).
    pub aux_cross_model: bool,
    /// A one-request agent whose output is under this (`WEKA_AUX_REDUCTION_OSL_MAX`, 0: off), its
    /// input at least the floor and over `reduction_ratio` times its output is a sidecar too.
    pub reduction_osl_max: u64,
    pub reduction_ratio: f64,
    /// Agents forked off one request that run together, at least this many, are a parallel
    /// group (`WEKA_WORKER_GROUP_MIN`, 0: no groups).
    pub worker_group_min: u64,
}

impl Default for AgentSplit {
    fn default() -> Self {
        Self {
            enabled: true,
            seam_max_gap_s: 3600.0,
            seam_min_overlap: 0.5,
            aux_max_requests: 1,
            aux_isl_ratio: 0.10,
            aux_isl_floor: 16384,
            aux_cross_model: true,
            reduction_osl_max: 4000,
            reduction_ratio: 20.0,
            worker_group_min: 3,
        }
    }
}

impl AgentSplit {
    pub fn is_default(&self) -> bool {
        *self == Self::default()
    }

    /// What is out of AIPerf's bounds, as a message.
    pub fn problem(&self) -> Option<String> {
        let not_at_least_0 = |value: f64| value.is_nan() || value < 0.0;
        if not_at_least_0(self.seam_max_gap_s) {
            return Some(format!("the seam's max gap must be 0 s or more, got {}", self.seam_max_gap_s));
        }
        if !(0.0..=1.0).contains(&self.seam_min_overlap) {
            return Some(format!("the seam's min overlap must be within 0 and 1, got {}", self.seam_min_overlap));
        }
        if not_at_least_0(self.aux_isl_ratio) || not_at_least_0(self.reduction_ratio) {
            return Some(format!(
                "the sidecar ratios must be 0 or more, got {} and {}",
                self.aux_isl_ratio, self.reduction_ratio
            ));
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aiperfs_defaults_and_bounds() {
        let split = AgentSplit::default();
        assert!(split.is_default() && split.problem().is_none());
        assert_eq!(serde_json::from_str::<AgentSplit>(r#"{"worker_group_min": 0}"#).unwrap().worker_group_min, 0);
        let overlap = AgentSplit { seam_min_overlap: 1.5, ..AgentSplit::default() };
        assert!(overlap.problem().unwrap().contains("got 1.5"));
        let gap = AgentSplit { seam_max_gap_s: f64::NAN, ..AgentSplit::default() };
        assert!(gap.problem().unwrap().contains("max gap"));
    }
}
