//! How a mooncake trace is reshaped before it is replayed (AIPerf's `synthesis:` of a file
//! dataset): faster or slower timestamps, longer or shorter shared prefixes and prompts, more
//! prefix roots, scaled outputs, and ISL/OSL limits.

use serde::{Deserialize, Serialize};

/// AIPerf's `SynthesisConfig`, its keys and defaults.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct TraceSynthesis {
    /// Timestamps are divided by this (2 replays twice as fast).
    pub speedup_ratio: f64,
    /// Each request's shared prefix blocks are stretched (or cut) by this factor.
    pub prefix_len_multiplier: f64,
    /// Requests are spread over this many independent copies of the prefix tree.
    pub prefix_root_multiplier: u32,
    /// Each request's unshared tokens are scaled by this factor.
    pub prompt_len_multiplier: f64,
    /// Each `output_length` is scaled by this factor (at least 1 token).
    pub output_len_multiplier: f64,
    /// Requests whose `input_length` is above this are dropped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_isl: Option<u64>,
    /// Each `output_length` above this is cut to it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_osl: Option<u64>,
}

impl Default for TraceSynthesis {
    fn default() -> Self {
        TraceSynthesis {
            speedup_ratio: 1.0,
            prefix_len_multiplier: 1.0,
            prefix_root_multiplier: 1,
            prompt_len_multiplier: 1.0,
            output_len_multiplier: 1.0,
            max_isl: None,
            max_osl: None,
        }
    }
}

impl TraceSynthesis {
    /// Whether any of the five reshaping settings differs from its default (AIPerf rewrites
    /// the trace only then; the ISL/OSL limits apply either way).
    pub fn reshapes(&self) -> bool {
        let unit = TraceSynthesis::default();
        self.speedup_ratio != unit.speedup_ratio
            || self.prefix_len_multiplier != unit.prefix_len_multiplier
            || self.prefix_root_multiplier != unit.prefix_root_multiplier
            || self.prompt_len_multiplier != unit.prompt_len_multiplier
            || self.output_len_multiplier != unit.output_len_multiplier
    }

    /// Only the ISL/OSL limits, as AIPerf's weka loader reads them; None when neither is set.
    pub fn length_limits(&self) -> Option<TraceSynthesis> {
        (self.max_isl.is_some() || self.max_osl.is_some()).then(|| TraceSynthesis {
            max_isl: self.max_isl,
            max_osl: self.max_osl,
            ..TraceSynthesis::default()
        })
    }

    /// The first setting outside what AIPerf accepts: its key and what is wrong with it.
    pub fn problem(&self) -> Option<(&'static str, String)> {
        let positive = [
            ("speedup_ratio", self.speedup_ratio),
            ("prefix_len_multiplier", self.prefix_len_multiplier),
            ("prompt_len_multiplier", self.prompt_len_multiplier),
        ];
        if let Some((key, value)) = positive.into_iter().find(|(_, value)| !(value.is_finite() && *value > 0.0)) {
            return Some((key, format!("must be above 0, got {value}")));
        }
        if !(self.output_len_multiplier.is_finite() && self.output_len_multiplier >= 0.0) {
            return Some(("output_len_multiplier", format!("must be 0 or more, got {}", self.output_len_multiplier)));
        }
        if self.prefix_root_multiplier == 0 {
            return Some(("prefix_root_multiplier", "must be at least 1".to_string()));
        }
        [("max_isl", self.max_isl), ("max_osl", self.max_osl)]
            .into_iter()
            .find(|(_, limit)| *limit == Some(0))
            .map(|(key, _)| (key, "must be at least 1".to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_reshape_nothing_and_bad_values_are_named() {
        let unit = TraceSynthesis::default();
        assert!(!unit.reshapes() && unit.problem().is_none());
        assert!(!TraceSynthesis { max_isl: Some(100), ..unit.clone() }.reshapes(), "limits alone do not reshape");
        assert!(TraceSynthesis { speedup_ratio: 2.0, ..unit.clone() }.reshapes());
        let zero_speed = TraceSynthesis { speedup_ratio: 0.0, ..unit.clone() };
        assert_eq!(zero_speed.problem(), Some(("speedup_ratio", "must be above 0, got 0".to_string())));
        let no_roots = TraceSynthesis { prefix_root_multiplier: 0, ..unit.clone() };
        assert_eq!(no_roots.problem(), Some(("prefix_root_multiplier", "must be at least 1".to_string())));
        let no_osl = TraceSynthesis { max_osl: Some(0), ..unit };
        assert_eq!(no_osl.problem(), Some(("max_osl", "must be at least 1".to_string())));
    }

    #[test]
    fn unset_keys_take_their_defaults() {
        let read: TraceSynthesis = serde_json::from_str(r#"{"speedup_ratio": 2}"#).unwrap();
        assert_eq!(read, TraceSynthesis { speedup_ratio: 2.0, ..TraceSynthesis::default() });
    }
}
