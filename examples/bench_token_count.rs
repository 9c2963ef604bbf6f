//! Benchmark of counting the tokens of one very long "word" (letters, no spaces), the worst
//! case a server can send: time and resident memory for 1, 10 and 20 MB (or the sizes given)
//! under the builtin GPT-2 tokenizer, counted in bounded pieces as the client does, then the
//! same for ordinary words. `--whole` adds one encode of 1 MB without pieces, for comparison.
//!
//!     cargo run --release --example bench_token_count [--whole] [MB ...]

use std::time::Instant;

use aiperf::dataset::tokenizer::Tokenizer;

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// (current, peak) resident memory of this process in MiB, from /proc/self/status.
fn rss_mib() -> (f64, f64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|line| line.strip_prefix(name))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|kb| kb.parse::<f64>().ok())
            .map_or(f64::NAN, |kb| kb / 1024.0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

fn main() -> anyhow::Result<()> {
    let whole = std::env::args().any(|arg| arg == "--whole");
    let sizes: Vec<usize> = std::env::args().skip(1).filter_map(|arg| arg.parse().ok()).collect();
    let sizes = if sizes.is_empty() { vec![1, 10, 20] } else { sizes };
    let tokenizer = Tokenizer::builtin();
    println!("{:>8} {:>6} {:>10} {:>10} {:>10} {:>10}", "text", "MB", "tokens", "seconds", "RSS MiB", "peak MiB");
    for (kind, unit) in [("no space", "abcdefghij"), ("words", "the fox. ")] {
        for &megabytes in &sizes {
            let text = unit.repeat(megabytes * 1_000_000 / unit.len());
            let started = Instant::now();
            let tokens = tokenizer.count(&text);
            let seconds = started.elapsed().as_secs_f64();
            let (rss, peak) = rss_mib();
            println!("{kind:>8} {megabytes:>6} {tokens:>10} {seconds:>10.3} {rss:>10.1} {peak:>10.1}");
        }
    }
    if whole {
        let text = "abcdefghij".repeat(100_000);
        let started = Instant::now();
        let tokens = tokenizer.encode(&text).len();
        let (rss, peak) = rss_mib();
        println!(
            "whole 1 MB encode: {tokens} tokens in {:.3} s, RSS {rss:.1} MiB, peak {peak:.1} MiB",
            started.elapsed().as_secs_f64()
        );
    }
    Ok(())
}
