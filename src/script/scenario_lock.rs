//! The `scenario_lock:` key of `run(#{..})`, which `aiperf profile --scenario` writes:
//! `#{ scenario: "inferencex-agentx-mvp", overridden: ["--benchmark-duration: ..."] }`, the
//! AIPerf scenario the run was held to and the conflicts `--unsafe-override` let through.

use rhai::Map;

use super::keys::{MapReader, ScriptResult, script_error};
use crate::plan::ScenarioLock;

const KEYS: &[&str] = &["scenario", "overridden"];

pub fn scenario_lock_of(map: Map) -> ScriptResult<ScenarioLock> {
    let mut r = MapReader::new("scenario_lock", map, KEYS)?;
    let scenario = r.string("scenario")?;
    let mut overridden = Vec::new();
    for item in r.opt_array("overridden")?.unwrap_or_default() {
        match item.clone().into_string() {
            Ok(line) => overridden.push(line),
            Err(_) => {
                return script_error(format!(
                    "scenario_lock: `overridden` holds strings, got {} `{item}`",
                    item.type_name()
                ));
            }
        }
    }
    Ok(ScenarioLock { scenario, overridden })
}
