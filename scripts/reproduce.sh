#!/usr/bin/env bash
# Sets up the machine, builds longhaul and runs the main job.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
scripts/setup.sh
cargo build --release -p longhaul
./target/release/longhaul cc list
./target/release/longhaul cc trace fast --rtt 180ms --rate 1gbit --duration 60s --every 5s
