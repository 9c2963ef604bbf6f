//! `benchmark.datasets` lowered: synthetic prompts (lengths, mixture, prefixes, system prompt,
//! cache bust, images) or a file this project reads; a public dataset is its file or folder in
//! the local caches (`dataset::public`).

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use super::values::{named, opt_cache_bust, opt_dist, opt_f64, opt_str, opt_u64};
use crate::config::ConfigError;
use crate::dataset::{format_inference, public};
use crate::plan::{
    AtEnd, ConversationShape, CorpusStyle, Dataset, Dist, EndpointKind, FileDataset, FileFormat, ImageFormat,
    ImageSettings, LengthPair, Phase, PrefixPool, PromptCorpus, Sampling, SyntheticDataset,
};

/// AIPerf's default ISL; with no `osl` no max tokens are sent and the server chooses, as in
/// AIPerf.
const DEFAULT_ISL: f64 = 550.0;
const DEFAULT_ENTRIES: u64 = 100;
/// The draws of a random pool that names no `entries` (AIPerf's loader's default).
const DEFAULT_POOL_DRAWS: usize = 100;

/// The run's one dataset (`main`, or the only one).
pub fn main_dataset(benchmark: &Value) -> Result<Value, ConfigError> {
    match benchmark.get("datasets").and_then(Value::as_array).map(Vec::as_slice) {
        None | Some([]) => Ok(Value::Null),
        Some(items) => named(benchmark, "datasets", "main").cloned().ok_or_else(|| {
            ConfigError::new(format!(
                "datasets: {} datasets and none named `main`; this project runs one dataset per run",
                items.len()
            ))
        }),
    }
}

pub fn lower(benchmark: &Value, base_dir: &Path, seed: u64, kind: EndpointKind) -> Result<Dataset, ConfigError> {
    let dataset = main_dataset(benchmark)?;
    let seed = opt_u64(&dataset, "random_seed", "datasets.main.random_seed")?.unwrap_or(seed);
    let synthetic_type = opt_str(&dataset, "type", "datasets.main.type")?.is_none_or(|kind| kind == "synthetic");
    if !synthetic_type && dataset.get("video").is_some_and(|value| !value.is_null()) {
        return Err(ConfigError::new("datasets.main.video (--video-*): videos are made for synthetic datasets only"));
    }
    let system_prompt = super::system_prompt::verbatim(&dataset, base_dir)?;
    let is_public = dataset.get("type").and_then(Value::as_str) == Some("public")
        || dataset.get("dataset").is_some_and(Value::is_string);
    if !is_public && dataset.get("filters").is_some_and(|filters| !filters.is_null()) {
        return Err(ConfigError::new(
            "datasets.main.filters (--dataset-filter) needs a public dataset (--public-dataset)",
        ));
    }
    let mut lowered = match opt_str(&dataset, "type", "datasets.main.type")?.unwrap_or("synthetic") {
        "synthetic" => synthetic(&dataset, seed, kind)?,
        // `--input-file` with `--public-dataset`: that file, read as the public dataset.
        "file" if dataset.get("dataset").is_some_and(Value::is_string) => public(&dataset, base_dir, seed)?,
        "file" => Dataset::File(file(&dataset, base_dir, seed)?),
        "public" => public(&dataset, base_dir, seed)?,
        other => {
            return Err(ConfigError::new(format!("datasets.main.type: `{other}`; expected synthetic, file or public")));
        }
    };
    match &mut lowered {
        Dataset::Synthetic(spec) => spec.options.system_prompt = system_prompt,
        Dataset::File(spec) => spec.system_prompt = system_prompt,
    }
    Ok(lowered)
}

/// The synthetic dataset's lengths, turn counts and think times AIPerf 0.13 reduces to one
/// value: its composer reads only a distribution's mean (and a normal's stddev), so a
/// lognormal, mixture or empirical shape sends its mean to every request there. Here it is drawn
/// as written; one note each says what AIPerf would send, for anyone comparing the two (`run`:
/// the sweep variation's label, where there is one).
pub fn shapes_aiperf_reduces(benchmark: &Value, run: Option<&str>) -> Vec<String> {
    let Ok(dataset) = main_dataset(benchmark) else { return Vec::new() };
    if dataset.get("type").and_then(Value::as_str).is_some_and(|kind| kind != "synthetic") {
        return Vec::new();
    }
    let mut places: Vec<(String, &Value)> =
        ["prompts.isl", "prompts.osl", "osl", "turns", "turn_delay", "audio.length"]
            .into_iter()
            .filter_map(|key| Some((key.to_string(), dataset.pointer(&format!("/{}", key.replace('.', "/")))?)))
            .collect();
    let pairs = dataset.pointer("/prompts/sequence_distribution").and_then(Value::as_array);
    for (i, pair) in pairs.into_iter().flatten().enumerate() {
        for key in ["isl", "osl"] {
            if let Some(value) = pair.get(key) {
                places.push((format!("prompts.sequence_distribution[{i}].{key}"), value));
            }
        }
    }
    places
        .into_iter()
        .filter_map(|(key, value)| {
            let kind = value.get("type").and_then(Value::as_str)?;
            if !matches!(kind, "lognormal" | "multimodal" | "empirical") {
                return None;
            }
            // AIPerf takes the mean as a whole number, cut down.
            let mean = Dist::from_fields(value).ok()?.mean().trunc();
            let run = run.map(|run| format!("{run}: ")).unwrap_or_default();
            Some(format!(
                "note: {run}datasets.main.{key}: the {kind} distribution is drawn as written; AIPerf 0.13 sends its \
                 mean ({mean}) every time"
            ))
        })
        .collect()
}

fn synthetic(dataset: &Value, seed: u64, kind: EndpointKind) -> Result<Dataset, ConfigError> {
    let prompts = dataset.get("prompts").cloned().unwrap_or(Value::Null);
    let isl = opt_dist(&prompts, "isl", "datasets.main.prompts.isl")?.unwrap_or(Dist::fixed(DEFAULT_ISL));
    let osl = opt_dist(&prompts, "osl", "datasets.main.prompts.osl")?;
    let (isl, osl) = match super::range_ratio::windows(&prompts, &isl, osl.as_ref())? {
        Some((isl, osl)) => (isl, Some(osl)),
        None => (isl, osl),
    };
    let entries = opt_u64(dataset, "entries", "datasets.main.entries")?.unwrap_or(DEFAULT_ENTRIES).max(1);
    let mut spec = SyntheticDataset {
        isl,
        osl,
        random_seed: seed,
        entries: entries as usize,
        images: None,
        options: Default::default(),
    };
    let batch_size = opt_u64(&prompts, "batch_size", "datasets.main.prompts.batch_size")?.filter(|size| *size > 1);
    if batch_size.is_some() && kind != EndpointKind::Embeddings {
        return Err(ConfigError::new(
            "datasets.main.prompts.batch_size (--batch-size): several texts per request are sent to embeddings endpoints only",
        ));
    }
    spec.options.batch_size = batch_size.map(|size| size as u32);
    spec.options.corpus = prompt_corpus(&prompts)?;
    // `prompts.block_size` (--isl-block-size) sizes a trace's hash-id blocks; AIPerf sends a
    // synthetic prompt of the drawn ISL whatever it is (a scenario's `block_size` rounds), so
    // here it is only checked.
    opt_u64(&prompts, "block_size", "datasets.main.prompts.block_size")?;
    spec.options.cache_bust = match opt_cache_bust(&prompts, "cache_bust", "datasets.main.prompts.cache_bust")? {
        None | Some("none") => false,
        Some("first_turn_prefix") => true,
        Some(other) => {
            return Err(ConfigError::new(format!(
                "datasets.main.prompts.cache_bust (--cache-bust): `{other}` is not supported; none or first_turn_prefix"
            )));
        }
    };
    if let Some(pairs) = prompts.get("sequence_distribution").and_then(Value::as_array) {
        for (i, pair) in pairs.iter().enumerate() {
            let key = format!("datasets.main.prompts.sequence_distribution[{i}]");
            let (Some(isl), Some(osl)) = (opt_dist(pair, "isl", &key)?, opt_dist(pair, "osl", &key)?) else {
                return Err(ConfigError::new(format!("{key}: needs isl and osl")));
            };
            let weight = opt_f64(pair, "probability", &key)?.unwrap_or(1.0);
            spec.options.mix.push(LengthPair { isl, osl, weight });
        }
    }
    if let Some(prefix) = dataset.get("prefix_prompts") {
        let pool = opt_u64(prefix, "pool_size", "datasets.main.prefix_prompts.pool_size")?.unwrap_or(0);
        let length = opt_u64(prefix, "length", "datasets.main.prefix_prompts.length")?.unwrap_or(0);
        if pool > 0 && length > 0 {
            spec.options.prefix_pool = Some(PrefixPool { prefixes: pool as usize, length });
        }
        spec.options.system_prompt_tokens =
            opt_u64(prefix, "shared_system_length", "datasets.main.prefix_prompts.shared_system_length")?
                .filter(|n| *n > 0);
        spec.options.user_context_tokens =
            opt_u64(prefix, "user_context_length", "datasets.main.prefix_prompts.user_context_length")?;
    }
    if let Some(images) = dataset.get("images").filter(|images| !images.is_null()) {
        spec.images = image_settings(images, kind)?;
    }
    spec.options.rankings = super::ranking_lengths::lower(dataset, kind)?;
    if let Some(audio) = dataset.get("audio").filter(|audio| !audio.is_null()) {
        spec.options.audio = super::audio::audio_settings(audio, kind)?.map(Box::new);
    }
    if let Some(video) = dataset.get("video").filter(|video| !video.is_null()) {
        spec.options.video = super::video::video_settings(video)?.map(Box::new);
    }
    spec.options.conversation = conversation(dataset)?;
    Ok(Dataset::Synthetic(spec))
}

/// `prompts.corpus` (`--prompt-corpus`): Shakespeare (`sonnet`), code (`coding`, this
/// project's own) or random vocabulary tokens in `prompts.random_corpus_style`'s manner
/// (`--random-corpus-style`, vLLM's unless given).
fn prompt_corpus(prompts: &Value) -> Result<PromptCorpus, ConfigError> {
    match opt_str(prompts, "corpus", "datasets.main.prompts.corpus")? {
        None | Some("sonnet") => Ok(PromptCorpus::Sonnet),
        Some("coding") => Ok(PromptCorpus::Coding),
        Some("random") => {
            let style = opt_str(prompts, "random_corpus_style", "datasets.main.prompts.random_corpus_style")?;
            match style.map_or(Some(CorpusStyle::Vllm), CorpusStyle::of_name) {
                Some(style) => Ok(PromptCorpus::Random(style)),
                None => Err(ConfigError::new(format!(
                    "datasets.main.prompts.random_corpus_style (--random-corpus-style): `{}`; vllm or sglang",
                    style.unwrap_or_default()
                ))),
            }
        }
        Some(other) => Err(ConfigError::new(format!(
            "datasets.main.prompts.corpus (--prompt-corpus): `{other}` is not supported; sonnet (Shakespeare), coding (code) or random (vocabulary tokens)"
        ))),
    }
}

/// `turns`, `turn_delay` (ms) and `turn_delay_ratio`: sessions of several prompts, or none
/// when every session would have one turn.
fn conversation(dataset: &Value) -> Result<Option<ConversationShape>, ConfigError> {
    let Some(turns) = opt_dist(dataset, "turns", "datasets.main.turns")? else {
        return Ok(None);
    };
    if turns.is_fixed() && turns.mean() <= 1.0 {
        return Ok(None);
    }
    let delay_ms = opt_dist(dataset, "turn_delay", "datasets.main.turn_delay")?.unwrap_or(Dist::fixed(0.0));
    let ratio = opt_f64(dataset, "turn_delay_ratio", "datasets.main.turn_delay_ratio")?.unwrap_or(1.0);
    Ok(Some(ConversationShape { turns, turn_delay_s: delay_ms.scaled(1e-3), turn_delay_ratio: ratio }))
}

fn image_settings(images: &Value, kind: EndpointKind) -> Result<Option<ImageSettings>, ConfigError> {
    let sampling_key = "datasets.main.images.source_sampling (--image-source-sampling)";
    if let Some(sampling) = opt_str(images, "source_sampling", sampling_key)?
        .filter(|sampling| !sampling.eq_ignore_ascii_case("random-with-replacement"))
    {
        return Err(ConfigError::new(format!(
            "{sampling_key}: `{sampling}` needs a finite image pool (AIPerf's assets or a folder); generated (noise) \
             images take random-with-replacement only, as in AIPerf"
        )));
    }
    let width = opt_dist(images, "width", "datasets.main.images.width")?.unwrap_or(Dist::fixed(0.0));
    let height = opt_dist(images, "height", "datasets.main.images.height")?.unwrap_or(Dist::fixed(0.0));
    let count = opt_u64(images, "batch_size", "datasets.main.images.batch_size")?.unwrap_or(1);
    if width.mean() <= 0.0 || height.mean() <= 0.0 || count == 0 {
        return Ok(None);
    }
    // Whole pixels, as AIPerf takes the means and the spreads.
    let (Some((width, width_stddev)), Some((height, height_stddev))) =
        (width.as_plain_normal(), height.as_plain_normal())
    else {
        return Err(ConfigError::new(
            "datasets.main.images.width, .height (--image-width-mean, --image-height-mean, and their stddevs): a mean and a stddev",
        ));
    };
    if !kind.takes_images() {
        return Err(ConfigError::new(
            "datasets.main.images: images are sent to the chat, chat_embeddings, image_edit and image_retrieval endpoint types only",
        ));
    }
    if let Some(source) = opt_str(images, "source", "datasets.main.images.source")?.filter(|source| *source != "noise")
    {
        return Err(ConfigError::new(format!(
            "datasets.main.images.source (--image-source): `{source}` is not supported; images are generated (noise)"
        )));
    }
    let format = match opt_str(images, "format", "datasets.main.images.format")?.unwrap_or("png") {
        "png" => ImageFormat::Png,
        "jpeg" | "jpg" => ImageFormat::Jpeg,
        "random" => ImageFormat::Random,
        other => {
            return Err(ConfigError::new(format!(
                "datasets.main.images.format (--image-format): `{other}`; png, jpeg or random"
            )));
        }
    };
    let pixels = |value: f64| value.max(0.0) as u32;
    Ok(Some(ImageSettings {
        count: count as u32,
        width: pixels(width).max(1),
        height: pixels(height).max(1),
        width_stddev: pixels(width_stddev),
        height_stddev: pixels(height_stddev),
        format,
        quality: None,
    }))
}

fn file(dataset: &Value, base_dir: &Path, seed: u64) -> Result<FileDataset, ConfigError> {
    let records = inline_records(dataset)?;
    let path = match (opt_str(dataset, "path", "datasets.main.path")?, &records) {
        (Some(path), None) => super::values::anchored(base_dir, path),
        (None, Some(_)) => INLINE_RECORDS.to_string(),
        (Some(_), Some(_)) => {
            return Err(ConfigError::new("datasets.main: give either a `path` or inline `records`, not both"));
        }
        (None, None) => {
            return Err(ConfigError::new(
                "datasets.main.path (--input-file): a file dataset needs a path or inline `records`",
            ));
        }
    };
    let format = match opt_str(dataset, "format", "datasets.main.format")? {
        Some(name) => format_named(name)?,
        None if records.is_some() => FileFormat::SingleTurn,
        // AIPerf tells the format of a file named without one from the file.
        None => format_inference::infer(Path::new(&path)).map_err(|why| {
            ConfigError::new(format!(
                "datasets.main.path (--input-file): cannot tell the format of {path}: {}; name it with \
                 --custom-dataset-type (config `format`)",
                why.describe(format_inference::aiperf_name)
            ))
        })?,
    };
    let sampling = match opt_str(dataset, "sampling", "datasets.main.sampling")? {
        None | Some("sequential") => Sampling::Sequential,
        Some("random") => Sampling::Random,
        Some("shuffle") => Sampling::Shuffle,
        Some(other) => {
            return Err(ConfigError::new(format!("datasets.main.sampling: `{other}`; sequential, random or shuffle")));
        }
    };
    // A random pool is always drawn at random (AIPerf 0.13 plays a DAG file's roots in file
    // order: its loader's preference for random never reaches its sampler).
    let sampling = if format == FileFormat::RandomPool { Sampling::Random } else { sampling };
    let block_size = opt_u64(dataset, "block_size", "datasets.main.block_size")?
        .or(dataset
            .get("prompts")
            .map(|prompts| opt_u64(prompts, "block_size", "datasets.main.prompts.block_size"))
            .transpose()?
            .flatten())
        .unwrap_or(format.default_block_size() as u64);
    if records.is_some() && format == FileFormat::RandomPool {
        return Err(ConfigError::new(
            "datasets.main.records: inline random_pool records are not supported; write the pools to a folder",
        ));
    }
    Ok(FileDataset {
        path,
        format,
        sampling,
        // AIPerf's samplers start again after the last entry (`allow_wrap` is its agentic replay's).
        at_end: AtEnd::Wrap,
        random_seed: seed,
        block_size: block_size as usize,
        draws: match opt_u64(dataset, "entries", "datasets.main.entries")? {
            Some(entries) => Some(entries as usize),
            None => (format == FileFormat::RandomPool).then_some(DEFAULT_POOL_DRAWS),
        },
        records,
        system_prompt: None,
        // `--osl` over a file: the output length of the entries that name none.
        osl: match dataset.get("prompts") {
            Some(prompts) => opt_dist(prompts, "osl", "datasets.main.prompts.osl")?,
            None => None,
        },
        synthesis: synthesis(dataset, format)?,
        trace: super::trace_handling::lower(dataset, format)?,
        public: None,
        baseten: super::baseten_replay::lower(dataset, format)?,
        accuracy: None,
        corpus: file_corpus(dataset)?,
    })
}

/// `prompts.corpus` over a file (`--prompt-corpus`): the corpus a trace's text is cut from, if
/// given; random vocabulary tokens make synthetic prompts only.
fn file_corpus(dataset: &Value) -> Result<Option<PromptCorpus>, ConfigError> {
    let Some(prompts) =
        dataset.get("prompts").filter(|prompts| prompts.get("corpus").is_some_and(|corpus| !corpus.is_null()))
    else {
        return Ok(None);
    };
    match prompt_corpus(prompts)? {
        PromptCorpus::Random(_) => Err(ConfigError::new(
            "datasets.main.prompts.corpus (--prompt-corpus): random vocabulary tokens make synthetic prompts only; \
             a file's text is cut from sonnet or coding",
        )),
        corpus => Ok(Some(corpus)),
    }
}

/// The format `--custom-dataset-type` (config `format`) names.
fn format_named(name: &str) -> Result<FileFormat, ConfigError> {
    match name {
        "sharegpt" => Ok(FileFormat::Sharegpt),
        other => format_inference::by_aiperf_name(other).ok_or_else(|| {
            ConfigError::new(format!(
                "datasets.main.format (--custom-dataset-type): `{other}` is not read by this project; single_turn, multi_turn, mooncake_trace, random_pool, raw_payload, inputs_json, sagemaker_data_capture, burst_gpt_trace, bailian_trace, baseten_trace, tracelab, weka_trace, dag_jsonl, speed_bench_*"
            ))
        }),
    }
}

/// A public dataset as the file dataset it is read as: its cached file or hub cache folder
/// (or the `path` `--input-file` gives), its subset and filters; `entries` and `sampling` kept.
fn public(dataset: &Value, base_dir: &Path, seed: u64) -> Result<Dataset, ConfigError> {
    let given_path =
        opt_str(dataset, "path", "datasets.main.path")?.map(|path| super::values::anchored(base_dir, path));
    let (path, format, source) = public::resolve(
        opt_str(dataset, "dataset", "datasets.main.dataset")?,
        opt_str(dataset, "hf_weka_dataset", "datasets.main.hf_weka_dataset")?,
        opt_str(dataset, "hf_subset", "datasets.main.hf_subset")?.map(str::to_string),
        dataset_filters(dataset)?,
        given_path,
    )
    .map_err(|problem| ConfigError::new(format!("datasets.main.dataset (--public-dataset): {problem}")))?;
    // A weka dataset is read as weka trace files: its trace settings, synthesis length limits
    // and agent splitting are theirs, as AIPerf's weka loader reads them.
    let weka = source.as_ref().is_some_and(|source| public::reads_weka_traces(&source.name));
    let mut file_value = dataset.clone();
    if let Value::Object(keys) = &mut file_value {
        // The other keys are read as a file's of that format; the format is the dataset's own.
        let keys_of = if weka { FileFormat::WekaTrace } else { FileFormat::SingleTurn };
        keys.insert("format".into(), Value::from(keys_of.name()));
        if !weka {
            // AIPerf's other public datasets ignore the synthesis settings.
            keys.remove("synthesis");
        }
        keys.insert("path".into(), Value::from(path.clone()));
    }
    let mut spec = file(&file_value, base_dir, seed)?;
    (spec.path, spec.format, spec.public) = (path, format, source);
    if !spec.public.as_ref().is_some_and(|source| public::capped_by_entries(&source.name)) {
        // AIPerf reads the dataset whole; `entries` does not cap it (`ignored_entries` notes it).
        spec.draws = None;
    }
    Ok(Dataset::File(spec))
}

/// A public dataset AIPerf 0.13 streams (exgentic's) stops where AIPerf stops streaming it: at
/// the largest request count of the phases whose results count, when one is set (else at
/// `entries`, already its `draws`).
pub fn cap_streamed(dataset: &mut Dataset, phases: &[Phase]) {
    let Dataset::File(file) = dataset else { return };
    if !file.public.as_ref().is_some_and(|source| public::is_streamed(&source.name)) {
        return;
    }
    if let Some(most) = phases.iter().filter(|phase| phase.results).filter_map(|phase| phase.requests).max() {
        file.draws = Some(most as usize);
    }
}

/// The note for `entries` on a public dataset that AIPerf 0.13 reads whole (all but its streamed
/// ones and weka traces).
pub fn ignored_entries(dataset: &Value, plan_dataset: &Dataset) -> Option<String> {
    let Dataset::File(file) = plan_dataset else { return None };
    let name = dataset.get("dataset").and_then(Value::as_str)?;
    if file.draws.is_some() || dataset.get("entries").is_none_or(Value::is_null) {
        return None;
    }
    Some(format!(
        "note: datasets.main.entries (--num-dataset-entries): AIPerf 0.13 reads public dataset {name} whole, \
         whatever the entries (it caps only the exgentic and weka ones); so does this run"
    ))
}

/// `filters:` (`--dataset-filter key=value`): a map of text values.
fn dataset_filters(dataset: &Value) -> Result<BTreeMap<String, String>, ConfigError> {
    match dataset.get("filters") {
        None | Some(Value::Null) => Ok(BTreeMap::new()),
        Some(Value::Object(filters)) => filters
            .iter()
            .map(|(key, value)| match value {
                Value::String(text) => Ok((key.clone(), text.clone())),
                other => Err(ConfigError::new(format!("datasets.main.filters.{key}: a text value, got `{other}`"))),
            })
            .collect(),
        Some(other) => Err(ConfigError::new(format!("datasets.main.filters: a map of key: value, got `{other}`"))),
    }
}

/// The name inline records go by in messages (`datasets.main.records:2: missing "text"`).
const INLINE_RECORDS: &str = "datasets.main.records";

/// A file dataset's inline `records:` as the JSONL text its file would hold.
fn inline_records(dataset: &Value) -> Result<Option<String>, ConfigError> {
    match dataset.get("records") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Array(records)) if !records.is_empty() => {
            let lines: Vec<String> = records.iter().map(Value::to_string).collect();
            Ok(Some(lines.join("\n")))
        }
        Some(_) => Err(ConfigError::new("datasets.main.records: a non-empty list of records")),
    }
}

/// A trace's synthesis: mooncake, Bailian and BurstGPT traces are reshaped (AIPerf's trace
/// loaders), weka and TraceLab traces limited; the other trace formats ignore it, and a file
/// named of another format that sets any is refused, as AIPerf refuses it.
fn synthesis(dataset: &Value, format: FileFormat) -> Result<Option<crate::plan::TraceSynthesis>, ConfigError> {
    let settings = super::synthesis::lower(dataset)?;
    let set = settings.as_ref().is_some_and(|settings| settings.reshapes() || settings.length_limits().is_some());
    let trace = matches!(
        format,
        FileFormat::Mooncake
            | FileFormat::Bailian
            | FileFormat::BurstGpt
            | FileFormat::Baseten
            | FileFormat::SagemakerDataCapture
            | FileFormat::WekaTrace
            | FileFormat::Tracelab
    );
    if set && !trace {
        return Err(ConfigError::new(format!(
            "datasets.main.synthesis (--synthesis-*): only trace datasets take it (mooncake_trace, bailian_trace, \
             burst_gpt_trace, baseten_trace, sagemaker_data_capture, weka_trace, tracelab), not {}; AIPerf 0.13 \
             refuses it too",
            format.name()
        )));
    }
    Ok(match format {
        FileFormat::Mooncake | FileFormat::Bailian | FileFormat::BurstGpt => settings,
        // AIPerf's weka loader (TraceLab's too) reads the length limits only.
        FileFormat::WekaTrace | FileFormat::Tracelab => settings.and_then(|settings| settings.length_limits()),
        _ => None,
    })
}
