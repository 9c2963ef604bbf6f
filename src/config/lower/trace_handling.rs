//! `datasets.main`'s trace-handling keys lowered (`ignore_trace_delays`, `use_think_time_only`,
//! `trace_session_sample_ratio`, `max_context_length`, `trace_idle_gap_cap_seconds`,
//! `inter_turn_delay_cap_seconds`): the agentic trace formats read them, the others refuse them;
//! the session sample ratio is AIPerf's baseten_trace's alone (other formats ignore it, noted).

use serde_json::Value;

use super::values::{opt_bool, opt_f64, opt_u64};
use crate::config::ConfigError;
use crate::plan::{Dataset, FileFormat, TraceHandling};

/// The share of a trace's sessions to replay (AIPerf's baseten_trace loader's).
const SAMPLE_RATIO: &str = "trace_session_sample_ratio";

pub fn lower(dataset: &Value, format: FileFormat) -> Result<TraceHandling, ConfigError> {
    let key = |field: &str| format!("datasets.main.{field}");
    let mut trace = TraceHandling {
        ignore_delays: opt_bool(dataset, "ignore_trace_delays", &key("ignore_trace_delays"))?.unwrap_or(false),
        think_time_only: opt_bool(dataset, "use_think_time_only", &key("use_think_time_only"))?.unwrap_or(false),
        session_sample_ratio: opt_f64(dataset, SAMPLE_RATIO, &key(SAMPLE_RATIO))?,
        max_context_length: opt_u64(dataset, "max_context_length", &key("max_context_length"))?,
        idle_gap_cap_s: opt_f64(dataset, "trace_idle_gap_cap_seconds", &key("trace_idle_gap_cap_seconds"))?,
        delay_cap_s: opt_f64(dataset, "inter_turn_delay_cap_seconds", &key("inter_turn_delay_cap_seconds"))?,
        // AIPerf's weka loader (which reads TraceLab too) takes these from its environment only.
        agent_split: match format {
            FileFormat::WekaTrace | FileFormat::Tracelab => {
                super::aiperf_env::agent_split(|variable| std::env::var(variable).ok())?
            }
            _ => Default::default(),
        },
        subagent_join: match format {
            FileFormat::Tracelab => super::aiperf_env::subagent_join(|variable| std::env::var(variable).ok())?,
            _ => Default::default(),
        },
    };
    if let Some(problem) = trace.problem() {
        return Err(ConfigError::new(format!("datasets.main: {problem}")));
    }
    // AIPerf 0.13 samples baseten_trace sessions only; it ignores the ratio for any other
    // format (`ignored_sample_ratio` notes it).
    if format != FileFormat::Baseten {
        trace.session_sample_ratio = None;
    }
    if trace.max_context_length.is_some() && !matches!(format, FileFormat::WekaTrace | FileFormat::Tracelab) {
        return Err(ConfigError::new(format!(
            "datasets.main.max_context_length (--max-context-length): filters weka_trace and tracelab traces only, not {}",
            format.name()
        )));
    }
    if trace.sets_agentic_keys() && !format.is_agentic_trace() {
        return Err(ConfigError::new(format!(
            "datasets.main (--ignore-trace-delays, --use-think-time-only, --trace-idle-gap-cap-seconds, --inter-turn-delay-cap-seconds): read by the tracelab, weka_trace and dag_jsonl formats only, not {}",
            format.name()
        )));
    }
    Ok(trace)
}

/// The note for a session sample ratio the run's dataset ignores, as AIPerf 0.13 ignores it
/// outside baseten_trace.
pub fn ignored_sample_ratio(dataset: &Value, plan_dataset: &Dataset) -> Option<String> {
    let Dataset::File(file) = plan_dataset else { return None };
    if file.format == FileFormat::Baseten || dataset.get(SAMPLE_RATIO).is_none_or(Value::is_null) {
        return None;
    }
    Some(format!(
        "note: datasets.main.{SAMPLE_RATIO} (--trace-session-sample-ratio): AIPerf 0.13 samples baseten_trace \
         sessions only and ignores it for {}, as this run does (a scenario's `session_sample_ratio` also samples \
         agentic traces)",
        file.format.name()
    ))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_keys_lower_and_other_formats_refuse_them() {
        let dataset = json!({
            "ignore_trace_delays": true,
            "trace_session_sample_ratio": 0.5,
            "max_context_length": 1000,
            "trace_idle_gap_cap_seconds": 60,
            "inter_turn_delay_cap_seconds": 2.5,
        });
        let trace = lower(&dataset, FileFormat::WekaTrace).unwrap();
        assert_eq!(
            trace,
            TraceHandling {
                ignore_delays: true,
                think_time_only: false,
                session_sample_ratio: None,
                max_context_length: Some(1000),
                idle_gap_cap_s: Some(60.0),
                delay_cap_s: Some(2.5),
                agent_split: Default::default(),
                subagent_join: Default::default(),
            }
        );
        let error = lower(&dataset, FileFormat::DagJsonl).unwrap_err().to_string();
        assert!(error.contains("filters weka_trace and tracelab traces only, not dag_jsonl"), "{error}");
        let error = lower(&json!({"ignore_trace_delays": true}), FileFormat::SingleTurn).unwrap_err().to_string();
        assert!(
            error.contains("read by the tracelab, weka_trace and dag_jsonl formats only, not single_turn"),
            "{error}"
        );
        let both = json!({"ignore_trace_delays": true, "use_think_time_only": true});
        assert!(lower(&both, FileFormat::Tracelab).unwrap_err().to_string().contains("exclude each other"));
        assert!(lower(&json!({}), FileFormat::SingleTurn).unwrap().is_default());
    }

    #[test]
    fn the_session_sample_ratio_is_baseten_traces_and_noted_elsewhere() {
        let ratio = json!({"trace_session_sample_ratio": 0.25});
        assert_eq!(lower(&ratio, FileFormat::Baseten).unwrap().session_sample_ratio, Some(0.25));
        for format in [FileFormat::WekaTrace, FileFormat::SingleTurn] {
            assert!(lower(&ratio, format).unwrap().is_default(), "{format:?}");
            let file = crate::plan::FileDataset::of("trace", format);
            let note = ignored_sample_ratio(&ratio, &Dataset::File(file)).expect("a note");
            assert!(note.contains(&format!("ignores it for {}", format.name())), "{note}");
        }
        let baseten = Dataset::File(crate::plan::FileDataset::of("trace.parquet", FileFormat::Baseten));
        assert_eq!(ignored_sample_ratio(&ratio, &baseten), None);
        let error = lower(&json!({"trace_session_sample_ratio": 1.5}), FileFormat::WekaTrace).unwrap_err();
        assert!(error.to_string().contains("at most 1, got 1.5"), "{error}");
    }
}
