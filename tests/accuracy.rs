//! Accuracy benchmarks end to end: each benchmark's questions in small files the test writes in
//! its Hugging Face layout, asked of the mock in answer mode (a chosen share right), graded,
//! and reported (summary JSON, accuracy CSV, per-answer JSONL, console); the flags and the Rhai
//! form giving the same plan; a threshold on the accuracy failing the run with exit code 99.

mod common;

use std::path::PathBuf;
use std::process::Output;

use common::mock_process::MockProcess;
use common::{aiperf_command, read_json};
use serde_json::{Value, json};

/// A temp folder holding a Hugging Face hub cache (`hub/`).
struct Cache {
    dir: tempfile::TempDir,
}

impl Cache {
    fn new() -> Self {
        Cache { dir: tempfile::tempdir().expect("temp dir") }
    }

    fn hub(&self) -> PathBuf {
        self.dir.path().join("hub")
    }

    /// Writes `rows` as the JSONL file `file` of dataset `repo`'s snapshot.
    fn write(&self, repo: &str, file: &str, rows: &[Value]) {
        let repo_dir = self.hub().join(format!("datasets--{}", repo.replace('/', "--")));
        std::fs::create_dir_all(repo_dir.join("refs")).expect("refs");
        std::fs::write(repo_dir.join("refs/main"), "feedbeef").expect("refs/main");
        let path = repo_dir.join("snapshots/feedbeef").join(file);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("folder");
        let lines: Vec<String> = rows.iter().map(Value::to_string).collect();
        std::fs::write(path, lines.join("\n") + "\n").expect("rows");
    }

    fn command(&self) -> std::process::Command {
        let mut command = aiperf_command(self.dir.path());
        command.env("HF_HUB_CACHE", self.hub());
        command
    }

    fn profile(&self, args: &str) -> Output {
        self.command().arg("profile").args(args.split_whitespace()).output().expect("run aiperf profile")
    }

    fn scenario(&self, source: &str) -> Output {
        let path = self.dir.path().join("scenario.rhai");
        std::fs::write(&path, source).expect("scenario");
        self.command().arg("run").arg(&path).output().expect("run aiperf")
    }

    fn path(&self, relative: &str) -> PathBuf {
        self.dir.path().join(relative)
    }
}

fn text(output: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr))
}

fn mmlu_row(subject: &str, index: usize) -> Value {
    json!({
        "question": format!("{subject} question {index}?"),
        "subject": subject,
        "choices": [format!("a{index}"), format!("b{index}"), format!("c{index}"), format!("d{index}")],
        "answer": index % 4,
    })
}

/// Every benchmark's files, a few questions each, in its repository's layout.
fn write_every_benchmark(cache: &Cache) {
    for subject in ["anatomy", "virology"] {
        let test: Vec<Value> = (0..10).map(|i| mmlu_row(subject, i)).collect();
        cache.write("lighteval/mmlu", &format!("{subject}/test-00000-of-00001.jsonl"), &test);
        let dev: Vec<Value> = (100..105).map(|i| mmlu_row(subject, i)).collect();
        cache.write("lighteval/mmlu", &format!("{subject}/dev-00000-of-00001.jsonl"), &dev);
    }
    let pro = |category: &str, index: usize| {
        let answer = ["A", "B", "C", "D"][index % 4];
        json!({ "question": format!("pro {category} {index}?"), "category": category,
                "options": ["w", "x", "y", "z", "N/A"], "answer": answer,
                "cot_content": "A: Let's think step by step. The answer is (A)." })
    };
    cache.write(
        "TIGER-Lab/MMLU-Pro",
        "data/test-00000-of-00001.jsonl",
        &[pro("math", 0), pro("law", 1), pro("math", 2)],
    );
    cache.write("TIGER-Lab/MMLU-Pro", "data/validation-00000-of-00001.jsonl", &[pro("math", 9), pro("law", 9)]);
    let aime: Vec<Value> = (0..3)
        .map(|i| json!({ "ID": i, "Problem": format!("AIME problem {i}"), "Solution": "Work.", "Answer": 100 + i }))
        .collect();
    cache.write("Maxwell-Jia/AIME_2024", "train.jsonl", &aime);
    let lighteval_aime = |year: u32| -> Vec<Value> {
        (0..2)
            .map(|i| json!({ "problem": format!("{year} problem {i}"), "answer": format!("{}", 7 * (i + 1)) }))
            .collect()
    };
    cache.write("HuggingFaceH4/aime_2024", "data/train-00000-of-00001.jsonl", &lighteval_aime(2024));
    cache.write("yentinglin/aime_2025", "aime2025.jsonl", &lighteval_aime(2025));
    let swag = |label: &str, index: usize| {
        json!({ "ctx": format!("{label} context {index}"), "activity_label": label,
                "endings": ["one", "two", "three", "four"], "label": format!("{}", index % 4) })
    };
    cache.write("Rowan/hellaswag", "data/train-00000-of-00001.jsonl", &[swag("Zumba", 0), swag("Surfing", 1)]);
    cache.write("Rowan/hellaswag", "data/validation-00000-of-00001.jsonl", &[swag("Zumba", 2), swag("Surfing", 3)]);
    let bbh: Vec<Value> = (0..5)
        .map(|i| json!({ "input": format!("True and {i} or False"), "target": if i % 2 == 0 { "True" } else { "False" } }))
        .collect();
    cache.write("lukaemon/bbh", "boolean_expressions/test-00000-of-00001.jsonl", &bbh);
    cache.write("lukaemon/bbh", "navigate/test-00000-of-00001.jsonl", &bbh);
    let math: Vec<Value> = [("Algebra", "\\frac{1}{2}"), ("Geometry", "12\\pi"), ("Algebra", "3")]
        .iter()
        .enumerate()
        .map(|(i, (subject, answer))| {
            json!({ "problem": format!("MATH problem {i}"), "solution": format!("So it is $\\boxed{{{answer}}}$."),
                    "answer": answer, "subject": subject, "level": 3 })
        })
        .collect();
    cache.write("HuggingFaceH4/MATH-500", "test.jsonl", &math);
    let gsm: Vec<Value> = (0..4)
        .map(|i| json!({ "question": format!("How many apples in basket {i}?"), "answer": format!("{i} + 1 = {}\n#### {}", i + 1, i + 1) }))
        .collect();
    cache.write("openai/gsm8k", "main/test-00000-of-00001.jsonl", &gsm);
    let gpqa: Vec<Value> = (0..3)
        .map(|i| {
            json!({ "Question": format!("GPQA {i}?"), "Correct Answer": "right", "Incorrect Answer 1": "wrong one",
                    "Incorrect Answer 2": "wrong two", "Incorrect Answer 3": "wrong three", "High-level domain": "Physics" })
        })
        .collect();
    cache.write("Idavidrein/gpqa", "gpqa_diamond/train-00000-of-00001.jsonl", &gpqa);
    let tests = json!([{ "input": "2 3\n", "output": "5\n", "testtype": "stdin" }]).to_string();
    let lcb = json!({ "question_id": "1", "question_title": "Add", "question_content": "Add two numbers.",
                      "starter_code": "", "difficulty": "easy", "platform": "atcoder",
                      "public_test_cases": tests, "private_test_cases": "[]", "metadata": "{}" });
    cache.write("livecodebench/code_generation_lite", "v4_v5/test.jsonl", &[lcb]);
}

/// The scenario that asks `benchmark` of the built-in mock answering `share` right, and prints
/// its accuracy.
fn answer_scenario(benchmark: &str, share: f64) -> String {
    let tasks = match benchmark {
        "mmlu" => r#", tasks: ["anatomy", "virology"]"#,
        "bigbench" => r#", tasks: "boolean_expressions,navigate""#,
        "hellaswag" => ", n_shots: 2",
        _ => "",
    };
    format!(
        r#"let r = run(#{{ name: "{benchmark}",
            endpoint: endpoint(#{{ url: "mock", model: "m", mock: #{{ ttft: ms(1), itl: ms(1), accuracy_correct: {share} }} }}),
            dataset: accuracy(#{{ benchmark: "{benchmark}"{tasks} }}),
            phases: [concurrency(#{{ users: 3, requests: 1000 }})] }});
        print(`accuracy of {benchmark}: ${{r.accuracy()}} of ${{r.request_count}}`);"#
    )
}

#[test]
fn every_benchmarks_layout_is_read_and_a_mock_answering_all_right_scores_one() {
    let cache = Cache::new();
    write_every_benchmark(&cache);
    let questions = [
        ("mmlu", 20),
        ("mmlu_pro", 3),
        ("aime", 3),
        ("aime24", 2),
        ("aime25", 2),
        ("hellaswag", 2),
        ("bigbench", 10),
        ("math_500", 3),
        ("gsm8k", 4),
        ("gpqa_diamond", 3),
    ];
    for (benchmark, count) in questions {
        let run = cache.scenario(&answer_scenario(benchmark, 1.0));
        let out = text(&run);
        assert_eq!(run.status.code(), Some(0), "{benchmark}: {out}");
        assert!(out.contains(&format!("accuracy of {benchmark}: 1.0 of {count}")), "{benchmark}: {out}");
        let summary = read_json(&cache.path(&format!("artifacts/{benchmark}/profile_export_aiperf.json")));
        assert_eq!(summary["accuracy.overall"]["count"], count, "{benchmark}");
    }
    // Generated code cannot be answered right without solving the problem: the mock's wrong
    // program is run by the code-execution grader and fails.
    let run = cache.scenario(&answer_scenario("lcb_codegeneration", 1.0));
    assert!(text(&run).contains("accuracy of lcb_codegeneration: 0.0 of 1"), "{}", text(&run));
    let graded = std::fs::read_to_string(cache.path("artifacts/lcb_codegeneration/accuracy_export.jsonl")).unwrap();
    let line: Value = serde_json::from_str(graded.lines().next().expect("a graded answer")).unwrap();
    assert_eq!((line["grader_name"].as_str(), line["passed"].as_bool()), (Some("code_execution"), Some(false)));
}

/// The built-in mock as a process of its own, answering 70 % of MMLU's anatomy and virology
/// questions (2 worked examples) right, on its port.
fn mmlu_mock_answering_seventy_percent(cache: &Cache) -> (u16, MockProcess) {
    write_every_benchmark(cache);
    let port = common::closed_port();
    let mock = MockProcess::start_with(
        port,
        &[("HF_HUB_CACHE", cache.hub().as_path())],
        "--accuracy-benchmark mmlu --accuracy-tasks anatomy,virology --accuracy-n-shots 2 --accuracy-correct 0.7",
    );
    (port, mock)
}

/// `accuracy_results.csv` of the 20 questions that mock answers.
const SEVENTY_PERCENT_CSV: &str =
    "task,correct,total,unparsed,accuracy\nanatomy,7,10,0,0.7000\nvirology,7,10,0,0.7000\nOVERALL,14,20,0,0.7000\n";

#[test]
fn mmlu_against_a_mock_answering_seventy_percent_scores_exactly_seventy_per_task() {
    let cache = Cache::new();
    let (port, _mock) = mmlu_mock_answering_seventy_percent(&cache);
    for kind in ["chat", "completions"] {
        let out = format!("out_{kind}");
        let run = cache.profile(&format!(
            "--model m --url http://127.0.0.1:{port} --endpoint-type {kind} --streaming --concurrency 4 \
             --accuracy-benchmark mmlu --accuracy-tasks anatomy,virology --accuracy-n-shots 2 --artifact-dir {out}"
        ));
        assert_eq!(run.status.code(), Some(0), "{kind}: {}", text(&run));
        let summary = read_json(&cache.path(&format!("{out}/profile_export_aiperf.json")));
        assert_eq!(summary["accuracy.overall"]["avg"], 0.7, "{kind}");
        assert_eq!(
            (summary["accuracy.overall"]["count"].as_u64(), summary["accuracy.overall"]["sum"].as_f64()),
            (Some(20), Some(14.0)),
            "{kind}"
        );
        for subject in ["anatomy", "virology"] {
            let task = &summary[format!("accuracy.task.{subject}").as_str()];
            assert_eq!((task["avg"].as_f64(), task["count"].as_u64()), (Some(0.7), Some(10)), "{kind} {subject}");
            assert_eq!(summary["accuracy"]["per_task"][subject]["passed"], 7, "{kind} {subject}");
        }
        assert_eq!(summary["accuracy"]["grader_name"], "multiple_choice");
        assert_eq!(summary["input_config"]["accuracy"]["benchmark"], "mmlu");
        let csv =
            std::fs::read_to_string(cache.path(&format!("{out}/accuracy_results.csv"))).expect("accuracy_results.csv");
        assert_eq!(csv, SEVENTY_PERCENT_CSV, "{kind}");
        let graded: Vec<Value> = std::fs::read_to_string(cache.path(&format!("{out}/accuracy_export.jsonl")))
            .expect("accuracy_export.jsonl")
            .lines()
            .map(|line| serde_json::from_str(line).expect("a JSON line"))
            .collect();
        assert_eq!(graded.len(), 20);
        assert_eq!(graded.iter().filter(|line| line["passed"] == true).count(), 14, "{kind}");
        let records =
            std::fs::read_to_string(cache.path(&format!("{out}/profile_export.jsonl"))).expect("profile_export.jsonl");
        let passed_in_records = records
            .lines()
            .map(|line| serde_json::from_str::<Value>(line).expect("a record"))
            .filter(|record| record["accuracy"]["passed"] == true)
            .count();
        assert_eq!(passed_in_records, 14, "{kind}: each record line carries its grade");
        assert_isl_counts_texts_sent(&records, &read_json(&cache.path(&format!("{out}/inputs.json"))), kind);
        let console = std::fs::read_to_string(cache.path(&format!("{out}/profile_export_console.txt")))
            .unwrap_or_else(|_| text(&run));
        assert!(console.contains("Accuracy Benchmark Results") && console.contains("70.00%"), "{console}");
    }
    // Over completions the few-shot prompt: the instruction, two worked examples from `dev`
    // (those lighteval's sampler picks: the second and the fifth), then the question; over chat
    // the same as lighteval's turns; both with the stop "\n".
    let instruction = "The following are multiple choice questions (with answers) about anatomy.\n\n";
    let (shot_1, shot_2, asked) = (
        "Question: anatomy question 101?\nA. a101\nB. b101\nC. c101\nD. d101\nAnswer:",
        "Question: anatomy question 104?\nA. a104\nB. b104\nC. c104\nD. d104\nAnswer:",
        "Question: anatomy question 0?\nA. a0\nB. b0\nC. c0\nD. d0\nAnswer:",
    );
    let completions = read_json(&cache.path("out_completions/inputs.json"));
    let first = &completions["data"][0]["payloads"][0];
    assert_eq!(first["prompt"], format!("{instruction}{shot_1} B\n\n{shot_2} A\n\n{asked}"));
    assert_eq!(first["stop"], json!(["\n"]));
    let chat = read_json(&cache.path("out_chat/inputs.json"));
    let first = &chat["data"][0]["payloads"][0];
    assert_eq!(
        first["messages"],
        json!([
            {"role": "user", "content": format!("{instruction}{shot_1}")},
            {"role": "assistant", "content": " B"},
            {"role": "user", "content": shot_2},
            {"role": "assistant", "content": " A"},
            {"role": "user", "content": asked},
        ])
    );
    assert_eq!(first["stop"], json!(["\n"]));
}

/// Each record's ISL is its body's texts (`inputs.json`) joined by spaces and counted, as AIPerf
/// counts them: over chat the worked examples' turns, over completions the one prompt.
fn assert_isl_counts_texts_sent(records: &str, inputs: &Value, kind: &str) {
    let tokenizer = aiperf::dataset::tokenizer::Tokenizer::builtin();
    let sent: std::collections::HashMap<&str, &Value> = inputs["data"]
        .as_array()
        .expect("inputs")
        .iter()
        .map(|entry| (entry["session_id"].as_str().expect("session id"), &entry["payloads"][0]))
        .collect();
    for record in records.lines().map(|line| serde_json::from_str::<Value>(line).expect("a record")) {
        let texts =
            aiperf::dataset::input_texts::input_texts(sent[record["metadata"]["conversation_id"].as_str().unwrap()]);
        let isl = record["metrics"]["input_sequence_length"]["value"].as_u64();
        assert_eq!(isl, Some(tokenizer.count(&texts.join(" ")) as u64), "{kind}: {texts:?}");
    }
}

#[test]
fn a_threshold_on_the_accuracy_fails_the_scenario_with_exit_code_99() {
    let cache = Cache::new();
    write_every_benchmark(&cache);
    let source = r#"
        let r = run(#{ name: "gated",
            endpoint: endpoint(#{ url: "mock", model: "m", mock: #{ ttft: ms(1), itl: ms(1), accuracy_correct: 0.5 } }),
            dataset: accuracy(#{ benchmark: "gsm8k" }),
            phases: [concurrency(#{ users: 2, requests: 100 })],
            thresholds: #{ "accuracy.overall": ">= 0.75" } });
        print(`gsm8k: ${r.accuracy("gsm8k")}`);"#;
    let run = cache.scenario(source);
    assert_eq!(run.status.code(), Some(99), "{}", text(&run));
    assert!(text(&run).contains("gsm8k: 0.5"), "{}", text(&run));
}

#[test]
fn check_passes_a_scenario_that_reads_its_accuracy_and_names_one_that_has_none() {
    let cache = Cache::new();
    let check = |source: &str| {
        let path = cache.dir.path().join("checked.rhai");
        std::fs::write(&path, source).expect("scenario");
        cache.command().arg("check").arg(&path).output().expect("run aiperf check")
    };
    let reads_accuracy = |dataset: &str| {
        format!(
            r#"let r = run(#{{ endpoint: endpoint(#{{ url: "mock" }}), dataset: {dataset},
                   phases: [concurrency(#{{ users: 2, requests: 10 }})] }});
               if r.accuracy("anatomy") < 0.5 {{ print(`overall ${{r.accuracy()}}`); }}"#
        )
    };
    let checked = check(&reads_accuracy(r#"accuracy(#{ benchmark: "mmlu", tasks: ["anatomy"] })"#));
    assert_eq!(checked.status.code(), Some(0), "{}", text(&checked));
    let refused = check(&reads_accuracy("synthetic(#{ isl: 8, osl: 4 })"));
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused));
    assert!(text(&refused).contains("is not an accuracy run"), "{}", text(&refused));
}

#[test]
fn the_flags_and_the_rhai_form_give_the_same_plan() {
    let cache = Cache::new();
    write_every_benchmark(&cache);
    let args = "--model m --url mock --concurrency 2 --accuracy-benchmark gsm8k --accuracy-system-prompt Think! \
                --accuracy-verbose --dry-run --emit-scenario out.rhai";
    let emitted = cache.profile(args);
    assert_eq!(emitted.status.code(), Some(0), "{}", text(&emitted));
    let scenario = std::fs::read_to_string(cache.path("out.rhai")).expect("out.rhai");
    assert!(
        scenario.contains(r#"accuracy(#{ benchmark: "gsm8k", system_prompt: "Think!", verbose: true })"#),
        "{scenario}"
    );
    let dry = cache.command().args(["run", "out.rhai", "--dry-run"]).output().expect("dry run");
    assert_eq!(dry.status.code(), Some(0), "{}", text(&dry));
    assert_eq!(String::from_utf8_lossy(&dry.stdout), String::from_utf8_lossy(&emitted.stdout), "the plans differ");
    // The hand-written Rhai form builds the same plan.
    let by_hand = scenario.replace(
        r#"accuracy(#{ benchmark: "gsm8k", system_prompt: "Think!", verbose: true })"#,
        r#"accuracy(#{ verbose: true, system_prompt: "Think!", benchmark: "gsm8k" })"#,
    );
    std::fs::write(cache.path("by_hand.rhai"), by_hand).expect("by_hand.rhai");
    let dry = cache.command().args(["run", "by_hand.rhai", "--dry-run"]).output().expect("dry run");
    assert_eq!(String::from_utf8_lossy(&dry.stdout), String::from_utf8_lossy(&emitted.stdout));
}

#[test]
fn a_benchmark_missing_from_the_cache_names_its_repository_and_how_to_fetch_it() {
    let cache = Cache::new();
    let run = cache.profile("--model m --url mock --request-count 2 --accuracy-benchmark aime24");
    assert_ne!(run.status.code(), Some(0));
    let out = text(&run);
    assert!(
        out.contains("HuggingFaceH4/aime_2024 is not in the cache")
            && out.contains("huggingface-cli download --repo-type dataset HuggingFaceH4/aime_2024"),
        "{out}"
    );
    let unknown = cache.profile("--model m --url mock --accuracy-benchmark mmlu --accuracy-tasks anatomyy");
    assert!(text(&unknown).contains("task `anatomyy` is not one of its tasks"), "{}", text(&unknown));
    let orphan = cache.profile("--model m --url mock --accuracy-n-shots 3");
    assert!(text(&orphan).contains("without accuracy.benchmark"), "{}", text(&orphan));
}

#[test]
fn a_sweep_of_accuracy_runs_charts_the_accuracy_against_the_load() {
    let cache = Cache::new();
    write_every_benchmark(&cache);
    let source = r#"
        sweep(#{ name: "gsm8k_sweep", grid: #{ users: [1, 3] }, report: true }, |v| #{
            endpoint: endpoint(#{ url: "mock", model: "m", mock: #{ ttft: ms(1), itl: ms(1), accuracy_correct: 0.5 } }),
            dataset: accuracy(#{ benchmark: "gsm8k" }),
            phases: [concurrency(#{ users: v.users, requests: 100 })] });"#;
    let run = cache.scenario(source);
    assert_eq!(run.status.code(), Some(0), "{}", text(&run));
    let page = std::fs::read_to_string(cache.path("artifacts/gsm8k_sweep/report.html")).expect("report.html");
    assert!(page.contains("id=\"chart-accuracy-vs-load\""), "no accuracy chart");
    assert!(page.contains(">accuracy<") && page.contains(">50.0%<"), "no accuracy card");
}

#[test]
fn a_config_files_accuracy_block_runs_the_benchmark() {
    let cache = Cache::new();
    write_every_benchmark(&cache);
    let port = common::closed_port();
    let _mock = MockProcess::start_with(
        port,
        &[("HF_HUB_CACHE", cache.hub().as_path())],
        "--accuracy-benchmark mmlu --accuracy-tasks anatomy --accuracy-n-shots 0 --accuracy-enable-cot true \
         --accuracy-grader mmlu_pro --accuracy-correct 1",
    );
    let config = r#"schemaVersion: "2.0"
benchmark:
  model: m
  endpoint:
    urls: ["http://127.0.0.1:PORT"]
    type: chat
  dataset:
    type: synthetic
  accuracy:
    benchmark: mmlu
    tasks: anatomy
    nShots: 0
    enableCot: true
    grader: mmlu_pro
  profiling:
    type: concurrency
    concurrency: 2
"#;
    std::fs::write(cache.path("accuracy.yaml"), config.replace("PORT", &port.to_string())).expect("config");
    let run = cache.profile("--config accuracy.yaml --artifact-dir out");
    assert_eq!(run.status.code(), Some(0), "{}", text(&run));
    let summary = read_json(&cache.path("out/profile_export_aiperf.json"));
    assert_eq!(summary["accuracy.task.anatomy"]["count"], 10, "every anatomy question once");
    assert_eq!(summary["accuracy"]["grader_name"], "mmlu_pro");
    assert_eq!(summary["accuracy.overall"]["avg"], 1.0, "the mock's replies keep to the grader's format");
    let accuracy = &summary["input_config"]["accuracy"];
    assert_eq!((accuracy["n_shots"].as_u64(), accuracy["enable_cot"].as_bool()), (Some(0), Some(true)));
    let inputs = read_json(&cache.path("out/inputs.json"));
    let message = inputs["data"][0]["payloads"][0]["messages"].as_array().and_then(|m| m.last()).cloned().unwrap();
    assert!(message["content"].as_str().unwrap().ends_with("Let's think step by step.\nAnswer:"), "{message}");
}

/// The rows of `tests/fixtures/accuracy_prompts/rows.json` and the prompts (and gold answers)
/// AIPerf 0.13's own loaders build from them (`expected.json`, written by `generate.py` there).
fn fixture(name: &str) -> Value {
    read_json(&PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/accuracy_prompts").join(name))
}

/// Writes `rows` as GPQA's own CSV file, every cell quoted.
fn write_gpqa_csv(cache: &Cache, rows: &[Value]) {
    let columns = ["Question", "Correct Answer", "Incorrect Answer 1", "Incorrect Answer 2", "Incorrect Answer 3"];
    let quoted = |cell: &str| format!("\"{}\"", cell.replace('"', "\"\""));
    let mut csv = columns.map(quoted).join(",") + "\n";
    for row in rows {
        csv += &(columns.map(|column| quoted(row[column].as_str().expect("text"))).join(",") + "\n");
    }
    cache.write("Idavidrein/gpqa", "README.md", &[]);
    let snapshot = cache.hub().join("datasets--Idavidrein--gpqa/snapshots/feedbeef");
    std::fs::write(snapshot.join("gpqa_diamond.csv"), csv).expect("gpqa_diamond.csv");
}

/// The request bodies a run asking `dataset` of the mock (answering all right) over an
/// endpoint of `kind` sent, in dataset order.
fn sent(cache: &Cache, name: &str, kind: &str, dataset: &str) -> Vec<Value> {
    let source = format!(
        r#"run(#{{ name: "{name}",
            endpoint: endpoint(#{{ url: "mock", model: "m", kind: "{kind}",
                                  mock: #{{ ttft: ms(1), itl: ms(1), accuracy_correct: 1.0 }} }}),
            dataset: accuracy(#{{ {dataset} }}),
            phases: [concurrency(#{{ users: 1, requests: 1000 }})] }});"#
    );
    let run = cache.scenario(&source);
    assert_eq!(run.status.code(), Some(0), "{name}: {}", text(&run));
    let inputs = read_json(&cache.path(&format!("artifacts/{name}/inputs.json")));
    inputs["data"].as_array().expect("inputs").iter().map(|entry| entry["payloads"][0].clone()).collect()
}

/// What a chat run asking `dataset` of the mock (answering all right) sent as its last message,
/// in dataset order, and the gold answer each graded line names, by question.
fn asked(cache: &Cache, name: &str, dataset: &str) -> (Vec<String>, Vec<String>) {
    let prompts = sent(cache, name, "chat", dataset)
        .iter()
        .map(|body| {
            let messages = body["messages"].as_array().expect("chat messages");
            messages.last().and_then(|message| message["content"].as_str()).expect("a user message").to_string()
        })
        .collect();
    let graded = std::fs::read_to_string(cache.path(&format!("artifacts/{name}/accuracy_export.jsonl"))).unwrap();
    let mut golds: Vec<(u64, String)> = graded
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).expect("a graded line"))
        .map(|line| (line["session_num"].as_u64().unwrap(), line["expected"].as_str().unwrap_or_default().to_string()))
        .collect();
    golds.sort();
    (prompts, golds.into_iter().map(|(_, gold)| gold).collect())
}

fn texts(value: &Value) -> Vec<String> {
    value.as_array().expect("a list").iter().map(|text| text.as_str().expect("text").to_string()).collect()
}

#[test]
fn prompts_are_the_ones_aiperf_builds_from_the_same_rows() {
    let (rows, expected) = (fixture("rows.json"), fixture("expected.json"));
    let list = |key: &str| rows[key].as_array().expect("rows").clone();
    let cache = Cache::new();
    cache.write("lighteval/mmlu", "anatomy/dev-00000-of-00001.jsonl", &list("mmlu_dev"));
    cache.write("lighteval/mmlu", "anatomy/test-00000-of-00001.jsonl", &list("mmlu_test"));
    for subtask in ["boolean_expressions", "date_understanding"] {
        let subtask_rows = rows["bbh"][subtask].as_array().expect("bbh rows");
        cache.write("lukaemon/bbh", &format!("{subtask}/test-00000-of-00001.jsonl"), subtask_rows);
    }
    cache.write("Rowan/hellaswag", "data/train-00000-of-00001.jsonl", &list("hellaswag_train"));
    cache.write("Rowan/hellaswag", "data/validation-00000-of-00001.jsonl", &list("hellaswag_validation"));
    write_gpqa_csv(&cache, &list("gpqa_diamond"));
    // LiveCodeBench as its repository keeps it: release 4 in test4.jsonl, release 5 in test5.jsonl.
    let lcb = list("lcb");
    cache.write("livecodebench/code_generation_lite", "test4.jsonl", &lcb[..1]);
    cache.write("livecodebench/code_generation_lite", "test5.jsonl", &lcb[1..]);

    // MMLU: lighteval's label-balanced few-shot sampler picks the worked examples; over
    // completions one prompt, over chat lighteval's turns; the stop "\n" without chain of thought.
    for shots in [5, 2] {
        let dataset = format!(r#"benchmark: "mmlu", tasks: ["anatomy"], n_shots: {shots}"#);
        let bodies = sent(&cache, &format!("mmlu{shots}"), "completions", &dataset);
        let prompts: Vec<String> =
            bodies.iter().map(|body| body["prompt"].as_str().expect("a prompt").to_string()).collect();
        assert_eq!(prompts, texts(&expected[format!("mmlu_{shots}_shots").as_str()]), "mmlu, {shots} shots");
        assert!(bodies.iter().all(|body| body["stop"] == json!(["\n"])), "{bodies:?}");
    }
    for (shots, cot) in [(2, false), (0, false), (2, true)] {
        let dataset = format!(r#"benchmark: "mmlu", tasks: ["anatomy"], n_shots: {shots}, cot: {cot}"#);
        let bodies = sent(&cache, &format!("mmlu_chat{shots}{cot}"), "chat", &dataset);
        let aiperfs =
            expected[format!("mmlu_chat_cot_{cot}_{shots}_shots").as_str()].as_array().expect("chat problems");
        assert_eq!(bodies.len(), aiperfs.len(), "mmlu over chat, {shots} shots, cot {cot}");
        for (body, aiperf) in bodies.iter().zip(aiperfs) {
            assert_eq!(body["messages"], aiperf["messages"], "mmlu over chat, {shots} shots, cot {cot}");
            let stop = body.get("stop").cloned().unwrap_or_else(|| json!([]));
            assert_eq!(stop, aiperf["stop"], "mmlu over chat, {shots} shots, cot {cot}");
        }
    }
    // BIG-Bench Hard: DeepEval's prompt files, with and without chain of thought.
    let tasks = r#"tasks: ["boolean_expressions", "date_understanding"]"#;
    let (prompts, golds) = asked(&cache, "bbh_cot", &format!(r#"benchmark: "bigbench", {tasks}"#));
    assert_eq!(prompts, texts(&expected["bigbench_cot_true_3_shots"]));
    assert_eq!(golds, ["False", "True", "(B)"]);
    let (prompts, _) = asked(&cache, "bbh", &format!(r#"benchmark: "bigbench", {tasks}, cot: false, n_shots: 1"#));
    assert_eq!(prompts, texts(&expected["bigbench_cot_false_1_shots"]));
    // HellaSwag: DeepEval's activities in its order, the first train row of each as examples.
    let (prompts, golds) = asked(&cache, "hellaswag", r#"benchmark: "hellaswag", n_shots: 2"#);
    assert_eq!(prompts, aiperfs(&expected, "hellaswag_2_shots", 1));
    assert_eq!(golds, aiperfs(&expected, "hellaswag_2_shots", 2));
    // GPQA from its CSV: the answers where Python's seeded shuffle puts them.
    let (prompts, golds) = asked(&cache, "gpqa", r#"benchmark: "gpqa_diamond""#);
    assert_eq!(prompts, aiperfs(&expected, "gpqa_diamond", 0));
    assert_eq!(golds, aiperfs(&expected, "gpqa_diamond", 1));
    // LiveCodeBench: lighteval's prompt, with and without starter code.
    let (prompts, _) = asked(&cache, "lcb", r#"benchmark: "lcb_codegeneration""#);
    assert_eq!(prompts, texts(&expected["lcb_codegeneration"]));
}

#[test]
fn the_segments_of_an_accuracy_run_merge_into_the_whole_runs_accuracy() {
    let cache = Cache::new();
    let (port, _mock) = mmlu_mock_answering_seventy_percent(&cache);
    let args = format!(
        "--model m --url http://127.0.0.1:{port} --endpoint-type chat --concurrency 3 \
         --accuracy-benchmark mmlu --accuracy-tasks anatomy,virology --accuracy-n-shots 2"
    );
    for (segment, folder) in [("0/2", "s0"), ("1/2", "s1")] {
        let run = cache
            .command()
            .arg("profile")
            .args(args.split_whitespace())
            .args(["--artifact-dir", folder])
            .env("AIPERF_SEGMENT", segment)
            .output()
            .expect("aiperf profile of one segment");
        assert_eq!(run.status.code(), Some(0), "{segment}: {}", text(&run));
    }
    let merged = cache.command().args(["merge", "s0", "s1", "-o", "out"]).output().expect("aiperf merge");
    assert_eq!(merged.status.code(), Some(0), "{}", text(&merged));
    assert!(text(&merged).contains("Accuracy Benchmark Results"), "{}", text(&merged));
    let summary = read_json(&cache.path("out/profile_export_aiperf.json"));
    assert_eq!(
        (summary["accuracy.overall"]["count"].as_u64(), summary["accuracy.overall"]["sum"].as_f64()),
        (Some(20), Some(14.0))
    );
    for subject in ["anatomy", "virology"] {
        assert_eq!(summary["accuracy"]["per_task"][subject]["passed"], 7, "{subject}");
    }
    let csv = std::fs::read_to_string(cache.path("out/accuracy_results.csv")).expect("accuracy_results.csv");
    assert_eq!(csv, SEVENTY_PERCENT_CSV);
    // Each question graded once, under its number in the whole benchmark.
    let graded = std::fs::read_to_string(cache.path("out/accuracy_export.jsonl")).expect("accuracy_export.jsonl");
    let mut questions: Vec<u64> = graded
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).expect("a graded line")["session_num"].as_u64().unwrap())
        .collect();
    questions.sort();
    assert_eq!(questions, (0..20).collect::<Vec<u64>>());
    // The merged records carry each answer's grade, as a live run's do.
    let records = std::fs::read_to_string(cache.path("out/profile_export.jsonl")).expect("merged records");
    let blocks: std::collections::HashMap<String, Value> = records
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).expect("a record"))
        .filter(|record| !record["accuracy"].is_null())
        .map(|record| {
            (record["metadata"]["x_request_id"].as_str().expect("x_request_id").to_string(), record["accuracy"].clone())
        })
        .collect();
    assert_eq!(blocks.len(), 20);
    for line in graded.lines() {
        let answer: Value = serde_json::from_str(line).expect("a graded line");
        let block = &blocks[answer["x_request_id"].as_str().expect("x_request_id")];
        for (in_block, in_export) in
            [("task", "task"), ("passed", "passed"), ("expected", "expected"), ("actual", "actual")]
        {
            assert_eq!(block[in_block], answer[in_export], "{in_block} of {line}");
        }
    }
    assert_eq!(blocks.values().filter(|block| block["passed"] == true).count(), 14);
}

/// Column `column` of each of AIPerf's problems listed under `key` in `expected.json`.
fn aiperfs(expected: &Value, key: &str, column: usize) -> Vec<String> {
    let problems = expected[key].as_array().unwrap_or_else(|| panic!("no {key} in expected.json"));
    problems.iter().map(|problem| problem[column].as_str().expect("text").to_string()).collect()
}

#[test]
fn the_other_benchmarks_prompts_are_aiperfs_too() {
    let (rows, expected) = (fixture("rows.json"), fixture("expected.json"));
    let list = |key: &str| rows[key].as_array().expect("rows").clone();
    let cache = Cache::new();
    cache.write("TIGER-Lab/MMLU-Pro", "data/test-00000-of-00001.jsonl", &list("mmlu_pro_test"));
    cache.write("TIGER-Lab/MMLU-Pro", "data/validation-00000-of-00001.jsonl", &list("mmlu_pro_validation"));
    cache.write("Maxwell-Jia/AIME_2024", "train.jsonl", &list("aime"));
    cache.write("HuggingFaceH4/aime_2024", "data/train-00000-of-00001.jsonl", &list("aime24"));
    cache.write("HuggingFaceH4/MATH-500", "test.jsonl", &list("math_500"));
    cache.write("openai/gsm8k", "main/test-00000-of-00001.jsonl", &list("gsm8k"));

    for cot in [true, false] {
        let (prompts, golds) = asked(&cache, &format!("pro{cot}"), &format!(r#"benchmark: "mmlu_pro", cot: {cot}"#));
        let key = format!("mmlu_pro_cot_{cot}");
        assert_eq!(prompts, aiperfs(&expected, &key, 1), "{key}");
        assert_eq!(golds, aiperfs(&expected, &key, 2), "{key}");
    }
    let (prompts, _) = asked(&cache, "aime", r#"benchmark: "aime""#);
    assert_eq!(prompts, aiperfs(&expected, "aime_cot_true_8_shots", 0));
    let (prompts, _) = asked(&cache, "aime1", r#"benchmark: "aime", n_shots: 1, cot: false"#);
    assert_eq!(prompts, aiperfs(&expected, "aime_cot_false_1_shots", 0));
    let (prompts, _) = asked(&cache, "aime24", r#"benchmark: "aime24""#);
    assert_eq!(prompts, aiperfs(&expected, "aime24", 0));
    let (prompts, _) = asked(&cache, "math", r#"benchmark: "math_500""#);
    assert_eq!(prompts, aiperfs(&expected, "math_500", 1));
    let (prompts, _) = asked(&cache, "gsm8k", r#"benchmark: "gsm8k""#);
    assert_eq!(prompts, aiperfs(&expected, "gsm8k", 0));
}
