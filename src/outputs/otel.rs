//! The live metrics pushed to an OpenTelemetry collector as OTLP/HTTP protobuf while a run
//! runs: every `interval` and once more as it ends, cumulative counters (requests by status,
//! errors by type, sent, tokens), the in-flight gauge and the latency histograms, each point
//! labelled with its phase, under the run's resource attributes.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Result;
use bytes::Bytes;
use prost::Message;

use super::http::OutputClient;
use super::otlp_messages::{
    AnyValue, CUMULATIVE, ExportMetricsServiceRequest, Gauge, Histogram, HistogramDataPoint, InstrumentationScope,
    KeyValue, Metric, NumberDataPoint, Resource, ResourceMetrics, ScopeMetrics, Sum, any_value, metric,
    number_data_point,
};
use crate::live::{HistogramReading, LiveMetrics, LiveSnapshot, PhaseSnapshot};
use crate::plan::{OtelPush, Plan};

/// How long one push may take, and the last one at the end of the run.
const PUSH_TIMEOUT: Duration = Duration::from_secs(10);

/// The run's resource: AIPerf's default attributes, then the plan's own over them.
pub fn resource_attributes(plan: &Plan, push: &OtelPush) -> BTreeMap<String, String> {
    let mut attributes = BTreeMap::from([
        ("service.name".to_string(), "aiperf".to_string()),
        ("service.version".to_string(), env!("CARGO_PKG_VERSION").to_string()),
        ("service.instance.id".to_string(), format!("{}-{}", plan.name, std::process::id())),
        ("aiperf.run.name".to_string(), plan.name.clone()),
        ("aiperf.endpoint.type".to_string(), plan.endpoint.kind.as_str().to_string()),
        ("aiperf.model.name".to_string(), plan.endpoint.model.clone()),
    ]);
    if let Some(sweep_id) = &plan.run_info.sweep_id {
        attributes.insert("aiperf.sweep.id".to_string(), sweep_id.clone());
        attributes.insert("aiperf.variation".to_string(), plan.run_info.variation_label().to_string());
        attributes.insert("aiperf.trial".to_string(), plan.run_info.trial.to_string());
    }
    attributes.extend(push.resource_attributes.clone());
    attributes
}

/// The push of `snapshot` at `now_ns`, totals counted from `start_ns` (epoch ns).
pub fn export_request(
    snapshot: &LiveSnapshot,
    resource: &BTreeMap<String, String>,
    start_ns: u64,
    now_ns: u64,
) -> ExportMetricsServiceRequest {
    let point = |phase: &PhaseSnapshot, extra: &[(&str, &str)], value: u64| NumberDataPoint {
        attributes: phase_attributes(phase, extra),
        start_time_unix_nano: start_ns,
        time_unix_nano: now_ns,
        value: Some(number_data_point::Value::AsInt(i64::try_from(value).unwrap_or(i64::MAX))),
    };
    let counter = |name: &str, unit: &str, description: &str, points: Vec<NumberDataPoint>| Metric {
        name: name.to_string(),
        description: description.to_string(),
        unit: unit.to_string(),
        data: Some(metric::Data::Sum(Sum {
            data_points: points,
            aggregation_temporality: CUMULATIVE,
            is_monotonic: true,
        })),
    };
    let phases = &snapshot.phases;
    let per_phase = |read: fn(&PhaseSnapshot) -> u64| -> Vec<NumberDataPoint> {
        phases.iter().map(|phase| point(phase, &[], read(phase))).collect()
    };
    let requests = phases
        .iter()
        .flat_map(|phase| {
            [("ok", phase.ok), ("error", phase.errors), ("cancelled", phase.cancelled)]
                .map(|(status, count)| point(phase, &[("status", status)], count))
        })
        .collect();
    let errors = phases
        .iter()
        .flat_map(|phase| {
            phase.errors_by_type.iter().map(move |(kind, count)| point(phase, &[("error.type", kind)], *count))
        })
        .collect();
    let histogram = |name: &str, description: &str, read: fn(&PhaseSnapshot) -> &HistogramReading| Metric {
        name: name.to_string(),
        description: description.to_string(),
        unit: "s".to_string(),
        data: Some(metric::Data::Histogram(Histogram {
            data_points: phases.iter().map(|phase| histogram_point(phase, read(phase), start_ns, now_ns)).collect(),
            aggregation_temporality: CUMULATIVE,
        })),
    };
    let metrics = vec![
        counter("aiperf.requests", "{request}", "Requests that ended, by status: ok, error, cancelled.", requests),
        counter("aiperf.request.errors", "{request}", "Failed requests of the results phases by error type.", errors),
        counter("aiperf.requests.sent", "{request}", "Requests the client sent.", per_phase(|p| p.sent)),
        Metric {
            name: "aiperf.requests.in_flight".to_string(),
            description: "Requests sent and not yet ended.".to_string(),
            unit: "{request}".to_string(),
            data: Some(metric::Data::Gauge(Gauge { data_points: per_phase(|p| p.in_flight) })),
        },
        histogram("aiperf.time_to_first_token", "Time to first token of successful streamed requests.", |p| {
            &p.time_to_first_token
        }),
        histogram("aiperf.inter_token_latency", "Inter-token latency of successful streamed requests.", |p| {
            &p.inter_token_latency
        }),
        histogram("aiperf.request.latency", "Request latency of successful requests.", |p| &p.request_latency),
        counter(
            "aiperf.input_tokens",
            "{token}",
            "Input tokens of successful requests.",
            per_phase(|p| p.input_tokens),
        ),
        counter(
            "aiperf.output_tokens",
            "{token}",
            "Output tokens of successful requests.",
            per_phase(|p| p.output_tokens),
        ),
    ];
    ExportMetricsServiceRequest {
        resource_metrics: vec![ResourceMetrics {
            resource: Some(Resource {
                attributes: resource.iter().map(|(key, value)| text_attribute(key, value)).collect(),
            }),
            scope_metrics: vec![ScopeMetrics {
                scope: Some(InstrumentationScope {
                    name: "aiperf".to_string(),
                    version: env!("CARGO_PKG_VERSION").to_string(),
                }),
                metrics,
            }],
        }],
    }
}

fn text_attribute(key: &str, value: &str) -> KeyValue {
    KeyValue {
        key: key.to_string(),
        value: Some(AnyValue { value: Some(any_value::Value::StringValue(value.to_string())) }),
    }
}

fn phase_attributes(phase: &PhaseSnapshot, extra: &[(&str, &str)]) -> Vec<KeyValue> {
    std::iter::once(text_attribute("aiperf.phase", &phase.name))
        .chain(extra.iter().map(|(key, value)| text_attribute(key, value)))
        .collect()
}

/// A cumulative histogram reading as OTLP's explicit buckets (counts per bucket, not running).
fn histogram_point(
    phase: &PhaseSnapshot,
    reading: &HistogramReading,
    start_ns: u64,
    now_ns: u64,
) -> HistogramDataPoint {
    let mut below = 0;
    let bucket_counts = reading
        .cumulative
        .iter()
        .map(|(_, running)| {
            let count = running - below;
            below = *running;
            count
        })
        .collect();
    HistogramDataPoint {
        attributes: phase_attributes(phase, &[]),
        start_time_unix_nano: start_ns,
        time_unix_nano: now_ns,
        count: reading.count,
        sum: Some(reading.sum_s),
        bucket_counts,
        explicit_bounds: reading.cumulative.iter().map(|(bound, _)| *bound).filter(|bound| bound.is_finite()).collect(),
    }
}

/// The task that pushes a run's live metrics until told to stop (or dropped, when a run ends
/// early: the task ends with it).
pub struct OtelPusher {
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    pushing: Option<tokio::task::JoinHandle<()>>,
}

impl OtelPusher {
    pub fn start(plan: &Plan, push: &OtelPush, metrics: Arc<LiveMetrics>) -> Result<Self> {
        let client = OutputClient::new(PUSH_TIMEOUT)?;
        let resource = resource_attributes(plan, push);
        let url = push.url.clone();
        let interval = Duration::from_secs_f64(push.interval_s);
        let (stop, mut stopped) = tokio::sync::oneshot::channel();
        eprintln!("OpenTelemetry: pushing live metrics to {url} every {:.1} s", push.interval_s);
        let pushing = tokio::spawn(async move {
            let start_ns = crate::start_at::now_ns();
            let mut failures = 0_u64;
            let mut ticks = tokio::time::interval(interval);
            ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                let last = tokio::select! {
                    _ = ticks.tick() => false,
                    _ = &mut stopped => true,
                };
                let request = export_request(&metrics.snapshot(), &resource, start_ns, crate::start_at::now_ns());
                if let Err(why) = send(&client, &url, request).await {
                    failures += 1;
                    if failures == 1 || last {
                        tracing::warn!("OpenTelemetry push to {url} failed ({failures} so far): {why:#}");
                    }
                }
                if last {
                    return;
                }
            }
        });
        Ok(Self { stop: Some(stop), pushing: Some(pushing) })
    }

    /// Push once more (the run's final totals) and stop.
    pub async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(pushing) = self.pushing.take()
            && tokio::time::timeout(PUSH_TIMEOUT + Duration::from_secs(1), pushing).await.is_err()
        {
            tracing::warn!("OpenTelemetry: the last push did not finish in time");
        }
    }
}

impl Drop for OtelPusher {
    fn drop(&mut self) {
        if let Some(pushing) = &self.pushing {
            pushing.abort();
        }
    }
}

async fn send(client: &OutputClient, url: &str, request: ExportMetricsServiceRequest) -> Result<()> {
    let body = Bytes::from(request.encode_to_vec());
    let answer = client.send(http::Method::POST, url, Some("application/x-protobuf"), body).await?;
    if !answer.is_success() {
        anyhow::bail!("HTTP {}: {}", answer.status, answer.text().chars().take(300).collect::<String>());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::live::EndedRequest;

    #[test]
    fn a_push_decodes_back_with_counters_and_per_bucket_histograms() {
        let metrics = LiveMetrics::new("r", ["profiling".to_string()]);
        for latency_s in [0.003, 0.3, 0.4] {
            metrics.ended(&EndedRequest {
                phase_index: 0,
                error_type: None,
                time_to_first_token_s: Some(0.02),
                inter_token_latency_s: Some(0.002),
                request_latency_s: Some(latency_s),
                input_tokens: 10,
                output_tokens: 5,
            });
        }
        let resource = BTreeMap::from([("team".to_string(), "perf".to_string())]);
        let request = export_request(&metrics.snapshot(), &resource, 1, 2);
        let decoded = ExportMetricsServiceRequest::decode(request.encode_to_vec().as_slice()).unwrap();
        let scope = &decoded.resource_metrics[0].scope_metrics[0];
        let latency = scope.metrics.iter().find(|m| m.name == "aiperf.request.latency").unwrap();
        let Some(metric::Data::Histogram(histogram)) = &latency.data else { panic!("a histogram") };
        let point = &histogram.data_points[0];
        assert_eq!(point.count, 3);
        assert_eq!(point.bucket_counts.len(), point.explicit_bounds.len() + 1);
        assert_eq!(point.bucket_counts.iter().sum::<u64>(), 3);
        assert_eq!(point.bucket_counts[0], 1, "0.003 s is in the first bucket (≤ 5 ms)");
        let tokens = scope.metrics.iter().find(|m| m.name == "aiperf.output_tokens").unwrap();
        let Some(metric::Data::Sum(sum)) = &tokens.data else { panic!("a sum") };
        assert_eq!(sum.data_points[0].value, Some(number_data_point::Value::AsInt(15)));
        assert!(sum.is_monotonic);
    }
}
