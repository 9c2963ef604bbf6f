//! A phase's `adaptive_scale` (AIPerf's block, its flat `adaptive_*` fields, and the phase's
//! `sla`) lowered: a concurrency phase (or a rate phase, `control.variable: request_rate`)
//! becomes an adaptive scale phase whose concurrency (rate) the SLA controller moves between
//! `control.min` and `control.max` (the phase's concurrency or rate).

use serde_json::{Map, Value};

use crate::config::ConfigError;
use crate::plan::{AdaptiveControl, AdaptiveScale, LoadMode, RampedQuantity, StepPolicy, sla_filters_of};

/// The block's keys (and its `control` / `strategy` mappings') by the flat phase field each sets.
const BLOCK_FIELDS: &[(&str, &str)] = &[
    ("control_variable", "adaptive_control_variable"),
    ("control_min", "adaptive_control_min"),
    ("control_max", "adaptive_control_max"),
    ("min_concurrency", "adaptive_control_min"),
    ("max_concurrency", "adaptive_control_max"),
    ("window", "adaptive_assessment_period"),
    ("assessment_period", "adaptive_assessment_period"),
    ("min_completed_requests", "adaptive_min_completed_requests"),
    ("sustain_duration", "adaptive_sustain_duration"),
];
const CONTROL_FIELDS: &[(&str, &str)] =
    &[("variable", "adaptive_control_variable"), ("min", "adaptive_control_min"), ("max", "adaptive_control_max")];
const STRATEGY_FIELDS: &[(&str, &str)] = &[
    ("type", "adaptive_scale_strategy_type"),
    ("step_policy", "adaptive_scale_step_policy"),
    ("base_step", "adaptive_scale_base_step"),
    ("max_step_multiplier", "adaptive_scale_max_step_multiplier"),
    ("step_percent", "adaptive_scale_step_percent"),
];

/// `mode` as an adaptive scale phase when the phase enables `adaptive_scale`; else unchanged.
pub fn applied(mode: LoadMode, item: &Value, key: &dyn Fn(&str) -> String) -> Result<LoadMode, ConfigError> {
    let Some(fields) = enabled_fields(item, key)? else { return Ok(mode) };
    let error = |field: &str, why: String| ConfigError::new(format!("{}: {why}", key(field)));
    let text = |name: &str| fields.get(name).and_then(Value::as_str);
    let number = |name: &str| -> Result<Option<f64>, ConfigError> {
        match fields.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(value) => value
                .as_f64()
                .map(Some)
                .ok_or_else(|| error("adaptive_scale", format!("{name}: expected a number, got {value}"))),
        }
    };
    let whole = |name: &str| -> Result<Option<usize>, ConfigError> {
        match number(name)? {
            Some(value) if value.fract() != 0.0 || value < 0.0 => {
                Err(error("adaptive_scale", format!("{name} must be a whole number, got {value}")))
            }
            value => Ok(value.map(|value| value as usize)),
        }
    };
    let variable = text("adaptive_control_variable").unwrap_or("concurrency");
    let (control, inferred_max) = controlled(variable, &mode, &error)?;
    match text("adaptive_scale_strategy_type") {
        None | Some("ramp_until_fail") => {}
        Some(other) => return Err(error("adaptive_scale.strategy.type", format!("`{other}`: only ramp_until_fail"))),
    }
    let Some(sustain_s) = number("adaptive_sustain_duration")? else {
        return Err(error("adaptive_scale.sustain_duration", "adaptive_scale requires a sustain duration".into()));
    };
    let sla = match item.get("sla").filter(|sla| !sla.is_null()).or(fields.get("sla")) {
        Some(sla) => sla_filters_of(sla).map_err(|why| error("sla", why))?,
        None => Vec::new(),
    };
    let min = number("adaptive_control_min")?.unwrap_or(1.0);
    let max = number("adaptive_control_max")?.unwrap_or(inferred_max);
    let defaults = AdaptiveScale::new(control, min, max, sustain_s, sla);
    let step_policy = match text("adaptive_scale_step_policy") {
        Some(name) => StepPolicy::parse(name).map_err(|why| error("adaptive_scale.strategy.step_policy", why))?,
        None => defaults.step_policy,
    };
    let settings = AdaptiveScale {
        assessment_period_s: number("adaptive_assessment_period")?.unwrap_or(defaults.assessment_period_s),
        min_completed_requests: whole("adaptive_min_completed_requests")?
            .map_or(defaults.min_completed_requests, |n| n as u64),
        step_policy,
        base_step: whole("adaptive_scale_base_step")?.unwrap_or(defaults.base_step),
        max_step_multiplier: whole("adaptive_scale_max_step_multiplier")?.unwrap_or(defaults.max_step_multiplier),
        step_percent: number("adaptive_scale_step_percent")?.unwrap_or(defaults.step_percent),
        ..defaults
    };
    if let Some(mistake) = settings.mistake() {
        return Err(error("adaptive_scale", mistake));
    }
    Ok(LoadMode::AdaptiveScale(settings))
}

/// What a phase's `control.variable` moves, and its highest value when `control.max` leaves
/// it to the phase (AIPerf: its concurrency, or its rate).
fn controlled(
    variable: &str,
    mode: &LoadMode,
    error: &dyn Fn(&str, String) -> ConfigError,
) -> Result<(AdaptiveControl, f64), ConfigError> {
    let variable_key = "adaptive_scale.control.variable";
    match (variable, mode) {
        ("concurrency", LoadMode::Concurrency { prefill_concurrency: Some(_), .. }) => Err(error(
            "prefill_concurrency",
            "an adaptive_scale phase moving `concurrency` takes no prefill_concurrency".into(),
        )),
        ("concurrency", LoadMode::Concurrency { concurrency, .. }) => {
            Ok((AdaptiveControl::Concurrency, *concurrency as f64))
        }
        ("concurrency", LoadMode::Ramp { ramped: RampedQuantity::Concurrency, .. }) => Err(error(
            "concurrency_ramp",
            "adaptive_scale cannot be combined with concurrency_ramp; control.variable=concurrency already adjusts concurrency".into(),
        )),
        ("request_rate", LoadMode::Rate { prefill: Some(_), .. }) => Err(error(
            "prefill_concurrency",
            "an adaptive_scale phase moving `request_rate` takes no prefill_concurrency".into(),
        )),
        ("request_rate", LoadMode::Rate { rate, arrival, max_concurrency, seed, prefill: None }) => Ok((
            AdaptiveControl::RequestRate { arrival: *arrival, seed: *seed, max_concurrency: *max_concurrency },
            *rate,
        )),
        ("request_rate", LoadMode::Ramp { ramped: RampedQuantity::Rate, .. }) => Err(error(
            "rate_ramp",
            "adaptive_scale cannot be combined with rate_ramp; control.variable=request_rate already adjusts the rate".into(),
        )),
        ("request_rate", _) => {
            Err(error(variable_key, "request_rate needs a rate phase (`type: poisson` or `constant` with a `rate`)".into()))
        }
        ("concurrency", _) => Err(error(
            "type",
            "adaptive_scale moves a concurrency phase's concurrency, or a rate phase's rate with control.variable: request_rate".into(),
        )),
        ("prefill_concurrency" | "users", _) => Err(error(
            variable_key,
            format!(
                "`{variable}` is a control variable of AIPerf 0.13 this project does not move yet; concurrency and request_rate work"
            ),
        )),
        (other, _) => Err(error(
            variable_key,
            format!("`{other}` is not a control variable; concurrency, prefill_concurrency, request_rate or users"),
        )),
    }
}

/// The phase's flat `adaptive_*` fields with its block's over them (its SLAs under `sla`);
/// None when adaptive scale is off.
fn enabled_fields(item: &Value, key: &dyn Fn(&str) -> String) -> Result<Option<Map<String, Value>>, ConfigError> {
    let error = |field: &str, why: String| ConfigError::new(format!("{}: {why}", key(field)));
    let mut fields: Map<String, Value> = item
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(name, _)| name.starts_with("adaptive_"))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let block = match fields.remove("adaptive_scale") {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Object(block)) => block,
        Some(flag) => {
            return if enabled(&flag).map_err(|why| error("adaptive_scale", why))? {
                Ok(Some(fields))
            } else {
                Ok(None)
            };
        }
    };
    if !enabled(block.get("enabled").unwrap_or(&Value::Bool(true)))
        .map_err(|why| error("adaptive_scale.enabled", why))?
    {
        return Ok(None);
    }
    copy(&block, "adaptive_scale", BLOCK_FIELDS, &["enabled", "control", "strategy", "sla"], &mut fields, key)?;
    for (nested, map) in [("control", CONTROL_FIELDS), ("strategy", STRATEGY_FIELDS)] {
        match block.get(nested) {
            None | Some(Value::Null) => {}
            Some(Value::Object(inner)) => copy(inner, &format!("adaptive_scale.{nested}"), map, &[], &mut fields, key)?,
            Some(other) => {
                return Err(error(&format!("adaptive_scale.{nested}"), format!("expected a mapping, got {other}")));
            }
        }
    }
    if let Some(sla) = block.get("sla") {
        fields.insert("sla".to_string(), sla.clone());
    }
    Ok(Some(fields))
}

/// Copy `source`'s keys to the flat fields they name; any key neither named nor in `also` is refused.
fn copy(
    source: &Map<String, Value>,
    scope: &str,
    names: &[(&str, &str)],
    also: &[&str],
    fields: &mut Map<String, Value>,
    key: &dyn Fn(&str) -> String,
) -> Result<(), ConfigError> {
    for (name, value) in source {
        match names.iter().find(|(block_name, _)| block_name == name) {
            Some((_, flat)) => {
                fields.insert(flat.to_string(), value.clone());
            }
            None if also.contains(&name.as_str()) => {}
            None => {
                let known: Vec<&str> = names.iter().map(|(name, _)| *name).chain(also.iter().copied()).collect();
                return Err(ConfigError::new(format!(
                    "{}: unknown key `{name}`; it takes {}",
                    key(scope),
                    known.join(", ")
                )));
            }
        }
    }
    Ok(())
}

/// AIPerf's reading of `enabled`: a boolean, or yes/no words.
fn enabled(value: &Value) -> Result<bool, String> {
    match value {
        Value::Bool(flag) => Ok(*flag),
        Value::String(word) => match word.trim().to_lowercase().as_str() {
            "true" | "yes" | "on" | "1" => Ok(true),
            "false" | "no" | "off" | "0" => Ok(false),
            _ => Err(format!("expected true or false, got `{word}`")),
        },
        other => Err(format!("expected true or false, got {other}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lowered(phase: Value) -> Result<LoadMode, ConfigError> {
        let key = |field: &str| format!("phases.profiling.{field}");
        applied(LoadMode::Concurrency { concurrency: 64, prefill_concurrency: None }, &phase, &key)
    }

    #[test]
    fn the_block_and_the_flat_fields_lower_alike() {
        let block = serde_json::json!({
            "duration": 60,
            "adaptive_scale": {
                "control": {"min": 2},
                "strategy": {"step_policy": "fixed_percent_step", "step_percent": 50},
                "window": 1, "sustain_duration": 5,
                "sla": {"time_to_first_token": {"p95": {"lt": 200}}},
            },
        });
        let flat = serde_json::json!({
            "adaptive_scale": true, "adaptive_control_min": 2, "adaptive_scale_step_policy": "fixed_percent_step",
            "adaptive_scale_step_percent": 50, "adaptive_assessment_period": 1, "adaptive_sustain_duration": 5,
            "sla": [{"metric_tag": "time_to_first_token", "stat": "p95", "op": "lt", "threshold": 200}],
        });
        let (Ok(LoadMode::AdaptiveScale(from_block)), Ok(LoadMode::AdaptiveScale(from_flat))) =
            (lowered(block), lowered(flat))
        else {
            panic!("both enable adaptive scale");
        };
        assert_eq!(from_block, from_flat);
        assert_eq!((from_block.control_min, from_block.control_max), (2.0, 64.0), "max defaults to the concurrency");
        assert_eq!(from_block.step_policy, StepPolicy::FixedPercentStep);
        assert_eq!(from_block.assessment_period_s, 1.0);
    }

    #[test]
    fn off_unknown_and_unsupported_settings() {
        let off = serde_json::json!({"adaptive_scale": {"enabled": "no", "sustain_duration": 1}});
        assert!(matches!(lowered(off), Ok(LoadMode::Concurrency { .. })));
        let stray = serde_json::json!({"adaptive_scale": {"sustain_duration": 1, "target": 3}});
        assert!(lowered(stray).unwrap_err().to_string().contains("unknown key `target`"));
        let users = serde_json::json!({"adaptive_scale": {"control": {"variable": "users"}, "sustain_duration": 1}});
        assert!(
            lowered(users.clone())
                .unwrap_err()
                .to_string()
                .contains("phases.profiling.adaptive_scale.control.variable")
        );
        let users = lowered(users).unwrap_err().to_string();
        assert!(users.contains("`users` is a control variable of AIPerf 0.13"), "{users}");
        let no_sla = serde_json::json!({"adaptive_scale": {"sustain_duration": 1}});
        assert!(lowered(no_sla).unwrap_err().to_string().contains("SLA filter"));
    }

    #[test]
    fn request_rate_moves_a_rate_phase_up_to_its_rate() {
        let key = |field: &str| format!("phases.profiling.{field}");
        let rate = LoadMode::Rate {
            rate: 40.0,
            arrival: crate::plan::Arrival::Poisson,
            max_concurrency: Some(64),
            seed: 7,
            prefill: None,
        };
        let phase = serde_json::json!({"adaptive_scale": {"control": {"variable": "request_rate", "min": 0.5},
            "sustain_duration": 5, "sla": {"time_to_first_token": {"p95": {"lt": 200}}}}});
        let Ok(LoadMode::AdaptiveScale(settings)) = applied(rate.clone(), &phase, &key) else { panic!("lowered") };
        let control =
            AdaptiveControl::RequestRate { arrival: crate::plan::Arrival::Poisson, seed: 7, max_concurrency: Some(64) };
        assert_eq!((settings.control, settings.control_min, settings.control_max), (control, 0.5, 40.0));
        let on_users = applied(LoadMode::Concurrency { concurrency: 8, prefill_concurrency: None }, &phase, &key);
        assert!(on_users.unwrap_err().to_string().contains("request_rate needs a rate phase"));
        let unasked = serde_json::json!({"adaptive_scale": {"sustain_duration": 5}, "sla": {"time_to_first_token": {"p95": {"lt": 200}}}});
        assert!(applied(rate, &unasked, &key).unwrap_err().to_string().contains("control.variable: request_rate"));
    }
}
