//! Several urls per endpoint and the session headers, through the binary against several
//! built-in mocks, each behind a proxy that keeps the requests as they crossed the wire: how
//! each strategy spreads the requests, that a conversation stays on one url, the per-url
//! summary and server metrics, and the headers that carry each conversation's id.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Output;

use aiperf::mock::MockConfig;
use common::tee_proxy::{MockBehindProxy, SentRequest};
use common::{ScenarioRun, aiperf_command, read_json};
use serde_json::Value;

const CHAT: &str = "/v1/chat/completions";

fn mocks(count: usize, ttft_ms: f64) -> Vec<MockBehindProxy> {
    (0..count).map(|_| MockBehindProxy::start(MockConfig { ttft_ms, itl_ms: 1.0, ..MockConfig::default() })).collect()
}

fn profile(dir: &Path, command_line: &str, env: &[(&str, &str)]) -> Output {
    let mut command = aiperf_command(dir);
    command.arg("profile").args(command_line.split_whitespace());
    for (name, value) in env {
        command.env(name, value);
    }
    let output = command.output().expect("run aiperf profile");
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    output
}

/// The one run folder under `dir/artifacts`.
fn run_folder(dir: &Path) -> std::path::PathBuf {
    std::fs::read_dir(dir.join("artifacts")).expect("artifacts").next().expect("a run").expect("entry").path()
}

fn records(folder: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(folder.join("profile_export.jsonl")).expect("profile_export.jsonl");
    text.lines().map(|line| serde_json::from_str(line).expect("a JSON line")).collect()
}

/// The value of `header` on each chat request `server` got.
fn header_values(server: &MockBehindProxy, header: &str) -> Vec<Option<String>> {
    server.posts_to(CHAT).iter().map(|request| request.header(header).map(str::to_owned)).collect()
}

#[test]
fn four_urls_round_robin_as_aiperf_does_with_a_breakdown_by_url() {
    let servers = mocks(4, 2.0);
    let dir = tempfile::tempdir().expect("temp dir");
    let urls: String = servers.iter().map(|server| format!(" --url {}", server.url)).collect();
    let output = profile(
        dir.path(),
        &format!(
            "--model m{urls} --url-strategy round-robin --streaming --concurrency 4 --request-count 237 --isl 16 --osl 4"
        ),
        &[],
    );
    let counts: Vec<usize> = servers.iter().map(|server| server.posts_to(CHAT).len()).collect();
    assert_eq!(counts, [60, 59, 59, 59], "AIPerf's split of 237 requests over four urls");

    let folder = run_folder(dir.path());
    let mut by_index: BTreeMap<u64, (String, usize)> = BTreeMap::new();
    for record in records(&folder) {
        let metadata = &record["metadata"];
        let index = metadata["url_index"].as_u64().expect("each record names its url");
        by_index.entry(index).or_insert((metadata["url"].as_str().unwrap_or_default().to_owned(), 0)).1 += 1;
    }
    let expected: BTreeMap<u64, (String, usize)> =
        servers.iter().enumerate().map(|(index, server)| (index as u64, (server.url.clone(), counts[index]))).collect();
    assert_eq!(by_index, expected);

    let summary = read_json(&folder.join("profile_export_aiperf.json"));
    assert_eq!(summary["request_count"]["avg"], 237.0, "AIPerf's keys stay");
    let by_url = summary["by_url"].as_array().expect("by_url");
    assert_eq!(by_url.len(), 4);
    for (index, url) in by_url.iter().enumerate() {
        assert_eq!(url["url"], servers[index].url);
        assert_eq!(url["request_count"]["avg"], counts[index] as f64, "{url}");
        assert!(url["time_to_first_token"]["avg"].as_f64().unwrap_or(0.0) > 0.0, "{url}");
        assert!(url["request_throughput"]["avg"].as_f64().unwrap_or(0.0) > 0.0, "{url}");
        assert!(url["inter_token_latency"]["p99"].is_f64(), "{url}");
    }
    let console = String::from_utf8_lossy(&output.stdout);
    assert!(console.contains("Metrics by URL") && console.contains(&format!("3 {}", servers[3].url)), "{console}");

    let server_metrics = read_json(&folder.join("server_metrics_export.json"));
    let scraped: BTreeSet<String> = server_metrics["summary"]["endpoints_successful"]
        .as_array()
        .expect("endpoints")
        .iter()
        .filter_map(|url| url.as_str().map(str::to_owned))
        .collect();
    let wanted: BTreeSet<String> = servers.iter().map(|server| format!("{}/metrics", server.url)).collect();
    assert_eq!(scraped, wanted, "every url's /metrics is scraped");
    let series = server_metrics["metrics"]["vllm:request_success"]["series"].as_array().expect("series");
    for (index, server) in servers.iter().enumerate() {
        let endpoint = format!("{}/metrics", server.url);
        let total: f64 = series
            .iter()
            .filter(|series| series["endpoint_url"] == endpoint.as_str())
            .map(|series| series["stats"]["total"].as_f64().unwrap_or(0.0))
            .sum();
        assert_eq!(total, counts[index] as f64, "{endpoint}'s own counter, labelled with its url");
    }
}

/// The chat requests of every server, each with the index of the server that got it.
fn sent_by_url(servers: &[MockBehindProxy]) -> Vec<(usize, SentRequest)> {
    servers
        .iter()
        .enumerate()
        .flat_map(|(index, server)| server.posts_to(CHAT).into_iter().map(move |request| (index, request)))
        .collect()
}

/// Each conversation (by its X-Correlation-ID on the wire): the urls its turns went to, and
/// how many turns it sent.
fn conversations(sent: &[(usize, SentRequest)]) -> BTreeMap<String, (BTreeSet<usize>, usize)> {
    let mut conversations: BTreeMap<String, (BTreeSet<usize>, usize)> = BTreeMap::new();
    for (url, request) in sent {
        let id = request.header("x-correlation-id").expect("every turn carries its conversation's id");
        let entry = conversations.entry(id.to_owned()).or_default();
        entry.0.insert(*url);
        entry.1 += 1;
    }
    conversations
}

#[test]
fn every_turn_of_a_conversation_goes_to_one_url_under_round_robin_and_session() {
    for strategy in ["round-robin", "session"] {
        let servers = mocks(3, 2.0);
        let dir = tempfile::tempdir().expect("temp dir");
        let urls: String = servers.iter().map(|server| format!(" --url {}", server.url)).collect();
        profile(
            dir.path(),
            &format!(
                "--model m{urls} --url-strategy {strategy} --streaming --concurrency 4 --conversation-turn-mean 3 --isl 16 --osl 4 --conversation-num 12"
            ),
            &[],
        );
        let sent = sent_by_url(&servers);
        assert_eq!(sent.len(), 36, "{strategy}");
        let conversations = conversations(&sent);
        assert_eq!(conversations.len(), 12, "{strategy}: twelve conversations of three turns: {conversations:?}");
        for (id, (urls, turns)) in &conversations {
            assert_eq!(urls.len(), 1, "{strategy}: conversation {id} stayed on one url: {urls:?}");
            assert_eq!(*turns, 3, "{strategy}: conversation {id}");
        }
        let used: BTreeSet<usize> = conversations.values().flat_map(|(urls, _)| urls.iter().copied()).collect();
        assert_eq!(used.len(), 3, "{strategy}: the conversations spread over every url");
        if strategy == "round-robin" {
            let counts: Vec<usize> = servers.iter().map(|server| server.posts_to(CHAT).len()).collect();
            assert_eq!(counts, [12, 12, 12], "four conversations each, in turn");
        }
        let exported: BTreeSet<String> = records(&run_folder(dir.path()))
            .iter()
            .map(|record| record["metadata"]["x_correlation_id"].as_str().unwrap_or_default().to_owned())
            .collect();
        let on_the_wire: BTreeSet<String> = conversations.keys().cloned().collect();
        assert_eq!(exported, on_the_wire, "{strategy}: the records' correlation ids are the ones sent");
    }
}

fn run_rhai(name: &str, endpoint_keys: &str, phase: &str) -> ScenarioRun {
    let source = format!(
        r#"run(#{{ name: "{name}", endpoint: endpoint(#{{ model: "m", {endpoint_keys} }}), dataset: synthetic(#{{ isl: 16, osl: 4, seed: 3 }}), phases: [ {phase} ] }});"#
    );
    let run = common::run_scenario(name, &source);
    assert_eq!(run.code(), Some(0), "{name}: {}", run.stderr());
    run
}

#[test]
fn least_in_flight_keeps_requests_off_a_slow_url() {
    let slow = MockBehindProxy::start(MockConfig { ttft_ms: 1000.0, itl_ms: 1.0, ..MockConfig::default() });
    let fast = mocks(2, 2.0);
    let urls = format!(r#""{}", "{}", "{}""#, slow.url, fast[0].url, fast[1].url);
    let run = run_rhai(
        "least",
        &format!(r#"url: [{urls}], url_strategy: "least_in_flight""#),
        "concurrency(#{ users: 3, requests: 90 })",
    );
    let to_slow = slow.posts_to(CHAT).len();
    let to_fast: Vec<usize> = fast.iter().map(|server| server.posts_to(CHAT).len()).collect();
    assert_eq!(to_slow + to_fast.iter().sum::<usize>(), 90);
    assert!(to_slow <= 10, "round robin would send 30 to the slow url; least in flight sent {to_slow}");
    assert!(to_fast.iter().all(|&count| count >= 30), "the fast urls share the rest: {to_fast:?}");
    assert_eq!(run.summary("least")["by_url"].as_array().map(Vec::len), Some(3));
}

/// The requests each id was sent on, by id (every request carries one).
fn turns_by_id(ids: Vec<Option<String>>) -> BTreeMap<String, usize> {
    let mut turns: BTreeMap<String, usize> = BTreeMap::new();
    for id in ids {
        *turns.entry(id.expect("every request carries the id")).or_default() += 1;
    }
    turns
}

/// Two users' 12 requests over 3-turn conversations, an id for each conversation: on each of
/// its turns, so 3 requests an id but for the conversation each user had going when the limit
/// came (as the answers race, the users send 6 and 6 requests, or 7 and 5, or 8 and 4, ...).
fn assert_one_id_per_conversation(turns: &BTreeMap<String, usize>) {
    assert_eq!(turns.values().sum::<usize>(), 12, "{turns:?}");
    assert!(turns.values().all(|&count| count <= 3), "an id on one conversation's turns only: {turns:?}");
    assert!(turns.values().filter(|&&count| count < 3).count() <= 2, "the same id on each of its turns: {turns:?}");
}

#[test]
fn session_headers_carry_the_conversation_id_renamed_and_switched_as_aiperf_does() {
    let server = MockBehindProxy::start(MockConfig { ttft_ms: 2.0, itl_ms: 1.0, ..MockConfig::default() });
    let dir = tempfile::tempdir().expect("temp dir");
    let flags = format!(
        "--model m --url {} --streaming --concurrency 2 --conversation-turn-mean 3 --isl 16 --osl 4 --request-count 12",
        server.url
    );
    profile(dir.path(), &flags, &[]);
    let ids = header_values(&server, "x-correlation-id");
    assert_eq!(ids, header_values(&server, "x-session-affinity"), "AIPerf's default: X-Session-Affinity too");
    assert!(header_values(&server, "x-session-id").iter().all(Option::is_none));
    assert_one_id_per_conversation(&turns_by_id(ids));

    let renamed = MockBehindProxy::start(MockConfig { ttft_ms: 2.0, itl_ms: 1.0, ..MockConfig::default() });
    let dir = tempfile::tempdir().expect("temp dir");
    let switches = [
        ("AIPERF_HTTP_X_SESSION_AFFINITY_FROM_CORRELATION_ID", "false"),
        ("AIPERF_HTTP_X_DYNAMO_SESSION_ID_FROM_CORRELATION_ID", "true"),
        ("AIPERF_HTTP_X_SMG_ROUTING_KEY_FROM_CORRELATION_ID", "1"),
    ];
    profile(
        dir.path(),
        &format!("{} --session-header X-Session-ID", flags.replace(&server.url, &renamed.url)),
        &switches,
    );
    let session_ids = header_values(&renamed, "x-session-id");
    assert_eq!(session_ids.len(), 12);
    assert!(session_ids.iter().all(Option::is_some), "--session-header renames the correlation header");
    assert!(header_values(&renamed, "x-correlation-id").iter().all(Option::is_none));
    assert!(header_values(&renamed, "x-session-affinity").iter().all(Option::is_none), "switched off");
    assert_eq!(header_values(&renamed, "x-dynamo-session-id"), session_ids, "switched on");
    assert_eq!(header_values(&renamed, "x-smg-routing-key"), session_ids, "switched on");
    assert_one_id_per_conversation(&turns_by_id(session_ids));

    let quiet = MockBehindProxy::start(MockConfig { ttft_ms: 2.0, itl_ms: 1.0, ..MockConfig::default() });
    run_rhai(
        "quiet",
        &format!(r#"url: "{}", session_headers: []"#, quiet.url),
        "concurrency(#{ users: 1, requests: 3 })",
    );
    let sent = quiet.posts_to(CHAT);
    assert_eq!(sent.len(), 3);
    assert!(sent.iter().all(|request| request.header("x-correlation-id").is_none()), "none asked for");
    assert!(sent.iter().all(|request| request.header("x-request-id").is_some()), "X-Request-ID stays");
}

#[test]
fn a_config_files_urls_and_session_strategy_send_each_prompt_to_one_url() {
    let servers = mocks(2, 2.0);
    let dir = tempfile::tempdir().expect("temp dir");
    let config = format!(
        r#"schemaVersion: "2.0"
benchmark:
  model: m
  endpoint:
    urls: ["{}", "{}"]
    urlStrategy: session
    type: chat
    streaming: true
  dataset:
    type: synthetic
    entries: 5
    isl: 16
    osl: 4
  profiling:
    type: concurrency
    concurrency: 2
    requests: 40
"#,
        servers[0].url, servers[1].url
    );
    std::fs::write(dir.path().join("urls.yaml"), config).expect("write the config");
    profile(dir.path(), "--config urls.yaml", &[]);
    let sent = sent_by_url(&servers);
    assert_eq!(sent.len(), 40);
    let mut urls_of_prompt: BTreeMap<Vec<u8>, BTreeSet<usize>> = BTreeMap::new();
    for (url, request) in &sent {
        urls_of_prompt.entry(request.body.clone()).or_default().insert(*url);
    }
    assert_eq!(urls_of_prompt.len(), 5, "five prompts");
    assert!(urls_of_prompt.values().all(|urls| urls.len() == 1), "each prompt always at one url: {urls_of_prompt:?}");
    let used: BTreeSet<usize> = urls_of_prompt.values().flatten().copied().collect();
    assert_eq!(used.len(), 2, "the prompts hash to both urls");
}

#[test]
fn the_emitted_scenario_keeps_the_urls_strategy_and_session_headers() {
    let dir = tempfile::tempdir().expect("temp dir");
    let flags = "--model m --url http://127.0.0.1:1 --url 127.0.0.1:2/v1/chat/completions --url-strategy least-in-flight --session-header X-Session-ID --request-count 4 --dry-run --emit-scenario out.rhai";
    let profiled = profile(dir.path(), flags, &[("AIPERF_HTTP_X_DYNAMO_SESSION_ID_FROM_CORRELATION_ID", "on")]);
    let plans = String::from_utf8_lossy(&profiled.stdout).to_string();
    for shown in [r#""more_urls":["http://127.0.0.1:2"]"#, r#""url_strategy":"least_in_flight""#] {
        assert!(plans.replace([' ', '\n'], "").contains(shown), "{shown} in {plans}");
    }
    let scenario = std::fs::read_to_string(dir.path().join("out.rhai")).expect("out.rhai");
    assert!(
        scenario.contains(r#"session_headers: ["X-Session-ID", "X-Session-Affinity", "X-Dynamo-Session-ID"]"#),
        "{scenario}"
    );
    let dry = aiperf_command(dir.path()).args(["run", "out.rhai", "--dry-run"]).output().expect("dry run");
    assert_eq!(dry.status.code(), Some(0), "{}", String::from_utf8_lossy(&dry.stderr));
    assert_eq!(String::from_utf8_lossy(&dry.stdout), plans, "the scenario builds the same plans, switches or not");
}

#[test]
fn impossible_url_settings_are_refused_with_what_to_do() {
    let dir = tempfile::tempdir().expect("temp dir");
    let refused = |flags: &str, env: &[(&str, &str)]| {
        let mut command = aiperf_command(dir.path());
        command.arg("profile").args(flags.split_whitespace()).envs(env.iter().copied());
        let output = command.output().expect("run aiperf profile");
        assert_eq!(output.status.code(), Some(2), "{flags}");
        String::from_utf8_lossy(&output.stderr).to_string()
    };
    let mixed = refused("--model m --url mock --url http://127.0.0.1:1 --dry-run", &[]);
    assert!(mixed.contains("`mock` is the one built-in server"), "{mixed}");
    let strategy = refused("--model m --url mock --url-strategy random --dry-run", &[]);
    assert!(strategy.contains("round-robin"), "{strategy}");
    let switch =
        refused("--model m --url mock --dry-run", &[("AIPERF_HTTP_X_SESSION_ID_FROM_CORRELATION_ID", "maybe")]);
    assert!(switch.contains("AIPERF_HTTP_X_SESSION_ID_FROM_CORRELATION_ID") && switch.contains("maybe"), "{switch}");
    let header = refused("--model m --url mock --session-header X@Session --dry-run", &[]);
    assert!(header.contains(r#"session header "X@Session" is not a valid HTTP header name"#), "{header}");

    let bad_rhai = common::run_scenario(
        "bad",
        r#"run(#{ name: "bad", endpoint: endpoint(#{ url: ["http://127.0.0.1:1", 2] }), dataset: synthetic(#{ isl: 8, osl: 2 }), phases: [ concurrency(#{ users: 1, requests: 1 }) ] });"#,
    );
    assert_ne!(bad_rhai.code(), Some(0));
    assert!(bad_rhai.stderr().contains("`url` must hold strings"), "{}", bad_rhai.stderr());
}

#[test]
fn the_pre_flight_check_asks_every_url() {
    let up = mocks(1, 2.0);
    let down = format!("http://127.0.0.1:{}", common::closed_port());
    let dir = tempfile::tempdir().expect("temp dir");
    let output = aiperf_command(dir.path())
        .arg("profile")
        .args(["--model", "m", "--url", &up[0].url, "--url", &down, "--request-count", "2"])
        .output()
        .expect("run aiperf profile");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(69), "{stderr}");
    assert!(stderr.contains(&format!("the endpoint {down} does not answer")), "{stderr}");
    assert!(up[0].posts_to(CHAT).is_empty(), "nothing was sent");
}
