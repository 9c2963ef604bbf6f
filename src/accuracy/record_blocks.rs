//! Where a record's `accuracy` block in `profile_export.jsonl` comes from: the live grading (the
//! answer graded just before the records writer sees it) or, in `aiperf merge`, the segments'
//! graded answers read back by request id.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::Value;

use super::grading::Grading;

pub enum AccuracyBlocks {
    /// A run grading its answers as they arrive.
    Live(Arc<Grading>),
    /// The segments' graded answers, each `accuracy` block by its request's `x_request_id`.
    Recorded(HashMap<String, Value>),
}

impl AccuracyBlocks {
    /// The `accuracy` block of the record with `x_request_id`; `None` for a request not graded
    /// (failed, cancelled, or no question of the benchmark).
    pub fn block(&self, x_request_id: &str) -> Option<Value> {
        match self {
            AccuracyBlocks::Live(grading) => {
                grading.graded_last(x_request_id).map(|graded| graded.json(grading.grader_name()))
            }
            AccuracyBlocks::Recorded(blocks) => blocks.get(x_request_id).cloned(),
        }
    }
}
