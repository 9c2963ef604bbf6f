//! The open-loop phase the rate benchmarks run: constant arrivals at one rate for a duration.

use aiperf::plan::{Arrival, LoadMode, Phase, PhaseKind};

/// A profiling phase named `name` at `rate_rps` constant arrivals for `seconds`.
pub fn constant_rate_phase(name: &str, rate_rps: f64, seconds: f64) -> Phase {
    Phase {
        name: name.to_string(),
        kind: PhaseKind::Profiling,
        mode: LoadMode::Rate {
            rate: rate_rps,
            arrival: Arrival::Constant,
            max_concurrency: None,
            seed: 1,
            prefill: None,
        },
        requests: None,
        sessions: None,
        duration_s: Some(seconds),
        grace_period_s: 5.0,
        results: true,
        cancel: None,
    }
}
