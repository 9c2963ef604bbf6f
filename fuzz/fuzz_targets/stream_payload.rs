//! Fuzz target: wherever the JSON cursor reads a chat or completions payload (alone, or after
//! the stream's previous one: the bytes before a 0xFE), `serde_json` reads the same
//! (`aiperf::client::fuzzing`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| aiperf::client::fuzzing::check_stream_payload(data));
