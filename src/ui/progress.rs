//! A progress bar per phase: requests done of total (or time elapsed of the duration), the
//! request rate and the errors. The hot path only bumps atomics; a ticker redraws from them.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use tokio::task::JoinHandle;

use crate::load::PhaseCounters;
use crate::plan::Phase;
use crate::result::{PhaseSummary, SessionSummary};

const REDRAW_EVERY: Duration = Duration::from_millis(100);

/// How a run shows its phases on stderr.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress {
    /// A bar while a phase runs (stderr is a terminal), and a line that sums it up at its end.
    Bars,
    /// Only the line at each phase's end.
    Lines,
    /// Nothing, not even the run's failed requests as log warnings (`aiperf check`'s trial
    /// sessions, which say themselves how they went).
    Silent,
}

pub struct PhaseProgress {
    bar: ProgressBar,
    ticker: JoinHandle<()>,
    label: String,
    silent: bool,
}

impl PhaseProgress {
    /// Start showing `phase` as `progress` says.
    pub fn start(phase: &Phase, counters: Arc<PhaseCounters>, progress: Progress) -> Self {
        let label = format!("{} ({})", phase.name, phase.kind.as_str());
        // Sessions stand in for requests where a phase counts only them (one request each, or
        // whole conversations, whose bar then fills before their last turns).
        let count = phase.requests.or(phase.sessions);
        let by_time = count.is_none();
        let length = match (count, phase.duration_s) {
            (Some(count), _) => count,
            (None, Some(seconds)) => (seconds * 10.0).ceil() as u64,
            (None, None) => 0,
        };
        let target =
            if progress == Progress::Bars { ProgressDrawTarget::stderr() } else { ProgressDrawTarget::hidden() };
        let bar = ProgressBar::with_draw_target(Some(length), target);
        let template = if by_time {
            "{prefix:.bold} [{bar:32.cyan/blue}] {elapsed}/{msg}"
        } else {
            "{prefix:.bold} [{bar:32.cyan/blue}] {pos}/{len} {msg}"
        };
        if let Ok(style) = ProgressStyle::with_template(template) {
            bar.set_style(style.progress_chars("=> "));
        }
        bar.set_prefix(label.clone());
        let started = Instant::now();
        let duration_s = phase.duration_s;
        let ticker_bar = bar.clone();
        let ticker = tokio::spawn(async move {
            let mut interval = tokio::time::interval(REDRAW_EVERY);
            loop {
                interval.tick().await;
                let elapsed_s = started.elapsed().as_secs_f64();
                let finished = counters.finished();
                let rate = if elapsed_s > 0.0 { finished as f64 / elapsed_s } else { 0.0 };
                let errors = counters.errors.load(Ordering::Relaxed);
                let in_flight = counters.in_flight.load(Ordering::Relaxed);
                let stats = format!("{rate:.1} req/s, {errors} errors, {in_flight} in flight");
                if by_time {
                    ticker_bar.set_position((elapsed_s * 10.0) as u64);
                    ticker_bar.set_message(format!("{:.0}s  {finished} requests, {stats}", duration_s.unwrap_or(0.0)));
                } else {
                    ticker_bar.set_position(finished);
                    ticker_bar.set_message(stats);
                }
            }
        });
        Self { bar, ticker, label, silent: progress == Progress::Silent }
    }

    /// Stop drawing and print one line that sums the phase up.
    pub fn finish(self, summary: &PhaseSummary) {
        self.ticker.abort();
        self.bar.finish_and_clear();
        if self.silent {
            return;
        }
        let rate = if summary.duration_s > 0.0 {
            (summary.completed + summary.errors) as f64 / summary.duration_s
        } else {
            0.0
        };
        let mut line = format!(
            "{}: {} requests, {} ok, {} errors in {:.2} s ({rate:.1} req/s)",
            self.label, summary.sent, summary.completed, summary.errors, summary.duration_s
        );
        if summary.cancelled > 0 {
            line.push_str(&format!(", {} cancelled", summary.cancelled));
        }
        if let Some(sessions) = &summary.sessions {
            line.push_str(&format!("; {}", sessions_line(sessions)));
        }
        eprintln!("{line}");
    }
}

/// The phase's sessions in words: how many went whole, how many were cut and what was left unsent.
fn sessions_line(sessions: &SessionSummary) -> String {
    let mut line = format!("{} sessions, {} whole", sessions.started, sessions.completed);
    if sessions.cut > 0 {
        line.push_str(&format!(", {} cut with {} turns unsent", sessions.cut, sessions.unsent_turns));
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sessions_are_summed_up_with_what_was_cut_and_left_unsent() {
        let whole = SessionSummary { started: 8, completed: 8, cut: 0, unsent_turns: 0 };
        assert_eq!(sessions_line(&whole), "8 sessions, 8 whole");
        let cut = SessionSummary { started: 5, completed: 3, cut: 2, unsent_turns: 3 };
        assert_eq!(sessions_line(&cut), "5 sessions, 3 whole, 2 cut with 3 turns unsent");
    }
}
