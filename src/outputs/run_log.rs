//! `logs/aiperf.log`: every log line of a run (at the log level chosen for the file) written
//! to the run's folder, and in a sweep also to the sweep's folder, in AIPerf's file shape
//! (`2026-01-01 12:00:00.123 - aiperf.engine - INFO - message`). The process's tracing
//! subscriber carries `RunLogLayer`; a run opens its files with `RunLog::open`.

use std::fmt::Write as _;
use std::fs::File;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use tracing::field::{Field, Visit};
use tracing_subscriber::layer::Context;

/// The log folder and file name in a run's folder, as AIPerf names them.
pub const LOG_FOLDER: &str = "logs";
pub const LOG_FILE: &str = "aiperf.log";

/// The files being written: each run's own while it runs, and each sweep's for the process.
static OPEN_LOGS: Mutex<Vec<OpenLog>> = Mutex::new(Vec::new());
/// The level the log files record, for `run_config.json` (`logging.level`).
static FILE_LEVEL: Mutex<Option<String>> = Mutex::new(None);

struct OpenLog {
    path: PathBuf,
    file: File,
    /// Runs holding it open (a sweep's log is held by the process: never closed).
    holders: usize,
}

/// Record the level the files are written at (AIPerf's names: INFO, DEBUG, …).
pub fn set_file_level(filter: &str) {
    let level = match filter.trim().to_ascii_lowercase().as_str() {
        "trace" => "TRACE",
        "debug" => "DEBUG",
        "info" => "INFO",
        "warn" | "warning" => "WARNING",
        "error" => "ERROR",
        _ => "INFO",
    };
    *lock(&FILE_LEVEL) = Some(level.to_string());
}

/// The level recorded by `set_file_level` (INFO when the process set none, as in tests).
pub fn file_level() -> String {
    lock(&FILE_LEVEL).clone().unwrap_or_else(|| "INFO".to_string())
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A run's log file, open until dropped; a sweep's file stays open for the process.
pub struct RunLog {
    path: PathBuf,
}

impl RunLog {
    /// The log files of a run of `plan` writing into `artifact_dir` under `artifact_root`:
    /// its own, and in a sweep or repeated trials the one in the sweep's top folder.
    pub fn open_for(plan: &crate::plan::Plan, artifact_root: &Path, artifact_dir: &Path) -> anyhow::Result<Self> {
        let coordinates = &plan.run_info;
        let sweep_dir = match (&coordinates.sweep_id, coordinates.parent_folders.first()) {
            (Some(_), Some(top)) => {
                Some(crate::plan::run_coordinates::folder_under(artifact_root, std::slice::from_ref(top)))
            }
            _ => None,
        };
        let log = Self::open(artifact_dir, sweep_dir.as_deref())?;
        tracing::info!(
            "run `{}` starts: {} phase(s) against {} ({}), artifacts in {}",
            plan.name,
            plan.phases.len(),
            plan.endpoint.url,
            plan.endpoint.kind.as_str(),
            artifact_dir.display()
        );
        Ok(log)
    }

    /// Start `<run folder>/logs/aiperf.log` (anew), and append to `<sweep folder>/logs/aiperf.log`.
    pub fn open(run_dir: &Path, sweep_dir: Option<&Path>) -> anyhow::Result<Self> {
        let path = run_dir.join(LOG_FOLDER).join(LOG_FILE);
        hold(&path, false)?;
        if let Some(sweep_dir) = sweep_dir {
            let sweep_path = sweep_dir.join(LOG_FOLDER).join(LOG_FILE);
            let already_open = lock(&OPEN_LOGS).iter().any(|log| log.path == sweep_path);
            if !already_open {
                hold(&sweep_path, true)?;
            }
        }
        Ok(Self { path })
    }
}

/// One line per phase of a finished run: what it sent and how those requests ended.
pub fn log_outcome(result: &crate::result::RunResult) {
    for phase in &result.phases {
        tracing::info!(
            "phase `{}` ({}): {} sent, {} completed, {} errors, {} cancelled in {:.2} s",
            phase.name,
            phase.kind,
            phase.sent,
            phase.completed,
            phase.errors,
            phase.cancelled,
            phase.duration_s
        );
    }
    for error in &result.error_summary {
        tracing::warn!("{} request(s) failed: {}", error.count, error.error_details.message);
    }
    tracing::info!("run `{}` {}", result.name, if result.was_cancelled { "was cancelled" } else { "finished" });
}

fn hold(path: &Path, append: bool) -> anyhow::Result<()> {
    use anyhow::Context as _;
    let mut logs = lock(&OPEN_LOGS);
    if let Some(log) = logs.iter_mut().find(|log| log.path == path) {
        log.holders += 1;
        return Ok(());
    }
    if let Some(folder) = path.parent() {
        std::fs::create_dir_all(folder)
            .with_context(|| format!("cannot create the log folder {}", folder.display()))?;
    }
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(append)
        .write(true)
        .truncate(!append)
        .open(path)
        .with_context(|| format!("cannot write the run log {}", path.display()))?;
    logs.push(OpenLog { path: path.to_path_buf(), file, holders: 1 });
    Ok(())
}

impl Drop for RunLog {
    fn drop(&mut self) {
        let mut logs = lock(&OPEN_LOGS);
        if let Some(index) = logs.iter().position(|log| log.path == self.path) {
            logs[index].holders -= 1;
            if logs[index].holders == 0 {
                logs.remove(index);
            }
        }
    }
}

/// The tracing layer that writes each event to every open log file.
pub struct RunLogLayer;

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for RunLogLayer {
    fn on_event(&self, event: &tracing::Event<'_>, _: Context<'_, S>) {
        let mut logs = lock(&OPEN_LOGS);
        if logs.is_empty() {
            return;
        }
        let mut text = MessageText::default();
        event.record(&mut text);
        let metadata = event.metadata();
        let line = format!(
            "{} - {} - {} - {}\n",
            chrono::Local::now().format("%Y-%m-%d %H:%M:%S%.3f"),
            metadata.target().replace("::", "."),
            level_name(*metadata.level()),
            text.0
        );
        for log in logs.iter_mut() {
            let _ = log.file.write_all(line.as_bytes());
        }
    }
}

/// Python's logging level names.
fn level_name(level: tracing::Level) -> &'static str {
    match level {
        tracing::Level::ERROR => "ERROR",
        tracing::Level::WARN => "WARNING",
        tracing::Level::INFO => "INFO",
        tracing::Level::DEBUG => "DEBUG",
        tracing::Level::TRACE => "TRACE",
    }
}

/// An event's message, then its other fields as `name=value`.
#[derive(Default)]
struct MessageText(String);

impl Visit for MessageText {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            let fields = std::mem::take(&mut self.0);
            let _ = write!(self.0, "{value:?}");
            self.0.push_str(&fields);
        } else {
            let _ = write!(self.0, " {}={value:?}", field.name());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tracing_subscriber::layer::SubscriberExt;

    #[test]
    fn events_reach_the_open_run_and_sweep_logs_in_aiperf_s_shape() {
        let folder = tempfile::tempdir().unwrap();
        let (run_dir, sweep_dir) = (folder.path().join("sweep/run_0001"), folder.path().join("sweep"));
        let subscriber = tracing_subscriber::registry().with(RunLogLayer);
        tracing::subscriber::with_default(subscriber, || {
            let log = RunLog::open(&run_dir, Some(&sweep_dir)).unwrap();
            tracing::info!(phase = "profiling", "phase ended");
            drop(log);
            tracing::info!("after the run");
        });
        let run_text = std::fs::read_to_string(run_dir.join("logs/aiperf.log")).unwrap();
        let line = run_text.lines().next().unwrap();
        let parts: Vec<&str> = line.splitn(4, " - ").collect();
        assert_eq!(parts.len(), 4, "{line}");
        assert!(chrono::NaiveDateTime::parse_from_str(parts[0], "%Y-%m-%d %H:%M:%S%.3f").is_ok(), "{line}");
        assert_eq!(parts[1], "aiperf.outputs.run_log.tests");
        assert_eq!(parts[2], "INFO");
        assert_eq!(parts[3], "phase ended phase=\"profiling\"");
        assert!(!run_text.contains("after the run"), "the run's file closes with the run");
        let sweep_text = std::fs::read_to_string(sweep_dir.join("logs/aiperf.log")).unwrap();
        assert!(sweep_text.contains("phase ended") && sweep_text.contains("after the run"));
    }
}
