//! Distributions in scenarios: `normal(mean, stddev)`, `fixed(value)`, `lognormal(mean,
//! median)`, `uniform(low, high)`, `ratio_window(mean, ratio)`, `mixture([dists], [weights])`,
//! `empirical([values], [weights])` and
//! `bounded(dist, min, max)` build the maps that `dist_of` reads into a `plan::Dist` (the
//! same reading as a config's distributions).

use rhai::{Array, Dynamic, Engine, Map};

use super::keys::{MapReader, ScriptResult, number, script_error};
use crate::plan::Dist;

pub fn register(engine: &mut Engine) {
    engine.register_fn("normal", |mean: Dynamic, stddev: Dynamic| normal(&mean, &stddev));
    engine.register_fn("fixed", |value: Dynamic| normal(&value, &Dynamic::from(0_i64)));
    engine.register_fn("lognormal", |mean: Dynamic, median: Dynamic| lognormal(&mean, &median));
    engine.register_fn("uniform", |low: Dynamic, high: Dynamic| uniform(&low, &high));
    engine.register_fn("ratio_window", |mean: Dynamic, ratio: Dynamic| ratio_window(&mean, &ratio));
    engine.register_fn("mixture", |dists: Array, weights: Array| mixture(dists, weights));
    engine.register_fn("empirical", |values: Array, weights: Array| empirical(values, weights));
    engine.register_fn("bounded", bounded);
}

/// The distribution under `key` (a number is a fixed value); `default` (fixed) when absent.
pub fn dist_of(r: &mut MapReader, key: &str, default: f64) -> ScriptResult<Dist> {
    let what = r.what();
    let Some(value) = r.opt_value(key) else { return Ok(Dist::fixed(default)) };
    dist_from(&value).or_else(|problem| script_error(format!("{what}: `{key}`: {problem}")))
}

/// A distribution as the builders above make it, or a number (a fixed value).
pub fn dist_from(value: &Dynamic) -> Result<Dist, String> {
    let fields = rhai::serde::from_dynamic::<serde_json::Value>(value).map_err(|err| err.to_string())?;
    Dist::from_fields(&fields)
}

/// A conversation's `turns` (at least 1, default 1) and the wait under `wait_key` after each
/// answer (at least 0 s, default 0), as `users` and `synthetic` take them.
pub fn turns_and_wait(r: &mut MapReader, wait_key: &str) -> ScriptResult<(Dist, Dist)> {
    let what = r.what();
    let turns = dist_of(r, "turns", 1.0)?;
    if turns.mean().is_nan() || turns.mean() < 1.0 {
        return script_error(format!("{what}: `turns` must be at least 1, got {}", turns.mean()));
    }
    let wait_s = dist_of(r, wait_key, 0.0)?;
    if wait_s.mean().is_nan() || wait_s.mean() < 0.0 {
        return script_error(format!("{what}: `{wait_key}` cannot be negative"));
    }
    Ok((turns, wait_s))
}

fn numbers<const N: usize>(what: &str, values: [&Dynamic; N]) -> ScriptResult<[f64; N]> {
    let mut out = [0.0; N];
    for (slot, value) in out.iter_mut().zip(values) {
        match number(value) {
            Some(n) => *slot = n,
            None => return script_error(format!("{what} needs numbers, got `{value}`")),
        }
    }
    Ok(out)
}

fn map_of(pairs: &[(&str, Dynamic)]) -> Map {
    pairs.iter().map(|(key, value)| ((*key).into(), value.clone())).collect()
}

/// `#{ mean, stddev }`.
fn normal(mean: &Dynamic, stddev: &Dynamic) -> ScriptResult<Map> {
    let [mean, stddev] = numbers("a distribution", [mean, stddev])?;
    if stddev < 0.0 {
        return script_error(format!("a distribution's stddev cannot be negative ({stddev})"));
    }
    Ok(map_of(&[("mean", Dynamic::from(mean)), ("stddev", Dynamic::from(stddev))]))
}

/// `#{ mean, median }`.
fn lognormal(mean: &Dynamic, median: &Dynamic) -> ScriptResult<Map> {
    let [mean, median] = numbers("lognormal(mean, median)", [mean, median])?;
    if !(median > 0.0 && median <= mean) {
        return script_error(format!("lognormal(mean, median) needs 0 < median <= mean, got {mean} and {median}"));
    }
    Ok(map_of(&[("mean", Dynamic::from(mean)), ("median", Dynamic::from(median))]))
}

/// `#{ low, high }`: whole numbers, both ends included.
fn uniform(low: &Dynamic, high: &Dynamic) -> ScriptResult<Map> {
    let [low, high] = numbers("uniform(low, high)", [low, high])?;
    match Dist::uniform(low, high).problem() {
        Some(problem) => script_error(format!("uniform(low, high): {problem}")),
        None => Ok(map_of(&[("low", Dynamic::from(low)), ("high", Dynamic::from(high))])),
    }
}

/// `#{ mean, ratio }`: vLLM's `--random-range-ratio` window around `mean` (an ISL's, drawn around
/// the mean less the tokenizer's leading tokens).
fn ratio_window(mean: &Dynamic, ratio: &Dynamic) -> ScriptResult<Map> {
    let [mean, ratio] = numbers("ratio_window(mean, ratio)", [mean, ratio])?;
    match Dist::ratio_window(mean, ratio).problem() {
        Some(problem) => script_error(format!("ratio_window(mean, ratio): {problem}")),
        None => Ok(map_of(&[("mean", Dynamic::from(mean)), ("ratio", Dynamic::from(ratio))])),
    }
}

/// Relative weights, one per item (all 1 when the array is empty).
fn weights_for(what: &str, count: usize, weights: Array) -> ScriptResult<Vec<f64>> {
    if weights.is_empty() {
        return Ok(vec![1.0; count]);
    }
    if weights.len() != count {
        return script_error(format!("{what}: {count} items but {} weights", weights.len()));
    }
    weights.iter().map(|weight| numbers(what, [weight]).map(|[weight]| weight)).collect()
}

/// `#{ peaks: [dist + weight, ..] }`.
fn mixture(dists: Array, weights: Array) -> ScriptResult<Map> {
    let weights = weights_for("mixture(dists, weights)", dists.len(), weights)?;
    let mut peaks = Array::new();
    for (dist, weight) in dists.into_iter().zip(weights) {
        let Some(mut peak) = dist.try_cast::<Map>() else {
            return script_error("mixture(dists, weights): each dist is normal(..), lognormal(..), fixed(..) or a map");
        };
        peak.insert("weight".into(), Dynamic::from(weight));
        peaks.push(Dynamic::from(peak));
    }
    Ok(map_of(&[("peaks", Dynamic::from(peaks))]))
}

/// `#{ points: [#{ value, weight }, ..] }`.
fn empirical(values: Array, weights: Array) -> ScriptResult<Map> {
    let weights = weights_for("empirical(values, weights)", values.len(), weights)?;
    let mut points = Array::new();
    for (value, weight) in values.iter().zip(weights) {
        let [value] = numbers("empirical(values, weights)", [value])?;
        points.push(Dynamic::from(map_of(&[("value", Dynamic::from(value)), ("weight", Dynamic::from(weight))])));
    }
    Ok(map_of(&[("points", Dynamic::from(points))]))
}

/// `dist` with `min` and `max` added (`()` leaves that side open).
fn bounded(mut dist: Map, min: Dynamic, max: Dynamic) -> ScriptResult<Map> {
    for (key, bound) in [("min", min), ("max", max)] {
        if bound.is_unit() {
            continue;
        }
        let [bound] = numbers("bounded(dist, min, max)", [&bound])?;
        dist.insert(key.into(), Dynamic::from(bound));
    }
    Ok(dist)
}
