//! `aiperf plot DIR... [--output OUT] [--format html,png,svg]`: the report of the runs found
//! under the folders (AIPerf's command name and `--output`).

use std::path::PathBuf;

use super::exit_code;
use crate::report::{self, Formats};

#[derive(Debug, clap::Args)]
pub struct PlotArgs {
    /// Run folders, sweep folders, or folders above them (every run found below is drawn)
    #[arg(required = true)]
    pub dirs: Vec<PathBuf>,
    /// Where the report goes (default: <first DIR>/plots)
    #[arg(long, short)]
    pub output: Option<PathBuf>,
    /// What to write: html (one self-contained report.html), png and svg (one file per chart)
    #[arg(long, default_value = "html")]
    pub format: String,
}

pub fn plot(args: PlotArgs) -> i32 {
    let formats = match Formats::parse(&args.format) {
        Ok(formats) => formats,
        Err(e) => {
            eprintln!("error: --format: {e}");
            return exit_code::SCRIPT_ERROR;
        }
    };
    let output = args.output.clone().unwrap_or_else(|| args.dirs[0].join("plots"));
    match report::write(&args.dirs, &output, formats) {
        Ok(written) => {
            println!(
                "{} chart(s) of {} run(s): {} file(s) in {}",
                written.charts,
                written.runs,
                written.files.len(),
                output.display()
            );
            if formats.html {
                println!("report: {}", output.join(report::REPORT_FILE).display());
            }
            exit_code::OK
        }
        Err(e) => {
            eprintln!("error: {e:#}");
            exit_code::FAILURE
        }
    }
}
