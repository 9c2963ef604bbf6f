//! `--reset-kv-cache` and `--server-profiler` with their path and time-limit flags, into the
//! document's `endpoint.reset_kv_cache` / `endpoint.server_profiler` as AIPerf builds them: a
//! setting flag alone turns its request on; the switch given as off wins over the settings.

use serde_json::{Value, json};

use super::document::FlagDocument;
use super::flags::{Kind, switch_value};

/// The switch's document path.
fn section_of(name: &str) -> Option<&'static str> {
    match name.trim_start_matches("--no-").trim_start_matches("--") {
        "reset-kv-cache" => Some("benchmark.endpoint.reset_kv_cache"),
        "server-profiler" => Some("benchmark.endpoint.server_profiler"),
        _ => None,
    }
}

/// A setting flag's section, field and value kind.
fn setting_of(name: &str) -> Option<(&'static str, &'static str, Kind)> {
    let reset = "benchmark.endpoint.reset_kv_cache";
    let profiler = "benchmark.endpoint.server_profiler";
    Some(match name {
        "--reset-kv-cache-timeout-seconds" => (reset, "timeout_seconds", Kind::Float),
        "--reset-kv-cache-path" => (reset, "path", Kind::Text),
        "--server-profiler-timeout-seconds" => (profiler, "timeout_seconds", Kind::Float),
        "--server-profiler-start-path" => (profiler, "start_path", Kind::Text),
        "--server-profiler-stop-path" => (profiler, "stop_path", Kind::Text),
        _ => return None,
    })
}

/// `--reset-kv-cache` / `--server-profiler`: on keeps the settings already given, off is `false`.
pub fn switch(document: &mut FlagDocument, name: &str, values: &[String]) -> Result<(), String> {
    let section = section_of(name).ok_or_else(|| format!("{name} is not a control-request switch"))?;
    if !switch_value(name, values)? {
        document.set(section, Value::Bool(false));
    } else if !crate::config::get_path(&document.document, section).is_some_and(Value::is_object) {
        document.set(section, json!({}));
    }
    Ok(())
}

/// A path or time limit of a control request, which turns it on unless its switch said off.
pub fn setting(document: &mut FlagDocument, name: &str, values: &[String]) -> Result<(), String> {
    let (section, field, kind) = setting_of(name).ok_or_else(|| format!("{name} is not a control-request setting"))?;
    let value = kind.read(values.first().map_or("", String::as_str))?;
    if let Some(Value::String(path)) = Some(&value).filter(|_| field.ends_with("path"))
        && !path.starts_with('/')
    {
        return Err(format!("expects a path on the endpoint's server starting with `/`, got `{path}`"));
    }
    if crate::config::get_path(&document.document, section) == Some(&Value::Bool(false)) {
        return Ok(());
    }
    document.insert(section, field, value);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn apply(flags: &[(&str, &str)]) -> Value {
        let mut document = FlagDocument::default();
        for (name, value) in flags {
            let values: Vec<String> = if value.is_empty() { Vec::new() } else { vec![value.to_string()] };
            if setting_of(name).is_some() {
                setting(&mut document, name, &values).unwrap();
            } else {
                switch(&mut document, name, &values).unwrap();
            }
        }
        document.finish().document
    }

    #[test]
    fn a_setting_turns_its_request_on_and_an_explicit_off_wins() {
        let on = apply(&[("--reset-kv-cache", ""), ("--server-profiler-stop-path", "/p/stop")]);
        assert_eq!(
            on["benchmark"]["endpoint"],
            json!({ "reset_kv_cache": {}, "server_profiler": { "stop_path": "/p/stop" } })
        );
        let kept = apply(&[("--reset-kv-cache-timeout-seconds", "5"), ("--reset-kv-cache", "")]);
        assert_eq!(kept["benchmark"]["endpoint"]["reset_kv_cache"], json!({ "timeout_seconds": 5.0 }));
        let off = apply(&[("--server-profiler", "false"), ("--server-profiler-start-path", "/p/start")]);
        assert_eq!(off["benchmark"]["endpoint"]["server_profiler"], json!(false));
    }

    #[test]
    fn a_path_must_be_on_the_endpoints_server() {
        let mut document = FlagDocument::default();
        let error = setting(&mut document, "--reset-kv-cache-path", &["http://other/reset".to_string()]).unwrap_err();
        assert_eq!(error, "expects a path on the endpoint's server starting with `/`, got `http://other/reset`");
    }
}
