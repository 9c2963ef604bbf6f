//! `aiperf analyze swim-lane RUN-DIRS...` and `aiperf analyze turn-messages RUN-DIRS...`:
//! AIPerf's views of finished runs, written into each run folder (or `--out` for one).

use std::path::{Path, PathBuf};

use super::exit_code;
use crate::analyze::{self, SwimLaneOutput, turn_messages};

#[derive(Debug, clap::Subcommand)]
pub enum AnalyzeCommand {
    /// Draw each session's requests in a lane of its slot, with the concurrency curve underneath (PNG, and HTML with --html)
    #[command(
        after_help = "Examples:\n  aiperf analyze swim-lane artifacts/my-run\n  aiperf analyze swim-lane artifacts/run_a artifacts/run_b --html\n  aiperf analyze swim-lane artifacts/my-run -o /tmp/lanes.png -c 32"
    )]
    SwimLane(SwimLaneArgs),
    /// Write an HTML page of the messages each turn sent (needs a run with --export-level raw)
    #[command(
        after_help = "Examples:\n  aiperf analyze turn-messages artifacts/my-run\n  aiperf analyze turn-messages artifacts/my-run -o /tmp/msgs.html -n 1000 --content-cap 1000000"
    )]
    TurnMessages(TurnMessagesArgs),
}

#[derive(Debug, clap::Args)]
pub struct SwimLaneArgs {
    /// Run folders (each holding profile_export.jsonl)
    #[arg(required_unless_present = "named_run_dirs", value_name = "RUN-DIRS")]
    pub run_dirs: Vec<PathBuf>,
    /// AIPerf's `--run-dirs` spelling of the folders
    #[arg(long = "run-dirs", hide = true, num_args = 1..)]
    pub named_run_dirs: Vec<PathBuf>,
    /// The PNG to write (one run folder only; default: <run>/swim_lane.png)
    #[arg(short, long)]
    pub out: Option<PathBuf>,
    /// A target concurrency drawn as a line in the concurrency panel
    #[arg(short, long)]
    pub concurrency: Option<u64>,
    /// Seconds the ramp lasted, for the ramp-done line (default: from profile_export_aiperf.json)
    #[arg(long)]
    pub ramp: Option<f64>,
    /// Also write an HTML page of the lanes with a tooltip per request (swim_lane.html, or
    /// --out with .html)
    #[arg(long, overrides_with = "no_html")]
    pub html: bool,
    #[arg(long, hide = true)]
    pub no_html: bool,
}

#[derive(Debug, clap::Args)]
pub struct TurnMessagesArgs {
    /// Run folders (each holding profile_export_raw.jsonl)
    #[arg(required_unless_present = "named_run_dirs", value_name = "RUN-DIRS")]
    pub run_dirs: Vec<PathBuf>,
    /// AIPerf's `--run-dirs` spelling of the folders
    #[arg(long = "run-dirs", hide = true, num_args = 1..)]
    pub named_run_dirs: Vec<PathBuf>,
    /// The HTML file to write (one run folder only; default: <run>/turn_messages.html)
    #[arg(short, long)]
    pub out: Option<PathBuf>,
    /// Conversations shown: roots first, then by their first request
    #[arg(short = 'n', long, default_value_t = 40)]
    pub limit_conversations: usize,
    /// Turns shown per conversation; the rest are counted
    #[arg(long, default_value_t = 60)]
    pub max_turns: usize,
    /// Characters kept of each message; the rest are counted
    #[arg(long, default_value_t = 8000)]
    pub content_cap: usize,
}

pub fn run(command: AnalyzeCommand) -> i32 {
    match command {
        AnalyzeCommand::SwimLane(args) => {
            each_run(&[&args.run_dirs[..], &args.named_run_dirs].concat(), args.out.is_some(), |dir| {
                let png = args.out.clone().unwrap_or_else(|| dir.join("swim_lane.png"));
                let html = args.html.then(|| png.with_extension("html"));
                let html = html.map(|path| if args.out.is_some() { path } else { dir.join("swim_lane.html") });
                analyze::write_swim_lane(
                    dir,
                    &SwimLaneOutput { png: png.clone(), html: html.clone() },
                    args.concurrency,
                    args.ramp,
                )?;
                Ok([Some(png), html].into_iter().flatten().collect())
            })
        }
        AnalyzeCommand::TurnMessages(args) => {
            each_run(&[&args.run_dirs[..], &args.named_run_dirs].concat(), args.out.is_some(), |dir| {
                let limits = turn_messages::Limits {
                    conversations: args.limit_conversations,
                    turns: args.max_turns,
                    content_chars: args.content_cap,
                };
                let page = turn_messages::render(dir, limits)?;
                let out = args.out.clone().unwrap_or_else(|| dir.join("turn_messages.html"));
                if let Some(folder) = out.parent().filter(|f| !f.as_os_str().is_empty()) {
                    std::fs::create_dir_all(folder)?;
                }
                std::fs::write(&out, page).map_err(|e| anyhow::anyhow!("cannot write {}: {e}", out.display()))?;
                Ok(vec![out])
            })
        }
    }
}

/// `write` over every run folder: what it saved printed, a folder it failed on named and
/// skipped; exit code 1 when any failed.
fn each_run(dirs: &[PathBuf], one_output: bool, write: impl Fn(&Path) -> anyhow::Result<Vec<PathBuf>>) -> i32 {
    if one_output && dirs.len() > 1 {
        eprintln!("error: --out only works with a single run folder");
        return exit_code::SCRIPT_ERROR;
    }
    let mut failures = 0;
    for dir in dirs {
        match write(dir) {
            Ok(saved) => saved.iter().for_each(|path| println!("saved {}", path.display())),
            Err(e) => {
                eprintln!("skip {}: {e:#}", dir.display());
                failures += 1;
            }
        }
    }
    if failures > 0 { exit_code::FAILURE } else { exit_code::OK }
}
