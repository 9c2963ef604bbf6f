//! The few lines printed before a run starts: what it will send, where, how, and where its
//! artifacts go. Never shows the api key or header values.

use std::fmt::Write;
use std::path::Path;

use serde::Serialize;

use crate::plan::{
    Arrival, AtEnd, Dataset, Dist, Endpoint, FileDataset, LoadMode, NetworkLatency, Phase, Plan, PrefillCap,
    PromptCorpus, RampedQuantity, Sampling, Shape, SyntheticOptions,
};

/// ```text
/// run sweep_8 → artifacts/sweep_8
///   endpoint  http://127.0.0.1:8000 chat, model Qwen/Qwen3-0.6B, streaming
///   dataset   synthetic: isl 550±50, osl 256 tokens, 100 prompts, seed 42
///   phase 1   warmup: concurrency 4, 20 requests (not in results)
///   phase 2   concurrency 8, 60 s
///   checks    2 SLOs, 1 threshold
/// ```
pub fn render(plan: &Plan, artifact_dir: &Path) -> String {
    let mut text = format!("run {} → {}\n", plan.name, artifact_dir.display());
    let _ = writeln!(text, "  endpoint  {}", endpoint(&plan.endpoint));
    let dataset = if plan.reads_dataset() {
        dataset(&plan.dataset)
    } else {
        "none read (every phase runs a session function)".to_string()
    };
    let _ = writeln!(text, "  dataset   {dataset}");
    for (i, phase) in plan.phases.iter().enumerate() {
        let _ = writeln!(text, "  phase {:<3} {}", i + 1, phase_line(phase));
    }
    if let Some(checks) = checks(plan) {
        let _ = writeln!(text, "  checks    {checks}");
    }
    if let Some(network) = network_latency(&plan.network_latency) {
        let _ = writeln!(text, "  network   {network}");
    }
    if let Some(control) = plan.server_control.describe() {
        let _ = writeln!(text, "  control   {control}");
    }
    if let Some(threshold) = plan.failed_request_threshold {
        let _ = writeln!(text, "  stop      when more than {} % of a results phase's requests fail", 100.0 * threshold);
    }
    text
}

/// The network-latency adjustment in words; None when off.
fn network_latency(latency: &NetworkLatency) -> Option<String> {
    match *latency {
        NetworkLatency::Off => None,
        NetworkLatency::Automatic { ping_interval_s } => {
            Some(format!("round trip probed every {ping_interval_s} s, subtracted as network_adjusted_*"))
        }
        NetworkLatency::Mean { mean_ms } => Some(format!("{mean_ms} ms round trip subtracted as network_adjusted_*")),
    }
}

fn endpoint(endpoint: &Endpoint) -> String {
    let url = match (endpoint.is_mock(), endpoint.more_urls.len()) {
        (true, _) => "mock (built-in server)".to_string(),
        (false, 0) => endpoint.url.clone(),
        (false, more) => format!("{} and {more} more urls ({})", endpoint.url, endpoint.url_strategy.as_str()),
    };
    let streaming = if endpoint.streaming { "streaming" } else { "not streaming" };
    let model = match endpoint.more_models.is_empty() {
        true => format!("model {}", endpoint.model),
        false => {
            let models = endpoint.models().collect::<Vec<_>>().join(", ");
            format!("models {models} ({})", endpoint.model_selection.as_str())
        }
    };
    format!("{url} {}, {model}, {streaming}", endpoint.kind.as_str())
}

fn dataset(dataset: &Dataset) -> String {
    match dataset {
        Dataset::Synthetic(spec) => {
            let lengths = match spec.options.mix.len() {
                0 => match &spec.osl {
                    Some(osl) => format!("isl {}, osl {} tokens", dist(&spec.isl), dist(osl)),
                    None => format!("isl {} tokens, the server chooses the output length", dist(&spec.isl)),
                },
                pairs => format!("a mix of {pairs} isl/osl pairs"),
            };
            let shape = prompt_shape(&spec.options);
            let entries = match &spec.options.conversation {
                Some(conversation) => format!(
                    "{} conversations of {} turns ({} s between)",
                    spec.entries,
                    dist(&conversation.turns),
                    dist(&conversation.turn_delay_s.scaled(conversation.turn_delay_ratio))
                ),
                None => format!("{} prompts", spec.entries),
            };
            format!("synthetic: {lengths}, {entries}, seed {}{shape}", spec.random_seed)
        }
        Dataset::File(FileDataset { accuracy: Some(accuracy), draws, at_end, .. }) => {
            let tasks = match accuracy.tasks.is_empty() {
                true => "all tasks".to_string(),
                false => format!("tasks {}", accuracy.tasks.join(", ")),
            };
            let first = draws.map(|draws| format!(", the first {draws} questions")).unwrap_or_default();
            format!(
                "accuracy benchmark {} ({tasks}{first}; {}), answers graded",
                accuracy.benchmark,
                past_the_last_entry(Sampling::Sequential, *at_end)
            )
        }
        Dataset::File(spec) => {
            let system = spec.system_prompt.as_deref().map(verbatim_system_prompt).map(|s| format!(", {s}"));
            let synthesized = if spec.synthesis.is_some() { ", synthesized" } else { "" };
            format!(
                "file {} ({}{synthesized}, {}){}",
                spec.path,
                name_of(&spec.format),
                past_the_last_entry(spec.sampling, spec.at_end),
                system.unwrap_or_default()
            )
        }
    }
}

/// What requests take once every entry of a file was sent (AIPerf's samplers wrap).
fn past_the_last_entry(sampling: Sampling, at_end: AtEnd) -> &'static str {
    match (at_end, sampling) {
        (AtEnd::Stop, _) => "each entry sent at most once per phase, then the phase stops",
        (AtEnd::Wrap, Sampling::Sequential) => "in file order; more requests than entries start again from the first",
        (AtEnd::Wrap, Sampling::Shuffle) => "shuffled; more requests than entries go through them again, reshuffled",
        (AtEnd::Wrap, Sampling::Random) => {
            "drawn at random with replacement, a draw per request (per session for sessions); with `entries`, drawn once and gone through again"
        }
    }
}

fn verbatim_system_prompt(text: &str) -> String {
    format!("system prompt \"{}\" ({} chars)", text.chars().take(24).collect::<String>(), text.chars().count())
}

/// The synthetic options that shape each prompt, each after a comma; empty without any.
fn prompt_shape(options: &SyntheticOptions) -> String {
    let mut shape = String::new();
    if let Some(block) = options.block_size {
        let _ = write!(shape, ", isl in blocks of {block}");
    }
    if let Some(tokens) = options.system_prompt_tokens {
        let _ = write!(shape, ", system prompt {tokens} tokens");
    }
    if let Some(text) = &options.system_prompt {
        let _ = write!(shape, ", {}", verbatim_system_prompt(text));
    }
    if let Some(tokens) = options.user_context_tokens {
        let _ = write!(shape, ", a user context of {tokens} tokens per conversation");
    }
    if let Some(pool) = options.prefix_pool {
        let _ = write!(shape, ", {} prefixes of {} tokens", pool.prefixes, pool.length);
    }
    if options.cache_bust {
        shape.push_str(", cache bust");
    }
    if let Some(size) = options.batch_size {
        let _ = write!(shape, ", {size} texts per request");
    }
    match options.corpus {
        PromptCorpus::Sonnet => {}
        PromptCorpus::Coding => shape.push_str(", coding corpus"),
        PromptCorpus::Random(style) => {
            let _ = write!(shape, ", random vocabulary tokens ({})", style.name());
        }
    }
    shape
}

fn phase_line(phase: &Phase) -> String {
    let stops: Vec<String> = [
        phase.requests.map(|requests| format!("{requests} requests")),
        phase.sessions.map(|sessions| format!("{sessions} sessions")),
        phase.duration_s.map(|duration_s| format!("{duration_s} s")),
    ]
    .into_iter()
    .flatten()
    .collect();
    let stop = if stops.is_empty() { String::new() } else { format!(", {}", stops.join(" or ")) };
    let results = if phase.results { "" } else { " (not in results)" };
    let mode = mode(&phase.mode);
    // A phase named after its mode (`concurrency`, `rate`, …) shows the mode alone.
    let name =
        if mode.split(' ').next() == Some(phase.name.as_str()) { String::new() } else { format!("{}: ", phase.name) };
    format!("{name}{mode}{stop}{results}")
}

fn mode(mode: &LoadMode) -> String {
    match mode {
        LoadMode::Concurrency { concurrency, prefill_concurrency } => match prefill_concurrency {
            Some(prefill) => format!("concurrency {concurrency} (prefill {prefill})"),
            None => format!("concurrency {concurrency}"),
        },
        LoadMode::Rate { rate, arrival: pattern, max_concurrency, prefill, .. } => {
            let cap = max_concurrency.map(|max| format!(", at most {max} in flight")).unwrap_or_default();
            let prefill = prefill.map(|cap| format!(" (prefill {})", prefill_cap(cap))).unwrap_or_default();
            format!("rate {rate}/s {}{cap}{prefill}", arrival(pattern))
        }
        closed if closed.ramped_closed_loop().is_some() => {
            let (users, ramp_s, prefill) = closed.ramped_closed_loop().unwrap_or_default();
            let ramp = ramp_s.map(|seconds| format!(", ramped from 1 over {seconds} s")).unwrap_or_default();
            let prefill = prefill.map(|cap| format!(" (prefill {})", prefill_cap(cap))).unwrap_or_default();
            format!("concurrency {users}{ramp}{prefill}, then held")
        }
        LoadMode::Ramp {
            ramped,
            start,
            stages,
            arrival: pattern,
            hold,
            max_concurrency,
            max_concurrency_ramp_s,
            prefill,
            ..
        } => {
            let targets: Vec<String> = stages.iter().map(|stage| stage.target.to_string()).collect();
            let seconds: f64 = stages.iter().map(|stage| stage.duration_s).sum();
            let held = if *hold { ", then held" } else { "" };
            let cap_ramp = max_concurrency_ramp_s.map(|s| format!(" (ramped from 1 over {s} s)")).unwrap_or_default();
            let cap = max_concurrency.map(|max| format!(", at most {max} in flight{cap_ramp}")).unwrap_or_default();
            let prefill = prefill.map(|cap| format!(" (prefill {})", prefill_cap(cap))).unwrap_or_default();
            if *ramped == RampedQuantity::Rate && stages.is_empty() {
                return format!("rate {start}/s {}{cap}{prefill}", arrival(pattern));
            }
            match ramped {
                RampedQuantity::Concurrency => {
                    format!("ramp concurrency {start} → {} over {seconds} s{held}{prefill}", targets.join(" → "))
                }
                RampedQuantity::Rate => {
                    let pattern = arrival(pattern);
                    format!(
                        "ramp rate {start} → {}/s over {seconds} s {pattern}{held}{cap}{prefill}",
                        targets.join(" → ")
                    )
                }
            }
        }
        LoadMode::Schedule(fixed) => {
            format!("schedule of {} timestamps, {}× speed", fixed.trace.timestamps_ms().len(), fixed.speedup)
        }
        LoadMode::Users { users, session_rate, turns, think_time_s, .. } => {
            format!("users {users} ({session_rate} sessions/s, {} turns, think {} s)", dist(turns), dist(think_time_s))
        }
        LoadMode::AgenticReplay(replay) => {
            let stage = match replay.stage {
                crate::plan::ReplayStage::Priming => "warm-up of the mid-flight sessions",
                crate::plan::ReplayStage::Profiling => "turns from each cut",
            };
            format!(
                "agentic replay, {} lanes, cut in {}–{} of each trajectory: {stage}",
                replay.lanes, replay.start_min_ratio, replay.start_max_ratio
            )
        }
        LoadMode::UserCentric { users, rate, turns, .. } => {
            let gap_s = *users as f64 / rate;
            format!(
                "user-centric {users} users, {rate} req/s in all (each user's turns {gap_s} s apart, {} turns)",
                dist(turns)
            )
        }
        LoadMode::Scripted { users, session, workers, session_rate, .. } => {
            let on = workers.map_or_else(String::new, |workers| format!(", on {workers} script workers"));
            match session_rate {
                Some(rate) => format!(
                    "scripted sessions: {rate} new a second, at most {users} live, each running `{session}`{on}"
                ),
                None => format!("scripted sessions: {users} users, each running `{session}`{on}"),
            }
        }
        LoadMode::AdaptiveScale(settings) => {
            let slas: Vec<String> = settings.sla.iter().map(|filter| filter.to_string()).collect();
            let unit = if settings.control.is_integral() { "users" } else { "req/s" };
            format!(
                "adaptive scale {}–{} {unit} holding {}, judged every {} s, boundary held {} s",
                settings.control_min,
                settings.control_max,
                slas.join(" and "),
                settings.assessment_period_s,
                settings.sustain_s
            )
        }
    }
}

/// `8`, or `8, ramped from 1 over 10 s`.
fn prefill_cap(cap: PrefillCap) -> String {
    match cap.ramp_s {
        Some(seconds) => format!("{}, ramped from 1 over {seconds} s", cap.concurrency),
        None => cap.concurrency.to_string(),
    }
}

fn arrival(arrival: &Arrival) -> String {
    match arrival {
        Arrival::Constant => "constant".to_string(),
        Arrival::Poisson => "poisson".to_string(),
        Arrival::Gamma { smoothness } => format!("gamma (smoothness {smoothness})"),
    }
}

/// `550±50`, `256` without spread, `lognormal 1024 (median 904)`, `mixture (mean 870)`.
fn dist(dist: &Dist) -> String {
    match &dist.shape {
        Shape::Normal { mean, stddev } if *stddev > 0.0 => format!("{mean}±{stddev}"),
        Shape::Normal { mean, .. } => mean.to_string(),
        Shape::Lognormal { mean, median } => format!("lognormal {mean} (median {median})"),
        Shape::Multimodal { .. } => format!("mixture (mean {:.0})", dist.mean()),
        Shape::Empirical { .. } => format!("empirical (mean {:.0})", dist.mean()),
        Shape::Uniform { low, high } => format!("{low}..={high}"),
        Shape::RatioWindow { mean, ratio } => format!("{mean}±{}%", ratio * 100.0),
    }
}

/// `2 SLOs, 1 threshold (abort on fail)`; `None` when the run has neither.
fn checks(plan: &Plan) -> Option<String> {
    let mut parts = Vec::new();
    if !plan.slos.is_empty() {
        parts.push(plural(plan.slos.len(), "SLO", "SLOs"));
    }
    if !plan.thresholds.is_empty() {
        let abort = if plan.abort_on_fail { " (abort on fail)" } else { "" };
        parts.push(format!("{}{abort}", plural(plan.thresholds.len(), "threshold", "thresholds")));
    }
    (!parts.is_empty()).then(|| parts.join(", "))
}

fn plural(count: usize, one: &str, many: &str) -> String {
    format!("{count} {}", if count == 1 { one } else { many })
}

/// The name a value has in the scenario (its serde name): `single_turn`, `shuffle`, ….
fn name_of<T: Serialize>(value: &T) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(name)) => name,
        _ => "?".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::plan::{FileDataset, PhaseKind, SyntheticDataset};

    fn phase(name: &str, kind: PhaseKind, mode: LoadMode, requests: Option<u64>, duration_s: Option<f64>) -> Phase {
        Phase {
            name: name.to_string(),
            kind,
            mode,
            requests,
            sessions: None,
            duration_s,
            grace_period_s: 30.0,
            results: kind == PhaseKind::Profiling,
            cancel: None,
        }
    }

    fn plan() -> Plan {
        let endpoint: Endpoint = serde_json::from_value(serde_json::json!({
            "url": "http://10.0.0.1:8000", "model": "Qwen/Qwen3-0.6B", "type": "chat", "streaming": true,
            "api_key": "sk-secret", "headers": { "x-api-key": "header-secret" }
        }))
        .unwrap();
        Plan {
            name: "sweep_8".to_string(),
            endpoint,
            dataset: Dataset::Synthetic(SyntheticDataset::new(Dist::normal(550.0, 50.0), Dist::fixed(256.0), 42, 100)),
            phases: vec![
                phase(
                    "warmup",
                    PhaseKind::Warmup,
                    LoadMode::Concurrency { concurrency: 4, prefill_concurrency: None },
                    Some(20),
                    None,
                ),
                phase(
                    "rate",
                    PhaseKind::Profiling,
                    LoadMode::Rate {
                        rate: 2.5,
                        arrival: Arrival::Poisson,
                        max_concurrency: Some(64),
                        seed: 0,
                        prefill: None,
                    },
                    Some(100),
                    Some(60.0),
                ),
            ],
            tokenizer: crate::plan::TokenizerSpec::Builtin,
            request_timeout_s: 600.0,
            export: Default::default(),
            server_metrics: Default::default(),
            gpu_telemetry: Default::default(),
            slos: BTreeMap::from([
                ("time_to_first_token".to_string(), 200.0),
                ("inter_token_latency".to_string(), 20.0),
            ]),
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
        }
    }

    #[test]
    fn a_plan_in_a_few_lines_without_secrets() {
        let text = render(&plan(), Path::new("artifacts/sweep_8"));
        let expected = "\
run sweep_8 → artifacts/sweep_8
  endpoint  http://10.0.0.1:8000 chat, model Qwen/Qwen3-0.6B, streaming
  dataset   synthetic: isl 550±50, osl 256 tokens, 100 prompts, seed 42
  phase 1   warmup: concurrency 4, 20 requests (not in results)
  phase 2   rate 2.5/s poisson, at most 64 in flight, 100 requests or 60 s
  checks    2 SLOs
";
        assert_eq!(text, expected);
        assert!(!text.contains("secret"));
    }

    #[test]
    fn a_length_mix_and_the_prompt_shape_are_named() {
        let mut plan = plan();
        let Dataset::Synthetic(spec) = &mut plan.dataset else { panic!("synthetic") };
        let pair = crate::plan::LengthPair { isl: spec.isl.clone(), osl: Dist::fixed(150.0), weight: 1.0 };
        spec.options = SyntheticOptions {
            mix: vec![pair.clone(), pair],
            block_size: Some(64),
            system_prompt_tokens: Some(200),
            prefix_pool: Some(crate::plan::PrefixPool { prefixes: 8, length: 512 }),
            cache_bust: false,
            batch_size: None,
            audio: None,
            video: None,
            conversation: None,
            system_prompt: None,
            user_context_tokens: Some(16),
            rankings: None,
            corpus: crate::plan::PromptCorpus::Random(crate::plan::CorpusStyle::Sglang),
        };
        let text = render(&plan, Path::new("artifacts/sweep_8"));
        let expected = "  dataset   synthetic: a mix of 2 isl/osl pairs, 100 prompts, seed 42, isl in blocks of 64, \
                        system prompt 200 tokens, a user context of 16 tokens per conversation, 8 prefixes of 512 tokens, \
                        random vocabulary tokens (sglang)\n";
        assert!(text.contains(expected), "{text}");
    }

    #[test]
    fn in_phase_ramps_are_named_with_their_steps_and_caps() {
        let prefill = Some(PrefillCap { concurrency: 8, ramp_s: Some(10.0) });
        let users = crate::plan::closed_loop(64, Some(30.0), prefill);
        assert_eq!(
            mode(&users),
            "concurrency 64, ramped from 1 over 30 s (prefill 8, ramped from 1 over 10 s), then held"
        );
        let capped = crate::plan::held_rate(20.0, Vec::new(), Arrival::Poisson, (Some(200), Some(60.0)), 0);
        assert_eq!(mode(&capped), "rate 20/s poisson, at most 200 in flight (ramped from 1 over 60 s)");
    }

    #[test]
    fn file_datasets_and_other_modes_are_named() {
        let mut plan = plan();
        plan.dataset = Dataset::File(FileDataset {
            sampling: crate::plan::Sampling::Shuffle,
            at_end: crate::plan::AtEnd::Stop,
            ..FileDataset::of("traces/a.jsonl", crate::plan::FileFormat::Mooncake)
        });
        plan.phases = vec![phase(
            "ramp",
            PhaseKind::Profiling,
            LoadMode::Ramp {
                ramped: RampedQuantity::Concurrency,
                start: 1.0,
                stages: vec![
                    crate::plan::RampStage { duration_s: 10.0, target: 8.0 },
                    crate::plan::RampStage { duration_s: 20.0, target: 32.0 },
                ],
                arrival: Arrival::Constant,
                seed: 0,
                hold: false,
                max_concurrency: None,
                max_concurrency_ramp_s: None,
                prefill: None,
            },
            None,
            None,
        )];
        let text = render(&plan, Path::new("out/x"));
        assert!(
            text.contains(
                "  dataset   file traces/a.jsonl (mooncake, each entry sent at most once per phase, then the phase stops)\n"
            ),
            "{text}"
        );
        assert!(text.contains("  phase 1   ramp concurrency 1 → 8 → 32 over 30 s\n"), "{text}");
    }

    #[test]
    fn a_run_of_scripted_sessions_alone_reads_no_dataset_and_says_so() {
        let mut plan = plan();
        let scripted =
            LoadMode::Scripted { users: 4, session: "agent".into(), seed: 0, workers: None, session_rate: None };
        plan.phases[1].mode = scripted.clone();
        assert!(
            render(&plan, Path::new("out/x")).contains("  dataset   synthetic: isl 550±50"),
            "the warm-up reads it"
        );
        plan.phases[0].mode = scripted;
        let text = render(&plan, Path::new("out/x"));
        assert!(text.contains("  dataset   none read (every phase runs a session function)\n"), "{text}");
    }
}
