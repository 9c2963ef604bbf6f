//! The phase builders a scenario calls, one per timing mode: `concurrency`, `rate`, `ramp`,
//! `schedule`, `users`, plus `warmup` and `cooldown`. Each validates its map and returns a Phase.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rhai::{Array, Engine, Map, NativeCallContext};

use super::distributions::turns_and_wait;
use super::keys::{MapReader, ScriptResult, number, script_error};
use super::sessions::{BuiltAt, SessionFunctions};
use super::{paths, phase_ramps};
use crate::load::schedule;
use crate::plan::{
    Arrival, Cancellation, FixedSchedule, LoadMode, Phase, PhaseKind, RampStage, RampedQuantity, ScheduleTrace,
};

/// Default grace period after a duration ends, seconds.
const DEFAULT_GRACE_PERIOD_S: f64 = 30.0;

/// `scenario_dir`: the folder schedule trace files are relative to.
/// `functions`: where a scripted phase's session function is kept (`sessions.rs`).
pub fn register(engine: &mut Engine, scenario_dir: PathBuf, functions: Arc<SessionFunctions>) {
    for (builder, kind) in
        [("concurrency", PhaseKind::Profiling), ("warmup", PhaseKind::Warmup), ("cooldown", PhaseKind::Cooldown)]
    {
        let functions = functions.clone();
        engine.register_fn(builder, move |context: NativeCallContext, map: Map| {
            concurrency(kind, builder, map, &functions, BuiltAt::of(&context))
        });
    }
    engine.register_fn("warmup", |phase: Phase| side_phase(phase, PhaseKind::Warmup));
    engine.register_fn("cooldown", |phase: Phase| side_phase(phase, PhaseKind::Cooldown));
    engine.register_fn("rate", rate);
    engine.register_fn("ramp", ramp);
    engine.register_fn("schedule", move |map: Map| fixed_schedule(map, &scenario_dir));
    engine.register_fn("users", move |context: NativeCallContext, map: Map| {
        users(map, &functions, BuiltAt::of(&context))
    });
}

/// The builder's keys: its mode's keys and those every phase takes.
macro_rules! keys {
    ($($key:literal),* $(,)?) => {
        &[$($key,)* "name", "requests", "sessions", "duration", "grace_period", "results", "cancel"]
    };
}

/// Read the common keys and assemble the phase.
pub(super) fn finish(r: &mut MapReader, kind: PhaseKind, mode: LoadMode, needs_stop: bool) -> ScriptResult<Phase> {
    let what = r.what();
    let name = r.opt_string("name")?.unwrap_or_else(|| match kind {
        PhaseKind::Profiling => what.to_string(),
        other => other.as_str().to_string(),
    });
    let requests = r.opt_u64("requests")?;
    let sessions = r.opt_u64("sessions")?;
    let duration_s = r.opt_f64("duration")?;
    if needs_stop && requests.is_none() && sessions.is_none() && duration_s.is_none() {
        return script_error(format!("{what}: give `requests`, `duration` (e.g. seconds(30)), or both"));
    }
    if requests == Some(0) {
        return script_error(format!("{what}: `requests` must be at least 1"));
    }
    if sessions == Some(0) {
        return script_error(format!("{what}: `sessions` must be at least 1"));
    }
    if duration_s.is_some_and(|d| d.is_nan() || d <= 0.0) {
        return script_error(format!("{what}: `duration` must be positive"));
    }
    let grace_period_s = r.opt_f64("grace_period")?.unwrap_or(DEFAULT_GRACE_PERIOD_S).max(0.0);
    let results = r.opt_bool("results")?.unwrap_or(kind == PhaseKind::Profiling);
    let cancel = match r.opt_map("cancel")? {
        Some(map) => Some(cancellation(map)?),
        None => None,
    };
    Ok(Phase { name, kind, mode, requests, sessions, duration_s, grace_period_s, results, cancel })
}

/// `cancel: #{ fraction: 0.1, after: ms(500), seed: 42 }`
fn cancellation(map: Map) -> ScriptResult<Cancellation> {
    let mut r = MapReader::new("cancel", map, &["fraction", "after", "seed"])?;
    let fraction = r.opt_f64("fraction")?.unwrap_or(0.0);
    if !(0.0..=1.0).contains(&fraction) {
        return script_error(format!("cancel: `fraction` must be between 0 and 1, got {fraction}"));
    }
    let after_s = r.opt_f64("after")?.unwrap_or(0.0);
    if after_s.is_nan() || after_s < 0.0 {
        return script_error("cancel: `after` must be a duration ≥ 0, e.g. ms(500)");
    }
    Ok(Cancellation { fraction, after_s, seed: r.opt_u64("seed")?.unwrap_or(0) })
}

/// `warmup(rate(#{..}))`, `cooldown(users(#{..}))`: any phase, kept out of the results.
fn side_phase(mut phase: Phase, kind: PhaseKind) -> Phase {
    let builders = ["concurrency", "rate", "ramp", "schedule", "users"];
    if phase.kind == PhaseKind::Profiling && builders.contains(&phase.name.as_str()) {
        phase.name = kind.as_str().to_string();
    }
    phase.kind = kind;
    phase.results = false;
    phase
}

/// `concurrency(#{ users: 8, requests: 500 })`, `warmup(#{ requests: 20, concurrency: 4 })`;
/// with `session: agent`, `concurrency` scripted sessions at once (as `users`).
/// `at`: where the builder was called.
fn concurrency(
    kind: PhaseKind,
    builder: &'static str,
    map: Map,
    functions: &SessionFunctions,
    at: BuiltAt,
) -> ScriptResult<Phase> {
    let mut r = MapReader::new(
        builder,
        map,
        keys![
            "users",
            "concurrency",
            "prefill_concurrency",
            "ramp",
            "prefill_ramp",
            "session",
            "seed",
            "script_workers"
        ],
    )?;
    let users = match (r.opt_u64("users")?, r.opt_u64("concurrency")?) {
        (Some(_), Some(_)) => return script_error(format!("{builder}: give `users` or `concurrency`, not both")),
        (Some(n), None) | (None, Some(n)) => n,
        (None, None) => 1,
    };
    if users == 0 {
        return script_error(format!("{builder}: concurrency must be at least 1"));
    }
    let mode = if r.has("session") {
        super::sessions::scripted_mode(&mut r, users as usize, functions, at)?
    } else if let Some(key) = ["seed", "script_workers"].into_iter().find(|key| r.has(key)) {
        return script_error(format!("{builder}: `{key}` applies to scripted sessions (`session`) only"));
    } else {
        phase_ramps::closed_loop_of(&mut r, users as usize)?
    };
    finish(&mut r, kind, mode, true)
}

/// `arrival: "constant" | "poisson" | "gamma"` with `smoothness` for gamma.
pub(super) fn arrival(r: &mut MapReader) -> ScriptResult<Arrival> {
    let what = r.what();
    let smoothness = r.opt_f64("smoothness")?;
    match (r.opt_string("arrival")?.as_deref(), smoothness) {
        (None | Some("poisson"), None) => Ok(Arrival::Poisson),
        (Some("constant"), None) => Ok(Arrival::Constant),
        (None | Some("gamma"), Some(s)) if s.is_finite() && s > 0.0 => Ok(Arrival::Gamma { smoothness: s }),
        (Some("gamma"), None) => script_error(format!("{what}: gamma arrivals need `smoothness` (1 is Poisson)")),
        (None | Some("gamma"), Some(s)) => script_error(format!("{what}: `smoothness` must be positive, got {s}")),
        (Some("constant" | "poisson"), Some(_)) => {
            script_error(format!("{what}: `smoothness` only applies to arrival: \"gamma\""))
        }
        (Some(other), _) => {
            script_error(format!("{what}: `arrival` must be \"constant\", \"poisson\" or \"gamma\", got \"{other}\""))
        }
    }
}

/// `rate(#{ rate: 20, arrival: "poisson", max_concurrency: 64, seed: 1, duration: seconds(60) })`,
/// with `ramp` or `series` (`phase_ramps.rs`).
fn rate(map: Map) -> ScriptResult<Phase> {
    let mut r = MapReader::new(
        "rate",
        map,
        keys![
            "rate",
            "arrival",
            "smoothness",
            "max_concurrency",
            "seed",
            "ramp",
            "series",
            "max_concurrency_ramp",
            "prefill_concurrency",
            "prefill_ramp"
        ],
    )?;
    let rate = r.opt_f64("rate")?;
    let arrival = arrival(&mut r)?;
    let max_concurrency = r.opt_u64("max_concurrency")?.map(|n| n as usize);
    if max_concurrency == Some(0) {
        return script_error("rate: `max_concurrency` must be at least 1");
    }
    let seed = r.opt_u64("seed")?.unwrap_or(0);
    let prefill = phase_ramps::prefill_cap(&mut r)?;
    let mode = phase_ramps::open_loop_of(&mut r, rate, arrival, max_concurrency, seed)?.with_prefill(prefill);
    finish(&mut r, PhaseKind::Profiling, mode, true)
}

/// `ramp(#{ rate: [#{ duration: seconds(30), target: 100 }, ..] })` or `ramp(#{ users: [..] })`;
/// with `hold: true` the last target holds until `requests` or `duration` stop the phase.
fn ramp(map: Map) -> ScriptResult<Phase> {
    let mut r = MapReader::new(
        "ramp",
        map,
        keys![
            "users",
            "rate",
            "start",
            "arrival",
            "smoothness",
            "seed",
            "hold",
            "max_concurrency",
            "max_concurrency_ramp",
            "prefill_concurrency",
            "prefill_ramp"
        ],
    )?;
    let (ramped, items) = match (r.opt_array("users")?, r.opt_array("rate")?) {
        (Some(items), None) => (RampedQuantity::Concurrency, items),
        (None, Some(items)) => (RampedQuantity::Rate, items),
        _ => {
            return script_error(
                "ramp: give either `users` or `rate` as a list of stages, e.g. rate: [#{ duration: seconds(30), target: 100 }]",
            );
        }
    };
    let stages = ramp_stages(items)?;
    let start = r.opt_f64("start")?.unwrap_or(0.0);
    if !(start.is_finite() && start >= 0.0) {
        return script_error("ramp: `start` must be ≥ 0");
    }
    let arrival = match ramped {
        RampedQuantity::Rate => arrival(&mut r)?,
        RampedQuantity::Concurrency if r.has("arrival") || r.has("smoothness") => {
            return script_error("ramp: `arrival` and `smoothness` apply to rate ramps only");
        }
        RampedQuantity::Concurrency => Arrival::Constant,
    };
    let seed = r.opt_u64("seed")?.unwrap_or(0);
    let hold = r.opt_bool("hold")?.unwrap_or(false);
    if r.has("duration") && !hold {
        return script_error("ramp: the stages set its duration; leave out `duration` (or hold: true)");
    }
    let max_concurrency = r.opt_u64("max_concurrency")?.map(|n| n as usize);
    match (ramped, max_concurrency) {
        (RampedQuantity::Concurrency, Some(_)) => {
            return script_error("ramp: `max_concurrency` applies to rate ramps only");
        }
        (_, Some(0)) => return script_error("ramp: `max_concurrency` must be at least 1"),
        _ => {}
    }
    let (prefill, max_concurrency_ramp_s) = phase_ramps::ramp_limits(&mut r, ramped, max_concurrency)?;
    let total_s: f64 = stages.iter().map(|s| s.duration_s).sum();
    let mode =
        LoadMode::Ramp { ramped, start, stages, arrival, seed, hold, max_concurrency, max_concurrency_ramp_s, prefill };
    let mut phase = finish(&mut r, PhaseKind::Profiling, mode, hold)?;
    if !hold {
        phase.duration_s = Some(total_s);
    }
    Ok(phase)
}

fn ramp_stages(items: Array) -> ScriptResult<Vec<RampStage>> {
    if items.is_empty() {
        return script_error("ramp: the list of stages is empty");
    }
    let mut stages = Vec::with_capacity(items.len());
    for (i, item) in items.into_iter().enumerate() {
        let Some(map) = item.try_cast::<Map>() else {
            return script_error(format!(
                "ramp: stage {i} must be a map like #{{ duration: seconds(30), target: 64 }}"
            ));
        };
        let mut r = MapReader::new("ramp stage", map, &["duration", "target"])?;
        let (Some(duration_s), Some(target)) = (r.opt_f64("duration")?, r.opt_f64("target")?) else {
            return script_error(format!("ramp: stage {i} needs `duration` and `target`"));
        };
        if !(duration_s.is_finite() && duration_s > 0.0 && target.is_finite() && target >= 0.0) {
            return script_error(format!("ramp: stage {i} needs a positive duration and a target ≥ 0"));
        }
        stages.push(RampStage { duration_s, target });
    }
    Ok(stages)
}

/// `schedule(#{ timestamps: [0, 120, 250] })` or `schedule(#{ file: "trace.jsonl", speedup: 2.0 })`
fn fixed_schedule(map: Map, scenario_dir: &Path) -> ScriptResult<Phase> {
    let mut r = MapReader::new(
        "schedule",
        map,
        keys!["timestamps", "file", "start_offset", "end_offset", "auto_offset", "speedup"],
    )?;
    let trace = match (r.opt_array("timestamps")?, r.opt_string("file")?) {
        (Some(items), None) => {
            let mut timestamps_ms = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                match number(item) {
                    Some(ms) if ms.is_finite() => timestamps_ms.push(ms),
                    _ => {
                        return script_error(format!("schedule: timestamps[{i}] must be a number of ms, got `{item}`"));
                    }
                }
            }
            ScheduleTrace::Inline { timestamps_ms }
        }
        (None, Some(path)) => {
            let path = paths::anchor(scenario_dir, &path);
            match schedule::read_trace(Path::new(&path)) {
                Ok(timestamps_ms) => ScheduleTrace::File { path, timestamps_ms },
                Err(e) => return script_error(format!("schedule: {e}")),
            }
        }
        _ => return script_error("schedule: give either `timestamps` (a list of ms) or `file` (a JSONL trace)"),
    };
    let start_offset_ms = r.opt_f64("start_offset")?.map(|s| s * 1000.0);
    let end_offset_ms = r.opt_f64("end_offset")?.map(|s| s * 1000.0);
    let auto_offset = r.opt_bool("auto_offset")?.unwrap_or(false);
    let speedup = r.opt_f64("speedup")?.unwrap_or(1.0);
    if !(speedup.is_finite() && speedup > 0.0) {
        return script_error(format!("schedule: `speedup` must be positive, got {speedup}"));
    }
    let fixed = FixedSchedule { trace, start_offset_ms, end_offset_ms, auto_offset, speedup };
    if schedule::offsets_ns(&fixed).is_empty() {
        return script_error("schedule: no timestamps to replay (check the trace and the offsets)");
    }
    finish(&mut r, PhaseKind::Profiling, LoadMode::Schedule(fixed), false)
}

/// `users(#{ users: 30, rate: 2, turns: 4, duration: seconds(60) })`: AIPerf's user-centric
/// rate, `rate` requests per second over all users;
/// `users(#{ users: 16, session_rate: 2, turns: normal(4, 1), think_time: ms(800), duration: seconds(60) })`:
/// new sessions per second, each turn a think time after the previous answer. `at`: where the
/// builder was called.
fn users(map: Map, functions: &SessionFunctions, at: BuiltAt) -> ScriptResult<Phase> {
    let mut r = MapReader::new(
        "users",
        map,
        keys!["users", "rate", "session_rate", "turns", "think_time", "seed", "session", "script_workers"],
    )?;
    let users = r.opt_u64("users")?.unwrap_or(1);
    if users == 0 {
        return script_error("users: `users` must be at least 1");
    }
    if r.has("session") {
        let mode = super::sessions::scripted_mode(&mut r, users as usize, functions, at)?;
        return finish(&mut r, PhaseKind::Profiling, mode, true);
    }
    if r.has("script_workers") {
        return script_error("users: `script_workers` applies to scripted sessions (`session`) only");
    }
    let positive = |key: &str, value: f64| {
        if value.is_finite() && value > 0.0 {
            Ok(value)
        } else {
            script_error(format!("users: `{key}` must be positive, got {value}"))
        }
    };
    let rate = r.opt_f64("rate")?.map(|rate| positive("rate", rate)).transpose()?;
    let session_rate = r.opt_f64("session_rate")?.map(|rate| positive("session_rate", rate)).transpose()?;
    let has_think_time = r.has("think_time");
    let (turns, think_time_s) = turns_and_wait(&mut r, "think_time")?;
    let seed = r.opt_u64("seed")?.unwrap_or(0);
    let users = users as usize;
    let mode = match (rate, session_rate) {
        (Some(rate), None) if has_think_time => {
            return script_error(format!(
                "users: `think_time` paces `session_rate` sessions; with `rate` each user's turns are users / rate = {} s apart",
                users as f64 / rate
            ));
        }
        (Some(rate), None) => LoadMode::UserCentric { users, rate, turns, seed },
        (None, Some(session_rate)) => LoadMode::Users { users, session_rate, turns, think_time_s, seed },
        (Some(_), Some(_)) => {
            return script_error(
                "users: give `rate` (requests per second over all users) or `session_rate` (new sessions per second), not both",
            );
        }
        (None, None) => {
            return script_error(
                "users: give `rate` (requests per second over all users, AIPerf's user-centric rate) or `session_rate` (new sessions per second)",
            );
        }
    };
    finish(&mut r, PhaseKind::Profiling, mode, true)
}
