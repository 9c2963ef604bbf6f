//! `report: true` on a run or a sweep (or `--report` on the command line): its runs' records
//! are collected as they are measured and, once it has finished, its report.html is written
//! into its folder. Checking and dry runs write nothing.

use std::path::Path;

use super::dry_run::ScriptMode;
use super::keys::{ScriptResult, script_error};
use super::run_host::RunHost;

fn wanted(host: &RunHost, asked: Option<bool>) -> bool {
    asked.unwrap_or(host.report) && host.mode == ScriptMode::Execute
}

/// When the report is `asked` for (else as `--report` says): the records of the runs started
/// until the guard is dropped are collected for it.
pub fn collect_records(host: &RunHost, asked: Option<bool>) -> Option<crate::report::Armed> {
    wanted(host, asked).then(|| host.report_records.arm())
}

/// Write the report of the folder `dir` when `asked` (else as `--report` says), from the
/// records collected since `collect_records`; `what` names the run or sweep in messages.
pub fn write_report(host: &RunHost, asked: Option<bool>, dir: &Path, what: &str) -> ScriptResult<()> {
    if !wanted(host, asked) {
        return Ok(());
    }
    match crate::report::write_into(dir, &host.report_records) {
        Ok(path) => {
            crate::ui::stdout::print_line(&format!("report: {}", path.display()));
            Ok(())
        }
        Err(e) => script_error(format!("{what}: cannot write the report: {e:#}")),
    }
}
