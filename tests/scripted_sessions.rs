//! Scripted sessions against the mock: a tool-call loop of known depth (the mock counts the
//! tool results each turn's history brought back), the same agent over the Messages and
//! Responses APIs and across the three chat APIs in one session, a RAG pipeline over three endpoints in one
//! session, a script error that ends one session only, and 10,000 sessions at once.

mod common;

use std::io::{Read, Write};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::scripted_server::{Reply, ScriptedServer};
use common::{closed_port, run_scenario, stat};
use serde_json::{Value, json};

/// `aiperf mock` on `port` with `args`, its open-file limit raised to `files`; killed when dropped.
struct Mock(Child);

impl Mock {
    fn start(port: u16, files: u32, args: &str) -> Self {
        let command = format!("ulimit -n {files} && exec {} mock --port {port} {args}", env!("CARGO_BIN_EXE_aiperf"));
        let child = Command::new("bash")
            .args(["-c", &command])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn aiperf mock");
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "the mock did not start");
            std::thread::sleep(Duration::from_millis(50));
        }
        Self(child)
    }

    /// The value of the Prometheus sample `name` (summed over its labels).
    fn metric(port: u16, name: &str) -> f64 {
        let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).expect("connect");
        write!(stream, "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").expect("request");
        let mut text = String::new();
        stream.read_to_string(&mut text).expect("response");
        text.lines()
            .filter(|line| line.starts_with(name) && line[name.len()..].starts_with(['{', ' ']))
            .filter_map(|line| line.rsplit(' ').next()?.parse::<f64>().ok())
            .sum()
    }
}

impl Drop for Mock {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn scripted(summary: &Value) -> &Value {
    &summary["phases"][0]["scripted_sessions"]
}

/// The error that ended the one failed session of four in `run_name`; the run itself succeeded.
fn the_one_failed_session_s_error(run: &common::ScenarioRun, run_name: &str) -> String {
    assert_eq!(run.code(), Some(0), "one session's error does not fail the run: {}", run.stderr());
    let sessions = scripted(&run.summary(run_name)).clone();
    assert_eq!((sessions["completed"].as_u64(), sessions["failed"].as_u64()), (Some(3), Some(1)), "{sessions}");
    sessions["errors"][0]["message"].as_str().unwrap_or("").to_string()
}

#[test]
fn a_tool_call_loop_of_known_depth_resends_its_history_on_every_turn() {
    let port = closed_port();
    let _mock = Mock::start(port, 4096, "--ttft-ms 5 --itl-ms 1");
    let run = run_scenario(
        "agent",
        &format!(
            r#"
let target = endpoint(#{{ url: "http://127.0.0.1:{port}", model: "m", kind: "chat", streaming: true }});
const TOOLS = [#{{ type: "function", function: #{{ name: "search", parameters: #{{ type: "object" }} }} }}];
let agent = |s| {{
    let r = s.chat(#{{ messages: [user("find it")], tools: TOOLS, max_tokens: 16, extra: #{{ mock_tool_depth: 3 }}, tag: "plan" }});
    while r.tool_calls.len() > 0 && s.turn < 10 {{
        s.wait(ms(5));
        if r.tool_calls[0].name != "search" || r.tool_calls[0].args.step != s.turn - 1 {{ throw "unexpected call"; }}
        r = s.chat(#{{ tool_results: r.tool_calls.map(|c| `found ${{c.id}}`), extra: #{{ mock_tool_depth: 3 }}, tag: "act" }});
    }}
    s.state = #{{ last: r.text }};
    if s.state.last == "" {{ throw "no text at the end"; }}
}};
run(#{{ name: "agent", endpoint: target, preflight: false, server_metrics: #{{ enabled: false }},
        phases: [users(#{{ users: 3, session: agent, sessions: 6 }})] }});
"#
        ),
    );
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    let summary = run.summary("agent");
    assert_eq!(stat(&summary, "request_count", "avg"), 24.0, "6 sessions of 3 tool calls and an answer");
    let sessions = scripted(&summary);
    assert_eq!((sessions["started"].as_u64(), sessions["completed"].as_u64()), (Some(6), Some(6)), "{sessions}");
    assert_eq!(sessions["tool_calls"].as_u64(), Some(18));
    assert_eq!(sessions["steps_per_session"]["avg"].as_f64(), Some(4.0));
    assert_eq!(
        (sessions["steps"]["plan"]["requests"].as_u64(), sessions["steps"]["act"]["requests"].as_u64()),
        (Some(6), Some(18))
    );
    assert_eq!(Mock::metric(port, "mock:tool_calls_total"), 18.0);
    // Turn k's history holds the k results so far: 0 + 1 + 2 + 3 per session.
    assert_eq!(Mock::metric(port, "mock:tool_results_received_total"), 36.0, "each turn resent the whole history");
    let records = run.records("agent");
    let mut turns: Vec<(String, u64)> = records
        .iter()
        .map(|r| {
            (
                r["metadata"]["conversation_id"].as_str().unwrap_or("").to_string(),
                r["metadata"]["turn_index"].as_u64().unwrap_or(99),
            )
        })
        .collect();
    turns.sort();
    assert_eq!(turns.iter().filter(|(_, turn)| *turn == 3).count(), 6, "each session's steps are one conversation");
    for record in records.iter().filter(|r| r["metadata"]["turn_index"].as_u64() < Some(3)) {
        let output_tokens = record["metrics"]["output_sequence_length"]["value"].as_u64();
        assert!(output_tokens > Some(0), "a tool call's name and arguments are output tokens: {record}");
        // The mock streams a call as it decodes it, an event a token, the last due `ttft` (5 ms)
        // + a token every `itl` (1 ms) after the request came (a busy machine may send late
        // tokens together, so the gaps between events are not checked).
        let events = record["metrics"]["inter_chunk_latency"]["value"].as_array().map_or(0, Vec::len) + 1;
        assert_eq!(Some(events as u64), output_tokens, "a tool call's pieces come a token an event: {record}");
        let latency_ms = record["metrics"]["request_latency"]["value"].as_f64().unwrap_or(0.0);
        let last_due_ms = 5.0 + (events - 1) as f64;
        assert!(
            latency_ms >= last_due_ms - 0.5,
            "not at once: {latency_ms} ms, the last due at {last_due_ms}: {record}"
        );
    }
}

/// One agent function against the mock's Messages and Responses APIs, streamed and whole, and
/// one session moving between the three chat APIs step by step: every call read from each
/// API's answer, every history sent back in each API's shape (the mock counts the results it
/// holds), and every prompt counted as the server counts it.
#[test]
fn one_agent_drives_messages_and_responses_endpoints_and_moves_between_the_three_apis() {
    let port = closed_port();
    let _mock = Mock::start(port, 4096, "--ttft-ms 1 --itl-ms 0");
    let run = run_scenario(
        "apis",
        &format!(
            r#"
let url = "http://127.0.0.1:{port}";
const TOOLS = [#{{ type: "function", function: #{{ name: "search", description: "Looks it up.", parameters: #{{ type: "object" }} }} }}];
fn to(url, kind, streaming) {{ endpoint(#{{ url: url, model: "m", kind: kind, streaming: streaming }}) }}
let ends = [to(url, "messages", true), to(url, "responses", false), to(url, "chat", true)];
let agent = |s| {{
    let r = s.chat(#{{ messages: [system("Be brief."), user("find it")], tools: TOOLS, max_tokens: 16,
                      extra: #{{ mock_tool_depth: 3 }}, tag: "plan" }});
    while r.tool_calls.len() > 0 && s.turn < 10 {{
        if r.tool_calls[0].name != "search" || r.tool_calls[0].args.step != s.turn - 1 {{ throw `unexpected call ${{r.tool_calls}}`; }}
        r = s.chat(#{{ tool_results: r.tool_calls.map(|c| `found ${{c.id}}`), extra: #{{ mock_tool_depth: 3 }}, tag: "act" }});
    }}
    if r.text == "" {{ throw "no text at the end"; }}
}};
let mixed = |s| {{
    let r = s.chat(#{{ user: "find it", tools: TOOLS, max_tokens: 8, endpoint: ends[0], extra: #{{ mock_tool_depth: 3 }} }});
    while r.tool_calls.len() > 0 && s.turn < 10 {{
        r = s.chat(#{{ tool_results: ["found"], endpoint: ends[s.turn % 3], extra: #{{ mock_tool_depth: 3 }} }});
    }}
    if r.text == "" {{ throw "no text at the end"; }}
}};
for kind in ["messages", "responses"] {{
    for streaming in [true, false] {{
        run(#{{ name: `${{kind}}_${{streaming}}`, endpoint: to(url, kind, streaming), preflight: false,
                server_metrics: #{{ enabled: false }}, phases: [users(#{{ users: 2, session: agent, sessions: 4 }})] }});
    }}
}}
run(#{{ name: "mixed", endpoint: to(url, "chat", true), preflight: false, server_metrics: #{{ enabled: false }},
        phases: [users(#{{ users: 2, session: mixed, sessions: 4 }})] }});
// Texts the other APIs write otherwise: spaced arguments (a Messages input is an object), an
// empty tool result and an empty answer text beside calls (neither API's count has them), an
// empty system prompt first (a Messages body leaves it out, so ":-)" opens it without a space).
let odd = |s| {{
    let spaced = #{{ id: "c0", type: "function", function: #{{ name: "search", arguments: "{{ \"q\" :  \"x\" }}" }} }};
    let r = s.chat(#{{ messages: [system(""), user(":-)"), #{{ role: "assistant", content: "", tool_calls: [spaced] }},
                                  #{{ role: "tool", tool_call_id: "c0", content: "" }}],
                      tools: TOOLS, max_tokens: 8, endpoint: ends[2], extra: #{{ mock_tool_depth: 3 }} }});
    r = s.chat(#{{ tool_results: [""], endpoint: ends[1], extra: #{{ mock_tool_depth: 3 }} }});
    r = s.chat(#{{ tool_results: [""], endpoint: ends[0], extra: #{{ mock_tool_depth: 3 }} }});
}};
run(#{{ name: "odd", endpoint: to(url, "chat", true), preflight: false, server_metrics: #{{ enabled: false }},
        phases: [users(#{{ users: 1, session: odd, sessions: 1 }})] }});
"#
        ),
    );
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    for name in ["messages_true", "messages_false", "responses_true", "responses_false", "mixed"] {
        let summary = run.summary(name);
        let sessions = scripted(&summary);
        assert_eq!(
            (sessions["completed"].as_u64(), sessions["tool_calls"].as_u64()),
            (Some(4), Some(12)),
            "{name}: {sessions}"
        );
        assert_eq!(stat(&summary, "request_count", "avg"), 16.0, "{name}: 4 sessions of 3 calls and an answer");
        for record in run.records(name) {
            let value = |metric: &str| record["metrics"][metric]["value"].as_u64();
            assert!(value("output_sequence_length") > Some(0), "{name}: {record}");
            assert_eq!(
                value("input_sequence_length"),
                value("usage_prompt_tokens"),
                "{name}: counted as the server counts: {record}"
            );
        }
    }
    let odd = run.records("odd");
    assert_eq!(odd.len(), 3);
    for record in odd {
        let value = |metric: &str| record["metrics"][metric]["value"].as_u64();
        assert_eq!(value("input_sequence_length"), value("usage_prompt_tokens"), "odd texts: {record}");
    }
    assert_eq!(Mock::metric(port, "mock:tool_calls_total"), 60.0 + 2.0);
    // Turn k's history holds the k results so far, in each API's shape: 0 + 1 + 2 + 3 a session
    // (and the odd session's 1 + 2 + 3).
    assert_eq!(
        Mock::metric(port, "mock:tool_results_received_total"),
        120.0 + 6.0,
        "each turn resent the whole history"
    );
}

#[test]
fn an_agent_that_thinks_sends_each_answer_s_reasoning_back_through_its_tool_loop_on_both_apis_and_reads_it_on_chat() {
    let port = closed_port();
    let _mock = Mock::start(port, 4096, "--ttft-ms 1 --itl-ms 0");
    let run = run_scenario(
        "thinking",
        &format!(
            r#"
const TOOLS = [#{{ type: "function", function: #{{ name: "search", parameters: #{{ type: "object" }} }} }}];
let asks = #{{ messages: #{{ mock_tool_depth: 3, thinking: #{{ type: "enabled", budget_tokens: 4 }} }},
               responses: #{{ mock_tool_depth: 3, reasoning: #{{ effort: "low" }} }},
               chat: #{{ mock_tool_depth: 3, reasoning_effort: "low" }} }};
fn agent_for(think, tools) {{
    |s| {{
        let r = s.chat(#{{ messages: [system("Be brief."), user("find it")], tools: tools, max_tokens: 32, extra: think }});
        while r.tool_calls.len() > 0 && s.turn < 10 {{
            if r.reasoning == "" {{ throw "a call without reasoning"; }}
            r = s.chat(#{{ tool_results: r.tool_calls.map(|c| `found ${{c.id}}`), max_tokens: 32, extra: think }});
            if !r.ok {{ throw `refused: ${{r.error}}`; }}
        }}
        if r.text == "" {{ throw "no text at the end"; }}
    }}
}}
for kind in ["messages", "responses", "chat"] {{
    for streaming in [true, false] {{
        let ep = endpoint(#{{ url: "http://127.0.0.1:{port}", model: "m", kind: kind, streaming: streaming }});
        run(#{{ name: `${{kind}}_${{streaming}}`, endpoint: ep, preflight: false, server_metrics: #{{ enabled: false }},
                phases: [users(#{{ users: 2, session: agent_for(asks[kind], TOOLS), sessions: 4 }})] }});
    }}
}}
"#
        ),
    );
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    for (name, reasoning_tokens) in [
        ("messages_true", 4),
        ("messages_false", 4),
        ("responses_true", 16),
        ("responses_false", 16),
        ("chat_true", 16),
        ("chat_false", 16),
    ] {
        let summary = run.summary(name);
        let sessions = scripted(&summary);
        assert_eq!(
            (sessions["completed"].as_u64(), sessions["failed"].as_u64(), sessions["tool_calls"].as_u64()),
            (Some(4), Some(0), Some(12)),
            "{name}: the Messages mock refuses a tool result whose call's thinking was not sent back: {sessions}"
        );
        for record in run.records(name) {
            let value = |metric: &str| record["metrics"][metric]["value"].as_u64();
            assert_eq!(
                value("reasoning_token_count"),
                Some(reasoning_tokens),
                "{name}: every answer reasoned: {record}"
            );
            assert_eq!(value("input_sequence_length"), value("usage_prompt_tokens"), "{name}: {record}");
        }
    }
    // Step k of a session sends back the k answers before it, each with its reasoning: 0 + 1 + 2 + 3
    // (chat has no place for it, so its two runs send none back).
    assert_eq!(Mock::metric(port, "mock:reasoning_received_total"), 4.0 * 4.0 * 6.0);
    assert_eq!(Mock::metric(port, "mock:tool_results_received_total"), 6.0 * 4.0 * 6.0);
}

#[test]
fn a_rag_pipeline_calls_three_endpoints_in_one_session_with_a_breakdown_by_step() {
    let run = run_scenario(
        "rag",
        r#"
let llm = endpoint(#{ url: "mock", model: "m", kind: "chat", streaming: true, mock: #{ ttft: ms(5), itl: ms(1) } });
let embedder = endpoint(#{ url: "mock", model: "e", kind: "embeddings" });
let reranker = endpoint(#{ url: "mock", model: "r", kind: "rankings", dialect: "cohere" });
let rag = |s| {
    let e = s.embed(#{ endpoint: embedder, input: ["what is x?", "x"], tag: "embed" });
    let k = s.rerank(#{ endpoint: reranker, query: "what is x?", documents: ["x is 1", "y is 2", "z"], tag: "rerank" });
    if !e.ok || !k.ok { throw `a step failed: ${e.error} ${k.error}`; }
    s.chat(#{ messages: [system("x is 1"), user("what is x?")], max_tokens: 8, tag: "generate" });
};
run(#{ name: "rag", endpoint: llm, report: true, phases: [users(#{ users: 2, session: rag, sessions: 5 })] });
"#,
    );
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    let summary = run.summary("rag");
    assert_eq!(stat(&summary, "request_count", "avg"), 15.0);
    let sessions = scripted(&summary);
    assert_eq!(sessions["completed"].as_u64(), Some(5), "{sessions}");
    for tag in ["embed", "rerank", "generate"] {
        let step = &sessions["steps"][tag];
        assert_eq!((step["requests"].as_u64(), step["errors"].as_u64()), (Some(5), Some(0)), "{tag}: {step}");
        assert!(step["latency_ms"]["p50"].as_f64().unwrap_or(0.0) > 0.0, "{tag}: {step}");
    }
    assert!(sessions["steps"]["generate"]["ttft_ms"]["avg"].as_f64().unwrap_or(0.0) >= 5.0, "the mock's TTFT");
    assert!(sessions["session_latency_ms"]["avg"].as_f64().unwrap_or(0.0) >= 15.0, "three steps of at least 5 ms");
    assert!(run.stdout().contains("Scripted sessions (users): 5 started, 5 completed"), "{}", run.stdout());
    assert!(sessions["peak_live"].as_u64().is_some_and(|peak| (1..=2).contains(&peak)), "two users: {sessions}");
    // Each record names its step, and the other endpoints' records where they went (the mock
    // serves all three; the run's own endpoint's records name none).
    let mut by_tag: std::collections::BTreeMap<String, Vec<Option<String>>> = Default::default();
    for record in run.records("rag") {
        let metadata = &record["metadata"];
        let tag = metadata["step_tag"].as_str().expect("each record names its step").to_string();
        // Only the chat step generates tokens: the others' records have no OSL (as an
        // embeddings or rerank run's), so the run's OSL is the chat answers' alone.
        let osl = record["metrics"].get("output_sequence_length");
        assert_eq!(osl.is_some(), tag == "generate", "{tag}: {record}");
        by_tag.entry(tag).or_default().push(metadata["step_endpoint"].as_str().map(str::to_string));
        assert!(metadata.get("url").is_none(), "not in the run's urls' breakdown: {metadata}");
    }
    assert_eq!(stat(&summary, "output_sequence_length", "min"), 8.0, "the chat answers' 8 tokens");
    assert_eq!(by_tag.keys().collect::<Vec<_>>(), ["embed", "generate", "rerank"]);
    assert!(by_tag["generate"].iter().all(Option::is_none), "{by_tag:?}");
    for tag in ["embed", "rerank"] {
        let urls = &by_tag[tag];
        assert_eq!(urls.len(), 5, "{tag}");
        assert!(
            urls.iter().all(|url| url.as_deref().is_some_and(|url| url.starts_with("http://127.0.0.1:"))),
            "{urls:?}"
        );
    }
    let page = std::fs::read_to_string(run.artifacts("rag").join("report.html")).expect("report.html");
    assert!(
        page.contains("Scripted sessions (users): 5 started, 5 completed, 0 failed"),
        "the report shows the sessions"
    );
    for tag in ["embed", "rerank", "generate"] {
        assert!(page.contains(&format!("<tr><td>{tag}</td><td>5</td><td>0</td>")), "the report's row of {tag}");
    }
    // The CSV carries them too, after the metrics' rows.
    let csv = std::fs::read_to_string(run.artifacts("rag").join("profile_export_aiperf.csv")).expect("csv");
    for row in ["Sessions Completed,5.00", "Step rerank Requests,5.00", "Step generate Errors,0.00"] {
        assert!(csv.contains(&format!("{row}\r\n")), "{row}: {csv}");
    }
    assert!(
        csv.contains("\r\nSession Latency (ms),") && csv.contains("\r\nStep generate Time to First Token (ms),"),
        "{csv}"
    );
}

/// A streamed chat step from a run whose own endpoint embeds (and streams nothing): the chat
/// records get their TTFT and token metrics, the embeddings records neither; and a chat step
/// to an endpoint that does not stream gets its token metrics but no TTFT, in its record, its
/// answer or the step's breakdown.
#[test]
fn a_streamed_chat_step_in_an_embeddings_run_is_measured_as_a_streamed_chat_request() {
    let run = run_scenario(
        "embedding_run",
        r#"
let embedder = endpoint(#{ url: "mock", model: "e", kind: "embeddings", mock: #{ ttft: ms(3), itl: ms(1) } });
let llm = endpoint(#{ url: "mock", model: "m", kind: "chat", streaming: true });
let whole = endpoint(#{ url: "mock", model: "m", kind: "chat", streaming: false });
let session = |s| {
    s.embed(#{ input: ["what is x?"] });
    let streamed = s.chat(#{ endpoint: llm, user: "what is x?", max_tokens: 8 });
    let came_whole = s.chat(#{ endpoint: whole, user: "and y?", max_tokens: 8, tag: "whole" });
    if streamed.ttft_ms == () || came_whole.ttft_ms != () { throw `ttft ${streamed.ttft_ms} ${came_whole.ttft_ms}`; }
};
run(#{ name: "embedding_run", endpoint: embedder, phases: [users(#{ users: 2, session: session, sessions: 4 })] });
"#,
    );
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    let records = run.records("embedding_run");
    assert_eq!(records.len(), 12);
    for record in &records {
        let tag = record["metadata"]["step_tag"].as_str().unwrap_or_default();
        let metrics = &record["metrics"];
        for metric in ["time_to_first_token", "inter_token_latency"] {
            assert_eq!(metrics.get(metric).is_some(), tag == "chat", "{metric}: {record}");
        }
        assert_eq!(metrics.get("output_sequence_length").is_some(), tag != "embed", "{record}");
        if tag == "chat" {
            assert_eq!(metrics["output_sequence_length"]["value"], 8, "{record}");
            assert!(
                metrics["time_to_first_token"]["value"].as_f64().unwrap_or(0.0) >= 3.0,
                "the mock's TTFT: {record}"
            );
        }
    }
    let summary = run.summary("embedding_run");
    assert_eq!(stat(&summary, "output_sequence_length", "min"), 8.0);
    let steps = &scripted(&summary)["steps"];
    assert!(steps["chat"]["ttft_ms"].is_object() && steps["whole"].get("ttft_ms").is_none(), "{steps}");
    // No phase reads the dataset: none is built, and inputs.json lists no unsent prompts.
    assert!(run.stderr().contains("dataset   none read (every phase runs a session function)"), "{}", run.stderr());
    let inputs = std::fs::read_to_string(run.artifacts("embedding_run").join("inputs.json")).expect("inputs.json");
    let inputs: serde_json::Value = serde_json::from_str(&inputs).expect("JSON");
    assert_eq!(inputs["data"], serde_json::json!([]), "{inputs}");
}

/// A session's "mock" endpoint beside a real server as the run's own: the phase starts a
/// built-in server of its own for it, with that endpoint's `mock:` settings.
#[test]
fn a_mock_endpoint_beside_a_real_server_gets_a_built_in_server_with_its_own_settings() {
    let port = closed_port();
    let _server = Mock::start(port, 4096, "--ttft-ms 2 --itl-ms 1");
    let run = run_scenario(
        "beside",
        &format!(
            r#"
let real = endpoint(#{{ url: "http://127.0.0.1:{port}", model: "m", kind: "chat", streaming: true }});
let slow = endpoint(#{{ url: "mock", model: "m", kind: "chat", streaming: true, mock: #{{ ttft: ms(60), itl: ms(1) }} }});
let both = |s| {{
    let a = s.chat(#{{ user: "first", max_tokens: 4, tag: "real" }});
    let b = s.chat(#{{ endpoint: slow, user: "then", max_tokens: 4, tag: "mocked" }});
    if !a.ok || !b.ok {{ throw `a step failed: ${{a.error}} ${{b.error}}`; }}
}};
run(#{{ name: "beside", endpoint: real, preflight: false, server_metrics: #{{ enabled: false }},
        phases: [users(#{{ users: 2, session: both, sessions: 4 }})] }});
"#
        ),
    );
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    let sessions = scripted(&run.summary("beside")).clone();
    assert_eq!(sessions["completed"].as_u64(), Some(4), "{sessions}");
    let ttft = |tag: &str| sessions["steps"][tag]["ttft_ms"]["min"].as_f64().unwrap_or(0.0);
    assert!(ttft("mocked") >= 60.0, "the mock endpoint's own TTFT: {sessions}");
    assert!(ttft("real") < 60.0, "the real server's: {sessions}");
    let mut mocked_at = std::collections::BTreeSet::new();
    for record in run.records("beside") {
        let metadata = &record["metadata"];
        match metadata["step_tag"].as_str() {
            Some("real") => assert!(metadata.get("step_endpoint").is_none(), "{metadata}"),
            Some("mocked") => {
                mocked_at.insert(metadata["step_endpoint"].as_str().expect("the mock's url").to_string());
            }
            other => panic!("a record of step {other:?}"),
        }
    }
    assert_eq!(mocked_at.len(), 1, "one built-in server for the phase: {mocked_at:?}");
    assert!(mocked_at.iter().all(|url| url.starts_with("http://127.0.0.1:") && !url.ends_with(&format!(":{port}"))));
    assert_eq!(Mock::metric(port, "vllm:request_success_total"), 4.0, "the real server saw only its own steps");
}

/// A session's "mock" endpoint with `mock:` settings of its own in a run that serves itself:
/// the phase starts a built-in server for it; one without settings shares the run's.
#[test]
fn a_mock_endpoint_with_settings_of_its_own_gets_its_own_built_in_server() {
    let run = run_scenario(
        "own_settings",
        r#"
let run_s = endpoint(#{ url: "mock", model: "m", kind: "chat", streaming: true, mock: #{ ttft: ms(2), itl: ms(1) } });
let slow = endpoint(#{ url: "mock", model: "m", kind: "chat", streaming: true, mock: #{ ttft: ms(60), itl: ms(1) } });
let plain = endpoint(#{ url: "mock", model: "m", kind: "chat", streaming: true });
let three = |s| {
    s.chat(#{ user: "first", max_tokens: 4, tag: "run" });
    s.chat(#{ endpoint: slow, user: "then", max_tokens: 4, tag: "slow" });
    s.chat(#{ endpoint: plain, user: "last", max_tokens: 4, tag: "plain" });
};
run(#{ name: "own_settings", endpoint: run_s, phases: [users(#{ users: 2, session: three, sessions: 4 })] });
"#,
    );
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    let sessions = scripted(&run.summary("own_settings")).clone();
    assert_eq!(sessions["completed"].as_u64(), Some(4), "{sessions}");
    let ttft = |tag: &str, stat: &str| sessions["steps"][tag]["ttft_ms"][stat].as_f64().unwrap_or(f64::NAN);
    assert!(ttft("slow", "min") >= 60.0, "its own settings: {sessions}");
    assert!(ttft("run", "max") < 60.0 && ttft("plain", "max") < 60.0, "the run's server's: {sessions}");
    let mut at: std::collections::BTreeMap<String, std::collections::BTreeSet<Option<String>>> = Default::default();
    for record in run.records("own_settings") {
        let metadata = &record["metadata"];
        let tag = metadata["step_tag"].as_str().expect("a step").to_string();
        at.entry(tag).or_default().insert(metadata["step_endpoint"].as_str().map(str::to_string));
    }
    assert_eq!(at["run"], [None].into(), "the run's own endpoint: {at:?}");
    assert_eq!(at["slow"].len(), 1, "one server for those settings: {at:?}");
    let slow_at = at["slow"].first().cloned().flatten().expect("its server's url");
    assert!(!at["plain"].contains(&Some(slow_at)), "the other shares the run's server: {at:?}");
}

#[test]
fn a_script_error_ends_its_session_with_file_and_line_and_the_others_finish() {
    let run = run_scenario(
        "failing",
        r#"let target = endpoint(#{ url: "mock", model: "m", kind: "chat", streaming: true, mock: #{ ttft: ms(2), itl: ms(1) } });
let agent = |s| {
    s.chat(#{ user: "hello", max_tokens: 4 });
    if s.id == 2 {
        let answer = s.chat(#{ user: "again", max_tokens: 4 });
        answer.text.no_such_method();
    }
};
run(#{ name: "failing", endpoint: target, phases: [users(#{ users: 2, session: agent, sessions: 6 })] });
"#,
    );
    assert_eq!(run.code(), Some(0), "one session's error does not fail the run: {}", run.stderr());
    let summary = run.summary("failing");
    assert_eq!(stat(&summary, "request_count", "avg"), 7.0, "every request is accounted for");
    let sessions = scripted(&summary);
    assert_eq!((sessions["completed"].as_u64(), sessions["failed"].as_u64()), (Some(5), Some(1)), "{sessions}");
    let message = sessions["errors"][0]["message"].as_str().unwrap_or("");
    assert!(message.contains("failing.rhai:6:"), "the error names its file and line: {message}");
    assert!(message.contains("no_such_method"), "{message}");
    assert!(run.stderr().contains("session 2 failed:"), "{}", run.stderr());
}

/// `s.chat("text")` is `s.chat(#{ user: "text" })`: each step adds its user message and its
/// answer to the history the next one sends.
#[test]
fn a_chat_step_of_a_bare_string_sends_it_as_the_user_s_message() {
    let run = run_scenario(
        "shorthand",
        r#"let target = endpoint(#{ url: "mock", model: "m", kind: "chat", streaming: true });
let agent = |s| {
    let first = s.chat("hello");
    s.chat(#{ user: "again", max_tokens: 4 });
    let last = s.chat("and once more");
    let roles = s.history.map(|m| m.role);
    let users = s.history.filter(|m| m.role == "user").map(|m| m.content);
    if roles != ["user", "assistant", "user", "assistant", "user", "assistant"] { throw `roles: ${roles}`; }
    if users != ["hello", "again", "and once more"] { throw `user messages: ${users}`; }
    if !first.ok || !last.ok || last.text == "" { throw `answers: ${first} ${last}`; }
};
run(#{ name: "shorthand", endpoint: target, phases: [users(#{ users: 2, session: agent, sessions: 4 })] });
"#,
    );
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    let summary = run.summary("shorthand");
    assert_eq!(stat(&summary, "request_count", "avg"), 12.0, "three steps in each of 4 sessions");
    let sessions = scripted(&summary);
    assert_eq!((sessions["completed"].as_u64(), sessions["failed"].as_u64()), (Some(4), Some(0)), "{sessions}");
}

/// A sub-agent (`s.sub_agent()`) is a conversation of its own in the session: its steps send its
/// history alone and the session's none of it; its records name its conversation, count its
/// turns from 0 and carry its depth, under the session's correlation id; the session's steps
/// and tally hold them all.
#[test]
fn a_sub_agent_keeps_a_history_of_its_own_and_its_records_say_where_it_sits() {
    let run = run_scenario(
        "sub_agents",
        r#"let target = endpoint(#{ url: "mock", model: "m", kind: "chat", streaming: true });
let agent = |s| {
    s.chat(#{ user: "plan the work", max_tokens: 4, tag: "plan" });
    let helper = s.sub_agent();
    helper.chat(#{ messages: [system("You summarise."), user("summarise part one")], max_tokens: 4, tag: "sub" });
    helper.chat(#{ user: "shorter", max_tokens: 4, tag: "sub" });
    let deeper = helper.sub_agent();
    deeper.chat(#{ user: "check it", max_tokens: 4, tag: "subsub" });
    s.chat(#{ user: `the helper said: ${helper.history[-1].content}`, max_tokens: 4, tag: "plan" });
    let lengths = [s.history.len(), helper.history.len(), deeper.history.len()];
    if lengths != [4, 5, 2] { throw `history lengths: ${lengths}`; }
    if s.history[2].content.len() < 17 || helper.history[1].content != "summarise part one" { throw "histories mixed"; }
    let turns = [s.turn, helper.turn, deeper.turn, s.steps, helper.steps];
    if turns != [2, 2, 1, 5, 5] { throw `turns: ${turns}`; }
    if [s.depth, helper.depth, deeper.depth] != [0, 1, 2] { throw "depths"; }
};
run(#{ name: "sub_agents", endpoint: target, phases: [users(#{ users: 2, session: agent, sessions: 3 })],
       thresholds: ["scripted_sessions.sub_agents == 6"] });
"#,
    );
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    let summary = run.summary("sub_agents");
    assert_eq!(stat(&summary, "request_count", "avg"), 15.0);
    let sessions = scripted(&summary);
    assert_eq!((sessions["completed"].as_u64(), sessions["failed"].as_u64()), (Some(3), Some(0)), "{sessions}");
    assert_eq!(sessions["sub_agents"].as_u64(), Some(6), "two a session");
    assert!(run.stdout().contains("; 6 sub-agents"), "the console's line names them: {}", run.stdout());
    assert_eq!(sessions["steps_per_session"]["avg"].as_f64(), Some(5.0), "a sub-agent's steps are its session's");
    assert_eq!(sessions["steps"]["sub"]["requests"].as_u64(), Some(6));
    let mut seen: Vec<(String, u64, u64, String)> = run
        .records("sub_agents")
        .iter()
        .map(|record| {
            let metadata = &record["metadata"];
            let text = |key: &str| metadata[key].as_str().unwrap_or("").to_string();
            assert_eq!(text("x_correlation_id"), text("root_correlation_id"), "one session, one correlation id");
            let number = |key: &str| metadata[key].as_u64().unwrap_or(99);
            (text("conversation_id"), number("turn_index"), number("agent_depth"), text("x_correlation_id"))
        })
        .collect();
    seen.sort();
    let of_session = |session: &str| -> Vec<(String, u64, u64)> {
        seen.iter()
            .filter(|(conversation, ..)| conversation.starts_with(session))
            .map(|(conversation, turn, depth, _)| (conversation.clone(), *turn, *depth))
            .collect()
    };
    let named = |suffix: &str, turn: u64, depth: u64| (format!("session_000001{suffix}"), turn, depth);
    assert_eq!(
        of_session("session_000001"),
        [named("", 0, 0), named("", 1, 0), named("_agent_1", 0, 1), named("_agent_1", 1, 1), named("_agent_1_1", 0, 2)]
    );
    let correlation_ids: std::collections::BTreeSet<&str> = seen.iter().map(|(.., id)| id.as_str()).collect();
    assert_eq!(correlation_ids.len(), 3, "one a session: {seen:?}");
}

/// `s.parallel([..])` runs each function at once on a sub-agent of its own: their steps are in
/// flight together (each sub-agent's first step starts before any of them has ended), the
/// session goes on once the last has ended, with what each returned in order; a function may
/// run sub-agents of its own at once, and an empty list returns at once.
#[test]
fn sub_agents_run_at_once_by_parallel_overlap_and_return_in_order() {
    let run = run_scenario(
        "parallel",
        r#"let target = endpoint(#{ url: "mock", model: "m", kind: "chat", streaming: true, mock: #{ ttft: ms(150), itl: ms(1) } });
let agent = |s| {
    s.chat(#{ user: "plan the work", max_tokens: 4, tag: "plan" });
    let parts = ["one", "two", "three"];
    let done = s.parallel(parts.map(|part| |a| {
        a.chat(#{ user: `do part ${part}`, max_tokens: 4, tag: "part" });
        a.chat(#{ user: "shorter", max_tokens: 4, tag: "part" });
        `${part} ${a.depth} ${a.history.len()}`
    }));
    if done != ["one 1 4", "two 1 4", "three 1 4"] { throw `returned: ${done}`; }
    let nested = s.parallel([|a| a.parallel([|b| { b.chat("check"); b.depth }, |b| b.depth * 10]), |a| a.turn]);
    if nested != [[2, 20], 0] { throw `nested: ${nested}`; }
    if s.parallel([]) != [] { throw "an empty list"; }
    s.chat(#{ user: `parts: ${done}`, max_tokens: 4, tag: "plan" });
    if s.history.len() != 4 { throw `the session's own history: ${s.history.len()}`; }
};
run(#{ name: "parallel", endpoint: target, phases: [users(#{ users: 2, session: agent, sessions: 3 })] });
"#,
    );
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    let summary = run.summary("parallel");
    assert_eq!(stat(&summary, "request_count", "avg"), 27.0, "nine steps in each of 3 sessions");
    let sessions = scripted(&summary);
    assert_eq!((sessions["completed"].as_u64(), sessions["failed"].as_u64()), (Some(3), Some(0)), "{sessions}");
    assert_eq!(sessions["sub_agents"].as_u64(), Some(21), "3 + 2 + 2 a session");
    assert!(!run.stdout().contains("held requests back"), "the pool holds a session's sub-agents: {}", run.stdout());
    let records = run.records("parallel");
    for session in 0..3 {
        let name = format!("session_{session:06}");
        // (conversation, turn, start, end) of the session's steps.
        let steps: Vec<(String, u64, u64, u64)> = records
            .iter()
            .map(|record| &record["metadata"])
            .filter(|metadata| metadata["conversation_id"].as_str().is_some_and(|id| id.starts_with(&name)))
            .map(|metadata| {
                let number = |key: &str| metadata[key].as_u64().unwrap_or(0);
                let id = metadata["conversation_id"].as_str().unwrap_or("").to_string();
                (id, number("turn_index"), number("request_start_ns"), number("request_end_ns"))
            })
            .collect();
        assert_eq!(steps.len(), 9, "{name}: {steps:?}");
        let first_of_parts: Vec<&(String, u64, u64, u64)> = steps
            .iter()
            .filter(|(id, turn, ..)| {
                ["_agent_1", "_agent_2", "_agent_3"].map(|a| format!("{name}{a}")).contains(id) && *turn == 0
            })
            .collect();
        assert_eq!(first_of_parts.len(), 3, "{steps:?}");
        let last_start = first_of_parts.iter().map(|step| step.2).max().unwrap_or(0);
        let first_end = first_of_parts.iter().map(|step| step.3).min().unwrap_or(0);
        assert!(last_start < first_end, "{name}: the three sub-agents' first steps are in flight together: {steps:?}");
        let own: Vec<&(String, u64, u64, u64)> = steps.iter().filter(|(id, ..)| *id == name).collect();
        let sub_agents_end = steps.iter().filter(|(id, ..)| *id != name).map(|step| step.3).max().unwrap_or(0);
        assert_eq!(own.len(), 2, "{steps:?}");
        assert!(own[1].2 >= sub_agents_end, "{name}: the session goes on once its sub-agents have ended: {steps:?}");
    }
}

/// `s.parallel(list, n)` runs at most n of the functions at a time, each of the rest starting as
/// an earlier one ends, in the list's order; every one runs and returns in place.
#[test]
fn at_most_so_many_sub_agents_run_at_once_when_asked() {
    let run = run_scenario(
        "at_once",
        r#"let target = endpoint(#{ url: "mock", model: "m", kind: "chat", streaming: true, mock: #{ ttft: ms(150), itl: ms(1) } });
let agent = |s| {
    let done = s.parallel([1, 2, 3, 4, 5, 6].map(|i| |a| { a.chat(#{ user: `part ${i}`, max_tokens: 2 }); i * 10 }), 2);
    if done != [10, 20, 30, 40, 50, 60] { throw `returned: ${done}`; }
    if s.id == 1 { s.parallel([|a| 1], 0); }
};
run(#{ name: "at_once", endpoint: target, phases: [users(#{ users: 2, session: agent, sessions: 2 })] });
"#,
    );
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    let summary = run.summary("at_once");
    assert_eq!(stat(&summary, "request_count", "avg"), 12.0);
    let sessions = scripted(&summary);
    assert_eq!((sessions["completed"].as_u64(), sessions["failed"].as_u64()), (Some(1), Some(1)), "{sessions}");
    let message = sessions["errors"][0]["message"].as_str().unwrap_or("");
    assert!(message.contains("at_once.rhai:5:") && message.contains("0 at once? give 1 or more"), "{message}");
    for session in ["session_000000", "session_000001"] {
        // (sub-agent's number, start, end) of the session's steps, by start.
        let mut steps: Vec<(u64, u64, u64)> = run
            .records("at_once")
            .iter()
            .map(|record| &record["metadata"])
            .filter_map(|metadata| {
                let id = metadata["conversation_id"].as_str()?;
                let number = id.strip_prefix(session)?.strip_prefix("_agent_")?.parse().ok()?;
                Some((number, metadata["request_start_ns"].as_u64()?, metadata["request_end_ns"].as_u64()?))
            })
            .collect();
        steps.sort_by_key(|step| step.1);
        // Two at a time in the list's order (the two of a pair go out together, either first).
        let pairs: Vec<Vec<u64>> = steps
            .chunks(2)
            .map(|pair| {
                let mut numbers: Vec<u64> = pair.iter().map(|step| step.0).collect();
                numbers.sort();
                numbers
            })
            .collect();
        assert_eq!(pairs, [[1, 2], [3, 4], [5, 6]], "in order: {steps:?}");
        for (i, step) in steps.iter().enumerate() {
            let in_flight = steps.iter().filter(|other| other.1 <= step.1 && step.1 < other.2).count();
            assert!(in_flight <= 2, "{session}: {in_flight} in flight as step {i} started: {steps:?}");
        }
        assert!(steps[1].1 < steps[0].2, "two at once: {steps:?}");
    }
}

/// A sub-agent's error run by `s.parallel` ends its session, naming the line in the sub-agent's
/// function, once its siblings have ended; so does a list item that is not a function or takes
/// other than one parameter or captured a handle (before any is run), and a function that uses
/// its caller's `s` (a handle the call holds), with what to do instead.
#[test]
fn a_failing_sub_agent_run_at_once_ends_its_session_with_its_line() {
    let run = run_scenario(
        "parallel_errors",
        r#"let target = endpoint(#{ url: "mock", model: "m", kind: "chat", streaming: true });
let agent = |s| {
    if s.id == 1 {
        s.parallel([|a| { a.chat("fine"); 1 }, |a| { a.chat("then"); a.no_such_method(); }]);
    }
    if s.id == 2 { s.parallel([|a| a.chat("fine"), 1]); }
    if s.id == 3 { s.parallel([|a| s.chat("the caller's handle")]); }
    if s.id == 4 { s.parallel([|a| a.chat("fine"), |a, b| a.chat("two parameters")]); }
    if s.id == 5 { let helper = s.sub_agent(); s.parallel([|a| a.chat("mine"), |a| [helper].len()]); }
    s.chat("hello");
};
run(#{ name: "parallel_errors", endpoint: target, phases: [users(#{ users: 2, session: agent, sessions: 7 })] });
"#,
    );
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    let summary = run.summary("parallel_errors");
    assert_eq!(
        stat(&summary, "request_count", "avg"),
        4.0,
        "sessions 0 and 6 say hello, session 1's two sub-agents send"
    );
    let sessions = scripted(&summary);
    assert_eq!((sessions["completed"].as_u64(), sessions["failed"].as_u64()), (Some(2), Some(5)), "{sessions}");
    let messages: Vec<&str> =
        sessions["errors"].as_array().into_iter().flatten().filter_map(|error| error["message"].as_str()).collect();
    let with = |text: &str| messages.iter().find(|message| message.contains(text)).copied().unwrap_or_default();
    let in_sub_agent = with("no_such_method");
    assert!(in_sub_agent.contains("parallel_errors.rhai:4:"), "the sub-agent's own line: {messages:?}");
    assert!(!in_sub_agent.contains("closure"), "{in_sub_agent}");
    assert!(with("item 1 is i64, not a function").contains("parallel_errors.rhai:6:"), "{messages:?}");
    assert!(with("Data race").contains("captured the handle it was called on"), "{messages:?}");
    assert!(with("item 1 captured a session's handle").contains(":9:"), "before any runs: {messages:?}");
    assert!(with("item 1 takes 2 parameters; each function takes one").contains(":8:"), "{messages:?}");
}

/// A runaway recursion in a session function stops at the sandbox's call limit, as it does at
/// the scenario's top level, and ends that session only: each session's stack has room for the
/// deepest nesting the sandbox allows (this recursion, expressions nested in each call, overran
/// a 1 MiB stack and crashed the process, in a release build too).
#[test]
fn a_runaway_recursion_in_a_session_ends_that_session_only() {
    let run = run_scenario(
        "recursing",
        r#"fn deep(n) { if n == 0 { 0 } else { let m = #{ a: [1, 2, #{ b: n }] }; (1 + [(1 + [(1 + [(1 + [deep(n - 1)][0])][0])][0])][0]) + m.a[2].b * 0 } }
let target = endpoint(#{ url: "mock", model: "m", kind: "chat", mock: #{ ttft: ms(1), itl: ms(1) } });
let agent = |s| {
    s.chat(#{ user: "hello", max_tokens: 4 });
    if s.id == 1 { deep(1000000); }
};
run(#{ name: "recursing", endpoint: target, phases: [users(#{ users: 2, session: agent, sessions: 4 })] });
"#,
    );
    let message = the_one_failed_session_s_error(&run, "recursing");
    assert!(message.contains("functions called each other more than 64 deep"), "{message}");
    // Rhai gives a limit's error no line inside the function: it names the phase that runs it.
    assert!(message.contains("recursing.rhai:7:"), "{message}");
    assert!(message.contains("(in a session of the phase here; the limits hold for each session)"), "{message}");
}

/// A wait of NaN seconds (a division of zero by zero) is a script error naming its line, not a
/// panic of the script worker; a negative wait is none.
#[test]
fn a_wait_of_nan_seconds_ends_its_session_with_its_line() {
    let run = run_scenario(
        "waiting",
        r#"let target = endpoint(#{ url: "mock", model: "m", kind: "chat", mock: #{ ttft: ms(1), itl: ms(1) } });
let agent = |s| {
    s.wait(-5);
    s.chat(#{ user: "hello", max_tokens: 4 });
    if s.id == 1 { s.wait(0.0 / 0.0); }
};
run(#{ name: "waiting", endpoint: target, phases: [users(#{ users: 2, session: agent, sessions: 4 })] });
"#,
    );
    let message = the_one_failed_session_s_error(&run, "waiting");
    assert!(message.contains("waiting.rhai:5:22: s.wait: the seconds are not a number (NaN)"), "{message}");
    assert!(!run.stderr().contains("panicked"), "{}", run.stderr());
}

/// A step that cannot be sent as asked is a script error saying what is wrong, and sends
/// nothing: an embeddings or rerank step bound for an endpoint of another kind (the run's chat
/// endpoint, for want of `endpoint:`), a message that is no message, tools that are no list of
/// tools, a tool result that answers no call (the mock's answer to a step without tools has none).
#[test]
fn a_step_that_cannot_be_sent_as_asked_ends_its_session_and_sends_nothing() {
    for (call, needs) in [
        (
            r#"s.embed(#{ input: "x" })"#,
            r#"s.embed needs an endpoint of kind "embeddings" or "chat_embeddings" or "nim_embeddings", not "chat""#,
        ),
        (
            r#"s.rerank(#{ query: "q", documents: ["a"] })"#,
            r#"s.rerank needs an endpoint of kind "cohere_rankings" or "hf_tei_rankings" or "nim_rankings", not "chat""#,
        ),
        (
            r#"s.chat(#{ messages: [5] })"#,
            "chat: messages[0] must be a string or a message #{ role, content }, got i64 `5`",
        ),
        (r#"s.embed(#{ input: [] })"#, "embed: `input` is an empty list, which embeddings APIs refuse"),
        (
            r#"s.rerank(#{ query: "q", documents: [] })"#,
            "rerank: `documents` is an empty list, which rerank APIs refuse",
        ),
        (r#"s.chat(#{ user: "x", tools: "search" })"#, "chat: `tools` must be a list of tool definitions"),
        (
            r#"s.chat(#{ tool_results: ["found"] })"#,
            "chat: tool_results[0] answers no tool call: the last answer asked for none",
        ),
        (
            "let a = s; for n in 0..1024 { a = a.sub_agent(); }",
            "s.sub_agent: a session holds at most 1024 conversations (its own and its sub-agents')",
        ),
    ] {
        let run = run_scenario(
            "misrouted",
            &format!(
                r#"let target = endpoint(#{{ url: "mock", model: "m", kind: "chat", mock: #{{ ttft: ms(1), itl: ms(1) }} }});
let agent = |s| {{
    s.chat(#{{ user: "hello", max_tokens: 4 }});
    if s.id == 1 {{ {call}; }}
}};
run(#{{ name: "misrouted", endpoint: target, phases: [users(#{{ users: 2, session: agent, sessions: 4 }})] }});
"#
            ),
        );
        let message = the_one_failed_session_s_error(&run, "misrouted");
        assert!(message.contains("misrouted.rhai:4:") && message.contains(needs), "{message}");
        assert_eq!(stat(&run.summary("misrouted"), "request_count", "avg"), 4.0, "{call} sent nothing");
    }
}

/// A session function may come from a library: a closure a module's function made runs among
/// the module's functions (an error there names the module's file and line), and a closure of
/// the scenario's may call the modules imported at its top level, a library's and the stdlib's.
#[test]
fn a_session_function_may_come_from_a_library_and_call_the_modules_imported_above_it() {
    let dir = tempfile::tempdir().expect("dir");
    let library = r#"fn tool_loop(question) {
    |s| {
        let r = s.chat(#{ user: question, tools: tools(), max_tokens: 8, tag: "ask" });
        while r.tool_calls.len() > 0 { r = s.chat(#{ tool_results: r.tool_calls.map(|c| `found ${c.args.query}`), tag: "act" }); }
        check(s);
    }
}
fn tools() { [#{ type: "function", function: #{ name: "search", parameters: #{ type: "object" } } }] }
fn check(s) { if s.id == 3 { throw "the library's own check failed"; } }
fn ask(s) { s.chat(#{ user: "plain", max_tokens: 4, tag: "plain" }); }
"#;
    std::fs::write(dir.path().join("agents.rhai"), library).expect("write the library");
    let scenario = dir.path().join("library_agents.rhai");
    let source = r#"import "agents" as agents;
import "aiperf/sweeps" as sweeps;
let target = endpoint(#{ url: "mock", model: "m", kind: "chat", mock: #{ ttft: ms(1), itl: ms(1) } });
run(#{ name: "made", endpoint: target, phases: [users(#{ users: 2, session: agents::tool_loop("where?"), sessions: 4 })] });
let calling = |s| { agents::ask(s); s.chat(#{ user: `${sweeps::doubling(1, 8).len()}`, max_tokens: 2, tag: "stdlib" }); };
run(#{ name: "calling", endpoint: target, phases: [users(#{ users: 2, session: calling, sessions: 4 })] });
"#;
    std::fs::write(&scenario, source).expect("write the scenario");
    let output = common::aiperf_command(dir.path()).arg("run").arg(&scenario).output().expect("run aiperf");
    let run = common::ScenarioRun { dir, output };
    let made = scripted(&run.summary("made")).clone();
    assert_eq!((made["completed"].as_u64(), made["failed"].as_u64()), (Some(3), Some(1)), "{}: {made}", run.stderr());
    // Two tool calls, then the answer: three requests a session.
    assert_eq!(
        (made["steps"]["ask"]["requests"].as_u64(), made["steps"]["act"]["requests"].as_u64()),
        (Some(4), Some(8))
    );
    let error = made["errors"][0]["message"].as_str().unwrap_or_default();
    assert!(error.contains("agents.rhai:9:") && error.contains("the library's own check failed"), "{error}");
    let calling = scripted(&run.summary("calling")).clone();
    assert_eq!(
        (calling["completed"].as_u64(), calling["failed"].as_u64()),
        (Some(4), Some(0)),
        "{}: {calling}",
        run.stderr()
    );
    assert_eq!(
        (calling["steps"]["plain"]["requests"].as_u64(), calling["steps"]["stdlib"]["requests"].as_u64()),
        (Some(4), Some(4))
    );
}

/// Closures of the same code that captured different values are different session functions:
/// a sweep over a factory's argument plays each run with its own value, and two phases of one
/// run each with theirs (they all ran the first closure's values once).
#[test]
fn closures_of_one_factory_each_play_their_own_captured_values() {
    let run = run_scenario(
        "factory",
        r#"let target = endpoint(#{ url: "mock", model: "m", kind: "chat", mock: #{ ttft: ms(1), itl: ms(1) } });
fn agent_of(tokens) { |s| { s.chat(#{ user: "hi", max_tokens: tokens }); } }
for tokens in [2, 7] {
    run(#{ name: `swept_${tokens}`, endpoint: target, phases: [users(#{ users: 1, session: agent_of(tokens), sessions: 2 })] });
}
run(#{ name: "side_by_side", endpoint: target, phases: [
    users(#{ name: "three", users: 1, session: agent_of(3), sessions: 2 }),
    users(#{ name: "five", users: 1, session: agent_of(5), sessions: 2 }),
] });
"#,
    );
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    for tokens in [2, 7] {
        let summary = run.summary(&format!("swept_{tokens}"));
        assert_eq!(stat(&summary, "output_sequence_length", "avg"), f64::from(tokens), "swept_{tokens}");
    }
    let mut by_phase: Vec<(String, u64)> = run
        .records("side_by_side")
        .iter()
        .map(|record| {
            let phase = record["metadata"]["phase_name"].as_str().unwrap_or_default().to_string();
            (phase, record["metrics"]["output_sequence_length"]["value"].as_u64().unwrap_or_default())
        })
        .collect();
    by_phase.sort();
    let expected = [("five", 5), ("five", 5), ("three", 3), ("three", 3)].map(|(phase, osl)| (phase.to_string(), osl));
    assert_eq!(by_phase, expected);
}

/// Where the process's address space is limited (`ulimit -v`), sessions get small stacks, so the
/// limit holds thousands of users (16 MiB each, 6 GiB would hold a few hundred); the users it
/// cannot hold never start, and the self-check says so and calls the client the bottleneck.
#[test]
fn users_an_address_space_limit_cannot_hold_are_named_by_the_self_check() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("limited.rhai");
    let source = r#"let target = endpoint(#{ url: "mock", model: "m", kind: "chat", mock: #{ ttft: ms(300), itl: ms(1) } });
run(#{ name: "limited", endpoint: target,
       phases: [users(#{ users: 4000, sessions: 4000, session: |s| { s.chat(#{ user: "hello", max_tokens: 2 }); } })] });
"#;
    std::fs::write(&path, source).expect("write the scenario");
    let mut command = common::aiperf_command(dir.path());
    command.arg("run").arg(&path);
    let limit = libc::rlimit { rlim_cur: 6 << 30, rlim_max: libc::RLIM_INFINITY };
    // SAFETY: the closure only calls setrlimit, which is async-signal-safe, as pre_exec asks.
    unsafe {
        command.pre_exec(move || match libc::setrlimit(libc::RLIMIT_AS, &limit) {
            0 => Ok(()),
            _ => Err(std::io::Error::last_os_error()),
        });
    }
    let run = common::ScenarioRun { output: command.output().expect("run aiperf"), dir };
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    let summary = run.summary("limited");
    let check = &summary["client_self_check"][0];
    let warnings = check["warnings"].as_array().cloned().unwrap_or_default();
    let never = warnings
        .iter()
        .find_map(|warning| warning.as_str()?.split_once(" of the phase's users never started"))
        .map_or(0, |(n, _)| n.parse().unwrap_or(0));
    assert!(check["client_bound"] == true && never > 0, "{check}");
    let started = 4000 - never;
    assert!(started > 1000, "small stacks let the limit hold thousands of users: {started} started");
    assert!(check["peak_in_flight"].as_u64().is_some_and(|peak| peak <= started), "{check}");
    assert_eq!(scripted(&summary)["completed"].as_u64(), Some(4000), "the users that started played them all");
}

/// Steps in flight at the phase's end are cancelled, not failed, and cut their sessions.
#[test]
fn steps_the_phase_s_end_cancels_are_counted_as_cancelled_not_as_errors() {
    let run = run_scenario(
        "cancelled",
        r#"let slow = endpoint(#{ url: "mock", streaming: true, mock: #{ ttft: ms(1), itl: ms(100) } });
let f = |s| { s.chat(#{ user: "hi", max_tokens: 50, tag: "slow" }); };
run(#{ endpoint: slow, allow_all_failed: true,
       phases: [users(#{ users: 3, duration: 0.3, grace_period: 0, session: f })] });"#,
    );
    assert_eq!(run.code(), Some(0), "stderr: {}", run.stderr());
    let summary = run.summary("cancelled");
    let phase = &summary["phases"][0];
    let step = &scripted(&summary)["steps"]["slow"];
    let count = |value: &Value| value.as_u64().unwrap_or(u64::MAX);
    assert_eq!(count(&step["cancelled"]), 3, "each user's step in flight at the end: {step}");
    assert_eq!(count(&step["errors"]), 0, "{step}");
    assert_eq!(count(&step["requests"]), count(&phase["sent"]), "{phase}");
    assert_eq!(count(&step["cancelled"]), count(&phase["cancelled"]), "{phase}");
    // A session whose step the end cancelled is cut there, though its function would return.
    let sessions = scripted(&summary);
    assert_eq!((count(&sessions["cut"]), count(&sessions["completed"])), (3, 0), "{sessions}");
    assert!(sessions.get("session_latency_ms").is_none(), "no session completed: {sessions}");
    let table = run.stdout();
    assert!(table.contains("step              requests  errors cancelled"), "{table}");
}

/// The phase's end cuts sub-agents running at once as it cuts a session: each one's step in
/// flight is cancelled, none is an error, and their sessions are cut, not failed.
#[test]
fn the_phase_s_end_cancels_the_steps_of_sub_agents_running_at_once() {
    let run = run_scenario(
        "cancelled_at_once",
        r#"let slow = endpoint(#{ url: "mock", streaming: true, mock: #{ ttft: ms(1), itl: ms(100) } });
let f = |s| { s.parallel([1, 2, 3].map(|i| |a| a.chat(#{ user: `part ${i}`, max_tokens: 50, tag: "part" }))); };
run(#{ endpoint: slow, allow_all_failed: true,
       phases: [users(#{ users: 2, duration: 0.3, grace_period: 0, session: f })] });"#,
    );
    assert_eq!(run.code(), Some(0), "stderr: {}", run.stderr());
    let summary = run.summary("cancelled_at_once");
    let phase = &summary["phases"][0];
    let step = &scripted(&summary)["steps"]["part"];
    let count = |value: &Value| value.as_u64().unwrap_or(u64::MAX);
    assert_eq!(count(&step["cancelled"]), 6, "each sub-agent's step in flight at the end: {step}");
    assert_eq!((count(&step["errors"]), count(&step["requests"])), (0, count(&phase["sent"])), "{phase}");
    let sessions = scripted(&summary);
    assert_eq!((count(&sessions["cut"]), count(&sessions["failed"])), (2, 0), "{sessions}");
}

#[test]
fn sessions_started_at_a_rate_keep_to_it_and_to_the_users_they_may_have_live() {
    let run = run_scenario(
        "rated",
        r#"let e = endpoint(#{ url: "mock", streaming: true, mock: #{ ttft: ms(5), itl: ms(10) } });
let f = |s| { s.chat(#{ user: "hi", max_tokens: 20 }); s.chat(#{ user: "more", max_tokens: 10 }); };
run(#{ name: "free", endpoint: e, phases: [users(#{ users: 8, session_rate: 20, duration: 1.5, session: f })] });
run(#{ name: "capped", endpoint: e, phases: [users(#{ users: 2, session_rate: 20, duration: 1.5, session: f })] });"#,
    );
    assert_eq!(run.code(), Some(0), "stderr: {}", run.stderr());
    let count = |value: &Value| value.as_u64().unwrap_or(u64::MAX);

    // Sessions of ~0.3 s at 20 a second: ~6 live, under the 8 users.
    let free = run.summary("free");
    let (sessions, check) = (scripted(&free), &free["client_self_check"][0]);
    assert!((29..=31).contains(&count(&sessions["started"])), "20 a second for 1.5 s: {sessions}");
    assert!(count(&sessions["peak_live"]) <= 8, "{sessions}");
    assert_eq!(check["target_rate_rps"].as_f64(), Some(20.0), "{check}");
    let achieved = check["achieved_rate_rps"].as_f64().unwrap_or_default();
    assert!((19.0..=21.0).contains(&achieved), "{check}");
    assert!(check["pacing_error_p99_ms"].as_f64().is_some(), "each start's lateness is measured: {check}");
    assert_eq!(check["concurrency_cap_wait"], Value::Null, "no start waited for a user: {check}");

    // Two users: at most two live, the starts wait for them, and the self-check says so.
    let capped = run.summary("capped");
    let (sessions, check) = (scripted(&capped), &capped["client_self_check"][0]);
    assert_eq!(count(&sessions["peak_live"]), 2, "{sessions}");
    assert!(count(&sessions["started"]) <= 12, "two users of ~0.3 s sessions for 1.5 s: {sessions}");
    let held = check["held_back_by"].as_array().and_then(|held| held.first()).and_then(Value::as_str);
    assert!(held.is_some_and(|held| held.starts_with("the concurrency cap of 2 held requests back")), "{check}");
    // The users limit held them back, not the client: the wait for a user is not judged as the
    // client's lateness (a machine busy with the other tests may still make it late otherwise).
    let warnings: Vec<&str> = check["warnings"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
    assert!(warnings.iter().all(|warning| !warning.contains("dispatch delay")), "{check}");
    assert_eq!(check["client_bound"], !warnings.is_empty(), "{check}");
    // A session's first step is due when the session was: the wait for a user is in its dispatch delay.
    let dispatch_p99_ms = |check: &Value| check["dispatch_delay_p99_ms"].as_f64().unwrap_or_default();
    assert!(dispatch_p99_ms(check) > 100.0, "{check}");
    assert!(dispatch_p99_ms(&free["client_self_check"][0]) < 50.0, "{}", free["client_self_check"][0]);
    assert!(run.stderr().contains("scripted sessions: 20 new a second, at most 2 live"), "{}", run.stderr());
}

/// A function that fails before its first step fails every session: the phase stops after
/// `IDLE_SESSIONS_LIMIT` of them in a row (it could never reach its request count) and the run
/// fails with the error; `s.chat` on an endpoint that is not a chat one is such an error.
#[test]
fn sessions_that_fail_before_any_request_stop_the_phase_and_fail_the_run() {
    let run = run_scenario(
        "nothing",
        r#"let target = endpoint(#{ url: "mock", model: "m", kind: "embeddings", mock: #{ ttft: ms(1), itl: ms(1) } });
run(#{ name: "nothing", endpoint: target,
       phases: [users(#{ users: 2, requests: 5, session: |s| { s.chat(#{ user: "hello", max_tokens: 4 }); } })] });
"#,
    );
    assert_eq!(run.code(), Some(98), "{}", run.stderr());
    let stderr = run.stderr();
    assert!(stderr.contains("1000 sessions in a row ended at once, without sending a request"), "{stderr}");
    let wrong_kind = r#"nothing.rhai:3:66: s.chat needs an endpoint of kind "chat" or "messages" or "responses", not "embeddings" (give the step one with `endpoint:`)"#;
    assert!(stderr.contains("phase `users` sent no request: 1000 of its 1000 sessions failed"), "{stderr}");
    assert!(stderr.contains("  1000 × ") && stderr.contains(wrong_kind), "{stderr}");
    let sessions = scripted(&run.summary("nothing")).clone();
    assert_eq!((sessions["started"].as_u64(), sessions["failed"].as_u64()), (Some(1000), Some(1000)), "{sessions}");
}

/// A function that takes a step only now and then is not stopped: the phase sends its requests;
/// nor is one that only waits, until its phase's duration ends.
#[test]
fn sessions_that_send_now_and_then_are_not_taken_for_idle_ones() {
    let run = run_scenario(
        "sometimes",
        r#"let target = endpoint(#{ url: "mock", model: "m", kind: "chat", mock: #{ ttft: ms(1), itl: ms(1) } });
run(#{ name: "sometimes", endpoint: target, phases: [users(#{ users: 2, requests: 30,
       session: |s| { if s.random() < 0.2 { s.chat(#{ user: "hello", max_tokens: 4 }); } } })] });
"#,
    );
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    let summary = run.summary("sometimes");
    assert_eq!(stat(&summary, "request_count", "avg"), 30.0);
    assert!(scripted(&summary)["started"].as_u64().is_some_and(|started| started > 30), "{summary}");

    let waiting = run_scenario(
        "waiting",
        r#"run(#{ name: "waiting", endpoint: endpoint(#{ url: "mock", model: "m", kind: "chat" }), allow_all_failed: true,
       phases: [users(#{ users: 8, duration: 1.0, session: |s| { s.wait(ms(1)); } })] });
"#,
    );
    assert_eq!(waiting.code(), Some(0), "{}", waiting.stderr());
    assert!(!waiting.stderr().contains("in a row"), "{}", waiting.stderr());
    let started = scripted(&waiting.summary("waiting"))["started"].as_u64().unwrap_or(0);
    assert!(started > 1_000, "waiting sessions go on for the whole second: {started}");
}

/// The self-check says when the session functions, not the server, held the sessions back: a
/// function that computes for a while before each step keeps its script worker busy, so answers
/// wait on its queue and far fewer steps are in flight than the phase has users. A light one
/// leaves its workers (as many as the phase asks for) mostly idle, and its figures are there too.
#[test]
fn session_functions_that_keep_their_script_worker_busy_are_named_by_the_self_check() {
    let run = run_scenario(
        "busy",
        r#"let target = endpoint(#{ url: "mock", model: "m", kind: "chat", mock: #{ ttft: ms(5), itl: ms(1) } });
let heavy = |s| { for step in 0..3 { let x = 0; for k in 0..20000 { x += k; } s.chat(#{ user: "go on", max_tokens: 4 }); } };
let light = |s| { s.chat(#{ user: "hello", max_tokens: 4 }); };
run(#{ name: "busy", endpoint: target, phases: [
    users(#{ name: "heavy", users: 60, duration: 2.0, session: heavy }),
    users(#{ name: "light", users: 4, duration: 1.0, session: light, script_workers: 2 }),
] });
"#,
    );
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    let summary = run.summary("busy");
    let checks = summary["client_self_check"].as_array().expect("a self-check per phase");
    let (heavy, light) = (&checks[0], &checks[1]);
    assert_eq!(heavy["client_bound"], true, "{heavy}");
    let busy = heavy["script_workers_busy_percent"].as_f64().unwrap_or(0.0);
    assert!(busy > 90.0, "{heavy}");
    assert!(heavy["script_resume_delay_p99_ms"].as_f64().unwrap_or(0.0) > 10.0, "{heavy}");
    let mut warnings = heavy["warnings"].as_array().into_iter().flatten().filter_map(Value::as_str);
    assert!(warnings.any(|warning| warning.contains("of the time with the session functions")), "{heavy}");
    assert!(heavy["peak_in_flight"].as_u64().unwrap_or(60) < 60, "the busy worker kept steps back: {heavy}");
    assert!(run.stdout().contains("WARNING: the client was the bottleneck"), "{}", run.stdout());
    assert_eq!(light["script_workers"], 2, "the phase's own count: {light}");
    assert!(light["script_workers_busy_percent"].as_f64().is_some_and(|busy| busy < 50.0), "{light}");
    assert!(light["script_resume_delay_p50_ms"].as_f64().is_some(), "{light}");
    // The counting burns a core's worth of CPU on its worker; the light functions barely any.
    let cpu = |check: &serde_json::Value| check["script_workers_cpu_percent"].as_f64().unwrap_or(-1.0);
    assert!(cpu(heavy) > 20.0 && cpu(heavy) > 2.0 * cpu(light) && cpu(light) >= 0.0, "{heavy}\n{light}");
}

/// A session's client-side wait sleeps on the phase's precise timer, as a think time does: the
/// self-check gives the timer's wake-up lateness and its cost as the pacer's; a phase whose
/// sessions never wait starts no timer and reports neither.
#[test]
fn a_client_side_wait_sleeps_on_the_phases_precise_timer() {
    let run = run_scenario(
        "waits",
        r#"let target = endpoint(#{ url: "mock", model: "m", kind: "chat", mock: #{ ttft: ms(2), itl: ms(1) } });
run(#{ name: "waits", endpoint: target, phases: [
    users(#{ name: "waiting", users: 4, sessions: 12, session: |s| { s.wait(ms(20)); s.chat(#{ user: "hi", max_tokens: 2 }); s.wait(0.01); } }),
    users(#{ name: "plain", users: 4, sessions: 12, session: |s| { s.chat(#{ user: "hi", max_tokens: 2 }); } }),
] });
"#,
    );
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    let summary = run.summary("waits");
    let checks = summary["client_self_check"].as_array().expect("a self-check per phase");
    let (waiting, plain) = (&checks[0], &checks[1]);
    assert!(waiting["timer_wake_lateness_p50_ms"].as_f64().is_some(), "{waiting}");
    assert!(waiting["pacer_cpu_percent"].as_f64().is_some(), "the timer's thread ran: {waiting}");
    assert!(plain["timer_wake_lateness_p50_ms"].is_null() && plain["pacer_cpu_percent"].is_null(), "{plain}");
    assert_eq!(scripted(&summary)["completed"], 12, "{summary}");
}

/// Answers that come back together queue on their worker behind each other's session
/// functions: eight sessions that each compute 6 ms after their first answer keep the last
/// waiting ~42 ms (a resume delay p99 over the 10 ms limit either way). In sessions of seconds
/// that is under 5 % of each one's time, and the self-check reports the tail without calling the
/// client the bottleneck; in sessions of tens of milliseconds it held most of them back, and says so.
#[test]
fn a_wave_of_answers_queued_on_the_script_worker_is_judged_by_how_much_it_slowed_the_sessions() {
    let scenario = |ttft_ms: u64| {
        format!(
            r#"fn spin(seconds) {{ let t = timestamp(); while t.elapsed < seconds {{}} }}
let wave = |s| {{ s.chat(#{{ user: "a", max_tokens: 2 }}); spin(0.006); s.chat(#{{ user: "b", max_tokens: 2 }}); }};
run(#{{ name: "wave", endpoint: endpoint(#{{ url: "mock", model: "m", kind: "chat", mock: #{{ ttft: ms({ttft_ms}), itl: ms(1) }} }}),
       phases: [users(#{{ users: 8, sessions: 8, session: wave, script_workers: 1 }})] }});
"#
        )
    };
    let check = |ttft_ms: u64| {
        let run = run_scenario("wave", &scenario(ttft_ms));
        assert_eq!(run.code(), Some(0), "{}", run.stderr());
        run.summary("wave")["client_self_check"][0].clone()
    };
    let worker_named = |check: &Value| {
        check["warnings"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .any(|w| w.contains("script worker"))
    };
    let long = check(1_500);
    assert!(long["script_resume_delay_p99_ms"].as_f64().is_some_and(|p99| p99 > 10.0), "{long}");
    assert_eq!(long["script_sessions_slowed_percent"].as_f64(), Some(0.0), "{long}");
    assert!(!worker_named(&long), "{long}");
    let short = check(20);
    assert!(short["script_resume_delay_p99_ms"].as_f64().is_some_and(|p99| p99 > 10.0), "{short}");
    assert!(short["script_sessions_slowed_percent"].as_f64().is_some_and(|slowed| slowed >= 50.0), "{short}");
    assert_eq!(short["client_bound"], true, "{short}");
    assert!(worker_named(&short), "{short}");
}

/// A session function that computes for long shares its worker: every 10 ms it lets the
/// worker's other sessions run, so one user's 1.5 s of arithmetic does not hold the other two
/// users' steps back for the whole 1 s phase (on one worker, the spinning session first).
#[test]
fn a_session_that_computes_for_long_takes_turns_with_the_others_on_its_worker() {
    let run = run_scenario(
        "turns",
        r#"let target = endpoint(#{ url: "mock", model: "m", kind: "chat", mock: #{ ttft: ms(1), itl: ms(1) } });
let f = |s| {
    if s.id == 0 { let started = timestamp(); while started.elapsed < 1.5 { } }
    else { s.chat(#{ user: "hello", max_tokens: 2, tag: "quick" }); }
};
run(#{ name: "turns", endpoint: target, phases: [users(#{ users: 3, duration: 1.0, session: f, script_workers: 1 })] });
"#,
    );
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    let summary = run.summary("turns");
    let sessions = scripted(&summary);
    let quick = sessions["steps"]["quick"]["requests"].as_u64().unwrap_or(0);
    assert!(quick > 20, "the other users' steps went on beside the spinning one: {sessions}");
    assert!(sessions["completed"].as_u64().is_some_and(|completed| completed > quick), "and it ended too: {sessions}");
}

/// A step's answer joins the history as its text, counted by the client's tokenizer: a
/// reasoning model's usage counts the reasoning too (10 of 12 tokens here), which the next step
/// does not send back.
#[test]
fn the_history_counts_an_answer_by_its_text_not_by_the_reasoning_in_its_usage() {
    let server = ScriptedServer::start(|_, _, _| {
        let chunk =
            |delta: Value| json!({ "choices": [{ "index": 0, "delta": delta, "finish_reason": null }] }).to_string();
        let usage = json!({ "choices": [], "usage": { "prompt_tokens": 1, "completion_tokens": 12, "total_tokens": 13,
                                                      "completion_tokens_details": { "reasoning_tokens": 10 } } });
        let events = [
            chunk(json!({ "reasoning_content": " the the the" })),
            chunk(json!({ "content": " the end" })),
            usage.to_string(),
            "[DONE]".to_string(),
        ];
        Some(Reply::Sse(events.into_iter().map(|event| (None, event)).collect()))
    });
    let text = format!(
        r#"let target = endpoint(#{{ url: "{}", model: "m", kind: "chat", streaming: true }});
run(#{{ name: "reasoning", endpoint: target, preflight: false,
        phases: [users(#{{ users: 1, sessions: 1, session: |s| {{
            s.chat(#{{ user: "hello there", max_tokens: 12 }});
            s.chat(#{{ user: "hello there", max_tokens: 12 }});
        }} }})] }});
"#,
        server.url()
    );
    let run = run_scenario("reasoning", &text);
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    let mut steps: Vec<(u64, u64, u64)> = run
        .records("reasoning")
        .iter()
        .map(|record| {
            let value = |name: &str| record["metrics"][name]["value"].as_u64().unwrap_or_else(|| panic!("{name}"));
            (
                record["metadata"]["turn_index"].as_u64().expect("turn"),
                value("input_sequence_length"),
                value("output_token_count"),
            )
        })
        .collect();
    steps.sort();
    let [(0, first, answer), (1, second, _)] = steps[..] else { panic!("{steps:?}") };
    assert_eq!(answer, 2, "\" the end\": {steps:?}");
    // Joined by spaces as AIPerf counts a body's texts, "hello there  the end hello there": the
    // answer's own leading space is a token of its own after the joining one.
    assert_eq!(second, first + (answer + 1) + first, "the question, the answer's text, the question again: {steps:?}");
}

/// 10,000 sessions live at once (each waits out its answers and 4 s of client-side time),
/// against `aiperf mock` in a process of its own. Slow in debug: `scripts/test.sh --release-only`.
#[test]
#[ignore]
fn release_only_ten_thousand_scripted_sessions_run_at_once() {
    let port = closed_port();
    let _mock = Mock::start(port, 20_000, "--ttft-ms 500 --itl-ms 5 --max-running 20000");
    let started = Instant::now();
    let run = run_scenario(
        "many",
        &format!(
            r#"
let target = endpoint(#{{ url: "http://127.0.0.1:{port}", model: "m", kind: "chat", streaming: true }});
let agent = |s| {{
    let r = s.chat(#{{ user: "hi", max_tokens: 4 }});
    s.wait(seconds(4));
    s.chat(#{{ user: "and?", max_tokens: 4, tag: "follow_up" }});
}};
run(#{{ name: "many", endpoint: target, preflight: false, server_metrics: #{{ enabled: false }}, gpu_telemetry: #{{ enabled: false }},
        request_timeout: seconds(120), phases: [users(#{{ users: 10000, session: agent, sessions: 10000 }})] }});
"#
        ),
    );
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    let summary = run.summary("many");
    assert_eq!(stat(&summary, "request_count", "avg"), 20_000.0);
    assert_eq!(summary["phases"][0]["errors"].as_u64(), Some(0));
    let sessions = scripted(&summary);
    assert_eq!((sessions["started"].as_u64(), sessions["completed"].as_u64()), (Some(10_000), Some(10_000)));
    assert_eq!(sessions["peak_live"].as_u64(), Some(10_000), "every session was live at once");
    eprintln!("10,000 sessions in {:.1} s", started.elapsed().as_secs_f64());
}

#[test]
fn a_dry_run_shows_the_scripted_phase_by_its_function_name_and_sends_nothing() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("dry.rhai");
    let source = r#"fn agent(s) { s.chat(#{ user: "hi" }); }
run(#{ endpoint: endpoint(#{ url: "mock" }), phases: [users(#{ users: 3, session: Fn("agent"), sessions: 9 })] });
"#;
    std::fs::write(&path, source).expect("write");
    let output = common::aiperf_command(dir.path()).args(["run", "--dry-run"]).arg(&path).output().expect("run");
    common::succeeded(&output, "dry run");
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.contains(r#""type": "scripted""#) && text.contains(r#""session": "agent""#), "{text}");
    assert!(!dir.path().join("artifacts").exists(), "nothing ran");
}

#[test]
fn a_concurrency_phase_with_a_session_function_plays_scripted_sessions() {
    let run = run_scenario(
        "closed",
        r#"
let agent = |s| {
    let r = s.chat(#{ user: "first", max_tokens: 4 });
    if r.ok { s.chat(#{ user: "second", max_tokens: 4, tag: "follow_up" }); }
};
run(#{ name: "closed", endpoint: endpoint(#{ url: "mock", model: "m", kind: "chat", streaming: true }),
       phases: [warmup(#{ concurrency: 2, session: agent, sessions: 2 }),
                concurrency(#{ concurrency: 3, session: agent, sessions: 7, seed: 5 })] });
"#,
    );
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    let summary = run.summary("closed");
    assert_eq!(stat(&summary, "request_count", "avg"), 14.0, "the profiling phase's 7 sessions of 2 steps");
    let sessions = &summary["phases"][1]["scripted_sessions"];
    assert_eq!((sessions["started"].as_u64(), sessions["completed"].as_u64()), (Some(7), Some(7)), "{sessions}");
    assert_eq!(sessions["steps"]["follow_up"]["requests"].as_u64(), Some(7), "{sessions}");
    assert!(sessions["peak_live"].as_u64() <= Some(3), "{sessions}");
    let plain = run_scenario(
        "seeded",
        r#"run(#{ endpoint: endpoint(#{ url: "mock", model: "m" }), phases: [concurrency(#{ users: 2, seed: 5 })] });"#,
    );
    assert_ne!(plain.code(), Some(0));
    assert!(plain.stderr().contains("`seed` applies to scripted sessions (`session`) only"), "{}", plain.stderr());
}

#[test]
fn script_workers_apply_to_scripted_phases_only_and_within_bounds() {
    let refused = |name: &str, phase: &str| {
        let run = run_scenario(
            name,
            &format!(r#"run(#{{ endpoint: endpoint(#{{ url: "mock", model: "m" }}), phases: [{phase}] }});"#),
        );
        assert_ne!(run.code(), Some(0), "{phase}");
        run.stderr()
    };
    let plain = refused("plain", "users(#{ users: 2, rate: 4.0, requests: 4, script_workers: 2 })");
    assert!(plain.contains("users: `script_workers` applies to scripted sessions (`session`) only"), "{plain}");
    let closed = refused("closed", "concurrency(#{ users: 2, requests: 4, script_workers: 2 })");
    assert!(closed.contains("`script_workers` applies to scripted sessions (`session`) only"), "{closed}");
    let none = refused("none", "users(#{ users: 2, requests: 4, script_workers: 0, session: |s| { s.wait(0.001); } })");
    assert!(none.contains("`script_workers` must be 1 to 1024 (each is a thread), got 0"), "{none}");
}

#[test]
fn a_sessions_random_draws_and_texts_are_its_own_and_the_same_in_every_run_of_a_seed() {
    // Each session picks its step's tag, draws a wait, sends a text of its own and checks its
    // draws; session 0 picks from nothing, a script error naming its line.
    let source = |seed: u64| {
        format!(
            r#"let target = endpoint(#{{ url: "mock", model: "m", kind: "chat", streaming: true, mock: #{{ ttft: ms(1), itl: ms(1) }} }});
let agent = |s| {{
    let p = s.random();
    if p < 0.0 || p >= 1.0 {{ throw `random() gave ${{p}}`; }}
    if s.sample(normal(5, 0)) != 5.0 || s.sample(7) != 7.0 {{ throw "a fixed draw moved"; }}
    let wait_ms = s.sample(bounded(normal(2, 0.5), 1, 3));
    if wait_ms < 1.0 || wait_ms > 3.0 {{ throw `bounded gave ${{wait_ms}}`; }}
    s.wait(ms(wait_ms));
    if s.id == 0 {{ s.pick([]); }}
    let context = s.text(200);
    if context == s.text(200) {{ throw "two texts alike"; }}
    s.chat(#{{ user: context, max_tokens: 2, tag: s.pick(["a", "b", "c", "d"]) }});
}};
run(#{{ name: "draws", endpoint: target, phases: [users(#{{ users: 4, session: agent, sessions: 81, seed: {seed} }})] }});
"#
        )
    };
    let tags = |seed: u64| {
        let run = run_scenario("draws", &source(seed));
        assert_eq!(run.code(), Some(0), "{}", run.stderr());
        let summary = run.summary("draws");
        let sessions = scripted(&summary);
        assert_eq!((sessions["completed"].as_u64(), sessions["failed"].as_u64()), (Some(80), Some(1)), "{sessions}");
        let message = sessions["errors"][0]["message"].as_str().unwrap_or("");
        assert!(message.contains("draws.rhai:9:") && message.contains("s.pick: the array is empty"), "{message}");
        let counts: Vec<u64> =
            ["a", "b", "c", "d"].iter().map(|tag| sessions["steps"][*tag]["requests"].as_u64().unwrap_or(0)).collect();
        assert_eq!(counts.iter().sum::<u64>(), 80);
        // s.text(200) is 200 tokens under the run's tokenizer, as the mock counts them too.
        assert_eq!(stat(&summary, "input_sequence_length", "min"), 200.0);
        assert_eq!(stat(&summary, "input_sequence_length", "max"), 200.0);
        assert_eq!(stat(&summary, "usage_prompt_tokens", "max"), 200.0);
        assert!(counts.iter().all(|count| *count >= 8), "80 sessions pick each of 4 tags often: {counts:?}");
        counts
    };
    let first = tags(7);
    assert_eq!(tags(7), first, "the same seed draws the same picks");
    assert_ne!(tags(8), first, "another seed draws others");
}

/// Each sub-agent draws from a stream of its own, made from its parent's and its place among the
/// parent's sub-agents, and is named by that place, so sub-agents run at once (and theirs) draw
/// the same values and have the same names in every run of a seed, whichever of their answers
/// comes first.
#[test]
fn sub_agents_run_at_once_draw_alike_and_are_named_alike_in_every_run_of_a_seed() {
    let source = r#"let target = endpoint(#{ url: "mock", model: "m", kind: "chat", streaming: true, mock: #{ ttft: ms(2), itl: ms(1) } });
let agent = |s| {
    s.parallel([0, 1, 2, 3].map(|i| |a| {
        a.chat(#{ user: "first", max_tokens: 2 });
        a.chat(#{ user: "then", max_tokens: 2, tag: `${i}${a.pick(["x", "y", "z"])}` });
        a.parallel([|b| b.chat(#{ user: "deeper", max_tokens: 2, tag: `${i}-${b.pick(["x", "y", "z"])}` })]);
    }));
};
run(#{ name: "drawn", endpoint: target, phases: [users(#{ users: 8, session: agent, sessions: 24, seed: 3 })] });
"#;
    let tags = || {
        let run = run_scenario("drawn", source);
        assert_eq!(run.code(), Some(0), "{}", run.stderr());
        let summary = run.summary("drawn");
        let steps = scripted(&summary)["steps"].as_object().cloned().unwrap_or_default();
        let counts: Vec<(String, u64)> =
            steps.iter().map(|(tag, step)| (tag.clone(), step["requests"].as_u64().unwrap_or(0))).collect();
        assert_eq!(counts.iter().map(|(_, n)| n).sum::<u64>(), 288, "{counts:?}");
        let mut named: Vec<(String, String)> = run
            .records("drawn")
            .iter()
            .map(|record| {
                let text = |key: &str| record["metadata"][key].as_str().unwrap_or_default().to_string();
                (text("conversation_id"), text("step_tag"))
            })
            .collect();
        named.sort();
        (counts, named)
    };
    let (first, first_named) = tags();
    assert!(first.len() > 12, "each sub-agent's picks vary: {first:?}");
    let deeper = first_named.iter().filter(|(id, tag)| id.ends_with("_1") && tag.contains('-')).count();
    assert_eq!(deeper, 96, "each of a session's 4 sub-agents' own sub-agent is named `.._agent_N_1`: {first_named:?}");
    for _ in 0..2 {
        let (counts, named) = tags();
        assert_eq!(counts, first, "the same seed, the same picks, sub-agent by sub-agent");
        assert_eq!(named, first_named, "the same seed, the same sub-agents' names with the same steps");
    }
}

/// A text a session made (`s.text`) is counted from the count it was made to, wherever it stands
/// in a body: an embeddings input before another, a user message after a system text, tool
/// results after the history. Each request's ISL equals the mock's prompt count, which counts the
/// body's texts itself, joined as AIPerf's client joins them.
#[test]
fn made_texts_count_as_the_server_counts_them_wherever_they_stand_in_a_body() {
    let run = run_scenario(
        "made",
        r#"
const TOOLS = [#{ type: "function", function: #{ name: "read", parameters: #{ type: "object" } } }];
let target = endpoint(#{ url: "mock", model: "m", kind: "chat", streaming: true, mock: #{ ttft: ms(1), itl: ms(1) } });
let embedder = endpoint(#{ url: "mock", model: "e", kind: "embeddings" });
let agent = |s| {
    s.embed(#{ endpoint: embedder, input: [s.text(30), "what is x?"] });
    let r = s.chat(#{ messages: [system("Be brief."), user(s.text(40))], tools: TOOLS, max_tokens: 8 });
    while r.tool_calls.len() > 0 {
        r = s.chat(#{ tool_results: r.tool_calls.map(|c| s.text(50)), max_tokens: 8 });
    }
};
run(#{ name: "made", endpoint: target, phases: [users(#{ users: 2, session: agent, sessions: 4 })] });
"#,
    );
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    let records = run.records("made");
    // Each session: one embeddings request, then the mock's two tool calls and its answer.
    assert_eq!(records.len(), 16);
    for record in &records {
        let metrics = &record["metrics"];
        let isl = metrics["input_sequence_length"]["value"].as_f64();
        assert!(isl.is_some_and(|isl| isl > 30.0), "{record}");
        assert_eq!(
            isl,
            metrics["usage_prompt_tokens"]["value"].as_f64(),
            "{}: {metrics}",
            record["metadata"]["step_tag"]
        );
    }
}

/// Requests answered, but every session ended by the same script error: the artifacts are
/// written and the scenario stops with exit code 2, naming the error; `allow_all_failed`
/// accepts it.
#[test]
fn a_script_error_that_ends_every_session_stops_the_scenario() {
    let source = |allow: bool| {
        format!(
            r#"let target = endpoint(#{{ url: "mock", model: "m", kind: "chat", mock: #{{ ttft: ms(1), itl: ms(1) }} }});
let agent = |s| {{
    let answer = s.chat(#{{ user: "hello", max_tokens: 4 }});
    let verdict = no_such_helper(answer);
}};
run(#{{ name: "broken", endpoint: target, allow_all_failed: {allow}, phases: [users(#{{ users: 2, session: agent, sessions: 4 }})] }});
print("after the run");
"#
        )
    };
    let run = run_scenario("broken", &source(false));
    assert_eq!(run.code(), Some(2), "{}", run.stderr());
    let stderr = run.stderr();
    assert!(stderr.contains("every session of phase `users` failed (4 of 4), first with: "), "{stderr}");
    assert!(stderr.contains("broken.rhai:4:19: Function not found: no_such_helper"), "{stderr}");
    assert!(!run.stdout().contains("after the run"), "the scenario stopped at the run");
    let summary = run.summary("broken");
    assert_eq!(stat(&summary, "request_count", "avg"), 4.0, "the requests were answered and measured");
    assert_eq!(scripted(&summary)["failed"].as_u64(), Some(4));

    let accepted = run_scenario("broken", &source(true));
    assert_eq!(accepted.code(), Some(0), "{}", accepted.stderr());
    assert!(accepted.stdout().contains("after the run"));
}

/// `run(..)` gives the sessions' metrics back to the scenario, as the summary JSON has them, so
/// a script can branch on them: the results phase's, a phase's alone (a scripted warm-up's
/// too), `()` for a run without sessions, and one phase at a time for a run of several.
#[test]
fn a_scenario_reads_its_sessions_metrics_from_the_results() {
    let run = run_scenario(
        "readback",
        r#"let t = endpoint(#{ url: "mock", model: "m", kind: "chat", mock: #{ ttft: ms(1), itl: ms(1) } });
let agent = |s| { s.chat(#{ user: "x", max_tokens: 2, tag: "plan" }); s.chat(#{ user: "y", max_tokens: 2, tag: "act" }); };
let r = run(#{ name: "readback", endpoint: t, phases: [warmup(users(#{ users: 1, session: agent, sessions: 2 })), users(#{ users: 2, session: agent, sessions: 5 })] });
let s = r.scripted_sessions;
print(`sessions ${s.started} ${s.completed} ${s.failed} ${s.steps.act.requests} ${s.session_latency_ms.count} ${s.session_latency_ms.p99 > 0.0}`);
print(`warm-up ${r.phase("warmup").scripted_sessions.started}`);
let plain = run(#{ name: "plain", endpoint: t, phases: [concurrency(#{ requests: 1 })] });
print(`plain ${plain.scripted_sessions == ()}`);
let two = run(#{ name: "two", endpoint: t, phases: [users(#{ name: "a", users: 1, session: agent, sessions: 1 }), users(#{ name: "b", users: 1, session: agent, sessions: 3 })] });
print(`b ${two.phase("b").scripted_sessions.started}`);
two.scripted_sessions;
"#,
    );
    let stdout = run.stdout();
    assert!(stdout.contains("sessions 5 5 0 5 5 true"), "{stdout}");
    assert!(stdout.contains("warm-up 2"), "{stdout}");
    assert!(stdout.contains("plain true"), "{stdout}");
    assert!(stdout.contains("b 3"), "{stdout}");
    assert_eq!(run.code(), Some(2), "{}", run.stderr());
    assert!(
        run.stderr().contains(
            "run `two` has 2 results phases of scripted sessions (a, b): read one as r.phase(\"a\").scripted_sessions"
        ),
        "{}",
        run.stderr()
    );
}

/// A session function cannot start a run: it would hold its script worker, and every session
/// there, until that run ended. The session that tries fails with the reason; the others go on.
#[test]
fn a_session_function_that_starts_a_run_fails_with_the_reason() {
    let run = run_scenario(
        "nested",
        r#"let t = endpoint(#{ url: "mock", model: "m", kind: "chat", mock: #{ ttft: ms(1), itl: ms(1) } });
let agent = |s| {
    s.chat(#{ user: "x", max_tokens: 2 });
    if s.id == 1 { run(#{ name: "inner", endpoint: t, phases: [concurrency(#{ requests: 1 })] }); }
};
run(#{ name: "nested", endpoint: t, phases: [users(#{ users: 2, session: agent, sessions: 4 })] });
"#,
    );
    let message = the_one_failed_session_s_error(&run, "nested");
    assert!(message.contains("nested.rhai:4:20:"), "{message}");
    assert!(message.contains("run `inner`: a session function cannot start a run"), "{message}");
    assert!(!run.artifacts("inner").exists(), "the inner run never started");
}

/// Thresholds gate on the session metrics as on any metric: by their path in the summary JSON,
/// in the pass/fail table and the summary, a failed one exit code 99; one on a run without a
/// scripted results phase is refused before anything is sent.
#[test]
fn thresholds_on_the_session_metrics_pass_and_fail_as_any_threshold() {
    let scenario = |thresholds: &str, phases: &str| {
        format!(
            r#"let t = endpoint(#{{ url: "mock", model: "m", kind: "chat", mock: #{{ ttft: ms(1), itl: ms(1) }} }});
let agent = |s| {{ s.chat(#{{ user: "x", max_tokens: 2, tag: "plan" }}); s.chat(#{{ user: "y", max_tokens: 2, tag: "act" }}); }};
run(#{{ name: "gated", endpoint: t, phases: [{phases}], thresholds: [{thresholds}] }});
"#
        )
    };
    let scripted = "users(#{ users: 2, session: agent, sessions: 4 })";
    let passing = r#""scripted_sessions.failed == 0", "scripted_sessions.steps.act.requests == 4", "scripted_sessions.session_latency_ms.p99 > 0""#;
    let run = run_scenario("gated", &scenario(passing, scripted));
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    let results = run.summary("gated")["thresholds"].clone();
    assert_eq!(results["passed"], true, "{results}");
    assert_eq!(results["results"][1]["actual"], 4.0, "{results}");

    let failing = r#""scripted_sessions.steps.act.latency_ms.p99 < 0.001""#;
    let run = run_scenario("gated", &scenario(failing, scripted));
    assert_eq!(run.code(), Some(99), "{}", run.stderr());
    assert!(run.stdout().contains("scripted_sessions.steps.act.latency_ms.p99 < 0.001"), "{}", run.stdout());

    let run = run_scenario("gated", &scenario(passing, "concurrency(#{ requests: 2 })"));
    assert_eq!(run.code(), Some(2), "{}", run.stderr());
    assert!(
        run.stderr()
            .contains("is on the session metrics of a run's one results phase of scripted sessions; this run has 0"),
        "{}",
        run.stderr()
    );
}
