//! `aiperf profile --public-dataset` against the built-in mock, each dataset family read from a
//! Hugging Face hub cache the test writes (Parquet with images and audio, JSONL) or from the
//! aiperf dataset cache; what was sent read back from `inputs.json` and the summary.

mod common;

use std::io::Cursor;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::Arc;

use arrow_array::builder::{ListBuilder, StringBuilder, StructBuilder};
use arrow_array::{ArrayRef, BinaryArray, RecordBatch, StringArray, StructArray};
use arrow_schema::{DataType, Field, Fields};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use common::{aiperf_command, read_json, stat};
use parquet::arrow::ArrowWriter;
use serde_json::Value;

/// A temp folder holding a hub cache (`hub/`) and an aiperf dataset cache (`aiperf/`).
struct Caches {
    dir: tempfile::TempDir,
}

impl Caches {
    fn new() -> Self {
        Caches { dir: tempfile::tempdir().expect("temp dir") }
    }

    /// The snapshot folder of `repo` at revision `rev`, with `refs/main` naming it.
    fn snapshot(&self, repo: &str) -> PathBuf {
        let repo_dir = self.dir.path().join("hub").join(format!("datasets--{}", repo.replace('/', "--")));
        std::fs::create_dir_all(repo_dir.join("refs")).expect("refs");
        std::fs::write(repo_dir.join("refs/main"), "0123abcd").expect("refs/main");
        let snapshot = repo_dir.join("snapshots/0123abcd");
        std::fs::create_dir_all(&snapshot).expect("snapshot");
        snapshot
    }

    /// `aiperf profile` with `args` and `--artifact-dir out`, reading these caches.
    fn profile(&self, args: &str) -> Output {
        aiperf_command(self.dir.path())
            .env("HF_HUB_CACHE", self.dir.path().join("hub"))
            .env("AIPERF_DATASET_CACHE", self.dir.path().join("aiperf"))
            .arg("profile")
            .args(format!("--model m --url mock --artifact-dir out {args}").split_whitespace())
            .output()
            .expect("run aiperf profile")
    }

    fn sent_messages(&self) -> Vec<Value> {
        let inputs = read_json(&self.dir.path().join("out/inputs.json"));
        let sessions = inputs["data"].as_array().expect("inputs.json data").clone();
        sessions
            .iter()
            .flat_map(|session| session["payloads"].as_array().cloned().unwrap_or_default())
            .map(|payload| payload["messages"].as_array().and_then(|m| m.last()).cloned().unwrap_or_default())
            .collect()
    }

    fn request_count(&self) -> f64 {
        stat(&read_json(&self.dir.path().join("out/profile_export_aiperf.json")), "request_count", "avg")
    }
}

fn succeeded(output: &Output) {
    common::succeeded(output, "aiperf profile");
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn write_parquet(path: &Path, columns: Vec<(&str, ArrayRef)>) {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("folder");
    let batch = RecordBatch::try_from_iter(columns).expect("batch");
    let mut writer =
        ArrowWriter::try_new(std::fs::File::create(path).expect("file"), batch.schema(), None).expect("writer");
    writer.write(&batch).expect("write");
    writer.close().expect("close");
}

fn strings(values: &[&str]) -> ArrayRef {
    Arc::new(StringArray::from(values.to_vec()))
}

/// A hub media column: `{bytes, path}` per row.
fn media(items: &[Vec<u8>]) -> ArrayRef {
    let bytes: Vec<Option<&[u8]>> = items.iter().map(|item| Some(item.as_slice())).collect();
    let paths: Vec<&str> = items.iter().map(|_| "file").collect();
    Arc::new(StructArray::from(vec![
        (Arc::new(Field::new("bytes", DataType::Binary, true)), Arc::new(BinaryArray::from(bytes)) as ArrayRef),
        (Arc::new(Field::new("path", DataType::Utf8, true)), strings(&paths)),
    ]))
}

fn png(side: u32) -> Vec<u8> {
    let mut bytes = Vec::new();
    let mut encoder = png::Encoder::new(&mut bytes, side, side);
    encoder.set_color(png::ColorType::Grayscale);
    let mut writer = encoder.write_header().expect("PNG header");
    writer.write_image_data(&vec![128; (side * side) as usize]).expect("PNG data");
    writer.finish().expect("PNG end");
    bytes
}

fn wav(seconds: f64) -> Vec<u8> {
    let spec =
        hound::WavSpec { channels: 1, sample_rate: 8000, bits_per_sample: 16, sample_format: hound::SampleFormat::Int };
    let mut bytes = Cursor::new(Vec::new());
    let mut writer = hound::WavWriter::new(&mut bytes, spec).expect("WAV");
    for _ in 0..(seconds * 8000.0) as u32 {
        writer.write_sample(0i16).expect("sample");
    }
    writer.finalize().expect("WAV end");
    bytes.into_inner()
}

/// ShareGPT-style conversations (`from`/`value`), one list per row.
fn conversations(rows: &[&[(&str, &str)]]) -> ArrayRef {
    let fields =
        Fields::from(vec![Field::new("from", DataType::Utf8, true), Field::new("value", DataType::Utf8, true)]);
    let mut list = ListBuilder::new(StructBuilder::from_fields(fields, 4));
    for row in rows {
        for (from, value) in *row {
            let messages = list.values();
            messages.field_builder::<StringBuilder>(0).expect("from").append_value(from);
            messages.field_builder::<StringBuilder>(1).expect("value").append_value(value);
            messages.append(true);
        }
        list.append(true);
    }
    Arc::new(list.finish())
}

fn text_of(message: &Value) -> String {
    match &message["content"] {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts.iter().filter_map(|part| part["text"].as_str()).collect(),
        _ => String::new(),
    }
}

#[test]
fn an_instruction_dataset_sends_each_prompt_of_its_split_and_skips_blank_ones() {
    let caches = Caches::new();
    let snapshot = caches.snapshot("AI-MO/NuminaMath-TIR");
    let problems = ["What is 2+3?", "  ", "Solve x^2 = 4.", "Sum 1..10?"];
    write_parquet(&snapshot.join("data/train-00000-of-00001.parquet"), vec![("problem", strings(&problems))]);
    write_parquet(&snapshot.join("data/test-00000-of-00001.parquet"), vec![("problem", strings(&["a test row"]))]);
    let run = caches.profile("--public-dataset aimo --request-count 3 --concurrency 1");
    succeeded(&run);
    assert_eq!(caches.request_count(), 3.0);
    let sent: Vec<String> = caches.sent_messages().iter().map(text_of).collect();
    assert_eq!(
        sent,
        ["What is 2+3?", "Solve x^2 = 4.", "Sum 1..10?"],
        "the train split in order, the blank row skipped"
    );
}

#[test]
fn a_vision_dataset_sends_each_row_s_image_as_a_data_url() {
    let caches = Caches::new();
    let snapshot = caches.snapshot("Lin-Chen/MMStar");
    let image = png(4);
    write_parquet(
        &snapshot.join("mmstar/val-00000-of-00001.parquet"),
        vec![
            ("question", strings(&["What colour is it?", "How big is it?"])),
            ("image", media(&[image.clone(), image.clone()])),
        ],
    );
    let run = caches.profile("--public-dataset mmstar --endpoint-type chat --request-count 2 --concurrency 1");
    succeeded(&run);
    assert_eq!(caches.request_count(), 2.0);
    let sent = caches.sent_messages();
    let parts = sent[0]["content"].as_array().expect("parts");
    assert_eq!(parts[0], serde_json::json!({"type": "text", "text": "What colour is it?"}));
    assert_eq!(parts[1]["image_url"]["url"], format!("data:image/png;base64,{}", BASE64.encode(&image)));
}

#[test]
fn a_conversation_dataset_reads_its_default_subset_or_the_one_asked_for() {
    let caches = Caches::new();
    let snapshot = caches.snapshot("lmms-lab/LLaVA-OneVision-Data");
    let image = png(2);
    write_parquet(
        &snapshot.join("sharegpt4o/train-00000-of-00001.parquet"),
        vec![
            (
                "conversations",
                conversations(&[
                    &[("human", "<image>\nDescribe the picture."), ("gpt", "A grey square.")],
                    &[("gpt", "Hello"), ("human", "What is shown?")],
                ]),
            ),
            ("image", media(&[image.clone(), image.clone()])),
        ],
    );
    write_parquet(
        &snapshot.join("CLEVR/train-00000-of-00001.parquet"),
        vec![("conversations", conversations(&[&[("human", "Count the cubes.")]])), ("image", media(&[image]))],
    );
    let default =
        caches.profile("--public-dataset llava-onevision --endpoint-type chat --request-count 2 --concurrency 1");
    succeeded(&default);
    let sent: Vec<String> = caches.sent_messages().iter().map(text_of).collect();
    assert_eq!(sent, ["Describe the picture.", "What is shown?"], "sharegpt4o, `<image>` taken out");

    let subset = caches.profile(
        "--public-dataset llava_onevision --hf-subset CLEVR --endpoint-type chat --request-count 2 --concurrency 1",
    );
    succeeded(&subset);
    assert_eq!(caches.request_count(), 2.0, "the CLEVR subset's one row, sent twice");
    let sent: Vec<String> = caches.sent_messages().iter().map(text_of).collect();
    assert_eq!(sent, ["Count the cubes."]);

    let unknown = caches.profile("--public-dataset llava_onevision --hf-subset nope --request-count 1");
    assert_ne!(unknown.status.code(), Some(0));
    let message = stderr(&unknown);
    assert!(message.contains("subset `nope` is not in") && message.contains("CLEVR, sharegpt4o"), "{message}");
}

#[test]
fn a_speech_dataset_sends_its_clips_under_30_seconds_with_the_transcription_prompt() {
    let caches = Caches::new();
    let snapshot = caches.snapshot("openslr/librispeech_asr");
    let clips = [wav(0.5), wav(31.0), wav(1.0)];
    write_parquet(
        &snapshot.join("clean/test/0000.parquet"),
        vec![("audio", media(&clips)), ("text", strings(&["A", "B", "C"]))],
    );
    write_parquet(
        &snapshot.join("other/test/0000.parquet"),
        vec![("audio", media(&[wav(0.2)])), ("text", strings(&["D"]))],
    );
    let run = caches.profile("--public-dataset librispeech --endpoint-type chat --request-count 2 --concurrency 1");
    succeeded(&run);
    assert_eq!(caches.request_count(), 2.0);
    for (message, clip) in caches.sent_messages().iter().zip([&clips[0], &clips[2]]) {
        let parts = message["content"].as_array().expect("parts");
        assert_eq!(parts[0]["text"], "Transcribe this audio.");
        assert_eq!(parts[1]["input_audio"]["format"], "wav");
        assert_eq!(parts[1]["input_audio"]["data"], BASE64.encode(clip), "the 31 s clip is skipped");
    }
    let uploads = caches
        .profile("--public-dataset librispeech --endpoint-type audio-transcription --request-count 3 --concurrency 1");
    succeeded(&uploads);
    assert_eq!(caches.request_count(), 3.0, "each clip uploaded to the transcription endpoint");
}

/// A 440 Hz tone of `seconds` at 16 kHz, encoded by ffmpeg (Debian's, installed by
/// scripts/real-servers.sh) with `codec` into a `container` file.
fn tone(container: &str, codec: &str, seconds: f64) -> Vec<u8> {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join(format!("tone.{container}"));
    let output = std::process::Command::new("ffmpeg")
        .args(["-v", "error", "-f", "lavfi", "-i", &format!("sine=frequency=440:sample_rate=16000:duration={seconds}")])
        .args(["-c:a", codec])
        .arg(&path)
        .output()
        .expect("ffmpeg (apt-get install ffmpeg; scripts/real-servers.sh does)");
    assert!(output.status.success(), "ffmpeg: {}", stderr(&output));
    std::fs::read(path).expect("tone")
}

/// The frames and sample rate of each WAV clip sent (chat `input_audio` parts).
fn sent_clips(caches: &Caches) -> Vec<(u32, u32)> {
    caches
        .sent_messages()
        .iter()
        .map(|message| {
            assert_eq!(message["content"][1]["input_audio"]["format"], "wav");
            let data = message["content"][1]["input_audio"]["data"].as_str().expect("audio data");
            let reader = hound::WavReader::new(Cursor::new(BASE64.decode(data).expect("base64"))).expect("a WAV clip");
            (reader.duration(), reader.spec().sample_rate)
        })
        .collect()
}

#[test]
fn flac_mp3_and_vorbis_clips_are_decoded_and_sent_as_wav_of_their_length() {
    let caches = Caches::new();
    write_parquet(
        &caches.snapshot("openslr/librispeech_asr").join("clean/test/0000.parquet"),
        vec![("audio", media(&[tone("flac", "flac", 0.5), tone("flac", "flac", 31.0), tone("flac", "flac", 1.5)]))],
    );
    write_parquet(
        &caches.snapshot("facebook/voxpopuli").join("en/test/0000.parquet"),
        vec![("audio", media(&[tone("ogg", "libvorbis", 1.25), tone("mp3", "libmp3lame", 2.0)]))],
    );
    succeeded(&caches.profile("--public-dataset librispeech --endpoint-type chat --request-count 2 --concurrency 1"));
    assert_eq!(caches.request_count(), 2.0);
    assert_eq!(sent_clips(&caches), [(8000, 16000), (24000, 16000)], "FLAC: 0.5 s and 1.5 s; 31 s skipped");
    succeeded(&caches.profile("--public-dataset voxpopuli --endpoint-type chat --request-count 2 --concurrency 1"));
    assert_eq!(caches.request_count(), 2.0);
    assert_eq!(sent_clips(&caches), [(20000, 16000), (32000, 16000)], "Ogg Vorbis 1.25 s, MP3 2 s");
    let uploads = caches
        .profile("--public-dataset voxpopuli --endpoint-type audio-transcription --request-count 2 --concurrency 1");
    succeeded(&uploads);
    assert_eq!(caches.request_count(), 2.0, "each decoded clip uploaded to the transcription endpoint");
}

#[test]
fn mmvu_questions_go_with_their_choices_and_video() {
    let caches = Caches::new();
    let letters: Vec<(Arc<Field>, ArrayRef)> = [("A", ["red", "one"]), ("B", ["blue", ""])]
        .into_iter()
        .map(|(letter, texts)| (Arc::new(Field::new(letter, DataType::Utf8, true)), strings(&texts)))
        .collect();
    write_parquet(
        &caches.snapshot("yale-nlp/MMVU").join("data/validation-00000-of-00001.parquet"),
        vec![
            ("question", strings(&["What colour is the car?", "How many cars?"])),
            ("choices", Arc::new(StructArray::from(letters)) as ArrayRef),
            ("video", strings(&["https://example.com/videos/car.mp4", ""])),
        ],
    );
    let run = caches.profile("--public-dataset mmvu --endpoint-type chat --request-count 2 --concurrency 1");
    succeeded(&run);
    assert_eq!(caches.request_count(), 2.0, "the row without a video skipped; the other sent twice");
    for message in caches.sent_messages() {
        assert_eq!(
            message["content"],
            serde_json::json!([{"type": "text", "text": "What colour is the car? A.red B.blue"},
                               {"type": "video_url", "video_url": {"url": "https://example.com/videos/car.mp4"}}])
        );
    }
}

#[test]
fn mt_bench_rows_are_two_turn_sessions() {
    let caches = Caches::new();
    let snapshot = caches.snapshot("HuggingFaceH4/mt_bench_prompts");
    let mut prompts = ListBuilder::new(StringBuilder::new());
    for row in [["Write a poem.", "Make it shorter."], ["Name a river.", "Where is it?"]] {
        for text in row {
            prompts.values().append_value(text);
        }
        prompts.append(true);
    }
    write_parquet(
        &snapshot.join("data/train-00000-of-00001.parquet"),
        vec![("prompt", Arc::new(prompts.finish()) as ArrayRef)],
    );
    let run = caches.profile("--public-dataset spec-al-mtbench --endpoint-type chat --request-count 4 --concurrency 1");
    succeeded(&run);
    assert_eq!(caches.request_count(), 4.0);
    let inputs = read_json(&caches.dir.path().join("out/inputs.json"));
    let sessions = inputs["data"].as_array().expect("sessions");
    assert_eq!(sessions.len(), 2, "two sessions of two turns");
    let sent: Vec<String> = caches.sent_messages().iter().map(text_of).collect();
    assert_eq!(sent, ["Write a poem.", "Make it shorter.", "Name a river.", "Where is it?"]);
}

#[test]
fn spec_bench_reads_the_aiperf_cache_file_and_a_missing_hub_copy_names_its_fetch() {
    let caches = Caches::new();
    let aiperf_cache = caches.dir.path().join("aiperf");
    std::fs::create_dir_all(&aiperf_cache).expect("cache");
    let rows = "{\"question_id\": 1, \"turns\": [\"Translate hello.\", \"And goodbye?\"]}\n{\"question_id\": 2, \"turns\": []}\n{\"question_id\": 3, \"turns\": [\"Name a prime.\"]}\n";
    std::fs::write(aiperf_cache.join("spec_bench.jsonl"), rows).expect("spec_bench.jsonl");
    let run = caches.profile("--public-dataset spec-bench --request-count 2 --concurrency 1");
    succeeded(&run);
    let sent: Vec<String> = caches.sent_messages().iter().map(text_of).collect();
    assert_eq!(sent, ["Translate hello.", "Name a prime."]);

    std::fs::remove_dir_all(caches.dir.path().join("out")).expect("the first run's artifacts");
    let missing = caches.profile("--public-dataset aimo --request-count 2");
    assert_ne!(missing.status.code(), Some(0));
    let message = stderr(&missing);
    assert!(
        message.contains("public dataset aimo: ") && message.contains("datasets--AI-MO--NuminaMath-TIR does not exist"),
        "{message}"
    );
    assert!(message.contains("huggingface-cli download --repo-type dataset AI-MO/NuminaMath-TIR"), "{message}");
    assert!(!caches.dir.path().join("out/profile_export.jsonl").exists(), "nothing was sent");
}

#[test]
fn filters_are_taken_by_the_datasets_that_declare_them_only() {
    let caches = Caches::new();
    let refused = caches.profile("--public-dataset aimo --dataset-filter harness=claude_code --request-count 1");
    assert_eq!(refused.status.code(), Some(2));
    assert!(stderr(&refused).contains("public dataset aimo does not take --dataset-filter"), "{}", stderr(&refused));
    let malformed = caches.profile("--public-dataset exgentic --dataset-filter harness --request-count 1");
    assert_eq!(malformed.status.code(), Some(2));
    assert!(stderr(&malformed).contains("expects a non-empty key=value, got `harness`"), "{}", stderr(&malformed));
    let without_public = caches.profile("--dataset-filter a=b --request-count 1");
    assert_eq!(without_public.status.code(), Some(2));
    assert!(
        stderr(&without_public).contains("needs a public dataset (--public-dataset)"),
        "{}",
        stderr(&without_public)
    );
}

#[test]
fn a_weka_trace_repository_is_handed_to_the_weka_trace_reader() {
    let caches = Caches::new();
    let snapshot = caches.snapshot("semianalysisai/cc-traces-weka-062126");
    std::fs::write(snapshot.join("traces.jsonl"), "{\"trace_id\": \"t\"}\n").expect("trace file");
    let run = caches.profile(
        "--public-dataset semianalysis-cc-traces-weka-062126 --request-count 1 --synthesis-max-isl 4096 \
         --max-context-length 100000 --ignore-trace-delays --dry-run --emit-scenario weka.rhai",
    );
    succeeded(&run);
    let plan: Value = serde_json::from_slice(&run.stdout).expect("plan");
    assert_eq!(plan["dataset"]["public"]["name"], "semianalysis_cc_traces_weka_062126");
    assert_eq!(plan["dataset"]["synthesis"]["max_isl"], 4096, "AIPerf's weka loader reads the length limits");
    // ... and the trace settings, as a weka_trace file's.
    assert_eq!(plan["dataset"]["trace"]["max_context_length"], 100000);
    assert_eq!(plan["dataset"]["trace"]["ignore_delays"], true);
    let scenario = std::fs::read_to_string(caches.dir.path().join("weka.rhai")).expect("weka.rhai");
    assert!(
        scenario.contains("synthesize(public_dataset(#{ name: \"semianalysis_cc_traces_weka_062126\""),
        "{scenario}"
    );
    assert!(scenario.contains("#{ max_isl: 4096 })"), "{scenario}");
    assert!(scenario.contains("ignore_delays: true, max_context_length: 100000"), "{scenario}");
    let again = aiperf_command(caches.dir.path()).args(["run", "weka.rhai", "--dry-run"]).output().expect("dry run");
    succeeded(&again);
    assert!(
        plan["dataset"]["path"]
            .as_str()
            .is_some_and(|path| path.ends_with("datasets--semianalysisai--cc-traces-weka-062126"))
    );
    if aiperf::plan::FileFormat::try_from("weka_trace".to_string()).is_err() {
        let run = caches.profile("--public-dataset semianalysis-cc-traces-weka-062126 --request-count 1");
        assert_ne!(run.status.code(), Some(0));
        let message = stderr(&run);
        assert!(
            message.contains("traces.jsonl) are Weka agentic traces, and the weka_trace reader is not in this build"),
            "{message}"
        );
    }
}

#[test]
fn emit_scenario_writes_a_public_dataset_back_as_the_same_plan() {
    let caches = Caches::new();
    let snapshot = caches.snapshot("AI-MO/NuminaMath-TIR");
    write_parquet(&snapshot.join("data/train-00000-of-00001.parquet"), vec![("problem", strings(&["1+1?", "2+2?"]))]);
    let args = "--public-dataset aimo --hf-subset data --num-dataset-entries 2 --request-count 2 --concurrency 1";
    let emitted = caches.profile(&format!("{args} --dry-run --emit-scenario out.rhai"));
    succeeded(&emitted);
    let scenario = std::fs::read_to_string(caches.dir.path().join("out.rhai")).expect("out.rhai");
    assert!(
        scenario.contains("public_dataset(#{ name: \"aimo\", path: ") && scenario.contains("hf_subset: \"data\""),
        "{scenario}"
    );
    let dry = aiperf_command(caches.dir.path()).args(["run", "out.rhai", "--dry-run"]).output().expect("dry run");
    succeeded(&dry);
    assert_eq!(
        String::from_utf8_lossy(&dry.stdout),
        String::from_utf8_lossy(&emitted.stdout),
        "the scenario's plan differs"
    );
}

#[test]
fn sharegpt_is_read_from_the_hub_cache_when_the_aiperf_cache_has_no_copy() {
    let caches = Caches::new();
    let snapshot = caches.snapshot("anon8231489123/ShareGPT_Vicuna_unfiltered");
    let conversations = r#"[{"conversations": [{"from": "human", "value": "Hi there, how are you?"},
        {"from": "gpt", "value": "Hello, very well, thank you."}]}]"#;
    std::fs::write(snapshot.join("ShareGPT_V3_unfiltered_cleaned_split.json"), conversations).expect("ShareGPT file");
    let run = caches.profile("--public-dataset sharegpt --request-count 2 --concurrency 1");
    succeeded(&run);
    assert_eq!(caches.request_count(), 2.0);
    let sent: Vec<String> = caches.sent_messages().iter().map(text_of).collect();
    assert_eq!(sent, ["Hi there, how are you?"]);
}

/// AIPerf 0.13 over `tests/fixtures/datasets/sharegpt.json` (`--public-dataset sharegpt
/// --request-count 10 --concurrency 1 --tokenizer gpt2`, run beside this one): each request's
/// turn, how many messages it sent (the history and the turn) and its max tokens.
const AIPERF_SHAREGPT_TURNS: [(u64, usize, u64); 10] = [
    (0, 1, 16),
    (1, 3, 14),
    (0, 1, 10),
    (0, 1, 9),
    (0, 1, 8),
    (0, 1, 10),
    (0, 1, 16),
    (1, 3, 14),
    (0, 1, 10),
    (0, 1, 9),
];

#[test]
fn sharegpt_conversations_are_sessions_of_their_answered_turns_as_aiperf_plays_them() {
    let caches = Caches::new();
    let aiperf_cache = caches.dir.path().join("aiperf");
    std::fs::create_dir_all(&aiperf_cache).expect("cache");
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/datasets/sharegpt.json");
    std::fs::copy(fixture, aiperf_cache.join("ShareGPT_V3_unfiltered_cleaned_split.json")).expect("copy");
    let run = caches.profile(
        "--public-dataset sharegpt --endpoint-type chat --request-count 10 --concurrency 1 --export-level raw \
         --num-dataset-entries 2",
    );
    succeeded(&run);
    assert!(stderr(&run).contains("reads public dataset sharegpt whole"), "{}", stderr(&run));
    let mut raw = artifact_lines(&caches, "profile_export_raw.jsonl");
    raw.sort_by_key(|line| line["start_perf_ns"].as_u64());
    let sent: Vec<(u64, usize, u64)> = raw
        .iter()
        .map(|line| {
            let payload = &line["payload"];
            let messages = payload["messages"].as_array().map_or(0, Vec::len);
            let turn = line["metadata"]["turn_index"].as_u64().unwrap_or(u64::MAX);
            (turn, messages, payload["max_completion_tokens"].as_u64().unwrap_or(0))
        })
        .collect();
    assert_eq!(sent, AIPERF_SHAREGPT_TURNS);
    assert_eq!(raw[1]["payload"]["messages"][0]["content"], "Why is the sky blue today?", "the history goes first");
}

#[test]
fn aiperf_s_own_cache_in_the_working_directory_is_read() {
    let dir = tempfile::tempdir().expect("temp dir");
    let here = dir.path().join(".cache/aiperf/datasets");
    std::fs::create_dir_all(&here).expect("AIPerf's cache folder");
    std::fs::write(here.join("ShareGPT_V3_unfiltered_cleaned_split.json"), "[]").expect("a ShareGPT file");
    let dry = aiperf_command(dir.path())
        .env_remove("AIPERF_DATASET_CACHE")
        .args("profile --model m --url mock --public-dataset sharegpt --request-count 1 --dry-run".split_whitespace())
        .output()
        .expect("run aiperf profile");
    succeeded(&dry);
    let plan: Value = serde_json::from_slice(&dry.stdout).expect("a plan");
    let path = plan["dataset"]["path"].as_str().expect("a path");
    assert_eq!(Path::new(path), here.join("ShareGPT_V3_unfiltered_cleaned_split.json"));
}

/// An Exgentic span: an LLM call from `start` to `end` (seconds after 12:00:00) with `attributes`.
fn exgentic_span(kind: Option<&str>, start_s: f64, end_s: f64, attributes: Value) -> Value {
    let at = |seconds: f64| format!("2026-01-05T12:00:{seconds:06.3}+00:00");
    let mut span = serde_json::json!({"start_time": at(start_s), "end_time": at(end_s), "attributes": attributes});
    if let Some(kind) = kind {
        span["type"] = Value::from(kind);
    }
    span
}

fn user_says(text: &str) -> String {
    serde_json::json!([{"role": "user", "parts": [{"type": "text", "content": text}]}]).to_string()
}

/// Two claude_code sessions (one of two calls, a tool call and its result between them, and
/// spans that are not replayed), and an openai_solo one.
fn exgentic_rows() -> String {
    use serde_json::json;
    let tools =
        json!([{"type": "function", "name": "ls", "description": "list files", "parameters": {"type": "object"}}]);
    let first = exgentic_span(
        Some("llm_call"),
        0.0,
        1.0,
        json!({
            "gen_ai.usage.input_tokens": 100, "gen_ai.usage.output_tokens": 20, "gen_ai.request.max_tokens": 64,
            "gen_ai.system_instructions": "Be brief.", "gen_ai.input.messages": user_says("List the files"),
            "gen_ai.tool.definitions": tools.to_string(), "gen_ai.request.temperature": 0.5,
            "gen_ai.request.stop_sequences": ["END"],
        }),
    );
    let tool_span = exgentic_span(Some("tool"), 1.0, 1.2, json!({}));
    let failed = json!({"type": "llm_call", "status": {"code": 2}, "start_time": "2026-01-05T12:00:01", "end_time": "2026-01-05T12:00:02", "attributes": {}});
    let history = json!([
        {"role": "user", "parts": [{"type": "text", "content": "List the files"}]},
        {"role": "assistant", "parts": [{"type": "tool_call", "id": "c1", "name": "ls", "arguments": {"path": "."}}]},
        {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c1", "result": "a.txt"}]},
    ]);
    let second = exgentic_span(
        Some("llm_call"),
        1.5,
        2.0,
        json!({"gen_ai.usage.input_tokens": 150, "gen_ai.usage.output_tokens": 10, "gen_ai.input.messages": history}),
    );
    let other_harness = exgentic_span(
        Some("llm_call"),
        0.0,
        1.0,
        json!({"gen_ai.usage.input_tokens": 5, "gen_ai.usage.output_tokens": 5, "gen_ai.input.messages": user_says("Solo")}),
    );
    let untyped_chat = exgentic_span(
        None,
        3.0,
        4.0,
        json!({"gen_ai.operation.name": "chat", "gen_ai.usage.input_tokens": 9, "gen_ai.usage.output_tokens": 7,
               "gen_ai.input.messages": user_says("Third session")}),
    );
    let rows = [
        json!({"harness": "claude_code", "session_id": "s1", "models": ["azure/gpt-5.2-2025-12-11"],
               "benchmark": "swebench", "spans": [second, first, tool_span, failed]}),
        json!({"harness": "openai_solo", "session_id": "s2", "models": ["Kimi-K2.5"], "benchmark": "appworld",
               "spans": [other_harness]}),
        json!({"harness": "claude_code", "session_id": "s3", "models": ["Kimi-K2.5"], "benchmark": "swebench",
               "spans": [untyped_chat]}),
    ];
    rows.iter().map(|row| format!("{row}\n")).collect()
}

/// Each line of a JSONL artifact of the run.
fn artifact_lines(caches: &Caches, name: &str) -> Vec<Value> {
    let text = std::fs::read_to_string(caches.dir.path().join("out").join(name)).expect(name);
    text.lines().map(|line| serde_json::from_str(line).expect("a JSON line")).collect()
}

#[test]
fn exgentic_calls_are_sent_as_recorded_with_their_session_header_and_gaps() {
    let caches = Caches::new();
    let snapshot = caches.snapshot("Exgentic/agent-llm-traces-v2");
    std::fs::create_dir_all(snapshot.join("data")).expect("data folder");
    std::fs::write(snapshot.join("data/train-00000-of-00001.jsonl"), exgentic_rows()).expect("rows");
    let run = caches.profile(
        "--public-dataset exgentic_v2 --dataset-filter harness=claude_code --dataset-filter benchmark=swebench \
         --endpoint-type chat --concurrency 1 --request-count 3 --export-level raw",
    );
    succeeded(&run);
    assert_eq!(caches.request_count(), 3.0);
    let mut raw = artifact_lines(&caches, "profile_export_raw.jsonl");
    raw.sort_by_key(|line| line["start_perf_ns"].as_u64());
    let header = |line: &Value| {
        let headers = line["request_headers"].as_object().expect("headers");
        let found = headers.iter().find(|(name, _)| name.eq_ignore_ascii_case("x-dynamo-session-id"));
        found.and_then(|(_, value)| value.as_str()).unwrap_or_default().to_string()
    };
    assert_eq!(raw.iter().map(header).collect::<Vec<_>>(), ["s1", "s1", "s3"]);
    let first = &raw[0]["payload"];
    assert_eq!(
        first["messages"],
        serde_json::json!([{"role": "system", "content": "Be brief."}, {"role": "user", "content": "List the files"}])
    );
    assert_eq!(first["tools"][0]["function"]["name"], "ls");
    assert_eq!(first["tools"][0]["function"]["parameters"], serde_json::json!({"type": "object"}));
    assert_eq!((first["temperature"].as_f64(), first["stop"].clone()), (Some(0.5), serde_json::json!(["END"])));
    assert_eq!(first["max_completion_tokens"], 64);
    let second = &raw[1]["payload"];
    assert_eq!(
        second["messages"],
        serde_json::json!([
            {"role": "user", "content": "List the files"},
            {"role": "assistant", "content": "", "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "ls", "arguments": "{\"path\":\".\"}"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "a.txt"},
        ]),
        "the recorded history, not the mock's answer"
    );
    assert_eq!(second["max_completion_tokens"], 10, "the recorded output when no limit was asked");
    assert!(second.get("tools").is_none() && second.get("temperature").is_none());
    assert_eq!(raw[2]["payload"]["messages"][0]["content"], "Third session");

    // The second call waits the recorded gap (1.0 s to 1.5 s) after the first one's answer.
    let mut records = artifact_lines(&caches, "profile_export.jsonl");
    records.sort_by_key(|record| record["metadata"]["request_start_ns"].as_u64());
    let ns = |record: &Value, key: &str| record["metadata"][key].as_u64().expect(key) as f64;
    let gap_ms = (ns(&records[1], "request_start_ns") - ns(&records[0], "request_end_ns")) / 1e6;
    assert!((490.0..800.0).contains(&gap_ms), "gap {gap_ms} ms");

    // AIPerf streams exgentic traces, stopping at the profiling phases' largest request count
    // (else at --num-dataset-entries).
    let plan = |args: &str| {
        let dry = caches.profile(&format!("--public-dataset exgentic_v2 --endpoint-type chat {args} --dry-run"));
        succeeded(&dry);
        serde_json::from_slice::<Value>(&dry.stdout).expect("a plan")["dataset"]["draws"].clone()
    };
    assert_eq!(plan("--request-count 3 --num-dataset-entries 9"), 3);
    assert_eq!(plan("--benchmark-duration 5 --num-dataset-entries 9"), 9);
}

#[test]
fn exgentic_filters_that_match_nothing_name_what_the_traces_hold() {
    let caches = Caches::new();
    let snapshot = caches.snapshot("Exgentic/agent-llm-traces");
    std::fs::write(snapshot.join("train.jsonl"), exgentic_rows()).expect("rows");
    let run = caches.profile("--public-dataset exgentic --dataset-filter source_model=DeepSeek-V3.2 --request-count 2");
    assert_ne!(run.status.code(), Some(0));
    let message = stderr(&run);
    assert!(
        message.contains("no replayable Exgentic spans matched harness=None, source_model=DeepSeek-V3.2")
            && message.contains(
                "available combinations: claude_code/Kimi-K2.5, claude_code/gpt-5.2-2025-12-11, openai_solo/Kimi-K2.5"
            ),
        "{message}"
    );
    let v1_benchmark =
        caches.profile("--public-dataset exgentic --dataset-filter benchmark=swebench --request-count 2");
    assert!(stderr(&v1_benchmark).contains("only supported for Exgentic v2 traces"), "{}", stderr(&v1_benchmark));
    let missing = caches.profile("--public-dataset exgentic-v2 --request-count 2");
    assert!(
        stderr(&missing).contains("huggingface-cli download --repo-type dataset Exgentic/agent-llm-traces-v2"),
        "{}",
        stderr(&missing)
    );
}
