//! What a person sees: a progress bar per phase while it runs, and the metrics table at the end.

pub mod accuracy_table;
pub mod adaptive_scale;
pub mod branch_stats;
pub mod end_of_run;
pub mod error_insights;
pub mod failures;
pub mod gpu_table;
pub mod plan_summary;
pub mod progress;
pub mod scripted_sessions;
pub mod search;
pub mod self_check;
pub mod stdout;
pub mod sweep;
pub mod table;
pub mod thresholds;
pub mod token_warnings;
pub mod trace_analysis;
pub mod trials;
