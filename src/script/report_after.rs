//! `report: true` on a run or a sweep (or `--report` on the command line): once it has
//! finished, its report.html is written into its folder. Checking and dry runs write nothing.

use std::path::Path;

use super::dry_run::ScriptMode;
use super::keys::{ScriptResult, script_error};
use super::run_host::RunHost;

/// Write the report of the folder `dir` when `asked` (else as `--report` says); `what` names
/// the run or sweep in messages.
pub fn write_report(host: &RunHost, asked: Option<bool>, dir: &Path, what: &str) -> ScriptResult<()> {
    if !asked.unwrap_or(host.report) || host.mode != ScriptMode::Execute {
        return Ok(());
    }
    match crate::report::write_into(dir) {
        Ok(path) => {
            crate::ui::stdout::print_line(&format!("report: {}", path.display()));
            Ok(())
        }
        Err(e) => script_error(format!("{what}: cannot write the report: {e:#}")),
    }
}
