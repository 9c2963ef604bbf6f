//! A scripted HTTP/1.1 server on 127.0.0.1: each POST gets the answer a test's function gives
//! for its path, body and place in the order of requests (a JSON body or SSE events, sent whole
//! with a Content-Length), so metrics read from the answers are known exactly. Keep-alive; any
//! other request gets 404. It runs on its own threads for as long as the test lives.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// What one request gets.
pub enum Reply {
    Json(String),
    /// A JSON body under another status (a refusal).
    Status(u16, String),
    /// SSE events; each is sent as a `data:` line (a pair `(event type, data)` with `event:`).
    Sse(Vec<(Option<String>, String)>),
}

/// What a POST to `path` with `body`, the `index`-th POST (from 0), gets; None: 404.
pub type Script = dyn Fn(&str, &[u8], u64) -> Option<Reply> + Send + Sync;

pub struct ScriptedServer {
    port: u16,
}

impl ScriptedServer {
    pub fn start(script: impl Fn(&str, &[u8], u64) -> Option<Reply> + Send + Sync + 'static) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("address").port();
        let script: Arc<Script> = Arc::new(script);
        let posts = Arc::new(AtomicU64::new(0));
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (script, posts) = (script.clone(), posts.clone());
                std::thread::spawn(move || serve(stream, &*script, &posts));
            }
        });
        Self { port }
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }
}

/// The requests of one connection, one after another, until the client closes it.
fn serve(stream: TcpStream, script: &Script, posts: &AtomicU64) {
    let mut writer = stream.try_clone().expect("clone the stream");
    let mut reader = BufReader::new(stream);
    loop {
        let mut request_line = String::new();
        if reader.read_line(&mut request_line).unwrap_or(0) == 0 {
            return;
        }
        let mut content_length = 0;
        loop {
            let mut header = String::new();
            if reader.read_line(&mut header).unwrap_or(0) == 0 {
                return;
            }
            if header.trim().is_empty() {
                break;
            }
            if let Some((name, value)) = header.split_once(':')
                && name.eq_ignore_ascii_case("content-length")
            {
                content_length = value.trim().parse().unwrap_or(0);
            }
        }
        let mut body = vec![0; content_length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        let mut words = request_line.split_whitespace();
        let (method, path) = (words.next().unwrap_or(""), words.next().unwrap_or(""));
        let reply = (method == "POST").then(|| script(path, &body, posts.fetch_add(1, Ordering::SeqCst))).flatten();
        let (status, content_type, payload) = match reply {
            Some(Reply::Json(json)) => ("200 OK".to_string(), "application/json", json),
            Some(Reply::Status(code, json)) => (format!("{code} Refused"), "application/json", json),
            Some(Reply::Sse(events)) => {
                let mut text = String::new();
                for (event_type, data) in events {
                    if let Some(event_type) = event_type {
                        text.push_str(&format!("event: {event_type}\n"));
                    }
                    text.push_str(&format!("data: {data}\n\n"));
                }
                ("200 OK".to_string(), "text/event-stream", text)
            }
            None => ("404 Not Found".to_string(), "text/plain", "not found".to_string()),
        };
        let head =
            format!("HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\r\n", payload.len());
        if writer.write_all(head.as_bytes()).and_then(|()| writer.write_all(payload.as_bytes())).is_err() {
            return;
        }
    }
}
