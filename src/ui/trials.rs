//! The console lines after repeated trials: the headline metrics with their confidence interval
//! and where the aggregate files went.

use std::path::Path;

use crate::aggregate::TrialSet;
use crate::aggregate::convergence::{Convergence, ConvergenceMode, Verdict};

/// The `<metric>_<stat>` rows shown, when the trials have them.
const HEADLINES: [(&str, &str); 5] = [
    ("request_throughput", "avg"),
    ("output_token_throughput", "avg"),
    ("time_to_first_token", "p99"),
    ("inter_token_latency", "avg"),
    ("request_latency", "p99"),
];

pub fn render(set: &TrialSet, aggregate_dir: &Path) -> String {
    let mut text = format!(
        "{} trials, {:.0}% confidence intervals (aggregate: {})\n",
        set.trials.len(),
        set.confidence_level * 100.0,
        aggregate_dir.display()
    );
    for (tag, stat) in HEADLINES {
        if let Some(metric) = set.metric(tag, stat) {
            let s = &metric.stats;
            let cv = s.cv.map_or_else(|| "-".to_string(), |cv| format!("{:.1}%", cv * 100.0));
            text.push_str(&format!(
                "  {:<28} {:>12.2} {:<14} [{:.2} .. {:.2}]  cv {cv}\n",
                metric.name, s.mean, metric.unit, s.ci_low, s.ci_high
            ));
        }
    }
    text
}

/// The line that says the trials stopped early because the metric settled.
pub fn converged(convergence: &Convergence, verdict: &Verdict, ran: usize, planned: u64) -> String {
    let measured = verdict.measured.map_or("n/a".to_string(), |value| format!("{value:.4}"));
    let (what, side) = match convergence.mode {
        ConvergenceMode::CiWidth => ("CI width / mean", "<"),
        ConvergenceMode::Cv => ("CV", "<"),
        ConvergenceMode::Distribution => ("KS p-value vs the earlier trials", ">"),
    };
    format!(
        "converged after {ran} of {planned} trials: {} {} {what} {measured} {side} {} ({})\n",
        convergence.metric,
        convergence.stat,
        convergence.threshold(),
        convergence.mode.name()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aggregate::test_support::trial;

    #[test]
    fn headline_metrics_show_their_interval() {
        let set = TrialSet::new(vec![trial(2.0, 10.0), trial(4.0, 20.0), trial(6.0, 30.0)], 0.95, 0.0);
        let text = render(&set, Path::new("out/aggregate"));
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "3 trials, 95% confidence intervals (aggregate: out/aggregate)");
        assert!(
            lines[1].starts_with("  request_throughput_avg") && lines[1].contains("[-0.97 .. 8.97]  cv 50.0%"),
            "{}",
            lines[1]
        );
        assert!(lines[2].starts_with("  time_to_first_token_p99"), "{}", lines[2]);
        assert_eq!(lines.len(), 4, "{text}");
    }
}
