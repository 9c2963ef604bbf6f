//! Memory per concurrent stream: N users (closed loop) each hold one streaming chat request open
//! at the same time against the mock server in a separate process, and the client process's
//! peak RSS (VmHWM) is printed with the bytes each extra stream costs over the smallest N.
//!
//!     cargo run --release --example bench_streams [N ...]     (default: 10 1000 10000)
//!     cargo run --release --example bench_streams -- --http2 --itl-ms 4000 --tokens 3 10 100000
//!
//!     cargo run --release --example bench_streams -- --segments 6 --ttft-ms 30000 --itl-ms 1000 --tokens 3 100000
//!
//! Every N runs in a fresh client process (so its peak is its own) against a fresh server
//! process. A stream lasts TTFT + tokens × ITL (3 s + 10 × 0.5 s by default; `--ttft-ms`,
//! `--itl-ms`, `--tokens`), long enough for all N to be open at once: the `peak` column
//! (requests in flight at once) shows they were. With `--http2` every stream multiplexes over
//! one h2c connection instead of one connection each.
//!
//! With `--segments S` the N users are split over S execution segments (`--segment I/S`), each
//! a client process of its own (under the open-file limit, which caps one process's HTTP/1.1
//! connections), against S mock processes given to every segment as one endpoint's urls (each
//! destination port has its own ~28,000 local ports); `aiperf merge`'s merge then reads the
//! segments' folders. It prints each segment, the sum of the clients' peaks and the merged run.

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
        Some("segment") => {
            let segment = aiperf::plan::segment::ExecutionSegment::parse(&args[4]).map_err(anyhow::Error::msg)?;
            run_segment(&args[1], args[2].parse()?, args[3].parse()?, segment, &args[5])
        }
        _ if option(&args, "--segments").is_some() => segments::compare(&args),
        _ => compare(&args),
    }
}

/// The value after `--name`, if given.
fn option(args: &[String], name: &str) -> Option<f64> {
    let at = args.iter().position(|arg| arg == name)?;
    args.get(at + 1)?.parse().ok()
}

/// The stream timing of the command line: (TTFT ms, ITL ms, tokens).
fn stream_timing(args: &[String]) -> (f64, f64, f64) {
    let ttft_ms = option(args, "--ttft-ms").unwrap_or(3_000.0);
    let itl_ms = option(args, "--itl-ms").unwrap_or(500.0);
    let tokens = option(args, "--tokens").unwrap_or(10.0);
    (ttft_ms, itl_ms, tokens)
}

/// The user counts of the command line (the numbers not after an `--option`).
fn user_counts(args: &[String]) -> Vec<usize> {
    let users: Vec<usize> = args
        .iter()
        .enumerate()
        .filter(|(at, _)| *at == 0 || !args[at - 1].starts_with("--"))
        .filter_map(|(_, arg)| arg.parse().ok())
        .collect();
    if users.is_empty() { DEFAULT_USERS.to_vec() } else { users }
}

/// A mock process (`serve`) and the url it listens on.
fn start_server(ttft_ms: f64, itl_ms: f64) -> anyhow::Result<(std::process::Child, String)> {
    let mut server = Command::new(std::env::current_exe()?)
        .args(["serve", &ttft_ms.to_string(), &itl_ms.to_string()])
        .stdout(Stdio::piped())
        .spawn()?;
    let mut port = String::new();
    BufReader::new(server.stdout.take().expect("piped")).read_line(&mut port)?;
    Ok((server, format!("http://127.0.0.1:{}", port.trim())))
}

/// The parent: one server and one client process per N, and the table.
fn compare(args: &[String]) -> anyhow::Result<()> {
    let http2 = args.iter().any(|arg| arg == "--http2");
    let (ttft_ms, itl_ms, tokens) = stream_timing(args);
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
    for n in user_counts(args) {
        let (mut server, url) = start_server(ttft_ms, itl_ms)?;
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
    report_run(|| streams::run(&streams::plan(url, users, tokens, http2)))
}

/// Runs `run` with warnings shown (e.g. the open-file limit holding connections back) as the
/// binary shows them; prints `peak ok errors wall_s vmhwm_kib`.
fn report_run(run: impl FnOnce() -> anyhow::Result<aiperf::result::RunResult>) -> anyhow::Result<()> {
    tracing_subscriber::fmt().with_env_filter("warn").with_writer(std::io::stderr).with_target(false).init();
    let started = std::time::Instant::now();
    let result = run()?;
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

/// A segment's client process: `segment` of `users` users over the comma-separated `urls`,
/// its folder under `artifact_root`; prints what `client` prints.
fn run_segment(
    urls: &str,
    users: usize,
    tokens: f64,
    segment: aiperf::plan::segment::ExecutionSegment,
    artifact_root: &str,
) -> anyhow::Result<()> {
    let urls: Vec<String> = urls.split(',').map(str::to_owned).collect();
    let mut plan = streams::plan(&urls[0], users, tokens, false);
    plan.endpoint.more_urls = urls[1..].to_vec();
    report_run(|| streams::run_in(&plan, Some(segment), std::path::Path::new(artifact_root)))
}

/// `--segments`: the mock and client processes of every segment, then the merge.
mod segments {
    use std::process::{Command, Stdio};

    use super::{load_average, option, start_server, stream_timing, user_counts};

    pub fn compare(args: &[String]) -> anyhow::Result<()> {
        let count = option(args, "--segments").map_or(1, |count| count as u32).max(1);
        let (ttft_ms, itl_ms, tokens) = stream_timing(args);
        for users in user_counts(args) {
            let mut servers = Vec::new();
            let mut urls = Vec::new();
            for _ in 0..count {
                let (server, url) = start_server(ttft_ms, itl_ms)?;
                servers.push(server);
                urls.push(url);
            }
            let artifacts = tempfile::tempdir()?;
            println!(
                "{users} users over HTTP/1.1 in {count} segment processes against {count} mock processes; streams of \
                 {} ms",
                ttft_ms + (tokens - 1.0).max(0.0) * itl_ms
            );
            println!(
                "{:>8} {:>8} {:>8} {:>7} {:>9} {:>12}",
                "segment", "peak", "ok", "errors", "wall s", "peak RSS MiB"
            );
            let started = std::time::Instant::now();
            let clients: Vec<_> = (0..count)
                .map(|index| {
                    Command::new(std::env::current_exe()?)
                        .args(["segment", &urls.join(","), &users.to_string(), &tokens.to_string()])
                        .args([&format!("{index}/{count}"), &artifacts.path().display().to_string()])
                        .stdout(Stdio::piped())
                        .stderr(Stdio::inherit())
                        .spawn()
                        .map_err(anyhow::Error::from)
                })
                .collect::<anyhow::Result<_>>()?;
            let (mut rss_kib, mut peaks, mut errors) = (0u64, 0u64, 0u64);
            for (index, client) in clients.into_iter().enumerate() {
                let output = client.wait_with_output()?;
                let line = String::from_utf8_lossy(&output.stdout);
                let fields: Vec<&str> = line.split_whitespace().collect();
                let [peak, ok, failed, wall_s, hwm_kib] = fields[..] else {
                    println!("{index:>8} client failed: {}", line.trim());
                    continue;
                };
                rss_kib += hwm_kib.parse::<u64>()?;
                peaks += peak.parse::<u64>()?;
                errors += failed.parse::<u64>()?;
                let mib = hwm_kib.parse::<f64>()? / 1024.0;
                println!("{index:>8} {peak:>8} {ok:>8} {failed:>7} {wall_s:>9} {mib:>12.1}");
            }
            let wall_s = started.elapsed().as_secs_f64();
            for mut server in servers {
                server.kill()?;
                server.wait()?;
            }
            println!(
                "all: peaks {peaks}, errors {errors}, clients' peak RSS {:.1} MiB in all, wall {wall_s:.1} s",
                rss_kib as f64 / 1024.0
            );
            merge(artifacts.path())?;
        }
        println!("(load: {})", load_average());
        Ok(())
    }

    /// `aiperf merge`'s merge of the segment folders under `root`: the merged counts.
    fn merge(root: &std::path::Path) -> anyhow::Result<()> {
        let started = std::time::Instant::now();
        let out = root.join("merged");
        let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
        let merged = runtime.block_on(aiperf::segment_merge::merge(&[root.to_path_buf()], &out, false, None))?;
        let phase = merged.result.phases.first().ok_or_else(|| anyhow::anyhow!("nothing merged"))?;
        println!(
            "merged {} segments: {} requests, {} completed, {} errors, peak in flight {} (sum of the segments'), \
             start spread {:.0} ms, merge {:.1} s",
            merged.segments,
            phase.sent,
            phase.completed,
            phase.errors,
            phase.self_check.peak_in_flight,
            merged.start_spread_ms,
            started.elapsed().as_secs_f64()
        );
        Ok(())
    }
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
