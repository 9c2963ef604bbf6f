//! `benchmark.phases` lowered: each phase's type (concurrency, poisson, constant, gamma,
//! user_centric, fixed_schedule) to a load mode, its stop conditions, cancellation, and
//! whether it feeds the results; warmup phases first, inheriting the profiling phase's load.

use std::path::Path;

use serde_json::{Map, Value};

use super::values::{opt_bool, opt_dist, opt_f64, opt_str, opt_u64};
use crate::config::ConfigError;
use crate::plan::{
    Arrival, Cancellation, Dataset, Dist, FileFormat, FixedSchedule, LoadMode, Phase, PhaseKind, PrefillCap, RatePoint,
    ScheduleTrace, closed_loop, held_rate, rate_series,
};

/// AIPerf's grace period after a duration, seconds.
const DEFAULT_GRACE_PERIOD_S: f64 = 30.0;
/// Requests of a profiling phase that names neither a count nor a duration (AIPerf's).
const DEFAULT_REQUESTS: u64 = 10;

pub fn lower(benchmark: &Value, dataset: &Dataset, seed: u64) -> Result<Vec<Phase>, ConfigError> {
    let mut items: Vec<Value> = match benchmark.get("phases") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => items.clone(),
        Some(other) => return Err(ConfigError::new(format!("phases: expected a list of phases, got {other}"))),
    };
    items = items.into_iter().filter_map(without_zero_warmup).collect();
    if !items.iter().any(|item| !is_warmup(item)) {
        items.push(Value::Object(Map::from_iter([("name".to_string(), Value::from("profiling"))])));
    }
    items.sort_by_key(|item| !is_warmup(item));
    let profiling = items.iter().find(|item| !is_warmup(item)).cloned().unwrap_or(Value::Null);
    let turns = super::dataset::main_dataset(benchmark)?;
    let phases = items
        .iter()
        .map(|item| {
            let item = if is_warmup(item) { inherit(item, &profiling) } else { item.clone() };
            lower_phase(&item, dataset, &turns, seed)
        })
        .collect::<Result<Vec<Phase>, ConfigError>>()?;
    super::agentic_replay::no_unused_cache_bust(&turns, dataset, &phases)?;
    Ok(super::agentic_replay::with_priming(phases))
}

/// A note for each fixed-schedule phase that names a count, which the replay does not use.
pub fn ignored_schedule_counts(benchmark: &Value) -> Vec<String> {
    let items = benchmark.get("phases").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    items
        .iter()
        .filter(|item| item.get("type").and_then(Value::as_str) == Some("fixed_schedule"))
        .flat_map(|item| {
            let name = item.get("name").and_then(Value::as_str).unwrap_or("profiling").to_string();
            [("requests", "--request-count"), ("sessions", "--conversation-num")]
                .into_iter()
                .filter(move |(key, _)| item.get(*key).is_some_and(|value| !value.is_null()))
                .map(move |(key, flag)| {
                    format!(
                        "note: phases.{name}.{key} ({flag}): a fixed schedule replays its whole trace (within its \
                         offsets), as AIPerf 0.13 does; the count is not used"
                    )
                })
        })
        .collect()
}

pub(super) fn is_warmup(item: &Value) -> bool {
    item.get("kind").and_then(Value::as_str) == Some("warmup")
        || item.get("name").and_then(Value::as_str) == Some("warmup")
        || item.get("exclude_from_results").and_then(Value::as_bool) == Some(true)
}

/// A warmup's amounts of 0 (requests, sessions or seconds) are unset, as AIPerf reads
/// `--warmup-request-count 0`; a warmup that had only such amounts is none.
fn without_zero_warmup(mut item: Value) -> Option<Value> {
    if !is_warmup(&item) {
        return Some(item);
    }
    let Some(fields) = item.as_object_mut() else { return Some(item) };
    let amounts = ["requests", "sessions", "duration"];
    let zero = |fields: &Map<String, Value>, key: &str| fields.get(key).and_then(Value::as_f64) == Some(0.0);
    let zeros: Vec<&str> = amounts.into_iter().filter(|key| zero(fields, key)).collect();
    for key in &zeros {
        fields.remove(*key);
    }
    let amount_left = amounts.iter().any(|key| fields.get(*key).is_some_and(|value| !value.is_null()));
    (zeros.is_empty() || amount_left).then_some(item)
}

/// A warmup phase takes the profiling phase's type, concurrency and rate where it sets none;
/// a profiling rate series is not a rate it takes (AIPerf's warmup then keeps its users).
fn inherit(warmup: &Value, profiling: &Value) -> Value {
    let mut merged = warmup.clone();
    if let (Some(merged), Some(profiling)) = (merged.as_object_mut(), profiling.as_object()) {
        let series_only = profiling.get("rate").is_none_or(Value::is_null) && !merged.contains_key("rate");
        for key in ["type", "timing_mode", "concurrency", "prefill_concurrency", "rate", "smoothness"] {
            if key == "type" && series_only && profiling.get("rate_series").is_some_and(|v| !v.is_null()) {
                continue;
            }
            if let (false, Some(value)) = (merged.contains_key(key), profiling.get(key)) {
                merged.insert(key.to_string(), value.clone());
            }
        }
    }
    merged
}

/// A fixed schedule's offsets on a phase that is none are refused, as AIPerf 0.13 refuses them,
/// rather than dropped.
fn no_schedule_offsets(item: &Value, key: &dyn Fn(&str) -> String) -> Result<(), ConfigError> {
    let offsets = [("start_offset", "start"), ("end_offset", "end"), ("auto_offset", "auto")];
    match offsets.iter().find(|(field, _)| item.get(*field).is_some_and(|value| !value.is_null())) {
        Some((field, flag)) => Err(ConfigError::new(format!(
            "{} (--fixed-schedule-{flag}-offset): offsets cut a fixed schedule's trace, and this phase replays none; \
             give --fixed-schedule with a trace that has timestamps, or drop the offset",
            key(field)
        ))),
        None => Ok(()),
    }
}

fn lower_phase(item: &Value, dataset: &Dataset, main: &Value, seed: u64) -> Result<Phase, ConfigError> {
    let warmup = is_warmup(item);
    let name =
        opt_str(item, "name", "phases[].name")?.unwrap_or(if warmup { "warmup" } else { "profiling" }).to_string();
    let key = |field: &str| format!("phases.{name}.{field}");
    let kind = if warmup { PhaseKind::Warmup } else { PhaseKind::Profiling };
    let concurrency = opt_u64(item, "concurrency", &key("concurrency"))?;
    if concurrency == Some(0) {
        return Err(ConfigError::new(format!("{} (--concurrency): must be at least 1", key("concurrency"))));
    }
    let series = super::rate_series::read(item.get("rate_series").unwrap_or(&Value::Null), &key("rate_series"))?;
    let rate = match (opt_f64(item, "rate", &key("rate"))?, &series) {
        (Some(_), Some(_)) => {
            return Err(ConfigError::new(format!(
                "{} (--request-rate-series): a phase has a rate or a rate series, not both",
                key("rate_series")
            )));
        }
        (None, Some(points)) => points.first().map(|point| point.rps),
        (rate, None) => rate,
    };
    let default_type = if rate.is_some() { "poisson" } else { "concurrency" };
    let agentic = super::agentic_replay::wanted(item);
    if !agentic {
        super::agentic_replay::stray_key(item, &key)?;
    }
    let mode = match opt_str(item, "type", &key("type"))?.unwrap_or(default_type) {
        _ if agentic => super::agentic_replay::mode(item, main, warmup, seed, &key)?,
        "concurrency" => LoadMode::Concurrency {
            concurrency: concurrency.unwrap_or(1).max(1) as usize,
            prefill_concurrency: opt_u64(item, "prefill_concurrency", &key("prefill_concurrency"))?.map(|n| n as usize),
        },
        pattern @ ("poisson" | "constant" | "gamma") => {
            let Some(rate) = rate else {
                return Err(ConfigError::new(format!(
                    "{} (--request-rate): a {pattern} phase needs a rate",
                    key("rate")
                )));
            };
            let arrival = match pattern {
                "constant" => Arrival::Constant,
                "gamma" => {
                    Arrival::Gamma { smoothness: opt_f64(item, "smoothness", &key("smoothness"))?.unwrap_or(1.0) }
                }
                _ => Arrival::Poisson,
            };
            let prefill = opt_u64(item, "prefill_concurrency", &key("prefill_concurrency"))?
                .map(|n| PrefillCap { concurrency: n as usize, ramp_s: None });
            LoadMode::Rate { rate, arrival, max_concurrency: concurrency.map(|n| n as usize), seed, prefill }
        }
        "user_centric" => users_mode(item, main, &key, rate, seed)?,
        "fixed_schedule" => schedule_mode(item, dataset, main, &key)?,
        other => {
            return Err(ConfigError::new(format!(
                "{}: `{other}` is not supported; concurrency, poisson, constant, gamma, user_centric or fixed_schedule",
                key("type")
            )));
        }
    };
    if !agentic && !matches!(mode, LoadMode::Schedule(_)) {
        no_schedule_offsets(item, &key)?;
    }
    let mode = with_ramps(mode, item, series, warmup, &key)?;
    let mode = super::adaptive_scale::applied(mode, item, &key)?;
    let mut requests = opt_u64(item, "requests", &key("requests"))?;
    let mut sessions = opt_u64(item, "sessions", &key("sessions"))?;
    if matches!(mode, LoadMode::Schedule(_)) {
        // AIPerf 0.13 replays a fixed schedule's whole trace (within its offsets), whatever
        // count the phase names (`ignored_schedule_counts` says so).
        (requests, sessions) = (None, None);
    }
    let duration_s = opt_f64(item, "duration", &key("duration"))?;
    let needs_stop = matches!(
        mode,
        LoadMode::Concurrency { .. }
            | LoadMode::Rate { .. }
            | LoadMode::Users { .. }
            | LoadMode::UserCentric { .. }
            | LoadMode::Scripted { .. }
            | LoadMode::Ramp { hold: true, .. }
            | LoadMode::AgenticReplay(crate::plan::AgenticReplay { stage: crate::plan::ReplayStage::Profiling, .. })
    );
    if needs_stop && requests.is_none() && sessions.is_none() && duration_s.is_none() {
        match default_stop(dataset, main) {
            DefaultStop::Requests(count) => requests = Some(count),
            DefaultStop::Sessions(count) => sessions = Some(count),
        }
    }
    let cancel = match item.get("cancellation").filter(|value| !value.is_null()) {
        Some(cancellation) => Some(Cancellation {
            fraction: opt_f64(cancellation, "rate", &key("cancellation.rate"))?.unwrap_or(0.0) / 100.0,
            after_s: opt_f64(cancellation, "delay", &key("cancellation.delay"))?.unwrap_or(0.0),
            seed,
        }),
        None => None,
    };
    Ok(Phase {
        name: name.clone(),
        kind,
        mode,
        requests,
        sessions,
        duration_s,
        grace_period_s: opt_f64(item, "grace_period", &key("grace_period"))?.unwrap_or(DEFAULT_GRACE_PERIOD_S).max(0.0),
        results: !warmup,
        cancel,
    })
}

/// The seconds of a phase's `{duration, strategy?}` ramp (or bare seconds, as a flag sets
/// it). AIPerf 0.13 reads only the duration and ramps linearly whatever the strategy says;
/// so does this project.
fn ramp_duration_s(
    item: &Value,
    field: &str,
    flag: &str,
    key: &dyn Fn(&str) -> String,
) -> Result<Option<f64>, ConfigError> {
    let Some(ramp) = item.get(field).filter(|ramp| !ramp.is_null()) else {
        return Ok(None);
    };
    if let Some(seconds) = ramp.as_f64() {
        return Ok(Some(seconds).filter(|seconds| *seconds > 0.0));
    }
    match opt_str(ramp, "strategy", &key(&format!("{field}.strategy")))? {
        None | Some("linear" | "exponential" | "poisson") => {}
        Some(other) => {
            return Err(ConfigError::new(format!(
                "{} ({flag}): `{other}` is not a ramp strategy; linear, exponential or poisson",
                key(&format!("{field}.strategy"))
            )));
        }
    }
    Ok(opt_f64(ramp, "duration", &key(&format!("{field}.duration")))?.filter(|seconds| *seconds > 0.0))
}

/// AIPerf's in-phase ramps (`in_phase_ramps`): a concurrency phase's users (`concurrency_ramp`)
/// and prefill cap (`prefill_ramp`) step up from 1, a rate phase's rate climbs to its target
/// (`rate_ramp`) or follows its `rate_series` (after the rate ramp, when both are given) while
/// its in-flight cap (`concurrency`) steps up from 1 over its `concurrency_ramp`; the targets
/// then hold until the phase's requests or duration stop it. A ramp of a limit the phase does
/// not set (a prefill concurrency, a rate phase's cap) changes nothing, as in AIPerf.
fn with_ramps(
    mode: LoadMode,
    item: &Value,
    series: Option<Vec<RatePoint>>,
    warmup: bool,
    key: &dyn Fn(&str) -> String,
) -> Result<LoadMode, ConfigError> {
    let flag = |name: &str| if warmup { format!("--warmup-{name}") } else { format!("--{name}") };
    let concurrency_ramp = ramp_duration_s(item, "concurrency_ramp", &flag("concurrency-ramp-duration"), key)?;
    let rate_ramp = ramp_duration_s(item, "rate_ramp", &flag("request-rate-ramp-duration"), key)?;
    let prefill_ramp = ramp_duration_s(item, "prefill_ramp", &flag("prefill-concurrency-ramp-duration"), key)?;
    let refuse =
        |field: &str, flag: String, why: &str| Err(ConfigError::new(format!("{} ({flag}): {why}", key(field))));
    match mode {
        LoadMode::Concurrency { .. } if rate_ramp.is_some() => {
            refuse("rate_ramp", flag("request-rate-ramp-duration"), "ramps a rate; this phase has none (give `rate`)")
        }
        LoadMode::Concurrency { concurrency, prefill_concurrency } => {
            let prefill = prefill_concurrency.map(|concurrency| PrefillCap { concurrency, ramp_s: prefill_ramp });
            Ok(closed_loop(concurrency, concurrency_ramp, prefill))
        }
        LoadMode::Rate { rate, arrival, max_concurrency, seed, prefill } => {
            let prefill = prefill.map(|cap| PrefillCap { ramp_s: prefill_ramp, ..cap });
            let cap_ramp_s = concurrency_ramp.filter(|_| max_concurrency.is_some());
            let (start, stages) = match (series, rate_ramp) {
                (Some(points), rate_ramp) => rate_series(&points, rate_ramp).map_err(|why| {
                    ConfigError::new(format!("{} (--request-rate-series): {why}", key("rate_series")))
                })?,
                (None, Some(seconds)) => crate::plan::rate_ramp(rate, seconds),
                (None, None) if cap_ramp_s.is_some() => (rate, Vec::new()),
                (None, None) => return Ok(LoadMode::Rate { rate, arrival, max_concurrency, seed, prefill }),
            };
            Ok(held_rate(start, stages, arrival, (max_concurrency, cap_ramp_s), seed).with_prefill(prefill))
        }
        mode if concurrency_ramp.is_none() && rate_ramp.is_none() && series.is_none() => Ok(mode),
        _ => {
            let (field, flag) = match (&series, rate_ramp) {
                (Some(_), _) => ("rate_series", "--request-rate-series".to_string()),
                (None, Some(_)) => ("rate_ramp", flag("request-rate-ramp-duration")),
                (None, None) => ("concurrency_ramp", flag("concurrency-ramp-duration")),
            };
            refuse(field, flag, "not supported for this phase type; write a Rhai ramp(#{..}) phase instead")
        }
    }
}

/// What a phase given no count, sessions or duration sends.
enum DefaultStop {
    Requests(u64),
    Sessions(u64),
}

/// AIPerf's `profile` defaults: a file named a DAG file (`--custom-dataset-type dag_jsonl`; not
/// one told from its content) its root trees each once, AIPerf's 10 requests from any other
/// dataset (a file's lines wrap or are cut as with a count); here also an accuracy file's
/// questions each once.
fn default_stop(dataset: &Dataset, main: &Value) -> DefaultStop {
    let named_format = main.get("format").is_some_and(|format| !format.is_null());
    match dataset {
        Dataset::File(file) if file.accuracy.is_some() => {
            DefaultStop::Requests(crate::accuracy::question_count(file).unwrap_or(DEFAULT_REQUESTS))
        }
        Dataset::File(file) if file.format == FileFormat::DagJsonl && named_format => {
            // An unreadable file is named when the dataset loads.
            match crate::dataset::agentic::dag_root_count(file) {
                Ok(roots) if roots > 0 => DefaultStop::Sessions(roots as u64),
                _ => DefaultStop::Requests(DEFAULT_REQUESTS),
            }
        }
        _ => DefaultStop::Requests(DEFAULT_REQUESTS),
    }
}

/// `user_centric`: AIPerf's user-centric rate, `rate` requests per second over `users` users;
/// the sessions' turns come from the dataset's `turns`, and (as in AIPerf) its `turn_delay`
/// does not pace them: each user's turns are users / rate seconds apart.
fn users_mode(
    item: &Value,
    main: &Value,
    key: &dyn Fn(&str) -> String,
    rate: Option<f64>,
    seed: u64,
) -> Result<LoadMode, ConfigError> {
    let Some(users) = opt_u64(item, "users", &key("users"))? else {
        return Err(ConfigError::new(format!("{} (--num-users): a user_centric phase needs users", key("users"))));
    };
    let Some(rate) = rate else {
        return Err(ConfigError::new(format!(
            "{} (--user-centric-rate): a user_centric phase needs a rate",
            key("rate")
        )));
    };
    let turns = opt_dist(main, "turns", "datasets.main.turns")?.unwrap_or(Dist::fixed(1.0));
    Ok(LoadMode::UserCentric { users: users.max(1) as usize, rate, turns, seed })
}

/// `fixed_schedule`: the timestamps of the dataset's trace file (its path already anchored),
/// sped up by the dataset's `synthesis.speedup_ratio` (and a Baseten trace's `replay_speedup`),
/// without those of requests its `synthesis.max_isl` drops.
fn schedule_mode(
    item: &Value,
    dataset: &Dataset,
    main: &Value,
    key: &dyn Fn(&str) -> String,
) -> Result<LoadMode, ConfigError> {
    let Dataset::File(file) = dataset else {
        return Err(ConfigError::new(format!(
            "{} (--fixed-schedule): a fixed schedule replays a trace file; give --input-file",
            key("type")
        )));
    };
    if let Some(public) = file.public.as_ref().filter(|public| public.name.starts_with("exgentic")) {
        return Err(ConfigError::new(format!(
            "{} (--fixed-schedule): {}'s fixed-schedule replay (each call at its recorded time from its session's \
             start) is not in this build; play its sessions with --concurrency or --request-rate (each call after \
             the recorded gap)",
            key("type"),
            public.name
        )));
    }
    if file.format.is_agentic_trace() {
        let trace =
            ScheduleTrace::Inline { timestamps_ms: super::agentic_schedule::recorded_times_ms(file, &key("type"))? };
        return Ok(LoadMode::Schedule(FixedSchedule {
            trace,
            start_offset_ms: opt_f64(item, "start_offset", &key("start_offset"))?,
            end_offset_ms: opt_f64(item, "end_offset", &key("end_offset"))?,
            auto_offset: opt_bool(item, "auto_offset", &key("auto_offset"))?.unwrap_or(true),
            speedup: file.synthesis.as_ref().map_or(1.0, |synthesis| synthesis.speedup_ratio),
        }));
    }
    let timestamps_ms = crate::load::schedule::read_trace(Path::new(&file.path))
        .map_err(|e| ConfigError::new(format!("{}: {e}", key("type"))))?;
    let mut trace = ScheduleTrace::File { path: file.path.clone(), timestamps_ms };
    let sampled = file.trace.session_sample_ratio.is_some();
    if file.format == crate::plan::FileFormat::Baseten
        && (file.baseten.closed_loop || file.baseten.max_idle_gap_ms.is_some() || sampled)
    {
        let timestamps_ms = crate::dataset::recorded_times::of_baseten(file)
            .map_err(|e| ConfigError::new(format!("{}: {e:#}", key("type"))))?;
        trace = ScheduleTrace::Inline { timestamps_ms };
    }
    if let Some(max_isl) = file.synthesis.as_ref().and_then(|synthesis| synthesis.max_isl) {
        let kept = crate::dataset::recorded_times::within_max_isl(Path::new(&file.path), max_isl)
            .map_err(|e| ConfigError::new(format!("{}: {e:#}", key("type"))))?;
        if kept.len() < trace.timestamps_ms().len() {
            trace = ScheduleTrace::Inline { timestamps_ms: kept };
        }
    }
    let speedup = file.synthesis.as_ref().map_or(1.0, |synthesis| synthesis.speedup_ratio)
        * super::baseten_replay::replay_speedup(main, file.format)?;
    Ok(LoadMode::Schedule(FixedSchedule {
        trace,
        start_offset_ms: opt_f64(item, "start_offset", &key("start_offset"))?,
        end_offset_ms: opt_f64(item, "end_offset", &key("end_offset"))?,
        auto_offset: opt_bool(item, "auto_offset", &key("auto_offset"))?.unwrap_or(true),
        speedup,
    }))
}
