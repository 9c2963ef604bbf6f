//! Every group of `aiperf profile`'s flags, in AIPerf's `--help` order, then this project's own.

use super::accuracy::ACCURACY_GROUP;
use super::dataset::*;
use super::endpoint_input::*;
use super::flags::{Arity, Group, command};
use super::load::*;
use super::output_service::*;

/// This project's own flags on `aiperf profile`.
pub const THIS_PROJECT: Group = Group {
    title: "This project",
    flags: &[
        command(&["--dry-run"], Arity::Switch, "Print the plans as JSON and send nothing"),
        command(
            &["--emit-scenario"],
            Arity::One,
            "Write the equivalent Rhai scenario to this file (run it with aiperf run)",
        ),
        command(
            &["--metrics-listen"],
            Arity::One,
            "Serve live metrics in Prometheus text format on this address during the run, e.g. 127.0.0.1:9464",
        ),
        command(&["--help", "-h"], Arity::Switch, "Show this help"),
    ],
};

pub const GROUPS: &[Group] = &[
    ENDPOINT,
    INPUT,
    FIXED_SCHEDULE,
    GOODPUT,
    OUTPUT,
    HTTP_TRACE,
    TOKENIZER,
    LOAD_GENERATOR,
    SCENARIO,
    WARMUP,
    USER_CENTRIC,
    CANCELLATION,
    CONVERSATION,
    ISL,
    OSL,
    PROMPT,
    PREFIX_PROMPT,
    CACHE_BUST,
    RANKINGS,
    SYNTHESIS_GROUP,
    AUDIO_INPUT,
    IMAGE_INPUT,
    VIDEO_INPUT,
    SERVICE,
    SERVER_METRICS,
    NETWORK_LATENCY,
    GPU_TELEMETRY,
    UI,
    WORKERS,
    ZMQ,
    ACCURACY_GROUP,
    MULTI_RUN,
    THIS_PROJECT,
];
