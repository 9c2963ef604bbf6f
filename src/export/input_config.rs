//! A plan described in the config schema's `benchmark` shape: the exports' `input_config`,
//! keyed as AIPerf 0.13 writes it (models, endpoint, datasets, phases, artifacts, slos,
//! tokenizer, gpu_telemetry, server_metrics, network_latency, otel, mlflow, wandb, runtime)
//! so tools that read AIPerf's exports find their fields, and the whole plan under `plan` for
//! what this project adds (request options, transport, thresholds, file datasets' `at_end`…).

use serde_json::{Map, Value, json};

use crate::plan::{
    AdaptiveControl, Arrival, Dataset, Dist, ExportLevel, FileDataset, FileFormat, LoadMode, NetworkLatency, Phase,
    PhaseKind, Plan, PrefillCap, RampStage, RampedQuantity, ScheduleTrace,
};

/// The plan in the schema's `benchmark` shape, with the plan itself under `plan`.
pub fn benchmark_of_plan(plan: &Plan) -> Value {
    let endpoint = &plan.endpoint;
    let mut endpoint_out = json!({
        "urls": endpoint.urls().collect::<Vec<_>>(),
        "type": endpoint.kind.as_str(),
        "streaming": endpoint.streaming,
        "timeout": plan.request_timeout_s,
    });
    if !endpoint.url_strategy.is_default() {
        endpoint_out["url_strategy"] = json!(endpoint.url_strategy.as_str());
    }
    if let Some(renamed) = endpoint.session_headers.first().filter(|name| *name != crate::plan::CORRELATION_HEADER) {
        endpoint_out["session_header"] = json!(renamed);
    }
    if let Some(path) = &endpoint.request.path {
        endpoint_out["path"] = json!(path);
    }
    if !endpoint.extra.is_empty() {
        endpoint_out["extra"] = Value::Object(endpoint.extra.clone());
    }
    if plan.use_server_token_count {
        endpoint_out["use_server_token_count"] = json!(true);
    }
    if endpoint.request.per_chunk_usage {
        endpoint_out["per_chunk_usage"] = json!(true);
    }
    if endpoint.request.download_video_content {
        endpoint_out["download_video_content"] = json!(true);
    }
    let formats: Vec<Value> = plan.server_metrics.formats.iter().map(|format| json!(format)).collect();
    // AIPerf writes a strategy only where one was given, before the items.
    let mut models = serde_json::Map::new();
    if !endpoint.model_selection.is_default() {
        models.insert("strategy".into(), json!(endpoint.model_selection.as_str()));
    }
    models.insert("items".into(), endpoint.models().map(|name| json!({"name": name})).collect());
    let mut benchmark = json!({
        "models": models,
        "endpoint": endpoint_out,
        "datasets": [dataset(&plan.dataset)],
        "phases": plan.phases.iter().map(phase).collect::<Vec<_>>(),
        "artifacts": artifacts(plan),
        "slos": plan.slos,
        "tokenizer": tokenizer(&plan.tokenizer, plan.apply_chat_template),
        "gpu_telemetry": {"enabled": plan.gpu_telemetry.enabled, "urls": plan.gpu_telemetry.dcgm_urls},
        "server_metrics": {"enabled": plan.server_metrics.enabled, "urls": plan.server_metrics.urls, "formats": formats},
        "network_latency": network_latency(&plan.network_latency),
        "otel": otel(plan),
        "mlflow": mlflow(plan),
        "wandb": {},
        "runtime": {"ui": "none"},
        "plan": serde_json::to_value(plan).unwrap_or(Value::Null),
    });
    if let Dataset::File(FileDataset { accuracy: Some(accuracy), .. }) = &plan.dataset {
        benchmark["accuracy"] = accuracy_block(accuracy);
    }
    benchmark
}

/// AIPerf's `accuracy` block of the benchmark config.
fn accuracy_block(accuracy: &crate::plan::AccuracySpec) -> Value {
    json!({
        "benchmark": accuracy.benchmark,
        "tasks": (!accuracy.tasks.is_empty()).then_some(&accuracy.tasks),
        "n_shots": accuracy.n_shots,
        "enable_cot": accuracy.cot,
        "grader": accuracy.grader,
        "system_prompt": accuracy.system_prompt,
        "verbose": accuracy.verbose,
    })
}

/// AIPerf's `otel` block: the collector's url and resource attributes, when the run pushes.
fn otel(plan: &Plan) -> Value {
    match &plan.outputs.otel {
        Some(push) => json!({"metrics_url": push.url, "custom_resource_attributes": push.resource_attributes}),
        None => json!({}),
    }
}

/// AIPerf's `mlflow` block, when the run is uploaded.
fn mlflow(plan: &Plan) -> Value {
    let Some(upload) = &plan.outputs.mlflow else {
        return json!({});
    };
    let mut out = json!({"tracking_uri": upload.tracking_uri, "experiment": upload.experiment, "tags": upload.tags});
    if let Some(name) = &upload.run_name {
        out["run_name"] = json!(name);
    }
    if let Some(parent) = &upload.parent_run_id {
        out["parent_run_id"] = json!(parent);
    }
    if !upload.artifact_globs.is_empty() {
        out["artifact_globs"] = json!(upload.artifact_globs);
    }
    out
}

/// AIPerf's `network_latency` block: off, probing every `ping_interval` seconds, or a fixed `mean_ms`.
fn network_latency(latency: &NetworkLatency) -> Value {
    match *latency {
        NetworkLatency::Off => json!({"enabled": false}),
        NetworkLatency::Automatic { ping_interval_s } => json!({"enabled": true, "ping_interval": ping_interval_s}),
        NetworkLatency::Mean { mean_ms } => json!({"enabled": true, "mean_ms": mean_ms}),
    }
}

fn distribution(dist: &Dist) -> Value {
    json!(dist)
}

/// A phase's `prefill_concurrency` and `prefill_ramp`, when it has a prefill cap.
fn insert_prefill(prefill: Option<PrefillCap>, out: &mut Map<String, Value>) {
    if let Some(cap) = prefill {
        out.insert("prefill_concurrency".into(), json!(cap.concurrency));
        if let Some(seconds) = cap.ramp_s {
            out.insert("prefill_ramp".into(), json!({"duration": seconds}));
        }
    }
}

fn dataset(dataset: &Dataset) -> Value {
    match dataset {
        Dataset::Synthetic(spec) => {
            let mut out = json!({
                "name": "main",
                "type": "synthetic",
                "entries": spec.entries,
                "random_seed": spec.random_seed,
                "prompts": {"isl": distribution(&spec.isl)},
            });
            // No osl when the server chooses, as AIPerf writes it.
            if let Some(osl) = &spec.osl {
                out["prompts"]["osl"] = distribution(osl);
            }
            if let Some(images) = &spec.images {
                let side = |mean: u32, stddev: u32| match stddev {
                    0 => json!(mean),
                    stddev => distribution(&Dist::normal(f64::from(mean), f64::from(stddev))),
                };
                out["images"] = json!({
                    "batch_size": images.count,
                    "width": side(images.width, images.width_stddev),
                    "height": side(images.height, images.height_stddev),
                    "format": images.format,
                });
            }
            out
        }
        Dataset::File(spec) => {
            let format = match spec.format {
                FileFormat::Mooncake => json!("mooncake_trace"),
                other => json!(other),
            };
            let mut out = json!({
                "name": "main",
                "type": "file",
                "path": spec.path,
                "format": format,
                "sampling": spec.sampling,
                "random_seed": spec.random_seed,
            });
            if let Some(draws) = spec.draws {
                out["entries"] = json!(draws);
            }
            if let Some(source) = &spec.public {
                out["type"] = json!("public");
                out["dataset"] = json!(source.name);
                out["hf_subset"] = json!(source.hf_subset);
                out["filters"] = json!(source.filters);
            }
            out
        }
    }
}

fn arrival_type(arrival: &Arrival, out: &mut Map<String, Value>) -> &'static str {
    match arrival {
        Arrival::Constant => "constant",
        Arrival::Poisson => "poisson",
        Arrival::Gamma { smoothness } => {
            out.insert("smoothness".into(), json!(smoothness));
            "gamma"
        }
    }
}

/// No stage (a held rate), or one from AIPerf's rate ramp start (`plan::rate_ramp`): its
/// `rate` and `rate_ramp`. Other held
/// rates are series; a k6 ramp from 0 reads best as a ramp too (a series' rates are above 0).
fn is_aiperf_rate_ramp(start: f64, stages: &[RampStage]) -> bool {
    match stages {
        [] => true,
        [stage] => (crate::plan::rate_ramp(stage.target, stage.duration_s).0 - start).abs() < 1e-9,
        _ => false,
    }
}

/// A rate moved through its stages as AIPerf's series points from the phase start.
fn rate_points(start: f64, stages: &[RampStage]) -> Vec<Value> {
    let mut time_s = 0.0;
    let mut points = vec![json!({"time_s": 0.0, "qps": start})];
    for stage in stages {
        time_s += stage.duration_s;
        points.push(json!({"time_s": time_s, "qps": stage.target}));
    }
    points
}

fn phase(phase: &Phase) -> Value {
    let mut out = Map::new();
    out.insert("name".into(), json!(phase.name));
    let kind = match phase.kind {
        PhaseKind::Warmup => "warmup",
        _ => "profiling",
    };
    out.insert("kind".into(), json!(kind));
    let kind = match &phase.mode {
        LoadMode::Concurrency { concurrency, prefill_concurrency } => {
            out.insert("concurrency".into(), json!(concurrency));
            if let Some(prefill) = prefill_concurrency {
                out.insert("prefill_concurrency".into(), json!(prefill));
            }
            "concurrency"
        }
        LoadMode::Rate { rate, arrival, max_concurrency, prefill, .. } => {
            out.insert("rate".into(), json!(rate));
            if let Some(limit) = max_concurrency {
                out.insert("concurrency".into(), json!(limit));
            }
            insert_prefill(*prefill, &mut out);
            arrival_type(arrival, &mut out)
        }
        LoadMode::Ramp {
            ramped,
            start,
            stages,
            arrival,
            max_concurrency,
            max_concurrency_ramp_s,
            prefill,
            hold,
            ..
        } => {
            if let Some(limit) = max_concurrency {
                out.insert("concurrency".into(), json!(limit));
            }
            if let Some(seconds) = max_concurrency_ramp_s {
                out.insert("concurrency_ramp".into(), json!({"duration": seconds}));
            }
            let target = stages.last().map_or(*start, |stage| stage.target);
            let ramp = json!({"duration": stages.iter().map(|stage| stage.duration_s).sum::<f64>()});
            insert_prefill(*prefill, &mut out);
            match ramped {
                RampedQuantity::Concurrency => {
                    out.insert("concurrency".into(), json!(target.round() as u64));
                    if !stages.is_empty() {
                        out.insert("concurrency_ramp".into(), ramp);
                    }
                    "concurrency"
                }
                RampedQuantity::Rate if *hold && *start > 0.0 && !is_aiperf_rate_ramp(*start, stages) => {
                    out.insert("rate_series".into(), json!({"points": rate_points(*start, stages)}));
                    arrival_type(arrival, &mut out)
                }
                RampedQuantity::Rate => {
                    out.insert("rate".into(), json!(target));
                    if !stages.is_empty() {
                        out.insert("rate_ramp".into(), ramp);
                    }
                    arrival_type(arrival, &mut out)
                }
            }
        }
        LoadMode::Schedule(schedule) => {
            out.insert("auto_offset".into(), json!(schedule.auto_offset));
            if let ScheduleTrace::File { path, .. } = &schedule.trace {
                out.insert("trace".into(), json!(path));
            }
            "fixed_schedule"
        }
        LoadMode::AgenticReplay(replay) => {
            out.insert("concurrency".into(), json!(replay.lanes));
            out.insert("trajectory_start_min_ratio".into(), json!(replay.start_min_ratio));
            out.insert("trajectory_start_max_ratio".into(), json!(replay.start_max_ratio));
            out.insert("burst_phase_starts".into(), json!(replay.burst_phase_starts));
            out.insert("system_idle_gap_cap_seconds".into(), json!(replay.system_idle_gap_cap_s));
            out.insert("agentic_cache_warmup_duration".into(), json!(replay.cache_warmup_s));
            "agentic_replay"
        }
        LoadMode::UserCentric { users, rate, .. } => {
            out.insert("users".into(), json!(users));
            out.insert("rate".into(), json!(rate));
            "user_centric"
        }
        // AIPerf has no phase that starts sessions at a rate: the plan under `plan` holds it.
        LoadMode::Users { users, session_rate, .. } => {
            out.insert("users".into(), json!(users));
            out.insert("session_rate".into(), json!(session_rate));
            "session_rate"
        }
        LoadMode::Scripted { users, session, workers, session_rate, .. } => {
            out.insert("users".into(), json!(users));
            out.insert("session".into(), json!(session));
            if let Some(rate) = session_rate {
                out.insert("session_rate".into(), json!(rate));
            }
            if let Some(workers) = workers {
                out.insert("script_workers".into(), json!(workers));
            }
            "scripted_sessions"
        }
        LoadMode::AdaptiveScale(settings) => {
            out.insert("adaptive_scale".into(), settings.config_block());
            out.insert("sla".into(), json!(settings.sla));
            match settings.control {
                AdaptiveControl::Concurrency => {
                    out.insert("concurrency".into(), settings.value_json(settings.control_max));
                    "concurrency"
                }
                AdaptiveControl::RequestRate { arrival, max_concurrency, .. } => {
                    out.insert("rate".into(), json!(settings.control_max));
                    out.extend(max_concurrency.map(|n| ("concurrency".to_string(), json!(n))));
                    arrival_type(&arrival, &mut out)
                }
            }
        }
    };
    out.insert("type".into(), json!(kind));
    if let Some(requests) = phase.requests {
        out.insert("requests".into(), json!(requests));
    }
    if let Some(sessions) = phase.sessions {
        out.insert("sessions".into(), json!(sessions));
    }
    if let Some(duration) = phase.duration_s {
        out.insert("duration".into(), json!(duration));
    }
    out.insert("grace_period".into(), json!(phase.grace_period_s));
    if !phase.results {
        out.insert("exclude_from_results".into(), json!(true));
    }
    Value::Object(out)
}

/// `{"name"}`, the hub `revision` when one is pinned, `apply_chat_template` when set.
fn tokenizer(spec: &crate::plan::TokenizerSpec, apply_chat_template: bool) -> Value {
    let mut out = json!({"name": spec.name()});
    if let Some(revision) = spec.revision() {
        out["revision"] = json!(revision);
    }
    if apply_chat_template {
        out["apply_chat_template"] = json!(true);
    }
    out
}

fn artifacts(plan: &Plan) -> Value {
    let export = &plan.export;
    let mut out = json!({
        "records": if export.level.writes_records() { json!(export.record_formats.names()) } else { json!(false) },
        "raw": export.level == ExportLevel::Raw,
        "trace": export.http_trace,
        "show_trace_timing": export.trace_table,
        "auto_plot": false,
        "plot_required": false,
    });
    if export.outputs_json {
        out["export_outputs_json"] = json!(true);
    }
    if let Some(prefix) = &export.prefix {
        out["prefix"] = json!(prefix);
    }
    if let Some(slice) = plan.server_metrics.slice_duration_s {
        out["slice_duration"] = json!(slice);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::benchmark_of_plan;
    use crate::export::test_support::sample_result;

    #[test]
    fn the_plan_is_described_with_aiperf_s_sections() {
        let plan = sample_result().plan;
        let described = benchmark_of_plan(&plan);
        let keys: Vec<&str> = described.as_object().unwrap().keys().map(String::as_str).collect();
        for key in ["models", "endpoint", "datasets", "phases", "artifacts", "slos", "tokenizer", "runtime", "plan"] {
            assert!(keys.contains(&key), "{key} missing from {keys:?}");
        }
        assert_eq!(described["models"]["items"][0]["name"], plan.endpoint.model);
        assert_eq!(described["endpoint"]["urls"][0], plan.endpoint.url);
        assert_eq!(described["phases"].as_array().unwrap().len(), plan.phases.len());
        assert_eq!(described["plan"]["endpoint"]["url"], plan.endpoint.url);
    }
}
