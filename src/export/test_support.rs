//! Test helpers: a small `RunResult` with one record metric and a few run-level metrics.

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::metrics::registry;
use crate::metrics::stats::distribution;
use crate::plan::{Dataset, Dist, Endpoint, EndpointKind, Phase, Plan, SyntheticDataset, TokenizerSpec};
use crate::record::RecordError;
use crate::result::{ErrorCount, RunResult, Stats};

pub fn sample_result() -> RunResult {
    let plan = Plan {
        name: "c8".into(),
        endpoint: Endpoint::new("http://127.0.0.1:8000", "m", EndpointKind::Chat, true),
        dataset: Dataset::Synthetic(SyntheticDataset::new(Dist::fixed(128.0), Dist::fixed(64.0), 42, 10)),
        phases: vec![Phase::profiling(8, Some(4))],
        tokenizer: TokenizerSpec::Builtin,
        request_timeout_s: 600.0,
        export: Default::default(),
        server_metrics: Default::default(),
        gpu_telemetry: Default::default(),
        slos: BTreeMap::new(),
        thresholds: Vec::new(),
        abort_on_fail: false,
        use_server_token_count: false,
        apply_chat_template: false,
        preflight: Default::default(),
        allow_all_failed: false,
        network_latency: Default::default(),
        metrics_listen: None,
        server_control: Default::default(),
        failed_request_threshold: None,
        outputs: Default::default(),
        run_info: Default::default(),
        libraries: Vec::new(),
        scenario_lock: None,
    };
    let latency = distribution(&[10.0, 20.0, 30.0, 40.0]).expect("values");
    RunResult {
        name: "c8".into(),
        benchmark_id: "abc123".into(),
        start_time: "2026-01-01T00:00:00Z".into(),
        end_time: "2026-01-01T00:00:02Z".into(),
        was_cancelled: false,
        plan,
        tokenizer: "builtin:gpt2".into(),
        metrics: vec![
            registry::TIME_TO_FIRST_TOKEN.result(distribution(&[1.0, 2.0]).expect("values")),
            registry::REQUEST_LATENCY.result(latency),
            registry::REQUEST_THROUGHPUT.result(Stats::scalar(2.0)),
            registry::REQUEST_COUNT.result(Stats::scalar(4.0)),
            registry::BENCHMARK_DURATION.result(Stats::scalar(2.0)),
        ],
        warmup_metrics: Vec::new(),
        by_phase: Vec::new(),
        error_summary: vec![ErrorCount {
            error_details: RecordError { code: Some(503), kind: "http_error".into(), message: "busy".into() },
            count: 1,
        }],
        by_url: Vec::new(),
        phases: Vec::new(),
        artifact_dir: PathBuf::from("artifacts/c8"),
        cli_command: Some("aiperf run scenario.rhai".into()),
        random_seed: Some(42),
        server_metrics: None,
        telemetry_data: None,
        thresholds: Vec::new(),
        timeslices: Vec::new(),
        spec_decode_histogram: Vec::new(),
        token_check_causes: Default::default(),
        accuracy: None,
    }
}
