//! `aiperf chat`: one message (`--quick`) or an interactive chat with an OpenAI-compatible
//! server, the reply streamed as it comes and each turn's TTFT, speed and ITL printed after it.

use std::io::Write;
use std::ops::ControlFlow;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_rustls::{HttpsConnector, HttpsConnectorBuilder};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde_json::{Value, json};

use super::exit_code;
use crate::client::sse::SseParser;
use crate::dataset::tokenizer::Tokenizer;
use crate::dataset::tokenizer_hub;

#[derive(Debug, clap::Args)]
pub struct ChatArgs {
    /// Model name served by the endpoint
    #[arg(short, long)]
    pub model: String,
    /// Base URL of the OpenAI-compatible server (a bare host, a /v1 base, or the full
    /// /chat/completions path), as `aiperf profile --url`
    #[arg(short, long, default_value = "http://localhost:8000")]
    pub url: String,
    /// A system prompt put before the conversation
    #[arg(long)]
    pub system_prompt: Option<String>,
    /// Send this one message, print the reply and its stats, and exit
    #[arg(short, long, visible_alias = "message", value_name = "MESSAGE")]
    pub quick: Option<String>,
    /// Resend the conversation's history each turn (the default)
    #[arg(long, overrides_with = "no_history")]
    pub history: bool,
    /// Stateless turns: each message sent alone
    #[arg(long)]
    pub no_history: bool,
    /// API key sent as a Bearer token
    #[arg(long, env = "OPENAI_API_KEY", hide_env_values = true)]
    pub api_key: Option<String>,
    /// Tokenizer counting the reply's tokens: `builtin` (offline), a tokenizer.json, or a
    /// Hugging Face id (default: the model name, else builtin when it cannot be loaded)
    #[arg(long)]
    pub tokenizer: Option<String>,
    /// Seconds to wait for the connection and between two chunks of a reply
    #[arg(long, default_value_t = 600.0, hide = true)]
    pub read_timeout_s: f64,
}

type ChatClient = Client<HttpsConnector<HttpConnector>, Full<Bytes>>;

pub fn chat(args: ChatArgs, runtime: &tokio::runtime::Runtime) -> i32 {
    let url = match chat_completions_url(&args.url) {
        Ok(url) => url,
        Err(e) => {
            eprintln!("error: --url: {e}");
            return exit_code::SCRIPT_ERROR;
        }
    };
    let tokenizer = load_tokenizer(args.tokenizer.as_deref().unwrap_or(&args.model), args.tokenizer.is_some());
    let tokenizer = match tokenizer {
        Ok(tokenizer) => tokenizer,
        Err(e) => {
            eprintln!("error: --tokenizer: {e:#}");
            return exit_code::SCRIPT_ERROR;
        }
    };
    let client = match chat_client() {
        Ok(client) => client,
        Err(e) => {
            eprintln!("error: {e:#}");
            return exit_code::FAILURE;
        }
    };
    let session = Session { client, url, args: &args, tokenizer };
    runtime.block_on(session.run())
}

/// A user's URL as the chat completions URL: `http://` added when no scheme is given, then
/// `/v1/chat/completions` (or `/chat/completions` after a `/v1`) unless already there.
fn chat_completions_url(url: &str) -> Result<String> {
    let trimmed = url.trim();
    if trimmed.is_empty() {
        bail!("the URL is empty");
    }
    let with_scheme = if trimmed.contains("://") { trimmed.to_string() } else { format!("http://{trimmed}") };
    let base = with_scheme.trim_end_matches('/');
    let full = if base.ends_with("/chat/completions") {
        base.to_string()
    } else if base.ends_with("/v1") {
        format!("{base}/chat/completions")
    } else {
        format!("{base}/v1/chat/completions")
    };
    full.parse::<http::Uri>().map_err(|e| anyhow!("`{url}` is not a valid URL: {e}"))?;
    Ok(full)
}

/// The tokenizer named; the model's name falls back to the builtin one when it cannot be
/// loaded (a model name that is no Hugging Face id, or no network).
fn load_tokenizer(name: &str, named_by_user: bool) -> Result<Arc<Tokenizer>> {
    match Tokenizer::load(&tokenizer_hub::spec_of(name)) {
        Ok(tokenizer) => Ok(Arc::new(tokenizer)),
        Err(e) if named_by_user => Err(e),
        Err(e) => {
            eprintln!("note: no tokenizer for `{name}` ({e:#}); counting tokens with the builtin one");
            Ok(Tokenizer::shared_builtin())
        }
    }
}

fn chat_client() -> Result<ChatClient> {
    let tls =
        crate::client::tls_client_config(&crate::plan::TlsSettings::default(), false).context("setting up TLS")?;
    let mut tls = Arc::unwrap_or_clone(tls);
    tls.alpn_protocols.clear();
    let mut tcp = HttpConnector::new();
    tcp.enforce_http(false);
    tcp.set_connect_timeout(Some(Duration::from_secs(10)));
    let connector =
        HttpsConnectorBuilder::new().with_tls_config(tls).https_or_http().enable_http1().wrap_connector(tcp);
    Ok(Client::builder(TokioExecutor::new()).build(connector))
}

struct Session<'a> {
    client: ChatClient,
    url: String,
    args: &'a ChatArgs,
    tokenizer: Arc<Tokenizer>,
}

/// What one reply was: its text, when each piece came, and the server's token counts.
#[derive(Debug, Default)]
struct Reply {
    content: String,
    reasoning: String,
    first_piece: Option<Duration>,
    last_piece: Option<Duration>,
    usage: Option<Value>,
}

impl Session<'_> {
    async fn run(self) -> i32 {
        let system: Vec<Value> =
            self.args.system_prompt.iter().map(|prompt| json!({"role": "system", "content": prompt})).collect();
        if let Some(message) = &self.args.quick {
            let messages: Vec<Value> =
                system.iter().cloned().chain([json!({"role": "user", "content": message})]).collect();
            return match self.turn(messages).await {
                Ok(_) => exit_code::OK,
                Err(e) => {
                    eprintln!("error: {e:#}");
                    exit_code::FAILURE
                }
            };
        }
        println!("Please enter a message for the chat model (Ctrl-D to exit):");
        let mut history: Vec<Value> = Vec::new();
        loop {
            print!("> ");
            let _ = std::io::stdout().flush();
            let message = match tokio::task::spawn_blocking(read_line).await {
                Ok(Ok(Some(line))) => line,
                Ok(Ok(None)) => break,
                Ok(Err(e)) => {
                    eprintln!("error: cannot read stdin: {e}");
                    return exit_code::FAILURE;
                }
                Err(e) => {
                    eprintln!("error: cannot read stdin: {e}");
                    return exit_code::FAILURE;
                }
            };
            let user = json!({"role": "user", "content": message});
            let messages: Vec<Value> = system.iter().chain(&history).cloned().chain([user.clone()]).collect();
            match self.turn(messages).await {
                Ok(reply) if !self.args.no_history => {
                    let text = if reply.content.is_empty() { reply.reasoning } else { reply.content };
                    history.push(user);
                    history.push(json!({"role": "assistant", "content": text}));
                }
                Ok(_) => {}
                // The chat goes on: the user may retry.
                Err(e) => eprintln!("request failed: {e:#}"),
            }
        }
        println!();
        exit_code::OK
    }

    /// Send `messages`, print the reply as it streams and then its stats.
    async fn turn(&self, messages: Vec<Value>) -> Result<Reply> {
        let body = json!({
            "model": self.args.model,
            "messages": messages,
            "stream": true,
            "stream_options": {"include_usage": true},
        });
        let mut request = http::Request::post(&self.url)
            .header(http::header::CONTENT_TYPE, "application/json")
            .header(http::header::ACCEPT, "text/event-stream");
        if let Some(key) = &self.args.api_key {
            request = request.header(http::header::AUTHORIZATION, format!("Bearer {key}"));
        }
        let request = request.body(Full::new(Bytes::from(body.to_string()))).context("building the request")?;
        let patience = Duration::from_secs_f64(self.args.read_timeout_s.max(0.001));
        let started = Instant::now();
        let response = tokio::time::timeout(patience, self.client.request(request))
            .await
            .map_err(|_| anyhow!("no answer from {} within {patience:?}", self.url))?
            .map_err(|e| anyhow!("cannot reach {}: {}", self.url, root_cause(&e)))?;
        let status = response.status();
        let mut body = response.into_body();
        if !status.is_success() {
            let mut detail = Vec::new();
            while let Ok(Some(Ok(frame))) = tokio::time::timeout(patience, body.frame()).await {
                if let Some(data) = frame.data_ref() {
                    detail.extend_from_slice(data);
                }
                if detail.len() > 500 {
                    break;
                }
            }
            let detail = String::from_utf8_lossy(&detail[..detail.len().min(500)]).trim().to_string();
            bail!("{} answered {status}: {detail}", self.url);
        }
        let mut reply = Reply::default();
        let mut parser = SseParser::new(16 << 20);
        let mut failure = None;
        loop {
            let frame = match tokio::time::timeout(patience, body.frame()).await {
                Err(_) => bail!("the reply stalled for {patience:?}"),
                Ok(None) => break,
                Ok(Some(frame)) => frame.map_err(|e| anyhow!("the reply broke off: {}", root_cause(&e)))?,
            };
            let Some(data) = frame.data_ref() else { continue };
            let arrived = started.elapsed();
            let fed = parser.feed(data, |event| match read_event(event.event_type, event.data, &mut reply, arrived) {
                Ok(()) => ControlFlow::Continue(()),
                Err(e) => {
                    failure = Some(e);
                    ControlFlow::Break(())
                }
            });
            if fed.is_err() {
                bail!("an event of the reply is larger than 16 MiB");
            }
            if let Some(e) = failure.take() {
                return Err(e);
            }
        }
        println!();
        println!("{}", self.stats(&reply));
        Ok(reply)
    }

    fn stats(&self, reply: &Reply) -> String {
        let reasoning_tokens = self.tokenizer.count(&reply.reasoning);
        let output_tokens = self.tokenizer.count(&reply.content) + reasoning_tokens;
        let usage_count = |key: &str| reply.usage.as_ref().and_then(|usage| usage[key].as_u64());
        let input_tokens = usage_count("prompt_tokens");
        let cached = reply.usage.as_ref().and_then(|usage| usage["prompt_tokens_details"]["cached_tokens"].as_u64());
        turn_stats(
            TurnTimes { first_piece: reply.first_piece, last_piece: reply.last_piece },
            TurnTokens { output: output_tokens, reasoning: reasoning_tokens, input: input_tokens, cached },
        )
    }
}

/// One line of stdin without its line end; None at its end (Ctrl-D).
fn read_line() -> std::io::Result<Option<String>> {
    let mut line = String::new();
    if std::io::stdin().read_line(&mut line)? == 0 {
        return Ok(None);
    }
    Ok(Some(line.trim_end_matches(['\n', '\r']).to_string()))
}

/// Take one SSE event into `reply`: content and reasoning printed as they come.
fn read_event(event_type: &[u8], data: &[u8], reply: &mut Reply, arrived: Duration) -> Result<()> {
    let text = String::from_utf8_lossy(data);
    if event_type == b"error" {
        bail!("the server sent an error mid-stream: {}", text.trim());
    }
    let text = text.trim();
    if text.is_empty() || text == "[DONE]" {
        return Ok(());
    }
    let Ok(chunk) = serde_json::from_str::<Value>(text) else { return Ok(()) };
    if let Some(error) = chunk.get("error") {
        bail!("the server sent an error mid-stream: {error}");
    }
    if chunk["usage"].is_object() {
        reply.usage = Some(chunk["usage"].clone());
    }
    let delta = &chunk["choices"][0]["delta"];
    let content = delta["content"].as_str().filter(|s| !s.is_empty());
    let reasoning =
        delta["reasoning_content"].as_str().or_else(|| delta["reasoning"].as_str()).filter(|s| !s.is_empty());
    if content.is_none() && reasoning.is_none() {
        return Ok(());
    }
    reply.first_piece.get_or_insert(arrived);
    reply.last_piece = Some(arrived);
    let mut stdout = std::io::stdout();
    for piece in [reasoning, content].into_iter().flatten() {
        let _ = stdout.write_all(piece.as_bytes());
    }
    let _ = stdout.flush();
    reply.reasoning.push_str(reasoning.unwrap_or_default());
    reply.content.push_str(content.unwrap_or_default());
    Ok(())
}

/// When a reply's first and last pieces came, from the request's start.
struct TurnTimes {
    first_piece: Option<Duration>,
    last_piece: Option<Duration>,
}

/// A reply's token counts: output (reasoning included) counted here, input and cached
/// prompt tokens as the server reported them.
struct TurnTokens {
    output: usize,
    reasoning: usize,
    input: Option<u64>,
    cached: Option<u64>,
}

/// The stats block printed after a reply: TTFT, end-to-end tokens/s, ITL with the decode
/// rate, and the prompt's token count (and cache hits) when the server reported them.
fn turn_stats(times: TurnTimes, tokens: TurnTokens) -> String {
    let (Some(first), Some(last)) = (times.first_piece, times.last_piece) else {
        return "(no tokens received)".to_string();
    };
    if tokens.output == 0 {
        return "(no tokens received)".to_string();
    }
    let latency_s = last.as_secs_f64();
    let described = if tokens.reasoning > 0 {
        format!("{} tokens, {} reasoning", tokens.output, tokens.reasoning)
    } else {
        format!("{} tokens", tokens.output)
    };
    let mut lines = vec![
        format!("TTFT: {:.2} ms", first.as_secs_f64() * 1e3),
        format!(
            "TPS:  {:.2} tokens/s ({described} in {latency_s:.2}s)",
            if latency_s > 0.0 { tokens.output as f64 / latency_s } else { 0.0 }
        ),
    ];
    if tokens.output >= 2 {
        let itl_s = (last - first).as_secs_f64() / (tokens.output - 1) as f64;
        if itl_s > 0.0 {
            lines.push(format!("ITL:  {:.2} ms/token (decode {:.2} tokens/s)", itl_s * 1e3, 1.0 / itl_s));
        }
    }
    match (tokens.input, tokens.cached) {
        (Some(input), Some(cached)) if input > 0 => lines.push(format!(
            "ISL:  {input} prompt tokens, {cached} cached ({:.1}%)",
            100.0 * cached as f64 / input as f64
        )),
        (Some(input), _) => lines.push(format!("ISL:  {input} prompt tokens")),
        _ => {}
    }
    lines.join("\n")
}

fn root_cause(error: &(dyn std::error::Error + 'static)) -> String {
    let mut cause = error;
    while let Some(next) = cause.source() {
        cause = next;
    }
    cause.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_become_the_chat_completions_url() {
        assert_eq!(chat_completions_url("localhost:8000").unwrap(), "http://localhost:8000/v1/chat/completions");
        assert_eq!(chat_completions_url("https://h/v1/").unwrap(), "https://h/v1/chat/completions");
        assert_eq!(
            chat_completions_url("http://h/openai/v1/chat/completions").unwrap(),
            "http://h/openai/v1/chat/completions"
        );
        assert!(chat_completions_url(" ").is_err());
        assert!(chat_completions_url("http://bad host").is_err());
    }

    #[test]
    fn stats_give_ttft_speed_and_itl() {
        let ms = Duration::from_millis;
        let stats = turn_stats(
            TurnTimes { first_piece: Some(ms(100)), last_piece: Some(ms(1100)) },
            TurnTokens { output: 11, reasoning: 0, input: Some(40), cached: Some(10) },
        );
        assert!(stats.contains("TTFT: 100.00 ms"), "{stats}");
        assert!(stats.contains("TPS:  10.00 tokens/s (11 tokens in 1.10s)"), "{stats}");
        assert!(stats.contains("ITL:  100.00 ms/token (decode 10.00 tokens/s)"), "{stats}");
        assert!(stats.contains("ISL:  40 prompt tokens, 10 cached (25.0%)"), "{stats}");
        let none = turn_stats(
            TurnTimes { first_piece: None, last_piece: None },
            TurnTokens { output: 0, reasoning: 0, input: None, cached: None },
        );
        assert_eq!(none, "(no tokens received)");
    }
}
