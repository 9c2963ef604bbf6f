//! The in-phase ramp keys of the phase builders: `ramp` and `prefill_ramp` of `concurrency`
//! (and `warmup`), `ramp`, `series` and `max_concurrency_ramp` of `rate`,
//! `prefill_concurrency` and `prefill_ramp` of a `ramp` (and of `rate`), `max_concurrency_ramp` of a
//! `ramp` of rate; each read into the plan's held ramps (`plan::in_phase_ramps`).

use rhai::Dynamic;

use super::keys::{MapReader, ScriptResult, number, script_error};
use crate::plan::{
    Arrival, LoadMode, PrefillCap, RampedQuantity, RatePoint, closed_loop, held_rate, rate_ramp, rate_series,
};

/// A positive number of seconds at `key`, if given.
fn seconds(r: &mut MapReader, key: &str) -> ScriptResult<Option<f64>> {
    match r.opt_f64(key)? {
        Some(seconds) if !(seconds.is_finite() && seconds > 0.0) => {
            script_error(format!("{}: `{key}` must be a positive duration, e.g. seconds(30)", r.what()))
        }
        seconds => Ok(seconds),
    }
}

/// The prefill cap of `prefill_concurrency`, ramped over `prefill_ramp`.
pub fn prefill_cap(r: &mut MapReader) -> ScriptResult<Option<PrefillCap>> {
    let what = r.what();
    let concurrency = r.opt_u64("prefill_concurrency")?;
    let ramp_s = seconds(r, "prefill_ramp")?;
    match (concurrency, ramp_s) {
        (Some(0), _) => script_error(format!("{what}: `prefill_concurrency` must be at least 1")),
        (None, Some(_)) => script_error(format!("{what}: `prefill_ramp` ramps `prefill_concurrency`; give it too")),
        (concurrency, ramp_s) => Ok(concurrency.map(|n| PrefillCap { concurrency: n as usize, ramp_s })),
    }
}

/// `concurrency(#{ users: 64, ramp: seconds(30), prefill_concurrency: 8, prefill_ramp: seconds(10) })`:
/// users and prefill cap each step up from 1 over their ramp, then hold.
pub fn closed_loop_of(r: &mut MapReader, users: usize) -> ScriptResult<LoadMode> {
    let ramp_s = seconds(r, "ramp")?;
    let prefill = prefill_cap(r)?;
    Ok(closed_loop(users, ramp_s, prefill))
}

/// `rate(#{ rate: 20, ramp: seconds(30) })` climbs to 20 req/s, `rate(#{ series: [[0, 5], [seconds(60), 50]] })`
/// follows the points (after the ramp, when both are given); both then hold.
/// `max_concurrency_ramp` grows the `max_concurrency` cap from 1.
pub fn open_loop_of(
    r: &mut MapReader,
    rate: Option<f64>,
    arrival: Arrival,
    max_concurrency: Option<usize>,
    seed: u64,
) -> ScriptResult<LoadMode> {
    let what = r.what();
    let ramp_s = seconds(r, "ramp")?;
    let cap_ramp_s = seconds(r, "max_concurrency_ramp")?;
    if cap_ramp_s.is_some() && max_concurrency.is_none() {
        return script_error(format!("{what}: `max_concurrency_ramp` ramps `max_concurrency`; give it too"));
    }
    let series = match r.opt_array("series")? {
        Some(items) => Some(points(what, &items)?),
        None => None,
    };
    let (start, stages) = match (rate, series, ramp_s) {
        (Some(_), Some(_), _) => return script_error(format!("{what}: give `rate` or `series`, not both")),
        (None, None, _) => {
            return script_error(format!("{what}: `rate` (requests per second) or `series` is required"));
        }
        (Some(rate), None, _) if !(rate.is_finite() && rate > 0.0) => {
            return script_error(format!("{what}: `rate` must be positive, got {rate}"));
        }
        (Some(rate), None, None) if cap_ramp_s.is_some() => (rate, Vec::new()),
        (Some(rate), None, None) => return Ok(LoadMode::Rate { rate, arrival, max_concurrency, seed, prefill: None }),
        (Some(rate), None, Some(ramp_s)) => rate_ramp(rate, ramp_s),
        (None, Some(points), ramp_s) => match rate_series(&points, ramp_s) {
            Ok(shape) => shape,
            Err(why) => return script_error(format!("{what}: `series`: {why}")),
        },
    };
    Ok(held_rate(start, stages, arrival, (max_concurrency, cap_ramp_s), seed))
}

/// `[[time, rate], ..]`: seconds into the series and requests per second.
fn points(what: &str, items: &[Dynamic]) -> ScriptResult<Vec<RatePoint>> {
    items
        .iter()
        .enumerate()
        .map(|(index, item)| {
            let pair = item.clone().try_cast::<rhai::Array>().unwrap_or_default();
            match pair.as_slice() {
                [time, rate] => match (number(time), number(rate)) {
                    (Some(time_s), Some(rps)) => Ok(RatePoint { time_s, rps }),
                    _ => script_error(format!("{what}: series[{index}] must hold two numbers, got `{item}`")),
                },
                _ => script_error(format!(
                    "{what}: series[{index}] must be a [time, rate] pair like [seconds(10), 5.0], got `{item}`"
                )),
            }
        })
        .collect()
}

/// A `ramp`'s limits: its prefill cap, the ramp of a rate ramp's cap.
pub fn ramp_limits(
    r: &mut MapReader,
    ramped: RampedQuantity,
    max_concurrency: Option<usize>,
) -> ScriptResult<(Option<PrefillCap>, Option<f64>)> {
    let prefill = prefill_cap(r)?;
    let cap_ramp_s = seconds(r, "max_concurrency_ramp")?;
    match ramped {
        RampedQuantity::Concurrency if cap_ramp_s.is_some() => {
            script_error("ramp: `max_concurrency_ramp` applies to rate ramps only")
        }
        _ if cap_ramp_s.is_some() && max_concurrency.is_none() => {
            script_error("ramp: `max_concurrency_ramp` ramps `max_concurrency`; give it too")
        }
        _ => Ok((prefill, cap_ramp_s)),
    }
}
