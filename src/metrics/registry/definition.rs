//! What a metric is: its tag, display name and unit, kind, flags (when it is computed, how it
//! is shown) and dependencies; and the constructors the families' files declare them with.

use crate::metric_result::{MetricKind, MetricResult, Stats};

/// Bit flags that say when a metric is computed and how it is shown (spec: "Metric Flags Reference").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MetricFlags(u32);

impl MetricFlags {
    pub const NONE: Self = Self(0);
    /// Computed only for streamed responses.
    pub const STREAMING_ONLY: Self = Self(1);
    /// Computed only for failed requests.
    pub const ERROR_ONLY: Self = Self(1 << 1);
    /// Computed only for endpoints that return text.
    pub const PRODUCES_TOKENS_ONLY: Self = Self(1 << 2);
    /// Exported, but not shown in the console table.
    pub const NO_CONSOLE: Self = Self(1 << 3);
    /// Higher values are better (throughputs, counts of successes).
    pub const LARGER_IS_BETTER: Self = Self(1 << 4);
    /// Used to compute other metrics; neither shown nor exported.
    pub const INTERNAL: Self = Self(1 << 5);
    /// Computed only when the server returned reasoning text separately.
    pub const SUPPORTS_REASONING: Self = Self(1 << 6);
    /// A run-level value: never written to a per-record line of profile_export.jsonl.
    pub const NO_INDIVIDUAL_RECORDS: Self = Self(1 << 7);
    /// Computed only when the server sent a `usage` block.
    pub const USAGE_FIELD_ONLY: Self = Self(1 << 8);
    /// Computed only from a request's HTTP trace; shown in the trace-timing table, not the main one.
    pub const HTTP_TRACE_ONLY: Self = Self(1 << 9);
    /// Computed only when the run sets SLOs (`slos` in the plan).
    pub const GOODPUT: Self = Self(1 << 10);
    /// Computed only when the requests carry images (vision chat).
    pub const SUPPORTS_IMAGE_ONLY: Self = Self(1 << 11);
    /// Computed only for endpoints whose input is text the tokenizer counts (every kind here).
    pub const TOKENIZES_INPUT_ONLY: Self = Self(1 << 12);
    /// A time-weighted statistic of a step function over the profiling window (avg, p50–p99,
    /// min, max, std; no count or sum), computed by `time_weighted.rs`.
    pub const TIME_WEIGHTED: Self = Self(1 << 13);
    /// Computed only for endpoints that make videos (from the server's own figures).
    pub const PRODUCES_VIDEO_ONLY: Self = Self(1 << 14);
    /// Computed only with a network-latency adjustment (`network_adjusted.rs`): a distribution
    /// of record values less the network round trip, or of the round-trip probes.
    pub const NETWORK_LATENCY: Self = Self(1 << 15);
    /// Computed only with GPU telemetry (`telemetry/energy.rs`): the GPUs' energy over the
    /// profiling window against the run's totals.
    pub const GPU_ENERGY: Self = Self(1 << 16);
    /// Computed only when the requests carry audio (RTFx and its inputs, audio usage).
    pub const SUPPORTS_AUDIO_ONLY: Self = Self(1 << 17);
    /// AIPerf's experimental metrics: off the console, and out of the exports unless AIPerf's
    /// developer mode shows them (`AIPERF_DEV_MODE=1`, `AIPERF_DEV_SHOW_EXPERIMENTAL_METRICS=1`).
    pub const EXPERIMENTAL: Self = Self(1 << 18);
    /// Computed only for phases that replay a fixed schedule of send times (trace replay).
    pub const FIXED_SCHEDULE_ONLY: Self = Self(1 << 19);
    pub const STREAMING_TOKENS_ONLY: Self = Self::STREAMING_ONLY.with(Self::PRODUCES_TOKENS_ONLY);

    /// Both sets of flags.
    pub const fn with(self, other: Self) -> Self {
        Self(self.0 | other.0)
    }

    /// Every flag of `other` is set in `self`.
    pub const fn contains(self, other: Self) -> bool {
        self.0 & other.0 == other.0
    }
}

/// The definition of one metric.
#[derive(Debug)]
pub struct MetricDef {
    /// Export name, e.g. `time_to_first_token`.
    pub tag: &'static str,
    /// Display name as AIPerf prints it, e.g. `Time to First Token`.
    pub header: &'static str,
    /// Display unit, e.g. `ms`.
    pub unit: &'static str,
    pub kind: MetricKind,
    pub flags: MetricFlags,
    /// Metrics whose values this one is computed from.
    pub requires: &'static [&'static MetricDef],
}

impl MetricDef {
    pub fn has(&self, flag: MetricFlags) -> bool {
        self.flags.contains(flag)
    }

    /// Shown in the console table.
    pub fn shown_on_console(&self) -> bool {
        !self.has(MetricFlags::NO_CONSOLE)
            && !self.has(MetricFlags::EXPERIMENTAL)
            && !self.has(MetricFlags::INTERNAL)
            && !self.has(MetricFlags::HTTP_TRACE_ONLY)
    }

    /// Shown in the trace-timing table (when the run asks for it).
    pub fn shown_in_trace_table(&self) -> bool {
        self.has(MetricFlags::HTTP_TRACE_ONLY) && !self.has(MetricFlags::NO_CONSOLE)
    }

    /// Written to the summary exports (JSON, CSV) and the records, and returned in the
    /// results: not an internal or experimental metric, unless AIPerf's developer mode shows it.
    pub fn exported(&self) -> bool {
        let shown = DeveloperView::of_environment();
        (!self.has(MetricFlags::INTERNAL) || shown.internal)
            && (!self.has(MetricFlags::EXPERIMENTAL) || shown.experimental)
    }

    /// This metric's result with the given statistics.
    pub fn result(&'static self, stats: Stats) -> MetricResult {
        MetricResult {
            tag: self.tag,
            header: self.header,
            unit: self.unit,
            kind: self.kind,
            console: self.shown_on_console(),
            stats,
        }
    }
}

/// What AIPerf's developer mode adds to the exports, read once from its environment variables
/// (`AIPERF_DEV_MODE` with `AIPERF_DEV_SHOW_INTERNAL_METRICS` / `_SHOW_EXPERIMENTAL_METRICS`).
#[derive(Debug, Clone, Copy, Default)]
struct DeveloperView {
    internal: bool,
    experimental: bool,
}

impl DeveloperView {
    fn of_environment() -> Self {
        static VIEW: std::sync::OnceLock<DeveloperView> = std::sync::OnceLock::new();
        *VIEW.get_or_init(|| {
            let on = |name: &str| {
                std::env::var(name).is_ok_and(|v| matches!(v.to_ascii_lowercase().as_str(), "1" | "true" | "yes"))
            };
            let developer = on("AIPERF_DEV_MODE");
            Self {
                internal: developer && on("AIPERF_DEV_SHOW_INTERNAL_METRICS"),
                experimental: developer && on("AIPERF_DEV_SHOW_EXPERIMENTAL_METRICS"),
            }
        })
    }
}

pub(super) const fn record(
    tag: &'static str,
    header: &'static str,
    unit: &'static str,
    flags: MetricFlags,
    requires: &'static [&'static MetricDef],
) -> MetricDef {
    MetricDef { tag, header, unit, kind: MetricKind::Record, flags, requires }
}

pub(super) const fn aggregate(
    tag: &'static str,
    header: &'static str,
    unit: &'static str,
    flags: MetricFlags,
) -> MetricDef {
    MetricDef {
        tag,
        header,
        unit,
        kind: MetricKind::Aggregate,
        flags: flags.with(MetricFlags::NO_INDIVIDUAL_RECORDS),
        requires: &[],
    }
}

pub(super) const fn derived(
    tag: &'static str,
    header: &'static str,
    unit: &'static str,
    flags: MetricFlags,
    requires: &'static [&'static MetricDef],
) -> MetricDef {
    MetricDef {
        tag,
        header,
        unit,
        kind: MetricKind::Derived,
        flags: flags.with(MetricFlags::NO_INDIVIDUAL_RECORDS),
        requires,
    }
}
