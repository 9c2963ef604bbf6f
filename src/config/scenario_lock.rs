//! AIPerf 0.13's locked scenario `inferencex-agentx-mvp` (`--scenario`, `benchmark.scenario`):
//! the defaults it fills where a run leaves them out (agentic replay, streaming, `ignore_eos`,
//! 1,800 s, the cut anywhere in a trace, the 10 s system idle cap, each tree cache-busted, a
//! fresh random seed) and the invariants it holds the run to. A conflict stops the run, unless
//! `unsafe_override` (`--unsafe-override`) lets it through as a warning; the summary then says
//! the run is no valid submission.

use serde_json::{Value, json};

use super::{ConfigError, get_path, set_path};
use crate::plan::ScenarioLock;

pub const AGENTX: &str = "inferencex-agentx-mvp";
/// The one Hugging Face repository `weka_hf` may read under the scenario.
const AGENTX_WEKA_HF_REPO: &str = "semianalysisai/cc-traces-weka-062126";
/// The loaders the scenario takes: AIPerf's pinned weka corpora, a local weka trace, weka_hf.
const AGENTX_LOADERS: &[&str] = &[
    "semianalysis_cc_traces_weka_with_subagents",
    "semianalysis_cc_traces_weka_with_subagents_256k",
    "semianalysis_cc_traces_weka_with_subagents_060226",
    "semianalysis_cc_traces_weka_with_subagents_060226_256k",
    "semianalysis_cc_traces_weka_with_subagents_060526",
    "semianalysis_cc_traces_weka_with_subagents_060526_256k",
    "semianalysis_cc_traces_weka_with_subagents_060826",
    "semianalysis_cc_traces_weka_with_subagents_060826_256k",
    "semianalysis_cc_traces_weka_061326",
    "semianalysis_cc_traces_weka_061326_256k",
    "semianalysis_cc_traces_weka_061526",
    "semianalysis_cc_traces_weka_061526_256k",
    "semianalysis_cc_traces_weka_062126",
    "semianalysis_cc_traces_weka_062126_256k",
    "weka_trace",
    "weka_hf",
];
const MIN_DURATION_S: f64 = 900.0;
const DEFAULT_DURATION_S: f64 = 1800.0;
const SYSTEM_IDLE_GAP_CAP_S: f64 = 10.0;
/// Phase types only rate, user-centric and fixed-schedule flags (or a config that says so) make.
const RATE_SHAPED: &[&str] = &["poisson", "constant", "gamma", "user_centric", "fixed_schedule"];

/// One conflict with an invariant: the flag, what the run has, what the scenario needs.
struct Conflict {
    flag: &'static str,
    got: String,
    required: String,
}

impl Conflict {
    fn new(flag: &'static str, got: impl ToString, required: impl ToString) -> Self {
        Self { flag, got: got.to_string(), required: required.to_string() }
    }

    fn line(&self) -> String {
        format!("{}: {}, required {}", self.flag, self.got, self.required)
    }
}

/// The scenario a variation is held to, and what to tell the user of it.
pub struct Locked {
    pub lock: ScenarioLock,
    pub notes: Vec<String>,
}

/// Holds variation `whole` (its `benchmark`, `random_seed`, `sweep`) to the scenario it
/// names, filling its defaults in; None without a scenario.
pub fn apply(whole: &mut Value) -> Result<Option<Locked>, ConfigError> {
    let Some(name) = get_path(whole, "benchmark.scenario").filter(|name| !name.is_null()).cloned() else {
        return Ok(None);
    };
    if name.as_str() != Some(AGENTX) {
        return Err(ConfigError::new(format!(
            "benchmark.scenario (--scenario): {name} is not a scenario this project has; {AGENTX} (agentic replay) is, and Rhai scenarios run with aiperf run"
        )));
    }
    let unsafe_override = get_path(whole, "benchmark.unsafe_override").and_then(Value::as_bool).unwrap_or(false);
    let mut conflicts = Vec::new();
    let mut notes = Vec::new();
    if whole.get("sweep").is_some_and(|sweep| !sweep.is_null()) {
        conflicts.push(Conflict::new("sweep", "a sweep", "one run (a scenario run is one submission)"));
    }
    lock_phases(whole, &mut conflicts);
    lock_endpoint(whole, &mut conflicts);
    lock_dataset(whole, &mut conflicts)?;
    if whole.get("random_seed").is_none_or(Value::is_null) {
        let seed = fresh_seed();
        whole["random_seed"] = json!(seed);
        notes.push(format!("note: scenario {AGENTX}: random seed {seed} (give --random-seed to repeat the run)"));
    }
    if !conflicts.is_empty() && !unsafe_override {
        let lines: Vec<String> = conflicts.iter().map(|conflict| format!("  - {}", conflict.line())).collect();
        return Err(ConfigError::new(format!(
            "scenario {AGENTX}: {} conflict{} with its invariants:\n{}\npass --unsafe-override to run anyway (its summary then says submission_valid: false)",
            conflicts.len(),
            if conflicts.len() == 1 { "" } else { "s" },
            lines.join("\n")
        )));
    }
    let overridden: Vec<String> = conflicts.iter().map(Conflict::line).collect();
    notes.extend(overridden.iter().map(|line| format!("warning: scenario {AGENTX}, overridden: {line}")));
    Ok(Some(Locked { lock: ScenarioLock { scenario: AGENTX.to_string(), overridden }, notes }))
}

/// A seed from the OS's randomness (std's per-process hash keys), below 2^53 so that every
/// JSON reader (and the config's numbers) keeps it exact.
fn fresh_seed() -> u64 {
    use std::hash::BuildHasher;
    std::collections::hash_map::RandomState::new().hash_one(std::time::SystemTime::now()) >> 11
}

/// Each measured phase: agentic replay (unless a rate-shaped or adaptive phase conflicts),
/// 1,800 s unless set (at least 900), the cut anywhere, the 10 s system idle cap.
fn lock_phases(whole: &mut Value, conflicts: &mut Vec<Conflict>) {
    let phases = get_path(whole, "benchmark.phases").and_then(Value::as_array).cloned().unwrap_or_default();
    let measured =
        phases.iter().filter(|phase| phase.get("exclude_from_results").and_then(Value::as_bool) != Some(true));
    for phase in measured {
        let Some(name) = phase.get("name").and_then(Value::as_str) else { continue };
        let path = |field: &str| format!("benchmark.phases.{name}.{field}");
        let kind = phase.get("type").and_then(Value::as_str).unwrap_or("concurrency");
        let adaptive = phase.get("adaptive_scale").is_some_and(|value| match value {
            Value::Bool(on) => *on,
            Value::Object(block) => block.get("enabled").and_then(Value::as_bool).unwrap_or(true),
            _ => false,
        });
        if RATE_SHAPED.contains(&kind) {
            conflicts.push(Conflict::new(
                "--request-rate / --user-centric-rate / --fixed-schedule",
                kind,
                "agentic_replay",
            ));
        } else if adaptive {
            conflicts.push(Conflict::new("--adaptive-scale", "adaptive_scale", "agentic_replay"));
        } else {
            set_path(whole, &path("timing_mode"), json!("agentic_replay"));
        }
        match phase.get("duration").filter(|duration| !duration.is_null()) {
            None => set_path(whole, &path("duration"), json!(DEFAULT_DURATION_S)),
            Some(duration) => {
                if let Some(duration_s) = duration.as_f64().filter(|seconds| *seconds < MIN_DURATION_S) {
                    conflicts.push(Conflict::new("--benchmark-duration", duration_s, format!(">= {MIN_DURATION_S} s")));
                }
            }
        }
        for (field, default) in [("trajectory_start_min_ratio", 0.0), ("trajectory_start_max_ratio", 1.0)] {
            if phase.get(field).is_none_or(Value::is_null) {
                set_path(whole, &path(field), json!(default));
            }
        }
        match phase.get("system_idle_gap_cap_seconds").and_then(Value::as_f64) {
            Some(cap_s) if cap_s != SYSTEM_IDLE_GAP_CAP_S => {
                conflicts.push(Conflict::new("--system-idle-gap-cap-seconds", cap_s, SYSTEM_IDLE_GAP_CAP_S))
            }
            _ => set_path(whole, &path("system_idle_gap_cap_seconds"), json!(SYSTEM_IDLE_GAP_CAP_S)),
        }
    }
}

/// Streaming and `ignore_eos: true`, filled in unless set otherwise.
fn lock_endpoint(whole: &mut Value, conflicts: &mut Vec<Conflict>) {
    match get_path(whole, "benchmark.endpoint.streaming").and_then(Value::as_bool) {
        Some(false) => conflicts.push(Conflict::new("--streaming", false, true)),
        Some(true) => {}
        None => set_path(whole, "benchmark.endpoint.streaming", json!(true)),
    }
    match get_path(whole, "benchmark.endpoint.extra.ignore_eos") {
        None | Some(Value::Null) => set_path(whole, "benchmark.endpoint.extra.ignore_eos", json!(true)),
        Some(value) if falsy(value) => conflicts.push(Conflict::new("--extra-inputs ignore_eos", value, true)),
        Some(_) => {}
    }
}

/// AIPerf's reading of a false `ignore_eos`: false, 0, or "false", "0", "no".
fn falsy(value: &Value) -> bool {
    match value {
        Value::Bool(on) => !on,
        Value::Number(number) => number.as_f64() == Some(0.0),
        Value::String(text) => matches!(text.trim().to_ascii_lowercase().as_str(), "false" | "0" | "no"),
        _ => false,
    }
}

/// A weka corpus, its recorded timing whole, each tree cache-busted at its first turn.
fn lock_dataset(whole: &mut Value, conflicts: &mut Vec<Conflict>) -> Result<(), ConfigError> {
    let datasets = get_path(whole, "benchmark.datasets").and_then(Value::as_array).cloned().unwrap_or_default();
    let main = match datasets.as_slice() {
        [only] => only.clone(),
        _ => datasets
            .iter()
            .find(|dataset| dataset.get("name").and_then(Value::as_str) == Some("main"))
            .cloned()
            .unwrap_or(Value::Null),
    };
    let name = main.get("name").and_then(Value::as_str).unwrap_or("main").to_string();
    let kind = main.get("type").and_then(Value::as_str).unwrap_or("synthetic");
    let public = main.get("dataset").and_then(Value::as_str);
    let loader = match (kind, public) {
        (_, Some(public)) => Some(public.replace('-', "_")),
        ("file", None) => main.get("format").and_then(Value::as_str).map(|format| format.replace('-', "_")),
        _ => None,
    };
    if kind == "synthetic" && public.is_none() {
        return Err(ConfigError::new(format!(
            "scenario {AGENTX} replays a weka corpus: give --input-file with --custom-dataset-type weka_trace, \
             a weka --public-dataset or --hf-weka-dataset {AGENTX_WEKA_HF_REPO} (--unsafe-override cannot stand in for one)"
        )));
    }
    match loader.as_deref() {
        Some("weka_trace") => conflicts.push(Conflict::new(
            "--custom-dataset-type / --input-file",
            "weka_trace (local, unpinned)",
            format!("a pinned weka --public-dataset or --hf-weka-dataset {AGENTX_WEKA_HF_REPO}"),
        )),
        Some("weka_hf") => {
            let repo = main.get("hf_weka_dataset").and_then(Value::as_str);
            if repo != Some(AGENTX_WEKA_HF_REPO) {
                conflicts.push(Conflict::new("--hf-weka-dataset", repo.unwrap_or("none"), AGENTX_WEKA_HF_REPO));
            }
        }
        Some(loader) if AGENTX_LOADERS.contains(&loader) => {}
        other => conflicts.push(Conflict::new("--input-file (loader)", other.unwrap_or("unknown"), "a weka corpus")),
    }
    if main.get("ignore_trace_delays").and_then(Value::as_bool) == Some(true) {
        conflicts.push(Conflict::new("--ignore-trace-delays", true, false));
    }
    for (field, flag) in [
        ("inter_turn_delay_cap_seconds", "--inter-turn-delay-cap-seconds"),
        ("trace_idle_gap_cap_seconds", "--trace-idle-gap-cap-seconds"),
    ] {
        if let Some(cap) = main.get(field).filter(|cap| !cap.is_null()) {
            conflicts.push(Conflict::new(flag, cap, "none (the recorded timing whole)"));
        }
    }
    if let Some(max_isl) = get_path(&main, "synthesis.max_isl").filter(|cap| !cap.is_null()) {
        conflicts.push(Conflict::new("--synthesis-max-isl", max_isl, "none (no trace dropped for its length)"));
    }
    let cache_bust = |node: &Value| match node.get("cache_bust") {
        Some(Value::Object(block)) => block.get("target").and_then(Value::as_str).map(str::to_string),
        Some(Value::String(target)) => Some(target.clone()),
        _ => None,
    };
    let prompts = main.get("prompts").cloned().unwrap_or(Value::Null);
    match cache_bust(&main).or_else(|| cache_bust(&prompts)).map(|target| target.replace('-', "_")) {
        Some(target) if target != "first_turn_prefix" => {
            conflicts.push(Conflict::new("--cache-bust", target, "first_turn_prefix"))
        }
        Some(_) => {}
        None => set_path(whole, &format!("benchmark.datasets.{name}.prompts.cache_bust"), json!("first_turn_prefix")),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A variation of `aiperf profile --scenario inferencex-agentx-mvp` on a local weka file,
    /// with `extra` laid over its benchmark.
    fn variation(extra: Value) -> Value {
        let mut whole = json!({ "benchmark": {
            "scenario": AGENTX,
            "endpoint": { "urls": ["http://x"] },
            "datasets": [{ "name": "main", "type": "file", "path": "t.json", "format": "weka_trace" }],
            "phases": [{ "name": "profiling", "type": "concurrency", "concurrency": 4 }],
        }});
        for (path, value) in extra.as_object().into_iter().flatten() {
            set_path(&mut whole, path, value.clone());
        }
        whole
    }

    #[test]
    fn the_scenario_fills_its_defaults_and_a_local_trace_needs_the_override() {
        let refused = apply(&mut variation(json!({}))).err().expect("a local weka file is unpinned");
        assert!(
            refused.message.contains("1 conflict with its invariants:\n  - --custom-dataset-type"),
            "{}",
            refused.message
        );
        let mut whole = variation(json!({ "benchmark.unsafe_override": true }));
        let locked = apply(&mut whole).unwrap().expect("a scenario");
        assert_eq!(locked.lock.overridden.len(), 1);
        let at = |path: &str| get_path(&whole, path).cloned().unwrap_or(Value::Null);
        assert_eq!(at("benchmark.phases.profiling.timing_mode"), json!("agentic_replay"));
        assert_eq!(at("benchmark.phases.profiling.duration"), json!(1800.0));
        assert_eq!(at("benchmark.phases.profiling.trajectory_start_max_ratio"), json!(1.0));
        assert_eq!(at("benchmark.phases.profiling.system_idle_gap_cap_seconds"), json!(10.0));
        assert_eq!(at("benchmark.endpoint.streaming"), json!(true));
        assert_eq!(at("benchmark.endpoint.extra.ignore_eos"), json!(true));
        assert_eq!(at("benchmark.datasets.main.prompts.cache_bust"), json!("first_turn_prefix"));
        assert!(at("random_seed").as_u64().is_some_and(|seed| seed < 1 << 53), "a fresh seed");
        assert!(
            locked.notes.iter().any(|note| note.starts_with("warning: scenario inferencex-agentx-mvp, overridden"))
        );
    }

    #[test]
    fn each_conflict_is_named_and_explicit_settings_are_kept() {
        let mut whole = variation(json!({
            "benchmark.phases.profiling.type": "poisson",
            "benchmark.phases.profiling.duration": 60.0,
            "benchmark.endpoint.streaming": false,
            "benchmark.endpoint.extra.ignore_eos": "no",
            "benchmark.datasets.main.ignore_trace_delays": true,
            "benchmark.datasets.main.trace_idle_gap_cap_seconds": 5.0,
            "benchmark.datasets.main.prompts.cache_bust": "none",
            "random_seed": 7,
        }));
        let message = apply(&mut whole.clone()).err().expect("conflicts").message;
        for flag in [
            "--request-rate",
            "--benchmark-duration: 60",
            "--streaming: false",
            "--extra-inputs ignore_eos: \"no\"",
            "--ignore-trace-delays",
            "--trace-idle-gap-cap-seconds: 5",
            "--cache-bust: none",
        ] {
            assert!(message.contains(flag), "{flag}: {message}");
        }
        assert!(message.starts_with("scenario inferencex-agentx-mvp: 8 conflicts"), "{message}");
        set_path(&mut whole, "benchmark.unsafe_override", json!(true));
        let locked = apply(&mut whole).unwrap().unwrap();
        assert_eq!(locked.lock.overridden.len(), 8);
        assert_eq!(get_path(&whole, "benchmark.phases.profiling.duration"), Some(&json!(60.0)));
        assert_eq!(get_path(&whole, "benchmark.endpoint.streaming"), Some(&json!(false)));
        assert_eq!(get_path(&whole, "benchmark.phases.profiling.timing_mode"), None, "a rate phase keeps its mode");
        assert_eq!(whole["random_seed"], json!(7));
    }

    #[test]
    fn a_pinned_corpus_is_a_valid_submission_and_no_corpus_is_refused_even_overridden() {
        let with_dataset = |dataset: Value, overridden: bool| {
            let mut whole = variation(json!({ "benchmark.unsafe_override": overridden }));
            whole["benchmark"]["datasets"] = json!([dataset]);
            whole
        };
        let mut pinned = with_dataset(
            json!({ "name": "main", "type": "public", "dataset": "weka_hf", "hf_weka_dataset": AGENTX_WEKA_HF_REPO }),
            false,
        );
        let locked = apply(&mut pinned).unwrap().unwrap();
        assert!(locked.lock.overridden.is_empty(), "{:?}", locked.lock.overridden);
        let mut synthetic = with_dataset(json!({ "name": "main", "type": "synthetic" }), true);
        assert!(apply(&mut synthetic).err().expect("no corpus").message.contains("cannot stand in for one"));
        let mut other = variation(json!({ "benchmark.scenario": "mine" }));
        assert!(apply(&mut other).err().expect("unknown").message.contains("is not a scenario this project has"));
        assert!(apply(&mut json!({ "benchmark": {} })).unwrap().is_none());
    }
}
