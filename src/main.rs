//! The `aiperf` binary: parse the command line and hand over to the library.

use clap::Parser;

/// mimalloc instead of the system allocator: building prompts (tokenizing) and reading streamed
/// answers allocate many small strings; docs/performance.md has the numbers.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    small_pages_only();
    let cli = aiperf::cli::Cli::parse();
    let filter = tracing_subscriber::EnvFilter::try_new(cli.log_filter())
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).with_target(false).init();
    std::process::exit(aiperf::cli::main_with(cli));
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
