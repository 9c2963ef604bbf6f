//! `file(#{ path, format, sampling, at_end, seed, block_size, entries, records, system_prompt, osl })`: a dataset
//! read from a file (or a folder, for `random_pool` and `weka_trace`; relative to the scenario file) when the
//! run starts, or from `records` (its JSONL lines inline, `path` naming them); `run(#{ dataset: .. })`
//! takes it. Agentic traces also take `ignore_delays`, `think_time_only`, `session_sample_ratio`,
//! `max_context_length`, `idle_gap_cap_s`, `delay_cap_s`, `agent_split` and (TraceLab) `subagent_join`
//! (`plan::TraceHandling`); Baseten traces
//! `omit_kv_hints` and `force_min_tokens` (`plan::BasetenReplay`).

use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use rhai::{Engine, Map};

use super::agent_split::agent_split;
use super::distributions::dist_from;
use super::keys::{MapReader, ScriptResult, script_error};
use super::subagent_join::subagent_join;
use crate::dataset::format_inference;
use crate::plan::{
    AtEnd, BasetenReplay, Dataset, Dist, FileDataset, FileFormat, PromptCorpus, Sampling, TraceHandling,
};

/// The keys of an agentic trace's handling (`trace_handling`), which `public_dataset` takes too.
pub(super) const TRACE_KEYS: [&str; 8] = [
    "ignore_delays",
    "think_time_only",
    "session_sample_ratio",
    "max_context_length",
    "idle_gap_cap_s",
    "delay_cap_s",
    "agent_split",
    "subagent_join",
];

const OWN_KEYS: [&str; 16] = [
    "path",
    "format",
    "sampling",
    "at_end",
    "seed",
    "block_size",
    "entries",
    "records",
    "system_prompt",
    "osl",
    "corpus",
    "omit_kv_hints",
    "force_min_tokens",
    "open_loop_replay",
    "open_loop_strict",
    "max_idle_gap_ms",
];

static FILE_KEYS: LazyLock<Vec<&str>> = LazyLock::new(|| [OWN_KEYS.as_slice(), &TRACE_KEYS].concat());

/// `file()`, its relative paths found under `scenario_dir`.
pub fn register(engine: &mut Engine, scenario_dir: PathBuf) {
    engine.register_fn("file", move |map: Map| file(map, &scenario_dir));
}

fn file(map: Map, scenario_dir: &Path) -> ScriptResult<Dataset> {
    let mut r = MapReader::new("file", map, &FILE_KEYS)?;
    let path = r.string("path")?;
    // A public dataset names itself (`public_dataset(#{ name })`), an accuracy benchmark too
    // (`accuracy(#{ benchmark })`).
    let formats: Vec<(&str, FileFormat)> = FileFormat::all()
        .filter(|format| !matches!(format, FileFormat::Public | FileFormat::Accuracy))
        .map(|format| (format.name(), format))
        .collect();
    let format = match r.has("format") || r.has("records") {
        true => r.choice("format", &formats)?,
        // Told from the file, as AIPerf tells a file named without its format.
        false => format_inference::infer(Path::new(&super::paths::anchor(scenario_dir, &path))).or_else(|why| {
            script_error(format!(
                "file: cannot tell the format of {path}: {}; give its `format`",
                why.describe(FileFormat::name)
            ))
        })?,
    };
    let sampling_given = r.has("sampling");
    let sampling = r.choice(
        "sampling",
        &[("sequential", Sampling::Sequential), ("random", Sampling::Random), ("shuffle", Sampling::Shuffle)],
    )?;
    let sampling = match format {
        FileFormat::RandomPool if sampling_given && sampling != Sampling::Random => {
            return script_error("file: format \"random_pool\" always samples at random; leave out `sampling`");
        }
        FileFormat::RandomPool => Sampling::Random,
        _ => sampling,
    };
    let at_end = r.choice("at_end", &[("wrap", AtEnd::Wrap), ("stop", AtEnd::Stop)])?;
    let random_seed = r.opt_u64("seed")?.unwrap_or(0);
    let block_size = r.opt_u64("block_size")?.unwrap_or(format.default_block_size() as u64);
    if block_size == 0 {
        return script_error("file: `block_size` must be at least 1 token");
    }
    if r.has("block_size") && !format.takes_block_size() {
        return script_error(
            "file: `block_size` applies to formats \"mooncake\", \"bailian_trace\" and \"tracelab\" only",
        );
    }
    let trace = trace_handling(&mut r, format)?;
    let baseten = BasetenReplay {
        omit_kv_hints: r.opt_bool("omit_kv_hints")?.unwrap_or(false),
        omit_min_tokens: !r.opt_bool("force_min_tokens")?.unwrap_or(true),
        closed_loop: !r.opt_bool("open_loop_replay")?.unwrap_or(true),
        strict: r.opt_bool("open_loop_strict")?.unwrap_or(false),
        max_idle_gap_ms: r.opt_f64("max_idle_gap_ms")?,
    };
    if !baseten.is_default() && format != FileFormat::Baseten {
        return script_error(
            "file: `omit_kv_hints`, `force_min_tokens`, `open_loop_replay`, `open_loop_strict` and `max_idle_gap_ms` apply to format \"baseten_trace\" only",
        );
    }
    if baseten.strict && baseten.closed_loop {
        return script_error(
            "file: `open_loop_strict` requires open-loop replay (`open_loop_replay: false` contradicts it)",
        );
    }
    if baseten.max_idle_gap_ms.is_some_and(|cap_ms| !(cap_ms.is_finite() && cap_ms > 0.0)) {
        return script_error("file: `max_idle_gap_ms` must be above 0");
    }
    let draws = r.opt_u64("entries")?;
    if draws == Some(0) {
        return script_error("file: `entries` must be at least 1");
    }
    let records = r.opt_string("records")?;
    if records.is_some() && format == FileFormat::RandomPool {
        return script_error("file: format \"random_pool\" reads a folder; `records` are not taken");
    }
    let system_prompt = r.opt_string("system_prompt")?;
    let osl = output_length(&mut r)?;
    let corpus = trace_corpus(&mut r)?;
    let block_size = block_size as usize;
    let draws = draws.map(|draws| draws as usize);
    Ok(Dataset::File(FileDataset {
        sampling,
        at_end,
        random_seed,
        block_size,
        draws,
        records,
        system_prompt,
        osl,
        trace,
        baseten,
        corpus,
        ..FileDataset::of(path, format)
    }))
}

/// `corpus`: the corpus a trace's text is cut from (AIPerf's `--prompt-corpus` over a trace),
/// `"sonnet"` or `"coding"`; none, the format's own.
pub(super) fn trace_corpus(r: &mut MapReader) -> ScriptResult<Option<PromptCorpus>> {
    let what = r.what();
    match r.opt_string("corpus")?.as_deref() {
        None => Ok(None),
        Some("sonnet") => Ok(Some(PromptCorpus::Sonnet)),
        Some("coding") => Ok(Some(PromptCorpus::Coding)),
        Some(other) => script_error(format!(
            "{what}: `corpus` is \"sonnet\" or \"coding\" (the text a trace's blocks are cut from), got `{other}`"
        )),
    }
}

/// `osl`: the output length (tokens, a number or a distribution) an entry that names none asks
/// for (AIPerf's `--osl` over a file); none by default, the server deciding.
fn output_length(r: &mut MapReader) -> ScriptResult<Option<Dist>> {
    let Some(value) = r.opt_value("osl") else { return Ok(None) };
    let osl = dist_from(&value).or_else(|problem| script_error(format!("file: `osl`: {problem}")))?;
    if osl.mean().is_nan() || osl.mean() < 1.0 {
        return script_error(format!("file: `osl` mean must be at least 1 token, got {}", osl.mean()));
    }
    Ok(Some(osl))
}

/// The trace-handling keys, taken by agentic trace formats only (the session sample ratio by
/// baseten_trace too, as AIPerf's).
pub(super) fn trace_handling(r: &mut MapReader, format: FileFormat) -> ScriptResult<TraceHandling> {
    let what = r.what();
    let trace = TraceHandling {
        ignore_delays: r.opt_bool("ignore_delays")?.unwrap_or(false),
        think_time_only: r.opt_bool("think_time_only")?.unwrap_or(false),
        session_sample_ratio: r.opt_f64("session_sample_ratio")?,
        max_context_length: r.opt_u64("max_context_length")?,
        idle_gap_cap_s: r.opt_f64("idle_gap_cap_s")?,
        delay_cap_s: r.opt_f64("delay_cap_s")?,
        agent_split: agent_split(r.opt_value("agent_split"))?,
        subagent_join: subagent_join(r.opt_value("subagent_join"))?,
    };
    if !trace.agent_split.is_default() && !matches!(format, FileFormat::WekaTrace | FileFormat::Tracelab) {
        return script_error(format!(
            "{what}: `agent_split` applies to formats \"weka_trace\" and \"tracelab\", not \"{}\"",
            format.name()
        ));
    }
    if !trace.subagent_join.is_default() && format != FileFormat::Tracelab {
        return script_error(format!(
            "{what}: `subagent_join` applies to format \"tracelab\", not \"{}\"",
            format.name()
        ));
    }
    let ratio_elsewhere = trace.session_sample_ratio.is_some() && format != FileFormat::Baseten;
    if !format.is_agentic_trace() && (trace.sets_agentic_keys() || ratio_elsewhere) {
        return script_error(format!(
            "{what}: the trace keys (ignore_delays, think_time_only, session_sample_ratio, max_context_length, idle_gap_cap_s, delay_cap_s) apply to formats \"tracelab\", \"weka_trace\" and \"dag_jsonl\" (session_sample_ratio to \"baseten_trace\" too), not \"{}\"",
            format.name()
        ));
    }
    if let Some(problem) = trace.problem() {
        return script_error(format!("{what}: {problem}"));
    }
    Ok(trace)
}

#[cfg(test)]
mod tests {
    use rhai::Dynamic;

    use super::*;

    fn map(pairs: &[(&str, Dynamic)]) -> Map {
        pairs.iter().map(|(key, value)| ((*key).into(), value.clone())).collect()
    }

    /// `file()` in a scenario whose folder has none of the files named (read as single_turn).
    fn file_here(map: Map) -> ScriptResult<Dataset> {
        file(map, Path::new("/nonexistent-scenario-folder"))
    }

    #[test]
    fn defaults_and_every_key() {
        let Dataset::File(plain) = file_here(map(&[("path", "data.jsonl".into())])).unwrap() else { panic!("a file") };
        assert_eq!(plain, FileDataset::of("data.jsonl", FileFormat::SingleTurn));
        let full = file_here(map(&[
            ("path", "trace.jsonl".into()),
            ("format", "mooncake".into()),
            ("sampling", "shuffle".into()),
            ("at_end", "stop".into()),
            ("seed", Dynamic::from(9_i64)),
            ("block_size", Dynamic::from(64_i64)),
        ]))
        .unwrap();
        let Dataset::File(full) = full else { panic!("a file") };
        assert_eq!(
            (full.format, full.sampling, full.at_end, full.random_seed, full.block_size),
            (FileFormat::Mooncake, Sampling::Shuffle, AtEnd::Stop, 9, 64)
        );
    }

    #[test]
    fn mistakes_are_named() {
        let err = |pairs: &[(&str, Dynamic)]| file_here(map(pairs)).unwrap_err().to_string();
        assert!(err(&[]).contains("file: `path` is required"));
        assert!(err(&[("path", "a".into()), ("format", "csv".into())]).contains("`format` must be \"single_turn\""));
        assert!(err(&[("path", "a".into()), ("sampling", "rand".into())]).contains("`sampling` must be"));
        assert!(
            err(&[("path", "a".into()), ("at_end", "loop".into())]).contains("`at_end` must be \"wrap\" or \"stop\"")
        );
        assert!(
            err(&[("path", "a".into()), ("block_size", Dynamic::from(8_i64))])
                .contains("\"bailian_trace\" and \"tracelab\" only")
        );
        let ignore = [("path", "a".into()), ("ignore_delays", Dynamic::from(true))];
        let others = "apply to formats \"tracelab\", \"weka_trace\" and \"dag_jsonl\" (session_sample_ratio to \"baseten_trace\" too), not \"single_turn\"";
        assert!(err(&ignore).contains(others), "{}", err(&ignore));
        let sampled = [("path", "a".into()), ("session_sample_ratio", Dynamic::from(0.5_f64))];
        assert!(err(&sampled).contains(others), "{}", err(&sampled));
        let baseten = [("format", "baseten_trace".into()), ("session_sample_ratio", Dynamic::from(0.5_f64))];
        let Ok(Dataset::File(baseten)) = file_here(map(&[&sampled[..1], &baseten[..]].concat())) else {
            panic!("a baseten trace takes a session sample ratio")
        };
        assert_eq!(baseten.trace.session_sample_ratio, Some(0.5));
        let both = [
            ("path", "a".into()),
            ("format", "weka_trace".into()),
            ("ignore_delays", Dynamic::from(true)),
            ("think_time_only", Dynamic::from(true)),
        ];
        assert!(err(&both).contains("exclude each other"));
        let zero = [("path", "a".into()), ("format", "mooncake".into()), ("block_size", Dynamic::from(0_i64))];
        assert!(err(&zero).contains("`block_size` must be at least 1"));
        assert!(err(&[("path", "a".into()), ("formt", "mooncake".into())]).contains("did you mean `format`"));
        let pool_in_order = [("path", "a".into()), ("format", "random_pool".into()), ("sampling", "sequential".into())];
        assert!(err(&pool_in_order).contains("\"random_pool\" always samples at random"));
        let no_draws = [("path", "a".into()), ("format", "random_pool".into()), ("entries", Dynamic::from(0_i64))];
        assert!(err(&no_draws).contains("`entries` must be at least 1"));
    }

    #[test]
    fn an_agentic_trace_takes_the_trace_keys() {
        let pairs = [
            ("path", "trace.jsonl.gz".into()),
            ("format", "tracelab".into()),
            ("think_time_only", Dynamic::from(true)),
            ("session_sample_ratio", Dynamic::from(0.5_f64)),
            ("max_context_length", Dynamic::from(4096_i64)),
            ("idle_gap_cap_s", Dynamic::from(30.0_f64)),
            ("delay_cap_s", Dynamic::from(5.0_f64)),
        ];
        let Dataset::File(trace) = file_here(map(&pairs)).unwrap() else { panic!("a file") };
        assert_eq!(trace.block_size, 64, "TraceLab's own block size");
        assert_eq!(
            trace.trace,
            TraceHandling {
                ignore_delays: false,
                think_time_only: true,
                session_sample_ratio: Some(0.5),
                max_context_length: Some(4096),
                idle_gap_cap_s: Some(30.0),
                delay_cap_s: Some(5.0),
                agent_split: Default::default(),
                subagent_join: Default::default(),
            }
        );
    }

    #[test]
    fn a_random_pool_samples_at_random() {
        let Dataset::File(pool) =
            file_here(map(&[("path", "pool/".into()), ("format", "random_pool".into())])).unwrap()
        else {
            panic!("a file")
        };
        assert_eq!((pool.format, pool.sampling, pool.draws), (FileFormat::RandomPool, Sampling::Random, None));
        let sized = map(&[("path", "p".into()), ("format", "random_pool".into()), ("entries", Dynamic::from(50_i64))]);
        let Dataset::File(sized) = file_here(sized).unwrap() else { panic!("a file") };
        assert_eq!(sized.draws, Some(50));
    }
}
