//! `aiperf lib fetch | update | list | test`: a project's scenario libraries (libs/): fetched
//! into the cache and pinned in `aiperf.lock`, listed, and a library's own tests run.

use std::path::PathBuf;

use clap::Subcommand;

use super::{ScriptArgs, exit_code, lib_test};
use crate::libs::cache::Cache;
use crate::libs::list::list;
use crate::libs::lock::Lockfile;
use crate::libs::project::Project;
use crate::libs::resolve::{Fetched, Update, fetch};

#[derive(Debug, Subcommand)]
pub enum LibCommand {
    /// Fetch the libraries of aiperf.toml (and theirs) into the cache and write aiperf.lock;
    /// what the lock already pins stays pinned, and nothing is fetched that the cache holds
    #[command(after_help = "Example:\n  aiperf lib fetch --dir scenarios/")]
    Fetch(ProjectArgs),
    /// Move the lock to the commits that aiperf.toml's tags, branches and revs name now: every
    /// library, or only the NAMEs given
    #[command(after_help = "Example:\n  aiperf lib update team")]
    Update(UpdateArgs),
    /// Show each library of the lock: its source, locked commit, who requires it, and whether
    /// the cache holds it as locked
    List(ProjectArgs),
    /// Run a library's tests (`DIR/tests/*.rhai`) as scenarios against the built-in mock
    /// (url "mock"); each passes when it runs to its end with its thresholds met
    #[command(after_help = "Example:\n  aiperf lib test ./team-lib")]
    Test(TestArgs),
}

#[derive(Debug, clap::Args)]
pub struct ProjectArgs {
    /// The project: the nearest aiperf.toml in this folder or one above it
    #[arg(long, default_value = ".")]
    pub dir: PathBuf,
}

#[derive(Debug, clap::Args)]
pub struct UpdateArgs {
    /// The libraries to update (all when none is named)
    pub names: Vec<String>,
    #[command(flatten)]
    pub project: ProjectArgs,
}

#[derive(Debug, clap::Args)]
pub struct TestArgs {
    /// The library's folder; its tests are tests/*.rhai, its own libraries those of its aiperf.lock
    #[arg(default_value = ".")]
    pub dir: PathBuf,
    /// Keep the tests' artifacts under this folder (else a temporary folder, removed after)
    #[arg(long)]
    pub artifact_dir: Option<PathBuf>,
    #[command(flatten)]
    pub script: ScriptArgs,
}

pub fn run(command: LibCommand, runtime: &tokio::runtime::Runtime) -> i32 {
    let outcome = match command {
        LibCommand::Fetch(args) => fetch_and_report(&args, Update::Nothing),
        LibCommand::Update(args) => {
            let update =
                if args.names.is_empty() { Update::All } else { Update::Only(args.names.into_iter().collect()) };
            fetch_and_report(&args.project, update)
        }
        LibCommand::List(args) => print_list(&args),
        LibCommand::Test(args) => return lib_test::test(args, runtime),
    };
    match outcome {
        Ok(()) => exit_code::OK,
        Err(error) => {
            eprintln!("error: {error:#}");
            exit_code::FAILURE
        }
    }
}

fn fetch_and_report(args: &ProjectArgs, update: Update) -> anyhow::Result<()> {
    let project = Project::open(&args.dir)?;
    let cache = Cache::locate()?;
    let Fetched { previous, lock, warnings } = fetch(&project, &cache, &update)?;
    for warning in warnings {
        eprintln!("warning: {warning}");
    }
    for library in &lock.libraries {
        let source = library.requirement()?.to_string();
        let pinned = library.commit.as_deref().map_or(String::new(), |commit| format!(" {}", short(commit)));
        let change = change_of(previous.as_ref(), &library.name, library.commit.as_deref());
        crate::ui::stdout::print_line(&format!("  {:<16} {source}{pinned}{change}", library.name));
    }
    crate::ui::stdout::print_line(&format!(
        "{}: {} librar{}, cache {}",
        project.lock_path.display(),
        lock.libraries.len(),
        if lock.libraries.len() == 1 { "y" } else { "ies" },
        cache.root().display()
    ));
    Ok(())
}

/// ` (new)`, ` (was <commit>)` or nothing, for the line of one library.
fn change_of(previous: Option<&Lockfile>, name: &str, commit: Option<&str>) -> String {
    match previous.and_then(|lock| lock.find(name)) {
        None => " (new)".to_string(),
        Some(old) if old.commit.as_deref() != commit => {
            format!(" (was {})", old.commit.as_deref().map_or("a path".to_string(), short))
        }
        Some(_) => String::new(),
    }
}

fn short(commit: &str) -> String {
    commit.chars().take(12).collect()
}

fn print_list(args: &ProjectArgs) -> anyhow::Result<()> {
    let project = Project::open(&args.dir)?;
    let listed = list(&project)?;
    if listed.is_empty() {
        crate::ui::stdout::print_line(&format!("{}: no libraries", project.manifest.path.display()));
        return Ok(());
    }
    for library in listed {
        let commit = library.commit.as_deref().map_or("-".to_string(), short);
        crate::ui::stdout::print_line(&format!(
            "{:<16} {:<12} {:<22} {} (required by {})",
            library.name,
            commit,
            library.state,
            library.source,
            library.required_by.join(", ")
        ));
    }
    Ok(())
}
