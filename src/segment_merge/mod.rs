//! `aiperf merge DIR... -o OUT`: one run from the folders of its execution segments (given, or
//! found below the folders given: `find.rs`). Every
//! segment's records, moved onto one timeline (`shift.rs`), go through the record processor a
//! live run uses (`engine::record_processor`), so each metric comes out as one process running
//! the whole plan would have computed it (or, streaming, their `segment_histograms.json` are
//! added up: `streaming.rs`); the phases and client self-checks are combined
//! (`combine.rs`), server metrics and GPU telemetry come from the collecting segment (whose
//! GPU readings give the energy metrics over the merged window), an accuracy run's graded
//! answers are counted into one summary (`accuracy::merged_segments`), and
//! `merge_report.json` keeps each segment's start, counts and self-check, and the spread of the
//! starts.

mod combine;
mod find;
mod shift;
mod streaming;

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use anyhow::{Context, Result, bail};
use serde::Serialize;

use crate::clock::RunClock;
use crate::export::segment_files::{self, SegmentInfo};
use crate::export::{self, ArtifactNames};
use crate::plan::{ExportLevel, Plan};
use crate::result::{ClientSelfCheck, PhaseSummary, RunResult};
use crate::rng::SeededRng;
use crate::telemetry::energy::FleetEnergy;
use combine::SegmentRun;

/// The file beside the merged exports that describes the segments.
pub const REPORT_FILE: &str = "merge_report.json";

/// A segment's folder and what it wrote about itself.
struct Segment {
    dir: PathBuf,
    info: SegmentInfo,
    /// Its phases' summaries.
    phases: Vec<PhaseSummary>,
    /// How much later its clock started than the earliest segment's, ns.
    delta_ns: u64,
}

/// What a merge made.
pub struct Merged {
    pub result: RunResult,
    /// How many segment folders were merged.
    pub segments: usize,
    /// Latest minus earliest first-phase start of the segments, ms.
    pub start_spread_ms: f64,
}

/// Merge the segment folders `dirs` into `out` (its exports as a run's): from their records,
/// or with `streaming` (or when a segment kept no records) from their histograms.
pub async fn merge(dirs: &[PathBuf], out: &Path, streaming: bool, cli_command: Option<String>) -> Result<Merged> {
    let segments = read_segments(dirs)?;
    let whole = segments[0].info.plan.clone();
    let anchor_ns = segments.iter().map(|s| s.info.clock_anchor_ns).min().unwrap_or(0);
    std::fs::create_dir_all(out).with_context(|| format!("cannot create folder {}", out.display()))?;
    export::ready_marker::clear(out)?;

    let phases = merged_phases(&whole, &segments);
    let tokenizer = crate::engine::load_tokenizer(&whole.tokenizer).await?;
    let streaming = streaming || segments.iter().any(|s| !s.dir.join(segment_files::RECORDS_FILE).is_file());
    let accuracy = crate::accuracy::merged_segments(&whole, segments.iter().map(|s| s.dir.as_path()), out)?;
    let (accuracy, accuracy_blocks) = match accuracy {
        Some(merged) => (Some(merged.summary), Some(crate::accuracy::AccuracyBlocks::Recorded(merged.blocks))),
        None => (None, None),
    };
    let processed = if streaming {
        streaming::merged_metrics(segments.iter().map(|s| s.dir.as_path()))?
    } else {
        recomputed_metrics(&whole, &segments, &phases, anchor_ns, out, tokenizer.clone(), accuracy_blocks)?
    };
    let crate::metrics::ProcessedMetrics {
        mut metrics,
        error_summary,
        by_url,
        timeslices,
        spec_decode_histogram,
        token_check_causes,
        warmup_metrics,
        by_phase,
    } = processed;

    let collecting = segments.iter().find(|s| s.info.segment.collects()).unwrap_or(&segments[0]);
    if let Some(fleet) = gpu_energy(&collecting.dir, &whole, &phases, anchor_ns)? {
        crate::telemetry::energy::add_efficiency_metrics(
            &mut metrics,
            &fleet,
            crate::telemetry::energy::users_of(&whole),
        );
    }
    metrics.extend(accuracy.iter().flat_map(crate::accuracy::AccuracySummary::metrics));
    let end_ns = phases.iter().map(|phase| phase.window_end_ns).max().unwrap_or(0);
    let result = RunResult {
        name: whole.name.clone(),
        benchmark_id: format!("{:012x}", SeededRng::new(anchor_ns).next_u64() & 0xffff_ffff_ffff),
        start_time: timestamp(segments.iter().map(|s| s.info.started_ns).min().unwrap_or(anchor_ns)),
        end_time: timestamp(anchor_ns + end_ns),
        was_cancelled: segments.iter().any(|s| s.info.was_cancelled),
        plan: whole.clone(),
        tokenizer: tokenizer.name().to_string(),
        thresholds: crate::thresholds::evaluate(
            &whole.thresholds,
            &metrics,
            &crate::thresholds::sessions::of_results(&phases).into_iter().collect::<Vec<_>>(),
        ),
        metrics,
        warmup_metrics,
        by_phase,
        error_summary,
        by_url,
        phases,
        artifact_dir: out.to_path_buf(),
        cli_command,
        random_seed: Some(whole.dataset.random_seed()),
        server_metrics: None,
        telemetry_data: telemetry_data(&collecting.dir, &whole),
        timeslices,
        spec_decode_histogram,
        token_check_causes,
        accuracy,
    };
    export::write_summaries(&result, out)?;
    copy_collector_files(&collecting.dir, out, &whole)?;
    crate::engine::write_console(&result, out)?;
    let start_spread_ms = write_report(&segments, &result, out)?;
    export::ready_marker::write(out, result.was_cancelled)?;
    Ok(Merged { result, segments: segments.len(), start_spread_ms })
}

/// The merged run's metrics from every segment's records, on one timeline, through the record
/// processor a live run uses; each graded record's line gets its segment's `accuracy` block.
fn recomputed_metrics(
    whole: &Plan,
    segments: &[Segment],
    phases: &[PhaseSummary],
    anchor_ns: u64,
    out: &Path,
    tokenizer: Arc<crate::dataset::tokenizer::Tokenizer>,
    accuracy: Option<crate::accuracy::AccuracyBlocks>,
) -> Result<crate::metrics::ProcessedMetrics> {
    let profiling_start_ns = Arc::new(OnceLock::new());
    if let Some(first) = phases.iter().find(|phase| phase.results) {
        profiling_start_ns.get_or_init(|| first.window_start_ns);
    }
    // Raw exchanges stay in the segments' own folders.
    let mut measured = whole.clone();
    if measured.export.level == ExportLevel::Raw {
        measured.export.level = ExportLevel::Records;
    }
    let clock = RunClock::anchored_at(anchor_ns);
    let images = segments[0].info.images_per_entry.clone();
    let prefix_blocks = segments[0].info.theoretical_prefix_blocks.as_slice().into();
    // Each segment counted its chat requests through the template already (its records keep
    // those counts, not the bodies).
    let context =
        crate::engine::metrics_context(&measured, &measured.endpoint, tokenizer, clock, images, prefix_blocks, None);
    let mut processor = crate::engine::record_processor(&measured, context, out, &profiling_start_ns, accuracy)?;
    for segment in segments {
        let worker_id = format!("segment_{}", segment.info.segment.index);
        let whole_index = &segment.info.whole_index;
        let place = segment.info.segment;
        segment_files::read_records(&segment.dir, |mut record| {
            shift::shift_record(&mut record, segment.delta_ns);
            record.origin.index_in_phase = place.whole_position(record.origin.index_in_phase);
            let local = record.origin.dataset_index;
            record.origin.dataset_index = whole_index.get(local).copied().unwrap_or(local);
            record.worker_id = Some(worker_id.clone());
            processor.process(record)
        })?;
    }
    processor.finish()
}

/// Every folder's `segment.json`, checked to be the segments 0..N of one plan, in index order,
/// each with its clock's gap to the earliest.
fn read_segments(dirs: &[PathBuf]) -> Result<Vec<Segment>> {
    if dirs.is_empty() {
        bail!("merge needs the segment folders to merge");
    }
    let dirs = find::segment_folders(dirs)?;
    let mut segments = Vec::with_capacity(dirs.len());
    for dir in &dirs {
        let info = SegmentInfo::read(dir)?;
        let phases = info.phases.iter().map(segment_files::SegmentPhase::summary).collect();
        segments.push(Segment { dir: dir.clone(), info, phases, delta_ns: 0 });
    }
    segments.sort_by_key(|s| s.info.segment.index);
    let count = segments[0].info.segment.count;
    for (position, segment) in segments.iter().enumerate() {
        let folder = segment.dir.display();
        if segment.info.segment.count != count {
            bail!(
                "{folder} is a segment of {} segments, {} of {count}",
                segment.info.segment.count,
                segments[0].dir.display()
            );
        }
        if !same_plan_but_name(&segment.info.plan, &segments[0].info.plan) {
            bail!("{folder} ran another plan than {}", segments[0].dir.display());
        }
        if segment.info.segment.index as usize != position {
            let missing_or_twice =
                if (segment.info.segment.index as usize) < position { "given twice" } else { "missing" };
            bail!("segment {position} of {count} is {missing_or_twice} (at {folder})");
        }
    }
    if segments.len() != count as usize {
        bail!("segment {} of {count} is missing: merge needs all {count} folders", segments.len());
    }
    let anchor_ns = segments.iter().map(|s| s.info.clock_anchor_ns).min().unwrap_or(0);
    for segment in &mut segments {
        segment.delta_ns = segment.info.clock_anchor_ns - anchor_ns;
    }
    Ok(segments)
}

/// Segments may be named apart: `aiperf profile --artifact-dir s0` names its run `s0`.
fn same_plan_but_name(plan: &Plan, other: &Plan) -> bool {
    Plan { name: other.name.clone(), ..plan.clone() } == *other
}

fn merged_phases(whole: &Plan, segments: &[Segment]) -> Vec<PhaseSummary> {
    let mut phases = Vec::new();
    for (index, phase) in whole.phases.iter().enumerate() {
        let runs: Vec<SegmentRun> = segments
            .iter()
            .filter_map(|s| {
                let run = s.phases.get(index)?;
                Some(SegmentRun { index: s.info.segment.index, phase: run, delta_ns: s.delta_ns })
            })
            .collect();
        if runs.is_empty() {
            break;
        }
        phases.push(combine::merged_phase(phase, &runs));
    }
    phases
}

/// UTC ISO 8601 with microseconds, as a run's start and end times.
fn timestamp(epoch_ns: u64) -> String {
    chrono::DateTime::from_timestamp_nanos(epoch_ns as i64).format("%Y-%m-%dT%H:%M:%S%.6f").to_string()
}

/// The collecting segment's `telemetry_data`, when it had any.
fn telemetry_data(dir: &Path, plan: &Plan) -> Option<serde_json::Value> {
    let names = ArtifactNames::new(plan.export.prefix.as_deref());
    let text = std::fs::read_to_string(dir.join(names.summary_json())).ok()?;
    let summary: serde_json::Value = serde_json::from_str(&text).ok()?;
    summary.get("telemetry_data").cloned()
}

/// What the collecting segment's GPUs drew over the merged run's results phases, when it
/// watched any.
fn gpu_energy(dir: &Path, plan: &Plan, phases: &[PhaseSummary], anchor_ns: u64) -> Result<Option<FleetEnergy>> {
    let path = dir.join(ArtifactNames::new(plan.export.prefix.as_deref()).gpu_telemetry_jsonl());
    let results = || phases.iter().filter(|phase| phase.results);
    let (Some(start), Some(end)) =
        (results().map(|p| p.window_start_ns).min(), results().map(|p| p.window_end_ns).max())
    else {
        return Ok(None);
    };
    if !path.is_file() {
        return Ok(None);
    }
    let samples = export::gpu_telemetry::read_jsonl(&path)?;
    Ok(Some(FleetEnergy::of(&samples, anchor_ns + start, anchor_ns + end)))
}

/// The server-metrics and GPU telemetry exports of the collecting segment, copied as they are.
fn copy_collector_files(from: &Path, to: &Path, plan: &Plan) -> Result<()> {
    let names = ArtifactNames::new(plan.export.prefix.as_deref());
    let server_files = plan.server_metrics.formats.iter().map(|format| names.server_metrics(*format));
    for name in server_files.chain([names.gpu_telemetry_jsonl(), names.gpu_telemetry_csv()]) {
        let source = from.join(&name);
        if source.is_file() {
            std::fs::copy(&source, to.join(&name)).with_context(|| format!("cannot copy {}", source.display()))?;
        }
    }
    Ok(())
}

/// `merge_report.json`.
#[derive(Serialize)]
struct MergeReport<'a> {
    segments: Vec<SegmentReport<'a>>,
    /// Latest minus earliest first-phase start of the segments, ms.
    start_spread_ms: f64,
    /// The self-check of all the segments as one client, per phase.
    combined_self_check: Vec<&'a ClientSelfCheck>,
}

#[derive(Serialize)]
struct SegmentReport<'a> {
    index: u32,
    folder: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    start_at_ns: Option<u64>,
    started_ns: u64,
    /// After the earliest segment's start, ms.
    started_after_first_ms: f64,
    phases: &'a [segment_files::SegmentPhase],
}

/// Writes the report; the spread of the starts, ms.
fn write_report(segments: &[Segment], result: &RunResult, out: &Path) -> Result<f64> {
    let first_ns = segments.iter().map(|s| s.info.started_ns).min().unwrap_or(0);
    let last_ns = segments.iter().map(|s| s.info.started_ns).max().unwrap_or(0);
    let report = MergeReport {
        segments: segments
            .iter()
            .map(|s| SegmentReport {
                index: s.info.segment.index,
                folder: s.dir.display().to_string(),
                start_at_ns: s.info.start_at_ns,
                started_ns: s.info.started_ns,
                started_after_first_ms: (s.info.started_ns - first_ns) as f64 / 1e6,
                phases: &s.info.phases,
            })
            .collect(),
        start_spread_ms: (last_ns - first_ns) as f64 / 1e6,
        combined_self_check: result.phases.iter().map(|phase| &phase.self_check).collect(),
    };
    let path = out.join(REPORT_FILE);
    let text = serde_json::to_string_pretty(&report).context("serializing merge_report.json")?;
    std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(report.start_spread_ms)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::telemetry::TelemetryCollected;
    use crate::telemetry::fields::GpuField;
    use crate::telemetry::sample::GpuSample;

    fn phase(results: bool, window_start_ns: u64, window_end_ns: u64) -> PhaseSummary {
        PhaseSummary {
            name: "p".into(),
            kind: "profiling",
            sent: 1,
            completed: 1,
            errors: 0,
            cancelled: 0,
            duration_s: 1.0,
            results,
            window_start_ns,
            window_end_ns,
            sessions: None,
            scripted_sessions: None,
            branch_stats: None,
            adaptive_scale: None,
            self_check: Default::default(),
        }
    }

    #[test]
    fn the_collecting_segments_gpu_readings_give_the_energy_over_the_merged_results_phases() {
        let dir = tempfile::tempdir().unwrap();
        let plan = crate::export::test_support::sample_result().plan;
        assert_eq!(gpu_energy(dir.path(), &plan, &[phase(true, 0, 1)], 0).unwrap(), None, "no GPU file, no energy");

        const S: u64 = 1_000_000_000;
        let anchor = 100 * S;
        let reading = |at: u64, megajoules: f64| GpuSample {
            source: "pynvml://localhost".into(),
            gpu_index: 0,
            gpu_uuid: "GPU-a".into(),
            gpu_name: "H100".into(),
            pci_bus_id: None,
            device: None,
            hostname: String::new(),
            timestamp_ns: anchor + at * S,
            values: vec![(GpuField::PowerUsage, 400.0), (GpuField::EnergyConsumption, megajoules)],
        };
        let samples = vec![reading(1, 1.0), reading(3, 1.001), reading(6, 1.003), reading(9, 1.004)];
        let path = dir.path().join(ArtifactNames::new(plan.export.prefix.as_deref()).gpu_telemetry_jsonl());
        export::gpu_telemetry::write_jsonl(&TelemetryCollected { samples, ..Default::default() }, &path).unwrap();
        // A warm-up (no results) then two results phases from 2 s to 7 s of the run.
        let phases = [phase(false, 0, 2 * S), phase(true, 2 * S, 4 * S), phase(true, 4 * S, 7 * S)];
        let fleet = gpu_energy(dir.path(), &plan, &phases, anchor).unwrap().expect("energy");
        assert_eq!(fleet.duration_s, 5.0);
        // From the reading before the window (1 s) to the last inside (6 s); the one at 9 s is out.
        let drawn = fleet.vendors[0];
        assert!((drawn.counted_energy_j.unwrap() - 3_000.0).abs() < 1e-6, "{fleet:?}");
        assert_eq!(drawn.total_power_w, Some(400.0));
    }
}
