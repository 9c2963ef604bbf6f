//! `file(#{ .., subagent_join: false })` or `subagent_join: #{ codex: false, min_spawn_ms: 5000 }`:
//! how a TraceLab file's sessions are joined into sub-agents (`plan::SubagentJoin`; on, with
//! AIPerf's settings, by default).

use rhai::Dynamic;

use super::keys::{MapReader, ScriptResult, script_error};
use crate::plan::SubagentJoin;

const KEYS: &[&str] = &["enabled", "codex", "min_spawn_ms"];

/// The `subagent_join` value: a switch or a map of settings (those left out keep AIPerf's).
pub fn subagent_join(value: Option<Dynamic>) -> ScriptResult<SubagentJoin> {
    let defaults = SubagentJoin::default();
    let Some(value) = value else { return Ok(defaults) };
    if let Ok(enabled) = value.as_bool() {
        return Ok(SubagentJoin { enabled, ..defaults });
    }
    let Some(map) = value.clone().try_cast::<rhai::Map>() else {
        return script_error(format!(
            "file: `subagent_join` must be true, false or a map, got {} `{value}`",
            value.type_name()
        ));
    };
    let mut r = MapReader::new("subagent_join", map, KEYS)?;
    Ok(SubagentJoin {
        enabled: r.opt_bool("enabled")?.unwrap_or(defaults.enabled),
        codex: r.opt_bool("codex")?.unwrap_or(defaults.codex),
        min_spawn_ms: r.opt_u64("min_spawn_ms")?.unwrap_or(defaults.min_spawn_ms),
    })
}

/// The `subagent_join` value that gives `join` back (`false`, or a map of what differs).
pub fn emitted(join: &SubagentJoin) -> String {
    let defaults = SubagentJoin::default();
    if !join.enabled {
        return "false".into();
    }
    let mut keys = Vec::new();
    if join.codex != defaults.codex {
        keys.push(format!("codex: {}", join.codex));
    }
    if join.min_spawn_ms != defaults.min_spawn_ms {
        keys.push(format!("min_spawn_ms: {}", join.min_spawn_ms));
    }
    format!("#{{ {} }}", keys.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_switch_or_a_map_and_back() {
        assert!(subagent_join(None).unwrap().is_default());
        let off = subagent_join(Some(Dynamic::from(false))).unwrap();
        assert!(!off.enabled);
        assert_eq!(emitted(&off), "false");
        let engine = rhai::Engine::new();
        let map: rhai::Map = engine.eval("#{ codex: false, min_spawn_ms: 2500 }").unwrap();
        let join = subagent_join(Some(Dynamic::from(map))).unwrap();
        assert_eq!(join, SubagentJoin { enabled: true, codex: false, min_spawn_ms: 2500 });
        let text = emitted(&join);
        let back: rhai::Map = engine.eval(&text).unwrap();
        assert_eq!(subagent_join(Some(Dynamic::from(back))).unwrap(), join, "{text}");
        let error = subagent_join(Some(Dynamic::from(3_i64))).unwrap_err().to_string();
        assert!(error.contains("`subagent_join` must be true, false or a map"), "{error}");
        let bad: rhai::Map = engine.eval("#{ min_spawn: 5 }").unwrap();
        assert!(subagent_join(Some(Dynamic::from(bad))).is_err());
    }
}
