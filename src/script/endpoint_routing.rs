//! `endpoint(#{..})`'s urls (`url` as one string or a list, or `urls`), their `url_strategy`,
//! the headers that carry each conversation's id (`session_headers`, `session_header`), and its
//! models (`model` as one name or a list) with their `model_selection`.

use rhai::Array;

use super::keys::{MapReader, ScriptResult, script_error};
use crate::plan::{MOCK_URL, ModelSelection, UrlStrategy, aiperf_session_headers, check_header_name};

/// Where an endpoint's requests go and the session headers they carry.
pub(super) struct Routing {
    /// At least one; `mock` only alone.
    pub urls: Vec<String>,
    pub strategy: UrlStrategy,
    pub session_headers: Vec<String>,
}

/// `url: "http://a"` or `url: ["http://a", "http://b"]` (or `urls: [..]`), `url_strategy:
/// "round_robin" | "least_in_flight" | "session"`, and `session_headers: ["X-Session-ID"]` (the
/// headers sent, none for `[]`) or `session_header: "X-Session-ID"` (AIPerf's rename of
/// X-Correlation-ID; its environment switches add the others).
pub(super) fn routing(r: &mut MapReader) -> ScriptResult<Routing> {
    let urls = match (r.opt_value("url"), r.opt_array("urls")?) {
        (Some(_), Some(_)) => return script_error("endpoint: give `url` or `urls`, not both"),
        (None, None) => return script_error("endpoint: `url` is required"),
        (None, Some(urls)) => strings("urls", urls)?,
        (Some(url), None) if url.is_string() => vec![url.to_string()],
        (Some(url), None) => match url.try_cast::<Array>() {
            Some(urls) => strings("url", urls)?,
            None => return script_error("endpoint: `url` must be a string or an array of strings"),
        },
    };
    if urls.is_empty() {
        return script_error("endpoint: `url` needs at least one url");
    }
    if urls.len() > 1 && urls.iter().any(|url| url == MOCK_URL) {
        return script_error(
            "endpoint: \"mock\" is the one built-in server and cannot be listed with other urls; start several `aiperf mock --port N` servers instead",
        );
    }
    let strategy = match r.opt_string("url_strategy")? {
        None => UrlStrategy::default(),
        Some(name) => match UrlStrategy::named(&name) {
            Some(strategy) => strategy,
            None => {
                return script_error(format!(
                    "endpoint: `url_strategy` must be {}, got \"{name}\"",
                    UrlStrategy::NAMES
                ));
            }
        },
    };
    let session_headers = match (r.opt_array("session_headers")?, r.opt_string("session_header")?) {
        (Some(_), Some(_)) => return script_error("endpoint: give `session_headers` or `session_header`, not both"),
        (Some(names), None) => strings("session_headers", names)?,
        (None, rename) => match aiperf_session_headers(rename.as_deref()) {
            Ok(names) => names,
            Err(problem) => return script_error(format!("endpoint: {problem}")),
        },
    };
    if let Some(problem) = session_headers.iter().find_map(|name| check_header_name(name).err()) {
        return script_error(format!("endpoint: {problem}"));
    }
    Ok(Routing { urls, strategy, session_headers })
}

/// `model: "m"` or `model: ["base", "lora-1"]` (default `mock-model`), and `model_selection:
/// "round_robin" | "random"`, how the dataset's requests take them.
pub(super) fn models(r: &mut MapReader) -> ScriptResult<(Vec<String>, ModelSelection)> {
    let models = match r.opt_value("model") {
        None => vec!["mock-model".to_string()],
        Some(model) if model.is_string() => vec![model.to_string()],
        Some(model) => match model.try_cast::<Array>() {
            Some(models) => strings("model", models)?,
            None => return script_error("endpoint: `model` must be a string or an array of strings"),
        },
    };
    if models.is_empty() {
        return script_error("endpoint: `model` needs at least one model name");
    }
    let selection = r.choice(
        "model_selection",
        &[("round_robin", ModelSelection::RoundRobin), ("random", ModelSelection::Random)],
    )?;
    Ok((models, selection))
}

fn strings(key: &str, items: Array) -> ScriptResult<Vec<String>> {
    items
        .into_iter()
        .map(|item| match item.is_string() {
            true => Ok(item.to_string()),
            false => script_error(format!("endpoint: `{key}` must hold strings, got {} `{item}`", item.type_name())),
        })
        .collect()
}
