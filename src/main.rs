//! The `aiperf` binary: parse the command line and hand over to the library.

use clap::Parser;

/// mimalloc instead of the system allocator: building prompts (tokenizing) and reading streamed
/// answers allocate many small strings; docs/performance.md has the numbers.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    small_pages_only();
    let cli = aiperf::cli::Cli::parse();
    init_logging(&cli);
    std::process::exit(aiperf::cli::main_with(cli));
}

/// Log lines to stderr at the chosen level, and to the running benchmark's `logs/aiperf.log`
/// at the same level, or at INFO for this project's own lines when none was chosen (AIPerf's
/// default).
fn init_logging(cli: &aiperf::cli::Cli) {
    use tracing_subscriber::EnvFilter;
    use tracing_subscriber::prelude::*;
    let console = EnvFilter::try_new(cli.log_filter()).unwrap_or_else(|_| EnvFilter::new("warn"));
    let file_filter = if cli.log_level_chosen() { cli.log_filter() } else { "warn,aiperf=info".to_string() };
    aiperf::outputs::run_log::set_file_level(file_filter.rsplit('=').next().unwrap_or("info"));
    let file = EnvFilter::try_new(&file_filter).unwrap_or_else(|_| EnvFilter::new("warn,aiperf=info"));
    tracing_subscriber::registry()
        .with(tracing_subscriber::fmt::layer().with_writer(std::io::stderr).with_target(false).with_filter(console))
        .with(aiperf::outputs::run_log::RunLogLayer.with_filter(file))
        .init();
}

/// mimalloc asks for transparent huge pages (`MADV_HUGEPAGE`); where the system grants them
/// (THP `madvise` or `always`), a 2 MiB page that a few live objects touch counts whole in the
/// RSS: 10,000 open streams took 424 MB instead of 329 (docs/performance.md). Memory faulted in
/// from here on comes in 4 KiB pages.
fn small_pages_only() {
    #[cfg(target_os = "linux")]
    // SAFETY: PR_SET_THP_DISABLE takes plain integer arguments and changes no memory.
    unsafe {
        libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
    }
}
