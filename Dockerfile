# The aiperf image for distributed runs (`aiperf kube manifest`, docs/distributed.md).
# Multi-stage: the release binary is built in the Rust image, then copied into a slim Debian
# with a shell (the pods' commands use sh) and the CA certificates for https endpoints.
#
#   docker build -t registry.example/aiperf:0.1 .

FROM rust:1-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --release --locked --bin aiperf

FROM debian:bookworm-slim
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates \
    && rm -rf /var/lib/apt/lists/*
COPY --from=build /src/target/release/aiperf /usr/local/bin/aiperf
# Root in the container, so the results volume is writable whatever its owner.
WORKDIR /work
CMD ["aiperf", "--help"]
