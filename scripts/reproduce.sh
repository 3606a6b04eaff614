#!/usr/bin/env bash
# Sets up the machine, builds longhaul in release mode and runs the main job: the seed papers'
# experiments in the simulator, each claim with the paper's figure and the measured one.
# Extra arguments go to `longhaul reproduce` (e.g. `--full`, an experiment name, `--json out.json`).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
scripts/setup.sh
cargo build --release -p longhaul
./target/release/longhaul reproduce "$@"
