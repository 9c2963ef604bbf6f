//! AIPerf's API service (`--api-port`, `runtime.api_port`), answered by the live server beside
//! `/metrics`: `/healthz` and `/readyz` (Kubernetes probes), `/api/run` (the run's identity,
//! as `run_info`), `/api/config` (the plan as `input_config`), `/api/progress` (each phase's
//! requests and records so far, in AIPerf's `CombinedPhaseStats` keys) and `/api/metrics`
//! (AIPerf's realtime-metrics document). Its metrics are what the live counters hold exactly:
//! counts, sums, averages, the least and the greatest value; percentiles are left to the
//! exports at the end (the Prometheus histograms' buckets give them roughly meanwhile).

use std::fmt::Write;

use serde_json::{Map, Value, json};

use super::LiveMetrics;
use super::exposition::escape;
use super::histogram::HistogramReading;
use super::snapshot::{LiveSnapshot, PhaseSnapshot};
use crate::metrics::registry::{self, MetricDef};
use crate::plan::{LoadMode, Plan};

/// What the API says of a run that does not change while it runs.
pub struct RunFacts {
    benchmark_id: String,
    run_info: Value,
    config: Value,
    /// AIPerf's info labels: model, endpoint type, streaming, the first results phase's
    /// concurrency and rate.
    labels: Vec<(&'static str, Value)>,
    phases: Vec<PhaseFacts>,
}

/// What a phase was asked to do.
struct PhaseFacts {
    kind: &'static str,
    /// Its index among the phases that feed the results.
    profiling_index: Option<usize>,
    expected_requests: Option<u64>,
    expected_sessions: Option<u64>,
    expected_duration_s: Option<f64>,
    grace_period_s: Option<f64>,
}

impl RunFacts {
    pub fn of_plan(plan: &Plan, benchmark_id: &str, cli_command: Option<&str>) -> Self {
        let mut run_info =
            crate::export::json::run_info(plan, benchmark_id, Some(plan.dataset.random_seed()), cli_command);
        if let Value::Object(fields) = &mut run_info {
            fields.retain(|_, value| !value.is_null());
        }
        let endpoint = &plan.endpoint;
        let mut labels = vec![
            ("model", json!(endpoint.models().collect::<Vec<_>>().join(","))),
            ("endpoint_type", json!(endpoint.kind.as_str())),
            ("streaming", json!(endpoint.streaming)),
        ];
        if let Some(phase) = plan.phases.iter().find(|phase| phase.results) {
            match &phase.mode {
                LoadMode::Concurrency { concurrency, .. } => labels.push(("concurrency", json!(concurrency))),
                LoadMode::Rate { rate, max_concurrency, .. } => {
                    labels.extend(max_concurrency.map(|cap| ("concurrency", json!(cap))));
                    labels.push(("request_rate", json!(rate)));
                }
                _ => {}
            }
        }
        let mut results_phases = 0;
        let phases = plan
            .phases
            .iter()
            .map(|phase| PhaseFacts {
                kind: phase.kind.as_str(),
                profiling_index: phase.results.then(|| {
                    results_phases += 1;
                    results_phases - 1
                }),
                expected_requests: phase.requests,
                expected_sessions: phase.sessions,
                expected_duration_s: phase.duration_s,
                grace_period_s: phase.duration_s.map(|_| phase.grace_period_s),
            })
            .collect();
        Self {
            benchmark_id: benchmark_id.to_string(),
            run_info,
            config: crate::export::input_config::benchmark_of_plan(plan),
            labels,
            phases,
        }
    }
}

/// An answer of the API (every route answers 200).
pub struct Answer {
    pub content_type: &'static str,
    pub body: String,
}

const JSON: &str = "application/json";

/// The answer to `GET path`, if the API has that route.
pub fn answer(path: &str, metrics: &LiveMetrics, facts: &RunFacts) -> Option<Answer> {
    let json = |value: Value| Answer { content_type: JSON, body: value.to_string() };
    Some(match path {
        // The server runs only while the run does: alive and ready whenever it answers.
        "/healthz" | "/readyz" => Answer { content_type: "text/plain", body: "ok".into() },
        "/api/run" => json(facts.run_info.clone()),
        "/api/config" => json(facts.config.clone()),
        "/api/progress" => json(progress(&metrics.snapshot(), facts, crate::start_at::now_ns())),
        "/api/metrics" => json(metrics_document(&metrics.snapshot(), facts, crate::start_at::now_ns())),
        _ => return None,
    })
}

/// AIPerf's `aiperf_info` gauge: the run's labels and the version, ahead of the live metrics.
pub fn info_exposition(facts: &RunFacts) -> String {
    let mut labels = format!("benchmark_id=\"{}\"", escape(&facts.benchmark_id));
    for (name, value) in &facts.labels {
        let text = value.as_str().map_or_else(|| value.to_string(), str::to_string);
        let _ = write!(labels, ",{name}=\"{}\"", escape(&text));
    }
    let _ = write!(labels, ",version=\"{}\"", env!("CARGO_PKG_VERSION"));
    format!("# HELP aiperf_info AIPerf benchmark information\n# TYPE aiperf_info gauge\naiperf_info{{{labels}}} 1\n")
}

/// `/api/progress`: each phase that started, by name, and the run's state.
fn progress(snapshot: &LiveSnapshot, facts: &RunFacts, now_ns: u64) -> Value {
    let mut phases = Map::new();
    let mut state = "starting";
    for (index, (phase, facts)) in snapshot.phases.iter().zip(&facts.phases).enumerate() {
        let Some(start_ns) = phase.started_ns else { continue };
        state = facts.kind;
        let completed = phase.ok + phase.errors;
        let records = phase.records_ok + phase.records_failed;
        let elapsed_s = now_ns.saturating_sub(start_ns) as f64 / 1e9;
        let per_second = |count: u64| if elapsed_s > 0.0 { count as f64 / elapsed_s } else { 0.0 };
        let eta_s = |done: u64| eta_s(facts, done, per_second(done), elapsed_s);
        phases.insert(
            phase.name.clone(),
            json!({
                "phase": facts.kind,
                "phase_index": index,
                "profiling_index": facts.profiling_index,
                "phase_name": phase.name,
                "phase_kind": facts.kind,
                "start_ns": start_ns,
                "total_expected_requests": facts.expected_requests,
                "expected_duration_sec": facts.expected_duration_s,
                "expected_num_sessions": facts.expected_sessions,
                "expected_grace_period_sec": facts.grace_period_s,
                "success_records": phase.records_ok,
                "error_records": phase.records_failed,
                "requests_sent": phase.sent,
                "requests_completed": completed,
                "requests_cancelled": phase.cancelled,
                "request_errors": phase.errors,
                "in_flight_requests": phase.in_flight,
                "requests_per_second": per_second(completed),
                "records_per_second": per_second(records),
                "requests_eta_sec": eta_s(completed),
                "records_eta_sec": eta_s(records),
                "last_update_ns": now_ns,
            }),
        );
    }
    json!({ "phases": phases, "results_exported": false, "system_state": state })
}

/// Seconds left: by the requests still expected at the rate so far, else by the duration.
fn eta_s(facts: &PhaseFacts, done: u64, per_second: f64, elapsed_s: f64) -> Option<f64> {
    match (facts.expected_requests, facts.expected_duration_s) {
        (Some(expected), _) if per_second > 0.0 => Some(expected.saturating_sub(done) as f64 / per_second),
        (None, Some(duration_s)) => Some((duration_s - elapsed_s).max(0.0)),
        _ => None,
    }
}

/// One of a phase's timing histograms, as read.
type Timing = fn(&PhaseSnapshot) -> &HistogramReading;

/// `/api/metrics`: AIPerf's realtime-metrics document over the results phases so far; the
/// durations and throughputs from the start of the first of them to `now_ns`.
fn metrics_document(snapshot: &LiveSnapshot, facts: &RunFacts, now_ns: u64) -> Value {
    let results: Vec<&PhaseSnapshot> = (snapshot.phases.iter().zip(&facts.phases))
        .filter(|(_, facts)| facts.profiling_index.is_some())
        .map(|(phase, _)| phase)
        .collect();
    let total = |read: fn(&PhaseSnapshot) -> u64| results.iter().map(|phase| read(phase)).sum::<u64>();
    let (ok, failed) = (total(|phase| phase.records_ok), total(|phase| phase.records_failed));
    let mut document = Map::new();
    let mut single = |def: &MetricDef, value: f64| {
        document.insert(def.tag.into(), json!({"unit": def.unit, "avg": value, "count": 1, "header": def.header}));
    };
    if ok + failed > 0 {
        single(&registry::REQUEST_COUNT, ok as f64);
    }
    if failed > 0 {
        single(&registry::ERROR_REQUEST_COUNT, failed as f64);
    }
    let started_ns = results.iter().filter_map(|phase| phase.started_ns).min();
    let elapsed_s = started_ns.map(|start_ns| now_ns.saturating_sub(start_ns) as f64 / 1e9).filter(|s| *s > 0.0);
    if let Some(elapsed_s) = elapsed_s.filter(|_| ok > 0) {
        let (input, output) = (total(|phase| phase.input_tokens), total(|phase| phase.output_tokens));
        single(&registry::BENCHMARK_DURATION, elapsed_s);
        single(&registry::REQUEST_THROUGHPUT, ok as f64 / elapsed_s);
        if input > 0 {
            single(&registry::TOTAL_ISL, input as f64);
        }
        if output > 0 {
            single(&registry::TOTAL_OSL, output as f64);
            single(&registry::OUTPUT_TOKEN_THROUGHPUT, output as f64 / elapsed_s);
        }
    }
    let timings: [(&MetricDef, Timing); 3] = [
        (&registry::TIME_TO_FIRST_TOKEN, |phase| &phase.time_to_first_token),
        (&registry::INTER_TOKEN_LATENCY, |phase| &phase.inter_token_latency),
        (&registry::REQUEST_LATENCY, |phase| &phase.request_latency),
    ];
    for (def, read) in timings {
        if let Some(stats) = timing_stats(results.iter().map(|phase| read(phase)), def) {
            document.insert(def.tag.into(), stats);
        }
    }
    let mut out = json!({
        "aiperf_version": env!("CARGO_PKG_VERSION"),
        "benchmark_id": facts.benchmark_id,
    });
    for (name, value) in &facts.labels {
        out[*name] = value.clone();
    }
    out["metrics"] = Value::Object(document);
    out
}

/// A timing's exact stats in its unit (ms) over the phases' readings; none before its first value.
fn timing_stats<'a>(readings: impl Iterator<Item = &'a HistogramReading>, def: &MetricDef) -> Option<Value> {
    let (mut count, mut sum_s, mut min_s, mut max_s) = (0, 0.0, f64::INFINITY, f64::NEG_INFINITY);
    for reading in readings {
        count += reading.count;
        sum_s += reading.sum_s;
        min_s = reading.min_s.map_or(min_s, |least| least.min(min_s));
        max_s = reading.max_s.map_or(max_s, |greatest| greatest.max(max_s));
    }
    (count > 0 && min_s.is_finite()).then(|| {
        let ms = |seconds: f64| seconds * 1e3;
        json!({
            "unit": def.unit,
            "avg": ms(sum_s) / count as f64,
            "min": ms(min_s),
            "max": ms(max_s),
            "count": count,
            "sum": ms(sum_s),
            "header": def.header,
        })
    })
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::Ordering;

    use super::*;
    use crate::live::EndedRequest;
    use crate::load::PhaseCounters;

    fn facts() -> RunFacts {
        let phase = |kind: &'static str, profiling_index, expected_requests| PhaseFacts {
            kind,
            profiling_index,
            expected_requests,
            expected_sessions: None,
            expected_duration_s: None,
            grace_period_s: None,
        };
        RunFacts {
            benchmark_id: "0123456789ab".into(),
            run_info: json!({"benchmark_id": "0123456789ab"}),
            config: json!({"models": {"items": [{"name": "m"}]}}),
            labels: vec![("model", json!("m")), ("streaming", json!(true)), ("concurrency", json!(4))],
            phases: vec![phase("warmup", None, Some(2)), phase("profiling", Some(0), Some(10))],
        }
    }

    fn ended(latency_s: f64, error_type: Option<&'static str>) -> EndedRequest<'static> {
        EndedRequest {
            phase_index: 1,
            error_type,
            time_to_first_token_s: error_type.is_none().then_some(latency_s / 10.0),
            inter_token_latency_s: None,
            request_latency_s: error_type.is_none().then_some(latency_s),
            input_tokens: if error_type.is_none() { 10 } else { 0 },
            output_tokens: if error_type.is_none() { 4 } else { 0 },
        }
    }

    #[test]
    fn metrics_are_the_exact_counts_sums_and_extremes_of_the_results_phases() {
        let metrics = LiveMetrics::new("r", ["warmup".to_string(), "profiling".to_string()]);
        let facts = facts();
        assert_eq!(metrics_document(&metrics.snapshot(), &facts, 0)["metrics"], json!({}));
        for (latency_s, error) in [(0.2, None), (0.4, None), (0.0, Some("timeout"))] {
            metrics.ended(&ended(latency_s, error));
        }
        let counters = Arc::new(PhaseCounters::default());
        metrics.phase_started(1, counters);
        let start_ns = *metrics.phases[1].started_ns.get().unwrap();
        let document = metrics_document(&metrics.snapshot(), &facts, start_ns + 4_000_000_000);
        assert_eq!(
            (&document["model"], &document["concurrency"], &document["streaming"]),
            (&json!("m"), &json!(4), &json!(true))
        );
        let found = &document["metrics"];
        assert_eq!(found["request_count"]["avg"], 2.0);
        assert_eq!(found["error_request_count"]["avg"], 1.0);
        let latency = &found["request_latency"];
        assert_eq!((latency["count"].as_u64(), latency["unit"].as_str()), (Some(2), Some("ms")));
        let close = |value: &Value, wanted: f64| (value.as_f64().unwrap() - wanted).abs() < 1e-6;
        assert!(close(&latency["avg"], 300.0) && close(&latency["min"], 200.0) && close(&latency["max"], 400.0));
        assert!(close(&latency["sum"], 600.0), "{latency}");
        assert!(close(&found["time_to_first_token"]["max"], 40.0));
        assert!(found.get("inter_token_latency").is_none(), "no value, no stats");
        // Over the 4 s since the results phase started.
        let avg = |tag: &str| found[tag]["avg"].as_f64().unwrap_or_else(|| panic!("{tag} in {found}"));
        assert_eq!((avg("benchmark_duration"), avg("request_throughput")), (4.0, 0.5));
        assert_eq!((avg("total_isl"), avg("total_osl"), avg("output_token_throughput")), (20.0, 8.0, 2.0));
        assert_eq!(found["request_throughput"]["unit"], "requests/sec");
    }

    #[test]
    fn progress_names_each_started_phase_with_aiperfs_counts() {
        let metrics = LiveMetrics::new("r", ["warmup".to_string(), "profiling".to_string()]);
        let facts = facts();
        assert_eq!(progress(&metrics.snapshot(), &facts, 0)["system_state"], "starting");
        let counters = Arc::new(PhaseCounters::default());
        counters.sent.store(6, Ordering::Relaxed);
        counters.completed.store(3, Ordering::Relaxed);
        counters.errors.store(1, Ordering::Relaxed);
        counters.in_flight.store(2, Ordering::Relaxed);
        metrics.phase_started(1, counters);
        metrics.ended(&ended(0.1, None));
        let start_ns = *metrics.phases[1].started_ns.get().unwrap();
        let document = progress(&metrics.snapshot(), &facts, start_ns + 2_000_000_000);
        assert_eq!(document["system_state"], "profiling");
        let phases = document["phases"].as_object().unwrap();
        assert_eq!(phases.keys().collect::<Vec<_>>(), ["profiling"], "a phase not started is not listed");
        let profiling = &phases["profiling"];
        assert_eq!(profiling["requests_sent"], 6);
        assert_eq!(profiling["requests_completed"], 4, "AIPerf's completed counts the failed ones");
        assert_eq!(profiling["request_errors"], 1);
        assert_eq!(profiling["in_flight_requests"], 2);
        assert_eq!((&profiling["success_records"], &profiling["error_records"]), (&json!(1), &json!(0)));
        assert_eq!(profiling["requests_per_second"], 2.0);
        assert_eq!(profiling["requests_eta_sec"], 3.0, "6 of 10 left at 2 a second");
        assert_eq!((&profiling["phase_index"], &profiling["profiling_index"]), (&json!(1), &json!(0)));
    }

    #[test]
    fn routes_and_the_info_line() {
        let metrics = LiveMetrics::new("r", ["warmup".to_string(), "profiling".to_string()]);
        let facts = facts();
        let body = |path: &str| answer(path, &metrics, &facts).map(|answer| answer.body);
        assert_eq!(body("/healthz").as_deref(), Some("ok"));
        assert_eq!(body("/api/run").as_deref(), Some(r#"{"benchmark_id":"0123456789ab"}"#));
        assert!(body("/api/config").unwrap().contains(r#""name":"m""#));
        assert!(body("/nothing").is_none());
        let info = info_exposition(&facts);
        let wanted = format!(
            "aiperf_info{{benchmark_id=\"0123456789ab\",model=\"m\",streaming=\"true\",concurrency=\"4\",version=\"{}\"}} 1\n",
            env!("CARGO_PKG_VERSION")
        );
        assert!(info.ends_with(&wanted), "{info}");
        let scrape = crate::server_metrics::parse::parse(&info);
        assert_eq!(scrape.bad_lines, 0);
    }
}
