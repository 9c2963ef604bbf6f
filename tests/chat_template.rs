//! `apply_chat_template` end to end against the mock: with a tokenizer whose folder holds a chat
//! template, synthetic prompts are shorter by what the template adds (a conversation's first by
//! more than its later ones), and each request's ISL is its messages, as sent, through the
//! template (here checked against a ChatML rendering written by hand); `aiperf profile
//! --apply-chat-template` is the same switch; a tokenizer without a template counts bare text and
//! says so.

mod common;

use std::collections::BTreeMap;
use std::path::Path;

use aiperf::dataset::tokenizer::Tokenizer;
use common::{aiperf_command, run_scenario};
use serde_json::{Value, json};

const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/trained-bytelevel-bpe-8k.tokenizer.json");
/// ChatML, as Qwen's and many other models' templates write it.
const CHATML: &str = "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] \
    + '<|im_end|>' + '\\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";
const ISL: u64 = 60;

/// The fixture's tokenizer in a folder of its own, with `config` as its tokenizer_config.json.
fn tokenizer_folder(config: Option<Value>) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::copy(FIXTURE, dir.path().join("tokenizer.json")).expect("copy the tokenizer");
    if let Some(config) = config {
        std::fs::write(dir.path().join("tokenizer_config.json"), config.to_string()).expect("write its config");
    }
    dir
}

/// What the template makes of `messages` with the generation prompt, written out by hand.
fn chatml(messages: &[Value]) -> String {
    let mut text: String = messages
        .iter()
        .map(|message| {
            let content = message["content"].as_str().expect("text content");
            format!("<|im_start|>{}\n{content}<|im_end|>\n", message["role"].as_str().expect("a role"))
        })
        .collect();
    text.push_str("<|im_start|>assistant\n");
    text
}

/// A scenario of `sessions` conversations of `turns` turns, counted with `folder`'s tokenizer.
fn scenario(folder: &Path, turns: u32, apply: bool) -> String {
    format!(
        r#"run(#{{
            name: "ct",
            endpoint: endpoint(#{{ url: "mock", kind: "chat", streaming: true }}),
            dataset: synthetic(#{{ isl: fixed({ISL}), osl: fixed(6), seed: 3, entries: 3, turns: {turns} }}),
            phases: [concurrency(#{{ users: 1, requests: {requests} }})],
            tokenizer: "{folder}",
            apply_chat_template: {apply},
            export_level: "raw",
        }});"#,
        requests = 3 * turns,
        folder = folder.display(),
    )
}

/// Each profiled request's ISL and the messages it sent, by x_request_id.
fn sent(run: &common::ScenarioRun) -> BTreeMap<String, (u64, Vec<Value>)> {
    let isl: BTreeMap<String, u64> = run
        .records("ct")
        .iter()
        .map(|line| {
            let id = line["metadata"]["x_request_id"].as_str().expect("an id").to_string();
            (id, line["metrics"]["input_sequence_length"]["value"].as_u64().expect("an ISL"))
        })
        .collect();
    run.raw_sessions("ct")
        .into_values()
        .flatten()
        .map(|line| {
            let id = line["metadata"]["x_request_id"].as_str().expect("an id").to_string();
            let messages = line["payload"]["messages"].as_array().expect("chat messages").clone();
            (id.clone(), (isl[&id], messages))
        })
        .collect()
}

#[test]
fn prompts_are_shortened_by_the_template_and_counted_through_it() {
    let folder = tokenizer_folder(Some(json!({"eos_token": "</s>", "chat_template": CHATML})));
    let tokenizer = Tokenizer::from_path(&folder.path().join("tokenizer.json")).expect("the fixture loads");
    let count = |text: &str| tokenizer.count(text) as u64;

    let run = run_scenario("ct", &scenario(folder.path(), 2, true));
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    let requests = sent(&run);
    assert_eq!(requests.len(), 6);
    let (mut first_prompts, mut later_prompts) = (Vec::new(), Vec::new());
    for (id, (isl, messages)) in &requests {
        // The ISL is what the server's template makes of the messages as they were sent.
        assert_eq!(*isl, count(&chatml(messages)), "{id}: {messages:?}");
        let prompt = count(messages.last().expect("a message")["content"].as_str().expect("text"));
        if messages.len() == 1 { first_prompts.push(prompt) } else { later_prompts.push(prompt) }
    }
    // A message's wrapping and the generation prompt, by hand; the template's overhead is
    // measured on other text, so BPE merges at the edges may move it by a token.
    let wrap = count("<|im_start|>user\nHello<|im_end|>\n") - count("Hello");
    let generation = count("<|im_start|>assistant\n");
    for prompt in &first_prompts {
        assert!(prompt.abs_diff(ISL - wrap - generation) <= 1, "first prompts {first_prompts:?}, wrap {wrap}");
    }
    for prompt in &later_prompts {
        assert!(prompt.abs_diff(ISL - wrap) <= 1, "later prompts {later_prompts:?}, wrap {wrap}");
    }
    assert!(first_prompts.iter().max() < later_prompts.iter().min(), "{first_prompts:?} {later_prompts:?}");
    assert_eq!(run.summary("ct")["input_config"]["tokenizer"]["apply_chat_template"], true);

    // Without the switch the same folder counts bare text, and the prompts are the ISL asked for.
    let plain = run_scenario("ct", &scenario(folder.path(), 1, false));
    assert_eq!(plain.code(), Some(0), "{}", plain.stderr());
    for (id, (isl, messages)) in sent(&plain) {
        assert_eq!(isl, ISL, "{id}");
        assert_eq!(count(messages[0]["content"].as_str().expect("text")), ISL);
    }
    assert!(plain.summary("ct")["input_config"]["tokenizer"].get("apply_chat_template").is_none());
}

#[test]
fn the_profile_flag_applies_it_and_a_tokenizer_without_a_template_says_so() {
    let folder = tokenizer_folder(Some(json!({"chat_template": CHATML})));
    let bare = tokenizer_folder(None);
    let dir = tempfile::tempdir().expect("temp dir");
    let profile = |tokenizer: &Path| {
        aiperf_command(dir.path())
            .args(["profile", "--model", "m", "--url", "mock", "--endpoint-type", "chat", "--request-count", "2"])
            .args(["--synthetic-input-tokens-mean", "40", "--synthetic-input-tokens-stddev", "0"])
            .args(["--output-tokens-mean", "4", "--apply-chat-template", "--tokenizer"])
            .arg(tokenizer)
            .args(["--artifact-dir"])
            .arg(dir.path().join("out"))
            .output()
            .expect("run aiperf profile")
    };
    let isl = |output: &std::process::Output| {
        assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
        let summary = common::read_json(&dir.path().join("out/profile_export_aiperf.json"));
        assert_eq!(summary["input_config"]["tokenizer"]["apply_chat_template"], true);
        common::stat(&summary, "input_sequence_length", "avg")
    };
    let templated = profile(folder.path());
    // The prompt is shorter by the template's tokens, which the ISL then counts again.
    let templated_isl = isl(&templated);
    assert!((templated_isl - 40.0).abs() <= 1.0, "{templated_isl}");

    let untemplated = profile(bare.path());
    assert_eq!(isl(&untemplated), 40.0, "bare text, the prompt as asked");
    let stderr = String::from_utf8_lossy(&untemplated.stderr);
    assert!(stderr.contains("has no chat template") && stderr.contains("counted as bare text"), "{stderr}");
}
