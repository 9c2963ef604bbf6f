//! `--start-at TIME`: the wall-clock moment at which every execution segment of a distributed
//! run begins its first phase, as RFC 3339 (`2026-01-01T12:00:00Z`) or Unix seconds. It
//! assumes the machines' clocks agree (NTP or PTP); the merge reports the spread it saw.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::cancel::CancelSignal;

/// Epoch ns of `text`.
pub fn parse(text: &str) -> Result<u64, String> {
    let text = text.trim();
    if let Ok(seconds) = text.parse::<f64>() {
        if seconds.is_finite() && seconds >= 0.0 {
            return Ok((seconds * 1e9) as u64);
        }
        return Err(format!("start time `{text}`: Unix seconds cannot be negative"));
    }
    let at = chrono::DateTime::parse_from_rfc3339(text).map_err(|e| {
        format!("start time `{text}`: expected RFC 3339 (e.g. 2026-01-01T12:00:00Z) or Unix seconds ({e})")
    })?;
    at.timestamp_nanos_opt()
        .and_then(|ns| u64::try_from(ns).ok())
        .ok_or_else(|| format!("start time `{text}` is out of range"))
}

/// Epoch ns now.
pub fn now_ns() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64)
}

/// Sleep until epoch ns `at_ns` (at once if it has passed); false when `cancel` ended the wait.
pub async fn wait_until(at_ns: u64, cancel: &CancelSignal) -> bool {
    let wait = Duration::from_nanos(at_ns.saturating_sub(now_ns()));
    tokio::select! {
        _ = tokio::time::sleep(wait) => true,
        _ = cancel.cancelled() => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_forms_give_epoch_ns_and_bad_text_is_named() {
        assert_eq!(parse("1700000000").unwrap(), 1_700_000_000_000_000_000);
        assert_eq!(parse("1700000000.5").unwrap(), 1_700_000_000_500_000_000);
        assert_eq!(parse("2023-11-14T22:13:20Z").unwrap(), 1_700_000_000_000_000_000);
        assert_eq!(parse("2023-11-14T23:13:20+01:00").unwrap(), 1_700_000_000_000_000_000);
        assert!(parse("tomorrow").unwrap_err().contains("RFC 3339"));
        assert!(parse("-5").unwrap_err().contains("negative"));
    }

    #[tokio::test]
    async fn a_past_time_does_not_wait_and_a_cancel_ends_the_wait() {
        assert!(wait_until(0, &CancelSignal::new()).await);
        let cancel = CancelSignal::new();
        cancel.cancel();
        assert!(!wait_until(now_ns() + 60_000_000_000, &cancel).await);
    }
}
