//! Memory per concurrent stream: N users (closed loop) each hold one streaming chat request open
//! at the same time against the mock server in a separate process, and the client process's
//! peak RSS (VmHWM) is printed with the bytes each extra stream costs over the smallest N.
//!
//!     cargo run --release --example bench_streams [N ...]     (default: 10 1000 10000)
//!     cargo run --release --example bench_streams -- --http2 --itl-ms 4000 --tokens 3 10 100000
//!
//! Every N runs in a fresh client process (so its peak is its own) against a fresh server
//! process. A stream lasts TTFT + tokens × ITL (3 s + 10 × 0.5 s by default; `--ttft-ms`,
//! `--itl-ms`, `--tokens`), long enough for all N to be open at once: the `peak` column
//! (requests in flight at once) shows they were. With `--http2` every stream multiplexes over
//! one h2c connection instead of one connection each.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

#[path = "common/streams.rs"]
mod streams;

/// The allocator of the `aiperf` binary, so the benchmark measures what users run.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const DEFAULT_USERS: [usize; 3] = [10, 1_000, 10_000];

fn main() -> anyhow::Result<()> {
    // As the `aiperf` binary does (src/main.rs): no transparent huge pages, which would count
    // every 2 MiB page that mimalloc's arenas touch whole in the RSS.
    #[cfg(target_os = "linux")]
    // SAFETY: PR_SET_THP_DISABLE takes plain integer arguments and changes no memory.
    unsafe {
        libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
    }
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("serve") => streams::serve(args[1].parse()?, args[2].parse()?),
        Some("client") => client(&args[1], args[2].parse()?, args[3].parse()?, args[4] == "h2"),
        _ => compare(&args),
    }
}

/// The value after `--name`, if given.
fn option(args: &[String], name: &str) -> Option<f64> {
    let at = args.iter().position(|arg| arg == name)?;
    args.get(at + 1)?.parse().ok()
}

/// The parent: one server and one client process per N, and the table.
fn compare(args: &[String]) -> anyhow::Result<()> {
    let http2 = args.iter().any(|arg| arg == "--http2");
    let ttft_ms = option(args, "--ttft-ms").unwrap_or(3_000.0);
    let itl_ms = option(args, "--itl-ms").unwrap_or(500.0);
    let tokens = option(args, "--tokens").unwrap_or(10.0);
    let mut users: Vec<usize> = args
        .iter()
        .enumerate()
        .filter(|(at, _)| *at == 0 || !args[at - 1].starts_with("--"))
        .filter_map(|(_, arg)| arg.parse().ok())
        .collect();
    if users.is_empty() {
        users = DEFAULT_USERS.to_vec();
    }
    let me = std::env::current_exe()?;
    println!(
        "{} streams of {} ms (TTFT {ttft_ms} ms + {tokens} tokens × ITL {itl_ms} ms); RSS is the client \
         process's peak (VmHWM)",
        if http2 { "HTTP/2 (one h2c connection)" } else { "HTTP/1.1 (one connection each)" },
        ttft_ms + (tokens - 1.0).max(0.0) * itl_ms
    );
    println!(
        "{:>8} {:>8} {:>8} {:>7} {:>9} {:>11} {:>15}",
        "users", "peak", "ok", "errors", "wall s", "peak RSS MiB", "bytes/stream"
    );
    let mut smallest: Option<(usize, u64)> = None;
    for n in users {
        let mut server = Command::new(&me)
            .args(["serve", &ttft_ms.to_string(), &itl_ms.to_string()])
            .stdout(Stdio::piped())
            .spawn()?;
        let mut port = String::new();
        BufReader::new(server.stdout.take().expect("piped")).read_line(&mut port)?;
        let url = format!("http://127.0.0.1:{}", port.trim());
        let output = Command::new(&me)
            .args(["client", &url, &n.to_string(), &tokens.to_string(), if http2 { "h2" } else { "h1" }])
            .stderr(Stdio::inherit())
            .output()?;
        server.kill()?;
        server.wait()?;
        let line = String::from_utf8_lossy(&output.stdout);
        let fields: Vec<&str> = line.split_whitespace().collect();
        let [peak, ok, errors, wall_s, hwm_kib] = fields[..] else {
            println!("{n:>8} client failed: {}", line.trim());
            continue;
        };
        let hwm_bytes: u64 = hwm_kib.parse::<u64>()? * 1024;
        let per_stream = match smallest {
            Some((base_n, base_bytes)) if n > base_n => {
                format!("{:.0}", (hwm_bytes as f64 - base_bytes as f64) / (n - base_n) as f64)
            }
            _ => "—".to_string(),
        };
        smallest.get_or_insert((n, hwm_bytes));
        println!(
            "{n:>8} {peak:>8} {ok:>8} {errors:>7} {wall_s:>9} {:>11.1} {per_stream:>15}",
            hwm_bytes as f64 / (1024.0 * 1024.0)
        );
    }
    println!("(bytes/stream: the peak RSS over the first row's, per extra stream; load: {})", load_average());
    Ok(())
}

/// A client process: `users` users, one streamed request of `tokens` each; prints
/// `peak ok errors wall_s vmhwm_kib`.
fn client(url: &str, users: usize, tokens: f64, http2: bool) -> anyhow::Result<()> {
    // Warnings (e.g. the open-file limit holding connections back) as the binary shows them.
    tracing_subscriber::fmt().with_env_filter("warn").with_writer(std::io::stderr).with_target(false).init();
    let started = std::time::Instant::now();
    let result = streams::run(&streams::plan(url, users, tokens, http2))?;
    let wall_s = started.elapsed().as_secs_f64();
    let phase = result.phases.first().ok_or_else(|| anyhow::anyhow!("no phase ran"))?;
    println!(
        "{} {} {} {wall_s:.1} {}",
        phase.self_check.peak_in_flight,
        phase.completed,
        phase.errors,
        peak_rss_kib()?
    );
    Ok(())
}

/// The process's peak resident set (VmHWM), KiB.
fn peak_rss_kib() -> anyhow::Result<u64> {
    let status = std::fs::read_to_string("/proc/self/status")?;
    let line = status.lines().find(|line| line.starts_with("VmHWM:")).ok_or_else(|| anyhow::anyhow!("no VmHWM"))?;
    Ok(line.split_whitespace().nth(1).unwrap_or("0").parse()?)
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|text| text.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}
