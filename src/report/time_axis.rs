//! The report's time axis: seconds from the start of the run's first phase, with each phase's
//! start marked. Records carry wall-clock times and phases run-clock windows; the results
//! phase's first request ties the two together.

use super::artifacts::RunArtifacts;

pub struct TimeAxis {
    pub(super) zero_ns: u64,
    /// (seconds, phase name) where each phase started.
    pub marks: Vec<(f64, String)>,
}

impl TimeAxis {
    pub fn of(run: &RunArtifacts) -> Self {
        let first_start = run.records.first_start_ns().unwrap_or(0);
        let phases = run.summary["phases"].as_array().cloned().unwrap_or_default();
        let window_start = |phase: &serde_json::Value| phase["window_start_ns"].as_u64();
        // The wall-clock time of the run clock's zero, from the earliest request of a phase.
        let anchor = phases.iter().find_map(|phase| {
            let name = phase["name"].as_str()?;
            let first = run.records.phase_first_start_ns(name)?;
            first.checked_sub(window_start(phase)?)
        });
        let Some(anchor) = anchor else {
            return Self { zero_ns: first_start, marks: Vec::new() };
        };
        let zero_ns = anchor + phases.iter().filter_map(window_start).min().unwrap_or(0);
        let marks = phases
            .iter()
            .filter_map(|phase| {
                let at = (anchor + window_start(phase)?).saturating_sub(zero_ns) as f64 / 1e9;
                Some((at, phase["name"].as_str().unwrap_or("phase").to_string()))
            })
            .collect();
        Self { zero_ns, marks }
    }

    /// Seconds since the axis' zero (negative before it).
    pub fn seconds(&self, wall_ns: u64) -> f64 {
        (wall_ns as f64 - self.zero_ns as f64) / 1e9
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::record_row::RecordRow;

    #[test]
    fn phase_windows_are_placed_by_the_first_request() {
        let row = |start_ns: u64, phase: &str| RecordRow {
            start_ns,
            end_ns: start_ns + 10,
            phase: phase.into(),
            ttft_ms: None,
            itl_ms: None,
            latency_ms: None,
            isl: None,
            osl: None,
            error: None,
        };
        let run = RunArtifacts {
            label: "r".into(),
            dir: Default::default(),
            summary: serde_json::json!({"phases": [
                {"name": "warmup", "window_start_ns": 1_000_000_000u64},
                {"name": "load", "window_start_ns": 3_000_000_000u64}
            ]}),
            records: [row(10_000_000_000, "load"), row(11_000_000_000, "load")].into_iter().collect(),
            server_metrics: Default::default(),
            gpu: Default::default(),
        };
        let axis = TimeAxis::of(&run);
        assert_eq!(axis.marks, vec![(0.0, "warmup".to_string()), (2.0, "load".to_string())]);
        assert_eq!(axis.seconds(11_000_000_000), 3.0);
    }
}
