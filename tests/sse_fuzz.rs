//! The SSE parser fuzz target's properties (`fuzz/sse_properties.rs`) over a seeded random
//! corpus, so they run without cargo-fuzz: inputs built from SSE's own pieces (field names,
//! colons, every kind of line end, `[DONE]`) mixed with random bytes.

#[path = "../fuzz/sse_properties.rs"]
mod sse_properties;

use aiperf::rng::SeededRng;

const PIECES: &[&[u8]] = &[
    b"data:",
    b"data: ",
    b"event:",
    b"event: error",
    b"id: 1",
    b"retry: 5",
    b":",
    b": ping",
    b" ",
    b"\n",
    b"\r",
    b"\r\n",
    b"\n\n",
    b"[DONE]",
    b"{\"choices\":[]}",
    b"x",
    b"\xff\xfe",
    b"data",
];

fn random_input(rng: &mut SeededRng) -> Vec<u8> {
    let mut input = Vec::new();
    for _ in 0..rng.below(40) {
        if rng.below(5) == 0 {
            input.push(rng.below(256) as u8);
        } else {
            input.extend_from_slice(PIECES[rng.below(PIECES.len() as u64) as usize]);
        }
    }
    input
}

#[test]
fn the_sse_properties_hold_over_a_seeded_random_corpus() {
    let mut rng = SeededRng::new(20261125);
    for _ in 0..5_000 {
        sse_properties::check(&random_input(&mut rng));
    }
}

#[test]
fn the_sse_properties_hold_for_the_edge_cases() {
    for input in [&b""[..], b"\r", b"\n", b"data", b"data:\r\n\r\n", b"data: a\r", b"data: x\n\n\n\ndata: y"] {
        sse_properties::check(input);
    }
}
