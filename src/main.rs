//! The `aiperf` binary: parse the command line and hand over to the library.

use clap::Parser;

/// mimalloc instead of the system allocator: building prompts (tokenizing) and reading streamed
/// answers allocate many small strings; docs/performance.md has the numbers.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let cli = aiperf::cli::Cli::parse();
    let filter = tracing_subscriber::EnvFilter::try_new(cli.log_filter())
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).with_target(false).init();
    std::process::exit(aiperf::cli::main_with(cli));
}
