//! `quality.json`: how the generated sessions came out against the config's targets (AIPerf
//! 0.13's quality report, its keys): each drawn quantity's percentiles and its error against
//! the asked mean and median, turns per session, and how sessions ended.

use serde::Serialize;
use serde_json::{Map, Value, json};

use super::config::GeneratorConfig;
use super::sessions::{EndReason, Session};
use crate::metrics::stats::distribution;

#[derive(Debug, Serialize)]
pub struct QualityReport {
    pub config_summary: Map<String, Value>,
    pub observed_vs_target: Map<String, Value>,
    pub session_stats: PercentileStats,
    pub session_end_stats: Value,
}

/// Percentiles rounded to two decimals (numpy's linear interpolation; zeros when empty).
#[derive(Debug, Default, Clone, Copy, Serialize, PartialEq)]
pub struct PercentileStats {
    pub count: u64,
    pub mean: f64,
    pub std: f64,
    pub median: f64,
    pub p05: f64,
    pub p25: f64,
    pub p75: f64,
    pub p95: f64,
    pub p99: f64,
}

impl PercentileStats {
    fn of(values: &[f64]) -> Self {
        let Some(stats) = distribution(values) else { return Self::default() };
        let at = |value: Option<f64>| round2(value.unwrap_or(stats.avg));
        Self {
            count: values.len() as u64,
            mean: round2(stats.avg),
            std: round2(stats.std.unwrap_or(0.0)),
            median: at(stats.p50),
            p05: at(stats.p5),
            p25: at(stats.p25),
            p75: at(stats.p75),
            p95: at(stats.p95),
            p99: at(stats.p99),
        }
    }
}

fn round2(value: f64) -> f64 {
    (value * 100.0).round() / 100.0
}

/// Observed against asked: `|observed − target| / target` in percent.
fn against(values: &[f64], target_mean: Option<f64>, target_median: Option<f64>) -> Value {
    let observed = PercentileStats::of(values);
    let error = |target: Option<f64>, seen: f64| {
        target.map(|target| if target == 0.0 { 0.0 } else { round2((seen - target).abs() / target * 100.0) })
    };
    json!({
        "target_mean": target_mean,
        "target_median": target_median,
        "observed": observed,
        "pct_error_mean": error(target_mean, observed.mean),
        "pct_error_median": error(target_median, observed.median),
    })
}

pub fn report(sessions: &[Session], config: &GeneratorConfig) -> QualityReport {
    let (mut first_contexts, mut new_tokens, mut outputs, mut delays) = (vec![], vec![], vec![], vec![]);
    let mut turns_per_session = Vec::new();
    let mut filled = Vec::new();
    for session in sessions {
        turns_per_session.push(session.turns.len() as f64);
        if let Some(last) = session.turns.last() {
            filled.push(last.input_length as f64 / config.max_prompt_tokens as f64);
        }
        for (index, turn) in session.turns.iter().enumerate() {
            if index == 0 {
                first_contexts.push(turn.input_length as f64);
            } else {
                new_tokens.push(turn.new_tokens as f64);
                delays.push(turn.delay_ms);
            }
            outputs.push(turn.output_length as f64);
        }
    }
    let cache = &config.cache;
    let shared = (cache.layer1_tokens + cache.layer1_5_tokens) as f64;
    let mut observed = Map::new();
    let mut put = |key: &str, values: &[f64], mean: Option<f64>, median: Option<f64>| {
        if !values.is_empty() {
            observed.insert(key.into(), against(values, mean, median));
        }
    };
    put("initial_context", &first_contexts, Some(shared + cache.layer2.mean), Some(shared + cache.layer2.median));
    let length = &config.generation_length;
    put("generation_length", &outputs, Some(length.mean), Some(length.median));
    let asked = &config.new_tokens_per_turn.tokens;
    put("new_tokens_per_turn", &new_tokens, Some(asked.mean), Some(asked.median));
    put("inter_turn_delay_ms", &delays, None, None);
    let counts = config.turns.as_ref();
    put("turns_per_session", &turns_per_session, counts.map(|t| t.mean as f64), counts.map(|t| t.median as f64));

    let total = sessions.len();
    let ended = |reason: EndReason| sessions.iter().filter(|session| session.end == reason).count();
    let share = |count: usize| (count as f64 / total.max(1) as f64 * 10_000.0).round() / 10_000.0;
    let (retires, resets, targets, splits) = (
        ended(EndReason::ForcedRetire),
        ended(EndReason::ProbabilisticReset),
        ended(EndReason::TargetTurnCount),
        ended(EndReason::RestartSplit),
    );
    let end_stats = json!({
        "total_sessions": total,
        "forced_retires": retires,
        "probabilistic_resets": resets,
        "target_turn_completions": targets,
        "restart_splits": splits,
        "retire_fraction": share(retires),
        "reset_fraction": share(resets),
        "target_turn_fraction": share(targets),
        "restart_split_fraction": share(splits),
        "final_context_utilization": PercentileStats::of(if filled.is_empty() { &[0.0] } else { &filled }),
    });
    QualityReport {
        config_summary: summary(config),
        observed_vs_target: observed,
        session_stats: PercentileStats::of(if turns_per_session.is_empty() { &[0.0] } else { &turns_per_session }),
        session_end_stats: end_stats,
    }
}

/// The config's main numbers, flat.
fn summary(config: &GeneratorConfig) -> Map<String, Value> {
    let cache = &config.cache;
    let shared = (cache.layer1_tokens + cache.layer1_5_tokens) as f64;
    let delay = &config.inter_turn_delay;
    let summary = json!({
        "initial_context_mean": shared + cache.layer2.mean,
        "initial_context_median": shared + cache.layer2.median,
        "layer1_tokens": cache.layer1_tokens,
        "layer1_5_tokens": cache.layer1_5_tokens,
        "layer2_mean": cache.layer2.mean,
        "layer2_median": cache.layer2.median,
        "num_groups": cache.layer1_5_groups.num_groups,
        "zipf_alpha": cache.layer1_5_groups.zipf_alpha,
        "new_tokens_per_turn_mean": config.new_tokens_per_turn.tokens.mean,
        "new_tokens_per_turn_median": config.new_tokens_per_turn.tokens.median,
        "generation_length_mean": config.generation_length.mean,
        "generation_length_median": config.generation_length.median,
        "max_prompt_tokens": config.max_prompt_tokens,
        "block_size": config.block_size,
        "inter_turn_delay_agentic_fraction": delay.agentic_fraction,
        "inter_turn_delay_agentic_mean_ms": delay.agentic_delay.mean,
        "inter_turn_delay_human_mean_ms": delay.human_delay.mean,
        "turn_mode_enabled": u8::from(config.turns.is_some()),
    });
    let Value::Object(mut summary) = summary else { return Map::new() };
    if let Some(reset) = &config.reset {
        summary.insert("reset_base_probability".into(), json!(reset.base_probability));
        summary.insert("reset_context_scaling".into(), json!(reset.context_scaling));
    }
    if let Some(turns) = &config.turns {
        for (key, value) in [("mean", turns.mean), ("median", turns.median), ("min", turns.min), ("max", turns.max)] {
            summary.insert(format!("turns_{key}"), json!(value));
        }
        summary.insert("turns_allow_truncation".into(), json!(u8::from(turns.allow_truncation)));
        if let Some(attempts) = turns.max_session_attempts {
            summary.insert("turns_max_session_attempts".into(), json!(attempts));
        }
    }
    summary
}
