//! A `ProfileJob` written as Rhai, its search included: `import "aiperf/search"`, then `search::recipe(..)` (a recipe) or
//! `search::adaptive(..)` (AIPerf's search keys) with a function that builds each iteration's
//! run from the point, the profile's plan with each dimension read from the point.

use serde_json::Value;

use std::fmt::Write as _;

use super::emit::{ApiKey, repetition, run_map};
use super::emit_literals::{float, json, string};
use crate::config::ProfileJob;
use crate::config::search::SearchJob;
use crate::search::point_in_plan::set_point;

/// Stand-in values placed in the plan where each dimension goes, then replaced by the point's
/// value in the text; far from any real setting.
const PLACEHOLDER_BASE: f64 = 7_770_001.0;

/// The scenario text of `job` (see `emit::scenario`); a search is named `sweep_name`.
pub fn scenario(job: &ProfileJob, sweep_name: &str, header: &str, api_key: ApiKey) -> String {
    let Some(search) = &job.search else { return super::emit::scenario(job, sweep_name, header, api_key) };
    let mut out = String::new();
    for line in header.lines() {
        let _ = writeln!(out, "// {line}");
    }
    out.push_str(&search_call(job, search, sweep_name, &repetition(job), api_key));
    out
}

fn search_call(job: &ProfileJob, search: &SearchJob, name: &str, repeat: &str, api_key: ApiKey) -> String {
    let mut plan = job.variations[0].plan.clone();
    let mut replacements = Vec::new();
    for (index, dim) in search.config.search_space.iter().enumerate() {
        let placeholder = PLACEHOLDER_BASE + index as f64;
        if set_point(&mut plan, &dim.path, placeholder).is_ok() {
            replacements.push((placeholder, dim.path.clone()));
        }
    }
    let mut run = run_map(&plan, false, "", api_key, 1);
    for (placeholder, path) in &replacements {
        let read = format!("v[{}]", string(path));
        run = run
            .replace(&float(*placeholder), &format!("{read}.to_float()"))
            .replace(&format!("{}", *placeholder as u64), &read);
    }
    let mut own = format!("name: {}{repeat}", string(name));
    if search.pause_s > 0.0 {
        own.push_str(&format!(", pause: {}", float(search.pause_s)));
    }
    let call = match &search.recipe {
        Some((recipe, settings)) => {
            format!(
                "search::recipe({}, {}, |v| {run});\n",
                string(recipe),
                with_own(serde_json::to_value(settings), &own)
            )
        }
        None => format!("search::adaptive({}, |v| {run});\n", with_own(serde_json::to_value(&search.config), &own)),
    };
    format!("import \"aiperf/search\" as search;\n\n{call}")
}

/// The settings as a Rhai map (unset ones left out) with the search's own keys first.
fn with_own(settings: serde_json::Result<Value>, own: &str) -> String {
    let Ok(Value::Object(mut map)) = settings else { return format!("#{{ {own} }}") };
    map.retain(|_, value| !value.is_null() && value != &Value::Array(Vec::new()));
    let text = json(&Value::Object(map));
    match text.strip_prefix("#{") {
        Some(rest) if rest.trim() == "}" => format!("#{{ {own} }}"),
        Some(rest) => format!("#{{ {own}, {}", rest.trim_start()),
        None => text,
    }
}
