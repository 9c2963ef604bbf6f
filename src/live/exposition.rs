//! The live metrics in Prometheus text format (version 0.0.4): every family with its HELP and
//! TYPE, one series per phase, labelled `run` and `phase`.

use std::fmt::Write;
use std::sync::atomic::{AtomicU64, Ordering};

use super::histogram::LiveHistogram;
use super::{LiveMetrics, LivePhase};
use crate::load::PhaseCounters;

/// The content type of the text this module writes.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// One of the load's phase counters.
type CounterField = fn(&PhaseCounters) -> &AtomicU64;
/// One of a phase's histograms.
type HistogramField = fn(&LivePhase) -> &LiveHistogram;
/// One of a phase's token counters.
type TokenField = fn(&LivePhase) -> &AtomicU64;

/// The exposition of `metrics` as it stands now.
pub fn render(metrics: &LiveMetrics) -> String {
    let mut out = String::new();
    let labels = |phase: &LivePhase| format!("run=\"{}\",phase=\"{}\"", escape(&metrics.run), escape(&phase.name));

    let counters = |phase: &LivePhase, read: CounterField| {
        phase.counters.get().map_or(0, |counters| read(counters).load(Ordering::Relaxed))
    };
    family(&mut out, "aiperf_requests_total", "counter", "Requests that ended, by status: ok, error, cancelled.");
    for phase in &metrics.phases {
        let statuses: [(&str, CounterField); 3] =
            [("ok", |c| &c.completed), ("error", |c| &c.errors), ("cancelled", |c| &c.cancelled)];
        for (status, read) in statuses {
            let series = format!("{},status=\"{status}\"", labels(phase));
            sample(&mut out, "aiperf_requests_total", &series, counters(phase, read) as f64);
        }
    }
    family(&mut out, "aiperf_request_errors_total", "counter", "Failed requests of the results phases by error type.");
    for phase in &metrics.phases {
        for (kind, count) in lock_errors(phase).iter() {
            let series = format!("{},type=\"{}\"", labels(phase), escape(kind));
            sample(&mut out, "aiperf_request_errors_total", &series, *count as f64);
        }
    }
    family(&mut out, "aiperf_requests_sent_total", "counter", "Requests the client sent.");
    for phase in &metrics.phases {
        sample(&mut out, "aiperf_requests_sent_total", &labels(phase), counters(phase, |c| &c.sent) as f64);
    }
    family(&mut out, "aiperf_requests_in_flight", "gauge", "Requests sent and not yet ended.");
    for phase in &metrics.phases {
        sample(&mut out, "aiperf_requests_in_flight", &labels(phase), counters(phase, |c| &c.in_flight) as f64);
    }
    let histograms: [(&str, &str, HistogramField); 3] = [
        ("aiperf_time_to_first_token_seconds", "Time to first token of successful streamed requests.", |p| {
            &p.time_to_first_token
        }),
        ("aiperf_inter_token_latency_seconds", "Inter-token latency of successful streamed requests.", |p| {
            &p.inter_token_latency
        }),
        ("aiperf_request_latency_seconds", "Request latency of successful requests.", |p| &p.request_latency),
    ];
    for (name, help, histogram_of) in histograms {
        family(&mut out, name, "histogram", help);
        for phase in &metrics.phases {
            histogram(&mut out, name, &labels(phase), histogram_of(phase));
        }
    }
    let tokens: [(&str, &str, TokenField); 2] = [
        ("aiperf_input_tokens_total", "Input tokens of successful requests.", |p| &p.input_tokens),
        ("aiperf_output_tokens_total", "Output tokens of successful requests.", |p| &p.output_tokens),
    ];
    for (name, help, read) in tokens {
        family(&mut out, name, "counter", help);
        for phase in &metrics.phases {
            sample(&mut out, name, &labels(phase), read(phase).load(Ordering::Relaxed) as f64);
        }
    }
    out
}

fn lock_errors(phase: &LivePhase) -> std::sync::MutexGuard<'_, std::collections::BTreeMap<String, u64>> {
    phase.errors.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn family(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
}

fn sample(out: &mut String, name: &str, labels: &str, value: f64) {
    let _ = writeln!(out, "{name}{{{labels}}} {value}");
}

fn histogram(out: &mut String, name: &str, labels: &str, histogram: &LiveHistogram) {
    let reading = histogram.read();
    for (bound, count) in &reading.cumulative {
        let le = if bound.is_infinite() { "+Inf".to_string() } else { bound.to_string() };
        sample(out, &format!("{name}_bucket"), &format!("{labels},le=\"{le}\""), *count as f64);
    }
    sample(out, &format!("{name}_sum"), labels, reading.sum_s);
    sample(out, &format!("{name}_count"), labels, reading.count as f64);
}

/// A label value as the text format writes it: backslash, quote and newline escaped.
pub(super) fn escape(value: &str) -> String {
    value.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::live::EndedRequest;
    use crate::server_metrics::parse::{SeriesValue, parse};
    use std::sync::Arc;

    fn ok(phase_index: usize) -> EndedRequest<'static> {
        EndedRequest {
            phase_index,
            error_type: None,
            time_to_first_token_s: Some(0.02),
            inter_token_latency_s: Some(0.002),
            request_latency_s: Some(0.3),
            input_tokens: 10,
            output_tokens: 4,
        }
    }

    #[test]
    fn the_project_parser_reads_every_family_back() {
        let metrics = LiveMetrics::new("run \"a\"", ["warmup".to_string(), "profiling".to_string()]);
        let counters = Arc::new(PhaseCounters::default());
        counters.sent.store(5, Ordering::Relaxed);
        counters.in_flight.store(2, Ordering::Relaxed);
        counters.completed.store(2, Ordering::Relaxed);
        counters.errors.store(1, Ordering::Relaxed);
        metrics.phase_started(1, counters);
        metrics.ended(&ok(1));
        metrics.ended(&ok(1));
        let failed = EndedRequest {
            error_type: Some("TimeoutError"),
            time_to_first_token_s: None,
            inter_token_latency_s: None,
            request_latency_s: None,
            input_tokens: 0,
            output_tokens: 0,
            ..ok(1)
        };
        metrics.ended(&failed);

        let text = render(&metrics);
        let scrape = parse(&text);
        assert_eq!(scrape.bad_lines, 0, "{text}");
        let value = |family: &str, wanted: &[(&str, &str)]| -> f64 {
            let family = scrape.families.iter().find(|f| f.name == family).unwrap_or_else(|| panic!("{family}"));
            let series = family
                .series
                .iter()
                .find(|s| wanted.iter().all(|(k, v)| s.labels.iter().any(|(lk, lv)| lk == k && lv == v)))
                .unwrap_or_else(|| panic!("{wanted:?} in {}", family.name));
            match &series.value {
                SeriesValue::Scalar(value) => *value,
                SeriesValue::Histogram(histogram) => histogram.count,
            }
        };
        let profiling = ("phase", "profiling");
        assert_eq!(value("aiperf_requests", &[profiling, ("status", "ok")]), 2.0);
        assert_eq!(value("aiperf_requests", &[profiling, ("status", "error")]), 1.0);
        assert_eq!(value("aiperf_requests", &[("phase", "warmup"), ("status", "ok")]), 0.0);
        assert_eq!(value("aiperf_request_errors", &[profiling, ("type", "TimeoutError")]), 1.0);
        assert_eq!(value("aiperf_requests_sent", &[profiling]), 5.0);
        assert_eq!(value("aiperf_requests_in_flight", &[profiling]), 2.0);
        assert_eq!(value("aiperf_requests_in_flight", &[("phase", "warmup")]), 0.0);
        assert_eq!(value("aiperf_time_to_first_token_seconds", &[profiling]), 2.0);
        assert_eq!(value("aiperf_request_latency_seconds", &[profiling]), 2.0);
        assert_eq!(value("aiperf_input_tokens", &[profiling]), 20.0);
        assert_eq!(value("aiperf_output_tokens", &[("run", "run \"a\""), profiling]), 8.0);
        assert!(
            text.contains(
                "aiperf_request_latency_seconds_bucket{run=\"run \\\"a\\\"\",phase=\"profiling\",le=\"0.5\"} 2"
            )
        );
    }
}
