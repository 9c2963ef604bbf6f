#!/usr/bin/env bash
# The test suite in one command: install the real servers the end-to-end tests run against
# (scripts/real-servers.sh, idempotent: a warm cache makes it a no-op), then run every test.
# Extra arguments go to `cargo test`, e.g.:
#
#   scripts/test.sh                          # everything
#   scripts/test.sh --test faults_lifecycle  # one suite
#   scripts/test.sh --release-only           # the tests too slow for a debug build, in release
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ "${1:-}" == "--release-only" ]]; then
    shift
    # Marked #[ignore] and named release_only_*: 10,000 scripted sessions at once, 20,000
    # HTTP/2 streams at once.
    exec cargo test --locked --release --test scripted_sessions --test http2_pool "$@" -- --ignored release_only
fi

scripts/real-servers.sh
cargo test --locked "$@"
