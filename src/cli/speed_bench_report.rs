//! `aiperf speed-bench-report PATHS.. [--output FILE] [--format csv|table|both] [--metric
//! accept_length|accept_rate|throughput]`: AIPerf 0.13's SPEED-Bench matrix of finished runs
//! (`outputs/speed_bench_report.rs`).

use std::path::PathBuf;

use super::exit_code;
use crate::outputs::speed_bench_report::{self, Metric};

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Csv,
    Table,
    Both,
}

#[derive(Debug, clap::Args)]
pub struct SpeedBenchReportArgs {
    /// Run folders, or folders of them (one run per SPEED-Bench category)
    #[arg(required_unless_present = "named_paths", value_name = "PATHS")]
    pub paths: Vec<PathBuf>,
    /// AIPerf's `--paths` spelling of the folders
    #[arg(long = "paths", hide = true, num_args = 1..)]
    pub named_paths: Vec<PathBuf>,
    /// The CSV file
    #[arg(long, default_value = "speed_bench_report.csv")]
    pub output: PathBuf,
    /// What to write: the CSV, the table on the console, or both
    #[arg(long, value_enum, default_value = "both")]
    pub format: Format,
    /// The figure in each cell
    #[arg(long, value_enum, default_value = "accept-length")]
    pub metric: Metric,
}

pub fn speed_bench_report(args: SpeedBenchReportArgs) -> i32 {
    let mut warn = |message: String| eprintln!("warning: {message}");
    let runs = speed_bench_report::run_dirs(&[&args.paths[..], &args.named_paths].concat(), &mut warn);
    println!("Found {} run directories.", runs.len());
    let matrix = match speed_bench_report::matrix(&runs, args.metric, &mut warn) {
        Ok(matrix) => matrix,
        Err(e) => {
            eprintln!("error: {e}");
            return exit_code::FAILURE;
        }
    };
    let columns = speed_bench_report::columns(&matrix);
    if args.format != Format::Csv {
        print!("{}", speed_bench_report::table(&matrix, &columns, args.metric));
    }
    if args.format != Format::Table {
        if let Err(e) = std::fs::write(&args.output, speed_bench_report::csv(&matrix, &columns)) {
            eprintln!("error: cannot write {}: {e}", args.output.display());
            return exit_code::FAILURE;
        }
        println!("CSV written to {}", args.output.display());
    }
    exit_code::OK
}
