//! `aiperf analyze`: views of a finished run's artifacts beside the report: the swim lanes of
//! its sessions with their concurrency (`swim_lane.rs`), and the messages each turn sent
//! (`turn_messages.rs`).

pub mod swim_lane;
pub mod turn_messages;

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::report::{PngRenderer, escape};

/// Where the swim lanes are written.
#[derive(Debug, Clone)]
pub struct SwimLaneOutput {
    pub png: PathBuf,
    /// The HTML page too, when asked.
    pub html: Option<PathBuf>,
}

/// Draw the swim lanes of `run_dir` into `output`; `concurrency` and `ramp_s` as
/// `--concurrency` and `--ramp`.
pub fn write_swim_lane(
    run_dir: &Path,
    output: &SwimLaneOutput,
    concurrency: Option<u64>,
    ramp_s: Option<f64>,
) -> Result<()> {
    let lanes = swim_lane::read(&run_dir.join("profile_export.jsonl"))?;
    let (summary_ramp, benchmark_end_s) = swim_lane::summary_marks(run_dir);
    let name = run_dir.canonicalize().unwrap_or_else(|_| run_dir.to_path_buf());
    let name = name.file_name().map_or_else(|| run_dir.display().to_string(), |n| n.to_string_lossy().into_owned());
    let marks = swim_lane::Marks {
        title: format!("{name}: {} sessions across {} slots", lanes.sessions.len(), lanes.slots),
        concurrency,
        ramp_s: ramp_s.or(summary_ramp),
        benchmark_end_s,
    };
    let svg = lanes.svg(&marks);
    let png = PngRenderer::new().render(&svg)?;
    save(&output.png, &png)?;
    if let Some(html) = &output.html {
        let page = format!(
            "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{t}</title><style>body{{font-family:system-ui,sans-serif;margin:1em}}svg{{max-width:100%;height:auto}}rect.turn:hover{{stroke:#000;stroke-width:1}}</style></head><body><h1 style=\"font-size:1.2em\">{t}</h1><p style=\"color:#666\">Hover a bar for its session, times and TTFT.</p>{svg}</body></html>",
            t = escape(&marks.title)
        );
        save(html, page.as_bytes())?;
    }
    Ok(())
}

/// Call `each` with every JSON line of `path` (its 0-based line number, the record) but a
/// warm-up's (`benchmark_phase: "warmup"`): these views show what was profiled. A line that
/// is not JSON is named by file and line.
fn for_each_record(path: &Path, mut each: impl FnMut(usize, &serde_json::Value)) -> Result<()> {
    use std::io::BufRead;
    let file = std::fs::File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
    for (index, line) in std::io::BufReader::new(file).lines().enumerate() {
        let line = line.with_context(|| format!("cannot read {}", path.display()))?;
        if line.trim().is_empty() {
            continue;
        }
        let record: serde_json::Value = serde_json::from_str(&line)
            .with_context(|| format!("{}:{}: not a JSON record", path.display(), index + 1))?;
        if record["metadata"]["benchmark_phase"] != crate::plan::PhaseKind::Warmup.as_str() {
            each(index, &record);
        }
    }
    Ok(())
}

fn save(path: &Path, bytes: &[u8]) -> Result<()> {
    if let Some(folder) = path.parent().filter(|f| !f.as_os_str().is_empty()) {
        std::fs::create_dir_all(folder).with_context(|| format!("cannot create {}", folder.display()))?;
    }
    std::fs::write(path, bytes).with_context(|| format!("cannot write {}", path.display()))
}
