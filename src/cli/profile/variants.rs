//! `--variant '[name:] key=value, key=value'` (AIPerf's scenario sweep from the command line):
//! each occurrence is one run of a `scenarios` sweep, its keys the profile flags without their
//! dashes (`concurrency=8, isl=512`), laid over what the other flags set.

use serde_json::{Value, json};

use super::document::{FlagDocument, Flags};

pub fn variants(document: &mut FlagDocument, _: &str, values: &[String]) -> Result<(), String> {
    let mut runs = match crate::config::get_path(&document.document, "sweep") {
        None => Vec::new(),
        Some(sweep) if sweep["type"] == "scenarios" => sweep["runs"].as_array().cloned().unwrap_or_default(),
        Some(_) => return Err(VARIANTS_ALONE.into()),
    };
    runs.extend(values.iter().map(|text| json!(text)));
    document.set("sweep", json!({"type": "scenarios", "runs": runs}));
    Ok(())
}

const VARIANTS_ALONE: &str =
    "variants make a sweep of their own: drop the comma lists (--concurrency 1,2), --search-recipe and --search-space";

/// After every flag: variants come two or more and alone as the sweep (AIPerf's rules); each
/// becomes a scenario run of what `read_flags` makes of its flags.
pub fn expand(
    document: &mut FlagDocument,
    read_flags: &dyn Fn(&[String]) -> Result<Flags, String>,
) -> Result<(), String> {
    let Some(sweep) = crate::config::get_path(&document.document, "sweep").filter(|s| s["type"] == "scenarios") else {
        return Ok(());
    };
    let texts: Vec<String> =
        sweep["runs"].as_array().into_iter().flatten().filter_map(Value::as_str).map(str::to_string).collect();
    if texts.is_empty() {
        return Ok(());
    }
    if texts.len() < 2 {
        return Err(
            "--variant: give at least two variants (one --variant each); for one run, give its flags directly".into()
        );
    }
    if !document.sweep.is_empty() || crate::config::get_path(&document.document, "sweep.parameters").is_some() {
        return Err(format!("--variant: {VARIANTS_ALONE}"));
    }
    let runs = texts
        .iter()
        .enumerate()
        .map(|(index, text)| variant(text, index, read_flags).map_err(|why| format!("--variant: {why}")))
        .collect::<Result<Vec<_>, _>>()?;
    document.set("sweep", json!({"type": "scenarios", "runs": runs}));
    Ok(())
}

/// One variant as a scenario run: its name (AIPerf's `v<index>`, from 0, when it gives none)
/// and the benchmark its flags set.
fn variant(text: &str, index: usize, read_flags: &dyn Fn(&[String]) -> Result<Flags, String>) -> Result<Value, String> {
    let (name, settings) = match text.split_once(':') {
        Some((name, rest)) if !name.contains('=') => (name.trim().to_string(), rest),
        _ => (format!("v{index}"), text),
    };
    let mut args = Vec::new();
    for pair in settings.split(',').map(str::trim).filter(|pair| !pair.is_empty()) {
        let Some((key, value)) = pair.split_once('=') else {
            return Err(format!("variant `{name}`: `{pair}` is not key=value (e.g. concurrency=8)"));
        };
        args.push(format!("--{}", key.trim().trim_start_matches('-').replace('_', "-")));
        args.push(value.trim().to_string());
    }
    if args.is_empty() {
        return Err(format!("variant `{name}` sets nothing; e.g. --variant '{name}: concurrency=8, isl=512'"));
    }
    let flags = read_flags(&args).map_err(|why| format!("variant `{name}`: {why}"))?;
    if let Some((path, _)) = flags.sets.iter().find(|(path, _)| !path.starts_with("benchmark.")) {
        return Err(format!(
            "variant `{name}`: sets `{path}`, outside the benchmark; a variant changes the workload only"
        ));
    }
    Ok(json!({"name": name, "benchmark": flags.document.get("benchmark").cloned().unwrap_or(Value::Null)}))
}
