//! Accuracy under load (AIPerf 0.13's accuracy benchmarks): the benchmarks' questions read
//! from the Hugging Face cache, asked as the run's dataset, each answer graded as it arrives,
//! and the accuracy per task beside the performance metrics. See docs/accuracy.md.

pub mod answer_key;
mod benchmark;
mod benchmarks;
mod dataset;
pub mod graders;
mod grading;
mod load;
pub mod problem;
mod record_blocks;
mod resolve;
mod segments;
mod source;
mod summary;

pub use benchmark::Benchmark;
pub use dataset::dataset;
pub use grading::{EXPORT_FILE, GradedAnswer, Grading, GradingSink};
pub use load::{entries, fit_to_endpoint, problems, question_count};
pub use record_blocks::AccuracyBlocks;
pub use resolve::Resolved;
pub use segments::{MergedAccuracy, merged as merged_segments};
pub use summary::{AccuracySummary, OVERALL_TAG, Tally, UNPARSED_TAG};

/// AIPerf's per-task CSV.
pub const CSV_FILE: &str = "accuracy_results.csv";
