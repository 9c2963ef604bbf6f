//! Grading a run's answers as they arrive (on the metrics thread): each successful profiling
//! record's reply is graded against its question's gold answer, written to
//! `accuracy_export.jsonl` (AIPerf's per-answer file) and counted into the run's summary; the
//! records writer adds the same grade to the record's line in `profile_export.jsonl`.

use std::io::{BufWriter, Write};
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};

use anyhow::{Context, Result};
use serde_json::{Value, json};

use super::graders::{CodeLimits, Graded};
use super::load;
use super::resolve::Resolved;
use super::summary::AccuracySummary;
use crate::clock::RunClock;
use crate::metrics::record_sink::RecordSink;
use crate::metrics::record_values::RecordMetrics;
use crate::plan::{Dataset, Plan};
use crate::record::RequestRecord;

/// AIPerf's per-answer file.
pub const EXPORT_FILE: &str = "accuracy_export.jsonl";

/// One graded answer, as the records writer adds it to the record's line.
#[derive(Debug, Clone, PartialEq)]
pub struct GradedAnswer {
    pub x_request_id: String,
    pub task: String,
    pub graded: Graded,
}

impl GradedAnswer {
    /// The `accuracy` block of a record's line in `profile_export.jsonl`.
    pub fn json(&self, grader: &str) -> Value {
        json!({
            "task": self.task,
            "grader_name": grader,
            "passed": self.graded.correct,
            "unparsed": self.graded.unparsed,
            "expected": self.graded.expected,
            "actual": self.graded.extracted,
        })
    }
}

struct State {
    summary: AccuracySummary,
    last: Option<GradedAnswer>,
    file: BufWriter<std::fs::File>,
}

/// The questions' gold answers and tasks, and what has been graded so far.
pub struct Grading {
    resolved: Resolved,
    /// (task, gold) by the index of the request in the dataset this process sends.
    golds: Vec<(String, String)>,
    /// Each such request's index in the whole dataset (an execution segment sends a share).
    whole_index: Vec<usize>,
    limits: CodeLimits,
    clock: RunClock,
    state: Mutex<State>,
}

impl Grading {
    /// The grading of `plan`'s answers when its dataset is an accuracy benchmark (the questions
    /// read again: they are a pure function of the plan). An execution segment sends the
    /// questions `whole_index` names (empty: all of them, in order).
    pub fn of(
        plan: &Plan,
        artifact_dir: &Path,
        clock: RunClock,
        whole_index: &[usize],
    ) -> Result<Option<Arc<Grading>>> {
        let Dataset::File(file) = &plan.dataset else { return Ok(None) };
        let Some(spec) = &file.accuracy else { return Ok(None) };
        let (resolved, problems) = load::problems(spec, file.draws)?;
        let path = artifact_dir.join(EXPORT_FILE);
        let created = std::fs::File::create(&path).with_context(|| format!("cannot create {}", path.display()))?;
        let summary = AccuracySummary::new(resolved.benchmark.name(), resolved.grader.name());
        let whole_index = match whole_index.is_empty() {
            true => (0..problems.len()).collect(),
            false => whole_index.to_vec(),
        };
        let mut golds = Vec::with_capacity(whole_index.len());
        for &index in &whole_index {
            let problem = problems.get(index).with_context(|| format!("question {index} is not in the benchmark"))?;
            golds.push((problem.task.clone(), problem.gold.clone()));
        }
        Ok(Some(Arc::new(Grading {
            golds,
            whole_index,
            resolved,
            limits: CodeLimits::default(),
            clock,
            state: Mutex::new(State { summary, last: None, file: BufWriter::new(created) }),
        })))
    }

    pub fn grader_name(&self) -> &'static str {
        self.resolved.grader.name()
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Grades `record` (a failed or cancelled request has no answer to grade).
    fn grade(&self, record: &RequestRecord) -> Result<()> {
        if record.error.is_some() || record.was_cancelled {
            return Ok(());
        }
        let asked = record.origin.dataset_index % self.golds.len().max(1);
        let (Some((task, gold)), Some(question)) = (self.golds.get(asked), self.whole_index.get(asked)) else {
            return Ok(());
        };
        let reply = if record.content.is_empty() { &record.reasoning } else { &record.content };
        let graded = self.resolved.grader.grade(reply, gold, &self.limits);
        if self.resolved.verbose {
            tracing::info!(
                "[accuracy] request {} ({task}): correct={} unparsed={} extracted={:?} expected={:?}: {}",
                record.x_request_id,
                graded.correct,
                graded.unparsed,
                graded.extracted,
                graded.expected,
                graded.explanation
            );
        }
        let line = json!({
            "session_num": question,
            "conversation_id": Value::Null,
            "x_request_id": record.x_request_id,
            "worker_id": record.worker_id.as_deref().unwrap_or("worker_0"),
            "benchmark_phase": "profiling",
            "timestamp_ns": self.clock.epoch_ns(record.end_ns),
            "task": task,
            "grader_name": self.grader_name(),
            "passed": graded.correct,
            "unparsed": graded.unparsed,
            "confidence": if graded.correct { 1.0 } else { 0.0 },
            "expected": graded.expected,
            "actual": graded.extracted,
            "explanation": graded.explanation,
            "model_output": record.content,
            "model_thinking": (!record.reasoning.is_empty()).then_some(&record.reasoning),
        });
        let mut state = self.state();
        state.summary.add(task, graded.correct, graded.unparsed);
        serde_json::to_writer(&mut state.file, &line)?;
        state.file.write_all(b"\n")?;
        state.last = Some(GradedAnswer { x_request_id: record.x_request_id.clone(), task: task.clone(), graded });
        Ok(())
    }

    /// The grade of the record with `x_request_id`, when it is the one graded last (the
    /// records writer comes right after the grading sink).
    pub fn graded_last(&self, x_request_id: &str) -> Option<GradedAnswer> {
        self.state().last.clone().filter(|graded| graded.x_request_id == x_request_id)
    }

    /// What has been graded so far.
    pub fn summary(&self) -> AccuracySummary {
        self.state().summary.clone()
    }

    fn flush(&self) -> Result<()> {
        self.state().file.flush().context("cannot write accuracy_export.jsonl")
    }
}

/// The record sink that grades; it goes ahead of the records writer.
pub struct GradingSink(pub Arc<Grading>);

impl RecordSink for GradingSink {
    fn write(&mut self, record: &RequestRecord, _metrics: &RecordMetrics, _good: Option<bool>) -> Result<()> {
        self.0.grade(record)
    }

    fn caught_up(&mut self) -> Result<()> {
        self.0.flush()
    }

    fn finish(self: Box<Self>) -> Result<()> {
        self.0.flush()
    }
}
