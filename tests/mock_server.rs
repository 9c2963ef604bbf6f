//! End-to-end checks of the built-in mock server over real HTTP: response shapes, token
//! counts, timing, queueing, metrics and error replies; its prefix cache, simulated
//! speculative decoding and transcription durations.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use aiperf::dataset::tokenizer::Tokenizer;
use aiperf::mock::{MockConfig, MockServer};
use bytes::Bytes;
use http::{Method, Request, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde_json::{Value, json};

type HttpClient = Client<HttpConnector, Full<Bytes>>;

fn client() -> HttpClient {
    Client::builder(TokioExecutor::new()).build_http()
}

fn local() -> SocketAddr {
    "127.0.0.1:0".parse().unwrap()
}

async fn start(config: MockConfig) -> MockServer {
    MockServer::start(config, local()).await.unwrap()
}

fn config(ttft_ms: f64, itl_ms: f64) -> MockConfig {
    MockConfig { ttft_ms, itl_ms, ..MockConfig::default() }
}

async fn send(
    client: &HttpClient,
    server: &MockServer,
    method: Method,
    path: &str,
    body: &str,
    api_key: Option<&str>,
) -> hyper::Response<Incoming> {
    let mut request = Request::builder().method(method).uri(format!("{}{path}", server.base_url()));
    if let Some(key) = api_key {
        request = request.header("authorization", format!("Bearer {key}"));
    }
    let request =
        request.header("content-type", "application/json").body(Full::new(Bytes::from(body.to_string()))).unwrap();
    client.request(request).await.unwrap()
}

async fn text_of(response: hyper::Response<Incoming>) -> String {
    String::from_utf8(response.into_body().collect().await.unwrap().to_bytes().to_vec()).unwrap()
}

/// POST `body` and return the status and the parsed JSON reply.
async fn post_json(client: &HttpClient, server: &MockServer, path: &str, body: Value) -> (StatusCode, Value) {
    let response = send(client, server, Method::POST, path, &body.to_string(), None).await;
    let status = response.status();
    (status, serde_json::from_str(&text_of(response).await).unwrap())
}

/// A streamed reply's SSE events (the text after `data: `), each with when it arrived,
/// counted from the moment the request was sent.
async fn post_stream(client: &HttpClient, server: &MockServer, path: &str, body: Value) -> Vec<(Duration, String)> {
    let sent = Instant::now();
    let response = send(client, server, Method::POST, path, &body.to_string(), None).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let mut body = response.into_body();
    let mut pending = String::new();
    let mut events = Vec::new();
    while let Some(frame) = body.frame().await {
        let Ok(data) = frame.unwrap().into_data() else { continue };
        let arrived = sent.elapsed();
        pending.push_str(std::str::from_utf8(&data).unwrap());
        while let Some(end) = pending.find("\n\n") {
            let event = pending[..end].strip_prefix("data: ").expect("every event is a data line").to_string();
            events.push((arrived, event));
            pending.drain(..end + 2);
        }
    }
    assert!(pending.is_empty(), "trailing bytes: {pending:?}");
    events
}

async fn metrics_text(client: &HttpClient, server: &MockServer) -> String {
    let response = send(client, server, Method::GET, "/metrics", "", None).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()["content-type"], "text/plain; version=0.0.4; charset=utf-8");
    text_of(response).await
}

/// The value of the sample whose name-and-labels part is exactly `series`.
fn sample(metrics: &str, series: &str) -> f64 {
    metrics
        .lines()
        .find_map(|line| line.strip_prefix(series).and_then(|rest| rest.strip_prefix(' ')))
        .unwrap_or_else(|| panic!("no sample {series} in\n{metrics}"))
        .parse()
        .unwrap()
}

fn tokens_in(text: &str) -> usize {
    Tokenizer::shared_builtin().count(text)
}

#[tokio::test]
async fn streaming_chat_sends_role_tokens_finish_usage_and_done() {
    let server = start(config(5.0, 1.0)).await;
    let client = client();
    let request = json!({
        "model": "my-model",
        "messages": [{"role": "system", "content": "You are terse."}, {"role": "user", "content": [{"type": "text", "text": "Say hi."}]}],
        "stream": true, "stream_options": {"include_usage": true},
        "max_tokens": 3, "max_completion_tokens": 7, "ignore_eos": true
    });
    let events = post_stream(&client, &server, "/v1/chat/completions", request).await;
    assert_eq!(events.last().unwrap().1, "[DONE]");
    let chunks: Vec<Value> = events[..events.len() - 1].iter().map(|(_, e)| serde_json::from_str(e).unwrap()).collect();
    assert_eq!(chunks.len(), 1 + 7 + 1, "role chunk, 7 tokens, usage");

    let role = &chunks[0];
    assert_eq!(role["object"], "chat.completion.chunk");
    assert_eq!(role["model"], "my-model");
    assert!(role["id"].as_str().unwrap().starts_with("chatcmpl-"));
    assert_eq!(role["choices"][0]["delta"], json!({"role": "assistant", "content": ""}));

    let tokens = &chunks[1..8];
    let text: String = tokens.iter().map(|c| c["choices"][0]["delta"]["content"].as_str().unwrap()).collect();
    assert_eq!(tokens_in(&text), 7);
    for (index, chunk) in tokens.iter().enumerate() {
        let expected = if index == 6 { json!("length") } else { Value::Null };
        assert_eq!(chunk["choices"][0]["finish_reason"], expected, "chunk {index}");
        assert_eq!(chunk["id"], role["id"]);
    }

    let usage = &chunks[8];
    assert_eq!(usage["choices"], json!([]));
    // Each message counted on its own, as a client counts them.
    let prompt_tokens = (tokens_in("You are terse.") + tokens_in("Say hi.")) as u64;
    assert_eq!(
        usage["usage"],
        json!({"prompt_tokens": prompt_tokens, "completion_tokens": 7, "total_tokens": prompt_tokens + 7,
               "prompt_tokens_details": {"cached_tokens": 0}})
    );
    server.shutdown().await;
}

#[tokio::test]
async fn zero_delay_streaming_completions_arrive_whole_and_without_usage_unless_asked() {
    let server = start(config(0.0, 0.0)).await;
    let client = client();
    let request = json!({"model": "m", "prompt": "Once upon a time", "stream": true, "max_tokens": 64});
    let events = post_stream(&client, &server, "/v1/completions", request).await;
    assert_eq!(events.len(), 64 + 1);
    assert_eq!(events[64].1, "[DONE]");
    let mut text = String::new();
    for (index, (_, event)) in events[..64].iter().enumerate() {
        let chunk: Value = serde_json::from_str(event).unwrap();
        assert_eq!(chunk["object"], "text_completion");
        assert!(chunk.get("usage").is_none());
        text.push_str(chunk["choices"][0]["text"].as_str().unwrap());
        let expected = if index == 63 { json!("length") } else { Value::Null };
        assert_eq!(chunk["choices"][0]["finish_reason"], expected);
    }
    assert_eq!(tokens_in(&text), 64);
}

#[tokio::test]
async fn non_streaming_bodies_carry_the_text_and_usage() {
    let server = start(MockConfig { default_output_tokens: 12, ..config(0.0, 0.0) }).await;
    let client = client();

    let chat = json!({"messages": [{"role": "user", "content": "hello there"}], "max_completion_tokens": 500});
    let (status, reply) = post_json(&client, &server, "/v1/chat/completions", chat).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(reply["object"], "chat.completion");
    assert_eq!(reply["model"], "mock-model", "the default model when none is named");
    assert_eq!(reply["choices"][0]["message"]["role"], "assistant");
    assert_eq!(reply["choices"][0]["finish_reason"], "length");
    assert_eq!(tokens_in(reply["choices"][0]["message"]["content"].as_str().unwrap()), 500);
    let prompt_tokens = tokens_in("hello there") as u64;
    assert_eq!(
        reply["usage"],
        json!({"prompt_tokens": prompt_tokens, "completion_tokens": 500, "total_tokens": prompt_tokens + 500,
               "prompt_tokens_details": {"cached_tokens": 0}})
    );

    let (status, reply) =
        post_json(&client, &server, "/v1/completions", json!({"model": "m", "prompt": ["a b", "c"]})).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(reply["object"], "text_completion");
    assert!(reply["id"].as_str().unwrap().starts_with("cmpl-"));
    assert_eq!(tokens_in(reply["choices"][0]["text"].as_str().unwrap()), 12, "default_output_tokens");
    assert_eq!(reply["usage"]["prompt_tokens"], tokens_in("a b") + tokens_in("c"));
    assert_eq!(reply["usage"]["completion_tokens"], 12);
}

#[tokio::test]
async fn measured_timing_matches_the_configured_delays() {
    let server = start(config(50.0, 10.0)).await;
    let client = client();
    let warm_up = json!({"messages": [{"role": "user", "content": "x"}], "max_tokens": 1});
    post_json(&client, &server, "/v1/chat/completions", warm_up).await;

    let request = json!({"messages": [{"role": "user", "content": "time me"}], "stream": true, "max_tokens": 10});
    let events = post_stream(&client, &server, "/v1/chat/completions", request).await;
    let content_times: Vec<Duration> = events[1..11].iter().map(|(at, _)| *at).collect();
    // Token i is due at 50 + 10 i ms: never early (deadlines, not sleeps), and late by at most
    // what a busy machine's scheduler can add.
    for (i, at) in content_times.iter().enumerate() {
        let at_ms = at.as_secs_f64() * 1000.0;
        let due_ms = 50.0 + 10.0 * i as f64;
        assert!(at_ms >= due_ms - 1.0 && at_ms < due_ms + 60.0, "token {i} at {at_ms:.1} ms, due at {due_ms} ms");
    }
    // The median gap: a token the scheduler held back closes up on the next ones (they are
    // due already), which moves the mean but not the median.
    let mut gaps_ms: Vec<f64> =
        content_times.windows(2).map(|pair| (pair[1] - pair[0]).as_secs_f64() * 1000.0).collect();
    gaps_ms.sort_by(f64::total_cmp);
    let median_gap_ms = gaps_ms[gaps_ms.len() / 2];
    assert!(
        (8.0..16.0).contains(&median_gap_ms),
        "median inter-token gap {median_gap_ms:.2} ms, configured 10: {gaps_ms:?}"
    );

    let sent = Instant::now();
    let request = json!({"messages": [{"role": "user", "content": "time me"}], "max_tokens": 10});
    let (status, _) = post_json(&client, &server, "/v1/chat/completions", request).await;
    assert_eq!(status, StatusCode::OK);
    let total_ms = sent.elapsed().as_secs_f64() * 1000.0;
    assert!((139.0..200.0).contains(&total_ms), "non-streaming total {total_ms} ms, expected ~140");
}

#[tokio::test]
async fn requests_beyond_max_running_wait_and_their_ttft_grows() {
    let server = start(MockConfig { max_running: 1, ..config(200.0, 0.0) }).await;
    let client = client();
    let request = || json!({"messages": [{"role": "user", "content": "q"}], "max_tokens": 1});
    let sent = Instant::now();
    let (first, second, ()) = tokio::join!(
        post_json(&client, &server, "/v1/chat/completions", request()),
        async {
            tokio::time::sleep(Duration::from_millis(30)).await;
            let metrics = metrics_text(&client, &server).await;
            assert_eq!(sample(&metrics, r#"vllm:num_requests_running{model_name="mock-model"}"#), 1.0);
            post_json(&client, &server, "/v1/chat/completions", request()).await
        },
        async {
            tokio::time::sleep(Duration::from_millis(100)).await;
            let metrics = metrics_text(&client, &server).await;
            assert_eq!(sample(&metrics, r#"vllm:num_requests_waiting{model_name="mock-model"}"#), 1.0);
        }
    );
    assert_eq!((first.0, second.0), (StatusCode::OK, StatusCode::OK));
    let both_ms = sent.elapsed().as_secs_f64() * 1000.0;
    assert!(both_ms >= 400.0, "the second request waited for the first: {both_ms} ms");
    let metrics = metrics_text(&client, &server).await;
    assert_eq!(sample(&metrics, r#"vllm:num_requests_waiting{model_name="mock-model"}"#), 0.0);
    assert_eq!(sample(&metrics, r#"vllm:num_requests_running{model_name="mock-model"}"#), 0.0);
}

#[tokio::test]
async fn one_http2_connection_holds_hundreds_of_streams_with_large_bodies_at_once() {
    const STREAMS: usize = 400;
    let server = std::sync::Arc::new(start(MockConfig { max_running: 1_000, ..config(5_000.0, 0.0) }).await);
    let h2: HttpClient = Client::builder(TokioExecutor::new()).http2_only(true).build_http();
    // 400 bodies of ~6 KB: more than hyper's default 1 MiB connection window, so a window that
    // small would have the client cut them into small DATA frames.
    let body = json!({"messages": [{"role": "user", "content": "word ".repeat(1_200)}], "max_tokens": 1});
    let mut requests = tokio::task::JoinSet::new();
    for _ in 0..STREAMS {
        let (h2, server, body) = (h2.clone(), server.clone(), body.clone());
        requests.spawn(async move { post_json(&h2, &server, "/v1/chat/completions", body).await.0 });
    }
    let all_sent = requests.join_all();
    let watch = async {
        // Every stream is held in its 5 s TTFT: all 400 run at once unless the connection
        // admits fewer streams (hyper's default: 200).
        let h1 = client();
        let started = Instant::now();
        loop {
            let metrics = metrics_text(&h1, &server).await;
            let running = sample(&metrics, r#"vllm:num_requests_running{model_name="mock-model"}"#);
            if running as usize == STREAMS || started.elapsed() > Duration::from_millis(4_500) {
                return running;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    let (replies, most_running) = tokio::join!(all_sent, watch);
    assert_eq!(most_running as usize, STREAMS, "every stream of the one connection was admitted at once");
    assert!(replies.iter().all(|status| *status == StatusCode::OK), "every stream was answered");
}

#[tokio::test]
async fn metrics_follow_the_served_load() {
    let server = start(config(2.0, 1.0)).await;
    let client = client();
    let before = metrics_text(&client, &server).await;
    for line in [
        "# HELP vllm:num_requests_running ",
        "# TYPE vllm:kv_cache_usage_perc gauge",
        "# TYPE vllm:e2e_request_latency_seconds histogram",
    ] {
        assert!(before.contains(line), "{line}");
    }
    assert_eq!(sample(&before, r#"vllm:generation_tokens_total{model_name="mock-model"}"#), 0.0);

    let prompt = "The quick brown fox jumps over the lazy dog";
    for stream in [false, true] {
        let request = json!({"model": "mock-model", "messages": [{"role": "user", "content": prompt}], "max_tokens": 5, "stream": stream});
        let response = send(&client, &server, Method::POST, "/v1/chat/completions", &request.to_string(), None).await;
        assert_eq!(response.status(), StatusCode::OK);
        text_of(response).await;
    }
    let after = metrics_text(&client, &server).await;
    let label = r#"model_name="mock-model""#;
    assert_eq!(sample(&after, &format!("vllm:generation_tokens_total{{{label}}}")), 10.0);
    assert_eq!(sample(&after, &format!("vllm:prompt_tokens_total{{{label}}}")), 2.0 * tokens_in(prompt) as f64);
    assert_eq!(sample(&after, &format!(r#"vllm:request_success_total{{{label},finished_reason="length"}}"#)), 2.0);
    assert_eq!(sample(&after, &format!("vllm:time_to_first_token_seconds_count{{{label}}}")), 2.0);
    assert_eq!(sample(&after, &format!(r#"vllm:time_to_first_token_seconds_bucket{{{label},le="+Inf"}}"#)), 2.0);
    assert_eq!(sample(&after, &format!("vllm:inter_token_latency_seconds_count{{{label}}}")), 8.0);
    assert_eq!(sample(&after, &format!("vllm:e2e_request_latency_seconds_count{{{label}}}")), 2.0);
    let ttft_sum = sample(&after, &format!("vllm:time_to_first_token_seconds_sum{{{label}}}"));
    assert!(ttft_sum >= 0.004, "two TTFTs of at least 2 ms each, got {ttft_sum}");
    assert_eq!(sample(&after, &format!("vllm:kv_cache_usage_perc{{{label}}}")), 0.0);
    assert_eq!(sample(&after, &format!("vllm:num_requests_running{{{label}}}")), 0.0);
}

#[tokio::test]
async fn a_client_leaving_mid_stream_frees_its_slot() {
    let server = start(config(0.0, 50.0)).await;
    let client = client();
    let request = json!({"messages": [{"role": "user", "content": "long"}], "stream": true, "max_tokens": 200});
    let response = send(&client, &server, Method::POST, "/v1/chat/completions", &request.to_string(), None).await;
    let mut body = response.into_body();
    body.frame().await.unwrap().unwrap();
    let during = metrics_text(&client, &server).await;
    assert_eq!(sample(&during, r#"vllm:num_requests_running{model_name="mock-model"}"#), 1.0);
    assert!(sample(&during, r#"vllm:kv_cache_usage_perc{model_name="mock-model"}"#) > 0.0);
    drop(body);

    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let metrics = metrics_text(&client, &server).await;
        if sample(&metrics, r#"vllm:num_requests_running{model_name="mock-model"}"#) == 0.0 {
            assert_eq!(sample(&metrics, r#"vllm:kv_cache_usage_perc{model_name="mock-model"}"#), 0.0);
            assert_eq!(
                sample(&metrics, r#"vllm:request_success_total{model_name="mock-model",finished_reason="length"}"#),
                0.0
            );
            break;
        }
        assert!(Instant::now() < deadline, "the running gauge never went back down");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn errors_are_openai_shaped() {
    let server = start(MockConfig { api_key: Some("sekret".to_string()), ..config(0.0, 0.0) }).await;
    let client = client();
    let chat = r#"{"messages":[{"role":"user","content":"hi"}],"max_tokens":2}"#;

    for key in [None, Some("wrong")] {
        let response = send(&client, &server, Method::POST, "/v1/chat/completions", chat, key).await;
        assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
        let reply: Value = serde_json::from_str(&text_of(response).await).unwrap();
        assert_eq!(reply["error"]["code"], "invalid_api_key");
    }
    let response = send(&client, &server, Method::POST, "/v1/chat/completions", chat, Some("sekret")).await;
    assert_eq!(response.status(), StatusCode::OK);
    let response = send(&client, &server, Method::GET, "/health", "", None).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(serde_json::from_str::<Value>(&text_of(response).await).unwrap(), json!({"status": "ok"}));

    let response =
        send(&client, &server, Method::POST, "/v1/chat/completions", "{\"messages\": [", Some("sekret")).await;
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    let reply: Value = serde_json::from_str(&text_of(response).await).unwrap();
    assert_eq!(reply["error"]["type"], "invalid_request_error");
    assert!(reply["error"]["message"].as_str().unwrap().contains("invalid JSON"), "{reply}");

    let response = send(&client, &server, Method::POST, "/v1/nope", chat, Some("sekret")).await;
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
    assert!(serde_json::from_str::<Value>(&text_of(response).await).unwrap()["error"]["message"].is_string());

    let response = send(&client, &server, Method::GET, "/v1/chat/completions", "", Some("sekret")).await;
    assert_eq!(response.status(), StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(response.headers()["allow"], "POST");
}

#[tokio::test]
async fn models_are_listed_and_shutdown_stops_serving() {
    let server = start(MockConfig { models: vec!["a".to_string(), "b".to_string()], ..config(0.0, 0.0) }).await;
    let client = client();
    let response = send(&client, &server, Method::GET, "/v1/models", "", None).await;
    assert_eq!(response.status(), StatusCode::OK);
    let reply: Value = serde_json::from_str(&text_of(response).await).unwrap();
    assert_eq!(reply["object"], "list");
    let ids: Vec<&str> = reply["data"].as_array().unwrap().iter().map(|m| m["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["a", "b"]);

    let addr = server.addr();
    tokio::time::timeout(Duration::from_secs(5), server.shutdown()).await.expect("shutdown returns promptly");
    assert!(tokio::net::TcpStream::connect(addr).await.is_err(), "nothing listens after shutdown");
}

#[tokio::test]
async fn invalid_settings_are_refused_at_start() {
    for bad in [
        config(-1.0, 0.0),
        config(f64::NAN, 0.0),
        MockConfig { default_output_tokens: 0, ..MockConfig::default() },
        MockConfig { prefill_ms_per_token: -0.1, ..MockConfig::default() },
        MockConfig { prefix_block_tokens: 0, ..MockConfig::default() },
        MockConfig { spec_decode_tokens: 3, spec_decode_acceptance: 1.5, ..MockConfig::default() },
        MockConfig { spec_decode_tokens: 1_000, ..MockConfig::default() },
    ] {
        assert!(MockServer::start(bad, local()).await.is_err());
    }
}

#[tokio::test]
async fn a_named_tokenizer_counts_the_prompts_and_the_answers_still_count_as_sent() {
    let o200k = Tokenizer::load(&aiperf::dataset::tokenizer_hub::spec_of("o200k_base")).unwrap();
    let prompt = "    fn main() {\n        println!(\"{}\", 1234567 * 89);\n    }\n\n日本語のテキスト";
    assert_ne!(o200k.count(prompt), tokens_in(prompt), "a prompt the two tokenizers count apart");
    let server = start(MockConfig { tokenizer: Some("o200k_base".into()), ..config(0.0, 0.0) }).await;
    let client = client();
    let chat = json!({"messages": [{"role": "user", "content": prompt}], "max_completion_tokens": 300});
    let (status, reply) = post_json(&client, &server, "/v1/chat/completions", chat).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(reply["usage"]["prompt_tokens"], o200k.count(prompt));
    let answer = reply["choices"][0]["message"]["content"].as_str().unwrap();
    assert_eq!((reply["usage"]["completion_tokens"].as_u64(), o200k.count(answer)), (Some(300), 300));

    let unknown = MockConfig { tokenizer: Some("/no/such/tokenizer.json".into()), ..MockConfig::default() };
    let error = format!("{:#}", MockServer::start(unknown, local()).await.err().unwrap());
    assert!(error.contains("mock tokenizer \"/no/such/tokenizer.json\""), "{error}");
}

/// 1024 tokens under the builtin tokenizer (each ` the` is one).
fn prefix_of_1024_tokens(word: &str) -> String {
    let prefix = word.repeat(1024);
    assert_eq!(tokens_in(&prefix), 1024, "{word:?} is one token");
    prefix
}

fn chat_request(content: &str, stream: bool) -> Value {
    json!({"messages": [{"role": "user", "content": content}], "max_tokens": 2, "stream": stream,
           "stream_options": {"include_usage": true}})
}

/// The streamed chat reply's first token's arrival and its usage chunk's `usage`.
async fn streamed_chat(client: &HttpClient, server: &MockServer, content: &str) -> (Duration, Value) {
    let events = post_stream(client, server, "/v1/chat/completions", chat_request(content, true)).await;
    let usage_chunk: Value = serde_json::from_str(&events[events.len() - 2].1).unwrap();
    (events[1].0, usage_chunk["usage"].clone())
}

#[tokio::test]
async fn a_shared_prefix_is_read_from_the_cache_and_its_prefill_skipped() {
    let server = start(MockConfig { prefill_ms_per_token: 0.1, ..config(5.0, 0.0) }).await;
    let client = client();
    let prefix = prefix_of_1024_tokens(" the");
    let (cold_ttft, cold) = streamed_chat(&client, &server, &format!("{prefix} first question")).await;
    let (warm_ttft, warm) = streamed_chat(&client, &server, &format!("{prefix} second question here")).await;
    let (other_ttft, other) = streamed_chat(&client, &server, &format!("{} third", prefix_of_1024_tokens(" a"))).await;
    assert_eq!(cold["prompt_tokens_details"]["cached_tokens"], 0);
    assert_eq!(warm["prompt_tokens_details"]["cached_tokens"], 1024, "the 64 blocks of the shared prefix");
    assert_eq!(other["prompt_tokens_details"]["cached_tokens"], 0, "another prompt shares no block");
    // 5 ms plus 0.1 ms per uncached token: ~108 ms cold, ~5.4 ms with 1024 tokens cached.
    let millis = |ttft: Duration| ttft.as_secs_f64() * 1000.0;
    assert!(millis(cold_ttft) >= 107.0 && millis(other_ttft) >= 107.0, "{cold_ttft:?} {other_ttft:?}");
    assert!(millis(warm_ttft) < 60.0, "the cached prefix is not computed again: {warm_ttft:?}");

    let (status, whole) = post_json(&client, &server, "/v1/chat/completions", chat_request(&prefix, false)).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(whole["usage"]["prompt_tokens"], 1024);
    assert_eq!(
        whole["usage"]["prompt_tokens_details"]["cached_tokens"], 1008,
        "a prompt cached whole still computes its last token: its last block is not read"
    );
    let completion = json!({"prompt": format!("{prefix} and more"), "max_tokens": 1});
    let (_, completion) = post_json(&client, &server, "/v1/completions", completion).await;
    assert_eq!(completion["usage"]["prompt_tokens_details"]["cached_tokens"], 1024, "the same tokens, the same blocks");
    let responses = json!({"input": format!("{prefix} again"), "max_output_tokens": 1});
    let (_, responses) = post_json(&client, &server, "/v1/responses", responses).await;
    assert_eq!(responses["usage"]["input_tokens_details"]["cached_tokens"], 1024);

    let metrics = metrics_text(&client, &server).await;
    let label = r#"model_name="mock-model""#;
    let prompts = [&cold, &warm, &other, &whole["usage"], &completion["usage"]];
    let queried: u64 = prompts.iter().map(|usage| usage["prompt_tokens"].as_u64().unwrap()).sum::<u64>()
        + responses["usage"]["input_tokens"].as_u64().unwrap();
    assert_eq!(sample(&metrics, &format!("vllm:prefix_cache_queries_total{{{label}}}")), queried as f64);
    assert_eq!(
        sample(&metrics, &format!("vllm:prefix_cache_hits_total{{{label}}}")),
        (1024 + 1008 + 1024 + 1024) as f64
    );

    assert!(server.reset_prefix_cache());
    let (_, after_reset) = streamed_chat(&client, &server, &format!("{prefix} first question")).await;
    assert_eq!(after_reset["prompt_tokens_details"]["cached_tokens"], 0, "reset forgets every block");
}

#[tokio::test]
async fn anthropic_messages_cache_what_a_breakpoint_marks_and_split_the_input() {
    let server = start(config(0.0, 0.0)).await;
    let client = client();
    let prefix = prefix_of_1024_tokens(" the");
    let message = |question: &str, marked: bool| {
        let mut block = json!({"type": "text", "text": format!("{prefix}{question}")});
        if marked {
            block["cache_control"] = json!({"type": "ephemeral"});
        }
        json!({"model": "claude", "max_tokens": 3, "messages": [{"role": "user", "content": [block]}]})
    };
    let mut usages = Vec::new();
    for (question, marked) in [(" one", false), (" two", true), (" three", true)] {
        let body = message(question, marked).to_string();
        let request = Request::post(format!("{}/v1/messages", server.base_url()))
            .header("anthropic-version", "2023-06-01")
            .header("content-type", "application/json")
            .body(Full::new(Bytes::from(body)))
            .unwrap();
        let reply: Value = serde_json::from_str(&text_of(client.request(request).await.unwrap()).await).unwrap();
        usages.push(reply["usage"].clone());
    }
    let prompt_tokens = tokens_in(&format!("{prefix} two")) as u64;
    assert_eq!(
        usages[0],
        json!({"input_tokens": tokens_in(&format!("{prefix} one")), "cache_creation_input_tokens": 0,
               "cache_read_input_tokens": 0, "output_tokens": 3}),
        "no breakpoint, no caching"
    );
    let written = (prompt_tokens / 16) * 16;
    assert_eq!(
        usages[1],
        json!({"input_tokens": prompt_tokens - written, "cache_creation_input_tokens": written,
               "cache_read_input_tokens": 0, "output_tokens": 3})
    );
    assert_eq!(usages[2]["cache_read_input_tokens"], 1024);
}

#[tokio::test]
async fn a_thousand_concurrent_streams_share_a_cached_prefix() {
    const STREAMS: usize = 1_000;
    let server = std::sync::Arc::new(start(MockConfig { max_running: STREAMS, ..config(100.0, 2.0) }).await);
    let h2: HttpClient = Client::builder(TokioExecutor::new()).http2_only(true).build_http();
    let prefix = " the".repeat(512);
    let started = Instant::now();
    let mut streams = tokio::task::JoinSet::new();
    for index in 0..STREAMS {
        let (h2, server) = (h2.clone(), server.clone());
        let request = json!({"messages": [{"role": "user", "content": format!("{prefix} question {index}")}],
                             "max_tokens": 20, "stream": true, "stream_options": {"include_usage": true}});
        streams.spawn(async move {
            let events = post_stream(&h2, &server, "/v1/chat/completions", request).await;
            assert_eq!(events.len(), 1 + 20 + 1 + 1, "role, 20 tokens, usage, [DONE]");
            let usage: Value = serde_json::from_str(&events[21].1).unwrap();
            usage["usage"]["prompt_tokens_details"]["cached_tokens"].as_u64().unwrap()
        });
    }
    let cached: Vec<u64> = streams.join_all().await;
    let elapsed = started.elapsed();
    assert_eq!(cached.len(), STREAMS);
    assert_eq!(cached.iter().filter(|tokens| **tokens == 0).count(), 1, "only the first to arrive misses");
    assert_eq!(cached.iter().sum::<u64>(), 512 * (STREAMS as u64 - 1));
    let metrics = metrics_text(&client(), &server).await;
    let hits = sample(&metrics, r#"vllm:prefix_cache_hits_total{model_name="mock-model"}"#);
    assert_eq!(hits, 512.0 * (STREAMS as f64 - 1.0));
    println!("{STREAMS} concurrent streams with a cached 512-token prefix served in {elapsed:?}");
}

#[tokio::test]
async fn speculative_decoding_reports_vllm_s_per_request_metrics_at_the_configured_rate() {
    const RATE: f64 = 0.6;
    let server = start(MockConfig { spec_decode_tokens: 3, spec_decode_acceptance: RATE, ..config(0.0, 0.0) }).await;
    let client = client();
    let (mut steps, mut accepted, mut drafted) = (0, 0, 0);
    for index in 0..200 {
        let request =
            json!({"messages": [{"role": "user", "content": format!("question {index}")}], "max_tokens": 500});
        let (status, reply) = post_json(&client, &server, "/v1/chat/completions", request).await;
        assert_eq!(status, StatusCode::OK);
        let stats = &reply["metrics"]["speculative_decoding"];
        let histogram: Vec<u64> =
            stats["acceptance_histogram"].as_array().unwrap().iter().map(|n| n.as_u64().unwrap()).collect();
        // What AIPerf's vLLM adapter checks: k + 1 buckets, the steps and the accepted
        // tokens they add up to, no more accepted than drafted.
        assert_eq!((histogram.len(), stats["num_spec_tokens"].as_u64()), (4, Some(3)));
        let request_steps = stats["num_spec_steps"].as_u64().unwrap();
        let request_accepted = stats["num_accepted_draft_tokens"].as_u64().unwrap();
        assert_eq!(histogram.iter().sum::<u64>(), request_steps);
        assert_eq!(histogram.iter().zip(0..).map(|(count, j)| count * j).sum::<u64>(), request_accepted);
        assert_eq!(stats["num_draft_tokens"].as_u64().unwrap(), 3 * request_steps);
        let mean_length = stats["mean_acceptance_length"].as_f64().unwrap();
        assert!((mean_length - (1.0 + request_accepted as f64 / request_steps as f64)).abs() < 1e-9);
        assert!(request_steps < 499, "steps emit more than one token: {request_steps}");
        steps += request_steps;
        accepted += request_accepted;
        drafted += 3 * request_steps;
    }
    let rate = accepted as f64 / drafted as f64;
    assert!((rate - RATE).abs() < 0.01 * RATE, "draft acceptance rate {rate}, configured {RATE}");

    let metrics = metrics_text(&client, &server).await;
    let label = r#"model_name="mock-model""#;
    assert_eq!(sample(&metrics, &format!("vllm:spec_decode_num_drafts_total{{{label}}}")), steps as f64);
    assert_eq!(sample(&metrics, &format!("vllm:spec_decode_num_draft_tokens_total{{{label}}}")), drafted as f64);
    assert_eq!(sample(&metrics, &format!("vllm:spec_decode_num_accepted_tokens_total{{{label}}}")), accepted as f64);
    let per_position: f64 = (0..3)
        .map(|position| {
            sample(
                &metrics,
                &format!(r#"vllm:spec_decode_num_accepted_tokens_per_pos_total{{{label},position="{position}"}}"#),
            )
        })
        .sum();
    assert_eq!(per_position, accepted as f64);
}

#[tokio::test]
async fn a_speculative_stream_carries_the_metrics_on_its_usage_chunk_and_ends_sooner() {
    let server = start(MockConfig { spec_decode_tokens: 4, spec_decode_acceptance: 1.0, ..config(10.0, 20.0) }).await;
    let client = client();
    let request = json!({"messages": [{"role": "user", "content": "q"}], "max_tokens": 11, "stream": true,
                         "stream_options": {"include_usage": true}});
    let events = post_stream(&client, &server, "/v1/chat/completions", request).await;
    let usage_chunk: Value = serde_json::from_str(&events[events.len() - 2].1).unwrap();
    let stats = &usage_chunk["metrics"]["speculative_decoding"];
    assert_eq!(stats["acceptance_histogram"], json!([0, 0, 0, 0, 2]), "two steps of 5 tokens after the first");
    assert_eq!(stats["draft_acceptance_rate"], 1.0);
    assert_eq!(stats["mean_acceptance_length"], 5.0);
    // Two decode steps of 20 ms after a 10 ms first token, not ten.
    let last_token_at = events[events.len() - 3].0;
    assert!(
        last_token_at >= Duration::from_millis(50) && last_token_at < Duration::from_millis(150),
        "{last_token_at:?}"
    );
}

/// A WAV file of `seconds` of 16 kHz mono silence.
fn wav_of(seconds: f64) -> Vec<u8> {
    let spec = hound::WavSpec {
        channels: 1,
        sample_rate: 16_000,
        bits_per_sample: 16,
        sample_format: hound::SampleFormat::Int,
    };
    let mut bytes = std::io::Cursor::new(Vec::new());
    let mut writer = hound::WavWriter::new(&mut bytes, spec).unwrap();
    for _ in 0..(seconds * 16_000.0) as usize {
        writer.write_sample(0i16).unwrap();
    }
    writer.finalize().unwrap();
    bytes.into_inner()
}

async fn transcribe(client: &HttpClient, server: &MockServer, fields: &[(&str, &str)], wav: &[u8]) -> Value {
    let boundary = "mock-boundary";
    let mut body = Vec::new();
    for (name, value) in fields {
        body.extend_from_slice(
            format!("--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n").as_bytes(),
        );
    }
    body.extend_from_slice(
        format!("--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.wav\"\r\nContent-Type: audio/wav\r\n\r\n").as_bytes(),
    );
    body.extend_from_slice(wav);
    body.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
    let request = Request::post(format!("{}/v1/audio/transcriptions", server.base_url()))
        .header("content-type", format!("multipart/form-data; boundary={boundary}"))
        .body(Full::new(Bytes::from(body)))
        .unwrap();
    let response = client.request(request).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    serde_json::from_str(&text_of(response).await).unwrap()
}

#[tokio::test]
async fn transcriptions_carry_the_audio_s_duration() {
    let server = start(config(0.0, 0.0)).await;
    let client = client();
    let wav = wav_of(2.5);
    let verbose =
        transcribe(&client, &server, &[("model", "whisper-1"), ("response_format", "verbose_json")], &wav).await;
    assert_eq!(verbose["duration"], 2.5);
    assert_eq!(verbose["task"], "transcribe");
    assert_eq!(verbose["usage"], json!({"type": "duration", "seconds": 3}), "whole seconds, rounded up");
    assert_eq!(tokens_in(verbose["text"].as_str().unwrap()), 6, "a word per 0.4 s");
    let tokens = transcribe(&client, &server, &[("model", "gpt-4o-transcribe")], &wav).await;
    assert!(tokens.get("duration").is_none());
    assert_eq!(tokens["usage"], json!({"type": "tokens", "input_tokens": 25, "output_tokens": 6, "total_tokens": 31}));
}
