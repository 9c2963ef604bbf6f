//! `aiperf chat` against `aiperf mock` (one message, and a conversation typed on stdin) and
//! `aiperf config init` (list, search, and every bundled template written, checked and dry-run).

mod common;

use std::io::Write;
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::aiperf_command;
use common::mock_process::MockProcess;

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A mock on a free port, answering.
fn mock() -> (MockProcess, u16) {
    let port = TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).expect("a free port").port();
    let process = MockProcess::start(port);
    let deadline = Instant::now() + Duration::from_secs(20);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "the mock never listened on {port}");
        std::thread::sleep(Duration::from_millis(50));
    }
    (process, port)
}

fn chat(port: u16, args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_aiperf"))
        .args(["chat", "--model", "mock-model", "--tokenizer", "builtin", "--url", &format!("127.0.0.1:{port}")])
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start aiperf chat");
    child.stdin.take().expect("stdin").write_all(stdin.as_bytes()).expect("type into the chat");
    child.wait_with_output().expect("aiperf chat")
}

/// Each stats block's (TTFT ms, output tokens, prompt tokens).
fn turns(stdout: &str) -> Vec<(f64, u64, u64)> {
    let number = |line: &str, after: &str| -> f64 {
        line.split(after).nth(1).and_then(|rest| rest.split_whitespace().next()).and_then(|n| n.parse().ok()).unwrap()
    };
    let lines: Vec<&str> = stdout.lines().collect();
    lines
        .iter()
        .enumerate()
        .filter(|(_, line)| line.starts_with("TTFT: "))
        .map(|(i, line)| {
            let tps = lines[i + 1];
            let isl = lines[i + 2..].iter().find(|l| l.starts_with("ISL: ")).expect("an ISL line");
            (number(line, "TTFT: "), number(tps, "(") as u64, number(isl, "ISL: ") as u64)
        })
        .collect()
}

#[test]
fn chat_sends_one_message_and_prints_its_stats() {
    let (_mock, port) = mock();
    let output = chat(port, &["--quick", "hello, who are you?"], "");
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let stdout = text(&output.stdout);
    let turns = turns(&stdout);
    assert_eq!(turns.len(), 1, "{stdout}");
    let (ttft_ms, tokens, _) = turns[0];
    // The mock of tests/common answers after 5 ms, 64 tokens 1 ms apart.
    assert!((4.0..2000.0).contains(&ttft_ms), "{stdout}");
    assert!((50..=80).contains(&tokens), "the builtin tokenizer counts the mock's 64 tokens: {stdout}");
    assert!(stdout.contains("ITL:  ") && stdout.contains("tokens/s"), "{stdout}");
    // --message is the same flag.
    let again = chat(port, &["--message", "hi"], "");
    assert_eq!(turns_of(&again).len(), 1);
}

fn turns_of(output: &Output) -> Vec<(f64, u64, u64)> {
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    turns(&text(&output.stdout))
}

#[test]
fn an_interactive_chat_resends_its_history_unless_told_not_to() {
    let (_mock, port) = mock();
    let typed = "first question here\nsecond question\n";
    let with_history = turns_of(&chat(port, &["--system-prompt", "Be brief."], typed));
    assert_eq!(with_history.len(), 2, "one stats block per typed line");
    assert!(with_history[1].2 > with_history[0].2 + 30, "turn 2 carries turn 1 and its reply: {with_history:?}");
    let stateless = turns_of(&chat(port, &["--no-history"], typed));
    assert_eq!(stateless.len(), 2);
    assert!(stateless[1].2 <= stateless[0].2 + 2, "each message alone: {stateless:?}");
}

#[test]
fn chat_names_a_server_that_does_not_answer() {
    let port = TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).expect("a free port").port();
    let output = chat(port, &["--quick", "hi"], "");
    assert_eq!(output.status.code(), Some(1));
    let stderr = text(&output.stderr);
    assert!(stderr.contains(&format!("127.0.0.1:{port}/v1/chat/completions")), "{stderr}");
}

const TEMPLATE_NAMES: [&str; 27] = [
    "audio_multimodal",
    "embeddings",
    "env_var_production",
    "fixed_schedule",
    "goodput_slo",
    "gpu_telemetry",
    "http_trace_metrics",
    "inline_dataset",
    "jinja2_variables",
    "kv_cache_test",
    "latency_test",
    "long_context",
    "minimal",
    "multi_turn_conversation",
    "multi_url_load_balancing",
    "multimodal_vision",
    "public_dataset",
    "ramping",
    "request_cancellation",
    "scenario_workload_profiles",
    "speed_bench_sweep",
    "sweep_distributions",
    "sweep_with_plot",
    "time_based_soak",
    "trace_replay",
    "user_files",
    "warmup_profiling",
];

fn config(dir: &Path, args: &[&str]) -> Output {
    aiperf_command(dir)
        .arg("config")
        .args(args)
        .env_remove("MODEL_NAME")
        .env_remove("INFERENCE_URL")
        .output()
        .expect("aiperf config")
}

#[test]
fn config_init_lists_and_searches_the_bundled_templates() {
    let dir = tempfile::tempdir().expect("temp dir");
    let listed = config(dir.path(), &["init", "--list", "--verbose"]);
    assert_eq!(listed.status.code(), Some(0));
    let listing = text(&listed.stdout);
    for name in TEMPLATE_NAMES {
        assert!(listing.contains(&format!("  {name} ")), "{name} missing from\n{listing}");
    }
    let getting_started = listing.find("Getting Started").unwrap();
    assert!(getting_started < listing.find("Load Testing").unwrap(), "AIPerf's category order");
    let multimodal = text(&config(dir.path(), &["init", "--list", "--category", "multimodal"]).stdout);
    assert!(multimodal.contains("multimodal_vision") && !multimodal.contains("minimal"), "{multimodal}");
    let found = text(&config(dir.path(), &["init", "--search", "mooncake"]).stdout);
    assert!(found.contains("fixed_schedule") && found.contains("trace_replay") && !found.contains("  minimal "));
    let none = text(&config(dir.path(), &["init", "--search", "no-such-thing"]).stdout);
    assert!(none.contains("No templates match 'no-such-thing'"), "{none}");
    let unknown = config(dir.path(), &["init", "--template", "nope"]);
    assert_eq!(unknown.status.code(), Some(1));
    assert!(text(&unknown.stderr).contains("unknown template 'nope'"));
}

#[test]
fn every_template_is_written_with_model_and_url_and_validates_and_dry_runs() {
    let dir = tempfile::tempdir().expect("temp dir");
    // What the file-based templates read, as small files where they look.
    std::fs::create_dir_all(dir.path().join("data")).unwrap();
    let trace = "{\"timestamp\": 0, \"input_length\": 64, \"output_length\": 8}\n\
                 {\"timestamp\": 100, \"input_length\": 32, \"output_length\": 4}\n";
    std::fs::write(dir.path().join("data/precise_schedule.jsonl"), trace).unwrap();
    std::fs::write(dir.path().join("data/production_trace.jsonl"), trace).unwrap();
    for name in TEMPLATE_NAMES {
        let file = format!("{name}.yaml");
        let written =
            config(dir.path(), &["init", "--template", name, "--model", "my-model", "--url", "mock", "-o", &file]);
        assert_eq!(written.status.code(), Some(0), "{name}: {}", text(&written.stderr));
        let yaml = std::fs::read_to_string(dir.path().join(&file)).unwrap();
        assert!(yaml.contains("model: \"my-model\"") && yaml.contains("url: \"mock\""), "{name}:\n{yaml}");
        let valid = config(dir.path(), &["validate", &file]);
        assert_eq!(valid.status.code(), Some(0), "{name}: {}", text(&valid.stderr));
        let dry = aiperf_command(dir.path())
            .args(["profile", "--config", &file, "--dry-run"])
            .output()
            .expect("aiperf profile --dry-run");
        assert_eq!(dry.status.code(), Some(0), "{name}: {}", text(&dry.stderr));
        assert!(text(&dry.stdout).contains("my-model"), "{name}: the plan names the model");
    }
    // Printed on stdout without --output, the same text.
    let printed = config(dir.path(), &["init", "-t", "minimal", "-m", "my-model", "-u", "mock"]);
    assert_eq!(text(&printed.stdout), std::fs::read_to_string(dir.path().join("minimal.yaml")).unwrap());
}

#[test]
fn the_minimal_template_runs_against_the_mock() {
    let dir = tempfile::tempdir().expect("temp dir");
    let written = config(dir.path(), &["init", "-t", "minimal", "-m", "mock-model", "-u", "mock", "-o", "m.yaml"]);
    assert_eq!(written.status.code(), Some(0));
    let run = aiperf_command(dir.path())
        .args(["profile", "--config", "m.yaml", "--artifact-dir", "out", "--ui-type", "none"])
        .output()
        .expect("aiperf profile");
    assert_eq!(run.status.code(), Some(0), "{}", text(&run.stderr));
    let summary = common::read_json(&dir.path().join("out/profile_export_aiperf.json"));
    assert_eq!(summary["request_count"]["avg"].as_f64(), Some(100.0), "the template's 100 requests");
}

/// A multi-turn run against the built-in mock: 6 sessions of 3 turns, 3 at a time, with the
/// raw export. Its folder, and each session's (x_correlation_id, requests).
fn multi_turn_run(dir: &Path) -> (std::path::PathBuf, Vec<(String, usize)>) {
    let run = aiperf_command(dir)
        .args(["profile", "--model", "mock-model", "--url", "mock", "--endpoint-type", "chat", "--streaming"])
        .args(["--concurrency", "3", "--conversation-num", "6", "--conversation-turn-mean", "3"])
        .args(["--conversation-turn-delay-mean", "30", "--osl", "16", "--export-level", "raw"])
        .args(["--artifact-dir", "run", "--ui-type", "none"])
        .output()
        .expect("aiperf profile");
    assert_eq!(run.status.code(), Some(0), "{}", text(&run.stderr));
    let folder = dir.join("run");
    let mut sessions: std::collections::BTreeMap<String, usize> = Default::default();
    for line in std::fs::read_to_string(folder.join("profile_export.jsonl")).unwrap().lines() {
        let record: serde_json::Value = serde_json::from_str(line).unwrap();
        *sessions.entry(record["metadata"]["x_correlation_id"].as_str().unwrap().to_string()).or_default() += 1;
    }
    (folder, sessions.into_iter().collect())
}

/// Runs of non-white pixels down the PNG's column at SVG x `x_svg` (2 pixels per SVG unit),
/// between SVG heights `from` and `to`.
fn marks_down_column(png: &resvg::tiny_skia::Pixmap, x_svg: f64, from: f64, to: f64) -> usize {
    let x = (x_svg * 2.0) as u32;
    let mut runs = 0;
    let mut inside = false;
    for y in (from * 2.0) as u32..((to * 2.0) as u32).min(png.height()) {
        let pixel = png.pixel(x, y).expect("inside the image");
        let ink = pixel.red() < 240 || pixel.green() < 240 || pixel.blue() < 240;
        if ink && !inside {
            runs += 1;
        }
        inside = ink;
    }
    runs
}

#[test]
fn swim_lane_draws_each_session_once_in_a_lane_of_its_slot() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (folder, sessions) = multi_turn_run(dir.path());
    assert_eq!(sessions.len(), 6);
    let output =
        aiperf_command(dir.path()).args(["analyze", "swim-lane", "run", "--html", "-c", "3"]).output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert!(text(&output.stdout).contains("saved run/swim_lane.png"), "{}", text(&output.stdout));
    let named = aiperf_command(dir.path())
        .args(["analyze", "swim-lane", "--run-dirs", "run", "-o", "named.png"])
        .output()
        .unwrap();
    assert_eq!(named.status.code(), Some(0), "AIPerf's --run-dirs spelling: {}", text(&named.stderr));
    assert!(dir.path().join("named.png").exists());
    let bytes = std::fs::read(folder.join("swim_lane.png")).expect("swim_lane.png");
    let png = resvg::tiny_skia::Pixmap::decode_png(&bytes).expect("the PNG decodes");
    // The lane markers' column (x 56..64 in the SVG) holds one mark per lane: 3 slots for
    // 3 sessions at a time; the lanes sit between the title (y 56) and the lower panel.
    let html = std::fs::read_to_string(folder.join("swim_lane.html")).expect("swim_lane.html");
    let lanes_bottom = html.matches("class=\"lane\"").count() as f64 * 22.0 + 56.0;
    assert_eq!(marks_down_column(&png, 60.0, 50.0, lanes_bottom + 5.0), 3, "one mark per lane in the PNG");
    assert_eq!(html.matches("class=\"lane\"").count(), 3);
    // Every session drawn once, all its requests in one lane, sessions of a lane one after another.
    let mut spans_by_slot: std::collections::BTreeMap<String, Vec<(f64, f64)>> = Default::default();
    for (id, requests) in &sessions {
        let opening = format!("<g class=\"session\" data-session=\"{id}\" data-slot=\"");
        assert_eq!(html.matches(&opening).count(), 1, "session {id} drawn once");
        let group = html.split(&opening).nth(1).unwrap();
        let (slot, group) = group.split_once('"').unwrap();
        let group = group.split("</g>").next().unwrap();
        assert_eq!(group.matches("class=\"turn\"").count(), *requests, "session {id}'s requests");
        let (first_x, last_x) = group
            .split("class=\"turn\" x=\"")
            .skip(1)
            .map(|rest| {
                let x: f64 = rest.split('"').next().unwrap().parse().unwrap();
                let width: f64 = rest.split("width=\"").nth(1).unwrap().split('"').next().unwrap().parse().unwrap();
                (x, x + width)
            })
            .fold((f64::MAX, f64::MIN), |(a, b), (x0, x1)| (a.min(x0), b.max(x1)));
        spans_by_slot.entry(slot.to_string()).or_default().push((first_x, last_x));
    }
    for spans in spans_by_slot.values_mut() {
        spans.sort_by(|a, b| a.0.total_cmp(&b.0));
        assert!(spans.windows(2).all(|w| w[0].1 <= w[1].0 + 0.5), "sessions of one lane overlap: {spans:?}");
    }
    assert!(html.contains("target concurrency (3)") && html.contains("requests in flight (peak 3)"), "the lower panel");
}

#[test]
fn turn_messages_shows_every_turn_and_folds_the_resent_history() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (folder, sessions) = multi_turn_run(dir.path());
    let output = aiperf_command(dir.path()).args(["analyze", "turn-messages", "run", "-n", "4"]).output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let html = std::fs::read_to_string(folder.join("turn_messages.html")).expect("turn_messages.html");
    assert_eq!(html.matches("class=\"conversation\"").count(), 4, "-n 4 of the 6");
    assert!(html.contains("2 more conversations not shown"));
    let turns: usize = sessions.iter().map(|(_, n)| n).sum::<usize>() * 4 / 6;
    assert_eq!(html.matches("class=\"turn\"").count(), turns);
    // The third turn resends the first two user messages and the reply between them.
    assert_eq!(html.matches("3 messages resent from earlier turns").count(), 4, "{html:.2000}");
    // A run without the raw export is named.
    let bare = aiperf_command(dir.path()).args(["analyze", "turn-messages", "nowhere"]).output().unwrap();
    assert_eq!(bare.status.code(), Some(1));
    assert!(text(&bare.stderr).contains("--export-level raw"), "{}", text(&bare.stderr));
}

#[test]
fn plugins_lists_a_categorys_names_as_profile_takes_them() {
    let dir = tempfile::tempdir().expect("tempdir");
    let plugins =
        |args: &[&str]| aiperf_command(dir.path()).arg("plugins").args(args).output().expect("aiperf plugins");
    let datasets = plugins(&["public_dataset_loader"]);
    assert_eq!(datasets.status.code(), Some(0), "{}", text(&datasets.stderr));
    let listing = text(&datasets.stdout);
    assert!(listing.starts_with("public-dataset-loader (42 names): aiperf profile --public-dataset NAME"), "{listing}");
    assert!(listing.contains("librispeech") && listing.contains("openslr/librispeech_asr"), "{listing}");
    // Every name listed for the dataset formats is one `aiperf profile` takes.
    let formats = text(&plugins(&["custom-dataset-loader"]).stdout);
    for name in formats.lines().skip(1).map(str::trim) {
        let dry = aiperf_command(dir.path())
            .args([
                "profile",
                "--model",
                "m",
                "--url",
                "mock",
                "--custom-dataset-type",
                name,
                "--input-file",
                "x.jsonl",
                "--dry-run",
            ])
            .output()
            .expect("aiperf profile");
        assert!(!text(&dry.stderr).contains("--custom-dataset-type: expects one of"), "{name}: {}", text(&dry.stderr));
    }
    let chat = plugins(&["--category", "endpoint", "--name", "chat"]);
    assert_eq!(text(&chat.stdout), "endpoint: chat\n  aiperf profile --endpoint-type chat\n", "AIPerf's flag form");
    let wrong = plugins(&["endpoint", "chta"]);
    assert_eq!(wrong.status.code(), Some(2));
    assert!(text(&wrong.stderr).contains("did you mean `chat`?"), "{}", text(&wrong.stderr));
    assert_eq!(plugins(&["nonsense"]).status.code(), Some(2));
}
