//! The Prometheus parser and the collector against real exporters on loopback:
//! node_exporter, Prometheus' own /metrics, and a pushgateway serving exact vLLM-like data.

mod collectors_support;

use std::time::Duration;

use aiperf::clock::RunClock;
use aiperf::server_metrics::aggregate::SeriesStats;
use aiperf::server_metrics::parse::{FamilyKind, SeriesValue, parse};
use aiperf::server_metrics::{Collector, CollectorSettings, ProfilingWindow, aggregate};
use collectors_support::{Exporter, http};

fn body_of(exporter: &Exporter) -> String {
    let (status, _, body) = http("GET", exporter.port, "/metrics", "").expect("scrape");
    assert_eq!(status, 200);
    body
}

#[test]
fn node_exporter_text_parses_without_a_bad_line() {
    let exporter = Exporter::node_exporter();
    let scrape = parse(&body_of(&exporter));
    assert_eq!(scrape.bad_lines, 0);
    assert!(scrape.samples > 200, "{} samples", scrape.samples);
    let kinds: Vec<FamilyKind> = scrape.families.iter().map(|f| f.kind).collect();
    for kind in [FamilyKind::Counter, FamilyKind::Gauge, FamilyKind::Unknown] {
        assert!(kinds.contains(&kind), "no {kind:?} family");
    }
    // The go_gc_duration_seconds summary is dropped, with its _sum and _count.
    assert!(scrape.families.iter().all(|f| !f.name.starts_with("go_gc_duration_seconds")));
    // Counters lose `_total`, as Prometheus' Python parser does.
    let cpu = scrape.families.iter().find(|f| f.name == "node_cpu_seconds").expect("node_cpu_seconds");
    assert_eq!(cpu.kind, FamilyKind::Counter);
    assert!(cpu.series.iter().all(|s| s.labels.iter().any(|(k, _)| k == "mode")));
}

#[test]
fn prometheus_own_histograms_group_their_buckets() {
    let exporter = Exporter::prometheus();
    let scrape = parse(&body_of(&exporter));
    assert_eq!(scrape.bad_lines, 0);
    let histograms: Vec<_> = scrape.families.iter().filter(|f| f.kind == FamilyKind::Histogram).collect();
    assert!(histograms.len() >= 3, "{} histograms", histograms.len());
    for family in histograms {
        for series in &family.series {
            let SeriesValue::Histogram(h) = &series.value else { panic!("{} is not a histogram", family.name) };
            assert_eq!(h.buckets.last().map(|b| b.0.as_str()), Some("+Inf"), "{}", family.name);
            assert_eq!(h.buckets.last().map(|b| b.2), Some(h.count), "{}: +Inf bucket == count", family.name);
            assert!(h.buckets.windows(2).all(|w| w[0].2 <= w[1].2), "{}: cumulative", family.name);
            assert!(series.labels.iter().all(|(k, _)| k != "le"));
        }
    }
    assert!(scrape.families.iter().all(|f| f.kind != FamilyKind::Summary));
}

const PUSH_BEFORE: &str = "\
# HELP vllm:e2e_request_latency_seconds Histogram of e2e request latency in seconds.
# TYPE vllm:e2e_request_latency_seconds histogram
vllm:e2e_request_latency_seconds_bucket{model_name=\"m\",le=\"0.3\"} 1
vllm:e2e_request_latency_seconds_bucket{model_name=\"m\",le=\"0.5\"} 4
vllm:e2e_request_latency_seconds_bucket{model_name=\"m\",le=\"1.0\"} 5
vllm:e2e_request_latency_seconds_bucket{model_name=\"m\",le=\"+Inf\"} 5
vllm:e2e_request_latency_seconds_sum{model_name=\"m\"} 2.0
vllm:e2e_request_latency_seconds_count{model_name=\"m\"} 5
# HELP vllm:request_success_total Count of successfully processed requests.
# TYPE vllm:request_success_total counter
vllm:request_success_total{model_name=\"m\",finished_reason=\"length\"} 5
# HELP vllm:num_requests_running Number of requests in model execution batches.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{model_name=\"m\"} 2
";

const PUSH_AFTER: &str = "\
# HELP vllm:e2e_request_latency_seconds Histogram of e2e request latency in seconds.
# TYPE vllm:e2e_request_latency_seconds histogram
vllm:e2e_request_latency_seconds_bucket{model_name=\"m\",le=\"0.3\"} 1
vllm:e2e_request_latency_seconds_bucket{model_name=\"m\",le=\"0.5\"} 14
vllm:e2e_request_latency_seconds_bucket{model_name=\"m\",le=\"1.0\"} 20
vllm:e2e_request_latency_seconds_bucket{model_name=\"m\",le=\"+Inf\"} 21
vllm:e2e_request_latency_seconds_sum{model_name=\"m\"} 12.5
vllm:e2e_request_latency_seconds_count{model_name=\"m\"} 21
# HELP vllm:request_success_total Count of successfully processed requests.
# TYPE vllm:request_success_total counter
vllm:request_success_total{model_name=\"m\",finished_reason=\"length\"} 21
# HELP vllm:num_requests_running Number of requests in model execution batches.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{model_name=\"m\"} 6
";

#[test]
fn pushgateway_vllm_histogram_counter_and_gauge_give_exact_deltas() {
    let gateway = Exporter::pushgateway();
    gateway.push("vllm", PUSH_BEFORE);
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
    let result = runtime.block_on(async {
        let clock = RunClock::start();
        let settings = CollectorSettings {
            interval: Duration::from_millis(100),
            reachability_timeout: Duration::from_secs(5),
            flush_period: Duration::from_millis(50),
        };
        let client = aiperf::server_metrics::fetch::scrape_client(&Default::default()).expect("scrape client");
        let collector = Collector::start(vec![gateway.url()], settings, client, clock).await.expect("collector");
        tokio::time::sleep(Duration::from_millis(250)).await;
        let start_ns = clock.epoch_ns(clock.now_ns());
        gateway.push("vllm", PUSH_AFTER);
        tokio::time::sleep(Duration::from_millis(350)).await;
        let end_ns = clock.epoch_ns(clock.now_ns());
        aggregate(collector.finish().await, &[ProfilingWindow { start_ns, end_ns }], &[], &[], None)
    });
    assert_eq!(result.endpoints_successful, [gateway.url()]);
    let metric = |name: &str| result.metrics.iter().find(|m| m.name == name).unwrap_or_else(|| panic!("no {name}"));

    let latency = metric("vllm:e2e_request_latency_seconds");
    assert_eq!((latency.kind, latency.unit.as_deref()), (FamilyKind::Histogram, Some("seconds")));
    let series = &latency.series[0];
    assert!(series.labels.contains(&("job".to_string(), "vllm".to_string())));
    let SeriesStats::Histogram(stats) = &series.stats else { panic!("not a histogram") };
    assert_eq!(stats.count, 16);
    let observed = stats.observed.as_ref().expect("observations");
    assert!((observed.sum - 10.5).abs() < 1e-9);
    assert!((observed.avg - 10.5 / 16.0).abs() < 1e-9);
    // Bucket keys are the bounds as the server wrote them (the pushgateway writes `1`, not `1.0`).
    assert_eq!(series.buckets, Some(serde_json::json!({"0.3": 0, "0.5": 10, "1": 15, "+Inf": 16})));
    assert!(observed.p50_estimate > 0.3 && observed.p50_estimate <= 0.5, "{observed:?}");
    assert!(observed.p99_estimate > 1.0, "one observation above 1 s: {observed:?}");

    let success = metric("vllm:request_success");
    assert_eq!((success.kind, success.unit.as_deref()), (FamilyKind::Counter, Some("requests")));
    let SeriesStats::Counter(counter) = &success.series[0].stats else { panic!("not a counter") };
    assert_eq!(counter.total, 16.0);

    let running = metric("vllm:num_requests_running");
    let SeriesStats::Gauge(gauge) = &running.series[0].stats else { panic!("not a gauge") };
    // The reference scrape (before the push) counts as a sample, then the window's 6s.
    assert_eq!((gauge.min, gauge.max), (2.0, 6.0));

    let info = &result.endpoint_info[0].1;
    assert!(info.total_fetches >= 4, "{info:?}");
    assert!(info.unique_updates >= 2 && info.unique_updates <= info.total_fetches, "{info:?}");
}
