//! `file(#{ .., agent_split: false })` or `agent_split: #{ seam_max_gap_s: 600, worker_group_min: 0, .. }`:
//! how a weka or TraceLab trace's flattened agents are split apart (`plan::AgentSplit`; on, with
//! AIPerf's settings, by default).

use rhai::Dynamic;

use super::keys::{MapReader, ScriptResult, script_error};
use crate::plan::AgentSplit;

const KEYS: &[&str] = &[
    "enabled",
    "seam_max_gap_s",
    "seam_min_overlap",
    "aux_max_requests",
    "aux_isl_ratio",
    "aux_isl_floor",
    "aux_cross_model",
    "reduction_osl_max",
    "reduction_ratio",
    "worker_group_min",
];

/// The `agent_split` value: a switch or a map of settings (those left out keep AIPerf's).
pub fn agent_split(value: Option<Dynamic>) -> ScriptResult<AgentSplit> {
    let defaults = AgentSplit::default();
    let Some(value) = value else { return Ok(defaults) };
    if let Ok(enabled) = value.as_bool() {
        return Ok(AgentSplit { enabled, ..defaults });
    }
    let Some(map) = value.clone().try_cast::<rhai::Map>() else {
        return script_error(format!(
            "file: `agent_split` must be true, false or a map, got {} `{value}`",
            value.type_name()
        ));
    };
    let mut r = MapReader::new("agent_split", map, KEYS)?;
    let split = AgentSplit {
        enabled: r.opt_bool("enabled")?.unwrap_or(defaults.enabled),
        seam_max_gap_s: r.opt_f64("seam_max_gap_s")?.unwrap_or(defaults.seam_max_gap_s),
        seam_min_overlap: r.opt_f64("seam_min_overlap")?.unwrap_or(defaults.seam_min_overlap),
        aux_max_requests: r.opt_u64("aux_max_requests")?.unwrap_or(defaults.aux_max_requests),
        aux_isl_ratio: r.opt_f64("aux_isl_ratio")?.unwrap_or(defaults.aux_isl_ratio),
        aux_isl_floor: r.opt_u64("aux_isl_floor")?.unwrap_or(defaults.aux_isl_floor),
        aux_cross_model: r.opt_bool("aux_cross_model")?.unwrap_or(defaults.aux_cross_model),
        reduction_osl_max: r.opt_u64("reduction_osl_max")?.unwrap_or(defaults.reduction_osl_max),
        reduction_ratio: r.opt_f64("reduction_ratio")?.unwrap_or(defaults.reduction_ratio),
        worker_group_min: r.opt_u64("worker_group_min")?.unwrap_or(defaults.worker_group_min),
    };
    match split.problem() {
        Some(problem) => script_error(format!("agent_split: {problem}")),
        None => Ok(split),
    }
}

/// The `agent_split` value that gives `split` back (`false`, or a map of what differs).
pub fn emitted(split: &AgentSplit) -> String {
    let defaults = AgentSplit::default();
    if !split.enabled {
        return "false".into();
    }
    let mut keys = Vec::new();
    let mut float = |key: &str, value: f64, default: f64| {
        if value != default {
            keys.push(format!("{key}: {value:?}"));
        }
    };
    float("seam_max_gap_s", split.seam_max_gap_s, defaults.seam_max_gap_s);
    float("seam_min_overlap", split.seam_min_overlap, defaults.seam_min_overlap);
    float("aux_isl_ratio", split.aux_isl_ratio, defaults.aux_isl_ratio);
    float("reduction_ratio", split.reduction_ratio, defaults.reduction_ratio);
    let whole = [
        ("aux_max_requests", split.aux_max_requests, defaults.aux_max_requests),
        ("aux_isl_floor", split.aux_isl_floor, defaults.aux_isl_floor),
        ("reduction_osl_max", split.reduction_osl_max, defaults.reduction_osl_max),
        ("worker_group_min", split.worker_group_min, defaults.worker_group_min),
    ];
    keys.extend(
        whole.iter().filter(|(_, value, default)| value != default).map(|(key, value, _)| format!("{key}: {value}")),
    );
    if split.aux_cross_model != defaults.aux_cross_model {
        keys.push(format!("aux_cross_model: {}", split.aux_cross_model));
    }
    format!("#{{ {} }}", keys.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_switch_or_a_map_and_back() {
        assert!(agent_split(None).unwrap().is_default());
        let off = agent_split(Some(Dynamic::from(false))).unwrap();
        assert!(!off.enabled);
        assert_eq!(emitted(&off), "false");
        let engine = rhai::Engine::new();
        let map: rhai::Map =
            engine.eval("#{ seam_max_gap_s: 600, worker_group_min: 0, aux_cross_model: false }").unwrap();
        let split = agent_split(Some(Dynamic::from(map))).unwrap();
        assert_eq!((split.seam_max_gap_s, split.worker_group_min, split.aux_cross_model), (600.0, 0, false));
        let text = emitted(&split);
        let back: rhai::Map = engine.eval(&text).unwrap();
        assert_eq!(agent_split(Some(Dynamic::from(back))).unwrap(), split, "{text}");
        let bad: rhai::Map = engine.eval("#{ seam_min_overlap: 2.0 }").unwrap();
        let error = agent_split(Some(Dynamic::from(bad))).unwrap_err().to_string();
        assert!(error.contains("agent_split: the seam's min overlap must be within 0 and 1, got 2"), "{error}");
        let error = agent_split(Some(Dynamic::from("no"))).unwrap_err().to_string();
        assert!(error.contains("`agent_split` must be true, false or a map"), "{error}");
    }
}
