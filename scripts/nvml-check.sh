#!/usr/bin/env bash
# GPU telemetry against nvidia-smi on a machine with an NVIDIA GPU: a 22 s `aiperf profile`
# against the built-in mock, a 10 s bf16 matrix-product load on the GPU from its 5th second
# (PyTorch), and nvidia-smi sampling every 200 ms beside them; then the comparison.
#
#   scripts/nvml-check.sh [AIPERF_BINARY] [OUT_DIR]     # defaults: target/release/aiperf, nvml-check/
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
aiperf="${1:-target/release/aiperf}"
out="${2:-nvml-check}"
mkdir -p "$out"
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; } > "$out/machine.txt"
nvidia-smi --query-gpu=timestamp,index,uuid,name,utilization.gpu,utilization.memory,memory.used,memory.total,power.draw,temperature.gpu,clocks.sm,clocks.mem \
  --format=csv,nounits -lms 200 > "$out/smi.csv" &
smi=$!
(sleep 5; python3 - <<'PY'
import time, torch
a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
held = torch.empty(8 * 1024**3, dtype=torch.uint8, device="cuda")  # memory used moves too
start, n = time.time(), 0
while time.time() - start < 10:
    for _ in range(20):
        a @ a
    torch.cuda.synchronize()
    n += 20
print(f"{n} products in {time.time() - start:.1f} s")
PY
) > "$out/load.log" 2>&1 &
load=$!
"$aiperf" profile --model mock-model --url mock --endpoint-type chat --streaming --concurrency 16 \
  --benchmark-duration 22 --artifact-dir "$out/run" > "$out/aiperf.log" 2>&1
wait "$load"
kill "$smi"
python3 "$here/nvml_compare.py" "$out/run" "$out/smi.csv" | tee "$out/compare.txt"
