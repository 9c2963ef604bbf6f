//! `compare(baseline, candidate)`: two runs' results side by side — a printable table of the
//! console metrics with the relative change of each, and the changes as numbers a script can
//! gate on (`c.change("time_to_first_token", "p99")`, `c.regressions(5.0)`).

use std::sync::Arc;

use rhai::{Dynamic, Engine};

use super::keys::{ScriptResult, script_error};
use super::results::RunResults;
use crate::metrics::registry::{self, MetricFlags};
use crate::result::{MetricKind, MetricResult, RunResult};
use crate::ui::table::format_number;

/// Two runs to compare: the first is the reference.
#[derive(Debug, Clone)]
pub struct Comparison {
    baseline: Arc<RunResult>,
    candidate: Arc<RunResult>,
}

pub fn register(engine: &mut Engine) {
    engine
        .register_fn("compare", |baseline: RunResults, candidate: RunResults| Comparison {
            baseline: baseline.0,
            candidate: candidate.0,
        })
        .register_fn("change", change)
        .register_fn("regressions", |c: &mut Comparison, percent: f64| regressions(c, percent))
        .register_fn("regressions", |c: &mut Comparison, percent: i64| regressions(c, percent as f64))
        .register_fn("to_string", |c: &mut Comparison| render(c))
        .register_fn("to_debug", |c: &mut Comparison| render(c));
}

/// The statistic a row of the table compares: p50 and p99 of distributions, the value of
/// single-valued metrics.
fn compared_stats(metric: &MetricResult) -> &'static [&'static str] {
    if metric.kind == MetricKind::Record { &["p50", "p99"] } else { &["avg"] }
}

/// The relative change of `stat` of `tag` from baseline to candidate (0.1 = 10 % higher);
/// `()` when either run lacks it or the baseline is 0.
fn change(c: &mut Comparison, tag: &str, stat: &str) -> ScriptResult<Dynamic> {
    let (Some(before), Some(after)) = (c.baseline.metric(tag), c.candidate.metric(tag)) else {
        if registry::metric(tag).is_none() {
            return script_error(format!("compare: no metric \"{tag}\""));
        }
        return Ok(Dynamic::UNIT);
    };
    Ok(relative(before, after, stat).map(Dynamic::from).unwrap_or(Dynamic::UNIT))
}

fn relative(before: &MetricResult, after: &MetricResult, stat: &str) -> Option<f64> {
    let (b, a) = (before.stats.get(stat)?, after.stats.get(stat)?);
    (b != 0.0).then(|| (a - b) / b.abs())
}

/// Which way is good news: `Some(true)` for a rise (throughputs, good requests),
/// `Some(false)` for a fall (latencies, errors), `None` for what only describes the load
/// (lengths, counts).
fn rise_is_better(tag: &str) -> Option<bool> {
    let def = registry::metric(tag)?;
    if def.has(MetricFlags::LARGER_IS_BETTER) {
        Some(true)
    } else if def.unit == "ms" || tag.starts_with("error_") || tag.ends_with("error_rate") {
        Some(false)
    } else {
        None
    }
}

/// "metric.stat +12.3 %" for each compared statistic that got worse by more than `percent`.
fn regressions(c: &Comparison, percent: f64) -> rhai::Array {
    let mut found = rhai::Array::new();
    for before in c.baseline.metrics.iter().filter(|m| m.console) {
        let Some(after) = c.candidate.metric(before.tag) else { continue };
        for stat in compared_stats(before) {
            let Some(change) = relative(before, after, stat) else { continue };
            let worse = match rise_is_better(before.tag) {
                Some(true) => -change,
                Some(false) => change,
                None => continue,
            };
            if worse * 100.0 > percent {
                found.push(Dynamic::from(format!("{}.{stat} {:+.1} %", before.tag, change * 100.0)));
            }
        }
    }
    found
}

fn render(c: &Comparison) -> String {
    let mut rows = vec![[
        "metric".to_string(),
        "stat".to_string(),
        c.baseline.name.clone(),
        c.candidate.name.clone(),
        "change".to_string(),
    ]];
    for before in c.baseline.metrics.iter().filter(|m| m.console) {
        let Some(after) = c.candidate.metric(before.tag) else { continue };
        for stat in compared_stats(before) {
            let (Some(b), Some(a)) = (before.stats.get(stat), after.stats.get(stat)) else { continue };
            let change = match relative(before, after, stat) {
                Some(change) => {
                    let verdict = match rise_is_better(before.tag) {
                        _ if change == 0.0 => "",
                        Some(rise_is_better) if (change > 0.0) == rise_is_better => " better",
                        Some(_) => " worse",
                        None => "",
                    };
                    format!("{:+.1} %{verdict}", change * 100.0)
                }
                None => "–".to_string(),
            };
            let name = format!("{} ({})", before.header, before.unit);
            rows.push([name, stat.to_string(), format_number(b), format_number(a), change]);
        }
    }
    let widths: Vec<usize> = (0..5).map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0)).collect();
    let mut out = String::new();
    for row in &rows {
        let cells: Vec<String> = row
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(i, (cell, width))| if i < 2 { format!("{cell:<width$}") } else { format!("{cell:>width$}") })
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::Stats;

    fn run(name: &str, ttft_p99: f64, throughput: f64) -> Arc<RunResult> {
        let ttft = registry::metric("time_to_first_token").map(|def| {
            def.result(Stats {
                avg: ttft_p99 / 2.0,
                p50: Some(ttft_p99 / 2.0),
                p99: Some(ttft_p99),
                ..Default::default()
            })
        });
        let tput = registry::metric("request_throughput").map(|def| def.result(Stats::scalar(throughput)));
        let mut result = crate::export::test_support::sample_result();
        result.name = name.to_string();
        result.metrics = ttft.into_iter().chain(tput).collect();
        Arc::new(result)
    }

    fn comparison() -> Comparison {
        Comparison { baseline: run("before", 100.0, 50.0), candidate: run("after", 120.0, 40.0) }
    }

    #[test]
    fn changes_are_relative_to_the_baseline() {
        let mut c = comparison();
        let ttft = change(&mut c, "time_to_first_token", "p99").expect("known metric");
        assert!((ttft.as_float().expect("a number") - 0.2).abs() < 1e-12);
        let tput = change(&mut c, "request_throughput", "avg").expect("known metric");
        assert!((tput.as_float().expect("a number") + 0.2).abs() < 1e-12);
        assert!(change(&mut c, "inter_token_latency", "p99").expect("known metric").is_unit());
        assert!(change(&mut c, "time_to_first_tokn", "p99").is_err());
    }

    #[test]
    fn a_regression_is_a_rise_in_latency_or_a_fall_in_throughput() {
        let c = comparison();
        let found: Vec<String> = regressions(&c, 15.0).into_iter().map(|d| d.to_string()).collect();
        assert_eq!(
            found,
            ["time_to_first_token.p50 +20.0 %", "time_to_first_token.p99 +20.0 %", "request_throughput.avg -20.0 %"]
        );
        assert!(regressions(&c, 25.0).is_empty());
    }

    #[test]
    fn the_table_names_both_runs_and_says_which_way_each_change_goes() {
        let table = render(&comparison());
        assert!(table.lines().next().is_some_and(|head| head.contains("before") && head.contains("after")));
        assert!(table.contains("+20.0 % worse"), "{table}");
        assert!(table.contains("-20.0 % worse"), "{table}");
    }
}
