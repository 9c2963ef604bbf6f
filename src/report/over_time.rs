//! One run over time: per-request TTFT and latency, requests in flight, throughput and errors
//! by kind, with the phases' starts marked. A large run's charts are drawn from its records'
//! sample, counts scaled by the rows each kept row stands for, and their titles say so.

use std::collections::BTreeMap;

use super::artifacts::RunArtifacts;
use super::chart::{Chart, ChartBody, Series, Style, short_number};
use super::downsample;
use super::time_axis::TimeAxis;

/// Points drawn per scatter, whatever the number of requests.
pub const SCATTER_POINTS: usize = 3000;
const IN_FLIGHT_STEPS: usize = 1000;
const THROUGHPUT_BINS: usize = 60;
const ERROR_BINS: usize = 20;
const TIME: &str = "time since the first phase started (s)";

type Points = Vec<(f64, f64)>;

pub fn charts(run: &RunArtifacts, axis: &TimeAxis, id_prefix: &str) -> Vec<Chart> {
    let mut records: Vec<_> = run.records.rows().iter().collect();
    records.sort_by_key(|r| r.start_ns);
    let note = run.records.sample_note();
    let per_row = run.records.step() as f64;
    let mut charts = Vec::new();
    let scatter = |id: &str, title: &str, pick: fn(&super::record_row::RecordRow) -> Option<f64>| {
        let points: Vec<(f64, f64)> =
            records.iter().filter_map(|r| pick(r).map(|v| (axis.seconds(r.start_ns), v))).collect();
        marked(
            Chart::xy(
                &format!("{id_prefix}{id}"),
                &format!("{title}{note}"),
                TIME,
                "ms",
                vec![Series::new("request (by start)", Style::Points, downsample::evenly(&points, SCATTER_POINTS))],
            ),
            axis,
        )
    };
    charts.push(scatter("ttft-over-time", "Time to first token per request", |r| r.ttft_ms));
    charts.push(scatter("latency-over-time", "Request latency per request", |r| r.latency_ms));
    charts.push(marked(in_flight_chart(run, axis, id_prefix), axis));
    let ends: Vec<(f64, f64)> = run
        .records
        .rows()
        .iter()
        .filter(|r| r.error.is_none())
        .map(|r| (axis.seconds(r.end_ns), r.osl.unwrap_or(0.0)))
        .collect();
    let (requests, tokens) = throughput(&ends, per_row);
    charts.push(marked(
        Chart::xy(
            &format!("{id_prefix}request-throughput"),
            &format!("Completed requests per second{note}"),
            TIME,
            "requests/s",
            vec![Series::new("completed", Style::Line, requests)],
        ),
        axis,
    ));
    charts.push(marked(
        Chart::xy(
            &format!("{id_prefix}token-throughput"),
            &format!("Output tokens per second{note}"),
            TIME,
            "tokens/s",
            vec![Series::new("output tokens", Style::Line, tokens)],
        ),
        axis,
    ));
    if let Some(errors) = errors_by_kind(run, axis, id_prefix) {
        charts.push(errors);
    }
    charts.retain(|c| !c.is_empty());
    charts
}

fn marked(mut chart: Chart, axis: &TimeAxis) -> Chart {
    chart.marks = axis.marks.clone();
    chart
}

/// The requests in flight: from every row, or, for a run whose rows were sampled, from the
/// exact counts per time bucket (the title says which).
fn in_flight_chart(run: &RunArtifacts, axis: &TimeAxis, id_prefix: &str) -> Chart {
    let id = format!("{id_prefix}in-flight");
    if run.records.step() == 1 {
        let steps = in_flight(run, axis);
        return Chart::xy(
            &id,
            "Requests in flight",
            TIME,
            "requests",
            vec![Series::new("in flight (max per step)", Style::Steps, steps)],
        );
    }
    let steps =
        run.records.in_flight().levels().into_iter().map(|(at, level)| (axis.seconds(at), level as f64)).collect();
    let title = format!("Requests in flight (all {} requests, counted per time step)", run.records.total());
    Chart::xy(&id, &title, TIME, "requests", vec![Series::new("in flight (at the step's edges)", Style::Steps, steps)])
}

/// The number of requests in flight as a step function, at most `IN_FLIGHT_STEPS` steps,
/// each step the highest level reached in it.
fn in_flight(run: &RunArtifacts, axis: &TimeAxis) -> Vec<(f64, f64)> {
    let mut events: Vec<(u64, i64)> =
        run.records.rows().iter().flat_map(|r| [(r.start_ns, 1), (r.end_ns, -1)]).collect();
    // Ends before starts at one instant: a request that ends as another starts is not counted twice.
    events.sort_unstable();
    let (Some(&first), Some(&last)) = (events.first(), events.last()) else {
        return Vec::new();
    };
    let span = (last.0 - first.0).max(1);
    let step = span.div_ceil(IN_FLIGHT_STEPS as u64).max(1);
    let mut steps: Vec<(f64, f64)> = Vec::new();
    let mut level = 0i64;
    let mut current: Option<(u64, i64)> = None;
    for (at, change) in events {
        level += change;
        let slot = (at - first.0) / step;
        match &mut current {
            Some((s, high)) if *s == slot => *high = (*high).max(level),
            _ => {
                if let Some((s, high)) = current {
                    steps.push((axis.seconds(first.0 + s * step), high as f64));
                }
                current = Some((slot, level));
            }
        }
    }
    if let Some((s, high)) = current {
        steps.push((axis.seconds(first.0 + s * step), high as f64));
    }
    steps
}

/// Completions per second and output tokens per second in equal time bins, from each
/// successful request's (end, output tokens), each standing for `per_row` requests.
fn throughput(ends: &[(f64, f64)], per_row: f64) -> (Points, Points) {
    let low = ends.iter().map(|e| e.0).fold(f64::INFINITY, f64::min);
    let high = ends.iter().map(|e| e.0).fold(f64::NEG_INFINITY, f64::max);
    if ends.len() < 2 || high <= low {
        return (Vec::new(), Vec::new());
    }
    let width = (high - low) / THROUGHPUT_BINS as f64;
    let mut bins = vec![(0.0, 0.0); THROUGHPUT_BINS];
    for &(at, tokens) in ends {
        let bin = &mut bins[(((at - low) / width) as usize).min(THROUGHPUT_BINS - 1)];
        bin.0 += per_row;
        bin.1 += tokens * per_row;
    }
    let centre = |i: usize| low + (i as f64 + 0.5) * width;
    (
        bins.iter().enumerate().map(|(i, b)| (centre(i), b.0 / width)).collect(),
        bins.iter().enumerate().map(|(i, b)| (centre(i), b.1 / width)).collect(),
    )
}

/// Failed requests per time bin, stacked by error kind; `None` for a run without errors.
fn errors_by_kind(run: &RunArtifacts, axis: &TimeAxis, id_prefix: &str) -> Option<Chart> {
    let (failed, per_error) = run.records.errors();
    let (Some(first_start), Some(last_end)) = (run.records.first_start_ns(), run.records.last_end_ns()) else {
        return None;
    };
    if failed.is_empty() {
        return None;
    }
    let (low, high) = (axis.seconds(first_start), axis.seconds(last_end));
    let width = ((high - low) / ERROR_BINS as f64).max(1e-3);
    let mut layers: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    for (end_ns, kind) in failed {
        let bin = (((axis.seconds(*end_ns) - low) / width) as usize).min(ERROR_BINS - 1);
        layers.entry(kind).or_insert_with(|| vec![0.0; ERROR_BINS])[bin] += per_error as f64;
    }
    let categories = (0..ERROR_BINS).map(|i| format!("{}s", short_number(low + i as f64 * width))).collect();
    Some(Chart {
        body: ChartBody::StackedBars {
            categories,
            layers: layers.into_iter().map(|(kind, counts)| (kind.to_string(), counts)).collect(),
        },
        ..Chart::xy(
            &format!("{id_prefix}errors-over-time"),
            &format!("Errors by kind over time{}", run.records.error_note()),
            TIME,
            "errors",
            Vec::new(),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn throughput_bins_count_every_completion() {
        let ends: Vec<(f64, f64)> = (0..600).map(|i| (i as f64 / 100.0, 10.0)).collect();
        let (requests, tokens) = throughput(&ends, 1.0);
        assert_eq!(requests.len(), THROUGHPUT_BINS);
        let width = 5.99 / THROUGHPUT_BINS as f64;
        let completed: f64 = requests.iter().map(|(_, rate)| rate * width).sum();
        assert!((completed - 600.0).abs() < 1e-6, "{completed}");
        assert!((tokens[0].1 - requests[0].1 * 10.0).abs() < 1e-9);
    }

    #[test]
    fn a_sampled_run_says_so_and_scales_its_counts() {
        use crate::report::record_sample::Records;
        let mut records = Records::with_capacity(1000);
        // 20,000 requests, one a ms, each 10 ms long; 1 in 100 failed.
        for i in 0..20_000u64 {
            let row = crate::report::record_row::RecordRow {
                start_ns: 1_000_000_000 + i * 1_000_000,
                end_ns: 1_010_000_000 + i * 1_000_000,
                phase: records.phase("profiling"),
                ttft_ms: Some(1.0),
                itl_ms: None,
                latency_ms: Some(10.0),
                isl: None,
                osl: Some(5.0),
                error: (i % 100 == 0).then(|| records.error_kind("HTTPError")),
            };
            records.push(row);
        }
        let run = RunArtifacts {
            label: "r".into(),
            dir: Default::default(),
            summary: serde_json::json!({}),
            records,
            server_metrics: Default::default(),
            gpu: Default::default(),
        };
        let axis = TimeAxis::of(&run);
        let charts = charts(&run, &axis, "");
        let chart = |id: &str| charts.iter().find(|c| c.id == id).unwrap();
        assert_eq!(chart("ttft-over-time").title, "Time to first token per request (1 in 32 of 20000 requests)");
        let ChartBody::Xy(series) = &chart("in-flight").body else { panic!() };
        let levels: Vec<f64> = series[0].points.iter().map(|p| p.1).collect();
        assert!(levels[2..levels.len() - 2].iter().all(|&l| l == 10.0), "exact, not 32 a row: {levels:?}");
        let ChartBody::Xy(series) = &chart("request-throughput").body else { panic!() };
        let rate: f64 = series[0].points[THROUGHPUT_BINS / 2].1;
        assert!((rate - 990.0).abs() < 990.0 * 0.1, "about 990 completions/s: {rate}");
        let ChartBody::StackedBars { layers, .. } = &chart("errors-over-time").body else { panic!() };
        assert_eq!(layers[0].1.iter().sum::<f64>(), 200.0, "every failure counted: {layers:?}");
    }
}
