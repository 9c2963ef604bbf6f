#!/usr/bin/env bash
# The open-loop targets (docs/performance.md) on a machine whose cores the client has to
# itself, e.g. the 16-core GPU machine lent to some sessions: five rounds of `bench_pacer`
# (the pacer alone) and `bench_rate` (the whole client and the in-process mock, each rate with
# and without idle cores kept awake; `ROUNDS=N` for another count), then the 5,000 req/s rows.
# About 4 minutes. Build the two benchmarks first and carry them:
#
#   cargo build --release --example bench_pacer --example bench_rate
#   scripts/dispatch-check.sh [BIN_DIR] [OUT_DIR]   # defaults: target/release/examples, dispatch-check/
set -euo pipefail
bin="${1:-target/release/examples}"
out="${2:-dispatch-check}"
mkdir -p "$out"
{ nproc; uname -r; cat /proc/loadavg; } > "$out/machine.txt"
for round in $(seq "${ROUNDS:-5}"); do
  "$bin/bench_pacer" 3 5000 > "$out/pacer-$round.txt" 2>&1
  "$bin/bench_rate" 5 --keep-cores-awake > "$out/rate-$round.txt" 2>&1
done
echo "bench_pacer, 5,000 req/s, pacing and dispatch delay in µs:"
grep -h -E "^pacer +target" "$out/pacer-1.txt" || true
grep -h -E "^(tokio timer|pacer thread|cores awake) " "$out"/pacer-*.txt || true
echo "bench_rate, 5,000 req/s, in ms:"
grep -h -E "^ +target +awake" "$out/rate-1.txt" || true
grep -h -E "^ *5000 " "$out"/rate-*.txt || true
