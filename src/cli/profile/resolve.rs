//! What some load flags mean once every flag is read, from flags alone (a config file's phases
//! keep their own): the warmup's ramps, pattern and orphan settings, `--arrival-smoothness`
//! choosing gamma, and the flags that qualify one not given, as AIPerf 0.13 reads them.

use serde_json::{Value, json};

use super::document::FlagDocument;
use super::load::{WARMUP_CONCURRENCY_RAMP, WARMUP_PREFILL_RAMP, WARMUP_RATE_RAMP};

/// Where the warmup flags set their values.
pub const WARMUP_PATHS: &str = "benchmark.phases.warmup.";

/// AIPerf's warmup ramps, once every flag is read: a warmup the flags start (its requests,
/// sessions or duration) takes each profiling ramp it does not set itself, the rate ramp only
/// when it has a rate (`--warmup-request-rate` or `--request-rate`). Without a warmup and a
/// config file to hold one, the warmup ramp flags do nothing, as in AIPerf, and say so.
pub fn warmup_ramps(document: &mut FlagDocument, with_config_file: bool) -> Result<(), String> {
    let has = |document: &FlagDocument, path: &str| crate::config::get_path(&document.document, path).is_some();
    let started = ["requests", "sessions", "duration"]
        .iter()
        .any(|amount| has(document, &format!("benchmark.phases.warmup.{amount}")));
    let ramps = [
        (WARMUP_CONCURRENCY_RAMP, "benchmark.phases.profiling.concurrency_ramp", "--warmup-concurrency-ramp-duration"),
        (WARMUP_PREFILL_RAMP, "benchmark.phases.profiling.prefill_ramp", "--warmup-prefill-concurrency-ramp-duration"),
        (WARMUP_RATE_RAMP, "benchmark.phases.profiling.rate_ramp", "--warmup-request-rate-ramp-duration"),
    ];
    if !started {
        if !with_config_file {
            let set: Vec<String> = document
                .sets
                .iter()
                .map(|(path, _)| path.clone())
                .filter(|path| path.starts_with(WARMUP_PATHS))
                .collect();
            for path in set {
                forget(document, &path);
                document.notes.push(no_warmup_note(&path));
            }
        }
        return Ok(());
    }
    let warmup_rate = document.gives("phases.warmup.rate") || document.gives("phases.profiling.rate");
    for (warmup, profiling, flag) in ramps {
        let rate_ramp = warmup == WARMUP_RATE_RAMP;
        if has(document, warmup) {
            if rate_ramp && !warmup_rate {
                return Err(format!("{flag} needs a warmup rate: give --warmup-request-rate (or --request-rate)"));
            }
            continue;
        }
        if let Some(seconds) = crate::config::get_path(&document.document, profiling).cloned()
            && (warmup_rate || !rate_ramp)
        {
            document.set(warmup, seconds);
        }
    }
    Ok(())
}

/// `--arrival-smoothness` (`--vllm-burstiness`) from flags alone, as AIPerf 0.13 reads it: with a
/// request rate and no `--arrival-pattern` it makes the arrivals gamma; with another pattern,
/// or with no rate, it is refused (it would change nothing).
pub fn smoothness_pattern(document: &mut FlagDocument, pattern_given: bool) -> Result<(), String> {
    let get = |path: &str| crate::config::get_path(&document.document, path);
    if get("benchmark.phases.profiling.smoothness").is_none() {
        return Ok(());
    }
    let rate = document.gives("phases.profiling.rate") || document.gives("phases.profiling.rate_series");
    let kind = get("benchmark.phases.profiling.type").and_then(Value::as_str);
    if !pattern_given && rate && kind.is_none_or(|kind| kind == "poisson") {
        document.set("benchmark.phases.profiling.type", json!("gamma"));
        return Ok(());
    }
    if kind == Some("gamma") {
        return Ok(());
    }
    Err("--arrival-smoothness is only read with gamma arrivals: give --arrival-pattern gamma (with a request rate), \
         or drop --arrival-smoothness"
        .to_string())
}

/// Flags that qualify another one that was not given, from flags alone (AIPerf 0.13 refuses
/// them): a note each, and nothing changes.
pub fn unqualified_notes(document: &mut FlagDocument) {
    let pairs = [
        (
            "phases.profiling.cancellation.delay",
            "--request-cancellation-delay",
            "phases.profiling.cancellation.rate",
            "--request-cancellation-rate",
        ),
        (
            "phases.profiling.grace_period",
            "--benchmark-grace-period",
            "phases.profiling.duration",
            "--benchmark-duration",
        ),
    ];
    let notes: Vec<String> = pairs
        .iter()
        .filter(|(path, _, needs, _)| document.gives(path) && !document.gives(needs))
        .map(|(_, flag, _, needed)| format!("note: {flag} has no effect here without {needed}"))
        .collect();
    document.notes.extend(notes);
}

/// AIPerf's warmup load from flags alone, once every flag is read: a warmup the flags start
/// (its requests, sessions or duration) and give no arrival pattern sends at its rate
/// (`--warmup-request-rate`, else `--request-rate`) in the profiling phase's pattern
/// (`--arrival-pattern`), not at concurrency 1; the lowering gives it the profiling rate,
/// smoothness and in-flight cap it does not set itself. A swept rate leaves it as it is.
pub fn warmup_pattern(document: &mut FlagDocument) {
    let get = |path: &str| crate::config::get_path(&document.document, path);
    let started = ["requests", "sessions", "duration"]
        .iter()
        .any(|amount| get(&format!("benchmark.phases.warmup.{amount}")).is_some());
    // The profiling phase's open-loop pattern: --request-rate's, not --user-centric-rate's.
    let profiling_pattern = get("benchmark.phases.profiling.type")
        .and_then(Value::as_str)
        .filter(|kind| matches!(*kind, "poisson" | "gamma" | "constant"))
        .map(str::to_string);
    let request_rate = profiling_pattern.is_some() && get("benchmark.phases.profiling.rate").is_some();
    let has_rate = get("benchmark.phases.warmup.rate").is_some() || request_rate;
    if !started || !has_rate || get("benchmark.phases.warmup.type").is_some() {
        return;
    }
    document.set("benchmark.phases.warmup.type", json!(profiling_pattern.unwrap_or_else(|| "poisson".into())));
}

/// The note for a warmup flag (by the path it sets) when no warmup runs: AIPerf's flags start a
/// warmup only with a count, sessions or a duration, and ignore its other settings without one.
pub fn no_warmup_note(path: &str) -> String {
    let field = path.strip_prefix(WARMUP_PATHS).unwrap_or(path);
    let flag = match field {
        "concurrency" => "--warmup-concurrency",
        "prefill_concurrency" => "--warmup-prefill-concurrency",
        "rate" => "--warmup-request-rate",
        "type" => "--warmup-arrival-pattern",
        "grace_period" => "--warmup-grace-period",
        "concurrency_ramp" => "--warmup-concurrency-ramp-duration",
        "prefill_ramp" => "--warmup-prefill-concurrency-ramp-duration",
        "rate_ramp" => "--warmup-request-rate-ramp-duration",
        _ => path,
    };
    format!(
        "note: {flag} has no effect here: there is no warmup (give --warmup-request-count, --num-warmup-sessions or --warmup-duration)"
    )
}

/// Drop what the flags set at `path` (a key of the warmup phase) from their document.
fn forget(document: &mut FlagDocument, path: &str) {
    document.sets.retain(|(set, _)| set != path);
    let Some(field) = path.strip_prefix("benchmark.phases.warmup.") else { return };
    if let Some(phases) = document.document.pointer_mut("/benchmark/phases").and_then(Value::as_array_mut) {
        for phase in phases.iter_mut().filter(|phase| phase.get("name").and_then(Value::as_str) == Some("warmup")) {
            if let Some(fields) = phase.as_object_mut() {
                fields.remove(field);
            }
        }
        phases.retain(|phase| phase.as_object().is_none_or(|fields| fields.keys().any(|key| key != "name")));
    }
}
