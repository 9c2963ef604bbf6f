//! Helpers for the collector tests: real Prometheus exporters started on loopback (and a
//! clear failure when one is not installed), a tiny fixed-answer HTTP server, plain GETs, and a
//! metered inference server (metered_server).

#![allow(dead_code)]

pub mod metered_server;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How to get every tool these tests need.
pub const SETUP_HINT: &str = "run `scripts/real-servers.sh` (apt-get install prometheus-node-exporter prometheus \
     prometheus-pushgateway; pip install pyarrow duckdb)";

/// The path of an installed program, or a failed test saying how to install it.
pub fn require_program(name: &str) -> PathBuf {
    let dirs = std::env::var("PATH").unwrap_or_default();
    std::env::split_paths(&dirs)
        .chain([PathBuf::from("/usr/bin"), PathBuf::from("/usr/sbin")])
        .map(|dir| dir.join(name))
        .find(|path| path.is_file())
        .unwrap_or_else(|| panic!("`{name}` is not installed; {SETUP_HINT}"))
}

/// A free loopback port.
pub fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.local_addr().expect("addr").port()
}

/// A plain HTTP/1.0 exchange: (status, content type, body).
pub fn http(method: &str, port: u16, path: &str, body: &str) -> std::io::Result<(u16, String, String)> {
    http_with(method, port, path, "text/plain", body)
}

/// `http` with a body of `content_type`.
pub fn http_with(
    method: &str,
    port: u16,
    path: &str,
    content_type: &str,
    body: &str,
) -> std::io::Result<(u16, String, String)> {
    let mut stream = TcpStream::connect(("127.0.0.1", port))?;
    stream.set_read_timeout(Some(Duration::from_secs(30)))?;
    write!(
        stream,
        "{method} {path} HTTP/1.0\r\nHost: 127.0.0.1:{port}\r\nContent-Length: {}\r\nContent-Type: {content_type}\r\n\r\n{body}",
        body.len()
    )?;
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw)?;
    let text = String::from_utf8_lossy(&raw).to_string();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head.split_whitespace().nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    let content_type = head
        .lines()
        .find_map(|l| l.to_ascii_lowercase().strip_prefix("content-type:").map(|v| v.trim().to_string()))
        .unwrap_or_default();
    Ok((status, content_type, body.to_string()))
}

/// A running exporter, killed when dropped.
pub struct Exporter {
    child: Child,
    pub port: u16,
    _dir: tempfile::TempDir,
}

impl Drop for Exporter {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Exporter {
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/metrics", self.port)
    }

    fn start(program: &str, args: impl Fn(u16, &Path) -> Vec<String>) -> Exporter {
        let binary = require_program(program);
        let dir = tempfile::tempdir().expect("tempdir");
        let port = free_port();
        let child = Command::new(&binary)
            .args(args(port, dir.path()))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", binary.display()));
        let exporter = Exporter { child, port, _dir: dir };
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            if matches!(http("GET", port, "/metrics", ""), Ok((200, _, _))) {
                return exporter;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!("{program} did not answer /metrics on port {port} within 30 s");
    }

    pub fn node_exporter() -> Exporter {
        Exporter::start("prometheus-node-exporter", |port, _| vec![format!("--web.listen-address=127.0.0.1:{port}")])
    }

    pub fn prometheus() -> Exporter {
        Exporter::start("prometheus", |port, dir| {
            let config = dir.join("prometheus.yml");
            std::fs::write(&config, "global:\n  scrape_interval: 15s\n").expect("config");
            vec![
                format!("--config.file={}", config.display()),
                format!("--storage.tsdb.path={}", dir.join("data").display()),
                format!("--web.listen-address=127.0.0.1:{port}"),
            ]
        })
    }

    /// A Prometheus server scraping `target` (host:port, path /metrics) as job `job` every
    /// `interval` (e.g. "500ms"); query it with `http("GET", port, "/api/v1/…", "")`. Returns
    /// once its scrape loop has tried `target` (up or not), so a slow start-up cannot miss the
    /// first seconds of what the test then serves there.
    pub fn prometheus_scraping(job: &str, target: &str, interval: &str) -> Exporter {
        let prometheus = Exporter::start("prometheus", |port, dir| {
            let config = dir.join("prometheus.yml");
            let text = format!(
                "global:\n  scrape_interval: {interval}\n  scrape_timeout: {interval}\nscrape_configs:\n  - job_name: {job}\n    static_configs:\n      - targets: ['{target}']\n"
            );
            std::fs::write(&config, text).expect("config");
            vec![
                format!("--config.file={}", config.display()),
                format!("--storage.tsdb.path={}", dir.join("data").display()),
                format!("--web.listen-address=127.0.0.1:{port}"),
            ]
        });
        let deadline = Instant::now() + Duration::from_secs(60);
        while Instant::now() < deadline {
            if let Ok((200, _, body)) = http("GET", prometheus.port, "/api/v1/targets", "") {
                // A target never scraped shows the zero time as its last scrape.
                if body.contains(target) && body.contains("\"lastScrape\"") && !body.contains("\"0001-01-01T") {
                    return prometheus;
                }
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!("Prometheus did not scrape {target} within 60 s");
    }

    pub fn pushgateway() -> Exporter {
        Exporter::start("prometheus-pushgateway", |port, _| vec![format!("--web.listen-address=127.0.0.1:{port}")])
    }

    /// Replace what the pushgateway serves for `job` with `text`.
    pub fn push(&self, job: &str, text: &str) {
        let (status, _, body) = http("PUT", self.port, &format!("/metrics/job/{job}"), text).expect("push");
        assert!((200..300).contains(&status), "push answered {status}: {body}");
    }
}

/// A server that answers fixed `(path, content type, body)` routes and 404 otherwise.
pub fn fixed_server(routes: Vec<(&'static str, &'static str, String)>) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut stream = stream;
            let mut buffer = [0u8; 4096];
            let read = stream.read(&mut buffer).unwrap_or(0);
            let request = String::from_utf8_lossy(&buffer[..read]);
            let path = request.split_whitespace().nth(1).unwrap_or("/");
            let (status, content_type, body) = match routes.iter().find(|(p, _, _)| *p == path) {
                Some((_, content_type, body)) => ("200 OK", *content_type, body.as_str()),
                None => ("404 Not Found", "text/plain", "not found"),
            };
            let _ = write!(
                stream,
                "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    port
}

/// A server answering `path` with the k-th scrape of an exporter recorded twice: each line of
/// `first` whose value `second` changed goes on growing by that change every scrape (counters),
/// the others stay as recorded; scrape 0 is `first`.
pub fn growing_server(path: &'static str, first: &str, second: &str) -> u16 {
    let value_of = |line: &str| line.rsplit_once(' ').and_then(|(_, v)| v.parse::<f64>().ok());
    let lines: Vec<(String, f64)> = first
        .lines()
        .zip(second.lines())
        .map(|(a, b)| match (value_of(a), value_of(b)) {
            (Some(va), Some(vb)) => (a.to_string(), vb - va),
            _ => (a.to_string(), 0.0),
        })
        .collect();
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    std::thread::spawn(move || {
        for (scrape, stream) in listener.incoming().flatten().enumerate() {
            let mut stream = stream;
            let mut buffer = [0u8; 4096];
            let read = stream.read(&mut buffer).unwrap_or(0);
            let request = String::from_utf8_lossy(&buffer[..read]);
            if request.split_whitespace().nth(1) != Some(path) {
                let _ = write!(stream, "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
                continue;
            }
            let mut body = String::new();
            for (line, step) in &lines {
                match line.rsplit_once(' ') {
                    Some((series, value)) if *step != 0.0 => {
                        let grown = value.parse::<f64>().unwrap_or(0.0) + scrape as f64 * step;
                        body.push_str(&format!("{series} {grown}\n"));
                    }
                    _ => body.push_str(&format!("{line}\n")),
                }
            }
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    port
}

/// Run python3 on `script` with `args`; a missing pyarrow/duckdb fails with the setup hint.
pub fn python(script: &str, args: &[&str]) -> String {
    let python = require_program("python3");
    let output = Command::new(python).arg("-c").arg(script).args(args).output().expect("python3 runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    if stderr.contains("ModuleNotFoundError") {
        panic!("python3 lacks a module ({stderr}); {SETUP_HINT}");
    }
    assert!(output.status.success(), "python3 failed: {stderr}");
    String::from_utf8_lossy(&output.stdout).to_string()
}
