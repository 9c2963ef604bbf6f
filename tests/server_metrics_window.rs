//! Server metrics cover exactly the profiling window, whatever its length: against a server
//! whose counters and histogram advance by a fixed amount per request, runs shorter than one
//! scrape interval, about a second and several seconds report the exact totals, counts, sums
//! and bucket deltas, and rates within 2 % of the true ones (true = total / the run's own
//! benchmark duration); warmup traffic and a second profiling phase keep their boundaries.

mod collectors_support;
mod common;

use collectors_support::metered_server::{MeteredServer, TOKENS_PER_REQUEST, TTFT_BOUNDS, ttft_us};
use common::{read_json, run_scenario, stat};
use std::time::Duration;

use serde_json::Value;

/// A run named `name` against `server` with `phases`; metrics scraped every 333 ms (the
/// default), the final scrape 300 ms after the last response.
fn scenario(name: &str, server: &MeteredServer, phases: &str, metrics_extra: &str) -> String {
    format!(
        r#"
        let r = run(#{{
            name: "{name}",
            endpoint: endpoint(#{{ url: "{url}", kind: "chat", streaming: false, model: "metered" }}),
            dataset: synthetic(#{{ isl: fixed(8), osl: fixed(4), seed: 1, entries: 16 }}),
            phases: [ {phases} ],
            server_metrics: #{{ flush_period: ms(300), {metrics_extra} }},
        }});
        print(`ERRORS=${{r.error_count}}`);
        "#,
        url = server.url()
    )
}

/// What the server truly did for requests numbered `from..to` (in the order it served them).
struct TrueWork {
    tokens: f64,
    count: u64,
    sum: f64,
    /// Cumulative count per bucket bound, `+Inf` last.
    buckets: Vec<(String, u64)>,
}

fn true_work(from: u64, to: u64) -> TrueWork {
    let observations: Vec<u64> = (from..to).map(ttft_us).collect();
    let mut buckets: Vec<(String, u64)> = TTFT_BOUNDS
        .iter()
        .map(|bound| {
            let limit = bound.parse::<f64>().expect("bound") * 1e6;
            (bound.to_string(), observations.iter().filter(|us| **us as f64 <= limit).count() as u64)
        })
        .collect();
    buckets.push(("+Inf".into(), observations.len() as u64));
    TrueWork {
        tokens: ((to - from) * TOKENS_PER_REQUEST) as f64,
        count: to - from,
        sum: observations.iter().sum::<u64>() as f64 / 1e6,
        buckets,
    }
}

fn series<'a>(doc: &'a Value, family: &str) -> &'a Value {
    &doc["metrics"][family]["series"][0]
}

/// Rates agree within 2 %, or within what 10 ms of a short run's `duration_s` amounts to: the
/// server-metrics rates are over the phase's span, which starts a few ms (set-up on a loaded
/// machine) before the first request the client's benchmark duration starts at.
fn rates_agree(got: f64, expected: f64, duration_s: f64, what: &str) {
    assert!(expected > 0.0, "{what}: no true value");
    let error = (got - expected).abs() / expected;
    let tolerance = f64::max(0.02, 0.010 / duration_s);
    assert!(error <= tolerance, "{what}: {got} vs true {expected} ({:.1} % off)", error * 100.0);
}

/// The exact deltas of `requests` served (numbered `from..`), and rates over `duration_s`.
fn assert_exact(doc: &Value, from: u64, requests: u64, duration_s: f64) {
    let truth = true_work(from, from + requests);
    let tokens = &series(doc, "test:generation_tokens")["stats"];
    assert_eq!(tokens["total"].as_f64(), Some(truth.tokens), "{tokens}");
    rates_agree(tokens["rate"].as_f64().expect("rate"), truth.tokens / duration_s, duration_s, "token rate");

    let ttft = series(doc, "test:time_to_first_token_seconds");
    let stats = &ttft["stats"];
    assert_eq!(stats["count"].as_u64(), Some(truth.count), "{stats}");
    let sum = stats["sum"].as_f64().expect("sum");
    assert!((sum - truth.sum).abs() < 1e-6, "sum {sum} vs {}", truth.sum);
    rates_agree(
        stats["count_rate"].as_f64().expect("count_rate"),
        truth.count as f64 / duration_s,
        duration_s,
        "count_rate",
    );
    rates_agree(stats["sum_rate"].as_f64().expect("sum_rate"), truth.sum / duration_s, duration_s, "sum_rate");
    for (le, count) in &truth.buckets {
        assert_eq!(ttft["buckets"][le].as_u64(), Some(*count), "bucket {le}: {}", ttft["buckets"]);
    }
}

/// One single-phase run of `requests` requests with `phase`; returns the export and the
/// profile's benchmark duration.
fn single_phase_run(name: &str, requests: u64, phase: &str) -> (Value, f64, MeteredServer) {
    let server = MeteredServer::start();
    let run = run_scenario(name, &scenario(name, &server, phase, ""));
    assert_eq!(run.code(), Some(0), "stderr: {}", run.stderr());
    assert!(run.stdout().contains("ERRORS=0"), "{}", run.stdout());
    assert_eq!(server.requests(), requests);
    let summary = run.summary(name);
    let duration_s = stat(&summary, "benchmark_duration", "avg");
    let doc = read_json(&run.artifacts(name).join("server_metrics_export.json"));
    (doc, duration_s, server)
}

#[test]
fn a_run_shorter_than_one_scrape_interval_is_counted_exactly() {
    // About 0.2 s on an idle machine; the checks hold whatever the length turns out to be.
    let (doc, duration_s, _server) = single_phase_run("short", 400, "concurrency(#{ users: 4, requests: 400 })");
    eprintln!("400 requests in {duration_s:.3} s");
    assert_exact(&doc, 0, 400, duration_s);
    // The gauge (requests served so far) has the boundary scrapes as samples: 0 at the
    // reference, 400 once the last response is in; the idle final scrape is not a sample.
    let gauge = &series(&doc, "test:requests_served")["stats"];
    assert_eq!((gauge["min"].as_f64(), gauge["max"].as_f64()), (Some(0.0), Some(400.0)), "{gauge}");
}

#[test]
fn a_server_that_publishes_late_is_counted_by_the_final_scrape() {
    // The server publishes every 200 ms, so the end scrape right after the last response may
    // not show the last requests yet; the final scrape 300 ms later does.
    let server = MeteredServer::start_publishing_every(Duration::from_millis(200));
    let name = "late";
    let run = run_scenario(name, &scenario(name, &server, "concurrency(#{ users: 4, requests: 400 })", ""));
    assert_eq!(run.code(), Some(0), "stderr: {}", run.stderr());
    assert_eq!(server.requests(), 400);
    let duration_s = stat(&run.summary(name), "benchmark_duration", "avg");
    let doc = read_json(&run.artifacts(name).join("server_metrics_export.json"));
    assert_exact(&doc, 0, 400, duration_s);
}

#[test]
fn a_one_second_run_is_counted_exactly() {
    let (doc, duration_s, _server) =
        single_phase_run("one_second", 1000, "rate(#{ rate: 1000, arrival: \"constant\", requests: 1000 })");
    assert!(duration_s > 0.8, "about a second: {duration_s}");
    assert_exact(&doc, 0, 1000, duration_s);
}

#[test]
fn a_several_second_run_with_timeslices_is_counted_exactly() {
    let server = MeteredServer::start();
    let name = "several";
    let phase = "rate(#{ rate: 400, arrival: \"constant\", requests: 1600 })";
    let metrics_keys = r#"slice_duration: seconds(1), formats: ["json", "jsonl"]"#;
    let run = run_scenario(name, &scenario(name, &server, phase, metrics_keys));
    assert_eq!(run.code(), Some(0), "stderr: {}", run.stderr());
    let duration_s = stat(&run.summary(name), "benchmark_duration", "avg");
    assert!(duration_s > 2.5, "several seconds: {duration_s}");
    let doc = read_json(&run.artifacts(name).join("server_metrics_export.json"));
    assert_exact(&doc, 0, 1600, duration_s);
    // The slices tile the window and their totals add up to the exact total.
    let tokens = series(&doc, "test:generation_tokens");
    let slices = tokens["timeslices"].as_array().expect("timeslices");
    assert!(slices.len() >= 3, "{slices:?}");
    let slice_total: f64 = slices.iter().map(|s| s["total"].as_f64().expect("total")).sum();
    assert!((slice_total - 1600.0 * TOKENS_PER_REQUEST as f64).abs() < 1e-6, "{slice_total}");
    let window = &doc["summary"]["phase_time_ranges"]["profiling"];
    assert_eq!(slices[0]["start_ns"], window["start_ns"]);
    assert_eq!(slices.last().expect("slice")["end_ns"], window["end_ns"]);
    // A slice's edges are interpolated between the neighbouring scrapes: each slice's total
    // lies between what the raw scrapes (the JSONL) around its edges allow.
    let jsonl = std::fs::read_to_string(run.artifacts(name).join("server_metrics_export.jsonl")).expect("jsonl");
    let scrapes: Vec<(u64, f64)> = jsonl
        .lines()
        .map(|line| {
            let line: Value = serde_json::from_str(line).expect("a JSON line");
            let metrics = line["metrics"].as_object().expect("metrics");
            let (_, series) = metrics.iter().find(|(k, _)| k.starts_with("test:generation_tokens")).expect("tokens");
            (line["timestamp_ns"].as_u64().expect("timestamp"), series[0]["value"].as_f64().expect("value"))
        })
        .collect();
    let before = |ns: u64| scrapes.iter().rev().find(|(t, _)| *t <= ns).map_or(0.0, |s| s.1);
    let after = |ns: u64| scrapes.iter().find(|(t, _)| *t > ns).map_or(f64::MAX, |s| s.1);
    for slice in slices {
        let (from, to) = (slice["start_ns"].as_u64().expect("start"), slice["end_ns"].as_u64().expect("end"));
        let total = slice["total"].as_f64().expect("total");
        let (low, high) = (before(to) - after(from), after(to) - before(from));
        assert!(low - 1e-6 <= total && total <= high + 1e-6, "slice {from}..{to}: {total} outside [{low}, {high}]");
    }
}

#[test]
fn warmup_and_a_cooldown_between_two_profiling_phases_stay_out() {
    let server = MeteredServer::start();
    let name = "two_phases";
    let phases = r#"warmup(#{ requests: 50, concurrency: 2 }),
        concurrency(#{ users: 4, requests: 300 }),
        concurrency(#{ name: "between", users: 2, requests: 70, results: false }),
        concurrency(#{ name: "second", users: 4, requests: 500 })"#;
    let run = run_scenario(name, &scenario(name, &server, phases, ""));
    assert_eq!(run.code(), Some(0), "stderr: {}", run.stderr());
    assert_eq!(server.requests(), 920);
    let doc = read_json(&run.artifacts(name).join("server_metrics_export.json"));
    let tokens = &series(&doc, "test:generation_tokens")["stats"];
    assert_eq!(tokens["total"].as_f64(), Some(800.0 * TOKENS_PER_REQUEST as f64), "{tokens}");
    // Requests 50..350 and 420..920 were profiled.
    let (first, second) = (true_work(50, 350), true_work(420, 920));
    let ttft = series(&doc, "test:time_to_first_token_seconds");
    assert_eq!(ttft["stats"]["count"].as_u64(), Some(800));
    let sum = ttft["stats"]["sum"].as_f64().expect("sum");
    assert!((sum - (first.sum + second.sum)).abs() < 1e-6, "{sum}");
    for ((le, a), (_, b)) in first.buckets.iter().zip(&second.buckets) {
        assert_eq!(ttft["buckets"][le].as_u64(), Some(a + b), "bucket {le}");
    }
}
