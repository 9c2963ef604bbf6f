//! `aiperf mock` as a process of its own on a loopback port, killed when dropped.

use std::process::{Child, Command, Stdio};

pub struct MockProcess(Child);

impl MockProcess {
    /// Serving on `port` (answers within a moment; runs wait for it with their pre-flight).
    pub fn start(port: u16) -> Self {
        let child = Command::new(env!("CARGO_BIN_EXE_aiperf"))
            .args(["mock", "--port", &port.to_string(), "--ttft-ms", "5", "--itl-ms", "1"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn aiperf mock");
        Self(child)
    }

    /// Serving on `port` with `settings` (`--max-running 8` …), and listening before it returns.
    pub fn listening(port: u16, settings: &[&str]) -> Self {
        let child = Command::new(env!("CARGO_BIN_EXE_aiperf"))
            .args(["mock", "--port", &port.to_string()])
            .args(settings)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn aiperf mock");
        Self(child).once_listening(port)
    }

    /// Serving on `port` with `envs` and the further `args` (split at spaces), listening
    /// when it returns (its answer key read).
    pub fn start_with(port: u16, envs: &[(&str, &std::path::Path)], args: &str) -> Self {
        let child = Command::new(env!("CARGO_BIN_EXE_aiperf"))
            .args(["mock", "--port", &port.to_string(), "--ttft-ms", "1", "--itl-ms", "1"])
            .args(args.split_whitespace())
            .envs(envs.iter().copied())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn aiperf mock");
        Self(child).once_listening(port)
    }

    fn once_listening(self, port: u16) -> Self {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(std::time::Instant::now() < deadline, "aiperf mock did not listen on port {port}");
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        self
    }
}

impl Drop for MockProcess {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
