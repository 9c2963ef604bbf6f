//! Stop signals during `aiperf run`: SIGINT (Ctrl-C), SIGTERM (Kubernetes, Slurm, CI time-outs)
//! and SIGHUP each stop the current run like Ctrl-C (sending stops, in-flight requests are
//! cancelled, partial artifacts are written); a second signal of any kind ends the process at once,
//! unless it came within a second of the first: GNU `timeout` and job controls signal the
//! process and then its process group, microseconds apart, and that is one request to stop.

use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use tokio::signal::unix::{Signal, SignalKind, signal};

use super::exit_code;
use crate::cancel::CancelSignal;

/// A signal this soon after the first is taken as the same request to stop.
const SAME_REQUEST: Duration = Duration::from_secs(1);

/// A signal that stops a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopSignal {
    Interrupt,
    Terminate,
    HangUp,
}

impl StopSignal {
    fn name(self) -> &'static str {
        match self {
            StopSignal::Interrupt => "SIGINT (Ctrl-C)",
            StopSignal::Terminate => "SIGTERM",
            StopSignal::HangUp => "SIGHUP",
        }
    }

    /// The process exit code after this signal (128 + its number, as shells report it).
    pub fn exit_code(self) -> i32 {
        match self {
            StopSignal::Interrupt => exit_code::INTERRUPTED,
            StopSignal::Terminate => exit_code::TERMINATED,
            StopSignal::HangUp => exit_code::HUNG_UP,
        }
    }
}

/// Watches for stop signals while it lives; the handlers are installed before `start` returns.
pub struct SignalWatcher {
    task: tokio::task::JoinHandle<()>,
    received: Arc<OnceLock<StopSignal>>,
}

impl SignalWatcher {
    /// Raise `cancel` at the first stop signal; exit at once at a second one that comes a
    /// second or more after it.
    pub fn start(runtime: &tokio::runtime::Runtime, cancel: CancelSignal) -> std::io::Result<Self> {
        let _entered = runtime.enter();
        let mut streams = Streams {
            interrupt: signal(SignalKind::interrupt())?,
            terminate: signal(SignalKind::terminate())?,
            hang_up: signal(SignalKind::hangup())?,
        };
        let received = Arc::new(OnceLock::new());
        let task = runtime.spawn({
            let received = received.clone();
            async move {
                let first = streams.next().await;
                let first_at = Instant::now();
                let _ = received.set(first);
                eprintln!(
                    "\n{}: stopping the run, cancelling in-flight requests, writing artifacts \
                     (a second signal quits at once)",
                    first.name()
                );
                cancel.cancel();
                let second = loop {
                    let next = streams.next().await;
                    if first_at.elapsed() >= SAME_REQUEST {
                        break next;
                    }
                };
                eprintln!("{}: quitting at once", second.name());
                std::process::exit(second.exit_code());
            }
        });
        Ok(Self { task, received })
    }

    /// The first stop signal that arrived, if any.
    pub fn received(&self) -> Option<StopSignal> {
        self.received.get().copied()
    }
}

impl Drop for SignalWatcher {
    fn drop(&mut self) {
        self.task.abort();
    }
}

struct Streams {
    interrupt: Signal,
    terminate: Signal,
    hang_up: Signal,
}

impl Streams {
    async fn next(&mut self) -> StopSignal {
        tokio::select! {
            _ = self.interrupt.recv() => StopSignal::Interrupt,
            _ = self.terminate.recv() => StopSignal::Terminate,
            _ = self.hang_up.recv() => StopSignal::HangUp,
        }
    }
}
