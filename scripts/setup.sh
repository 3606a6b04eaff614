#!/usr/bin/env bash
# Installs what longhaul needs on a fresh Debian machine: system packages and the Rust toolchain.
# Idempotent and quick when everything is already present. Run as root (or with sudo available)
# for the system packages; without them only the parts that need them (eBPF, emulator) are lost.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

# Debian packages, one per line in scripts/packages.txt (comments with #).
mapfile -t wanted < <(sed -e 's/#.*//' -e '/^\s*$/d' "$here/packages.txt")
missing=()
for p in "${wanted[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "setup: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Rust: use the machine's toolchain if present, else install one with rustup from the registry.
if ! command -v cargo >/dev/null 2>&1; then
  if [ -x "$HOME/.cargo/bin/cargo" ]; then
    export PATH="$HOME/.cargo/bin:$PATH"
  else
    echo "setup: no cargo found; install Rust (https://rustup.rs) and re-run" >&2
    exit 1
  fi
fi
rustup component list --installed 2>/dev/null | grep -q rustfmt || rustup component add rustfmt >/dev/null 2>&1 || true
