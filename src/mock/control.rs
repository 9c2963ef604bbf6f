//! The server control routes vLLM serves and AIPerf's `--reset-kv-cache` / `--server-profiler`
//! call: `POST /reset_prefix_cache`, `/start_profile`, `/stop_profile`, each answered 200 and
//! counted in /metrics (`aiperf_mock_control_requests_total{path}`, from the first one on), with
//! whether a profile is running (`aiperf_mock_profiler_running`).

use std::fmt::Write;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};

use http::{Response, StatusCode};

use super::body::MockBody;
use super::reply;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ControlRoute {
    ResetPrefixCache,
    StartProfile,
    StopProfile,
}

const ROUTES: [ControlRoute; 3] =
    [ControlRoute::ResetPrefixCache, ControlRoute::StartProfile, ControlRoute::StopProfile];

impl ControlRoute {
    pub fn of(path: &str) -> Option<Self> {
        ROUTES.into_iter().find(|route| route.path() == path)
    }

    fn path(self) -> &'static str {
        match self {
            ControlRoute::ResetPrefixCache => "/reset_prefix_cache",
            ControlRoute::StartProfile => "/start_profile",
            ControlRoute::StopProfile => "/stop_profile",
        }
    }
}

/// What the control routes keep: how often each was called, and the profiler's state.
#[derive(Debug, Default)]
pub struct ControlCounts {
    requests: [AtomicU64; ROUTES.len()],
    profiler_running: AtomicBool,
}

impl ControlCounts {
    pub fn serve(&self, route: ControlRoute) -> Response<MockBody> {
        self.requests[route as usize].fetch_add(1, Relaxed);
        match route {
            // The prefix cache itself is emptied by the router (`MockState::reset_prefix_cache`).
            ControlRoute::ResetPrefixCache => {}
            ControlRoute::StartProfile => self.profiler_running.store(true, Relaxed),
            ControlRoute::StopProfile => self.profiler_running.store(false, Relaxed),
        }
        reply::with_body(StatusCode::OK, "text/plain", MockBody::whole(String::new()))
    }

    /// Their families in Prometheus text format, appended to `out`, once a control request came
    /// (so the server metrics of runs that send none are what they were).
    pub fn render(&self, out: &mut String) {
        if self.requests.iter().all(|count| count.load(Relaxed) == 0) {
            return;
        }
        let name = "aiperf_mock_control_requests_total";
        let _ = writeln!(out, "# HELP {name} Control requests received (KV-cache reset, profiler start and stop).");
        let _ = writeln!(out, "# TYPE {name} counter");
        for route in ROUTES {
            let _ =
                writeln!(out, "{name}{{path=\"{}\"}} {}", route.path(), self.requests[route as usize].load(Relaxed));
        }
        let name = "aiperf_mock_profiler_running";
        let _ = writeln!(out, "# HELP {name} 1 between a /start_profile and the next /stop_profile.");
        let _ = writeln!(out, "# TYPE {name} gauge\n{name} {}", u8::from(self.profiler_running.load(Relaxed)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_route_is_counted_and_the_profiler_state_follows_start_and_stop() {
        let counts = ControlCounts::default();
        let mut text = String::new();
        counts.render(&mut text);
        assert_eq!(text, "", "nothing before the first control request");
        for path in ["/reset_prefix_cache", "/start_profile", "/reset_prefix_cache"] {
            assert_eq!(counts.serve(ControlRoute::of(path).unwrap()).status(), StatusCode::OK);
        }
        let mut text = String::new();
        counts.render(&mut text);
        assert!(text.contains("aiperf_mock_control_requests_total{path=\"/reset_prefix_cache\"} 2\n"), "{text}");
        assert!(text.contains("aiperf_mock_control_requests_total{path=\"/stop_profile\"} 0\n"), "{text}");
        assert!(text.contains("aiperf_mock_profiler_running 1\n"), "{text}");
        counts.serve(ControlRoute::StopProfile);
        let mut text = String::new();
        counts.render(&mut text);
        assert!(text.contains("aiperf_mock_profiler_running 0\n"), "{text}");
        assert_eq!(ControlRoute::of("/flush_cache"), None);
    }
}
