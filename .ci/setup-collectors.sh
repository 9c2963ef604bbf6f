#!/usr/bin/env bash
# Installs what the collector tests need: real Prometheus exporters (Debian packages) and
# pyarrow + DuckDB (PyPI) to read the Parquet export back. Skips what is already there.
set -euo pipefail

need_apt=()
for pair in prometheus-node-exporter:prometheus-node-exporter prometheus:prometheus prometheus-pushgateway:prometheus-pushgateway; do
    binary="${pair%%:*}"
    package="${pair##*:}"
    command -v "$binary" >/dev/null 2>&1 || need_apt+=("$package")
done
if [ "${#need_apt[@]}" -gt 0 ]; then
    sudo_cmd=""
    [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
    $sudo_cmd apt-get update
    DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y --no-install-recommends "${need_apt[@]}"
fi

if ! python3 -c "import pyarrow, duckdb" >/dev/null 2>&1; then
    # Debian's own python3 refuses plain pip installs (PEP 668); fall back to the override.
    python3 -m pip install --quiet pyarrow duckdb \
        || python3 -m pip install --quiet --break-system-packages pyarrow duckdb
fi
