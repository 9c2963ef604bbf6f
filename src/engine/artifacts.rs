//! The run's files: its folder, `inputs.json`, the summaries and the console text, and a
//! segment's `segment.json` with its share of the whole dataset.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result};

use super::{Progress, RunOptions};
use crate::clock::RunClock;
use crate::export::segment_files::{SegmentInfo, SegmentPhase};
use crate::plan::Plan;
use crate::plan::segment::ExecutionSegment;
use crate::result::RunResult;
use crate::{collectors, dataset, export, ui};

/// What a segment's files say of the whole dataset: the images and theoretical prefix-cache
/// blocks of every entry, and the index in the whole dataset of each request this segment sends.
pub(super) struct SegmentShare {
    whole_images: Vec<u32>,
    whole_prefix_blocks: Arc<[(u32, u32)]>,
    pub(super) whole_index: Vec<usize>,
}

impl SegmentShare {
    /// The requests this process sends (all of them without a segment), and their share.
    pub(super) fn of(
        prepared: dataset::requests::Prepared,
        segment: Option<ExecutionSegment>,
    ) -> (dataset::requests::Prepared, Self) {
        let whole_images = prepared.images.clone();
        let whole_prefix_blocks = prepared.theoretical_prefix_blocks();
        let (prepared, whole_index) = match segment {
            Some(segment) => prepared.segment_share(segment),
            None => (prepared, Vec::new()),
        };
        (prepared, Self { whole_images, whole_prefix_blocks, whole_index })
    }
}

/// `segment.json`: what `aiperf merge` needs to know of this segment's run.
pub(super) fn write_segment_info(
    whole_plan: &Plan,
    options: &RunOptions,
    segment: ExecutionSegment,
    clock: RunClock,
    started_ns: u64,
    share: SegmentShare,
    result: &RunResult,
) -> Result<()> {
    let info = SegmentInfo {
        segment,
        plan: whole_plan.clone(),
        clock_anchor_ns: clock.wall_anchor_ns(),
        start_at_ns: options.start_at_ns,
        started_ns,
        images_per_entry: share.whole_images,
        theoretical_prefix_blocks: share.whole_prefix_blocks.to_vec(),
        whole_index: share.whole_index,
        phases: result.phases.iter().map(SegmentPhase::of).collect(),
        was_cancelled: result.was_cancelled,
    };
    info.write(&result.artifact_dir)
}

/// The summaries, the collectors' exports and the console text, the outcome in the run's log
/// (unless the run shows nothing), then the marker that says they are all there.
pub(super) fn write_artifacts(
    result: &RunResult,
    telemetry: Option<&crate::telemetry::TelemetryCollected>,
    artifact_dir: &Path,
    progress: Progress,
) -> Result<()> {
    export::write_summaries(result, artifact_dir)?;
    collectors::write_exports(result, telemetry, artifact_dir)?;
    write_console(result, artifact_dir)?;
    crate::outputs::run_config::write(result, artifact_dir)?;
    if progress != Progress::Silent {
        crate::outputs::run_log::log_outcome(result);
    }
    export::ready_marker::write(artifact_dir, result.was_cancelled)
}

/// `<artifact root>/<run>/` (a segment's: `<artifact root>/<run>/segment-I-of-N/`), created.
pub(super) fn create_artifact_dir(plan: &Plan, options: &RunOptions) -> Result<PathBuf> {
    let run_dir = plan.run_info.artifact_dir(&options.artifact_root, &plan.name);
    let artifact_dir = match options.segment {
        Some(segment) => run_dir.join(segment.folder_name()),
        None => run_dir,
    };
    std::fs::create_dir_all(&artifact_dir)
        .with_context(|| format!("cannot create artifact folder {}", artifact_dir.display()))?;
    export::ready_marker::clear(&artifact_dir)?;
    Ok(artifact_dir)
}

/// `inputs.json`: every request body the run may send.
pub(super) fn write_inputs(requests: &[dataset::requests::PreparedRequest], artifact_dir: &Path) -> Result<()> {
    export::inputs_json::write(
        &artifact_dir.join(export::inputs_json::FILE_NAME),
        dataset::requests::conversations(requests).map(|turns| {
            let name = turns[0].conversation.as_deref().unwrap_or_default();
            (name, turns.iter().map(|request| request.body.as_ref()))
        }),
    )
}

/// What the console showed at the end of the run ([`ui::end_of_run`]), written beside the exports.
pub(crate) fn write_console(result: &RunResult, artifact_dir: &Path) -> Result<()> {
    let console = ui::end_of_run::render(result);
    let names = export::ArtifactNames::new(result.plan.export.prefix.as_deref());
    let console_path = artifact_dir.join(names.console());
    std::fs::write(&console_path, &console).with_context(|| format!("cannot write {}", console_path.display()))
}
