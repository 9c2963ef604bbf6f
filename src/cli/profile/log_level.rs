//! AIPerf's place for the log level, after `profile`: `--log-level LEVEL`, `-v` / `--verbose`
//! (INFO) and `-vv` / `--extra-verbose` (DEBUG), read before the flags are parsed so that the
//! console and `logs/aiperf.log` are at that level from the start.

/// The tracing filter `args` choose, if they choose one (the last one given wins).
pub fn log_filter_of(args: &[String]) -> Option<String> {
    let mut chosen = None;
    let mut items = args.iter();
    while let Some(arg) = items.next() {
        let level = match arg.as_str() {
            "--log-level" => items.next().map(String::as_str),
            "-v" | "--verbose" => Some("info"),
            "-vv" | "--extra-verbose" => Some("debug"),
            other => other.strip_prefix("--log-level="),
        };
        if let Some(level) = level {
            chosen = Some(filter_of(level));
        }
    }
    chosen
}

/// AIPerf's level names (loguru's ladder) as tracing's.
fn filter_of(level: &str) -> String {
    match level.trim().to_ascii_lowercase().as_str() {
        "trace" => "trace",
        "debug" => "debug",
        "info" | "notice" | "success" => "info",
        "warning" | "warn" => "warn",
        "error" | "critical" => "error",
        other => return other.to_string(),
    }
    .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(text: &str) -> Vec<String> {
        text.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn aiperf_s_level_flags_choose_the_filter() {
        assert_eq!(log_filter_of(&args("--model m --log-level DEBUG")).as_deref(), Some("debug"));
        assert_eq!(log_filter_of(&args("--log-level=SUCCESS")).as_deref(), Some("info"));
        assert_eq!(log_filter_of(&args("-v --url x")).as_deref(), Some("info"));
        assert_eq!(log_filter_of(&args("--extra-verbose")).as_deref(), Some("debug"));
        assert_eq!(log_filter_of(&args("--model m")), None);
    }
}
