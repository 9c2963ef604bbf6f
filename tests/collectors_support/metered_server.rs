//! A deterministic inference server for the server-metrics window tests: it answers
//! OpenAI chat completions (non-streaming, 4 completion tokens each) and serves Prometheus
//! `/metrics` whose counters and histogram advance by a fixed amount per request served,
//! before the response goes out, so the true work inside any window is known exactly.
//! `start_publishing_every` makes a late publisher: `/metrics` shows a snapshot refreshed
//! every period, as servers that update their metrics from a periodic stats loop do.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Generation tokens each request adds to `test:generation_tokens_total`.
pub const TOKENS_PER_REQUEST: u64 = 4;
/// Upper bounds of the TTFT histogram's finite buckets, in seconds.
pub const TTFT_BOUNDS: [&str; 4] = ["0.01", "0.05", "0.1", "1.0"];

/// The TTFT observation of the `n`th request served (from 0), in microseconds: every fourth
/// request is slow (0.5 s), the others fast (0.02 s), so two buckets fill.
pub fn ttft_us(n: u64) -> u64 {
    if n % 4 == 3 { 500_000 } else { 20_000 }
}

/// What the server has counted since it started.
#[derive(Default)]
struct Counts {
    requests: u64,
    ttft_sum_us: u64,
    /// Observations per finite bucket (non-cumulative), then above the last bound.
    per_bucket: [u64; TTFT_BOUNDS.len() + 1],
}

pub struct MeteredServer {
    pub port: u16,
    counts: Arc<Mutex<Counts>>,
    stop: Arc<AtomicBool>,
}

/// What `/metrics` shows: the live counts, or the last published snapshot.
#[derive(Clone)]
enum Exposition {
    Live,
    Snapshot(Arc<Mutex<String>>),
}

impl Drop for MeteredServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

impl MeteredServer {
    /// Metrics updated as each request is served.
    pub fn start() -> MeteredServer {
        Self::start_with(Exposition::Live)
    }

    /// Metrics published every `period` only.
    pub fn start_publishing_every(period: Duration) -> MeteredServer {
        let snapshot = Arc::new(Mutex::new(metrics_text(&Counts::default())));
        let server = Self::start_with(Exposition::Snapshot(snapshot.clone()));
        let (counts, stop) = (server.counts.clone(), server.stop.clone());
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                std::thread::sleep(period);
                let text = metrics_text(&counts.lock().expect("counts"));
                *snapshot.lock().expect("snapshot") = text;
            }
        });
        server
    }

    fn start_with(exposition: Exposition) -> MeteredServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let server = MeteredServer { port, counts: Arc::default(), stop: Arc::new(AtomicBool::new(false)) };
        let (counts, stop) = (server.counts.clone(), server.stop.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                if stop.load(Ordering::Relaxed) {
                    return;
                }
                let Ok(stream) = stream else { continue };
                let (counts, exposition) = (counts.clone(), exposition.clone());
                std::thread::spawn(move || serve_connection(stream, &counts, &exposition));
            }
        });
        server
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Requests served so far.
    pub fn requests(&self) -> u64 {
        self.counts.lock().expect("counts").requests
    }
}

/// Serve one keep-alive connection until the client closes it.
fn serve_connection(stream: TcpStream, counts: &Mutex<Counts>, exposition: &Exposition) {
    let _ = stream.set_nodelay(true);
    let Ok(writer) = stream.try_clone() else { return };
    let mut writer = writer;
    let mut reader = BufReader::new(stream);
    loop {
        let mut request_line = String::new();
        if reader.read_line(&mut request_line).unwrap_or(0) == 0 {
            return;
        }
        let mut content_length = 0usize;
        loop {
            let mut header = String::new();
            if reader.read_line(&mut header).unwrap_or(0) == 0 {
                return;
            }
            let header = header.trim_end();
            if header.is_empty() {
                break;
            }
            if let Some((name, value)) = header.split_once(':')
                && name.eq_ignore_ascii_case("content-length")
            {
                content_length = value.trim().parse().unwrap_or(0);
            }
        }
        let mut body = vec![0u8; content_length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        let path = request_line.split_whitespace().nth(1).unwrap_or("/");
        let (content_type, answer) = if path.starts_with("/metrics") {
            let text = match exposition {
                Exposition::Live => metrics_text(&counts.lock().expect("counts")),
                Exposition::Snapshot(snapshot) => snapshot.lock().expect("snapshot").clone(),
            };
            ("text/plain; version=0.0.4", text)
        } else if path.ends_with("/chat/completions") {
            let n = {
                let mut counts = counts.lock().expect("counts");
                let n = counts.requests;
                counts.requests += 1;
                let ttft = ttft_us(n);
                counts.ttft_sum_us += ttft;
                let bucket = TTFT_BOUNDS
                    .iter()
                    .position(|bound| ttft as f64 <= bound.parse::<f64>().expect("bound") * 1e6)
                    .unwrap_or(TTFT_BOUNDS.len());
                counts.per_bucket[bucket] += 1;
                n
            };
            ("application/json", chat_answer(n))
        } else {
            ("text/plain", "not found".to_string())
        };
        let status = if content_type == "text/plain" { "404 Not Found" } else { "200 OK" };
        let head =
            format!("HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\r\n", answer.len());
        if writer.write_all(head.as_bytes()).and_then(|_| writer.write_all(answer.as_bytes())).is_err() {
            return;
        }
    }
}

fn chat_answer(n: u64) -> String {
    format!(
        r#"{{"id":"chatcmpl-{n}","object":"chat.completion","created":0,"model":"metered","choices":[{{"index":0,"message":{{"role":"assistant","content":"one two three four"}},"finish_reason":"length"}}],"usage":{{"prompt_tokens":8,"completion_tokens":{TOKENS_PER_REQUEST},"total_tokens":{}}}}}"#,
        8 + TOKENS_PER_REQUEST
    )
}

fn metrics_text(counts: &Counts) -> String {
    let mut text = String::new();
    text.push_str("# HELP test:generation_tokens_total Number of generation tokens processed.\n");
    text.push_str("# TYPE test:generation_tokens_total counter\n");
    text.push_str(&format!(
        "test:generation_tokens_total{{model=\"metered\"}} {}\n",
        counts.requests * TOKENS_PER_REQUEST
    ));
    text.push_str("# HELP test:requests_served Requests answered since the server started.\n");
    text.push_str("# TYPE test:requests_served gauge\n");
    text.push_str(&format!("test:requests_served{{model=\"metered\"}} {}\n", counts.requests));
    text.push_str("# HELP test:time_to_first_token_seconds Histogram of time to first token in seconds.\n");
    text.push_str("# TYPE test:time_to_first_token_seconds histogram\n");
    let mut cumulative = 0;
    for (bound, own) in TTFT_BOUNDS.iter().zip(counts.per_bucket) {
        cumulative += own;
        text.push_str(&format!(
            "test:time_to_first_token_seconds_bucket{{model=\"metered\",le=\"{bound}\"}} {cumulative}\n"
        ));
    }
    text.push_str(&format!(
        "test:time_to_first_token_seconds_bucket{{model=\"metered\",le=\"+Inf\"}} {}\n",
        counts.requests
    ));
    text.push_str(&format!(
        "test:time_to_first_token_seconds_sum{{model=\"metered\"}} {}\n",
        counts.ttft_sum_us as f64 / 1e6
    ));
    text.push_str(&format!("test:time_to_first_token_seconds_count{{model=\"metered\"}} {}\n", counts.requests));
    text
}
