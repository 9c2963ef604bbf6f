//! Fuzz target: the SSE parser must never panic, must give the same events however its input
//! is split into reads, and its event cap must only refuse (see `../sse_properties.rs`).
#![no_main]

#[path = "../sse_properties.rs"]
mod sse_properties;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| sse_properties::check(data));
