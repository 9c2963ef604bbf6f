//! The `network_latency:` key of `run(#{..})`: `#{ automatic: true, ping_interval: seconds(1) }`
//! probes the server's TCP handshake during the run, `#{ mean: ms(4) }` subtracts a given round
//! trip (AIPerf's `--network-latency-automatic` / `--network-latency-mean`).

use rhai::Map;

use super::keys::{MapReader, ScriptResult, script_error};
use crate::plan::{DEFAULT_PING_INTERVAL_S, NetworkLatency};

const NETWORK_LATENCY_KEYS: &[&str] = &["automatic", "ping_interval", "mean"];

/// The adjustment a `network_latency:` map asks for.
pub fn network_latency_of(map: Map) -> ScriptResult<NetworkLatency> {
    let mut r = MapReader::new("network_latency", map, NETWORK_LATENCY_KEYS)?;
    let automatic = r.opt_bool("automatic")?;
    let ping_interval_s = r.opt_f64("ping_interval")?;
    let mean_s = r.opt_f64("mean")?;
    let latency = match (automatic, mean_s) {
        (Some(true), Some(_)) => {
            return script_error("network_latency: `automatic` and `mean` exclude each other: probe, or give the mean");
        }
        (_, Some(mean_s)) => NetworkLatency::Mean { mean_ms: mean_s * 1e3 },
        (Some(true), None) => {
            NetworkLatency::Automatic { ping_interval_s: ping_interval_s.unwrap_or(DEFAULT_PING_INTERVAL_S) }
        }
        (Some(false) | None, None) if ping_interval_s.is_some() => {
            return script_error("network_latency: `ping_interval` needs `automatic: true`");
        }
        (Some(false) | None, None) => NetworkLatency::Off,
    };
    match latency.problem() {
        Some(problem) => script_error(problem),
        None => Ok(latency),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rhai::Dynamic;

    fn map(pairs: &[(&str, Dynamic)]) -> Map {
        pairs.iter().map(|(key, value)| ((*key).into(), value.clone())).collect()
    }

    #[test]
    fn automatic_probes_and_a_mean_is_taken_in_ms() {
        let automatic = network_latency_of(map(&[("automatic", Dynamic::TRUE)])).unwrap();
        assert_eq!(automatic, NetworkLatency::Automatic { ping_interval_s: DEFAULT_PING_INTERVAL_S });
        let paced = network_latency_of(map(&[("automatic", Dynamic::TRUE), ("ping_interval", Dynamic::from(0.25))]));
        assert_eq!(paced.unwrap(), NetworkLatency::Automatic { ping_interval_s: 0.25 });
        let mean = network_latency_of(map(&[("mean", Dynamic::from(0.004))])).unwrap();
        assert_eq!(mean, NetworkLatency::Mean { mean_ms: 4.0 });
        assert_eq!(network_latency_of(Map::new()).unwrap(), NetworkLatency::Off);
    }

    #[test]
    fn conflicting_or_bad_settings_are_named() {
        let both = network_latency_of(map(&[("automatic", Dynamic::TRUE), ("mean", Dynamic::from(0.004))]));
        assert!(both.unwrap_err().to_string().contains("exclude each other"));
        let negative = network_latency_of(map(&[("mean", Dynamic::from(-0.001))]));
        assert!(negative.unwrap_err().to_string().contains("`mean` must be zero or more"));
        let lone_interval = network_latency_of(map(&[("ping_interval", Dynamic::from(1.0))]));
        assert!(lone_interval.unwrap_err().to_string().contains("needs `automatic: true`"));
    }
}
