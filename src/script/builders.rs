//! The plan builders a scenario calls: `endpoint` (in `endpoint.rs`), `synthetic` (the phases are in
//! `phases.rs`).
//! Each validates its map and returns a typed value that `run(#{..})` accepts.

use rhai::{Engine, Map};

use super::keys::{MapReader, ScriptResult, number, script_error};
use crate::plan::{Dataset, Dist, Endpoint, Phase, SyntheticDataset};

pub fn register(engine: &mut Engine) {
    engine
        .register_type_with_name::<Endpoint>("Endpoint")
        .register_fn("to_string", |e: &mut Endpoint| json_text(e))
        .register_fn("to_debug", |e: &mut Endpoint| json_text(e))
        .register_type_with_name::<Dataset>("Dataset")
        .register_fn("to_string", |d: &mut Dataset| json_text(d))
        .register_fn("to_debug", |d: &mut Dataset| json_text(d))
        .register_type_with_name::<Phase>("Phase")
        .register_fn("to_string", |p: &mut Phase| json_text(p))
        .register_fn("to_debug", |p: &mut Phase| json_text(p));
    engine.register_fn("endpoint", super::endpoint::endpoint);
    engine.register_fn("synthetic", synthetic);
}

fn json_text<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

const SYNTHETIC_KEYS: &[&str] = &["isl", "osl", "seed", "entries", "images"];

/// `synthetic(#{ isl: normal(550, 50), osl: fixed(256), seed: 42, entries: 100 })`
fn synthetic(map: Map) -> ScriptResult<Dataset> {
    let mut r = MapReader::new("synthetic", map, SYNTHETIC_KEYS)?;
    let isl = length_dist(&mut r, "isl", 550.0)?;
    let osl = length_dist(&mut r, "osl", 150.0)?;
    let random_seed = r.opt_u64("seed")?.unwrap_or(0);
    let entries = r.opt_u64("entries")?.unwrap_or(100).max(1) as usize;
    let images = r.opt_map("images")?.map(super::images::image_settings).transpose()?;
    Ok(Dataset::Synthetic(SyntheticDataset { isl, osl, random_seed, entries, images }))
}

/// A token length: a number (fixed) or `normal(mean, stddev)`.
fn length_dist(r: &mut MapReader, key: &str, default_mean: f64) -> ScriptResult<Dist> {
    let what = r.what();
    let dist = if let Ok(Some(n)) = r.opt_f64(key) {
        Dist { mean: n, stddev: 0.0 }
    } else if let Some(map) = r.opt_map(key)? {
        let mean = map.get("mean").and_then(number);
        let stddev = map.get("stddev").and_then(number).unwrap_or(0.0);
        match mean {
            Some(mean) => Dist { mean, stddev },
            None => return script_error(format!("{what}: `{key}` must be a number or normal(mean, stddev)")),
        }
    } else {
        Dist { mean: default_mean, stddev: 0.0 }
    };
    if dist.mean.is_nan() || dist.mean < 1.0 {
        return script_error(format!("{what}: `{key}` mean must be at least 1 token, got {}", dist.mean));
    }
    Ok(dist)
}
