//! AIPerf's environment variables that change what an AIPerf command or config sends, read when
//! one is lowered, as AIPerf reads them at its start: `AIPERF_HTTP_SSL_VERIFY=false` accepts any
//! server certificate (warned about), `AIPERF_HTTP_FORCE_CLOSE=true` opens a connection for
//! every request, `AIPERF_HTTP_VIDEO_POLL_INTERVAL` is a video job's poll interval (seconds).
//! The session-header switches are read with the session header (`plan/routing.rs`). Which of
//! AIPerf's other variables mean nothing here is in docs/profile.md.

use crate::config::ConfigError;
use crate::plan::{ConnectionStrategy, Endpoint, EndpointKind, env_switch};

const SSL_VERIFY: &str = "AIPERF_HTTP_SSL_VERIFY";
const FORCE_CLOSE: &str = "AIPERF_HTTP_FORCE_CLOSE";
const VIDEO_POLL_INTERVAL: &str = "AIPERF_HTTP_VIDEO_POLL_INTERVAL";

/// `endpoint` as AIPerf would reach it with the variables `env` gives.
pub fn apply(endpoint: &mut Endpoint, env: impl Fn(&str) -> Option<String>) -> Result<(), ConfigError> {
    if switch(&env, SSL_VERIFY)? == Some(false) {
        endpoint.transport.tls.insecure = true;
    }
    if switch(&env, FORCE_CLOSE)? == Some(true) {
        endpoint.transport.connections.strategy = ConnectionStrategy::NeverReuse;
    }
    // AIPerf reads the interval for video jobs only; a chat run with it set is not refused.
    if endpoint.kind == EndpointKind::VideoGeneration
        && let Some(text) = env(VIDEO_POLL_INTERVAL)
    {
        let seconds = text.trim().parse::<f64>().map_err(|_| {
            ConfigError::new(format!("environment variable {VIDEO_POLL_INTERVAL}: `{text}` is not a number of seconds"))
        })?;
        endpoint.request.video_poll_interval_s = Some(seconds);
    }
    Ok(())
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

        let kept =
            applied(EndpointKind::Chat, &[(SSL_VERIFY, "true"), (FORCE_CLOSE, "no"), (VIDEO_POLL_INTERVAL, "2")])
                .unwrap();
        assert!(!kept.transport.tls.insecure);
        assert_eq!(kept.transport.connections.strategy, ConnectionStrategy::Pooled);
        assert_eq!(kept.request.video_poll_interval_s, None, "a chat run ignores the video poll interval");
    }

    #[test]
    fn a_value_that_is_not_one_names_its_variable() {
        let error = applied(EndpointKind::Chat, &[(SSL_VERIFY, "nope")]).unwrap_err();
        assert!(error.contains("AIPERF_HTTP_SSL_VERIFY: `nope` is not a boolean"), "{error}");
        let error = applied(EndpointKind::VideoGeneration, &[(VIDEO_POLL_INTERVAL, "fast")]).unwrap_err();
        assert!(error.contains("AIPERF_HTTP_VIDEO_POLL_INTERVAL: `fast` is not a number"), "{error}");
    }
}
