#!/usr/bin/env bash
# Installs what the real-server tests need, idempotently: llama.cpp's llama-server (built from
# the PyPI source package of llama-cpp-python into a cache folder keyed by its version), the
# Prometheus exporters, headless Chromium (the HTML report's test) and git (`aiperf lib fetch`,
# tests/libs.rs) from Debian's packages,
# pyarrow + DuckDB + Pillow (PyPI) to read the Parquet export and the JPEG images back, maturin
# (PyPI) to build the Python wheel, kubernetes-validate (PyPI) to check the Kubernetes manifests
# against the API schemas, mlflow and opentelemetry-proto (PyPI) for the MLflow and OpenTelemetry
# outputs' tests, and Slurm with munge (Debian's packages, `slurm.sh`) for the
# distributed-run test.
# A warm cache makes it a no-op.
#
#   scripts/real-servers.sh            # install/build what is missing
#   scripts/real-servers.sh --print    # print the llama-server path and exit
#
# Cache: $AIPERF_CACHE (default ~/.cache/aiperf). Tests find llama-server there, or at
# $AIPERF_LLAMA_SERVER when set.
set -euo pipefail

LLAMA_CPP_PYTHON_VERSION="0.3.36"
CACHE_ROOT="${AIPERF_CACHE:-$HOME/.cache/aiperf}"
LLAMA_DIR="$CACHE_ROOT/llama-server-$LLAMA_CPP_PYTHON_VERSION"
LLAMA_BIN="$LLAMA_DIR/bin/llama-server"
APT_PACKAGES=(git cmake ninja-build ffmpeg prometheus-node-exporter prometheus prometheus-pushgateway chromium)

if [[ "${1:-}" == "--print" ]]; then
    echo "$LLAMA_BIN"
    exit 0
fi

log() { echo "[real-servers] $*" >&2; }

as_root() {
    if [[ $(id -u) -eq 0 ]]; then "$@"; else sudo "$@"; fi
}

install_apt_packages() {
    local missing=()
    for package in "${APT_PACKAGES[@]}"; do
        dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
    done
    if [[ ${#missing[@]} -eq 0 ]]; then
        log "apt packages present: ${APT_PACKAGES[*]}"
        return
    fi
    log "installing ${missing[*]}"
    as_root apt-get update -qq
    # The exporters' packages would start services; nothing here wants them running.
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

build_llama_server() {
    if [[ -x "$LLAMA_BIN" ]] && "$LLAMA_BIN" --version >/dev/null 2>&1; then
        log "llama-server present: $LLAMA_BIN"
        return
    fi
    local work
    work=$(mktemp -d)
    trap 'rm -rf "$work"' RETURN
    log "downloading llama-cpp-python $LLAMA_CPP_PYTHON_VERSION (source package) from PyPI"
    python3 -m pip download --quiet --no-deps --no-binary llama-cpp-python -d "$work/dl" "llama-cpp-python==$LLAMA_CPP_PYTHON_VERSION"
    mkdir -p "$work/src"
    tar xzf "$work/dl/llama_cpp_python-$LLAMA_CPP_PYTHON_VERSION.tar.gz" -C "$work/src"
    log "building llama-server (several minutes on 2 cores)"
    cmake -G Ninja "$work/src/llama_cpp_python-$LLAMA_CPP_PYTHON_VERSION/vendor/llama.cpp" -B "$work/build" \
        -DCMAKE_BUILD_TYPE=Release -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_BUILD_UI=OFF -DLLAMA_OPENSSL=OFF \
        -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DBUILD_SHARED_LIBS=OFF -DGGML_NATIVE=OFF >/dev/null
    ninja -C "$work/build" -j"$(nproc)" llama-server >/dev/null
    mkdir -p "$LLAMA_DIR/bin"
    cp "$work/build/bin/llama-server" "$LLAMA_BIN.partial"
    mv "$LLAMA_BIN.partial" "$LLAMA_BIN"
    log "built $LLAMA_BIN"
}

install_python_readers() {
    if python3 -c "import pyarrow, duckdb, PIL, maturin, kubernetes_validate" >/dev/null 2>&1; then
        log "pyarrow, duckdb, pillow, maturin and kubernetes-validate present"
        return
    fi
    log "installing pyarrow, duckdb, pillow, maturin and kubernetes-validate"
    # A Debian-managed python3 refuses plain pip installs (PEP 668); fall back to the override.
    python3 -m pip install --quiet pyarrow duckdb pillow maturin kubernetes-validate \
        || python3 -m pip install --quiet --break-system-packages pyarrow duckdb pillow maturin kubernetes-validate
}

# MLflow's tracking server and the official OTLP protobuf definitions, for tests/outputs_mlflow.rs
# and tests/outputs_otel.rs (PyPI).
install_output_services() {
    if python3 -c "import mlflow, opentelemetry.proto" >/dev/null 2>&1 && command -v mlflow >/dev/null; then
        log "mlflow and opentelemetry-proto present"
        return
    fi
    log "installing mlflow and opentelemetry-proto"
    python3 -m pip install --quiet mlflow opentelemetry-proto \
        || python3 -m pip install --quiet --break-system-packages mlflow opentelemetry-proto
}

install_apt_packages
install_python_readers
install_output_services
# Slurm and munge for tests/slurm.rs, which starts its own one-node cluster.
"$(dirname "${BASH_SOURCE[0]}")/slurm.sh" install
build_llama_server
