//! AIPerf's Load Generator, Scenario, Warmup, User-Centric Rate, Request Cancellation and
//! Multi-Run flags.

use serde_json::{Value, json};

use super::document::FlagDocument;
use super::flags::{Arity, Group, Kind, apply, note, set, sweep, switch_value};
use super::search;

pub(super) const ARRIVAL: Kind = Kind::Choice(&[
    ("constant", "constant"),
    ("poisson", "poisson"),
    ("gamma", "gamma"),
    ("concurrency-burst", "concurrency"),
]);

pub(super) const WARMUP_CONCURRENCY_RAMP: &str = "benchmark.phases.warmup.concurrency_ramp";
pub(super) const WARMUP_PREFILL_RAMP: &str = "benchmark.phases.warmup.prefill_ramp";
pub(super) const WARMUP_RATE_RAMP: &str = "benchmark.phases.warmup.rate_ramp";

pub const LOAD_GENERATOR: Group = Group {
    title: "Load Generator",
    flags: &[
        set(
            &["--benchmark-duration"],
            "benchmark.phases.profiling.duration",
            Kind::Float,
            "Stop sending after this many seconds",
        ),
        set(
            &["--benchmark-grace-period"],
            "benchmark.phases.profiling.grace_period",
            Kind::Float,
            "Seconds in-flight requests may finish after the duration [default: 30.0]",
        ),
        sweep(
            &["--concurrency"],
            "phases.profiling.concurrency",
            Kind::Int,
            "Requests kept in flight (closed loop); a list (1,2,4) sweeps it",
        ),
        sweep(
            &["--prefill-concurrency"],
            "phases.profiling.prefill_concurrency",
            Kind::Int,
            "At most this many requests waiting for their first token; a list sweeps it",
        ),
        apply(&["--request-rate"], Arity::One, request_rate, "Requests per second (open loop); a list sweeps it"),
        apply(
            &["--arrival-pattern", "--request-rate-mode"],
            Arity::One,
            arrival_pattern,
            "constant, poisson, gamma or concurrency-burst [default: poisson]",
        ),
        set(
            &["--arrival-smoothness", "--vllm-burstiness"],
            "benchmark.phases.profiling.smoothness",
            Kind::Float,
            "Gamma shape: below 1 burstier, 1 Poisson, above 1 smoother",
        ),
        sweep(
            &["--request-count", "--num-requests"],
            "phases.profiling.requests",
            Kind::Int,
            "Requests to send [default: 10 when neither a count nor a duration is given]",
        ),
        set(
            &["--concurrency-ramp-duration"],
            "benchmark.phases.profiling.concurrency_ramp",
            Kind::Float,
            "Seconds over which the concurrency grows from 1 to its target, which then holds",
        ),
        set(
            &["--prefill-concurrency-ramp-duration"],
            "benchmark.phases.profiling.prefill_ramp",
            Kind::Float,
            "Seconds over which the prefill concurrency grows from 1 to its target, which then holds",
        ),
        set(
            &["--request-rate-ramp-duration"],
            "benchmark.phases.profiling.rate_ramp",
            Kind::Float,
            "Seconds over which the request rate climbs to its target, which then holds",
        ),
        apply(
            &["--request-rate-series"],
            Arity::One,
            request_rate_series,
            "JSON file of {time_s, qps} points: the rate moves linearly between them, then holds the last",
        ),
        set(
            &["--failed-request-threshold"],
            "benchmark.phases.profiling.failed_request_threshold",
            Kind::Float,
            "Stop the run once more than this share (0 to 1) of the profiling requests failed, after max(concurrency, 10) of them; exit code 97",
        ),
        set(
            &["--trajectory-start-min-ratio"],
            "benchmark.phases.profiling.trajectory_start_min_ratio",
            Kind::Float,
            "Agentic replay: each trajectory's cut falls at least this far (0 to 1) through its recorded span",
        ),
        set(
            &["--trajectory-start-max-ratio"],
            "benchmark.phases.profiling.trajectory_start_max_ratio",
            Kind::Float,
            "Agentic replay: each trajectory's cut falls at most this far (0 to 1) through its recorded span",
        ),
        set(
            &["--burst-phase-starts"],
            "benchmark.phases.profiling.burst_phase_starts",
            Kind::Bool,
            "Agentic replay: the warm-up's and profiling's first requests go at once, not at their recorded offsets",
        ),
        set(
            &["--trace-idle-gap-cap-seconds"],
            "benchmark.datasets.main.trace_idle_gap_cap_seconds",
            Kind::Float,
            "weka_trace and tracelab: within one root trace, cut every gap between request starts to at most this many seconds; an agentic replay also holds its priming leads, the idle after each cut and the waits a cache warm-up hands over to it",
        ),
        set(
            &["--system-idle-gap-cap-seconds"],
            "benchmark.phases.profiling.system_idle_gap_cap_seconds",
            Kind::Float,
            "Agentic replay: with nothing in flight, pending requests move earlier so the replay idles at most this long",
        ),
    ],
};

pub const SCENARIO: Group = Group {
    title: "Scenario",
    flags: &[
        set(
            &["--scenario"],
            "benchmark.scenario",
            Kind::Text,
            "inferencex-agentx-mvp: AIPerf's locked agentic replay of a weka corpus (streaming, ignore_eos, 1,800 s unless set and at least 900, cuts anywhere in a trace, idle gaps capped at 10 s, each tree cache-busted); a conflicting flag stops the run; Rhai scenarios run with aiperf run",
        ),
        set(
            &["--unsafe-override"],
            "benchmark.unsafe_override",
            Kind::Bool,
            "Run a --scenario despite conflicts with its invariants, each a warning; the summary's metadata then says submission_valid: false",
        ),
    ],
};

pub const WARMUP: Group = Group {
    title: "Warmup",
    flags: &[
        set(
            &["--warmup-request-count", "--num-warmup-requests"],
            "benchmark.phases.warmup.requests",
            Kind::Int,
            "Requests of a warmup phase kept out of the results",
        ),
        set(
            &["--warmup-duration"],
            "benchmark.phases.warmup.duration",
            Kind::Float,
            "Seconds of a warmup phase kept out of the results",
        ),
        set(
            &["--agentic-cache-warmup-duration"],
            "benchmark.phases.profiling.agentic_cache_warmup_duration",
            Kind::Float,
            "Agentic replay: after priming, seconds of idle-free, one-token replay of the trajectories",
        ),
        set(
            &["--agentic-warmup-grace-period"],
            "benchmark.phases.profiling.agentic_warmup_grace_period",
            Kind::Float,
            "Agentic replay: seconds the warm-up waits for its requests once sent (default: until all end)",
        ),
        set(
            &["--num-warmup-sessions"],
            "benchmark.phases.warmup.sessions",
            Kind::Int,
            "Sessions (whole conversations) of a warmup phase kept out of the results",
        ),
        set(
            &["--warmup-concurrency"],
            "benchmark.phases.warmup.concurrency",
            Kind::Int,
            "Warmup concurrency [default: --concurrency]",
        ),
        set(
            &["--warmup-prefill-concurrency"],
            "benchmark.phases.warmup.prefill_concurrency",
            Kind::Int,
            "Warmup prefill concurrency [default: --prefill-concurrency]",
        ),
        set(
            &["--warmup-request-rate"],
            "benchmark.phases.warmup.rate",
            Kind::Float,
            "Warmup request rate [default: --request-rate]",
        ),
        apply(
            &["--warmup-arrival-pattern"],
            Arity::One,
            warmup_arrival_pattern,
            "Warmup arrival pattern [default: --arrival-pattern]",
        ),
        set(
            &["--warmup-grace-period"],
            "benchmark.phases.warmup.grace_period",
            Kind::Float,
            "Seconds warmup requests may finish after its duration",
        ),
        set(
            &["--warmup-concurrency-ramp-duration"],
            WARMUP_CONCURRENCY_RAMP,
            Kind::Float,
            "Seconds over which the warmup concurrency grows from 1 [default: --concurrency-ramp-duration]",
        ),
        set(
            &["--warmup-prefill-concurrency-ramp-duration"],
            WARMUP_PREFILL_RAMP,
            Kind::Float,
            "Seconds over which the warmup prefill concurrency grows from 1 [default: --prefill-concurrency-ramp-duration]",
        ),
        set(
            &["--warmup-request-rate-ramp-duration"],
            WARMUP_RATE_RAMP,
            Kind::Float,
            "Seconds over which the warmup request rate climbs to its target [default: --request-rate-ramp-duration]",
        ),
    ],
};

pub const USER_CENTRIC: Group = Group {
    title: "User-Centric Rate",
    flags: &[
        apply(
            &["--user-centric-rate"],
            Arity::One,
            user_centric_rate,
            "Requests per second over all users, each user's turns --num-users / rate s apart (needs --num-users)",
        ),
        sweep(&["--num-users"], "phases.profiling.users", Kind::Int, "Users in user-centric mode; a list sweeps it"),
    ],
};

pub const CANCELLATION: Group = Group {
    title: "Request Cancellation",
    flags: &[
        set(
            &["--request-cancellation-rate"],
            "benchmark.phases.profiling.cancellation.rate",
            Kind::Float,
            "Percentage (0-100) of requests to cancel",
        ),
        set(
            &["--request-cancellation-delay"],
            "benchmark.phases.profiling.cancellation.delay",
            Kind::Float,
            "Seconds after sending before a request is cancelled [default: 0.0]",
        ),
    ],
};

pub const MULTI_RUN: Group = Group {
    title: "Multi-Run",
    flags: &[
        set(
            &["--num-profile-runs"],
            "multi_run.num_runs",
            Kind::Int,
            "Trials of each run, aggregated with confidence intervals [default: 1]",
        ),
        set(
            &["--profile-run-cooldown-seconds"],
            "multi_run.cooldown_seconds",
            Kind::Float,
            "Pause between trials [default: 0.0]",
        ),
        set(
            &["--confidence-level"],
            "multi_run.confidence_level",
            Kind::Float,
            "Confidence level of the aggregate [default: 0.95]",
        ),
        apply(
            &["--profile-run-disable-warmup-after-first", "--no-profile-run-disable-warmup-after-first"],
            Arity::Switch,
            warmup_after_first,
            "Only the first trial runs the warmup [default: True]",
        ),
        apply(
            &["--set-consistent-seed", "--no-set-consistent-seed"],
            Arity::Switch,
            consistent_seed,
            "A sweep or repeated runs without --random-seed use seed 42 (each variation 42 + its index unless --parameter-sweep-same-seed), so every trial draws the same workload [default: True]",
        ),
        apply(
            &["--vary-seed-per-trial", "--no-vary-seed-per-trial"],
            Arity::Switch,
            vary_seed_per_trial,
            "Each trial draws its prompts and arrivals from a seed of its own [default: False]",
        ),
        apply(
            &["--convergence-metric"],
            Arity::One,
            search::convergence,
            "Stop the trials (up to --num-profile-runs) once this metric has converged",
        ),
        apply(
            &["--convergence-stat"],
            Arity::One,
            search::convergence,
            "Statistic the convergence judges [default: avg]",
        ),
        apply(
            &["--convergence-threshold"],
            Arity::One,
            search::convergence,
            "Converged below this: CI width / mean (ci-width, 0.10), std / mean (cv, 0.05); above this KS p-value (distribution, 0.05)",
        ),
        apply(
            &["--convergence-mode"],
            Arity::One,
            search::convergence,
            "ci-width, cv or distribution [default: ci-width]",
        ),
        set(
            &["--parameter-sweep-cooldown-seconds"],
            "sweep.cooldown_seconds",
            Kind::Float,
            "Pause between sweep variations [default: 0.0]",
        ),
        apply(
            &["--parameter-sweep-same-seed", "--no-parameter-sweep-same-seed"],
            Arity::Switch,
            same_seed,
            "Every variation keeps the run's seed, not the seed + its index [default: False]",
        ),
        set(
            &["--parameter-sweep-mode"],
            "sweep.iteration_order",
            Kind::Choice(&[("repeated", "repeated"), ("independent", "independent")]),
            "With trials: repeated runs trial 1 of every variation, then trial 2, … (profile_runs/trial_0001/<variation>/); independent runs every trial of a variation before the next (<variation>/profile_runs/trial_0001/) [default: repeated]",
        ),
        set(
            &["--sweep-type"],
            "sweep.type",
            Kind::Choice(&[("grid", "grid"), ("zip", "zip")]),
            "How swept lists combine: grid or zip [default: grid]",
        ),
        note(&["--no-sweep-table"], Arity::Switch, "the sweep table is printed once, at the end"),
        apply(
            &["--search-space"],
            Arity::One,
            search::search_space,
            "Search dimension path:lo,hi[:kind] (kind int or real), repeatable",
        ),
        apply(
            &["--search-metric"],
            Arity::One,
            search::search_metric,
            "Metric the search optimises, e.g. output_token_throughput",
        ),
        apply(&["--search-stat"], Arity::One, search::search_stat, "Statistic of that metric [default: avg]"),
        apply(&["--search-direction"], Arity::One, search::search_direction, "maximize or minimize"),
        apply(&["--search-max-iterations"], Arity::One, search::max_iterations, "Most runs the search makes"),
        apply(
            &["--search-initial-points"],
            Arity::One,
            search::initial_points,
            "Quasi-random points before the Gaussian process steers [default: 5]",
        ),
        apply(&["--search-random-seed"], Arity::One, search::random_seed, "Seed of the quasi-random points"),
        apply(
            &["--search-planner"],
            Arity::One,
            search::search_planner,
            "bayesian, monotonic-sla, smooth-isotonic, optuna (= bayesian here) or grid",
        ),
        note(
            &["--optuna-sampler"],
            Arity::One,
            "the optuna planner is this project's Gaussian-process optimisation; no sampler to choose",
        ),
        note(&["--optuna-acquisition"], Arity::One, "the optuna planner uses constrained expected improvement"),
        note(
            &["--optuna-terminator"],
            Arity::One,
            "the search stops at its most iterations or once expected improvement is spent",
        ),
        apply(
            &["--search-percentile-pooling"],
            Arity::One,
            search::percentile_pooling,
            "With trials, a percentile objective is the mean of each trial's (mean) or over every trial's requests (pooled) [default: mean]",
        ),
        note(&["--bo-constraint-mode"], Arity::One, "deprecated in AIPerf and ignored there too"),
        apply(
            &["--variant", "--sweep-variant"],
            Arity::Many,
            super::variants::variants,
            "One run of a scenario sweep, '[name:] key=value, key=value' with flag names as keys (concurrency=8, isl=512); repeat it",
        ),
        apply(
            &["--search-sla"],
            Arity::Many,
            search::search_sla,
            "Search SLA metric_tag:stat:op:threshold (op lt, le, gt, ge), repeatable",
        ),
        apply(
            &["--search-sla-tier"],
            Arity::Many,
            search::search_sla_tier,
            "One tier of a multi-tier search, [LABEL:]metric:stat:op:threshold[,…]; 2 to 10 tiers, a boundary each",
        ),
        apply(
            &["--search-recipe"],
            Arity::One,
            search::search_recipe,
            "A named search: max-concurrency-under-sla, max-throughput-ttft-sla, max-throughput-itl-sla, max-goodput-under-slo, pareto-sweep, concurrency-ramp, prefill-ttft-curve, decode-itl-curve",
        ),
        apply(&["--ttft-sla-ms"], Arity::One, search::recipe_setting, "Recipe SLA: TTFT p95 below this many ms"),
        apply(
            &["--isl-osl-pairs"],
            Arity::One,
            search::recipe_setting,
            "pareto-sweep: ISL/OSL pairs, e.g. 128/128,512/256",
        ),
        apply(&["--itl-sla-ms"], Arity::One, search::recipe_setting, "Recipe SLA: ITL p95 below this many ms"),
        apply(
            &["--tpot-sla-ms"],
            Arity::One,
            search::recipe_setting,
            "Recipe SLA: time per output token (ITL) p95 below this many ms",
        ),
        apply(
            &["--e2e-sla-ms"],
            Arity::One,
            search::recipe_setting,
            "Recipe SLA: request latency p99 below this many ms",
        ),
        apply(
            &["--error-rate-sla"],
            Arity::One,
            search::recipe_setting,
            "Recipe SLA: error rate below this fraction, e.g. 0.05",
        ),
        apply(
            &["--slo-attainment-fraction"],
            Arity::One,
            search::recipe_setting,
            "max-goodput-under-slo: fraction of requests that must meet every SLO [default: 0.95]",
        ),
        apply(
            &["--search-style"],
            Arity::One,
            search::recipe_setting,
            "max-concurrency-under-sla: smooth_isotonic (default), monotonic, bo, optuna or grid",
        ),
        apply(
            &["--degradation-threshold"],
            Arity::One,
            search::recipe_setting,
            "concurrency-ramp: knee where the metric exceeds the first point by this fraction [default: 0.2]",
        ),
        apply(
            &["--degradation-metric-tag"],
            Arity::One,
            search::recipe_setting,
            "concurrency-ramp: the metric of the knee [default: request_latency]",
        ),
        apply(
            &["--degradation-stat"],
            Arity::One,
            search::recipe_setting,
            "concurrency-ramp: its statistic [default: p99]",
        ),
        apply(&["--isl-min"], Arity::One, search::recipe_setting, "prefill-ttft-curve: lowest ISL [default: 256]"),
        apply(&["--isl-max"], Arity::One, search::recipe_setting, "prefill-ttft-curve: highest ISL [default: 32768]"),
        apply(&["--isl-steps"], Arity::One, search::recipe_setting, "prefill-ttft-curve: ISL steps [default: 8]"),
        apply(&["--concurrency-min"], Arity::One, search::recipe_setting, "Recipes: lowest concurrency [default: 1]"),
        apply(
            &["--concurrency-max"],
            Arity::One,
            search::recipe_setting,
            "Recipes: highest concurrency [default: 1000; decode-itl-curve 200]",
        ),
        apply(
            &["--concurrency-steps"],
            Arity::One,
            search::recipe_setting,
            "Grid recipes: concurrency steps [default: 8]",
        ),
        apply(&["--osl-min"], Arity::One, search::recipe_setting, "decode-itl-curve: lowest OSL [default: 64]"),
        apply(&["--osl-max"], Arity::One, search::recipe_setting, "decode-itl-curve: highest OSL [default: 1024]"),
        apply(&["--osl-steps"], Arity::One, search::recipe_setting, "decode-itl-curve: OSL steps [default: 4]"),
    ],
};

/// `--request-rate R`: an open-loop profiling phase (Poisson unless a pattern says otherwise).
fn request_rate(document: &mut FlagDocument, _: &str, values: &[String]) -> Result<(), String> {
    document.set_or_sweep("phases.profiling.rate", values.first().map_or("", String::as_str), |part| {
        Kind::Float.read(part)
    })?;
    if crate::config::get_path(&document.document, "benchmark.phases.profiling.type").is_none() {
        document.set("benchmark.phases.profiling.type", json!("poisson"));
    }
    Ok(())
}

fn arrival_pattern(document: &mut FlagDocument, _: &str, values: &[String]) -> Result<(), String> {
    let pattern = ARRIVAL.read(values.first().map_or("", String::as_str))?;
    document.set("benchmark.phases.profiling.type", pattern);
    Ok(())
}

/// `--vary-seed-per-trial` and its `--no-` form.
fn vary_seed_per_trial(document: &mut FlagDocument, name: &str, values: &[String]) -> Result<(), String> {
    document.set("multi_run.vary_seed_per_trial", Value::Bool(switch_value(name, values)?));
    Ok(())
}

/// `--parameter-sweep-same-seed` and its `--no-` form.
fn same_seed(document: &mut FlagDocument, name: &str, values: &[String]) -> Result<(), String> {
    document.set("sweep.same_seed", Value::Bool(switch_value(name, values)?));
    Ok(())
}

/// `--set-consistent-seed` and its `--no-` form.
fn consistent_seed(document: &mut FlagDocument, name: &str, values: &[String]) -> Result<(), String> {
    document.set("multi_run.set_consistent_seed", Value::Bool(switch_value(name, values)?));
    Ok(())
}

/// `--profile-run-disable-warmup-after-first` and its `--no-` form.
fn warmup_after_first(document: &mut FlagDocument, name: &str, values: &[String]) -> Result<(), String> {
    document.set("multi_run.disable_warmup_after_first", Value::Bool(switch_value(name, values)?));
    Ok(())
}

fn warmup_arrival_pattern(document: &mut FlagDocument, _: &str, values: &[String]) -> Result<(), String> {
    let pattern = ARRIVAL.read(values.first().map_or("", String::as_str))?;
    document.set("benchmark.phases.warmup.type", pattern);
    Ok(())
}

fn user_centric_rate(document: &mut FlagDocument, _: &str, values: &[String]) -> Result<(), String> {
    let rate = Kind::Float.read(values.first().map_or("", String::as_str))?;
    document.set("benchmark.phases.profiling.rate", rate);
    document.set("benchmark.phases.profiling.type", json!("user_centric"));
    Ok(())
}

/// `--request-rate-series FILE`: an open-loop profiling phase whose rate follows the file's points.
fn request_rate_series(document: &mut FlagDocument, _: &str, values: &[String]) -> Result<(), String> {
    let path = values.first().map_or("", String::as_str);
    document.set("benchmark.phases.profiling.rate_series", json!({ "path": path }));
    if crate::config::get_path(&document.document, "benchmark.phases.profiling.type").is_none() {
        document.set("benchmark.phases.profiling.type", json!("poisson"));
    }
    Ok(())
}
