//! A `ProfileJob` written as the Rhai scenario that builds the same plans: one `run(#{..})`,
//! or a `sweep(#{..})` whose function returns each variation's run map. `aiperf profile`
//! executes this text, and `--emit-scenario` saves it as the way from AIPerf flags to Rhai.

use std::fmt::Write as _;

use serde_json::Value;

use crate::config::ProfileJob;
use crate::plan::{
    AdaptiveControl, Arrival, AtEnd, AudioSettings, ConnectionStrategy, Dataset, Dist, Endpoint, EndpointKind,
    ExportLevel, FileDataset, ImageFormat, LoadMode, MaxTokensField, NetworkLatency, Phase, PhaseKind, Plan,
    PrefillCap, Preflight, PublicSource, RampedQuantity, Sampling, ScheduleTrace, ServerControl, ServerMetricsFormat,
    Shape, TokenizerSpec,
};

/// Where the API key of the scenario comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApiKey {
    /// Written in the text (never saved: the text `aiperf profile` runs in memory).
    Inline,
    /// Read from this environment variable when the scenario runs (a saved scenario).
    FromEnv(&'static str),
}

/// The scenario text of `job`; a sweep is named `sweep_name` (its folder).
pub fn scenario(job: &ProfileJob, sweep_name: &str, header: &str, api_key: ApiKey) -> String {
    let mut out = String::new();
    for line in header.lines() {
        let _ = writeln!(out, "// {line}");
    }
    let repeat = repetition(job) + if job.report { ", report: true" } else { "" };
    match job.variations.as_slice() {
        [only] if only.values.is_empty() => {
            let _ = writeln!(out, "run({});", run_map(&only.plan, true, &repeat, api_key, 0));
        }
        variations => {
            out.push_str("let runs = [\n");
            for variation in variations {
                let _ = writeln!(
                    out,
                    "    #{{ point: {}, run: {} }},",
                    json(&Value::Object(variation.values.clone())),
                    run_map(&variation.plan, false, "", api_key, 1)
                );
            }
            out.push_str("];\n");
            let mut columns = serde_json::Map::new();
            for variation in variations {
                for (path, value) in &variation.values {
                    let column = columns.entry(path.clone()).or_insert_with(|| Value::Array(Vec::new()));
                    if let Value::Array(values) = column {
                        values.push(value.clone());
                    }
                }
            }
            let pause = if job.variation_pause_s > 0.0 {
                format!(", pause: {}", float(job.variation_pause_s))
            } else {
                String::new()
            };
            let _ = writeln!(
                out,
                "sweep(#{{ name: {}, zip: {}{repeat}{pause} }}, |v| {{\n    for each in runs {{\n        if each.point == v {{ return each.run; }}\n    }}\n    fail(`no run for the variation ${{v}}`);\n}});",
                string(sweep_name),
                json(&Value::Object(columns)),
            );
        }
    }
    out
}

/// `, trials: n, cooldown: s, confidence: c, warmup_once: w` when the job repeats its runs.
pub(super) fn repetition(job: &ProfileJob) -> String {
    if job.trials <= 1 {
        return String::new();
    }
    format!(
        ", trials: {}, cooldown: {}, confidence: {}, warmup_once: {}{}{}",
        job.trials,
        float(job.cooldown_s),
        float(job.confidence),
        job.warmup_once,
        if job.vary_seed { ", vary_seed: true" } else { "" },
        job.convergence
            .as_ref()
            .map(|convergence| format!(", convergence: {}", convergence.rhai_map()))
            .unwrap_or_default()
    )
}

pub(super) fn run_map(plan: &Plan, named: bool, repeat: &str, api_key: ApiKey, depth: usize) -> String {
    let pad = "    ".repeat(depth + 1);
    let end = "    ".repeat(depth);
    let mut keys = Vec::new();
    if named {
        keys.push(format!("name: {}", string(&plan.name)));
    }
    keys.push(format!("endpoint: {}", endpoint(&plan.endpoint, api_key)));
    keys.push(format!("dataset: {}", dataset(&plan.dataset)));
    let phases: Vec<String> = plan.phases.iter().map(phase).collect();
    keys.push(format!("phases: [{}]", phases.join(", ")));
    keys.push(format!(
        "tokenizer: {}",
        string(match &plan.tokenizer {
            TokenizerSpec::Builtin => "builtin",
            TokenizerSpec::File { path } => path,
            TokenizerSpec::Hub { id } => id,
        })
    ));
    keys.push(format!("request_timeout: {}", float(plan.request_timeout_s)));
    let level = match plan.export.level {
        ExportLevel::Summary => "summary",
        ExportLevel::Records => "records",
        ExportLevel::Raw => "raw",
    };
    keys.push(format!("export_level: {}", string(level)));
    if let Some(prefix) = &plan.export.prefix {
        keys.push(format!("export_prefix: {}", string(prefix)));
    }
    if let Some(slice_ns) = plan.export.slice_duration_ns {
        keys.push(format!("slice_duration: {}", float(slice_ns as f64 / 1e9)));
    }
    keys.push(format!("export_http_trace: {}", plan.export.http_trace));
    if !plan.export.record_formats.is_default() {
        let names: Vec<String> = plan.export.record_formats.names().into_iter().map(string).collect();
        keys.push(format!("record_formats: [{}]", names.join(", ")));
    }
    keys.push(format!("trace_table: {}", plan.export.trace_table));
    keys.push(format!("server_metrics: {}", server_metrics(plan)));
    let telemetry = &plan.gpu_telemetry;
    keys.push(format!(
        "gpu_telemetry: #{{ enabled: {}, dcgm_urls: {}, interval: {}, amd_smi: {} }}",
        telemetry.enabled,
        strings(&telemetry.dcgm_urls),
        float(telemetry.interval_s),
        telemetry.amd_smi
    ));
    if !plan.slos.is_empty() {
        let slos: Vec<String> =
            plan.slos.iter().map(|(tag, value)| format!("{}: {}", string(tag), slo(tag, *value))).collect();
        keys.push(format!("slos: #{{ {} }}", slos.join(", ")));
    }
    keys.push(format!("use_server_token_count: {}", plan.use_server_token_count));
    if !plan.preflight.is_default() {
        keys.push(preflight(&plan.preflight));
    }
    keys.extend(server_control(&plan.server_control));
    if let Some(threshold) = plan.failed_request_threshold {
        keys.push(format!("failed_request_threshold: {}", float(threshold)));
    }
    match plan.network_latency {
        NetworkLatency::Off => {}
        NetworkLatency::Automatic { ping_interval_s } => {
            keys.push(format!("network_latency: #{{ automatic: true, ping_interval: {} }}", float(ping_interval_s)))
        }
        NetworkLatency::Mean { mean_ms } => keys.push(format!("network_latency: #{{ mean: ms({}) }}", float(mean_ms))),
    }
    if let Some(address) = plan.metrics_listen {
        keys.push(format!("metrics_listen: {}", string(&address.to_string())));
    }
    keys.extend(super::emit_outputs::outputs_key(&plan.outputs, json));
    format!("#{{\n{pad}{}{repeat}\n{end}}}", keys.join(&format!(",\n{pad}")))
}

fn preflight(preflight: &Preflight) -> String {
    let mode = preflight.mode.map(|mode| format!(", mode: {}", string(mode.as_str()))).unwrap_or_default();
    format!(
        "preflight: #{{ enabled: {}, timeout: {}, wait_timeout: {}, wait_interval: {}{mode} }}",
        preflight.enabled,
        float(preflight.timeout_s),
        float(preflight.wait_timeout_s),
        float(preflight.wait_interval_s)
    )
}

/// The `reset_kv_cache` and `server_profiler` keys of a run that sends them.
fn server_control(control: &ServerControl) -> Vec<String> {
    let mut keys = Vec::new();
    if let Some(reset) = &control.reset_kv_cache {
        keys.push(format!(
            "reset_kv_cache: #{{ path: {}, timeout: {}, max_retry: {} }}",
            string(&reset.path),
            float(reset.timeout_s),
            float(reset.max_retry_s)
        ));
    }
    if let Some(profiler) = &control.server_profiler {
        keys.push(format!(
            "server_profiler: #{{ start_path: {}, stop_path: {}, timeout: {} }}",
            string(&profiler.start_path),
            string(&profiler.stop_path),
            float(profiler.timeout_s)
        ));
    }
    keys
}

/// An SLO in the scenario's units: seconds for metrics in ms (`ms(..)`), the metric's unit otherwise.
fn slo(tag: &str, value: f64) -> String {
    match crate::metrics::registry::metric(tag) {
        Some(def) if def.unit == "ms" => format!("ms({})", float(value)),
        _ => float(value),
    }
}

fn endpoint(endpoint: &Endpoint, api_key: ApiKey) -> String {
    let (kind, dialect) = match endpoint.kind {
        EndpointKind::Chat => ("chat", None),
        EndpointKind::Completions => ("completions", None),
        EndpointKind::Embeddings => ("embeddings", None),
        EndpointKind::CohereRankings => ("rankings", Some("cohere")),
        EndpointKind::TeiRankings => ("rankings", Some("tei")),
        EndpointKind::NimRankings => ("rankings", Some("nim")),
        EndpointKind::Responses => ("responses", None),
        EndpointKind::Tgi => ("tgi", None),
        EndpointKind::Template => ("template", None),
        EndpointKind::Messages => ("messages", None),
        EndpointKind::Raw => ("raw", None),
        EndpointKind::ChatEmbeddings => ("chat_embeddings", None),
        EndpointKind::NimEmbeddings => ("nim_embeddings", None),
        EndpointKind::SolidoRag => ("solido_rag", None),
        media => (media.as_str(), None),
    };
    let url = match endpoint.more_urls.is_empty() {
        true => string(&endpoint.url),
        false => format!("[{}]", endpoint.urls().map(string).collect::<Vec<_>>().join(", ")),
    };
    let mut keys = vec![
        format!("url: {url}"),
        format!("model: {}", string(&endpoint.model)),
        format!("kind: {}", string(kind)),
        format!("streaming: {}", endpoint.streaming),
    ];
    if !endpoint.url_strategy.is_default() {
        keys.push(format!("url_strategy: {}", string(endpoint.url_strategy.as_str())));
    }
    if endpoint.session_headers != crate::plan::default_session_headers() {
        let session_headers: Vec<String> = endpoint.session_headers.iter().map(|name| string(name)).collect();
        keys.push(format!("session_headers: [{}]", session_headers.join(", ")));
    }
    if let Some(dialect) = dialect {
        keys.push(format!("dialect: {}", string(dialect)));
    }
    if let Some(key) = &endpoint.api_key {
        keys.push(match api_key {
            ApiKey::Inline => format!("api_key: {}", string(key)),
            ApiKey::FromEnv(variable) => format!("api_key: env({})", string(variable)),
        });
    }
    if !endpoint.headers.is_empty() {
        let headers: Vec<String> =
            endpoint.headers.iter().map(|(name, value)| format!("{}: {}", string(name), string(value))).collect();
        keys.push(format!("headers: #{{ {} }}", headers.join(", ")));
    }
    if !endpoint.extra.is_empty() {
        keys.push(format!("extra: {}", json(&Value::Object(endpoint.extra.clone()))));
    }
    let transport = &endpoint.transport;
    if transport.tls.ca_file.is_some() || transport.tls.insecure {
        let ca = transport.tls.ca_file.as_deref().map(|ca| format!("ca_file: {}", string(ca)));
        keys.push(format!("tls: #{{ {} }}", ca.unwrap_or_else(|| "insecure: true".to_string())));
    }
    if transport.http2 {
        keys.push("http2: true".to_string());
    }
    let strategy = match transport.connections.strategy {
        ConnectionStrategy::Pooled => "pooled",
        ConnectionStrategy::NeverReuse => "never_reuse",
        ConnectionStrategy::Sticky => "sticky",
    };
    let max = transport.connections.max.map(|max| format!(", max: {max}")).unwrap_or_default();
    let http2 =
        transport.connections.http2_connections.map(|n| format!(", http2_connections: {n}")).unwrap_or_default();
    keys.push(format!("connections: #{{ strategy: {}{max}{http2} }}", string(strategy)));
    if let Some(path) = &endpoint.request.path {
        keys.push(format!("path: {}", string(path)));
    }
    if let Some(field) = endpoint.request.max_tokens_field {
        let field = match field {
            MaxTokensField::MaxTokens => "max_tokens",
            MaxTokensField::MaxCompletionTokens => "max_completion_tokens",
        };
        keys.push(format!("max_tokens_field: {}", string(field)));
    }
    if let Some(passages) = endpoint.request.passages {
        keys.push(format!("passages: {passages}"));
    }
    if endpoint.request.uuid_and_strip {
        keys.push("uuid_and_strip: true".to_string());
    }
    format!("endpoint(#{{ {} }})", keys.join(", "))
}

fn dataset(dataset: &Dataset) -> String {
    match dataset {
        Dataset::Synthetic(spec) => {
            let mut keys = vec![
                format!("isl: {}", dist(&spec.isl)),
                format!("osl: {}", dist(&spec.osl)),
                format!("seed: {}", spec.random_seed),
                format!("entries: {}", spec.entries),
            ];
            let options = &spec.options;
            if !options.mix.is_empty() {
                let mix: Vec<String> = options
                    .mix
                    .iter()
                    .map(|pair| {
                        format!(
                            "#{{ isl: {}, osl: {}, weight: {} }}",
                            dist(&pair.isl),
                            dist(&pair.osl),
                            float(pair.weight)
                        )
                    })
                    .collect();
                keys = vec![keys[2].clone(), keys[3].clone(), format!("mix: [{}]", mix.join(", "))];
            }
            if let Some(block_size) = options.block_size {
                keys.push(format!("block_size: {block_size}"));
            }
            if let Some(tokens) = options.system_prompt_tokens {
                keys.push(format!("system_prompt: {tokens}"));
            }
            if let Some(text) = &options.system_prompt {
                keys.push(format!("system_prompt: {}", string(text)));
            }
            if let Some(tokens) = options.user_context_tokens {
                keys.push(format!("user_context: {tokens}"));
            }
            if let Some(pool) = options.prefix_pool {
                keys.push(format!("prefix_pool: #{{ prefixes: {}, length: {} }}", pool.prefixes, pool.length));
            }
            if options.cache_bust {
                keys.push("cache_bust: true".to_string());
            }
            if let Some(size) = options.batch_size {
                keys.push(format!("batch_size: {size}"));
            }
            if let Some(lengths) = &options.rankings {
                keys.push(format!(
                    "rankings: #{{ query_tokens: {}, passage_tokens: {}, passages: {} }}",
                    dist(&lengths.query_tokens),
                    dist(&lengths.passage_tokens),
                    lengths.passages
                ));
            }
            if let Some(images) = spec.images {
                let format = match images.format {
                    ImageFormat::Png => "png",
                    ImageFormat::Jpeg => "jpeg",
                };
                let quality = images.quality.map(|q| format!(", quality: {q}")).unwrap_or_default();
                keys.push(format!(
                    "images: #{{ count: {}, width: {}, height: {}, format: {}{quality} }}",
                    images.count,
                    images.width,
                    images.height,
                    string(format)
                ));
            }
            if let Some(audio) = &options.audio {
                keys.push(audio_map(audio));
            }
            if let Some(video) = &options.video {
                keys.push(format!("video: {}", super::video::video_map(video)));
            }
            if let Some(conversation) = &options.conversation {
                keys.push(format!("turns: {}", dist(&conversation.turns)));
                keys.push(format!("turn_delay: {}", dist(&conversation.turn_delay_s)));
            }
            format!("synthetic(#{{ {} }})", keys.join(", "))
        }
        Dataset::File(spec @ FileDataset { public: Some(source), .. }) => public_dataset(spec, source),
        Dataset::File(spec @ FileDataset { accuracy: Some(accuracy), .. }) => {
            super::emit_accuracy::accuracy_call(spec, accuracy, string)
        }
        Dataset::File(spec) => {
            let format = spec.format.name();
            let sampling = match spec.sampling {
                Sampling::Sequential => "sequential",
                Sampling::Random => "random",
                Sampling::Shuffle => "shuffle",
            };
            let at_end = match spec.at_end {
                AtEnd::Wrap => "wrap",
                AtEnd::Stop => "stop",
            };
            // `file()` takes a block size for hash-id traces only (the others never use one).
            let block_size = match spec.format.takes_block_size() {
                true => format!(", block_size: {}", spec.block_size),
                false => String::new(),
            };
            let trace = format!(
                "{}{}",
                super::emit_trace_handling::keys(&spec.trace),
                super::emit_trace_handling::baseten_keys(&spec.baseten)
            );
            let draws = spec.draws.map(|draws| format!(", entries: {draws}")).unwrap_or_default();
            let records =
                spec.records.as_ref().map(|records| format!(", records: {}", string(records))).unwrap_or_default();
            let system = spec
                .system_prompt
                .as_ref()
                .map(|text| format!(", system_prompt: {}", string(text)))
                .unwrap_or_default();
            let file = format!(
                "file(#{{ path: {}, format: {}, sampling: {}, at_end: {}, seed: {}{block_size}{draws}{records}{system}{trace} }})",
                string(&spec.path),
                string(format),
                string(sampling),
                string(at_end),
                spec.random_seed,
            );
            match &spec.synthesis {
                Some(settings) => {
                    format!("synthesize({file}, {})", super::trace_synthesis::emitted_map(settings, float))
                }
                None => file,
            }
        }
    }
}

/// `public_dataset(#{..})` of a public dataset, at the path the plan reads.
fn public_dataset(spec: &FileDataset, source: &PublicSource) -> String {
    let mut keys = vec![format!("name: {}", string(&source.name)), format!("path: {}", string(&spec.path))];
    if let Some(subset) = &source.hf_subset {
        keys.push(format!("hf_subset: {}", string(subset)));
    }
    if !source.filters.is_empty() {
        let filters: Vec<String> =
            source.filters.iter().map(|(key, value)| format!("{}: {}", string(key), string(value))).collect();
        keys.push(format!("filters: #{{ {} }}", filters.join(", ")));
    }
    let sampling =
        serde_json::to_value(spec.sampling).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default();
    let at_end =
        serde_json::to_value(spec.at_end).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default();
    keys.push(format!("sampling: {}, at_end: {}, seed: {}", string(&sampling), string(&at_end), spec.random_seed));
    if let Some(draws) = spec.draws {
        keys.push(format!("entries: {draws}"));
    }
    if let Some(system) = &spec.system_prompt {
        keys.push(format!("system_prompt: {}", string(system)));
    }
    format!("public_dataset(#{{ {} }})", keys.join(", "))
}

fn phase(phase: &Phase) -> String {
    let mut keys = vec![format!("name: {}", string(&phase.name))];
    let builder = match &phase.mode {
        LoadMode::Concurrency { concurrency, prefill_concurrency } => {
            keys.push(format!("users: {concurrency}"));
            if let Some(prefill) = prefill_concurrency {
                keys.push(format!("prefill_concurrency: {prefill}"));
            }
            match phase.kind {
                PhaseKind::Warmup => "warmup",
                PhaseKind::Cooldown => "cooldown",
                PhaseKind::Profiling => "concurrency",
            }
        }
        LoadMode::Rate { rate, arrival: pattern, max_concurrency, seed, prefill } => {
            keys.push(format!("rate: {}", float(*rate)));
            keys.extend(arrival(*pattern));
            if let Some(max) = max_concurrency {
                keys.push(format!("max_concurrency: {max}"));
            }
            keys.push(format!("seed: {seed}"));
            keys.extend(prefill_keys(*prefill));
            "rate"
        }
        mode @ LoadMode::Ramp { .. } if mode.ramped_closed_loop().is_some() => {
            let (users, ramp_s, prefill) = mode.ramped_closed_loop().unwrap_or_default();
            keys.push(format!("users: {users}"));
            keys.extend(ramp_s.map(|seconds| format!("ramp: {}", float(seconds))));
            keys.extend(prefill_keys(prefill));
            match phase.kind {
                PhaseKind::Warmup => "warmup",
                PhaseKind::Cooldown => "cooldown",
                PhaseKind::Profiling => "concurrency",
            }
        }
        LoadMode::Ramp {
            ramped: RampedQuantity::Rate,
            start,
            stages,
            arrival: pattern,
            seed,
            hold: true,
            max_concurrency,
            max_concurrency_ramp_s,
            prefill,
        } if stages.is_empty() => {
            keys.push(format!("rate: {}", float(*start)));
            keys.extend(arrival(*pattern));
            keys.extend(max_concurrency.map(|max| format!("max_concurrency: {max}")));
            keys.extend(max_concurrency_ramp_s.map(|seconds| format!("max_concurrency_ramp: {}", float(seconds))));
            keys.push(format!("seed: {seed}"));
            keys.extend(prefill_keys(*prefill));
            "rate"
        }
        LoadMode::Ramp {
            ramped,
            start,
            stages,
            arrival: pattern,
            seed,
            hold,
            max_concurrency,
            max_concurrency_ramp_s,
            prefill,
        } => {
            let stages: Vec<String> = stages
                .iter()
                .map(|stage| format!("#{{ duration: {}, target: {} }}", float(stage.duration_s), float(stage.target)))
                .collect();
            let quantity = match ramped {
                RampedQuantity::Concurrency => "users",
                RampedQuantity::Rate => "rate",
            };
            keys.push(format!("{quantity}: [{}]", stages.join(", ")));
            keys.push(format!("start: {}", float(*start)));
            if *ramped == RampedQuantity::Rate {
                keys.extend(arrival(*pattern));
            }
            keys.push(format!("seed: {seed}"));
            if *hold {
                keys.push("hold: true".to_string());
            }
            if let Some(max) = max_concurrency {
                keys.push(format!("max_concurrency: {max}"));
            }
            keys.extend(max_concurrency_ramp_s.map(|seconds| format!("max_concurrency_ramp: {}", float(seconds))));
            keys.extend(prefill_keys(*prefill));
            "ramp"
        }
        LoadMode::Schedule(schedule) => {
            keys.push(match &schedule.trace {
                ScheduleTrace::Inline { timestamps_ms } => {
                    let times: Vec<String> = timestamps_ms.iter().map(|t| float(*t)).collect();
                    format!("timestamps: [{}]", times.join(", "))
                }
                ScheduleTrace::File { path, .. } => format!("file: {}", string(path)),
            });
            if let Some(start) = schedule.start_offset_ms {
                keys.push(format!("start_offset: ms({})", float(start)));
            }
            if let Some(end) = schedule.end_offset_ms {
                keys.push(format!("end_offset: ms({})", float(end)));
            }
            keys.push(format!("auto_offset: {}", schedule.auto_offset));
            keys.push(format!("speedup: {}", float(schedule.speedup)));
            "schedule"
        }
        LoadMode::AgenticReplay(replay) => {
            keys.extend(agentic_replay_keys(replay));
            "agentic_replay"
        }
        LoadMode::UserCentric { users, rate, turns, seed } => {
            keys.push(format!("users: {users}"));
            keys.push(format!("rate: {}", float(*rate)));
            keys.push(format!("turns: {}", dist(turns)));
            keys.push(format!("seed: {seed}"));
            "users"
        }
        LoadMode::Users { users, session_rate, turns, think_time_s, seed } => {
            keys.push(format!("users: {users}"));
            keys.push(format!("session_rate: {}", float(*session_rate)));
            keys.push(format!("turns: {}", dist(turns)));
            keys.push(format!("think_time: {}", dist(think_time_s)));
            keys.push(format!("seed: {seed}"));
            "users"
        }
        // The function is the scenario's own: the emitted text names it, and must define it.
        LoadMode::Scripted { users, session } => {
            keys.push(format!("users: {users}"));
            keys.push(format!("session: Fn({})", string(session)));
            "users"
        }
        LoadMode::AdaptiveScale(settings) => {
            keys.extend(super::adaptive_scale::emitted_keys(settings));
            if let AdaptiveControl::RequestRate { arrival: pattern, .. } = settings.control {
                keys.extend(arrival(pattern));
            }
            "adaptive_scale"
        }
    };
    let ramp = matches!(phase.mode, LoadMode::Ramp { hold: false, .. });
    if let Some(requests) = phase.requests {
        keys.push(format!("requests: {requests}"));
    }
    if let Some(sessions) = phase.sessions {
        keys.push(format!("sessions: {sessions}"));
    }
    if let (Some(duration), false) = (phase.duration_s, ramp) {
        keys.push(format!("duration: {}", float(duration)));
    }
    keys.push(format!("grace_period: {}", float(phase.grace_period_s)));
    keys.push(format!("results: {}", phase.results));
    if let Some(cancel) = phase.cancel {
        keys.push(format!("cancel: #{{ fraction: {}, after: {} }}", float(cancel.fraction), float(cancel.after_s)));
    }
    let built = format!("{builder}(#{{ {} }})", keys.join(", "));
    match (builder, phase.kind) {
        ("warmup" | "cooldown" | "concurrency", _) | (_, PhaseKind::Profiling) => built,
        (_, PhaseKind::Warmup) => format!("warmup({built})"),
        (_, PhaseKind::Cooldown) => format!("cooldown({built})"),
    }
}

fn agentic_replay_keys(replay: &crate::plan::AgenticReplay) -> Vec<String> {
    let stage = match replay.stage {
        crate::plan::ReplayStage::Priming => "priming",
        crate::plan::ReplayStage::Profiling => "profiling",
    };
    let mut keys = vec![
        format!("stage: \"{stage}\""),
        format!("lanes: {}", replay.lanes),
        format!("start_min_ratio: {}", float(replay.start_min_ratio)),
        format!("start_max_ratio: {}", float(replay.start_max_ratio)),
    ];
    if replay.burst_phase_starts {
        keys.push("burst_phase_starts: true".to_string());
    }
    let seconds = [
        ("system_idle_gap_cap", replay.system_idle_gap_cap_s),
        ("cache_warmup", replay.cache_warmup_s),
        ("warmup_grace", replay.warmup_grace_s),
    ];
    keys.extend(seconds.iter().filter_map(|(key, value)| value.map(|s| format!("{key}: {}", float(s)))));
    if replay.allow_dataset_wrap {
        keys.push("allow_dataset_wrap: true".to_string());
    }
    keys.push(format!("seed: {}", replay.seed));
    keys
}

/// `prefill_concurrency` and its `prefill_ramp`, when there is a cap.
fn prefill_keys(prefill: Option<PrefillCap>) -> Vec<String> {
    let Some(cap) = prefill else { return Vec::new() };
    let ramp = cap.ramp_s.map(|seconds| format!("prefill_ramp: {}", float(seconds)));
    [format!("prefill_concurrency: {}", cap.concurrency)].into_iter().chain(ramp).collect()
}

fn arrival(pattern: Arrival) -> Vec<String> {
    match pattern {
        Arrival::Constant => vec!["arrival: \"constant\"".to_string()],
        Arrival::Poisson => vec!["arrival: \"poisson\"".to_string()],
        Arrival::Gamma { smoothness } => {
            vec!["arrival: \"gamma\"".to_string(), format!("smoothness: {}", float(smoothness))]
        }
    }
}

fn server_metrics(plan: &Plan) -> String {
    let config = &plan.server_metrics;
    let formats: Vec<String> = config
        .formats
        .iter()
        .map(|format| {
            string(match format {
                ServerMetricsFormat::Json => "json",
                ServerMetricsFormat::Csv => "csv",
                ServerMetricsFormat::Jsonl => "jsonl",
                ServerMetricsFormat::Parquet => "parquet",
            })
        })
        .collect();
    let mut keys = vec![
        format!("enabled: {}", config.enabled),
        format!("urls: {}", strings(&config.urls)),
        format!("interval: {}", float(config.interval_s)),
        format!("formats: [{}]", formats.join(", ")),
        format!("reachability_timeout: {}", float(config.reachability_timeout_s)),
    ];
    if let Some(slice) = config.slice_duration_s {
        keys.push(format!("slice_duration: {}", float(slice)));
    }
    if let Some(flush) = config.flush_period_s {
        keys.push(format!("flush_period: {}", float(flush)));
    }
    format!("#{{ {} }}", keys.join(", "))
}

/// `audio: #{ count, length, format, sample_rates, depths, channels }` of `synthetic(#{..})`.
fn audio_map(audio: &AudioSettings) -> String {
    let rates: Vec<String> = audio.sample_rates_khz.iter().map(|rate| float(*rate)).collect();
    let depths: Vec<String> = audio.depths.iter().map(u16::to_string).collect();
    format!(
        "audio: #{{ count: {}, length: {}, format: \"wav\", sample_rates: [{}], depths: [{}], channels: {} }}",
        audio.count,
        dist(&audio.length),
        rates.join(", "),
        depths.join(", "),
        audio.channels
    )
}

fn dist(dist: &Dist) -> String {
    let shape = match &dist.shape {
        Shape::Normal { mean, stddev } => format!("normal({}, {})", float(*mean), float(*stddev)),
        Shape::Lognormal { mean, median } => format!("lognormal({}, {})", float(*mean), float(*median)),
        Shape::Multimodal { peaks } => format!(
            "mixture([{}], [{}])",
            peaks.iter().map(|peak| self::dist(&peak.dist)).collect::<Vec<_>>().join(", "),
            peaks.iter().map(|peak| float(peak.weight)).collect::<Vec<_>>().join(", ")
        ),
        Shape::Empirical { points } => format!(
            "empirical([{}], [{}])",
            points.iter().map(|point| float(point.value)).collect::<Vec<_>>().join(", "),
            points.iter().map(|point| float(point.weight)).collect::<Vec<_>>().join(", ")
        ),
        Shape::Uniform { low, high } => format!("uniform({}, {})", float(*low), float(*high)),
    };
    if dist.min.is_none() && dist.max.is_none() {
        return shape;
    }
    let bound = |bound: Option<f64>| bound.map_or("()".to_string(), float);
    format!("bounded({shape}, {}, {})", bound(dist.min), bound(dist.max))
}

/// A Rhai float literal that reads back as exactly `value`.
pub(super) fn float(value: f64) -> String {
    let text = format!("{value:?}");
    match text.split_once('e') {
        Some((mantissa, exponent)) if !mantissa.contains('.') => format!("{mantissa}.0e{exponent}"),
        _ => text,
    }
}

pub(super) fn string(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_else(|_| "\"\"".to_string())
}

fn strings(items: &[String]) -> String {
    let items: Vec<String> = items.iter().map(|item| string(item)).collect();
    format!("[{}]", items.join(", "))
}

/// A JSON value as a Rhai literal (`()` for null, `#{..}` for objects).
pub(super) fn json(value: &Value) -> String {
    match value {
        Value::Null => "()".to_string(),
        Value::Bool(flag) => flag.to_string(),
        Value::Number(number) => match (number.as_i64(), number.as_f64()) {
            (Some(int), _) => int.to_string(),
            (None, Some(f)) => float(f),
            (None, None) => number.to_string(),
        },
        Value::String(text) => string(text),
        Value::Array(items) => format!("[{}]", items.iter().map(json).collect::<Vec<_>>().join(", ")),
        Value::Object(map) => {
            let entries: Vec<String> =
                map.iter().map(|(key, value)| format!("{}: {}", string(key), json(value))).collect();
            format!("#{{ {} }}", entries.join(", "))
        }
    }
}
