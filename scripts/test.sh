#!/usr/bin/env bash
# The test suite in one command: install the real servers the end-to-end tests run against
# (scripts/real-servers.sh, idempotent: a warm cache makes it a no-op), then run every test.
# Extra arguments go to `cargo test`, e.g.:
#
#   scripts/test.sh                          # everything
#   scripts/test.sh --test faults_lifecycle  # one suite
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/real-servers.sh
cargo test --locked "$@"
