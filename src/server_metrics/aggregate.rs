//! Turns the run's scrape records into the export model: metrics grouped by name across
//! endpoints, one series per endpoint + label set, each with its stats over the results
//! phases' windows (and the warm-ups'); with several measured phases, each phase's own.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;

use super::collector::{Collected, ScrapeRecord};
use super::endpoint_info::{EndpointInfo, endpoint_info};
use super::parse::{FamilyKind, HistogramValue, Labels, SeriesValue};
use super::series_stats::{self, CounterStats, GaugeStats, HistogramStats, Timeslice};
use super::units::infer_unit;
use super::window::{MeasuredPhase, PhaseSamples, ProfilingWindow, SampleTimes, phase_samples};

#[derive(Debug, Clone, PartialEq)]
pub enum SeriesStats {
    Gauge(GaugeStats),
    Counter(CounterStats),
    Histogram(HistogramStats),
}

#[derive(Debug, Clone, PartialEq)]
pub struct SeriesSummary {
    pub endpoint_url: String,
    pub labels: Labels,
    pub stats: SeriesStats,
    /// Histogram bucket deltas (`le` → count), in bound order.
    pub buckets: Option<Value>,
    pub timeslices: Vec<Timeslice>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct MetricSummary {
    pub name: String,
    pub kind: FamilyKind,
    pub description: String,
    pub unit: Option<String>,
    pub series: Vec<SeriesSummary>,
}

/// Everything the server-metrics exports need.
#[derive(Debug, Clone)]
pub struct ServerMetricsResult {
    pub endpoints_configured: Vec<String>,
    pub endpoints_successful: Vec<String>,
    /// From the first results phase's start to the last one's last response.
    pub window: ProfilingWindow,
    /// Each results phase, in order (the statistics' boundaries).
    pub phase_windows: Vec<ProfilingWindow>,
    /// From the first warm-up's start to the last one's last response; None without one.
    pub warmup_window: Option<ProfilingWindow>,
    pub endpoint_info: Vec<(String, EndpointInfo)>,
    /// Sorted by name.
    pub metrics: Vec<MetricSummary>,
    /// The same over the warm-ups (AIPerf's `warmup_metrics`); empty without one.
    pub warmup_metrics: Vec<MetricSummary>,
    /// Every scrape, warmup included, in time order (for JSONL and Parquet).
    pub records: Vec<ScrapeRecord>,
    pub slice_ns: Option<u64>,
    /// Each measured phase alone, when the run measured more than one (AIPerf's
    /// `phases/<name>/server_metrics.json`); empty otherwise.
    pub by_phase: Vec<PhaseServerMetrics>,
}

/// One measured phase's server metrics: its stats alone, and its scrapes' endpoint info.
#[derive(Debug, Clone)]
pub struct PhaseServerMetrics {
    pub phase_index: usize,
    /// The first scrape at or after the phase's start and the one that closed it, epoch ns.
    pub scrapes_ns: Option<(u64, u64)>,
    pub endpoint_info: Vec<(String, EndpointInfo)>,
    pub metrics: Vec<MetricSummary>,
}

/// Samples of one series in time order: when each scrape was sent and had arrived, and the values.
enum Points {
    Scalar(Vec<u64>, Vec<u64>, Vec<f64>),
    Histogram(Vec<u64>, Vec<u64>, Vec<HistogramValue>),
}

struct FamilyMeta {
    kind: FamilyKind,
    description: String,
    unit: Option<String>,
}

/// The windows a summary covers, and how the last one closes.
struct Windows<'a> {
    spans: &'a [ProfilingWindow],
    final_scrape_closes: bool,
}

/// Build the export model from the collected records; `phase_windows` are the results
/// phases in time order (at least one), `warmup_windows` the warm-ups' (AIPerf's
/// `warmup_metrics`; none without a warm-up).
pub fn aggregate(
    collected: Collected,
    phase_windows: &[ProfilingWindow],
    warmup_windows: &[ProfilingWindow],
    measured: &[MeasuredPhase],
    slice_ns: Option<u64>,
) -> ServerMetricsResult {
    let mut families: BTreeMap<String, FamilyMeta> = BTreeMap::new();
    let mut series: BTreeMap<(String, Arc<str>, Labels), Points> = BTreeMap::new();
    for record in &collected.records {
        for family in &record.scrape.families {
            let meta = families.entry(family.name.clone()).or_insert_with(|| FamilyMeta {
                kind: family.kind,
                description: family.help.clone(),
                unit: family.unit.clone(),
            });
            if meta.kind != family.kind {
                continue;
            }
            for one in &family.series {
                let key = (family.name.clone(), record.endpoint_url.clone(), one.labels.clone());
                match (&one.value, series.entry(key).or_insert_with(|| empty_points(&one.value))) {
                    (SeriesValue::Scalar(v), Points::Scalar(sent, arrived, values)) => {
                        sent.push(record.request_sent_ns);
                        arrived.push(record.timestamp_ns);
                        values.push(*v);
                    }
                    (SeriesValue::Histogram(h), Points::Histogram(sent, arrived, values)) => {
                        sent.push(record.request_sent_ns);
                        arrived.push(record.timestamp_ns);
                        values.push(h.clone());
                    }
                    _ => {}
                }
            }
        }
    }
    let mut metrics: Vec<MetricSummary> = families
        .into_iter()
        .map(|(name, meta)| {
            let unit = meta.unit.or_else(|| infer_unit(&name, &meta.description).map(str::to_string));
            MetricSummary { name, kind: meta.kind, description: meta.description, unit, series: Vec::new() }
        })
        .collect();
    let mut warmup_metrics = metrics.clone();
    let results = Windows { spans: phase_windows, final_scrape_closes: true };
    let warmups = Windows { spans: warmup_windows, final_scrape_closes: false };
    let alone = phases_alone(measured);
    let mut phase_metrics: Vec<Vec<MetricSummary>> = alone.iter().map(|_| metrics.clone()).collect();
    for ((name, endpoint_url, labels), points) in series {
        let Ok(at) = metrics.binary_search_by(|m| m.name.as_str().cmp(&name)) else { continue };
        let kind = metrics[at].kind;
        let mut summaries = vec![(&mut metrics[at], &results, slice_ns), (&mut warmup_metrics[at], &warmups, None)];
        summaries
            .extend(phase_metrics.iter_mut().zip(&alone).map(|(phase, (_, windows))| (&mut phase[at], windows, None)));
        for (metric, windows, slice_ns) in summaries {
            if windows.spans.is_empty() {
                continue;
            }
            if let Some((stats, buckets, timeslices)) = summarize(kind, &points, windows, slice_ns) {
                let (endpoint_url, labels) = (endpoint_url.to_string(), labels.clone());
                metric.series.push(SeriesSummary { endpoint_url, labels, stats, buckets, timeslices });
            }
        }
    }
    metrics.retain(|m| !m.series.is_empty());
    warmup_metrics.retain(|m| !m.series.is_empty());
    let by_phase = alone
        .iter()
        .zip(phase_metrics)
        .map(|((phase, windows), mut metrics)| {
            metrics.retain(|m| !m.series.is_empty());
            let window = windows.spans[0];
            let endpoint_info: Vec<(String, EndpointInfo)> = collected
                .successful
                .iter()
                .map(|url| (url, phase_scrapes(&collected.records, url, window, windows.final_scrape_closes)))
                .filter(|(_, scrapes)| !scrapes.is_empty())
                .map(|(url, scrapes)| (url.clone(), endpoint_info(scrapes.into_iter())))
                .collect();
            let first = endpoint_info.iter().map(|(_, info)| info.first_fetch_ns).min();
            let last = endpoint_info.iter().map(|(_, info)| info.last_fetch_ns).max();
            PhaseServerMetrics { phase_index: phase.phase_index, scrapes_ns: first.zip(last), endpoint_info, metrics }
        })
        .collect();
    let endpoint_info = collected
        .successful
        .iter()
        .map(|url| (url.clone(), endpoint_info(collected.records.iter().filter(|r| &*r.endpoint_url == url.as_str()))))
        .collect();
    ServerMetricsResult {
        endpoints_configured: collected.configured,
        endpoints_successful: collected.successful,
        window: ProfilingWindow {
            start_ns: phase_windows.first().map_or(0, |w| w.start_ns),
            end_ns: phase_windows.last().map_or(0, |w| w.end_ns),
        },
        phase_windows: phase_windows.to_vec(),
        warmup_window: warmup_windows
            .first()
            .zip(warmup_windows.last())
            .map(|(first, last)| ProfilingWindow { start_ns: first.start_ns, end_ns: last.end_ns }),
        endpoint_info,
        metrics,
        warmup_metrics,
        records: collected.records,
        slice_ns,
        by_phase,
    }
}

/// Each measured phase with the window its stats alone are taken over, when there are several:
/// a warm-up or an earlier results phase closed by the next scrape, the last results phase by
/// the final one (so a run's one results phase gets its top-level stats).
fn phases_alone(measured: &[MeasuredPhase]) -> Vec<(MeasuredPhase, Windows<'_>)> {
    if measured.len() < 2 {
        return Vec::new();
    }
    let last_results = measured.iter().rposition(|phase| phase.results);
    measured
        .iter()
        .enumerate()
        .map(|(at, phase)| {
            let final_scrape_closes = Some(at) == last_results;
            (*phase, Windows { spans: std::slice::from_ref(&phase.window), final_scrape_closes })
        })
        .collect()
}

/// Endpoint `url`'s scrapes (in time order) of a phase: from the first at or after its start
/// to the first at or after its end, or to the last one when the final scrape closes it.
fn phase_scrapes<'a>(
    records: &'a [ScrapeRecord],
    url: &str,
    window: ProfilingWindow,
    final_scrape_closes: bool,
) -> Vec<&'a ScrapeRecord> {
    let mut closed = false;
    records
        .iter()
        .filter(|record| &*record.endpoint_url == url && record.timestamp_ns >= window.start_ns)
        .take_while(|record| {
            let take = !closed;
            closed = closed || (!final_scrape_closes && record.timestamp_ns >= window.end_ns);
            take
        })
        .collect()
}

fn empty_points(value: &SeriesValue) -> Points {
    match value {
        SeriesValue::Scalar(_) => Points::Scalar(Vec::new(), Vec::new(), Vec::new()),
        SeriesValue::Histogram(_) => Points::Histogram(Vec::new(), Vec::new(), Vec::new()),
    }
}

type Summary = (SeriesStats, Option<Value>, Vec<Timeslice>);

/// One series' statistics over `windows` (the results phases, closed by the final scrape; or
/// the warm-ups, each closed by the next scrape), with its timeslices when `slice_ns`.
fn summarize(kind: FamilyKind, points: &Points, windows: &Windows, slice_ns: Option<u64>) -> Option<Summary> {
    let phases = |sent: &[u64], arrived: &[u64]| -> Vec<PhaseSamples> {
        phase_samples(SampleTimes { sent_ns: sent, arrived_ns: arrived }, windows.spans, windows.final_scrape_closes)
    };
    match (kind, points) {
        (FamilyKind::Counter, Points::Scalar(sent, arrived, values)) => {
            let times = SampleTimes { sent_ns: sent, arrived_ns: arrived };
            series_stats::counter(times, values, &phases(sent, arrived), slice_ns)
                .map(|(stats, slices)| (SeriesStats::Counter(stats), None, slices))
        }
        (FamilyKind::Histogram, Points::Histogram(sent, arrived, values)) => {
            let times = SampleTimes { sent_ns: sent, arrived_ns: arrived };
            series_stats::histogram(times, values, &phases(sent, arrived), slice_ns)
                .map(|(stats, buckets, slices)| (SeriesStats::Histogram(stats), buckets, slices))
        }
        (_, Points::Scalar(sent, arrived, values)) => {
            let times = SampleTimes { sent_ns: sent, arrived_ns: arrived };
            series_stats::gauge(times, values, &phases(sent, arrived), slice_ns)
                .map(|(stats, slices)| (SeriesStats::Gauge(stats), None, slices))
        }
        (_, Points::Histogram(..)) => None,
    }
}
