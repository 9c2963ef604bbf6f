//! `sampled_sweep_points(kind, options)`: the points of a Sobol' or Latin-hypercube design as a
//! list of maps (name → value), the same points a config's `sobol` / `latin_hypercube` sweep
//! draws from the same seed. The stdlib's `sweeps::sobol` and `sweeps::latin_hypercube` call it.

use rhai::{Array, Dynamic, Engine, Map};

use super::keys::{ScriptResult, script_error};
use crate::config::sampled_values;

pub fn register(engine: &mut Engine) {
    engine.register_fn("sampled_sweep_points", |kind: &str, options: Map| -> ScriptResult<Array> {
        let options: serde_json::Value = rhai::serde::from_dynamic(&Dynamic::from_map(options))
            .or_else(|error| script_error(format!("sweeps::{kind}: {error}")))?;
        let points = sampled_values(kind, &options).or_else(|error| script_error(error.message))?;
        points
            .iter()
            .map(|values| {
                rhai::serde::to_dynamic(values).or_else(|error| script_error(format!("sweeps::{kind}: {error}")))
            })
            .collect()
    });
}
