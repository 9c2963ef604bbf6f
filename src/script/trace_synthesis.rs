//! `synthesize(file(#{ path, format: "mooncake" }), #{ speedup_ratio, prefix_len_multiplier,
//! prefix_root_multiplier, prompt_len_multiplier, output_len_multiplier, max_isl, max_osl })`:
//! a mooncake (or Bailian, BurstGPT) trace reshaped before the run, as `aiperf synthesize` writes it.
//! A weka or TraceLab trace takes the length limits only (`max_isl` drops its top-level requests
//! with more input, `max_osl` caps what they ask), as AIPerf's weka loader reads them.

use rhai::{Engine, Map};

use super::keys::{MapReader, ScriptResult, script_error};
use crate::dataset::public::reads_weka_traces;
use crate::plan::{Dataset, FileDataset, FileFormat, TraceSynthesis};

const KEYS: &[&str] = &[
    "speedup_ratio",
    "prefix_len_multiplier",
    "prefix_root_multiplier",
    "prompt_len_multiplier",
    "output_len_multiplier",
    "max_isl",
    "max_osl",
];

pub fn register(engine: &mut Engine) {
    engine.register_fn("synthesize", synthesize);
}

fn synthesize(dataset: Dataset, map: Map) -> ScriptResult<Dataset> {
    let weka_public = |file: &FileDataset| file.public.as_ref().is_some_and(|source| reads_weka_traces(&source.name));
    let file = match dataset {
        Dataset::File(
            file @ FileDataset {
                format:
                    FileFormat::Mooncake
                    | FileFormat::Bailian
                    | FileFormat::BurstGpt
                    | FileFormat::WekaTrace
                    | FileFormat::Tracelab,
                ..
            },
        ) => file,
        Dataset::File(file) if weka_public(&file) => file,
        _ => {
            return script_error(
                "synthesize: reshapes a mooncake, bailian_trace or burst_gpt_trace trace (or limits a weka_trace or tracelab one, or a public weka dataset): give it file(#{ path, format: \"mooncake\" })",
            );
        }
    };
    let limits_only = file.format.is_agentic_trace() || weka_public(&file);
    let mut r = MapReader::new("synthesize", map, KEYS)?;
    let unit = TraceSynthesis::default();
    let roots = r.opt_u64("prefix_root_multiplier")?.unwrap_or(u64::from(unit.prefix_root_multiplier));
    let Ok(prefix_root_multiplier) = u32::try_from(roots) else {
        return script_error(format!("synthesize: `prefix_root_multiplier` must be at most {}, got {roots}", u32::MAX));
    };
    let settings = TraceSynthesis {
        speedup_ratio: r.opt_f64("speedup_ratio")?.unwrap_or(unit.speedup_ratio),
        prefix_len_multiplier: r.opt_f64("prefix_len_multiplier")?.unwrap_or(unit.prefix_len_multiplier),
        prefix_root_multiplier,
        prompt_len_multiplier: r.opt_f64("prompt_len_multiplier")?.unwrap_or(unit.prompt_len_multiplier),
        output_len_multiplier: r.opt_f64("output_len_multiplier")?.unwrap_or(unit.output_len_multiplier),
        max_isl: r.opt_u64("max_isl")?,
        max_osl: r.opt_u64("max_osl")?,
    };
    if let Some((key, problem)) = settings.problem() {
        return script_error(format!("synthesize: `{key}` {problem}"));
    }
    if limits_only && settings.reshapes() {
        let what = file.public.as_ref().map_or(file.format.name(), |source| source.name.as_str());
        return script_error(format!(
            "synthesize: a {what} trace takes `max_isl` and `max_osl` only (AIPerf's weka loader reads no other)"
        ));
    }
    let synthesis = if limits_only { settings.length_limits() } else { Some(settings) };
    Ok(Dataset::File(FileDataset { synthesis, ..file }))
}

/// `settings` as the map `synthesize` reads, with only the keys that differ from the defaults.
pub fn emitted_map(settings: &TraceSynthesis, float: fn(f64) -> String) -> String {
    let unit = TraceSynthesis::default();
    let mut keys = Vec::new();
    let factors = [
        ("speedup_ratio", settings.speedup_ratio, unit.speedup_ratio),
        ("prefix_len_multiplier", settings.prefix_len_multiplier, unit.prefix_len_multiplier),
        ("prompt_len_multiplier", settings.prompt_len_multiplier, unit.prompt_len_multiplier),
        ("output_len_multiplier", settings.output_len_multiplier, unit.output_len_multiplier),
    ];
    for (key, value, default) in factors {
        if value != default {
            keys.push(format!("{key}: {}", float(value)));
        }
    }
    if settings.prefix_root_multiplier != unit.prefix_root_multiplier {
        keys.push(format!("prefix_root_multiplier: {}", settings.prefix_root_multiplier));
    }
    for (key, limit) in [("max_isl", settings.max_isl), ("max_osl", settings.max_osl)] {
        if let Some(limit) = limit {
            keys.push(format!("{key}: {limit}"));
        }
    }
    format!("#{{ {} }}", keys.join(", "))
}

#[cfg(test)]
mod tests {
    use rhai::Dynamic;

    use super::*;

    fn trace(format: FileFormat) -> Dataset {
        Dataset::File(FileDataset::of("trace.jsonl", format))
    }

    fn map(pairs: &[(&str, Dynamic)]) -> Map {
        pairs.iter().map(|(key, value)| ((*key).into(), value.clone())).collect()
    }

    #[test]
    fn settings_land_on_the_trace_and_emit_back() {
        let given = map(&[("speedup_ratio", Dynamic::from(2.0)), ("max_osl", Dynamic::from(64_i64))]);
        let Dataset::File(file) = synthesize(trace(FileFormat::Mooncake), given).unwrap() else { panic!("a file") };
        let settings = file.synthesis.expect("synthesis");
        assert_eq!(settings, TraceSynthesis { speedup_ratio: 2.0, max_osl: Some(64), ..TraceSynthesis::default() });
        assert_eq!(emitted_map(&settings, |v| format!("{v:?}")), "#{ speedup_ratio: 2.0, max_osl: 64 }");
    }

    #[test]
    fn mistakes_are_named() {
        let err =
            |dataset: Dataset, pairs: &[(&str, Dynamic)]| synthesize(dataset, map(pairs)).unwrap_err().to_string();
        assert!(err(trace(FileFormat::SingleTurn), &[]).contains("synthesize: reshapes a mooncake"));
        let zero = [("prompt_len_multiplier", Dynamic::from(0.0))];
        assert!(
            err(trace(FileFormat::Mooncake), &zero).contains("synthesize: `prompt_len_multiplier` must be above 0")
        );
        let typo = [("speedup", Dynamic::from(2.0))];
        assert!(err(trace(FileFormat::Mooncake), &typo).contains("synthesize: unknown key `speedup`"));
    }

    #[test]
    fn a_weka_or_tracelab_trace_takes_the_length_limits_only() {
        let limits = map(&[("max_isl", Dynamic::from(4096_i64))]);
        let Dataset::File(file) = synthesize(trace(FileFormat::WekaTrace), limits).unwrap() else { panic!("a file") };
        assert_eq!(file.synthesis, Some(TraceSynthesis { max_isl: Some(4096), ..TraceSynthesis::default() }));
        let speedup = map(&[("speedup_ratio", Dynamic::from(2.0))]);
        let error = synthesize(trace(FileFormat::Tracelab), speedup).unwrap_err().to_string();
        assert!(error.contains("a tracelab trace takes `max_isl` and `max_osl` only"), "{error}");
    }
}
