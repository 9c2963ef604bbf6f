//! The sandbox's limits: a runaway loop, a runaway recursion or a huge value stops the scenario
//! with a clear error instead of hanging it or exhausting memory. (File and network access need
//! no limit: Rhai's standard packages have none; a scenario reads files only through the API.)

use rhai::{Engine, EvalAltResult};

/// Rhai operations a scenario may run unless `--max-operations` says otherwise; the time a
/// `run(..)` spends benchmarking is not counted.
pub const DEFAULT_MAX_OPERATIONS: u64 = 50_000_000;
/// Script function calls nested in one another.
const MAX_CALL_DEPTH: usize = 64;
/// Nesting of expressions at the top level and inside functions.
const MAX_EXPRESSION_DEPTH: usize = 64;
const MAX_FUNCTION_EXPRESSION_DEPTH: usize = 32;
const MAX_STRING_BYTES: usize = 16 * 1024 * 1024;
const MAX_ARRAY_ITEMS: usize = 1_000_000;
const MAX_MAP_ENTRIES: usize = 100_000;

/// Set every limit; `max_operations` 0 lifts the operation limit.
pub fn apply(engine: &mut Engine, max_operations: u64) {
    engine.set_max_operations(max_operations);
    engine.set_max_call_levels(MAX_CALL_DEPTH);
    engine.set_max_expr_depths(MAX_EXPRESSION_DEPTH, MAX_FUNCTION_EXPRESSION_DEPTH);
    engine.set_max_string_size(MAX_STRING_BYTES);
    engine.set_max_array_size(MAX_ARRAY_ITEMS);
    engine.set_max_map_size(MAX_MAP_ENTRIES);
}

/// A message that says which limit stopped the script and what to do; `None` for other errors.
pub fn explain(error: &EvalAltResult, engine: &Engine) -> Option<String> {
    match error {
        EvalAltResult::ErrorTooManyOperations(_) => Some(format!(
            "the script ran more than {} operations; a runaway loop? raise with --max-operations",
            engine.max_operations()
        )),
        EvalAltResult::ErrorStackOverflow(_) => Some(format!(
            "functions called each other more than {} deep; a runaway recursion?",
            engine.max_call_levels()
        )),
        EvalAltResult::ErrorDataTooLarge(what, _) => Some(format!(
            "{what} is over the scenario's limit (strings {} MiB, arrays {} items, maps {} entries)",
            MAX_STRING_BYTES / (1024 * 1024),
            MAX_ARRAY_ITEMS,
            MAX_MAP_ENTRIES
        )),
        _ => None,
    }
}
