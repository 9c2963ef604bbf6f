//! AIPerf's environment variables that change what an AIPerf command or config sends, read when
//! one is lowered, as AIPerf reads them at its start: `AIPERF_HTTP_SSL_VERIFY=false` accepts any
//! server certificate (warned about), `AIPERF_HTTP_FORCE_CLOSE=true` opens a connection for
//! every request, `AIPERF_HTTP_CONNECTION_LIMIT` caps the connections open at once,
//! `AIPERF_HTTP_VIDEO_POLL_INTERVAL` is a video job's poll interval (seconds),
//! `AIPERF_ENDPOINT_FORCE_CONTENT_PARTS=true` sends chat (and chat embeddings), Responses and
//! Messages text as content parts, the `AIPERF_DATASET_WEKA_*` agent-splitting settings shape a
//! weka or TraceLab trace's agents, the `AIPERF_DATASET_TRACELAB_*` ones how a TraceLab file's
//! sessions join as sub-agents, `AIPERF_SERVER_METRICS_COLLECTION_INTERVAL` /
//! `AIPERF_SERVER_METRICS_REACHABILITY_TIMEOUT` / `AIPERF_GPU_COLLECTION_INTERVAL` how often and how
//! patiently the server's and the GPUs' metrics are scraped.
//! The session-header switches are read with the session header (`plan/routing.rs`). Which of
//! AIPerf's other variables mean nothing here is in docs/profile.md.

use crate::config::ConfigError;
use crate::plan::{
    AgentSplit, ConnectionStrategy, Endpoint, EndpointKind, GpuTelemetryConfig, ServerMetricsConfig, SubagentJoin,
    env_switch,
};

const SSL_VERIFY: &str = "AIPERF_HTTP_SSL_VERIFY";
const FORCE_CLOSE: &str = "AIPERF_HTTP_FORCE_CLOSE";
const VIDEO_POLL_INTERVAL: &str = "AIPERF_HTTP_VIDEO_POLL_INTERVAL";
const FORCE_CONTENT_PARTS: &str = "AIPERF_ENDPOINT_FORCE_CONTENT_PARTS";
const CONNECTION_LIMIT: &str = "AIPERF_HTTP_CONNECTION_LIMIT";
/// The most AIPerf's `AIPERF_HTTP_CONNECTION_LIMIT` takes.
const CONNECTION_LIMIT_MAX: u64 = 65_000;

/// `endpoint` as AIPerf would reach it with the variables `env` gives.
pub fn apply(endpoint: &mut Endpoint, env: impl Fn(&str) -> Option<String>) -> Result<(), ConfigError> {
    if switch(&env, SSL_VERIFY)? == Some(false) {
        endpoint.transport.tls.insecure = true;
    }
    if switch(&env, FORCE_CLOSE)? == Some(true) {
        endpoint.transport.connections.strategy = ConnectionStrategy::NeverReuse;
    }
    if let Some(limit) = whole_number(&env, CONNECTION_LIMIT)? {
        if !(1..=CONNECTION_LIMIT_MAX).contains(&limit) {
            return Err(ConfigError::new(format!(
                "environment variable {CONNECTION_LIMIT}: must be from 1 to {CONNECTION_LIMIT_MAX}, got {limit}"
            )));
        }
        endpoint.transport.connections.max = Some(limit as usize);
    }
    // The kinds whose turns AIPerf renders through it; the others carry no content parts.
    let parted = matches!(
        endpoint.kind,
        EndpointKind::Chat | EndpointKind::ChatEmbeddings | EndpointKind::Responses | EndpointKind::Messages
    );
    if parted && switch(&env, FORCE_CONTENT_PARTS)? == Some(true) {
        endpoint.request.content_parts = true;
    }
    // AIPerf reads the interval for video jobs only; a chat run with it set is not refused.
    if endpoint.kind == EndpointKind::VideoGeneration {
        endpoint.request.video_poll_interval_s = number(&env, VIDEO_POLL_INTERVAL)?;
    }
    Ok(())
}

/// How AIPerf's weka loader would split a trace's flattened agents with the variables `env` gives.
pub fn agent_split(env: impl Fn(&str) -> Option<String>) -> Result<AgentSplit, ConfigError> {
    let mut split = AgentSplit::default();
    let weka = |name: &str| format!("AIPERF_DATASET_WEKA_{name}");
    let decimal = |name: &str| number(&env, &weka(name));
    let count = |name: &str| whole_number(&env, &weka(name));
    if let Some(enabled) = switch(&env, &weka("SPLIT_FLATTENED_AGENTS"))? {
        split.enabled = enabled;
    }
    if let Some(cross_model) = switch(&env, &weka("AUX_CROSS_MODEL"))? {
        split.aux_cross_model = cross_model;
    }
    split.seam_max_gap_s = decimal("SEAM_MAX_GAP_SECONDS")?.unwrap_or(split.seam_max_gap_s);
    split.seam_min_overlap = decimal("SEAM_MIN_OVERLAP_RATIO")?.unwrap_or(split.seam_min_overlap);
    split.aux_isl_ratio = decimal("AUX_ISL_RATIO")?.unwrap_or(split.aux_isl_ratio);
    split.reduction_ratio = decimal("AUX_REDUCTION_RATIO")?.unwrap_or(split.reduction_ratio);
    split.aux_max_requests = count("AUX_MAX_REQUESTS")?.unwrap_or(split.aux_max_requests);
    split.aux_isl_floor = count("AUX_ISL_FLOOR")?.unwrap_or(split.aux_isl_floor);
    split.reduction_osl_max = count("AUX_REDUCTION_OSL_MAX")?.unwrap_or(split.reduction_osl_max);
    split.worker_group_min = count("WORKER_GROUP_MIN")?.unwrap_or(split.worker_group_min);
    match split.problem() {
        Some(problem) => Err(ConfigError::new(format!("AIPERF_DATASET_WEKA_* variables: {problem}"))),
        None => Ok(split),
    }
}

/// How AIPerf's TraceLab loader would join sub-agent sessions with the variables `env` gives.
pub fn subagent_join(env: impl Fn(&str) -> Option<String>) -> Result<SubagentJoin, ConfigError> {
    let defaults = SubagentJoin::default();
    Ok(SubagentJoin {
        enabled: switch(&env, "AIPERF_DATASET_TRACELAB_SUBAGENT_JOIN")?.unwrap_or(defaults.enabled),
        codex: switch(&env, "AIPERF_DATASET_TRACELAB_CODEX_SUBAGENT_JOIN")?.unwrap_or(defaults.codex),
        min_spawn_ms: whole_number(&env, "AIPERF_DATASET_TRACELAB_MIN_SPAWN_MS")?.unwrap_or(defaults.min_spawn_ms),
    })
}

/// AIPerf's scrape settings with the variables `env` gives, in AIPerf's ranges: the server
/// metrics' interval (0.001 to 300 s) and reachability timeout (1 to 300 whole seconds), the GPU
/// telemetry's interval (0.01 to 300 s).
pub fn collection(
    server_metrics: &mut ServerMetricsConfig,
    gpu_telemetry: &mut GpuTelemetryConfig,
    env: impl Fn(&str) -> Option<String>,
) -> Result<(), ConfigError> {
    let within = |variable: &str, value: f64, (low, high): (f64, f64)| match (low..=high).contains(&value) {
        true => Ok(value),
        false => Err(ConfigError::new(format!("environment variable {variable}: {value} is not from {low} to {high}"))),
    };
    let interval = "AIPERF_SERVER_METRICS_COLLECTION_INTERVAL";
    if let Some(seconds) = number(&env, interval)? {
        server_metrics.interval_s = within(interval, seconds, (0.001, 300.0))?;
    }
    let reachability = "AIPERF_SERVER_METRICS_REACHABILITY_TIMEOUT";
    if let Some(seconds) = whole_number(&env, reachability)? {
        server_metrics.reachability_timeout_s = within(reachability, seconds as f64, (1.0, 300.0))?;
    }
    let gpu_interval = "AIPERF_GPU_COLLECTION_INTERVAL";
    if let Some(seconds) = number(&env, gpu_interval)? {
        gpu_telemetry.interval_s = within(gpu_interval, seconds, (0.01, 300.0))?;
    }
    Ok(())
}

/// A number variable (not NaN); None when unset.
fn number(env: &impl Fn(&str) -> Option<String>, variable: &str) -> Result<Option<f64>, ConfigError> {
    env(variable)
        .map(|text| {
            text.trim()
                .parse::<f64>()
                .ok()
                .filter(|value| !value.is_nan())
                .ok_or_else(|| ConfigError::new(format!("environment variable {variable}: `{text}` is not a number")))
        })
        .transpose()
}

/// A whole number ≥ 0 variable; None when unset.
fn whole_number(env: &impl Fn(&str) -> Option<String>, variable: &str) -> Result<Option<u64>, ConfigError> {
    env(variable)
        .map(|text| {
            text.trim().parse::<u64>().map_err(|_| {
                ConfigError::new(format!("environment variable {variable}: `{text}` is not a whole number ≥ 0"))
            })
        })
        .transpose()
}

/// A boolean variable as pydantic reads one; None when unset.
fn switch(env: &impl Fn(&str) -> Option<String>, variable: &str) -> Result<Option<bool>, ConfigError> {
    env(variable).map(|value| env_switch(variable, &value).map_err(ConfigError::new)).transpose()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn applied(kind: EndpointKind, vars: &[(&str, &str)]) -> Result<Endpoint, String> {
        let mut endpoint = Endpoint::new("https://server:8000", "m", kind, false);
        let env = |name: &str| vars.iter().find(|(var, _)| *var == name).map(|(_, value)| value.to_string());
        apply(&mut endpoint, env).map_err(|e| e.to_string())?;
        Ok(endpoint)
    }

    #[test]
    fn unset_variables_change_nothing() {
        let endpoint = applied(EndpointKind::VideoGeneration, &[]).unwrap();
        assert_eq!(endpoint, Endpoint::new("https://server:8000", "m", EndpointKind::VideoGeneration, false));
    }

    #[test]
    fn each_variable_changes_what_aiperf_changes_with_it() {
        let endpoint = applied(
            EndpointKind::VideoGeneration,
            &[(SSL_VERIFY, "false"), (FORCE_CLOSE, "1"), (VIDEO_POLL_INTERVAL, "0.25")],
        )
        .unwrap();
        assert!(endpoint.transport.tls.insecure);
        assert_eq!(endpoint.transport.connections.strategy, ConnectionStrategy::NeverReuse);
        assert_eq!(endpoint.request.video_poll_interval_s, Some(0.25));
        for (kind, parts) in [
            (EndpointKind::Chat, true),
            (EndpointKind::Responses, true),
            (EndpointKind::Messages, true),
            (EndpointKind::Embeddings, false),
        ] {
            let endpoint = applied(kind, &[(FORCE_CONTENT_PARTS, "true")]).unwrap();
            assert_eq!(endpoint.request.content_parts, parts, "{kind:?}");
        }
        assert!(
            applied(EndpointKind::Chat, &[(FORCE_CONTENT_PARTS, "maybe")]).unwrap_err().contains(FORCE_CONTENT_PARTS)
        );

        let kept =
            applied(EndpointKind::Chat, &[(SSL_VERIFY, "true"), (FORCE_CLOSE, "no"), (VIDEO_POLL_INTERVAL, "2")])
                .unwrap();
        assert!(!kept.transport.tls.insecure);
        assert_eq!(kept.transport.connections.strategy, ConnectionStrategy::Pooled);
        assert_eq!(kept.request.video_poll_interval_s, None, "a chat run ignores the video poll interval");
    }

    #[test]
    fn the_connection_limit_caps_the_pool_within_aiperfs_range() {
        let endpoint = applied(EndpointKind::Chat, &[(CONNECTION_LIMIT, "64")]).unwrap();
        assert_eq!(endpoint.transport.connections.max, Some(64));
        for refused in ["0", "65001", "many"] {
            let error = applied(EndpointKind::Chat, &[(CONNECTION_LIMIT, refused)]).unwrap_err();
            assert!(error.contains(CONNECTION_LIMIT), "{error}");
        }
    }

    #[test]
    fn the_weka_variables_set_the_agent_splitting() {
        let env = |vars: &'static [(&'static str, &'static str)]| {
            move |name: &str| vars.iter().find(|(var, _)| *var == name).map(|(_, value)| value.to_string())
        };
        assert!(agent_split(env(&[])).unwrap().is_default());
        let split = agent_split(env(&[
            ("AIPERF_DATASET_WEKA_SPLIT_FLATTENED_AGENTS", "false"),
            ("AIPERF_DATASET_WEKA_SEAM_MAX_GAP_SECONDS", "600"),
            ("AIPERF_DATASET_WEKA_WORKER_GROUP_MIN", "0"),
            ("AIPERF_DATASET_WEKA_AUX_CROSS_MODEL", "0"),
        ]))
        .unwrap();
        assert_eq!(
            (split.enabled, split.seam_max_gap_s, split.worker_group_min, split.aux_cross_model),
            (false, 600.0, 0, false)
        );
        let error = agent_split(env(&[("AIPERF_DATASET_WEKA_AUX_MAX_REQUESTS", "-1")])).unwrap_err().to_string();
        assert!(error.contains("AIPERF_DATASET_WEKA_AUX_MAX_REQUESTS: `-1` is not a whole number"), "{error}");
        let error = agent_split(env(&[("AIPERF_DATASET_WEKA_SEAM_MIN_OVERLAP_RATIO", "3")])).unwrap_err().to_string();
        assert!(error.contains("min overlap must be within 0 and 1, got 3"), "{error}");
    }

    #[test]
    fn the_tracelab_variables_set_the_sub_agent_join() {
        let env = |vars: &'static [(&'static str, &'static str)]| {
            move |name: &str| vars.iter().find(|(var, _)| *var == name).map(|(_, value)| value.to_string())
        };
        assert!(subagent_join(env(&[])).unwrap().is_default());
        let join = subagent_join(env(&[
            ("AIPERF_DATASET_TRACELAB_SUBAGENT_JOIN", "false"),
            ("AIPERF_DATASET_TRACELAB_CODEX_SUBAGENT_JOIN", "0"),
            ("AIPERF_DATASET_TRACELAB_MIN_SPAWN_MS", "2500"),
        ]))
        .unwrap();
        assert_eq!(join, SubagentJoin { enabled: false, codex: false, min_spawn_ms: 2500 });
        let error = subagent_join(env(&[("AIPERF_DATASET_TRACELAB_MIN_SPAWN_MS", "1.5")])).unwrap_err().to_string();
        assert!(error.contains("AIPERF_DATASET_TRACELAB_MIN_SPAWN_MS: `1.5` is not a whole number"), "{error}");
    }

    #[test]
    fn a_value_that_is_not_one_names_its_variable() {
        let error = applied(EndpointKind::Chat, &[(SSL_VERIFY, "nope")]).unwrap_err();
        assert!(error.contains("AIPERF_HTTP_SSL_VERIFY: `nope` is not a boolean"), "{error}");
        let error = applied(EndpointKind::VideoGeneration, &[(VIDEO_POLL_INTERVAL, "fast")]).unwrap_err();
        assert!(error.contains("AIPERF_HTTP_VIDEO_POLL_INTERVAL: `fast` is not a number"), "{error}");
    }

    #[test]
    fn the_scrape_variables_set_the_intervals_in_aiperfs_ranges() {
        let scraped = |vars: &[(&str, &str)]| {
            let env = |name: &str| vars.iter().find(|(var, _)| *var == name).map(|(_, value)| value.to_string());
            let (mut server, mut gpu) = (ServerMetricsConfig::default(), GpuTelemetryConfig::default());
            collection(&mut server, &mut gpu, env).map(|()| (server, gpu)).map_err(|e| e.to_string())
        };
        let (server, gpu) = scraped(&[]).unwrap();
        assert_eq!((server.interval_s, server.reachability_timeout_s, gpu.interval_s), (0.333, 10.0, 0.333));
        let (server, gpu) = scraped(&[
            ("AIPERF_SERVER_METRICS_COLLECTION_INTERVAL", "1.5"),
            ("AIPERF_SERVER_METRICS_REACHABILITY_TIMEOUT", "30"),
            ("AIPERF_GPU_COLLECTION_INTERVAL", "0.5"),
        ])
        .unwrap();
        assert_eq!((server.interval_s, server.reachability_timeout_s, gpu.interval_s), (1.5, 30.0, 0.5));
        let error = scraped(&[("AIPERF_GPU_COLLECTION_INTERVAL", "0.001")]).unwrap_err();
        assert!(error.contains("AIPERF_GPU_COLLECTION_INTERVAL: 0.001 is not from 0.01 to 300"), "{error}");
        let error = scraped(&[("AIPERF_SERVER_METRICS_REACHABILITY_TIMEOUT", "2.5")]).unwrap_err();
        assert!(error.contains("is not a whole number"), "{error}");
    }
}
