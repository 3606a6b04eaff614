#!/usr/bin/env bash
# Checks the simulator-only build: `longhaul` without its default `kernel` feature must build
# with no eBPF toolchain, as `cargo install --no-default-features` does on a laptop without
# clang and bpftool. Both are pointed at paths that do not exist, so a build step that still
# needed them would fail here.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
CLANG=/nonexistent/clang BPFTOOL=/nonexistent/bpftool \
    cargo check --profile ci --locked --no-default-features -p longhaul
echo "simulator-only build: ok (no eBPF toolchain used)"
