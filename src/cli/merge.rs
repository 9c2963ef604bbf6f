//! `aiperf merge DIR... -o OUT`: one run's exports from the folders of its execution segments
//! (`segment_merge`), its tables printed as a run's.

use super::{MergeArgs, exit_code, redacted_command_line};
use crate::ui;

pub fn merge(args: MergeArgs, runtime: &tokio::runtime::Runtime) -> i32 {
    let merged = match runtime.block_on(crate::segment_merge::merge(
        &args.dirs,
        &args.out,
        args.streaming,
        Some(redacted_command_line()),
    )) {
        Ok(merged) => merged,
        Err(e) => {
            eprintln!("error: {e:#}");
            return exit_code::FAILURE;
        }
    };
    let result = &merged.result;
    ui::stdout::print_line(&ui::table::render(result));
    ui::stdout::print(&ui::gpu_table::render(result));
    ui::stdout::print(&ui::accuracy_table::render(result));
    ui::stdout::print(&ui::self_check::render(result));
    ui::stdout::print(&ui::thresholds::render(result));
    ui::stdout::print_line(&format!(
        "merged {} segments into {} (their first phases started within {:.1} ms)",
        merged.segments,
        args.out.display(),
        merged.start_spread_ms
    ));
    if result.thresholds_passed() { exit_code::OK } else { exit_code::THRESHOLDS_FAILED }
}
