//! AIPerf's dataset flags: Conversation Input, ISL, OSL, Prompt, Prefix Prompt, Cache Bust,
//! Rankings, Synthesis, Audio, Image and Video Input, and Accuracy.

use serde_json::{Value, json};

use super::document::{FlagDocument, Flags};
use super::flags::{Arity, Group, Kind, apply, set, sweep};
use crate::config::get_path;

pub const CONVERSATION: Group = Group {
    title: "Conversation Input",
    flags: &[
        sweep(
            &["--conversation-num", "--num-conversations", "--num-sessions"],
            "phases.profiling.sessions",
            Kind::Int,
            "Conversations to send; a list sweeps it (agentic replay: root conversations started in the profiling phase)",
        ),
        set(
            &["--num-dataset-entries", "--num-prompts"],
            "benchmark.datasets.main.entries",
            Kind::Int,
            "Distinct prompts generated [default: --num-conversations, else --request-count (a sweep's largest), else 100]",
        ),
        sweep(
            &["--conversation-turn-mean", "--session-turns-mean"],
            "datasets.main.turns.mean",
            Kind::Int,
            "Turns per synthetic conversation, played as sessions in every mode [default: 1]",
        ),
        set(
            &["--conversation-turn-stddev", "--session-turns-stddev"],
            "benchmark.datasets.main.turns.stddev",
            Kind::Float,
            "Standard deviation of the turns [default: 0]",
        ),
        set(
            &["--conversation-turn-delay-mean", "--session-turn-delay-mean"],
            "benchmark.datasets.main.turn_delay.mean",
            Kind::Float,
            "Think time between turns, ms [default: 0.0]",
        ),
        set(
            &["--conversation-turn-delay-stddev", "--session-turn-delay-stddev"],
            "benchmark.datasets.main.turn_delay.stddev",
            Kind::Float,
            "Standard deviation of the think time, ms [default: 0.0]",
        ),
        set(
            &["--conversation-turn-delay-ratio", "--session-delay-ratio"],
            "benchmark.datasets.main.turn_delay_ratio",
            Kind::Float,
            "Multiplier of every think time [default: 1.0]",
        ),
        set(
            &["--inter-turn-delay-cap-seconds"],
            "benchmark.datasets.main.inter_turn_delay_cap_seconds",
            Kind::Float,
            "Agentic traces (tracelab, weka_trace, dag_jsonl): no turn waits longer than this many seconds",
        ),
        set(
            &["--max-idle-gap-cap-seconds"],
            "benchmark.datasets.main.max_idle_gap_cap_seconds",
            Kind::Float,
            "baseten_trace: cut every idle stretch between consecutive requests (all sessions together) to at most this many replayed seconds",
        ),
        set(
            &["--replay-speedup"],
            "benchmark.datasets.main.replay_speedup",
            Kind::Float,
            "baseten_trace: divide the recorded times by this (2: twice as fast) [default: 1.0]",
        ),
        set(
            &["--open-loop-replay", "--no-open-loop-replay"],
            "benchmark.datasets.main.open_loop_replay",
            Kind::Bool,
            "baseten_trace: a session's later turn goes at its recorded time, or at the previous answer if later (--no-open-loop-replay: its recorded think time after the previous answer) [default: True]",
        ),
        set(
            &["--open-loop-strict"],
            "benchmark.datasets.main.open_loop_strict",
            Kind::Bool,
            "baseten_trace: every row a session of its own, at its recorded time [default: False]",
        ),
        set(
            &["--omit-kv-hints"],
            "benchmark.datasets.main.omit_kv_hints",
            Kind::Bool,
            "baseten_trace: send no hash_ids and block_size KV-cache hints in the body [default: False]",
        ),
        set(
            &["--force-min-tokens", "--no-force-min-tokens"],
            "benchmark.datasets.main.force_min_tokens",
            Kind::Bool,
            "baseten_trace: pin each row's recorded output length as min_tokens (--no-force-min-tokens: do not) [default: True]",
        ),
    ],
};

pub const ISL: Group = Group {
    title: "Input Sequence Length (ISL)",
    flags: &[
        sweep(
            &["--prompt-input-tokens-mean", "--synthetic-input-tokens-mean", "--isl"],
            "datasets.main.prompts.isl.mean",
            Kind::Int,
            "Mean input tokens of synthetic prompts; a list sweeps it [default: 550]",
        ),
        sweep(
            &["--prompt-input-tokens-stddev", "--synthetic-input-tokens-stddev", "--isl-stddev"],
            "datasets.main.prompts.isl.stddev",
            Kind::Float,
            "Standard deviation of the input tokens [default: 0.0]",
        ),
        set(
            &["--prompt-input-tokens-block-size", "--synthetic-input-tokens-block-size", "--isl-block-size"],
            "benchmark.datasets.main.prompts.block_size",
            Kind::Int,
            "Tokens per hash-id block of traces (synthetic ISLs are not rounded to it, as in AIPerf)",
        ),
        apply(
            &["--seq-dist", "--sequence-distribution"],
            Arity::One,
            sequence_distribution,
            "Weighted ISL,OSL pairs: 128,64:25;512,128:75 (ISL|stddev,OSL|stddev:percent)",
        ),
        set(
            &["--random-range-ratio"],
            "benchmark.datasets.main.prompts.random_range_ratio",
            Kind::Text,
            "ISL and OSL drawn uniformly from a window around --isl/--osl: r or {\"input\": r, \"output\": r}",
        ),
        set(
            &["--random-corpus-style"],
            "benchmark.datasets.main.prompts.random_corpus_style",
            Kind::Choice(&[("vllm", "vllm"), ("sglang", "sglang")]),
            "Whose random dataset to copy: the window of --random-range-ratio (vllm [mean(1-r), mean(1+r)], sglang [mean r, mean]) and, with --prompt-corpus random, the token pool and generator [default: vllm]",
        ),
    ],
};

pub const OSL: Group = Group {
    title: "Output Sequence Length (OSL)",
    flags: &[
        sweep(
            &["--prompt-output-tokens-mean", "--output-tokens-mean", "--osl"],
            "datasets.main.prompts.osl.mean",
            Kind::Int,
            "Output tokens asked for (max tokens); a list sweeps it [default here: 150]",
        ),
        sweep(
            &["--prompt-output-tokens-stddev", "--output-tokens-stddev", "--osl-stddev"],
            "datasets.main.prompts.osl.stddev",
            Kind::Float,
            "Standard deviation of the output tokens [default: 0]",
        ),
    ],
};

pub const PROMPT: Group = Group {
    title: "Prompt",
    flags: &[
        set(
            &["--prompt-batch-size", "--batch-size-text", "--batch-size", "-b"],
            "benchmark.datasets.main.prompts.batch_size",
            Kind::Int,
            "Texts per request (more than 1 for embeddings endpoints) [default: 1]",
        ),
        set(
            &["--prompt-corpus"],
            "benchmark.datasets.main.prompts.corpus",
            Kind::Choice(&[("sonnet", "sonnet"), ("coding", "coding"), ("random", "random")]),
            "Corpus of synthetic prompts: sonnet (Shakespeare), coding (code, shell output, JSON, tracebacks, diffs) or random (vocabulary tokens, vLLM's or SGLang's: --random-corpus-style); over a trace file, the corpus its text is cut from (sonnet or coding) [default: sonnet; coding for weka and TraceLab traces]",
        ),
    ],
};

pub const PREFIX_PROMPT: Group = Group {
    title: "Prefix Prompt",
    flags: &[
        set(
            &["--system-prompt"],
            "benchmark.datasets.main.system_prompt",
            Kind::Text,
            "A system prompt sent verbatim ahead of every request",
        ),
        set(
            &["--system-prompt-file"],
            "benchmark.datasets.main.system_prompt_file",
            Kind::Text,
            "A UTF-8 file whose text is sent verbatim as the system prompt of every request",
        ),
        set(
            &["--prompt-prefix-pool-size", "--prefix-prompt-pool-size", "--num-prefix-prompts"],
            "benchmark.datasets.main.prefix_prompts.pool_size",
            Kind::Int,
            "Distinct prefixes each prompt starts with one of [default: 0]",
        ),
        set(
            &["--prompt-prefix-length", "--prefix-prompt-length"],
            "benchmark.datasets.main.prefix_prompts.length",
            Kind::Int,
            "Tokens of each prefix, added to the ISL of a conversation's first prompt [default: 0]",
        ),
        set(
            &["--shared-system-prompt-length"],
            "benchmark.datasets.main.prefix_prompts.shared_system_length",
            Kind::Int,
            "Tokens of a system prompt shared by every request",
        ),
        set(
            &["--user-context-prompt-length"],
            "benchmark.datasets.main.prefix_prompts.user_context_length",
            Kind::Int,
            "Tokens of a user message of each conversation's own, sent after the system prompt",
        ),
    ],
};

pub const CACHE_BUST: Group = Group {
    title: "Cache Bust",
    flags: &[set(
        &["--cache-bust"],
        "benchmark.datasets.main.prompts.cache_bust",
        Kind::Choice(&[
            ("none", "none"),
            ("system-prefix", "system_prefix"),
            ("system-suffix", "system_suffix"),
            ("first-turn-prefix", "first_turn_prefix"),
            ("first-turn-suffix", "first_turn_suffix"),
            ("warmup-isolation-system", "warmup_isolation_system"),
            ("warmup-isolation-first-turn", "warmup_isolation_first_turn"),
        ]),
        "A marker that keeps prompts from sharing a cached prefix: synthetic prompts take none or first-turn-prefix, an agentic replay any but the warm-up isolation targets [default: none]",
    )],
};

pub const RANKINGS: Group = Group {
    title: "Rankings",
    flags: &[
        set(
            &["--rankings-passages-mean"],
            "benchmark.datasets.main.rankings.passages.mean",
            Kind::Float,
            "Passages per rankings request [default: 1]",
        ),
        set(
            &["--rankings-passages-stddev"],
            "benchmark.datasets.main.rankings.passages.stddev",
            Kind::Float,
            "Standard deviation of the passages per synthetic rankings entry [default: 0]",
        ),
        set(
            &["--rankings-passages-prompt-token-mean"],
            "benchmark.datasets.main.rankings.passage_tokens.mean",
            Kind::Float,
            "Tokens of each synthetic passage (with any of these four: query and passages are generated, not cut from the ISL) [default: 128]",
        ),
        set(
            &["--rankings-passages-prompt-token-stddev"],
            "benchmark.datasets.main.rankings.passage_tokens.stddev",
            Kind::Float,
            "Standard deviation of the passages' tokens [default: 0]",
        ),
        set(
            &["--rankings-query-prompt-token-mean"],
            "benchmark.datasets.main.rankings.query_tokens.mean",
            Kind::Float,
            "Tokens of each synthetic query [default: 32]",
        ),
        set(
            &["--rankings-query-prompt-token-stddev"],
            "benchmark.datasets.main.rankings.query_tokens.stddev",
            Kind::Float,
            "Standard deviation of the queries' tokens [default: 0]",
        ),
    ],
};

pub const SYNTHESIS_GROUP: Group = Group {
    title: "Synthesis",
    flags: &[
        set(
            &["--synthesis-speedup-ratio"],
            "benchmark.datasets.main.synthesis.speedup_ratio",
            Kind::Float,
            "Divide the mooncake trace's timestamps by this (2: twice the rate) [default: 1.0]",
        ),
        set(
            &["--synthesis-prefix-len-multiplier"],
            "benchmark.datasets.main.synthesis.prefix_len_multiplier",
            Kind::Float,
            "Scale each request's shared prefix blocks [default: 1.0]",
        ),
        set(
            &["--synthesis-prefix-root-multiplier"],
            "benchmark.datasets.main.synthesis.prefix_root_multiplier",
            Kind::Int,
            "Spread requests over this many copies of the prefix tree [default: 1]",
        ),
        set(
            &["--synthesis-prompt-len-multiplier"],
            "benchmark.datasets.main.synthesis.prompt_len_multiplier",
            Kind::Float,
            "Scale each request's own (unshared) prompt tokens [default: 1.0]",
        ),
        set(
            &["--synthesis-output-len-multiplier"],
            "benchmark.datasets.main.synthesis.output_len_multiplier",
            Kind::Float,
            "Scale each output_length [default: 1.0]",
        ),
        set(
            &["--synthesis-max-isl"],
            "benchmark.datasets.main.synthesis.max_isl",
            Kind::Int,
            "Drop requests with an input_length above this",
        ),
        set(
            &["--synthesis-max-osl"],
            "benchmark.datasets.main.synthesis.max_osl",
            Kind::Int,
            "Cut output lengths above this to it",
        ),
    ],
};

pub const AUDIO_INPUT: Group = Group {
    title: "Audio Input",
    flags: &[
        set(
            &["--audio-batch-size", "--batch-size-audio"],
            "benchmark.datasets.main.audio.batch_size",
            Kind::Int,
            "Audio files per request (audio-transcription sends the first) [default: 1]",
        ),
        set(
            &["--audio-length-mean"],
            "benchmark.datasets.main.audio.length.mean",
            Kind::Float,
            "Audio length in seconds [default: 0.0, no audio]",
        ),
        set(
            &["--audio-length-stddev"],
            "benchmark.datasets.main.audio.length.stddev",
            Kind::Float,
            "Standard deviation of the audio length in seconds [default: 0.0]",
        ),
        set(
            &["--audio-format"],
            "benchmark.datasets.main.audio.format",
            Kind::Choice(&[("wav", "wav"), ("mp3", "mp3")]),
            "wav (mp3 is refused: no pure-Rust MP3 encoder exists) [default: wav]",
        ),
        apply(&["--audio-depths"], Arity::Many, audio_list, "Bit depths to pick from: 8, 16, 24, 32 [default: 16]"),
        apply(&["--audio-sample-rates"], Arity::Many, audio_list, "Sample rates in kHz to pick from [default: 16]"),
        set(
            &["--audio-num-channels"],
            "benchmark.datasets.main.audio.channels",
            Kind::Int,
            "1 (mono) or 2 (stereo) [default: 1]",
        ),
    ],
};

/// `--audio-depths 16 24` and `--audio-sample-rates 16,44.1`: numbers, spaced or comma-separated.
fn audio_list(document: &mut FlagDocument, flag: &str, values: &[String]) -> Result<(), String> {
    let numbers = values
        .iter()
        .flat_map(|value| value.split(','))
        .map(str::trim)
        .filter(|value| !value.is_empty())
        .map(|value| value.parse::<f64>().map_err(|_| format!("expects numbers, got `{value}`")))
        .collect::<Result<Vec<f64>, String>>()?;
    if numbers.is_empty() {
        return Err("needs at least one number".to_string());
    }
    let key = if flag == "--audio-depths" { "depths" } else { "sample_rates" };
    document.set(&format!("benchmark.datasets.main.audio.{key}"), json!(numbers));
    Ok(())
}

pub const IMAGE_INPUT: Group = Group {
    title: "Image Input",
    flags: &[
        set(
            &["--image-width-mean"],
            "benchmark.datasets.main.images.width.mean",
            Kind::Float,
            "Image width in pixels [default: 0.0, no images]",
        ),
        set(
            &["--image-width-stddev"],
            "benchmark.datasets.main.images.width.stddev",
            Kind::Float,
            "Standard deviation of each image's width, in whole pixels [default: 0]",
        ),
        set(
            &["--image-height-mean"],
            "benchmark.datasets.main.images.height.mean",
            Kind::Float,
            "Image height in pixels [default: 0.0, no images]",
        ),
        set(
            &["--image-height-stddev"],
            "benchmark.datasets.main.images.height.stddev",
            Kind::Float,
            "Standard deviation of each image's height, in whole pixels [default: 0]",
        ),
        set(
            &["--image-batch-size", "--batch-size-image"],
            "benchmark.datasets.main.images.batch_size",
            Kind::Int,
            "Images per request [default: 1]",
        ),
        set(
            &["--image-format"],
            "benchmark.datasets.main.images.format",
            Kind::Choice(&[("png", "png"), ("jpeg", "jpeg"), ("random", "random")]),
            "png, jpeg, or random (either, drawn for each image) [default: png]",
        ),
        set(
            &["--image-source"],
            "benchmark.datasets.main.images.source",
            Kind::Text,
            "Only noise (generated images) is supported [default: noise]",
        ),
        set(
            &["--image-source-sampling"],
            "benchmark.datasets.main.images.source_sampling",
            Kind::Choice(&[
                ("random-with-replacement", "random-with-replacement"),
                ("shuffle-cycle", "shuffle-cycle"),
                ("sequential-cycle", "sequential-cycle"),
            ]),
            "Only random-with-replacement: generated (noise) images have no finite pool to cycle through [default: random-with-replacement]",
        ),
    ],
};

pub const VIDEO_INPUT: Group = Group {
    title: "Video Input",
    flags: &[
        set(
            &["--video-batch-size", "--batch-size-video"],
            "benchmark.datasets.main.video.batch_size",
            Kind::Int,
            "Videos per chat request (video_url parts) [default: 1]",
        ),
        set(
            &["--video-duration"],
            "benchmark.datasets.main.video.duration",
            Kind::Float,
            "Seconds of each video; frames = duration x fps [default: 1.0]",
        ),
        set(&["--video-fps"], "benchmark.datasets.main.video.fps", Kind::Int, "Frames per second [default: 4]"),
        set(
            &["--video-width"],
            "benchmark.datasets.main.video.width",
            Kind::Int,
            "Video width in pixels, even; with --video-height [default: none, no videos]",
        ),
        set(
            &["--video-height"],
            "benchmark.datasets.main.video.height",
            Kind::Int,
            "Video height in pixels, even; with --video-width [default: none, no videos]",
        ),
        set(
            &["--video-synth-type"],
            "benchmark.datasets.main.video.synth_type",
            Kind::Choice(&[("moving-shapes", "moving_shapes"), ("grid-clock", "grid_clock"), ("noise", "noise")]),
            "moving-shapes, grid-clock or noise [default: moving-shapes]",
        ),
        set(
            &["--video-format"],
            "benchmark.datasets.main.video.format",
            Kind::Choice(&[("mp4", "mp4"), ("webm", "webm")]),
            "mp4 (webm is refused: no Rust VP9 encoder without libvpx) [default: mp4]",
        ),
        set(
            &["--video-codec"],
            "benchmark.datasets.main.video.codec",
            Kind::Text,
            "H.264 only: h264, libx264 or libopenh264 (OpenH264) [default: h264]",
        ),
        apply(
            &["--video-audio-sample-rate"],
            Arity::One,
            video_audio_sample_rate,
            "Audio track sample rate in kHz (or Hz above 96) [default: 44.1]",
        ),
        set(
            &["--video-audio-num-channels"],
            "benchmark.datasets.main.video.audio.channels",
            Kind::Int,
            "Audio track channels: 0 (none), 1 or 2; the track is uncompressed PCM in the MP4 [default: 0]",
        ),
        set(
            &["--video-audio-codec"],
            "benchmark.datasets.main.video.audio.codec",
            Kind::Choice(&[("aac", "aac"), ("libvorbis", "libvorbis"), ("libopus", "libopus")]),
            "aac, libvorbis or libopus: checked and named only; the track is PCM (no pure-Rust Opus, AAC or Vorbis encoder)",
        ),
        set(
            &["--video-audio-depth"],
            "benchmark.datasets.main.video.audio.depth",
            Kind::Int,
            "Audio track bit depth: 8, 16, 24 or 32 [default: 16]",
        ),
    ],
};

/// `--video-audio-sample-rate 44100` or `44.1`: kHz in the document, as AIPerf reads Hz above 96.
fn video_audio_sample_rate(document: &mut FlagDocument, _flag: &str, values: &[String]) -> Result<(), String> {
    let rate = Kind::Float.read(values.first().map_or("", String::as_str))?;
    let khz = rate.as_f64().map(|rate| if rate > 96.0 { rate / 1000.0 } else { rate });
    document.set("benchmark.datasets.main.video.audio.sample_rate", json!(khz));
    Ok(())
}

/// `ISL,OSL:percent;…` with optional `|stddev` after each length, into the schema's
/// `sequence_distribution` list.
fn sequence_distribution(document: &mut FlagDocument, _: &str, values: &[String]) -> Result<(), String> {
    let text = values.first().map_or("", String::as_str);
    let mut entries = Vec::new();
    for pair in text.split(';').map(str::trim).filter(|pair| !pair.is_empty()) {
        let (lengths, percent) = pair.split_once(':').ok_or_else(|| format!("`{pair}` needs ISL,OSL:percent"))?;
        let (isl, osl) = lengths.split_once(',').ok_or_else(|| format!("`{pair}` needs ISL,OSL:percent"))?;
        entries.push(json!({ "isl": length(isl)?, "osl": length(osl)?, "probability": Kind::Float.read(percent)? }));
    }
    if entries.is_empty() {
        return Err("needs at least one ISL,OSL:percent pair".to_string());
    }
    document.set("benchmark.datasets.main.prompts.sequence_distribution", Value::Array(entries));
    Ok(())
}

/// The flags that shape synthetic prompts only, by the path each sets under
/// `datasets.main.`; the batch sizes also pack a random pool's items.
const SYNTHETIC_ONLY: [(&str, &str, bool); 18] = [
    ("prefix_prompts.length", "--prefix-prompt-length", false),
    ("prefix_prompts.pool_size", "--prefix-prompt-pool-size", false),
    ("prefix_prompts.shared_system_length", "--shared-system-prompt-length", false),
    ("prefix_prompts.user_context_length", "--user-context-prompt-length", false),
    ("prompts.isl.mean", "--isl", false),
    ("prompts.isl.stddev", "--isl-stddev", false),
    ("prompts.sequence_distribution", "--seq-dist", false),
    ("prompts.random_range_ratio", "--random-range-ratio", false),
    ("prompts.batch_size", "--prompt-batch-size", true),
    ("images.batch_size", "--image-batch-size", true),
    ("images.source", "--image-source", false),
    ("audio.batch_size", "--audio-batch-size", true),
    ("video.batch_size", "--video-batch-size", true),
    ("turns.mean", "--conversation-turn-mean", false),
    ("turns.stddev", "--conversation-turn-stddev", false),
    ("turn_delay.mean", "--conversation-turn-delay-mean", false),
    ("turn_delay.stddev", "--conversation-turn-delay-stddev", false),
    ("turn_delay_ratio", "--conversation-turn-delay-ratio", false),
];

/// With `--input-file` or `--public-dataset` the prompts come from the data, so a flag that
/// shapes synthetic prompts would change nothing: refused, naming them, as AIPerf 0.13 refuses
/// them (a random pool's batch sizes excepted).
pub fn no_synthetic_only_flags(document: &FlagDocument) -> Result<(), String> {
    let dataset = get_path(&document.document, "benchmark.datasets.main").cloned().unwrap_or(Value::Null);
    let source = match dataset.get("type").and_then(Value::as_str) {
        Some("file") => "--input-file",
        Some("public") => "--public-dataset",
        _ => return Ok(()),
    };
    refuse_synthetic_only(&dataset, |path| document.gives(path), source)
}

/// The same over a config file whose dataset is a file or a public dataset (AIPerf's check of
/// the declared type).
pub fn no_synthetic_only_flags_over(file: &Value, flags: &Flags) -> Result<(), String> {
    let datasets = file.pointer("/benchmark/datasets").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    let main = datasets.iter().find(|dataset| dataset.get("name").and_then(Value::as_str) == Some("main"));
    let Some(dataset) = main.or(if let [only] = datasets { Some(only) } else { None }) else { return Ok(()) };
    let source = match dataset.get("type").and_then(Value::as_str) {
        Some(kind @ ("file" | "public")) => format!("the config file's dataset (type: {kind})"),
        _ => return Ok(()),
    };
    let given = |full: &str| {
        flags.sets.iter().any(|(set, value)| {
            set.strip_prefix("benchmark.").unwrap_or(set) == full
                || (set == "sweep.parameters" && value.get(full).is_some())
        })
    };
    refuse_synthetic_only(dataset, given, &source)
}

fn refuse_synthetic_only(dataset: &Value, given: impl Fn(&str) -> bool, source: &str) -> Result<(), String> {
    let random_pool = dataset.get("format").and_then(Value::as_str) == Some("random_pool");
    let offenders: Vec<&str> = SYNTHETIC_ONLY
        .iter()
        .filter(|(path, _, packs_a_pool)| given(&format!("datasets.main.{path}")) && !(*packs_a_pool && random_pool))
        .map(|(_, flag, _)| *flag)
        .collect();
    if offenders.is_empty() {
        return Ok(());
    }
    let (verb, them) = if offenders.len() == 1 { ("shapes", "it") } else { ("shape", "them") };
    Err(format!(
        "{}: {verb} synthetic prompts only, and this run reads its prompts from {source}; drop {them}, or use a \
         synthetic dataset",
        offenders.join(", ")
    ))
}

/// `512` or `512|20`: a mean and a standard deviation.
fn length(text: &str) -> Result<Value, String> {
    let (mean, stddev) = text.split_once('|').unwrap_or((text, "0"));
    Ok(json!({ "mean": Kind::Float.read(mean)?, "stddev": Kind::Float.read(stddev)? }))
}
