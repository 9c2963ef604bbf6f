//! A real llama.cpp `llama-server` for tests: started on a free loopback port with the tiny
//! model in tests/fixtures, killed on drop. `scripts/real-servers.sh` builds the binary.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct LlamaServer {
    child: Child,
    pub port: u16,
}

impl LlamaServer {
    /// Start llama-server with 4 slots, one thread, metrics on, plus `extra_args`.
    pub fn start(extra_args: &[&str]) -> LlamaServer {
        Self::start_with_slots(4, extra_args)
    }

    pub fn start_with_slots(slots: u32, extra_args: &[&str]) -> LlamaServer {
        let binary = llama_server_binary();
        let port = super::closed_port();
        let child = Command::new(&binary)
            .arg("-m")
            .arg(fixture("tiny-trained8k-llama.gguf"))
            .args(["--host", "127.0.0.1", "--port", &port.to_string(), "--metrics", "-c", "4096", "-t", "1"])
            .args(["-np", &slots.to_string()])
            .args(extra_args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", binary.display()));
        let mut server = LlamaServer { child, port };
        server.wait_until_healthy();
        server
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Kill the server now (for tests of a server that dies mid-run).
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// GET `path` and return the body (a tiny HTTP/1.0 client, enough for /health and /metrics).
    pub fn get(&self, path: &str) -> Option<String> {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).ok()?;
        stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
        write!(stream, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").ok()?;
        let mut response = String::new();
        stream.read_to_string(&mut response).ok()?;
        let (head, body) = response.split_once("\r\n\r\n")?;
        let status_line = head.lines().next()?;
        status_line.contains(" 200 ").then(|| body.to_string())
    }

    fn wait_until_healthy(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(60);
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!("llama-server exited at start with {status}");
            }
            if self.get("/health").is_some() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!("llama-server did not become healthy within 60 s on port {}", self.port);
    }
}

impl Drop for LlamaServer {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A file in tests/fixtures.
pub fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests").join("fixtures").join(name)
}

/// `$AIPERF_LLAMA_SERVER`, else where scripts/real-servers.sh builds it; a clear failure if absent.
fn llama_server_binary() -> PathBuf {
    if let Ok(path) = std::env::var("AIPERF_LLAMA_SERVER") {
        return PathBuf::from(path);
    }
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scripts").join("real-servers.sh");
    let printed =
        Command::new("bash").arg(&script).arg("--print").output().expect("run scripts/real-servers.sh --print");
    let path = PathBuf::from(String::from_utf8_lossy(&printed.stdout).trim());
    assert!(
        path.is_file(),
        "llama-server is not built ({} is missing): run scripts/real-servers.sh once (or set AIPERF_LLAMA_SERVER)",
        path.display()
    );
    path
}
