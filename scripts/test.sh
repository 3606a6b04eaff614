#!/usr/bin/env bash
# Sets up the machine and runs every test. Tests that need root, network namespaces or eBPF
# run for real as root; otherwise they say they were skipped (and fail under CI=true).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
scripts/setup.sh
cargo fmt --all -- --check
scripts/check-sim-only.sh
# --no-fail-fast: one run reports every failing test binary, not only the first. The `ci`
# profile optimizes like release without its whole-program link (Cargo.toml).
cargo test --workspace --profile ci --no-fail-fast -- --test-threads=2
# A fixed sample of the algorithm mutants (bench/mutants/mutants.toml, `sample = true`) must be
# caught by the shared vectors; the full run is bench/mutants/run.py.
python3 bench/mutants/run.py --sample --tiers vectors
