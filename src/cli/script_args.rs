//! What `aiperf run` and `aiperf check` give a scenario besides its file: `--set` values for
//! `args()`, the import search path (`--lib`, then AIPERF_PATH), the libraries of its
//! `aiperf.lock`, and the operation limit.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::script::{DEFAULT_MAX_OPERATIONS, ScenarioSettings};

/// The environment variable with more import folders, colon-separated.
const SEARCH_PATH_VAR: &str = "AIPERF_PATH";

#[derive(Debug, clap::Args)]
pub struct ScriptArgs {
    /// A value for the script's `args()` and `arg(name, default)` (repeatable), e.g. --set users=64
    #[arg(long = "set", value_name = "NAME=VALUE", value_parser = parse_set)]
    pub set: Vec<(String, String)>,
    /// A folder searched for imported modules after the importing file's own folder (repeatable;
    /// the folders of AIPERF_PATH, colon-separated, come after)
    #[arg(long = "lib", value_name = "DIR")]
    pub lib: Vec<PathBuf>,
    /// Stop the script after this many Rhai operations, a runaway loop (0: no limit); time spent
    /// benchmarking in run() does not count
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_OPERATIONS)]
    pub max_operations: u64,
}

impl ScriptArgs {
    /// The settings of the scenario at `scenario`, with its project's locked libraries (checked
    /// against the cache, offline); a missing, stale or mismatched lock is the error.
    pub fn settings_for(&self, scenario: &Path) -> Result<ScenarioSettings, String> {
        let libraries = crate::libs::ScenarioLibraries::for_scenario(scenario).map_err(|e| format!("{e:#}"))?;
        Ok(ScenarioSettings { libraries: Arc::new(libraries), ..self.settings() })
    }

    fn settings(&self) -> ScenarioSettings {
        let from_env: Vec<PathBuf> = std::env::var_os(SEARCH_PATH_VAR)
            .map(|value| std::env::split_paths(&value).filter(|dir| !dir.as_os_str().is_empty()).collect())
            .unwrap_or_default();
        ScenarioSettings {
            args: self.set.iter().cloned().collect(),
            search_path: self.lib.iter().cloned().chain(from_env).collect(),
            max_operations: self.max_operations,
            report: false,
            libraries: Default::default(),
        }
    }
}

/// `NAME=VALUE`, split at the first `=`; the name is a non-empty word without spaces.
fn parse_set(text: &str) -> Result<(String, String), String> {
    let Some((name, value)) = text.split_once('=') else {
        return Err(format!("`{text}` is not NAME=VALUE (e.g. --set users=64)"));
    };
    let name = name.trim();
    if name.is_empty() || name.chars().any(char::is_whitespace) {
        return Err(format!("`{text}` needs a name without spaces before `=` (e.g. --set users=64)"));
    }
    Ok((name.to_string(), value.to_string()))
}

/// `NAME=VALUE` with the value replaced when the name looks like a secret (`api_key`,
/// `hf_token`, `password`, …), for the command line recorded in the artifacts.
pub fn redact_secret_value(text: &str) -> String {
    match text.split_once('=') {
        Some((name, _)) if SECRET_WORDS.iter().any(|word| name.to_ascii_lowercase().contains(word)) => {
            format!("{name}={}", crate::plan::REDACTED)
        }
        _ => text.to_string(),
    }
}

const SECRET_WORDS: &[&str] = &["key", "token", "secret", "password"];

#[cfg(test)]
mod tests {
    use super::{parse_set, redact_secret_value};

    #[test]
    fn secret_looking_values_are_redacted() {
        assert_eq!(redact_secret_value("api_key=sk-123"), "api_key=<redacted>");
        assert_eq!(redact_secret_value("HF_TOKEN=hf_abc"), "HF_TOKEN=<redacted>");
        assert_eq!(redact_secret_value("users=64"), "users=64");
    }

    #[test]
    fn set_splits_at_the_first_equals_sign() {
        assert_eq!(parse_set("users=64"), Ok(("users".to_string(), "64".to_string())));
        assert_eq!(parse_set("filter=a=b"), Ok(("filter".to_string(), "a=b".to_string())));
        assert_eq!(parse_set("empty="), Ok(("empty".to_string(), String::new())));
    }

    #[test]
    fn a_missing_name_or_equals_sign_is_explained() {
        assert!(parse_set("users").unwrap_err().contains("is not NAME=VALUE"));
        assert!(parse_set("=64").unwrap_err().contains("needs a name"));
        assert!(parse_set("my users=64").unwrap_err().contains("needs a name"));
    }
}
