//! `slos: #{ metric: objective }` in `run(#{..})`: per-request SLOs for goodput. Time metrics
//! take seconds (write `ms(200)`) and are stored in the metric's unit (ms); other metrics take
//! their own unit.

use std::collections::BTreeMap;

use rhai::Map;

use super::keys::{ScriptResult, number, script_error};
use crate::metrics::goodput::is_slo_metric;
use crate::metrics::registry;
use crate::suggest::closest;

const MS_PER_SEC: f64 = 1000.0;

/// The plan's SLOs (tag → objective in the metric's unit) from the script's map.
pub fn slos_of(map: Map) -> ScriptResult<BTreeMap<String, f64>> {
    let mut slos = BTreeMap::new();
    for (key, value) in map {
        let Some(def) = registry::metric(&key).filter(|def| is_slo_metric(def)) else {
            let names: Vec<&str> = registry::METRICS.iter().filter(|d| is_slo_metric(d)).map(|d| d.tag).collect();
            let hint = closest(&key, &names).map(|near| format!(" (did you mean `{near}`?)")).unwrap_or_default();
            return script_error(format!(
                "run: `slos` has no per-request metric `{key}`{hint}; SLOs take {}",
                names.join(", ")
            ));
        };
        let Some(objective) = number(&value).filter(|n| n.is_finite() && *n >= 0.0) else {
            return script_error(format!("run: `slos.{key}` must be a number ≥ 0, got `{value}`"));
        };
        let in_unit = if def.unit == "ms" { objective * MS_PER_SEC } else { objective };
        slos.insert(key.to_string(), in_unit);
    }
    Ok(slos)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rhai::Dynamic;

    fn map(entries: &[(&str, Dynamic)]) -> Map {
        entries.iter().map(|(k, v)| ((*k).into(), v.clone())).collect()
    }

    #[test]
    fn seconds_become_ms_and_other_units_stay() {
        let slos = slos_of(map(&[
            ("time_to_first_token", Dynamic::from(0.2)),
            ("request_latency", Dynamic::from(5_i64)),
            ("output_token_throughput_per_user", Dynamic::from(30.0)),
        ]))
        .unwrap();
        assert_eq!(slos["time_to_first_token"], 200.0);
        assert_eq!(slos["request_latency"], 5000.0);
        assert_eq!(slos["output_token_throughput_per_user"], 30.0);
    }

    #[test]
    fn unknown_metrics_and_bad_values_are_explained() {
        let err = slos_of(map(&[("time_to_frist_token", Dynamic::from(0.2))])).unwrap_err();
        assert!(err.to_string().contains("did you mean `time_to_first_token`?"), "{err}");
        let err = slos_of(map(&[("request_throughput", Dynamic::from(1.0))])).unwrap_err();
        assert!(err.to_string().contains("no per-request metric `request_throughput`"), "{err}");
        let err = slos_of(map(&[("request_latency", Dynamic::from("5s"))])).unwrap_err();
        assert!(err.to_string().contains("must be a number"), "{err}");
    }
}
