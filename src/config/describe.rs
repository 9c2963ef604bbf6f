//! A plan described in the config schema's `benchmark` shape: the exports' `input_config`.

use serde_json::Value;

use crate::plan::Plan;

/// The plan in the schema's `benchmark` shape.
pub fn benchmark_of_plan(plan: &Plan) -> Value {
    serde_json::to_value(plan).unwrap_or(Value::Null)
}
