//! Fuzz target: any bytes read as an HTTP/1.1 response give the same status, body and ending
//! whether they arrive at once or cut into pieces (the first byte picks their size), and
//! nothing panics (`aiperf::client::fuzzing`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| aiperf::client::fuzzing::check_http1_response(data));
